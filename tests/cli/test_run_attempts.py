"""Folders as Inspect leaves them: a run interrupted and resumed with ``inspect eval-retry``,
and an ``inspect eval-set`` over two models with a retried task. Every command reads each
run once (its latest complete attempt), says which log it used and which it left, and
refuses only two complete attempts of one run that differ."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval, eval_retry, eval_set
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from utils.openai_stub import StubError, message_parts, openai_stub

from inspect_medreason.cli import main
from inspect_medreason.medreason.medreason import medreason

OPEN_REPLY = '{"reasoning_trace": "A dense nodule is seen.", "answer": "nodule"}'
SERVERS = itertools.count()


@dataclass
class Stub:
    provider: str  # "openai-api/<service>": a service of its own per test, since Inspect
    # keeps a model by its name for the process and each test's server has another port
    flaky: set[str] = field(default_factory=set)

    def model(self, name: str) -> str:
        return f"{self.provider}/{name}"

    def judges(self) -> dict[str, str]:
        return {"grader": self.model("judge"), "vision_grader": self.model("judge")}


@pytest.fixture
def stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stub]:
    """A local OpenAI-compatible server for the models under test and the judges; a model
    named in ``flaky`` fails its first request for case q2 (HTTP 400, which Inspect does
    not retry), as an interrupted run does, and answers from then on."""
    service = f"stub{next(SERVERS)}"
    flaky: set[str] = set()
    failed: set[str] = set()

    def respond(body: dict[str, Any]) -> str:
        text, _ = message_parts(body)
        model = str(body.get("model"))
        if model == "judge":
            return json.dumps({"score": 3, "rationale": "r"})
        if model in flaky and "(q2)" in text and model not in failed:
            failed.add(model)
            raise StubError(400, "the run is interrupted here")
        return "ANSWER: A" if "Options:" in text else OPEN_REPLY

    with openai_stub("tested", respond) as (url, _):
        monkeypatch.setenv(f"{service.upper()}_BASE_URL", url)
        monkeypatch.setenv(f"{service.upper()}_API_KEY", "stub")
        yield Stub(f"openai-api/{service}", flaky)


def interrupted_then_resumed(data: Path, log_dir: Path, stub: Stub) -> tuple[EvalLog, EvalLog]:
    """A run that stops on an error at q2, resumed with eval_retry: two logs, one run."""
    stub.flaky.add("tested")
    [first] = eval(
        medreason(data=str(data), judge_cache=False),
        model=stub.model("tested"),
        model_roles=stub.judges(),
        display="none",
        log_dir=str(log_dir),
        max_samples=1,
        max_retries=0,
    )
    assert first.status == "error"
    [second] = eval_retry(first, display="none", log_dir=str(log_dir), max_retries=0)
    assert second.status == "success", second.error
    assert second.eval.task_id == first.eval.task_id
    return first, second


def test_every_command_reads_a_resumed_run_once(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], stub: Stub
) -> None:
    logs = tmp_path / "logs"
    first, second = interrupted_then_resumed(official_dataset, logs, stub)
    used, left = Path(second.location), Path(first.location)

    out = tmp_path / "results.json"
    assert main(["export", str(logs), "--output", str(out)]) == 0
    answers = json.loads(out.read_text())["answers"]
    assert sorted(a["case_id"] for a in answers) == ["o1", "q1", "q2", "q3"]  # each once
    err = capsys.readouterr().err
    assert f"{used}: used, its latest complete attempt" in err
    assert f"{left}: left out, an attempt of run {second.eval.task_id}" in err

    scores = tmp_path / "judge_scores.json"
    assert main(["judge-scores", str(logs), "--output", str(scores)]) == 0
    assert [row["case_id"] for row in json.loads(scores.read_text())["scores"]] == ["o1"]

    capsys.readouterr()
    assert main(["leaderboard", str(logs), "--format", "json"]) == 0
    printed = capsys.readouterr()
    board = json.loads(printed.out or printed.err)
    assert len(board["rows"]) == 1 and board["rows"][0]["sources"]["MCQ Accuracy"] == str(used)

    # a folder holding one run is a side of compare
    other = tmp_path / "other"
    shutil.copytree(logs, other)
    assert main(["compare", str(logs), str(other), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["shared_cases"] == 4


def test_two_complete_attempts_that_differ_are_refused_and_identical_ones_are_one(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], stub: Stub
) -> None:
    logs = tmp_path / "logs"
    _, second = interrupted_then_resumed(official_dataset, logs, stub)
    copy = logs / "copy-of-the-complete-attempt.eval"
    shutil.copy(second.location, copy)
    out = tmp_path / "results.json"
    assert main(["export", str(logs), "--output", str(out)]) == 0  # identical: read once
    assert len(json.loads(out.read_text())["answers"]) == 4
    assert "the same results, an earlier complete attempt" in capsys.readouterr().err
    # agreement: one run, not a run agreeing with a copy of itself as two raters
    assert main(["agreement", str(logs), "--format", "json"]) == 1
    err = capsys.readouterr().err
    assert "the same results, an earlier complete attempt" in err and "fewer than two raters" in err

    edited = read_eval_log(str(copy))
    assert edited.results is not None
    [mcq] = [score for score in edited.results.scores if score.name == "mcq_scorer"]
    mcq.metrics["accuracy"].value = 0.0  # a complete attempt with another result
    write_eval_log(edited, str(copy))
    out.unlink()
    assert main(["export", str(logs), "--output", str(out)]) == 1
    err = capsys.readouterr().err
    assert "several complete attempts that differ" in err and str(copy) in err
    assert not out.exists()
    assert main(["leaderboard", str(logs)]) == 1

    # the same metrics but another reply in one case: not the same results either
    edited = read_eval_log(str(second.location))
    assert edited.samples is not None
    [sample] = [s for s in edited.samples if s.id == "o1"]
    assert sample.output is not None
    edited_reply = '{"reasoning_trace": "t", "answer": "edited"}'
    sample.output.choices[0].message.content = edited_reply
    sample.output.completion = edited_reply
    write_eval_log(edited, str(copy))
    assert main(["export", str(logs), "--output", str(out)]) == 1
    assert "several complete attempts that differ" in capsys.readouterr().err
    # agreement reads a folder the same way
    assert main(["agreement", str(logs)]) == 1
    assert "several complete attempts that differ" in capsys.readouterr().err


def test_an_eval_set_over_two_models_with_a_retried_task(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], stub: Stub
) -> None:
    stub.flaky.add("alpha")  # its run fails once and is retried by the eval set
    logs = tmp_path / "set"
    success, results = eval_set(
        medreason(data=str(official_dataset), judge_cache=False),
        model=[stub.model("alpha"), stub.model("beta")],
        model_roles=stub.judges(),
        log_dir=str(logs),
        retry_attempts=2,
        retry_wait=0.1,
        max_retries=0,
        display="none",
        max_samples=1,
    )
    assert success and all(log.status == "success" for log in results)
    # the eval set retried alpha's failed task in place: one log per task remains
    assert len(list(logs.glob("*.eval"))) == 2
    assert main(["leaderboard", str(logs), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert sorted(row["model"] for row in rows) == [stub.model("alpha"), stub.model("beta")]
    out = tmp_path / "results.json"
    assert main(["export", str(logs), "--output", str(out)]) == 1  # one model's submission
    assert "pass --model with one of them" in capsys.readouterr().err and not out.exists()
    for name in ("alpha", "beta"):
        assert main(["export", str(logs), "--model", stub.model(name), "--output", str(out)]) == 0
        answers = json.loads(out.read_text())["answers"]
        assert sorted(a["case_id"] for a in answers) == ["o1", "q1", "q2", "q3"]  # once each
        assert {a["metadata"]["model"] for a in answers} == {stub.model(name)}
        out.unlink()
    scores = tmp_path / "judge_scores.json"
    command = ["judge-scores", str(logs), "--output", str(scores)]
    assert main([*command, "--model", stub.model("alpha")]) == 0
    assert [row["case_id"] for row in json.loads(scores.read_text())["scores"]] == ["o1"]
    by_model = {log.eval.model: Path(log.location) for log in results}
    alpha = by_model[stub.model("alpha")]
    capsys.readouterr()
    assert main(["compare", str(alpha), str(by_model[stub.model("beta")]), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["shared_cases"] == 4
