"""Each custom metric on hand-built scores, against values worked out by hand; and what
Inspect's epoch reducers hand them."""

from __future__ import annotations

import copy
import json
import math
import pickle
import random
from typing import Any

import pytest
from inspect_ai.scorer import (
    SampleScore,
    Score,
    grouped,
    max_score,
    mean,
    mean_score,
    stderr,
)

from inspect_medreason.cmb.scorer import accuracy_other_mode, cmb_macro, mode_disagreement
from inspect_medreason.core.intervals import bootstrap_interval
from inspect_medreason.core.metrics import (
    parsed_accuracy,
    score_components,
    shared_score_metadata,
    strict_accuracy,
    unparsed,
)
from inspect_medreason.vqa.scorer import accuracy_closed, accuracy_open


def sample(
    value: float | dict[str, float],
    metadata: dict[str, Any] | None = None,
    **sample_metadata: Any,
) -> SampleScore:
    return SampleScore(
        score=Score(value=value, metadata=metadata or {}), sample_metadata=sample_metadata
    )


def compute(metric: Any, scores: list[SampleScore]) -> Any:
    return metric()(scores)


def mcq(correct: float, strict_correct: float, parsed: float) -> SampleScore:
    value = {"correct": correct, "strict_correct": strict_correct, "parsed": parsed}
    return SampleScore(score=Score(value=value))


MCQ_SCORES = [
    mcq(1.0, 1.0, 1.0),
    mcq(1.0, 0.0, 1.0),  # "B." read as B
    mcq(0.0, 0.0, 1.0),
    mcq(0.0, 0.0, 0.0),  # no answer
]


def test_mcq_metrics_by_hand() -> None:
    assert compute(strict_accuracy, MCQ_SCORES) == pytest.approx(1 / 4)
    assert compute(parsed_accuracy, MCQ_SCORES) == pytest.approx(2 / 3)
    assert compute(unparsed, MCQ_SCORES) == pytest.approx(1 / 4)
    assert math.isnan(compute(strict_accuracy, []))
    assert math.isnan(compute(parsed_accuracy, [mcq(0.0, 0.0, 0.0)]))  # nothing read


def test_vqa_subset_accuracies_by_hand() -> None:
    scores = [
        sample(1.0, answer_type="closed"),
        sample(0.0, answer_type="closed"),
        sample(1.0, answer_type="closed"),
        sample(0.0, answer_type="open"),
        sample(math.nan, answer_type="open"),
    ]
    assert compute(accuracy_closed, scores) == pytest.approx(2 / 3)
    assert compute(accuracy_open, scores) == 0.0
    assert math.isnan(compute(accuracy_open, scores[:3]))


def test_cmb_metrics_by_hand() -> None:
    scores = [
        sample(
            {"correct": 1.0, "other_mode_correct": 0.0, "modes_disagree": 1.0},
            None,
            exam_type="医师",
            exam_class="甲",
        ),
        sample(
            {"correct": 0.0, "other_mode_correct": 0.0, "modes_disagree": 0.0},
            None,
            exam_type="医师",
            exam_class="甲",
        ),
        sample(
            {"correct": 1.0, "other_mode_correct": 1.0, "modes_disagree": 0.0},
            None,
            exam_type="医师",
            exam_class="乙",
        ),
        sample(
            {"correct": 1.0, "other_mode_correct": 1.0, "modes_disagree": 0.0},
            None,
            exam_type="护理",
            exam_class="丙",
        ),
    ]
    assert compute(accuracy_other_mode, scores) == pytest.approx(2 / 4)
    assert compute(mode_disagreement, scores) == pytest.approx(1 / 4)
    macro = compute(cmb_macro, scores)
    # Subcategories: 甲 0.5, 乙 1.0, 丙 1.0; categories: 医师 (0.5 + 1.0) / 2, 护理 1.0.
    assert macro["exam_class:甲"] == 0.5 and macro["exam_type:医师"] == pytest.approx(0.75)
    assert macro["exam_type:护理"] == 1.0 and macro["macro_all"] == pytest.approx(2.5 / 3)


@pytest.mark.parametrize(
    ("reducer", "unread", "strict"), [(mean_score(), 0.5, 0.5), (max_score(), 0.0, 1.0)]
)
def test_epoch_reducers_reduce_every_mcq_number(reducer: Any, unread: float, strict: float) -> None:
    """Every number the MCQ metrics report is a key of the score's value, so Inspect's
    reducers reduce it (they keep only the first epoch's metadata)."""
    first = Score(value={"correct": 0.0, "strict_correct": 0.0, "parsed": 0.0})
    second = Score(value={"correct": 1.0, "strict_correct": 1.0, "parsed": 1.0})
    scores = [SampleScore(score=reducer([first, second]))]
    assert compute(unparsed, scores) == unread and compute(strict_accuracy, scores) == strict


