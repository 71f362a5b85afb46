"""CMB-Exam and CMB-Clin on small local files in their published schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import run_with_grader, scripted_output, user_text, write_json
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ModelOutput
from utils.published_schemas import CMB_CLIN_CASE, OPTIONS, exam_row

from inspect_medreason.cmb.cmb import cmb_clin, cmb_exam
from inspect_medreason.cmb.scorer import extract_cmb_safe, extract_cmb_upstream, parse_clin


@pytest.mark.parametrize(
    ("reply", "multi", "upstream", "safe"),
    [
        ("答案是D。", False, "D", "D"),
        ("该患者需做CT检查，答案：D", False, "D", "D"),
        ("需要做CT和DNA检测。", False, "C", ""),  # upstream reads letters out of "CT"
        ("C和D都有可能。", False, "C", ""),  # upstream answers C when the model discussed C and D
        ("正确选项为ABD", True, "ABD", "ABD"),
        ("分析……所以答案是ACE。", True, "ACE", "ACE"),
        ("答案是A、C、E", True, "ACE", "ACE"),
        ("B", False, "B", "B"),
        # The stated answer ends where its letters end: the explanation adds nothing.
        ("Answer: CE，因为B项错误。", True, "ACEB", "CE"),
        ("答案：（A）（C）", True, "AC", "AC"),
        ("所以答案是ACE。\n不对，答案无法确定。", True, "ACE", ""),  # the last statement decides
        ("故选BD", True, "BD", "BD"),
        ("ACE", True, "ACE", "ACE"),
        ("answer: DNA test", True, "DA", ""),
        # invisible format characters are not read (robust-v3); the upstream mode is CMB's own
        ("答案是\u200bA\u200bC", True, "AC", "AC"),
    ],
)
def test_extraction_modes(reply: str, multi: bool, upstream: str, safe: str) -> None:
    assert extract_cmb_upstream(reply, multi) == upstream
    assert extract_cmb_safe(reply, OPTIONS, multi) == safe


def test_cmb_exam_scores_macro_and_modes(tmp_path: Path) -> None:
    rows = [
        exam_row(1, "医师考试", "执业医师", "D"),
        exam_row(2, "医师考试", "执业医师", "B"),
        exam_row(3, "医师考试", "规培结业", "A"),
        exam_row(4, "护理考试", "护士执业", "ACE", multi=True),
        exam_row(5, "护理考试", "护士执业", "BD", multi=True),
    ]
    write_json(tmp_path / "cmb" / "test.json", rows)
    replies = {
        "第1题": "答案是D。",
        "第2题": "需要做CT检查。",
        "第3题": "答案是A",
        "第4题": "答案是ECA。",
        "第5题": "答案是BD",
    }

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages[-1:])
        assert "以下是中国" in text and "不需要做任何分析和解释" in text
        return scripted_output(next(r for k, r in replies.items() if k in text))

    log = run_with_grader(cmb_exam(data=str(tmp_path / "cmb" / "test.json")), respond, tmp_path)
    assert log.results is not None
    m = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert m["accuracy"] == pytest.approx(4 / 5)  # q2 has no stated answer
    assert m["accuracy_other_mode"] == pytest.approx(4 / 5)  # upstream reads "CT" as C: still wrong
    assert m["mode_disagreement"] == pytest.approx(1 / 5)
    assert m["exam_class:执业医师"] == 0.5 and m["exam_class:规培结业"] == 1.0
    assert m["exam_type:医师考试"] == pytest.approx(0.75)  # mean of 0.5 and 1.0, not 2/3
    assert m["macro_all"] == pytest.approx((0.5 + 1.0 + 1.0) / 3)
    ordered = run_with_grader(
        cmb_exam(data=str(tmp_path / "cmb" / "test.json"), order_sensitive=True), respond, tmp_path
    )
    assert ordered.results is not None
    assert ordered.results.scores[0].metrics["accuracy"].value == pytest.approx(
        3 / 5
    )  # "ECA" != "ACE"


def test_cmb_exam_fewshot_is_seeded(tmp_path: Path) -> None:
    write_json(tmp_path / "test.json", [exam_row(1, "医师考试", "执业医师", "D")])
    val = [
        exam_row(100 + i, "医师考试", "执业医师", "ABCDE"[i % 5]) | {"explanation": f"解析{i}。"}
        for i in range(6)
    ]
    write_json(tmp_path / "val.json", val)
    seen: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        seen.append(messages)
        return scripted_output("所以答案是D")

    for _ in range(2):
        run_with_grader(
            cmb_exam(
                data=str(tmp_path / "test.json"),
                fewshot=3,
                fewshot_data=str(tmp_path / "val.json"),
                prompt="cot",
                seed=7,
            ),
            respond,
            tmp_path,
        )
    first, second = seen
    assert len(first) == 7 and [m.text for m in first] == [m.text for m in second]
    demos = [m for m in first if isinstance(m, ChatMessageAssistant)]
    assert len(demos) == 3 and all("所以答案是" in d.text and "解析" in d.text for d in demos)
    assert "请分析每个选项" in first[-1].text


def test_cmb_exam_rejects_bad_answers(tmp_path: Path) -> None:
    write_json(tmp_path / "t.json", [exam_row(1, "医师考试", "执业医师", "Z")])
    with pytest.raises(ValueError, match="not made of option labels"):
        cmb_exam(data=str(tmp_path / "t.json"))


@pytest.mark.parametrize(
    "option", ["{bad", "5", "[" * 100_000, "{" * 100_000, "{'B': 'x', 1: 'y', '1': None}"]
)
def test_cmb_exam_unreadable_options_are_a_row_problem(tmp_path: Path, option: str) -> None:
    """An ``option`` field that names no options (bad syntax, nesting past the parsers'
    limits; keys of mixed types, which Python cannot sort) is the row's problem, never a
    traceback."""
    row = {**exam_row(1, "医师考试", "执业医师", "A"), "option": option}
    write_json(tmp_path / "t.json", [row])
    with pytest.raises(ValueError, match="not made of option labels"):
        cmb_exam(data=str(tmp_path / "t.json"))


def test_cmb_clin_conversation_and_judging(tmp_path: Path) -> None:
    case = CMB_CLIN_CASE
    write_json(tmp_path / "clin.json", [case])
    requests: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        requests.append(list(messages))
        return scripted_output(f"回答{len(requests)}")

    def grade(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        if "回答2" in text.split("<candidate_answer id-")[1]:
            return scripted_output("I'd say fairly good overall.")  # never valid: unscored
        return scripted_output(
            "{‘fluency’: 4, ‘relevance’: 5, ‘completeness’: 3, ‘proficiency’: 4}"
        )

    log = run_with_grader(
        cmb_clin(data=str(tmp_path / "clin.json"), judge_retries=1), respond, tmp_path, grade
    )
    first, second = requests
    assert "病人,男,49岁" in first[0].text and "简述诊断" in first[0].text
    # The second question comes with the model's own first answer in the history.
    assert [m.role for m in second] == ["user", "assistant", "user"] and second[1].text == "回答1"
    assert log.samples is not None
    score = log.samples[0].scores["cmb_clin_scorer"]  # type: ignore[index]
    assert isinstance(score.value, dict)
    assert score.value["fluency"] == 4 and score.value["completeness"] == 3
    assert score.value["turns_unscored"] == 1.0
    turns = score.metadata["turns"]  # type: ignore[index]
    assert turns[1]["score"] is None and turns[1]["attempts"] == 2


def test_parse_clin() -> None:
    verdict, _ = parse_clin('{"fluency": 5, "relevance": 4, "completeness": 4, "proficiency": 3}')
    assert verdict is not None and verdict.parts["proficiency"] == 3
    assert (
        parse_clin('{"fluency": 6, "relevance": 4, "completeness": 4, "proficiency": 3}')[0] is None
    )
    assert "no JSON" in parse_clin("good")[1]
