"""Re-judging tells the truth: after ``inspect score`` with new judges (``--action
overwrite`` into a copy, ``--action append`` in place) the leaderboard gives a row per
judging, with the judges and lineage its cases record (the header still names the first
judges); judge-scores writes the judging named with ``--scorer`` or refuses naming the
choices; ``agreement`` compares two judgings of one run. And a run reduced several ways
over its epochs gives a row per reducer, or the one ``--reducer`` names."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import scripted_output, user_text
from inspect_ai import Epochs, eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from utils.openai_stub import openai_stub

from inspect_medreason.analysis.comparison import read_run
from inspect_medreason.cli import main
from inspect_medreason.core.loaders import sample_data_dir
from inspect_medreason.medreason.medreason import mcq, open_ended

SCORER = "inspect_medreason/open_ended_scorer"
TESTED = "mockllm/qwen2.5-vl-7b-instruct"
# The re-judging's judge, served by a local stand-in: of the tested model's family.
NEW_JUDGE = "openai-api/stub/qwen2.5-vl-72b-instruct"


def _first_judging(data: Path, log_dir: Path) -> EvalLog:
    """The open cases answered by the offline model and judged 1 on every component by a
    scripted judge of another family."""

    def judge(*_: Any) -> ModelOutput:
        return scripted_output(json.dumps({"score": 1, "rationale": "weak"}))

    def answer(*_: Any) -> ModelOutput:
        return scripted_output(json.dumps({"reasoning_trace": "A dense area.", "answer": "Mass."}))

    judge_model = get_model("mockllm/first-judge", custom_outputs=judge, memoize=False)
    [log] = eval(
        open_ended(data=str(data), judge_cache=False),
        model=get_model(TESTED, custom_outputs=answer),
        model_roles={"grader": judge_model, "vision_grader": judge_model},
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success", log.error
    return log


def _inspect_score(log: Path, *extra: str) -> None:
    """``inspect score`` in its own process, judging every component 2 by a local stand-in
    of the tested model's family."""

    def judge(request: dict[str, Any]) -> str:
        return json.dumps({"score": 2, "rationale": "fair"})

    with openai_stub("qwen2.5-vl-72b-instruct", judge) as (url, requests):
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("INSPECT_EVAL_")},
            "STUB_BASE_URL": url,
            "STUB_API_KEY": "stub",
        }
        _run_score(log, env, *extra)
        assert requests, "no judge was called"


