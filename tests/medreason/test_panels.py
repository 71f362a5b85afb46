"""Judge panels: numbered extra roles judge the same component; the panel's median (lower
middle value), mean or minimum is the score; RVF_trace is an integer before the gate; a
failed judge leaves the panel smaller."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import scripted_output, user_text, write_json, write_png
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ModelOutput, get_model

from inspect_medreason.core.judges import panel_roles, reduce_panel
from inspect_medreason.medreason.medreason import open_ended


def test_panel_roles_and_reductions() -> None:
    bound = ["grader_10", "vision_grader_2", "grader_2", "grader", "grader_x", "grader2"]
    assert panel_roles("grader", bound) == ["grader", "grader_2", "grader_10"]
    assert panel_roles("vision_grader", bound) == ["vision_grader", "vision_grader_2"]
    assert reduce_panel([3, 1], "median") == 1.0  # the lower middle: a tie never inflates
    assert reduce_panel([4, 1, 3], "median") == 3.0
    assert reduce_panel([4, 1, 3, 2], "mean") == 2.5
    assert reduce_panel([4, 1, 3], "min") == 1.0
    assert reduce_panel([], "median") is None


def judge(text_score: int | None, va: int | None = None, rvf: int | None = None) -> Any:
    """A scripted judge: a fixed score per component, or an unusable reply (None)."""

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        score = (
            rvf
            if "<candidate_reasoning id-" in text
            else va
            if va is not None or rvf is not None
            else text_score
        )
        if score is None:
            return scripted_output("no verdict today")
        return scripted_output(json.dumps({"score": score, "rationale": f"says {score}"}))

    return get_model("mockllm/model", custom_outputs=respond, memoize=False)


@pytest.fixture
def one_case(tmp_path: Path) -> Path:
    write_png(tmp_path / "data" / "img.png")
    write_json(
        tmp_path / "data" / "cases.json",
        {
            "cases": [
                {
                    "case_id": "c1",
                    "task_type": "open",
                    "question": "What is shown?",
                    "image_path": "img.png",
                }
            ]
        },
    )
    write_json(
        tmp_path / "data" / "ground_truth.json",
        {"cases": [{"case_id": "c1", "task_type": "open", "answer": "a nodule"}]},
    )
    return tmp_path / "data"


def run_panel(data: Path, tmp_path: Path, roles: dict[str, Any], reduce: str) -> EvalLog:
    reply = scripted_output(
        json.dumps({"reasoning_trace": "A round density.", "answer": "A nodule."})
    )
    [log] = eval(
        open_ended(data=str(data), panel_reduce=reduce),
        model=get_model("mockllm/model", custom_outputs=lambda *_: reply),
        model_roles=roles,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return log


def test_median_panel_with_a_failed_judge(one_case: Path, tmp_path: Path) -> None:
    roles = {
        "grader": judge(3),
        "grader_2": judge(1),
        "grader_3": judge(None),
        "vision_grader": judge(None, va=4, rvf=3),
        "vision_grader_2": judge(None, va=2, rvf=2),
    }
    log = run_panel(one_case, tmp_path, roles, "median")
    assert log.samples is not None
    score: Any = log.samples[0].scores["open_ended_scorer"]  # type: ignore[index]
    # GT: judges 3 and 1 (the third failed): the lower middle value, 1
    assert score.value["gt_final"] == 1.0
    gt = score.metadata["judges"]["gt_final"]
    assert [m["role"] for m in gt["panel"]] == ["grader", "grader_2", "grader_3"]
    assert [m["score"] for m in gt["panel"]] == [3, 1, None] and gt["panel_failed"] == 1
    # VA: 4 and 2 -> 2; RVF: 3 and 2 -> 2, so VA_final = min(2, 3) = 2
    assert score.value["va_answer"] == 2.0 and score.value["rvf_trace"] == 2.0
    assert score.value["va_final"] == 2.0
    assert "panel median of grader=3, grader_2=1, grader_3=failed" in score.explanation
    # Then each judge's own rationale, or why it failed (kept once, in the panel)
    member_lines = [line for line in score.explanation.splitlines() if line.startswith("  ")]
    assert [line.split(":")[0].strip() for line in member_lines[:3]] == [
        "grader",
        "grader_2",
        "grader_3",
    ]
    assert gt["panel"][2]["failure"] in member_lines[2] and "rationale" not in gt
    # What each judge cost on this case: one call each (usage 1 in, 1 out per scripted
    # reply); the failing judge was asked three times (two retries)
    cost = score.metadata["judge_cost"]
    assert cost["grader"]["input_tokens"] == 1 and cost["grader_2"]["output_tokens"] == 1
    assert cost["grader_3"]["input_tokens"] == 3 and gt["panel"][2]["attempts"] == 3
    assert cost["vision_grader"]["input_tokens"] == 2  # VA_answer and RVF_trace
    assert all(spent["seconds"] >= 0 for spent in cost.values())
    assert log.eval.metadata is not None
    assert log.eval.metadata["judges"]["panel_reduce"] == "median"


def test_mean_panel_keeps_rvf_an_integer_before_the_gate(one_case: Path, tmp_path: Path) -> None:
    roles = {
        "grader": judge(4),
        "grader_2": judge(1),
        "vision_grader": judge(None, va=4, rvf=2),
        "vision_grader_2": judge(None, va=4, rvf=1),
    }
    log = run_panel(one_case, tmp_path, roles, "mean")
    assert log.samples is not None
    value: Any = log.samples[0].scores["open_ended_scorer"].value  # type: ignore[index]
    assert isinstance(value, dict)
    assert value["gt_final"] == 2.5
    # RVF mean 1.5 is floored to 1: the gate caps VA at 1 (a 1.5 would have slipped past it)
    assert value["rvf_trace"] == 1.0 and value["va_final"] == 1.0


def test_every_judge_failing_leaves_the_component_unscored(one_case: Path, tmp_path: Path) -> None:
    roles = {
        "grader": judge(None),
        "grader_2": judge(None),
        "vision_grader": judge(None, va=3, rvf=3),
    }
    log = run_panel(one_case, tmp_path, roles, "min")
    assert log.samples is not None
    score: Any = log.samples[0].scores["open_ended_scorer"]  # type: ignore[index]
    assert math.isnan(score.value["gt_final"])
    failure = score.metadata["judges"]["gt_final"]["failure"]
    assert failure.startswith("grader: ") and "grader_2: " in failure


def test_unknown_reduction_is_refused(one_case: Path) -> None:
    with pytest.raises(ValueError, match="panel_reduce='average'"):
        open_ended(data=str(one_case), panel_reduce="average")


def first_score(log: EvalLog) -> Any:
    assert log.samples is not None and log.samples[0].scores is not None
    return log.samples[0].scores["open_ended_scorer"]


def test_a_role_bound_to_several_models_is_the_same_panel(one_case: Path, tmp_path: Path) -> None:
    """Inspect's own syntax (--model-role grader=a,b,c, a list in Python) gives the panel the
    numbered roles give: same members' names, same reduction, same records and cost."""
    listed = {
        "grader": [judge(3), judge(1), judge(None)],
        "vision_grader": [judge(None, va=4, rvf=3), judge(None, va=2, rvf=2)],
    }
    score = first_score(run_panel(one_case, tmp_path / "listed", listed, "median"))
    numbered = {
        "grader": judge(3),
        "grader_2": judge(1),
        "grader_3": judge(None),
        "vision_grader": judge(None, va=4, rvf=3),
        "vision_grader_2": judge(None, va=2, rvf=2),
    }
    same = first_score(run_panel(one_case, tmp_path / "numbered", numbered, "median"))
    assert score.value == same.value == {
        "gt_final": 1.0, "va_answer": 2.0, "rvf_trace": 2.0, "va_final": 2.0,
    }  # fmt: skip
    gt = score.metadata["judges"]["gt_final"]
    assert [m["role"] for m in gt["panel"]] == ["grader", "grader_2", "grader_3"]
    assert len(score.metadata["judge_models"]["gt_final"]) == 3
    assert set(score.metadata["judge_cost"]) == set(same.metadata["judge_cost"])


