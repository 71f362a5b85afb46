"""Record what every ``medreason`` subcommand prints and writes, to compare two versions of
the code byte for byte (a refactor must change none of it).

Two steps, so that both versions read the very same logs:

    python scripts/command_outputs.py make WORKSPACE      # logs, ratings, data (once)
    PYTHONPATH=<old>/src python scripts/command_outputs.py run WORKSPACE OUT_OLD
    PYTHONPATH=<new>/src python scripts/command_outputs.py run WORKSPACE OUT_NEW
    diff -r OUT_OLD OUT_NEW                                # no output: the same

``run`` runs each command of ``COMMANDS`` in a fresh process, in its own empty folder under
OUT, and keeps its exit code, standard output, standard error and every file it wrote. A
command whose output holds the time or a random token is listed with the lines to drop.
``make`` uses the installed package and the tests' helpers (tests/utils) once.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (name, arguments); {W} is the workspace. Error cases are as much output as results.
COMMANDS: tuple[tuple[str, list[str]], ...] = (
    ("export", ["export", "{W}/logs/a", "--output", "results.json", "--zip", "sub.zip"]),
    ("export_json_cases", ["export", "{W}/logs/a", "--cases", "{W}/data/cases.json"]),
    ("judge_scores", ["judge-scores", "{W}/logs/a", "--output", "judge_scores.json"]),
    (
        "score",
        [
            "score",
            "--predictions",
            "{W}/official/results.json",
            "--ground-truth",
            "{W}/data/ground_truth.json",
            "--judge-scores",
            "{W}/official/judge_scores.json",
        ],
    ),
    ("validate", ["validate", "{W}/official/results.json", "--cases", "{W}/data/cases.json"]),
    ("validate_bad", ["validate", "{W}/data/ground_truth.json", "--cases", "{W}/data/cases.json"]),
    ("leaderboard_md", ["leaderboard", "{W}/logs", "--format", "md", "--breakdown"]),
    ("leaderboard_json", ["leaderboard", "{W}/logs", "--format", "json", "--output", "lb.json"]),
    (
        "leaderboard_html",
        ["leaderboard", "{W}/logs", "--format", "html", "--output", "lb.html", "--plot", "lb.png"],
    ),
    ("leaderboard_bootstrap", ["leaderboard", "{W}/logs", "--bootstrap", "200"]),
    ("leaderboard_calibrated", ["leaderboard", "{W}/logs", "--calibration", "{W}/cal.json"]),
    ("compare", ["compare", "{W}/logs/a", "{W}/logs/b"]),
    (
        "compare_files",
        ["compare", "{W}/logs/a", "{W}/logs/b", "--format", "json", "--output", "c.json"],
    ),
    ("compare_plot", ["compare", "{W}/logs/a", "{W}/logs/b", "--plot", "c.png"]),
    ("agreement", ["agreement", "{W}/logs/a"]),
    ("agreement_json", ["agreement", "{W}/logs/a", "--format", "json"]),
    (
        "agreement_reference",
        ["agreement", "{W}/logs/a", "--reference", "{W}/official/judge_scores.json"],
    ),
    (
        "agreement_raters",
        [
            "agreement",
            "{W}/logs/a",
            "--ratings",
            "{W}/ratings/alice.json",
            "{W}/ratings/bob.json",
            "--plot",
            "ag.png",
        ],
    ),
    (
        "calibrate",
        [
            "calibrate",
            "{W}/logs/a",
            "--ratings",
            "{W}/ratings/alice.json",
            "{W}/ratings/bob.json",
            "--output",
            "cal.json",
        ],
    ),
    ("shift_md", ["shift", "{W}/shift", "--format", "md"]),
    (
        "shift_files",
        ["shift", "{W}/shift", "--format", "json", "--output", "s.json", "--plot", "s.png"],
    ),
    ("check_data", ["check-data", "{W}/data"]),
    ("check_data_json", ["check-data", "{W}/data", "--format", "json"]),
    ("sample_data", ["sample-data", "demo"]),
    ("missing_log", ["leaderboard", "{W}/nowhere"]),
    ("not_a_log", ["agreement", "{W}/data/cases.json"]),
    ("export_two_models", ["export", "{W}/logs", "--output", "r.json"]),
    (
        "export_model",
        ["export", "{W}/logs", "--model", "mockllm/other", "--output", "r.json", "--name", "mine"],
    ),
    ("export_not_logs", ["export", "{W}/data", "--output", "r.json"]),
    ("judge_scores_two", ["judge-scores", "{W}/logs", "--output", "j.json"]),
    (
        "judge_scores_scorer",
        ["judge-scores", "{W}/logs/a", "--output", "j.json", "--scorer", "open_ended_scorer1"],
    ),
    (
        "score_pretty",
        [
            "score",
            "--predictions",
            "{W}/official/results.json",
            "--ground-truth",
            "{W}/data/ground_truth.json",
            "--output",
            "m.json",
            "--pretty",
        ],
    ),
    ("leaderboard_csv", ["leaderboard", "{W}/logs", "--format", "csv", "--breakdown"]),
    (
        "leaderboard_partial",
        ["leaderboard", "{W}/logs", "--include-partial", "--label-arg", "data", "--format", "json"],
    ),
    ("leaderboard_bad_scorer", ["leaderboard", "{W}/logs", "--scorer", "foo"]),
    ("leaderboard_notes", ["leaderboard", "{W}/logs", "{W}/data/cases.json", "{W}/shift"]),
    (
        "compare_html",
        ["compare", "{W}/logs/a", "{W}/logs/b", "--format", "html", "--output", "c.html"],
    ),
    (
        "compare_calibrated",
        ["compare", "{W}/logs/a", "{W}/logs/b", "--calibration", "{W}/cal.json"],
    ),
    ("compare_same", ["compare", "{W}/logs/a", "{W}/logs/a"]),
    ("compare_shift", ["compare", "{W}/logs/a", "{W}/shift"]),
    (
        "agreement_both",
        [
            "agreement",
            "{W}/logs/a",
            "--reference",
            "{W}/official/judge_scores.json",
            "--ratings",
            "{W}/ratings/alice.json",
        ],
    ),
    (
        "calibrate_report",
        [
            "calibrate",
            "{W}/logs/a",
            "--ratings",
            "{W}/ratings/alice.json",
            "{W}/ratings/bob.json",
            "--output",
            "cal.json",
            "--report",
            "r.md",
        ],
    ),
    ("shift_examples", ["shift", "{W}/shift", "--examples", "ex", "--data", "{W}/demo"]),
    ("rate_page", ["rate", "{W}/logs/a", "--output", "page.html", "--cases", "20", "--seed", "1"]),
    (
        "rate_two_models",
        [
            "rate",
            "{W}/logs",
            "--output",
            "page.html",
            "--cases",
            "5",
            "--seed",
            "3",
            "--max-image-px",
            "0",
        ],
    ),
    ("rate_no_output", ["rate", "{W}/logs/a"]),
    ("help", ["--help"]),
    ("help_export", ["export", "--help"]),
    ("help_judge_scores", ["judge-scores", "--help"]),
    ("help_score", ["score", "--help"]),
    ("help_validate", ["validate", "--help"]),
    ("help_compare", ["compare", "--help"]),
    ("help_agreement", ["agreement", "--help"]),
    ("help_calibrate", ["calibrate", "--help"]),
    ("help_shift", ["shift", "--help"]),
    ("help_check_data", ["check-data", "--help"]),
    ("help_sample_data", ["sample-data", "--help"]),
    ("help_leaderboard", ["leaderboard", "--help"]),
    ("help_rate", ["rate", "--help"]),
)

# Lines that hold a time, a path of the run folder or a random token: dropped before keeping.
VOLATILE = re.compile(r'generated_at|written_at|"created"|"file": "[0-9a-f]{64}"|elapsed|took \d')


def keep_stable(path: Path) -> None:
    """A written file as compared: a zip as its members' names and CRCs (its entries carry
    the time), text without its volatile lines."""
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            listing = "".join(
                f"{i.filename} {i.CRC:08x} {i.file_size}\n" for i in archive.infolist()
            )
        path.unlink()
        path.with_suffix(".zip.txt").write_text(listing)
    elif path.suffix in (".json", ".md", ".html", ".csv", ".txt"):
        text = path.read_text(encoding="utf-8", errors="replace")
        path.write_text(
            "".join(x for x in text.splitlines(True) if not VOLATILE.search(x)), encoding="utf-8"
        )


def make(workspace: Path) -> None:
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "utils")]
    from rated_logs import judged_log, page_cases, ratings_document

    workspace.mkdir(parents=True, exist_ok=False)
    shutil.copytree(ROOT / "src" / "inspect_medreason" / "sample_data", workspace / "demo")
    for name, model in (("a", "mockllm/model"), ("b", "mockllm/other")):
        folder = workspace / "runs" / name
        folder.mkdir(parents=True)
        log = judged_log(folder, 40, model=model)
        (workspace / "logs" / name).mkdir(parents=True)
        shutil.copy(log, workspace / "logs" / name / log.name)
    shutil.copytree(workspace / "runs" / "a" / "data", workspace / "data")
    logs = sorted((workspace / "logs" / "a").iterdir())
    cases = page_cases(logs, "page-1")
    (workspace / "ratings").mkdir()
    for rater, shift in (("alice", 0), ("bob", 1)):
        document = ratings_document(
            "page-1",
            rater,
            cases,
            noise=lambda _c, n, s, shift=shift: max(0, min(4, s - (n + shift) % 2)),
        )
        (workspace / "ratings" / f"{rater}.json").write_text(json.dumps(document))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_medreason.cli",
            "calibrate",
            str(logs[0]),
            "--ratings",
            str(workspace / "ratings" / "alice.json"),
            str(workspace / "ratings" / "bob.json"),
            "--output",
            str(workspace / "cal.json"),
        ],
        check=True,
    )
    official = workspace / "official"
    official.mkdir()
    for command in (
        ["export", str(workspace / "logs" / "a"), "--output", str(official / "results.json")],
        [
            "judge-scores",
            str(workspace / "logs" / "a"),
            "--output",
            str(official / "judge_scores.json"),
        ],
    ):
        subprocess.run([sys.executable, "-m", "inspect_medreason.cli", *command], check=True)
    subprocess.run(
        [
            "inspect",
            "eval",
            "inspect_medreason/mcq",
            "--model",
            "medreason/pipeline-check",
            "-T",
            f"data={workspace / 'demo'}",
            "-T",
            "shift=noise,blur",
            "-T",
            "severity=0,1",
            "--log-dir",
            str(workspace / "shift"),
            "--display",
            "none",
        ],
        check=True,
    )


def run(workspace: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=False)
    for name, arguments in COMMANDS:
        folder = out / name
        folder.mkdir()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "inspect_medreason.cli",
                *(a.replace("{W}", str(workspace)) for a in arguments),
            ],
            cwd=folder,
            capture_output=True,
            env={**os.environ, "COLUMNS": "100"},
            timeout=600,
        )
        for stream, data in (("stdout", done.stdout), ("stderr", done.stderr)):
            text = data.decode("utf-8", "replace")
            kept = "".join(line for line in text.splitlines(True) if not VOLATILE.search(line))
            (out / f"{name}.{stream}").write_text(kept)
        (out / f"{name}.rc").write_text(f"{done.returncode}\n")
        for written in sorted(p for p in folder.rglob("*") if p.is_file()):
            keep_stable(written)
        print(f"{name}: exit {done.returncode}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=("make", "run"))
    parser.add_argument("workspace", type=Path)
    parser.add_argument("out", type=Path, nargs="?")
    args = parser.parse_args()
    if args.step == "make":
        make(args.workspace.resolve())
    else:
        if args.out is None:
            parser.error("run needs OUT")
        run(args.workspace.resolve(), args.out.resolve())


if __name__ == "__main__":
    main()
