"""The medreason command end to end: logs made by real evals, then export, validate,
judge-scores, score, leaderboard and sample-data."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SHARED_OFFICIAL, scripted_output, user_text
from inspect_ai import eval
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, get_model
from scipy import stats
from utils.metric_shapes import components_results, legacy_results

from inspect_medreason.analysis.export import export_results
from inspect_medreason.analysis.leaderboard import ModelRow, rank_rows, run_settings
from inspect_medreason.cli import main
from inspect_medreason.core.loaders import sample_data_dir
from inspect_medreason.medreason.medreason import mcq, medreason, open_ended


def judged_log(
    data: Path,
    log_dir: Path,
    mcq_reply: str,
    model: str = "mockllm/model",
    vision_score: int = 3,
    text_score: int | str = 4,
) -> EvalLog:
    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        if "Options:" in user_text(messages):
            return scripted_output(mcq_reply)
        return scripted_output('{"reasoning_trace": "A dense nodule is seen.", "answer": "nodule"}')

    def text_judge(*_: Any) -> ModelOutput:
        if isinstance(text_score, str):
            return scripted_output(text_score)
        return scripted_output(json.dumps({"score": text_score, "rationale": "r"}))

    def vision_judge(*_: Any) -> ModelOutput:
        return scripted_output(json.dumps({"score": vision_score, "rationale": "r"}))

    # The scripted judges differ between calls under one model name; with the cache on, a
    # later run would be served the earlier run's (identical-request) replies.
    [log] = eval(
        medreason(data=str(data), judge_cache=False),
        model=get_model(model, custom_outputs=respond),
        model_roles={
            "grader": get_model("mockllm/model", custom_outputs=text_judge, memoize=False),
            "vision_grader": get_model("mockllm/model", custom_outputs=vision_judge, memoize=False),
        },
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success", log.error
    return log


def test_round_trip_export_validate_score(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = judged_log(official_dataset, tmp_path / "logs", "ANSWER: A")
    results, archive, judges = tmp_path / "results.json", tmp_path / "sub.zip", tmp_path / "j.json"
    cases = str(official_dataset / "cases.json")
    assert (
        main(
            [
                "export",
                log.location,
                "--output",
                str(results),
                "--zip",
                str(archive),
                "--cases",
                cases,
                "--name",
                "my team",
            ]
        )
        == 0
    )
    document = json.loads(results.read_text())
    assert document["name"] == "my team" and document["version"] == {"major": 1, "minor": 0}
    answers = {a["case_id"]: a for a in document["answers"]}
    assert {k: a["answer"] for k, a in answers.items() if a["task_type"] == "mcq"} == {
        "q1": "A",
        "q2": "A",
        "q3": "A",
    }
    assert answers["o1"]["answer"] == "nodule"
    assert answers["o1"]["reasoning_trace"] == "A dense nodule is seen."
    assert all(a["reasoning_trace"] for a in answers.values())
    with zipfile.ZipFile(archive) as opened:
        assert opened.namelist() == ["results.json"]
    assert main(["validate", str(archive), "--cases", cases]) == 0
    assert main(["judge-scores", log.location, "--output", str(judges)]) == 0
    assert json.loads(judges.read_text()) == {
        "scores": [{"case_id": "o1", "gt_final": 4.0, "va_answer": 3.0, "rvf_trace": 3.0}]
    }
    capsys.readouterr()
    assert (
        main(
            [
                "score",
                "--predictions",
                str(results),
                "--judge-scores",
                str(judges),
                "--ground-truth",
                str(official_dataset / "ground_truth.json"),
            ]
        )
        == 0
    )
    scored = json.loads(capsys.readouterr().out)
    # The official scorer on the export agrees with the Inspect log.
    assert log.results is not None
    log_metrics = {s.name: s.metrics for s in log.results.scores}
    assert scored["metrics"]["MCQ Accuracy"] == pytest.approx(
        log_metrics["mcq_scorer"]["accuracy"].value
    )
    assert scored["metrics"]["Open-ended GT"] == log_metrics["gt_final"]["mean"].value == 4.0
    assert scored["metrics"]["Open-ended VA"] == log_metrics["va_final"]["mean"].value == 3.0
    assert scored["counts"] == {"num_cases": 4, "num_mcq": 3, "num_open": 1}


def test_export_refuses_invalid_unless_forced(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = judged_log(official_dataset, tmp_path / "logs", "I am not sure; both A and B fit.")
    output = tmp_path / "results.json"
    assert main(["export", log.location, "--output", str(output)]) == 1
    err = capsys.readouterr().err
    assert "refusing to write" in err and "no option label could be read" in err
    assert not output.exists()
    assert main(["export", log.location, "--output", str(output), "--force"]) == 0
    assert output.exists()
    # An existing file is not overwritten without --force.
    assert main(["export", log.location, "--output", str(output)]) == 1


def test_export_works_on_an_unlabeled_split(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (official_dataset / "ground_truth.json").unlink()
    [log] = eval(
        mcq(data=str(official_dataset), shuffle_choices=True, seed=3),
        model=get_model(
            "mockllm/model",
            custom_outputs=lambda *_: scripted_output('{"reasoning_trace": "x", "answer": "A"}'),
        ),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success"
    output = tmp_path / "results.json"
    assert main(["export", log.location, "--output", str(output)]) == 0
    answers = json.loads(output.read_text())["answers"]
    assert len(answers) == 3 and {a["task_type"] for a in answers} == {"mcq"}
    # Shuffled option "A" is mapped back to the label of the same text in the original case.
    assert log.samples is not None
    for sample, answer in zip(log.samples, answers, strict=True):
        assert sample.metadata is not None
        # (a shuffle that left the order as it was stores no label_map)
        assert answer["answer"] == sample.metadata.get("label_map", {}).get("A", "A")


def test_judge_scores_leave_out_unscored(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = judged_log(official_dataset, tmp_path / "logs", "ANSWER: A", text_score="no json here")
    output = tmp_path / "j.json"
    assert main(["judge-scores", log.location, "--output", str(output)]) == 0
    assert json.loads(output.read_text()) == {"scores": []}
    err = capsys.readouterr().err
    assert "o1: unscored gt_final" in err and "invalid judge output" in err


def test_leaderboard_ranks_ties_and_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], official_dataset: Path
) -> None:
    judged_log(
        official_dataset, tmp_path / "logs", "ANSWER: A", model="mockllm/alpha", vision_score=4
    )
    judged_log(
        official_dataset, tmp_path / "logs", "ANSWER: C", model="mockllm/beta", vision_score=2
    )
    [mcq_only] = eval(
        mcq(data=str(official_dataset)),
        model=get_model("mockllm/gamma", custom_outputs=lambda *_: scripted_output("ANSWER: B")),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert mcq_only.status == "success"
    plot = tmp_path / "board.png"
    assert (
        main(["leaderboard", str(tmp_path / "logs"), "--format", "json", "--plot", str(plot)]) == 0
    )
    board = json.loads(capsys.readouterr().out)["rows"]
    by_model = {row["model"]: row for row in board}
    # MCQ accuracy: alpha 1/3 (q1), beta 1/3 (q2), gamma 1/3 (q3): a three-way tie.
    assert {row["ranks"]["MCQ Accuracy"] for row in board} == {2.0}
    # Each accuracy carries its 95% interval counting images (three cases on three images):
    # Student's t on 2 degrees of freedom around the log-odds of 1/3, the standard error
    # the textbook one (one case per image), taken to log-odds by the delta method.
    error = float(np.std([1.0, 0.0, 0.0], ddof=1)) / math.sqrt(3)
    half = float(stats.t.ppf(0.975, 2)) * error / (1 / 3 * 2 / 3)
    centre = math.log(0.5)
    interval = by_model["mockllm/alpha"]["intervals"]["MCQ Accuracy"]
    assert interval["lower"] == pytest.approx(1 / (1 + math.exp(half - centre)))
    assert interval["upper"] == pytest.approx(1 / (1 + math.exp(-half - centre)))
    wilson = stats.binomtest(1, 3).proportion_ci(method="wilson")  # what per case gave
    assert interval["upper"] - interval["lower"] > wilson.high - wilson.low
    assert by_model["mockllm/alpha"]["ranks"]["Open-ended VA"] == 1.0
    assert by_model["mockllm/beta"]["ranks"]["Open-ended VA"] == 2.0
    assert by_model["mockllm/gamma"]["ranks"]["Open-ended GT"] == 3.0  # missing: last
    assert by_model["mockllm/gamma"]["missing"] == ["Open-ended GT", "Open-ended VA"]
    assert [row["model"] for row in board] == ["mockllm/alpha", "mockllm/beta", "mockllm/gamma"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["leaderboard", str(tmp_path / "logs"), "--breakdown"]) == 0
    markdown = capsys.readouterr().out
    assert "| 1 | mockllm/alpha |" in markdown and "modality:CT" in markdown
    assert "(n=3)" in markdown  # every metric shows its number of cases
    for fmt, marker in (
        (
            "csv",
            "dataset,position,model,partial,MCQ Accuracy,"
            "MCQ Accuracy 95% lower,MCQ Accuracy 95% upper,n MCQ Accuracy",
        ),
        ("html", "<table"),
    ):
        assert main(["leaderboard", str(tmp_path / "logs"), "--format", fmt]) == 0
        assert marker in capsys.readouterr().out


@pytest.mark.parametrize("rewrite", [components_results, legacy_results])
def test_leaderboard_reads_the_results_of_logs_in_earlier_metric_shapes(
    rewrite: Callable[[EvalLog], EvalLog],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    official_dataset: Path,
) -> None:
    """A log whose results are in an earlier shape (one ``components`` metric, or each
    component a score with its breakdowns in it) ranks with the same values, case counts and
    breakdowns (its intervals, counted again from its cases: test_metric_shapes.py)."""
    log = judged_log(official_dataset, tmp_path / "logs", "ANSWER: A", text_score="no JSON here")
    old = tmp_path / "old" / Path(log.location).name
    old.parent.mkdir()
    write_eval_log(rewrite(read_eval_log(log.location)), str(old))
    capsys.readouterr()  # the eval's own output (Inspect's banner on a process's first eval)
    boards = []
    for folder in (tmp_path / "logs", old.parent):
        assert main(["leaderboard", str(folder), "--format", "json", "--breakdown"]) == 0
        [row] = json.loads(capsys.readouterr().out)["rows"]
        boards.append(row)
    assert boards[0]["metrics"] == boards[1]["metrics"]
    assert boards[0]["metrics"]["Open-ended VA"] == 3.0  # and GT unscored: no JSON in the reply
    assert boards[0]["metrics"]["Open-ended GT"] is None
    for field in ("intervals", "counts", "breakdown"):
        assert boards[0][field] == boards[1][field], field
    assert boards[0]["intervals"]["Open-ended VA"] is None  # one case: no interval either way
    assert boards[0]["breakdown"]["Open-ended VA"]  # per modality
    assert boards[0]["counts"]["Open-ended VA"] == 1


def test_an_mcq_interval_per_case_is_counted_again_or_left_out_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], official_dataset: Path
) -> None:
    """A log whose MCQ interval is Inspect's Wilson interval per case (before issue 61) shows
    today's interval counted from its cases, and says so; one whose cases no longer give its
    logged accuracy back (an edited log) shows none, and says why."""
    log = judged_log(official_dataset, tmp_path / "logs", "ANSWER: A")
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "logs"), "--format", "json"]) == 0
    [current] = json.loads(capsys.readouterr().out)["rows"]
    old = read_eval_log(log.location)
    assert old.results is not None
    [mcq_score] = [score for score in old.results.scores if score.name == "mcq_scorer"]
    for metric in mcq_score.metrics.values():
        if metric.group == "image_ci":
            metric.group = "ci_wilson"
    (tmp_path / "old").mkdir()
    write_eval_log(old, str(tmp_path / "old" / "old.eval"))
    assert main(["leaderboard", str(tmp_path / "old"), "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert row["intervals"]["MCQ Accuracy"] == current["intervals"]["MCQ Accuracy"]
    assert [n for n in row["notes"] if n.startswith("MCQ Accuracy: interval counted from")]
    assert old.samples is not None
    edited = 0
    for sample in old.samples:  # every MCQ reply made right after the accuracy was logged
        value = sample.scores["mcq_scorer"].value if sample.scores else None
        if isinstance(value, dict):  # an open-ended case's MCQ score is NaN
            value["correct"] = 1.0
            edited += 1
    assert edited == 3
    (tmp_path / "edited").mkdir()
    write_eval_log(old, str(tmp_path / "edited" / "edited.eval"))
    assert main(["leaderboard", str(tmp_path / "edited"), "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert row["intervals"]["MCQ Accuracy"] is None
    [note] = [n for n in row["notes"] if n.startswith("MCQ Accuracy: no interval shown")]
    assert "Wilson" not in note and "ci_wilson" in note
    assert "do not give the logged value back" in note


def test_rank_rows_average_ties() -> None:
    rows = [
        ModelRow("a", {"MCQ Accuracy": 0.9, "Open-ended GT": 2.0, "Open-ended VA": 1.0}),
        ModelRow("b", {"MCQ Accuracy": 0.9, "Open-ended GT": 3.0, "Open-ended VA": 1.0}),
        ModelRow("c", {"MCQ Accuracy": 0.5, "Open-ended GT": None, "Open-ended VA": 2.0}),
        ModelRow("d", {"MCQ Accuracy": None, "Open-ended GT": None, "Open-ended VA": None}),
    ]
    ranked = {row.model: row for row in rank_rows(rows)}
    assert ranked["a"].ranks == {"MCQ Accuracy": 1.5, "Open-ended GT": 2.0, "Open-ended VA": 2.5}
    assert ranked["b"].ranks == {"MCQ Accuracy": 1.5, "Open-ended GT": 1.0, "Open-ended VA": 2.5}
    assert ranked["c"].ranks == {"MCQ Accuracy": 3.0, "Open-ended GT": 3.5, "Open-ended VA": 1.0}
    assert ranked["d"].ranks == {"MCQ Accuracy": 4.0, "Open-ended GT": 3.5, "Open-ended VA": 4.0}
    assert ranked["b"].position == 1.0 and ranked["a"].position == 2.0
    assert ranked["c"].position == 3.0 and ranked["d"].position == 4.0


def test_sample_data_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "demo"
    assert main(["sample-data", str(target)]) == 0
    assert (target / "cases.json").is_file() and (target / "ground_truth.json").is_file()
    assert len(list((target / "images").glob("*.png"))) == 10
    assert main(["sample-data", str(target)]) == 1  # never over existing files
    assert "not an empty folder" in capsys.readouterr().err


def test_console_script_help_for_every_subcommand() -> None:
    for command in ("export", "judge-scores", "score", "validate", "leaderboard", "sample-data"):
        result = subprocess.run(
            [sys.executable, "-m", "inspect_medreason.cli", command, "--help"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0 and "usage: medreason" in result.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "inspect_medreason.cli", "export"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 2 and "required" in missing.stderr


@pytest.mark.skipif(not SHARED_OFFICIAL.is_dir(), reason="shared/reference not present")
def test_official_docker_test_round_trip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The official smoke data: run (no scoring), export and validate, as a participant would;
    the result has the same shape as the official baseline's expected output."""
    folder = SHARED_OFFICIAL / "docker-test"
    [log] = eval(
        medreason(data=str(folder)),
        model="medreason/pipeline-check",
        score=False,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success"
    output = tmp_path / "results.json"
    assert (
        main(
            ["export", log.location, "--output", str(output), "--cases", str(folder / "cases.json")]
        )
        == 0
    )
    assert main(["validate", str(output), "--cases", str(folder / "cases.json")]) == 0
    ours = json.loads(output.read_text())
    baseline = json.loads((folder / "baseline_expected_output.json").read_text())
    shape = [(a["case_id"], a["task_type"]) for a in baseline["answers"]]
    assert [(a["case_id"], a["task_type"]) for a in ours["answers"]] == shape
    assert ours["version"] == baseline["version"] and ours["type"] == baseline["type"]
    assert ours["answers"][0]["answer"] == baseline["answers"][0]["answer"] == "A"


def test_leaderboard_keeps_variants_apart(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # With the images, answer A (right for q1 only); blind, answer nothing usable.
    for images, reply in ((True, "ANSWER: A"), (False, "I cannot tell without the image.")):
        model = get_model("mockllm/model", custom_outputs=lambda *_, r=reply: scripted_output(r))
        [log] = eval(
            mcq(data=str(official_dataset), images=images),
            model=model,
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
        assert log.status == "success"
    assert main(["leaderboard", str(tmp_path / "logs"), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    apart = {row["model"]: row["metrics"]["MCQ Accuracy"] for row in rows}
    assert apart == {
        "mockllm/model [images=true]": pytest.approx(1 / 3),
        "mockllm/model [images=false]": 0.0,
    }
    assert (
        main(["leaderboard", str(tmp_path / "logs"), "--format", "json", "--label-arg", "images"])
        == 0
    )
    named = {row["model"] for row in json.loads(capsys.readouterr().out)["rows"]}
    assert named == {"mockllm/model [images=True]", "mockllm/model [images=False]"}


def _mcq_log(data: Path, log_dir: Path, reply: str, **eval_args: Any) -> EvalLog:
    task_args = eval_args.pop("task_args", {})
    model = get_model("mockllm/model", custom_outputs=lambda *_: scripted_output(reply))
    [log] = eval(
        mcq(data=str(data), **task_args),
        model=model,
        display="none",
        log_dir=str(log_dir),
        **eval_args,
    )
    assert log.status == "success"
    return log


def test_leaderboard_never_mixes_runs(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    full = _mcq_log(official_dataset, logs, "ANSWER: A")
    _mcq_log(official_dataset, logs, "ANSWER: B", limit=1)  # newer, but a partial run
    _mcq_log(official_dataset, logs, "ANSWER: C", sample_id=["q3"])
    _mcq_log(official_dataset, logs, "ANSWER: A", task_args={"shuffle_choices": True})
    assert main(["leaderboard", str(logs), "--format", "json"]) == 0
    captured = capsys.readouterr()
    board = json.loads(captured.out)
    models = sorted(row["model"] for row in board["rows"])
    assert len(models) == 2 and all("shuffle_choices=" in m for m in models), models
    unshuffled = next(r for r in board["rows"] if "shuffle_choices=false" in r["model"])
    assert unshuffled["metrics"]["MCQ Accuracy"] == pytest.approx(1 / 3)
    assert unshuffled["counts"]["MCQ Accuracy"] == 3
    assert unshuffled["sources"]["MCQ Accuracy"] == full.location
    assert "1 of 3 cases (--limit 1)" in captured.err and "--sample-id" in captured.err
    # Shown on request, marked and unranked, never folded into the full run's row.
    assert main(["leaderboard", str(logs), "--format", "json", "--include-partial"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    partial = [row for row in rows if row["partial"]]
    assert len(partial) == 2 and all(row["position"] is None for row in partial)
    assert all("(partial:" in row["model"] for row in partial)


def test_leaderboard_says_which_of_two_identical_runs_it_used(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    older = _mcq_log(official_dataset, tmp_path / "logs", "ANSWER: B")
    newer = _mcq_log(official_dataset, tmp_path / "logs", "ANSWER: A")
    assert main(["leaderboard", str(tmp_path / "logs"), "--format", "json"]) == 0
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert row["sources"]["MCQ Accuracy"] == newer.location
    assert row["notes"] == [
        f"MCQ Accuracy: used {newer.location} (the newest run of this "
        f"configuration), not {older.location}"
    ]


def test_leaderboard_ranks_only_within_one_dataset(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shutil

    other = tmp_path / "other"
    shutil.copytree(official_dataset, other, ignore=shutil.ignore_patterns("logs"))
    cases = json.loads((other / "cases.json").read_text())
    cases["cases"] = cases["cases"][:2]
    (other / "cases.json").write_text(json.dumps(cases))
    truth = json.loads((other / "ground_truth.json").read_text())
    truth["cases"] = truth["cases"][:2]
    (other / "ground_truth.json").write_text(json.dumps(truth))
    _mcq_log(official_dataset, tmp_path / "logs", "ANSWER: A")
    _mcq_log(other, tmp_path / "logs", "ANSWER: A")
    assert main(["leaderboard", str(tmp_path / "logs"), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert len({row["dataset"] for row in rows}) == 2 and [row["position"] for row in rows] == [
        1.0,
        1.0,
    ]


def test_leaderboard_breakdown_keeps_every_format_valid(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import csv
    import io

    judged_log(official_dataset, tmp_path / "logs", "ANSWER: A")
    assert main(["leaderboard", str(tmp_path / "logs"), "--format", "json", "--breakdown"]) == 0
    [row] = json.loads(capsys.readouterr().out)["rows"]
    assert row["breakdown"]["MCQ Accuracy"]["modality:CT"] == 1.0
    assert main(["leaderboard", str(tmp_path / "logs"), "--format", "csv", "--breakdown"]) == 0
    table = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert len(table) == 2 and len(table[0]) == len(table[1])
    assert "MCQ Accuracy modality:CT" in table[0]
    assert table[1][table[0].index("MCQ Accuracy modality:CT")] == "1"


def test_leaderboard_refusal_writes_nothing(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _mcq_log(official_dataset, tmp_path / "logs", "ANSWER: A")
    (tmp_path / "plot_dir").mkdir()
    table = tmp_path / "board.md"
    assert (
        main(
            [
                "leaderboard",
                str(tmp_path / "logs"),
                "--output",
                str(table),
                "--plot",
                str(tmp_path / "plot_dir"),
            ]
        )
        == 1
    )
    assert not table.exists() and "is a folder" in capsys.readouterr().err


def test_judge_scores_refuses_a_case_judged_in_two_logs(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = judged_log(official_dataset, tmp_path / "logs", "ANSWER: A")
    second = judged_log(official_dataset, tmp_path / "logs", "ANSWER: A", text_score=2)
    output = tmp_path / "j.json"
    assert main(["judge-scores", first.location, second.location, "--output", str(output)]) == 1
    assert not output.exists()
    assert "case 'o1' is in" in capsys.readouterr().err


def test_long_work_shows_progress_when_asked(
    official_dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = judged_log(official_dataset, tmp_path / "logs", "ANSWER: A")
    monkeypatch.setenv("MEDREASON_PROGRESS", "1")
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["export", log.location, "--output", str(tmp_path / "r.json")]) == 0
    err = capsys.readouterr().err
    assert "exporting" in err and "4/4" in err
    assert main(["judge-scores", log.location, "--output", str(tmp_path / "j.json")]) == 0
    assert "reading judge scores" in capsys.readouterr().err
    monkeypatch.setenv("MEDREASON_PROGRESS", "0")
    assert main(["leaderboard", log.location]) == 0
    assert "reading log headers" not in capsys.readouterr().err


def test_html_leaderboard_is_one_standalone_page_with_the_plot(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import base64
    import re

    judged_log(official_dataset, tmp_path / "logs", "ANSWER: A")
    page = tmp_path / "board.html"
    assert (
        main(["leaderboard", str(tmp_path / "logs"), "--format", "html", "--output", str(page)])
        == 0
    )
    text = page.read_text(encoding="utf-8")
    assert (
        text.startswith("<!DOCTYPE html>")
        and "<style>" in text
        and text.rstrip().endswith("</html>")
    )
    assert "<table" in text and "mockllm/model" in text and "http" not in text.split("<body>")[1]
    image = re.search(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", text)
    assert image is not None and base64.b64decode(image.group(1))[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_plot_grows_with_the_rows() -> None:
    from io import BytesIO

    from PIL import Image

    from inspect_medreason.analysis.leaderboard import plot_png

    def height(count: int) -> int:
        rows = rank_rows(
            [
                ModelRow(
                    f"provider/a-rather-long-model-name-number-{i}-instruct",
                    {"MCQ Accuracy": i / 10, "Open-ended GT": 2.0, "Open-ended VA": None},
                )
                for i in range(count)
            ]
        )
        return Image.open(BytesIO(plot_png(rows))).height

    assert height(10) > 2 * height(2) > 0


def test_leaderboard_treats_judge_concurrency_as_the_same_configuration(tmp_path: Path) -> None:
    """judge_max_connections changes no number: two runs differing only there are one
    configuration, while a setting that can change a number (the grader role's temperature) keeps them apart."""
    logs = []
    first: EvalLog | None = None
    warmer = GenerateConfig(temperature=0.7)
    for extra, grader_config in (
        ({}, GenerateConfig()),
        ({"judge_max_connections": 3}, GenerateConfig()),
        ({}, warmer),
    ):
        [log] = eval(
            open_ended(data=str(sample_data_dir()), **extra),
            model="medreason/pipeline-check",
            model_roles={
                "grader": get_model(
                    "medreason/pipeline-check", config=grader_config, memoize=False
                ),
                "vision_grader": "medreason/pipeline-check",
            },
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
        assert log.status == "success", log.error
        first = first or log
        logs.append(run_settings(log).tracks["open"])
    assert logs[0] == logs[1]
    assert logs[0]["judge_settings"]["temperature"] == 0.0
    assert logs[2] != logs[0]
    # A log written before judge_failure was recorded ran with unscored failures: the same
    # configuration as today's default, not another one; judge_failure=error is another.
    assert first is not None and first.eval.metadata is not None
    older = first.model_copy(deep=True)
    assert older.eval.metadata is not None
    del older.eval.metadata["judges"]["settings"]["failure"]
    assert run_settings(older).tracks["open"] == logs[0]
    erroring = first.model_copy(deep=True)
    assert erroring.eval.metadata is not None
    erroring.eval.metadata["judges"]["settings"]["failure"] = "error"
    assert run_settings(erroring).tracks["open"] != logs[0]


def test_export_of_an_unfinished_run_keeps_what_it_holds(
    official_dataset: Path, tmp_path: Path
) -> None:
    """The header lists every case; the log holds only some (a run stopped part-way, or a
    log trimmed by hand). Export reads the ones present, in the dataset's order, names the
    missing ones by the run's status, and writes nothing without --force."""
    [log] = eval(
        mcq(data=str(official_dataset)),
        model=get_model("mockllm/model", custom_outputs=lambda *_: scripted_output("ANSWER: A")),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success" and log.samples is not None
    log.samples = [sample for sample in log.samples if sample.id != "q2"]
    log.status = "error"
    trimmed = tmp_path / "trimmed.eval"
    write_eval_log(log, str(trimmed))
    assert read_eval_log(str(trimmed), header_only=True).eval.dataset.sample_ids == [
        "q1",
        "q2",
        "q3",
    ]
    report = export_results([trimmed])
    assert [answer.case_id for answer in report.submission.answers] == ["q1", "q3"]
    assert any("status 'error'" in problem for problem in report.problems)
    assert not any("cannot be read" in problem for problem in report.problems)
    out = tmp_path / "results.json"
    assert main(["export", str(trimmed), "--output", str(out)]) == 1 and not out.exists()


def test_leaderboard_shows_a_judge_of_the_tested_models_lineage_beside_the_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], official_dataset: Path
) -> None:
    """mockllm/model judged by itself is flagged beside its row; mockllm/alpha, judged by
    mockllm/model (another line), is not."""
    judged_log(official_dataset, tmp_path / "logs", "ANSWER: A", model="mockllm/model")
    judged_log(official_dataset, tmp_path / "logs", "ANSWER: A", model="mockllm/alpha")
    assert main(["leaderboard", str(tmp_path / "logs"), "--format", "json"]) == 0
    rows = {row["model"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    assert rows["mockllm/model"]["judge_lineage"] == [
        "grader mockllm/model is the same model",
        "vision_grader mockllm/model is the same model",
    ]
    assert rows["mockllm/alpha"]["judge_lineage"] == []
    assert main(["leaderboard", str(tmp_path / "logs")]) == 0
    table = capsys.readouterr().out
    [flagged] = [line for line in table.splitlines() if "| mockllm/model |" in line]
    assert flagged.rstrip(" |").endswith(
        "⚠ grader mockllm/model is the same model; vision_grader mockllm/model is the same model"
    )
    [clean] = [line for line in table.splitlines() if "| mockllm/alpha |" in line]
    assert "⚠" not in clean


def test_no_help_text_shows_a_doubled_percent_sign() -> None:
    """argparse %-formats an option's help but not a description: "95%%" there is shown
    as it is written."""
    import argparse

    from inspect_medreason.cli.commands import build_parser

    parser = build_parser()
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    pages = [parser.format_help(), *(sub.format_help() for sub in commands.choices.values())]
    assert len(pages) > 10 and not [page for page in pages if "%%" in page]


def test_a_run_of_several_epochs_is_refused_once_by_export_and_judge_scores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], official_dataset: Path
) -> None:
    """One reply and one score per case in the official files: a run of 2 epochs is named
    once, not once per case it repeats."""

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        if "Options:" in user_text(messages):
            return scripted_output("ANSWER: A")
        return scripted_output('{"reasoning_trace": "A dense nodule.", "answer": "nodule"}')

    def judge(*_: Any) -> ModelOutput:
        return scripted_output(json.dumps({"score": 3, "rationale": "r"}))

    [log] = eval(
        medreason(data=str(official_dataset), judge_cache=False),
        model=get_model("mockllm/model", custom_outputs=respond),
        model_roles={
            "grader": get_model("mockllm/judge", custom_outputs=judge, memoize=False),
            "vision_grader": get_model("mockllm/judge", custom_outputs=judge, memoize=False),
        },
        epochs=2,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    for command in (
        ["export", log.location, "--output", str(tmp_path / "results.json")],
        ["judge-scores", log.location, "--output", str(tmp_path / "scores.json")],
    ):
        assert main(command) == 1
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if "a run of 2 epochs" in line]
        assert len(lines) == 1, err
        assert "a second entry for this case" not in err and "several epochs" not in err
