"""Judges at batch prices: the run's --batch (or a role's own ``batch:``) reaches the judges
through a provider's batch API, here a local OpenAI-compatible stand-in
(tests/utils/batch_server.py); the judge timeout does not cut a batched call; a failed batch
leaves its components unscored and counted; the log records how each judge was called."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json, write_png
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import BatchConfig, GenerateConfig, Model, get_model
from utils.batch_server import BatchPlan, batch_server

from inspect_medreason.medreason.medreason import open_ended

COMPONENTS = ("gt_final", "va_answer", "rvf_trace")
# Small, quick batches: Inspect's defaults wait 15 s before sending and between checks.
QUICK = BatchConfig(size=4, send_delay=0.5, tick=0.5)


def _dataset(root: Path, cases: int) -> Path:
    """``cases`` open cases on one image, with their reference answers."""
    write_png(root / "img.png", colour=90)
    write_json(
        root / "cases.json",
        {
            "cases": [
                {"case_id": f"b{i}", "task_type": "open", "question": f"What is shown? [b{i}]",
                 "image_path": "img.png"}
                for i in range(cases)
            ]
        },
    )  # fmt: skip
    write_json(
        root / "ground_truth.json",
        {"cases": [{"case_id": f"b{i}", "task_type": "open", "answer": "A nodule."} for i in range(cases)]},
    )  # fmt: skip
    return root


def judge(url: str, config: GenerateConfig | None = None) -> Model:
    # Inspect's openai/ provider is the one with a batcher (openai-api/ has none); chat
    # completions, as a generic OpenAI-compatible batch endpoint serves them.
    return get_model(
        "openai/judge",
        base_url=url,
        api_key="stand-in",
        responses_api=False,
        config=config or GenerateConfig(max_retries=0),
        memoize=False,
    )


def run(data: Path, roles: dict[str, Model], folder: Path, **options: Any) -> EvalLog:
    [log] = eval(
        # judge_timeout far below the batch's turnaround: it must not cut a batched call
        open_ended(data=str(data), judge_timeout=1, judge_retries=0, judge_cache=False),
        model="medreason/pipeline-check",
        model_roles=roles,
        display="none",
        log_dir=str(folder),
        max_connections=16,
        **options,
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    return log


def judge_records(log: EvalLog) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for sample in log.samples or []:
        score = sample.scores["open_ended_scorer"]  # type: ignore[index]
        assert score.metadata is not None
        for component in COMPONENTS:
            record = score.metadata["judges"][component]
            records.extend(record.get("panel") or [record])
    return records


@pytest.mark.parametrize("where", ["run", "role"])
def test_the_judges_follow_the_runs_or_the_roles_batch(tmp_path: Path, where: str) -> None:
    data = _dataset(tmp_path / "data", 4)
    plan = BatchPlan(complete_after=2.5)
    with batch_server(plan) as url:
        if where == "run":
            roles = {role: judge(url) for role in ("grader", "vision_grader")}
            log = run(data, roles, tmp_path / "logs", batch=QUICK)
        else:
            config = GenerateConfig(max_retries=0, batch=QUICK)
            roles = {role: judge(url, config) for role in ("grader", "vision_grader")}
            log = run(data, roles, tmp_path / "logs")
    # Every judge call went through the batch API, none around it, and none was cut.
    assert plan.batches and sum(plan.batches) == 4 * 3 and plan.direct_calls == 0
    for sample in log.samples or []:
        value = sample.scores["open_ended_scorer"].value  # type: ignore[index]
        assert isinstance(value, dict) and all(value[c] == 3.0 for c in COMPONENTS)
    for record in judge_records(log):
        assert record["batch"] == {
            "batch": {"size": 4, "send_delay": 0.5, "tick": 0.5},
            "from": where,
        }
        assert (
            record["bounds"]["timeout"] is None
            and "batch window" in record["bounds"]["from"]["timeout"]
        )


def test_without_batch_the_judges_call_directly(tmp_path: Path) -> None:
    data = _dataset(tmp_path / "data", 2)
    plan = BatchPlan()
    with batch_server(plan) as url:
        log = run(data, {r: judge(url) for r in ("grader", "vision_grader")}, tmp_path / "logs")
    assert plan.direct_calls == 2 * 3 and not plan.batches
    assert all("batch" not in record for record in judge_records(log))


# A batch whose creation is refused is failed and then re-raised by Inspect's batch worker,
# which stops the eval by design (docs/judges_at_scale.md has the note and a reproduction):
# strict, so that this says so when Inspect changes.
REJECTED_CREATION = pytest.param(
    "reject_create",
    marks=pytest.mark.xfail(
        raises=Exception, strict=True, reason="Inspect 0.3.285 stops the eval (batch.py)"
    ),
)


@pytest.mark.parametrize("mode", ["fail", REJECTED_CREATION])
def test_a_failed_batch_leaves_its_components_unscored_and_counted(
    tmp_path: Path, mode: str
) -> None:
    data = _dataset(tmp_path / "data", 3)
    plan = BatchPlan(mode=mode, complete_after=0.5)
    with batch_server(plan) as url:
        roles = {role: judge(url) for role in ("grader", "vision_grader")}
        log = run(data, roles, tmp_path / "logs", batch=QUICK)
    for sample in log.samples or []:
        assert sample.error is None
        value = sample.scores["open_ended_scorer"].value  # type: ignore[index]
        assert isinstance(value, dict) and all(math.isnan(value[c]) for c in COMPONENTS)
    assert all(record["failure"].startswith("judge batch failed") for record in judge_records(log))
    assert log.results is not None
    # a result per component (Inspect's shape for a dictionary of metrics), each counting
    # its unscored cases
    by_name = {score.name: score for score in log.results.scores}
    assert all(by_name[c].unscored_samples == 3 for c in COMPONENTS), by_name
