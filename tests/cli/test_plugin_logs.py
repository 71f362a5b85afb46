"""Every ``medreason`` command recognises this plugin's logs by what they are: the task's
registered name, the file that defines it (an inspect_evals register entry runs
``inspect eval <path>/medreason/medreason.py@mcq``, whose log names the task plain ``mcq``),
or the run record the task wrote; another task's log is still skipped, named."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from conftest import scripted_output
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import get_model

from inspect_medreason.analysis.logs import log_header, plugin_task, task_files, task_name
from inspect_medreason.cli import main


def _run(task: object, data: Path, log_dir: Path, reply: str) -> EvalLog:
    [log] = eval(
        task,  # type: ignore[arg-type]
        task_args={"data": str(data)},
        model=get_model("mockllm/model", custom_outputs=lambda *_: scripted_output(reply)),
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success", log.error
    return log


def test_a_task_run_by_its_file_is_a_medreason_log(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    task_file = importlib.import_module("inspect_medreason.medreason.medreason").__file__
    by_file = _run(f"{task_file}@mcq", official_dataset, logs, "ANSWER: A")
    assert by_file.eval.task == "mcq"  # no package prefix: the file names it
    assert by_file.location is not None
    assert plugin_task(log_header(Path(by_file.location))) == "mcq"

    assert main(["leaderboard", str(logs), "--format", "json"]) == 0
    captured = capsys.readouterr()
    [row] = json.loads(captured.out)["rows"]
    assert row["metrics"]["MCQ Accuracy"] == pytest.approx(1 / 3)
    assert "not a MedReason task" not in captured.err

    out = tmp_path / "results.json"
    assert main(["export", str(logs), "--name", "team", "--output", str(out), "--force"]) == 0
    answers = json.loads(out.read_text())["answers"]
    assert {answer["case_id"] for answer in answers} == {"q1", "q2", "q3"}


def test_a_plain_task_name_is_recognised_only_with_the_plugins_file_or_record() -> None:
    assert task_files()["mcq"] == "medreason/medreason.py"
    assert task_files()["medreason_vqa_rad"] == "vqa/vqa.py"
    from inspect_ai.log import EvalDataset, EvalSpec

    def header(task: str, task_file: str | None, metadata: dict[str, object]) -> EvalLog:
        return EvalLog(
            eval=EvalSpec(
                created="2026-01-01T00:00:00+00:00",
                task=task,
                task_file=task_file,
                dataset=EvalDataset(),
                model="mockllm/model",
                config={},  # type: ignore[arg-type]
                metadata=metadata,
            )
        )

    record: dict[str, object] = {"task_version": "2-A", "data": {"cases_file": "c.json"}}
    assert plugin_task(header("inspect_medreason/open_ended", None, {})) == "open_ended"
    assert plugin_task(header("mcq", "/x/src/inspect_medreason/medreason/medreason.py", {})) == (
        "mcq"
    )
    assert plugin_task(header("mcq", None, record)) == "mcq"  # a task object run from Python
    # another's task of the same name: another file, or no run record of ours
    assert plugin_task(header("mcq", "/elsewhere/my_evals/mcq.py", record)) is None
    assert plugin_task(header("mcq", None, {"data": {}})) is None
    assert plugin_task(header("other_task", None, record)) is None
    # run from inside the package, the file is named relative to it: the record must agree
    assert plugin_task(header("mcq", "medreason/medreason.py", record)) == "mcq"
    assert plugin_task(header("mcq", "medreason.py", record)) == "mcq"
    assert plugin_task(header("mcq", "medreason/medreason.py", {})) is None
    assert plugin_task(header("mcq", "other/medreason.py", record)) is None
    # the file that defines another of our tasks is not this task's
    assert plugin_task(header("mcq", "/x/src/inspect_medreason/vqa/vqa.py", {})) is None
    # a task renamed since (vqa_rad, task version 5-B): an old log reads as the current task,
    # but inspect_evals' own vqa_rad (their file, no record of ours) stays theirs
    vqa_file = "/x/src/inspect_medreason/vqa/vqa.py"
    assert plugin_task(header("inspect_medreason/vqa_rad", None, {})) == "medreason_vqa_rad"
    assert plugin_task(header("vqa_rad", vqa_file, {})) == "medreason_vqa_rad"
    assert plugin_task(header("vqa_rad", None, record)) == "medreason_vqa_rad"
    assert plugin_task(header("vqa_rad", "/x/src/inspect_evals/vqa_rad/vqa_rad.py", {})) is None
    assert task_name(header("inspect_medreason/vqa_rad", None, {})) == "medreason_vqa_rad"
    assert task_name(header("vqa_rad", None, {})) == "vqa_rad"
