"""A user's mistake gets one clear message and a non-zero exit, never a traceback; a missing
judge stops a run that scores at its first score (where Inspect decides whether a run
scores), and a run that does not score needs none, however Inspect's options are given."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json
from inspect_ai.log import read_eval_log

from inspect_medreason.cli import main
from inspect_medreason.core.solvers import RUN_SYSTEM_MESSAGE


def inspect_cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspect_ai", *args, "--display", "plain"],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["inspect_medreason/mcq", "-T", "data=/no/such/folder"], "no such file or folder"),
        (["inspect_medreason/mcq", "-T", "seed=abc"], "-T seed='abc': expected a whole number"),
        (["inspect_medreason/mcq", "-T", "shuffle_choices=maybe"], "expected true or false"),
        (
            [
                "inspect_medreason/open_ended",
                "-T",
                "judge_prompts=/no/such/prompts",
                "--model-role",
                "grader=medreason/pipeline-check",
                "--model-role",
                "vision_grader=medreason/pipeline-check",
            ],
            "missing template file(s)",
        ),
        (
            [
                "inspect_medreason/open_ended",
                "-T",
                "judge_timeout=-1",
                "--model-role",
                "grader=medreason/pipeline-check",
                "--model-role",
                "vision_grader=medreason/pipeline-check",
            ],
            "judge_timeout",
        ),
        (
            ["inspect_medreason/open_ended", "-T", "judge_timoeut=0"],
            "open_ended takes no -T judge_timoeut (did you mean -T judge_timeout?)",
        ),
    ],
)
def test_task_mistakes_print_one_message(tmp_path: Path, args: list[str], message: str) -> None:
    result = inspect_cli(
        "eval",
        *args,
        "--model",
        "medreason/pipeline-check",
        "--log-dir",
        str(tmp_path / "logs"),
        cwd=tmp_path,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0 and message in output, output[-2000:]
    assert "Traceback" not in output
    assert not (tmp_path / "logs").exists() or not list((tmp_path / "logs").iterdir())


def test_an_unreachable_hub_asks_for_a_local_copy(tmp_path: Path) -> None:
    env = {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_OFFLINE": "0", "HF_HUB_ETAG_TIMEOUT": "2"}
    result = inspect_cli(
        "eval",
        "inspect_medreason/medreason_vqa_rad",
        "--model",
        "medreason/pipeline-check",
        "--model-role",
        "grader=medreason/pipeline-check",
        cwd=tmp_path,
        env=env,
    )
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode != 0 and "Traceback" not in output, output[-2000:]
    assert "pass -T data=PATH" in output and "image, question, answer" in output


def test_inspects_options_work_alike_as_flags_and_environment(tmp_path: Path) -> None:
    """A judge missing from a run that scores stops it, naming the role; ``--no-score`` and
    ``INSPECT_EVAL_NO_SCORE=true`` both run without judges; ``INSPECT_EVAL_MODEL_ROLE`` binds
    the judges like ``--model-role``; ``INSPECT_EVAL_SYSTEM_MESSAGE`` replaces the prompt
    like ``--system-message``. The plugin reads none of them itself: Inspect does."""
    task, model = "inspect_medreason/open_ended", "medreason/pipeline-check"
    # Each run's own variables only: a user's INSPECT_* settings must not leak in.
    clean = {k: v for k, v in os.environ.items() if not k.startswith("INSPECT_EVAL_")}

    def run(name: str, *args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], Any]:
        logs = tmp_path / name
        result = subprocess.run(
            [sys.executable, "-m", "inspect_ai", "eval", task, "--model", model, "--limit", "1",
             "--log-dir", str(logs), "--display", "plain", *args],
            capture_output=True, text=True, cwd=tmp_path, timeout=300, check=False,
            env={**clean, "NO_COLOR": "1", **env},
        )  # fmt: skip
        [log_file] = logs.glob("*.eval")
        return result, read_eval_log(str(log_file))

    result, log = run("missing", "--model-role", f"grader={model}")
    assert log.status == "error" and log.error is not None, result.stderr[-2000:]
    assert "'vision_grader' was not given" in log.error.message
    for name, args, env in (
        ("flag", ["--no-score", "--system-message", "Be brief."], {}),
        (
            "environment",
            [],
            {"INSPECT_EVAL_NO_SCORE": "true", "INSPECT_EVAL_SYSTEM_MESSAGE": "Be brief."},
        ),
    ):
        result, log = run(name, *args, **env)
        assert log.status == "success", result.stderr[-2000:]
        [sample] = log.samples or []
        assert not sample.scores and log.eval.model_generate_config.system_message == "Be brief."
        assert sample.metadata["system_prompt"] == RUN_SYSTEM_MESSAGE
    roles = {"INSPECT_EVAL_MODEL_ROLE": f"grader={model} vision_grader={model}"}
    result, log = run("roles", **roles)
    assert log.status == "success", result.stderr[-2000:]
    assert set(log.eval.model_roles or {}) == {"grader", "vision_grader"}
    [sample] = log.samples or []
    assert sample.scores and sample.metadata["system_prompt"] == "open_system"


def test_the_medreason_command_survives_a_real_log_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = tmp_path / "logs"
    run = inspect_cli(
        "eval",
        "inspect_medreason/mcq",
        "--model",
        "medreason/pipeline-check",
        "--log-dir",
        str(logs),
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    write_json(logs / "results.json", {"answers": []})  # an exported file beside the logs
    (logs / "broken.eval").write_bytes(b"PK\x03\x04 not really a zip")
    (logs / "notes.txt").write_text("my notes")
    other = inspect_cli(
        "eval",
        _other_task(tmp_path).name,
        "--model",
        "medreason/pipeline-check",
        "--log-dir",
        str(logs),
        cwd=tmp_path,
    )
    assert other.returncode == 0, other.stderr[-2000:]
    assert main(["leaderboard", str(logs), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "broken.eval: skipped, not a readable eval log" in captured.err
    assert "not a MedReason task" in captured.err and "Traceback" not in captured.err
    assert main(["export", str(logs), "--output", str(tmp_path / "r.json")]) == 0
    assert main(["judge-scores", str(logs), "--output", str(tmp_path / "j.json")]) == 0
    assert main(["leaderboard", str(logs / "notes.txt"), str(logs)]) == 0
    assert "notes.txt: skipped, not an eval log" in capsys.readouterr().err


def _other_task(tmp_path: Path) -> Path:
    path = tmp_path / "other_task.py"
    path.write_text(
        "from inspect_ai import Task, task\n"
        "from inspect_ai.dataset import Sample\n"
        "from inspect_ai.scorer import exact\n"
        "@task\n"
        "def other():\n"
        "    return Task(dataset=[Sample(input='hi', target='x')], scorer=exact())\n"
    )
    return path