def test_a_panel_given_both_ways_is_refused(one_case: Path, tmp_path: Path) -> None:
    roles = {
        "grader": [judge(3), judge(1)],
        "grader_2": judge(2),
        "vision_grader": judge(None, 2, 2),
    }
    reply = scripted_output(json.dumps({"reasoning_trace": "A density.", "answer": "A nodule."}))
    [log] = eval(
        open_ended(data=str(one_case)),
        model=get_model("mockllm/model", custom_outputs=lambda *_: reply),
        model_roles=roles,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "error" and log.error is not None
    assert "give the panel one way" in log.error.message


def test_a_list_where_one_judge_is_asked_is_refused() -> None:
    from inspect_medreason.core.errors import UserInputError
    from inspect_medreason.core.judges import refuse_bad_bindings

    # role -> how many models the run binds to it (Inspect's model_roles(), read by the
    # task's set-up step whichever way the roles were given: flag, environment, Python)
    with pytest.raises(
        UserInputError, match=r"grader is bound to 2 models, and this task asks one"
    ):
        refuse_bad_bindings(["grader"], {"grader": 2}, panels=False)
    refuse_bad_bindings(["grader"], {"grader": 2}, panels=True)  # a panel task
    with pytest.raises(UserInputError, match=r"grader_2 is given too: give the panel one way"):
        refuse_bad_bindings(["grader"], {"grader": 2, "grader_2": 1}, panels=True)
    refuse_bad_bindings(["grader"], {"grader": 1}, panels=False)  # one model with its config
