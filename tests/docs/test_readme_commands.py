"""Every `inspect` and `medreason` command in the README and the docs pages runs as written,
offline; so does every command of the family READMEs.

Each page's bash blocks are read in order and its commands are run in one scratch folder of
its own (so `logs/` and the files one command writes are there for the next). Real hosts are
rewritten to a local OpenAI-compatible server started here, `openai/` models reach it
through OPENAI_BASE_URL, and placeholder data paths become the demo data. Commands that
cannot run here (installing, serving GPUs, browsing) are listed below with the reason; any
other command that appears on a page is run, so a page change that breaks a command fails
CI. The pages' links to files and headings must resolve too.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import list_eval_logs, read_eval_log
from utils.openai_stub import message_parts, openai_stub
from utils.published_schemas import (
    cmb_answer_key,
    cmb_clin_file,
    cmb_exam_file,
    cmb_snapshot,
    gemex_folder,
    med_cmr_release,
    med_cmr_zip,
    medxpertqa_folder,
    path_vqa_snapshot,
    slake_snapshot,
    vqa_rad_parquet,
    vqa_rad_snapshot,
)

from inspect_medreason.core.loaders import sample_data_dir

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS_PAGES = sorted((ROOT / "docs").glob("*.md"))  # one page per topic
PAGES = [README, *DOCS_PAGES]  # each page's commands run in a scratch folder of its own
FAMILY_READMES = sorted(  # one per evaluation family: the folders with an eval.yaml
    path.parent / "README.md" for path in (ROOT / "src" / "inspect_medreason").glob("*/eval.yaml")
)
# Commands that are not run, and why. Matched on how the command starts.
NOT_RUN = {
    "pip install": "installing is what CI itself does first",
    "apt-get ": "installs system packages as root, what CI itself does first",
    "python -m pytest": "this is the test run itself",
    "vllm serve": "serves a model on GPUs",
    "export ": "sets an environment variable (applied to the commands after it)",
    "python perf/": "a performance measurement, minutes long",
    "python scripts/": "regenerates the demo images from optional packages",
    "inspect view": "starts a long-running web server",
    "ruff check": "the linters, run by CI itself",
    "bash .ci/run": "CI itself",
}
PLACEHOLDER_DATA = (
    "path/to/validation/",
    "path/to/cases.json",
    "train_subset/",
    "validation/",
    "val/",
)


def readme_commands(readme: Path = README) -> list[str]:
    """The shell commands of a README's bash blocks, continuation lines joined."""
    commands: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", readme.read_text(encoding="utf-8"), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            command = line.split("  #", 1)[0].strip()
            if command and not command.startswith("#"):
                commands.append(" ".join(command.split()))
    return commands


def respond(request: dict[str, Any]) -> str:
    """A stand-in for every model the README names: judges get a score, MCQ prompts a label,
    open prompts an answer with its reasoning."""
    text, _ = message_parts(request)
    if '"chosen_option"' in text:  # the MCQ extractor judge (docs/mcq.md)
        return json.dumps({"chosen_option": "none"})
    if "Reply with only the JSON object" in text or '"score"' in text:
        return json.dumps({"score": 3, "rationale": "Consistent with the reference."})
    if re.search(r"^\s*A[.)] ", text, re.M) or "Options:" in text:
        return json.dumps({"reasoning_trace": "The image was inspected.", "answer": "A"})
    return json.dumps({"reasoning_trace": "A dense region is visible.", "answer": "A nodule."})


def rewrite(command: str, url: str, demo: Path, workdir: Path) -> str:
    command = re.sub(r"https?://[A-Za-z0-9.\-]+(?::\d+)?/v1", url, command)
    for placeholder in PLACEHOLDER_DATA:
        command = command.replace(f"={placeholder}", f"={demo}/").replace(
            f" {placeholder}", f" {demo}/"
        )
    command = command.replace("-T data=...", f"-T data={demo}")
    if "<" in command:  # logs/<log>.eval: the newest log so far (<previous ...>: the one before)
        logs = sorted((workdir / "logs").glob("*.eval"), key=lambda path: path.stat().st_mtime_ns)
        # looked up only when the command names it: a page's first log has no previous one
        command = re.sub(
            r"logs/<previous[^>]*>\.eval", lambda _: shlex.quote(str(logs[-2])), command
        )
        command = re.sub(r"logs/<[^>]*>\.eval", lambda _: shlex.quote(str(logs[-1])), command)
    return command