def test_shared_score_metadata_is_shared_by_copies_and_read_only() -> None:
    """Inspect deep-copies a score once per key of a dictionary score at every metrics pass:
    the copies share the finished metadata instead, and its records cannot be changed
    through one of them."""
    judges = {"gt_final": {"score": 3, "raw_replies": ['{"score": 3}'], "role": "grader"}}
    metadata = shared_score_metadata({"answer": "A nodule.", "judges": judges, "roles": ["a"]})
    score = SampleScore(score=Score(value={"gt_final": 3.0}, metadata=metadata), sample_id="c1")
    copied = copy.deepcopy(score)
    assert copied.score.metadata is not None
    assert copied.score.metadata["judges"] is metadata["judges"]
    assert copied.score.metadata["judges"]["gt_final"] is judges["gt_final"]  # not copied
    assert copy.copy(metadata["judges"]) is metadata["judges"]
    with pytest.raises(TypeError, match="read-only"):
        copied.score.metadata["judges"]["gt_final"] = {}
    with pytest.raises(TypeError, match="read-only"):
        copied.score.metadata["judges"].update(gt_final={})
    with pytest.raises(TypeError, match="read-only"):
        copied.score.metadata["roles"].append("b")
    # Only the outer containers are wrapped: pydantic serialises the plain ones inside on
    # its fast path.
    assert type(metadata["judges"]["gt_final"]) is dict
    # In the log, and through pickle, they are plain JSON objects and arrays.
    assert json.loads(score.score.model_dump_json())["metadata"] == {
        "answer": "A nodule.",
        "judges": judges,
        "roles": ["a"],
    }
    unpickled = pickle.loads(pickle.dumps(metadata["judges"]))
    assert type(unpickled) is dict and unpickled == judges
    assert type(unpickled["gt_final"]["raw_replies"]) is list


def test_score_components_match_inspects_metrics_on_each_component() -> None:
    """``score_components`` reads each key of a dictionary score in place; on random scores it
    gives what Inspect's ``mean()``, ``stderr()`` and ``grouped(mean())`` give on that key
    alone (the scored cases), the image-clustered bootstrap of ``bootstrap_interval``, and
    counts a NaN or absent component as unscored."""
    rng = random.Random(7)
    for _ in range(40):
        scores, values = [], []
        for case in range(rng.randint(0, 30)):
            value: dict[str, float] = {"va_answer": float(rng.randint(0, 4))}
            roll = rng.random()
            if roll > 0.2:
                value["gt_final"] = float(rng.randint(0, 4))
            elif roll > 0.1:
                value["gt_final"] = math.nan
            metadata = {
                "modality": rng.choice(["CT", "MR", "X-ray"]),
                "image_paths": [f"img{rng.randint(0, 9)}.png"],
            }
            values.append(value)
            scores.append(
                SampleScore(
                    score=Score(value=value), sample_id=f"c{case}", sample_metadata=metadata
                )
            )
        metric: Any = score_components({"gt_final": ["modality"], "va_answer": []})
        result = metric(scores)
        assert result["va_answer_unscored"] == 0
        assert result["va_answer"] == pytest.approx(
            sum(v["va_answer"] for v in values) / len(values) if values else math.nan, nan_ok=True
        )
        assert not any(key.startswith("va_answer by ") for key in result)
        kept = [
            (s, v["gt_final"])
            for s, v in zip(scores, values, strict=True)
            if not math.isnan(v.get("gt_final", math.nan))
        ]
        alone = [
            SampleScore(
                score=Score(value=gt), sample_id=s.sample_id, sample_metadata=s.sample_metadata
            )
            for s, gt in kept
        ]
        assert result["gt_final_unscored"] == len(scores) - len(kept)
        if not alone:
            assert math.isnan(result["gt_final"]) and math.isnan(result["gt_final_lower"])
            continue
        inspect_mean: Any = mean()
        inspect_stderr: Any = stderr()
        assert result["gt_final"] == pytest.approx(inspect_mean(alone))
        assert result["gt_final_stderr"] == pytest.approx(inspect_stderr(alone))
        expected = bootstrap_interval(
            [gt for _, gt in kept],
            ["|".join(s.sample_metadata["image_paths"]) for s, _ in kept],  # type: ignore[index]
        )
        assert (result["gt_final_lower"], result["gt_final_upper"]) == (
            pytest.approx(expected.lower),
            pytest.approx(expected.upper),
        )
        by_modality: Any = grouped(mean(), "modality", all=False)
        by_group = by_modality(alone)
        assert {
            k.removeprefix("gt_final by modality:"): v
            for k, v in result.items()
            if k.startswith("gt_final by ")
        } == pytest.approx(by_group)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # inf - inf
def test_score_components_survive_values_an_edited_log_can_hold() -> None:
    """``inspect score`` recomputes metrics from a log's values, which an edit can make
    infinite or strings: a value comes out (NaN where it is undefined), never an exception."""
    values: list[Any] = [1.0, math.inf, "C", 3, None, math.nan]
    scores = [
        SampleScore(
            score=Score(value={"gt_final": v}),
            sample_id=i,
            sample_metadata={"modality": "CT"} if i else None,
        )
        for i, v in enumerate(values)
    ]
    metric: Any = score_components({"gt_final": ["modality"]})
    result = metric(scores)
    assert result["gt_final"] == math.inf and math.isnan(result["gt_final_stderr"])
    assert result["gt_final_unscored"] == 2  # None and NaN; "C" is Inspect's 1.0
    assert result["gt_final by modality:unknown"] == 1.0
