from __future__ import annotations

import json

from inspect_ai.model import ChatMessageSystem, ChatMessageUser

from inspect_medreason.cmb.scorer import parse_clin
from inspect_medreason.core.judges import (
    JudgeTemplates,
    grader_templates,
    parse_correctness,
    parse_judge_reply,
)
from inspect_medreason.core.offline_model import pipeline_check_reply


def reply(system: str, user: str) -> str:
    return pipeline_check_reply([ChatMessageSystem(content=system), ChatMessageUser(content=user)])


def test_answers_each_track_in_its_format() -> None:
    mcq = json.loads(reply("s", "Question: q\n\nOptions:\nA. x\nB. y\n"))
    assert mcq["answer"] == "A" and mcq["reasoning_trace"]
    open_ = json.loads(reply("s", "Question: describe"))
    assert open_["answer"] and open_["reasoning_trace"]


def test_every_grader_gets_a_reply_it_accepts() -> None:
    rubric = JudgeTemplates.load().system("va").text
    assert parse_judge_reply(reply(rubric, "grade"))[0] is not None
    correct = grader_templates("grader_correct").templates["grader_correct_system"].text
    assert parse_correctness(reply(correct, "grade"))[0] is not None
    clin = grader_templates("grader_clin", family="cmb").templates["grader_clin_system"].text
    assert parse_clin(reply(clin, "grade"))[0] is not None