def scratch_folder(folder: Path) -> Path:
    """A page's scratch folder: the demo data and a copy of the judge prompts (the
    `organizer_prompts/` the pages name); returns the demo data's folder."""
    demo = folder / "demo"
    shutil.copytree(sample_data_dir(), demo, ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    shutil.copytree(
        Path(str(sample_data_dir())).parent / "core" / "prompts", folder / "organizer_prompts"
    )
    return demo


def run_page(page: Path, folder: Path, url: str, env: dict[str, str]) -> list[str]:
    """Run a page's commands in order in `folder`; returns those run (the others are in
    NOT_RUN)."""
    demo = scratch_folder(folder)
    ran: list[str] = []
    for raw in readme_commands(page):
        if any(raw.startswith(start) for start in NOT_RUN):
            continue
        assert raw.startswith(("inspect eval", "inspect score", "medreason ")), (
            f"{page.name} shows a command this test does not know how to run: {raw!r}"
        )
        command = rewrite(raw, url, demo, folder)
        before = {info.name for info in list_eval_logs(str(folder / "logs"))}
        argv = shlex.split(command)
        if argv[0] == "medreason":
            argv = [sys.executable, "-m", "inspect_medreason.cli", *argv[1:]]
        else:
            argv = [sys.executable, "-m", "inspect_ai", *argv[1:]]
        result = subprocess.run(
            argv,
            cwd=folder,
            # the logs/ the pages name is the scratch folder's, not the session's default
            env={**env, "INSPECT_LOG_DIR": str(folder / "logs")},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert result.returncode == 0, (
            page.name,
            raw,
            command,
            result.stdout[-2000:],
            result.stderr[-3000:],
        )
        for info in list_eval_logs(str(folder / "logs")):
            if info.name not in before:
                assert read_eval_log(info, header_only=True).status == "success", (page, raw)
        ran.append(raw)
    return ran


def test_every_readme_and_docs_command_runs(tmp_path: Path) -> None:
    assert {page.name for page in DOCS_PAGES} >= {
        "mcq.md",
        "open_ended.md",
        "judges_at_scale.md",
        "medreason_command.md",
        "data_formats.md",
    }
    commands = [command for page in PAGES for command in readme_commands(page)]
    assert len(commands) >= 15
    ran: list[str] = []
    folders = [tmp_path / page.stem for page in PAGES]
    with openai_stub("stub", respond) as (url, requests):
        env = {
            **os.environ,
            "OPENAI_BASE_URL": url,
            "OPENAI_API_KEY": "stub",
            # the examples' judges of another family, served through Together's API
            "TOGETHER_BASE_URL": url,
            "TOGETHER_API_KEY": "stub",
            "LOCAL_API_KEY": "stub",
            "GATEWAY_API_KEY": "stub",
            "NO_COLOR": "1",
            "INSPECT_DISPLAY": "plain",
        }
        for page, folder in zip(PAGES, folders, strict=True):
            ran.extend(run_page(page, folder, url, env))
    assert len(requests) > 0  # the real-provider examples reached the local server
    assert any(c.startswith("inspect eval") for c in ran) and any(
        c.startswith("medreason score") for c in ran
    )
    written = {
        name
        for folder in folders
        for name in ("metrics.json", "submission.zip", "compare.png")
        if (folder / name).is_file()
    }
    # medreason score --output, export --zip and compare --plot ran
    assert written == {"metrics.json", "submission.zip", "compare.png"}, written
    assert len(ran) >= 12, ran


HEADING = re.compile(r"^#{1,6} (.+)$", re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A repository file named in code (`tests/cli/test_official.py`), not a pattern (`judge_*.txt`)
FILE_IN_CODE = re.compile(
    r"`((?:tests|src|perf|scripts|docs|templates)/[\w./-]+\.(?:py|md|json|txt|yaml))`"
)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {anchor(heading) for heading in HEADING.findall(text)}


@pytest.mark.parametrize(
    "page",
    [*PAGES, *FAMILY_READMES, ROOT / "CONTRIBUTING.md"],
    ids=lambda path: str(path.relative_to(ROOT)),
)
def test_every_link_to_a_file_or_heading_resolves(page: Path) -> None:
    """Content moved between pages; a link left pointing at its old place fails here."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    broken: list[str] = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path_part, _, fragment = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target}: no such heading")
    for named in FILE_IN_CODE.findall(text):
        if not (ROOT / named).exists():
            broken.append(f"{named}: no such file")
    assert not broken, broken


@pytest.mark.parametrize(
    "command",
    [c for page in PAGES for c in readme_commands(page) if c.startswith("inspect eval")],
)
def test_readme_and_docs_eval_commands_name_registered_tasks(command: str) -> None:
    task = command.split()[2]
    assert task.startswith("inspect_medreason/")
    from inspect_medreason import _registry

    assert hasattr(_registry, task.split("/", 1)[1]), task


INLINE_EVAL = re.compile(r"`(inspect eval(?:-set)? [^`]+)`")


def task_arguments_shown(page: Path) -> list[tuple[str, str]]:
    """Each ``(task, -T name)`` an ``inspect eval``/``eval-set`` command on ``page`` gives,
    in its bash blocks and its inline code."""
    commands = [*readme_commands(page), *INLINE_EVAL.findall(page.read_text(encoding="utf-8"))]
    shown: list[tuple[str, str]] = []
    for command in commands:
        try:
            words = shlex.split(command)
        except ValueError:
            words = command.split()
        if words[:2] not in (["inspect", "eval"], ["inspect", "eval-set"]):
            continue
        tasks = []
        for word in words[2:]:
            if word.startswith("-"):
                break
            tasks.extend(word.split(","))
        for index, word in enumerate(words):
            if word in ("-T", "--task-arg") and index + 1 < len(words):
                argument = words[index + 1]
            elif word.startswith("-T") and len(word) > 2:
                argument = word[2:]
            else:
                continue
            shown.extend((task, argument.split("=", 1)[0]) for task in tasks)
    return shown


@pytest.mark.parametrize("page", [*PAGES, *FAMILY_READMES], ids=lambda path: path.name)
def test_every_task_argument_a_page_shows_is_a_parameter_of_its_task(page: Path) -> None:
    """What inspect-evals-lint's readme_task_args checks, on the signature Inspect reads
    (the lint reads the source, where the shared parameters are one keyword each)."""
    from inspect_medreason import _registry

    wrong = []
    for task, name in task_arguments_shown(page):
        function = getattr(_registry, task.removeprefix("inspect_medreason/"), None)
        assert task.startswith("inspect_medreason/") and function is not None, task
        if name not in inspect.signature(function).parameters:
            wrong.append(f"{task} -T {name}")
    assert not wrong, f"{page}: {wrong}"


def test_the_task_argument_check_sees_every_form(tmp_path: Path) -> None:
    text = (
        "```bash\ninspect eval inspect_medreason/mcq -T shuffle_choices=true \\\n"
        "    -Tseed=3 --task-arg 'images=false'\n```\n"
        "and `inspect eval-set inspect_medreason/open_ended,inspect_medreason/mcq -T nope=1`"
    )
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    assert task_arguments_shown(page) == [
        ("inspect_medreason/mcq", "shuffle_choices"),
        ("inspect_medreason/mcq", "seed"),
        ("inspect_medreason/mcq", "images"),
        ("inspect_medreason/open_ended", "nope"),
        ("inspect_medreason/mcq", "nope"),
    ]


FAMILY_REPLY = json.dumps(
    {
        # One reply every family can read: the model's answer fields and every judge's verdict
        # fields, so each command runs through its scorer.
        "reasoning_trace": "Inspected.",
        "answer": "A",
        "reason": "Seen.",
        "location": [[1, 1, 5, 5]],
        "score": 3,
        "correct": True,
        "rationale": "Consistent.",
        "fluency": 4,
        "relevance": 4,
        "completeness": 4,
        "proficiency": 4,
        "consistency": 7,
        "coherence": 8,
        "visual_accuracy": 6,
        "ground_truth_correctness": 9,
    }
)


def readme_data_writers() -> list[Callable[[Path], None]]:
    """The ``readme_data(folder)`` of every ``tests/<family>/published_layout.py``: a family
    added from templates/new_benchmark_tests writes its README's data paths there, so this
    test runs its commands with no edit here (tests/ is on the path, as pytest runs it)."""
    layouts = sorted((ROOT / "tests").glob("*/published_layout.py"))
    return [
        importlib.import_module(f"{path.parent.name}.published_layout").readme_data
        for path in layouts
    ]


def family_data(folder: Path) -> Path:
    """Every placeholder data path the family READMEs name, in its dataset's schema."""
    shutil.copytree(
        sample_data_dir(), folder / "demo", ignore=shutil.ignore_patterns("__pycache__", "*.py")
    )
    vqa_rad_parquet(folder / "vqa_rad")
    vqa_rad_snapshot(folder / "vqa-rad")
    path_vqa_snapshot(folder / "path-vqa")
    slake_snapshot(folder / "SLAKE")
    cmb_snapshot(folder / "CMB")
    cmb_answer_key(folder / "CMB-test-choice-answer.json")
    gemex_folder(folder / "gemex")
    medxpertqa_folder(folder / "medxpertqa")
    cmb_exam_file(folder / "cmb_exam.json")
    cmb_exam_file(folder / "cmb_val.json")
    cmb_clin_file(folder / "cmb_clin.json")
    med_cmr_release(folder / "med_cmr")
    med_cmr_zip(folder / "med_cmr.zip")
    for writer in readme_data_writers():
        writer(folder)
    shutil.copytree(
        Path(str(sample_data_dir())).parent / "core" / "prompts", folder / "organizer_prompts"
    )
    return folder / "demo"


@pytest.mark.parametrize("readme", FAMILY_READMES, ids=lambda path: path.parent.name)
def test_every_family_readme_command_runs(readme: Path, tmp_path: Path) -> None:
    commands = readme_commands(readme)
    assert commands, f"{readme} shows no command"
    demo = family_data(tmp_path)
    with openai_stub("stub", lambda request: FAMILY_REPLY) as (url, requests):
        env = {
            **os.environ,
            "OPENAI_BASE_URL": url,
            "OPENAI_API_KEY": "stub",
            # the examples' judges of another family, served through Together's API
            "TOGETHER_BASE_URL": url,
            "TOGETHER_API_KEY": "stub",
            "NO_COLOR": "1",
            "INSPECT_DISPLAY": "plain",
            # the commands' default log folder is the scratch folder's logs/, read below
            "INSPECT_LOG_DIR": str(tmp_path / "logs"),
        }
        for raw in commands:
            assert raw.startswith("inspect eval inspect_medreason/"), raw
            command = rewrite(raw, url, demo, tmp_path)
            before = {info.name for info in list_eval_logs(str(tmp_path / "logs"))}
            argv = [sys.executable, "-m", "inspect_ai", *shlex.split(command)[1:]]
            result = subprocess.run(
                argv,
                cwd=tmp_path,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert result.returncode == 0, (raw, result.stdout[-2000:], result.stderr[-3000:])
            [new] = [i for i in list_eval_logs(str(tmp_path / "logs")) if i.name not in before]
            log = read_eval_log(new)
            assert log.status == "success", raw
            assert log.samples and any(
                not math.isnan(score.as_float()) if isinstance(score.value, int | float) else True
                for sample in log.samples
                for score in (sample.scores or {}).values()
            ), f"{raw}: nothing was scored"
            # ran on the local files, not the hub (judge_meta's probes ship in the package)
            assert log.eval.task_args.get("data") or "judge_meta" in raw, raw
    assert requests, "the commands reached the local OpenAI-compatible server"