def _run_score(log: Path, env: dict[str, str], *extra: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "score",
            str(log),
            "--scorer",
            SCORER,
            "--model-role",
            f"grader={NEW_JUDGE}",
            "--model-role",
            f"vision_grader={NEW_JUDGE}",
            "--display",
            "none",
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def _board(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[list[dict[str, Any]], str]:
    assert main(["leaderboard", *args, "--format", "json"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out)["rows"], captured.err


def test_each_judging_is_its_own_row_with_its_own_judges(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = Path(shutil.copytree(sample_data_dir(), tmp_path / "data"))
    original = _first_judging(data, tmp_path / "first")
    assert original.location is not None
    source = Path(original.location)

    # 1. --action overwrite into a copy: the copy keeps the run's task_id and header roles
    overwritten = tmp_path / "overwrite"
    overwritten.mkdir()
    shutil.copy(source, overwritten / "original.eval")
    copy = overwritten / "rejudged.eval"
    _inspect_score(
        overwritten / "original.eval", "--action", "overwrite", "--output-file", str(copy)
    )
    rejudged = read_eval_log(str(copy), header_only=True)
    assert rejudged.status == "success" and rejudged.eval.task_id == original.eval.task_id
    assert rejudged.eval.model_roles == original.eval.model_roles  # the header is stale

    rows, err = _board(capsys, str(overwritten))
    by_source = {row["sources"]["Open-ended GT"]: row for row in rows}
    assert set(by_source) == {str(overwritten / "original.eval"), str(copy)}, err
    assert by_source[str(overwritten / "original.eval")]["metrics"]["Open-ended GT"] == 1.0
    assert by_source[str(copy)]["metrics"]["Open-ended GT"] == 2.0
    assert by_source[str(copy)]["metrics"]["Open-ended VA"] == 2.0
    # lineage from the judges the cases record: the re-judging used the tested model
    assert not by_source[str(overwritten / "original.eval")]["judge_lineage"]
    assert any(NEW_JUDGE in warning for warning in by_source[str(copy)]["judge_lineage"])
    assert "judgings of its replies used" in err

    # agreement compares the two judgings of one run, raters named by the cases' judges
    report = tmp_path / "agreement.json"
    assert (
        main(
            [
                "agreement",
                str(overwritten / "original.eval"),
                str(copy),
                "--format",
                "json",
                "--output",
                str(report),
            ]
        )
        == 0
    )
    raters = json.dumps(json.loads(report.read_text()))
    assert "grader=mockllm/first-judge [original.eval]" in raters
    assert f"grader={NEW_JUDGE} [rejudged.eval]" in raters
    capsys.readouterr()

    # export reads only the replies: of two judgings of one run, the newest file, once
    results = tmp_path / "results.json"
    assert main(["export", str(overwritten), "--output", str(results), "--force"]) == 0
    answers = json.loads(results.read_text())["answers"]
    assert len(answers) == len({answer["case_id"] for answer in answers}) == 10
    assert "another judging of the same replies" in capsys.readouterr().err

    # judge-scores cannot write two judgings of one case: refused, naming both logs
    assert main(["judge-scores", str(overwritten), "--output", str(tmp_path / "both.json")]) != 0
    assert "judged several times" in capsys.readouterr().err

    # 2. --action append in place: two scores in one log, a row each, or the one named
    appended = tmp_path / "append" / "appended.eval"
    appended.parent.mkdir()
    shutil.copy(source, appended)
    _inspect_score(appended, "--action", "append", "--overwrite")
    logged = read_eval_log(str(appended), header_only=True).results
    assert logged is not None
    # a score per component for each judging, each naming its scorer
    names = [(s.scorer, s.name) for s in logged.scores]
    assert list(dict.fromkeys(scorer for scorer, _ in names)) == [
        "open_ended_scorer",
        "open_ended_scorer1",
    ]
    assert ("open_ended_scorer1", "gt_final") in names and (
        "open_ended_scorer",
        "gt_final",
    ) in names

    rows, err = _board(capsys, str(appended.parent))
    assert sorted(row["metrics"]["Open-ended GT"] for row in rows) == [1.0, 2.0], err
    assert "judged 2 times" in err and "--scorer" in err
    rejudged_row = next(row for row in rows if row["metrics"]["Open-ended GT"] == 2.0)
    assert "open_ended_scorer1" in rejudged_row["model"]
    assert any(NEW_JUDGE in warning for warning in rejudged_row["judge_lineage"])

    [row], _ = _board(capsys, str(appended.parent), "--scorer", "open_ended_scorer1")
    assert row["metrics"]["Open-ended GT"] == 2.0
    # the rank bootstrap resamples the cases of the judging each row shows
    assert set(read_run(appended).values["Open-ended GT"].values()) == {1.0}
    second = read_run(appended, {"open_ended_scorer": "open_ended_scorer1"})
    assert set(second.values["Open-ended GT"].values()) == {2.0}
    rows, _ = _board(capsys, str(appended.parent), "--bootstrap", "20")
    assert [row["rank_stability"]["position_shares"] for row in rows] == [{"1": 1.0}, {"2": 1.0}]
    refused, err = _board_or_none(capsys, str(appended.parent), "--scorer", "open_ended_scorer7")
    assert refused is None and "'open_ended_scorer', 'open_ended_scorer1'" in err

    # judge-scores: refused naming the choices, or the judging named
    out = tmp_path / "judge_scores.json"
    assert main(["judge-scores", str(appended), "--output", str(out)]) != 0
    assert "'open_ended_scorer', 'open_ended_scorer1'" in capsys.readouterr().err
    assert (
        main(
            ["judge-scores", str(appended), "--output", str(out), "--scorer", "open_ended_scorer1"]
        )
        == 0
    )
    scores = json.loads(out.read_text())["scores"]
    assert scores and {row["gt_final"] for row in scores} == {2}
    capsys.readouterr()

    # agreement on the one log: its two judgings are two raters
    assert (
        main(["agreement", str(appended), "--format", "json", "--output", str(report), "--force"])
        == 0
    )
    raters = json.dumps(json.loads(report.read_text()))
    assert "grader=mockllm/first-judge" in raters
    assert f"grader={NEW_JUDGE} [open_ended_scorer1]" in raters


def _board_or_none(
    capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[list[dict[str, Any]] | None, str]:
    code = main(["leaderboard", *args, "--format", "json"])
    captured = capsys.readouterr()
    return (json.loads(captured.out)["rows"] if code == 0 else None), captured.err


def test_each_epoch_reducer_is_its_own_row_or_the_one_named(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: Counter[str] = Counter()

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        question = user_text(messages)
        asked[question] += 1
        return scripted_output("ANSWER: A" if asked[question] == 1 else "ANSWER: B")

    [log] = eval(
        mcq(data=str(official_dataset)),
        model=get_model("mockllm/model", custom_outputs=respond),
        epochs=Epochs(2, ["mean", "max"]),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success"
    # q1 (A) and q3 (B) are right once in two epochs, q2 (C) never
    rows, err = _board(capsys, str(tmp_path / "logs"))
    by_reducer = {
        json.dumps(row["settings"]["common"]["epochs_reducer"]): row["metrics"]["MCQ Accuracy"]
        for row in rows
    }
    assert by_reducer == {'["mean"]': pytest.approx(1 / 3), '["max"]': pytest.approx(2 / 3)}
    assert "reduced 2 ways" in err and "--reducer" in err

    [row], _ = _board(capsys, str(tmp_path / "logs"), "--reducer", "max")
    assert row["metrics"]["MCQ Accuracy"] == pytest.approx(2 / 3)
    rows_none, err = _board_or_none(capsys, str(tmp_path / "logs"), "--reducer", "median")
    assert rows_none is None and "its epoch reducers: mean, max" in err
