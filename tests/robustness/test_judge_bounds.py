"""A judge call is bounded by the smaller of the run's own timeouts and the judge's: a judge
that hangs is cut at the run's --timeout / --attempt-timeout (not its own 120 s), its
component is unscored with the reason, never a zero, and the bound is in the log."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

from conftest import scripted_output, write_json, write_png
from inspect_ai import eval
from inspect_ai.model import BatchConfig, GenerateConfig, ModelOutput, get_model
from utils.fault_server import FaultPlan, fault_server

from inspect_medreason.core.judges import (
    BATCH_BOUND,
    DEFAULT_JUDGE_TIMEOUT,
    JudgeSettings,
    judge_batch,
    judge_bounds,
)
from inspect_medreason.medreason.medreason import open_ended


def test_the_smaller_of_the_judges_and_the_runs_limits_applies() -> None:
    settings = JudgeSettings(timeout=120.0)
    run = GenerateConfig(timeout=15, attempt_timeout=3)
    bounds = judge_bounds(settings, GenerateConfig(), run)
    assert (bounds.timeout, bounds.attempt_timeout) == (15.0, 3.0)
    assert bounds.source == {"timeout": "run timeout", "attempt_timeout": "run attempt_timeout"}
    # the judge's own limit wins where it is the smaller, for the attempt too
    tight = judge_bounds(JudgeSettings(timeout=2.0), GenerateConfig(), run)
    assert (tight.timeout, tight.attempt_timeout) == (2.0, 2.0)
    assert tight.source == {"timeout": "judge_timeout", "attempt_timeout": "judge_timeout"}
    # a role's own bounds count as the judge's
    role = judge_bounds(settings, GenerateConfig(timeout=40, attempt_timeout=10), None)
    assert (role.timeout, role.attempt_timeout) == (40.0, 10.0)
    assert role.source == {"timeout": "role timeout", "attempt_timeout": "role attempt_timeout"}
    # nothing set anywhere: the judge's own limit for both
    assert judge_bounds(settings).as_record() == {
        "timeout": 120.0,
        "attempt_timeout": 120.0,
        "from": {"timeout": "judge_timeout", "attempt_timeout": "judge_timeout"},
    }
    # the config the judge is called with carries the reduced bounds
    config = settings.generate_config(bounds=bounds)
    assert (config.timeout, config.attempt_timeout) == (15, 3)


def test_a_batched_call_is_bounded_by_the_run_or_the_role_never_by_judge_timeout() -> None:
    settings = JudgeSettings(timeout=120.0)
    # nothing but judge_timeout: a batched call waits for its batch, bounded by its window
    free = judge_bounds(settings, GenerateConfig(), GenerateConfig(), batched=True)
    assert (free.timeout, free.attempt_timeout) == (None, None)
    assert free.source == {"timeout": BATCH_BOUND, "attempt_timeout": BATCH_BOUND}
    config = settings.generate_config(bounds=free, batch=True)
    assert (config.timeout, config.attempt_timeout, config.batch) == (None, None, True)
    # the run's own --timeout still bounds it, and a role's attempt bound its attempts
    run = judge_bounds(
        settings, GenerateConfig(attempt_timeout=600), GenerateConfig(timeout=7200), batched=True
    )
    assert (run.timeout, run.attempt_timeout) == (7200.0, 600.0)
    assert run.source == {"timeout": "run timeout", "attempt_timeout": "role attempt_timeout"}
    # the same settings unbatched: judge_timeout bounds the call
    assert judge_bounds(settings, GenerateConfig(), GenerateConfig()).timeout == 120.0
    assert settings.generate_config().batch is None


def test_a_roles_own_batch_wins_over_the_runs() -> None:
    quick = BatchConfig(size=10)
    assert judge_batch(GenerateConfig(batch=quick), GenerateConfig(batch=True)) == (quick, "role")
    assert judge_batch(GenerateConfig(batch=False), GenerateConfig(batch=True)) == (False, "role")
    assert judge_batch(GenerateConfig(), GenerateConfig(batch=500)) == (500, "run")
    assert judge_batch(GenerateConfig(), GenerateConfig()) == (None, "none")
    assert judge_batch(None, None) == (None, "none")


def _one_open_case(root: Path) -> Path:
    write_png(root / "img.png", colour=90)
    write_json(
        root / "cases.json",
        {
            "cases": [
                {
                    "case_id": "h1",
                    "task_type": "open",
                    "question": "What is shown?",
                    "image_path": "img.png",
                }
            ]
        },
    )
    write_json(
        root / "ground_truth.json",
        {"cases": [{"case_id": "h1", "task_type": "open", "answer": "A nodule."}]},
    )
    return root


def answer(*_: Any) -> ModelOutput:
    return scripted_output(
        json.dumps({"reasoning_trace": "A dense region is seen.", "answer": "A nodule."})
    )


def test_a_hanging_judge_is_cut_at_the_runs_attempt_timeout(tmp_path: Path) -> None:
    data = _one_open_case(tmp_path / "data")
    # Every judge request hangs for longer than the run allows (the server lets go at 40 s
    # at the latest, so a failure here cannot hang the suite).
    plan = FaultPlan(rate=1.0, kinds=("hang",), max_hang=40.0)
    with fault_server(plan) as url:
        # No provider retry: the one attempt is cut at --attempt-timeout.
        judge = get_model(
            "openai-api/hanging/judge",
            base_url=url,
            api_key="stub",
            config=GenerateConfig(max_retries=0),
            memoize=False,
        )
        started = time.monotonic()
        [log] = eval(
            open_ended(data=str(data), judge_retries=0),
            # named, not a Model object: as on the command line, the run's --timeout and
            # --attempt-timeout become the model under test's config
            model="mockllm/model",
            model_args={"custom_outputs": answer},
            model_roles={"grader": judge, "vision_grader": judge},
            timeout=15,
            attempt_timeout=3,
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
        elapsed = time.monotonic() - started
    assert log.status == "success", log.error
    assert plan.injected["hang"] == 3  # the three components' judges, each asked once
    # Inspect's own start-up is a few seconds; the judges' own limit is 120 s.
    assert elapsed < 20 < DEFAULT_JUDGE_TIMEOUT, elapsed
    [sample] = log.samples or []
    score = sample.scores["open_ended_scorer"]  # type: ignore[index]
    assert isinstance(score.value, dict) and score.metadata is not None
    for component in ("gt_final", "va_answer", "rvf_trace", "va_final"):
        assert math.isnan(score.value[component]), component  # unscored, never a zero
    for component in ("gt_final", "va_answer", "rvf_trace"):
        record = score.metadata["judges"][component]
        assert record["score"] is None and record["failure"], record
        assert "AttemptTimeout" in record["failure"] or "timed out" in record["failure"]
        assert record["cost"]["seconds"] < 6, record  # cut at the 3 s attempt bound
        assert record["bounds"] == {
            "timeout": 15.0,
            "attempt_timeout": 3.0,
            "from": {"timeout": "run timeout", "attempt_timeout": "run attempt_timeout"},
        }
    assert log.results is not None
    counted = next(score for score in log.results.scores if score.name == "gt_final")
    assert counted.unscored_samples == 1
