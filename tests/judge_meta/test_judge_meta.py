"""The judge meta-evaluation with scripted judges whose answers are known."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conftest import scripted_output, user_text
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ModelOutput, get_model

from inspect_medreason.core.loaders import load_cases, sample_data_dir
from inspect_medreason.judge_meta.dataset import BANDS, build_probes, record_to_sample
from inspect_medreason.judge_meta.judge_meta import judge_meta
from inspect_medreason.judge_meta.scorer import judge_meta_scorer

PROBES = build_probes()
BAND_OF_CANDIDATE = {str(s.metadata["candidate"]): s.metadata["band"] for s in PROBES if s.metadata}


def candidate_of(messages: list[ChatMessage]) -> str:
    found = re.search(
        r"<candidate_(?:answer|reasoning) (id-\w+)>\n?(.*?)\n?</candidate_(?:answer|reasoning) \1>",
        user_text(messages),
        re.S,
    )
    assert found is not None, user_text(messages)[-400:]
    return found.group(2).strip()


def judge(pick: Any, by_request: bool = False) -> Any:
    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        key = user_text(messages) if by_request else candidate_of(messages)
        return scripted_output(json.dumps({"score": pick(key), "rationale": "x"}))

    return get_model("mockllm/model", custom_outputs=respond, memoize=False)


def run(tmp_path: Path, grader: Any, vision: Any) -> dict[str, float]:
    [log] = eval(
        judge_meta(),
        model_roles={"grader": grader, "vision_grader": vision},
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return metrics(log)


def metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {f"{s.name}/{k}": m.value for s in log.results.scores for k, m in s.metrics.items()}


def test_the_probe_set() -> None:
    assert len(PROBES) >= 60 and len(PROBES) == 10 * len(BANDS)
    kinds = {s.metadata["probe"] for s in PROBES if s.metadata}
    assert kinds == set(BANDS)
    case = next(c for c in load_cases(sample_data_dir()).cases if c.case_id == "demo_open_004")
    sample = record_to_sample("demo_open_004", "hallucination", "a claim", case, [])
    assert sample.metadata is not None and sample.metadata["component"] == "va"
    assert sample.metadata["band"] == [0, 1] and sample.target == "0-1"


def test_an_ideal_judge_scores_full_marks(tmp_path: Path) -> None:
    ideal = judge(lambda candidate: BAND_OF_CANDIDATE[candidate][0])
    values = run(tmp_path, ideal, ideal)
    assert values["within_band/mean"] == 1.0
    assert values["injection_resisted/mean"] == 1.0 and values["consistent/mean"] == 1.0


def test_a_judge_that_always_says_four_resists_no_injection(tmp_path: Path) -> None:
    always_four = judge(lambda _: 4)
    values = run(tmp_path, always_four, always_four)
    assert values["injection_resisted/mean"] == 0.0
    # only the probes whose band includes 4 are within it: paraphrase, verbose, faithful trace
    assert values["within_band/mean"] == 30 / 110


def test_an_inconsistent_judge_is_caught(tmp_path: Path) -> None:
    asked: dict[str, int] = {}

    def first_low_then_high(request: str) -> int:  # a different answer when asked again
        asked[request] = asked.get(request, 0) + 1
        return 0 if asked[request] == 1 else 4

    flaky = judge(first_low_then_high, by_request=True)
    values = run(tmp_path, flaky, flaky)
    assert values["consistent/mean"] == 0.0


def test_the_scorer_is_registered() -> None:
    assert callable(judge_meta_scorer())
