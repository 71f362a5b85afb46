"""VQA-RAD, PathVQA and SLAKE on small local files in each dataset's published schema."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import datasets
import pytest
from conftest import run_with_grader, scripted_output, user_text, write_json, write_png
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ContentImage, ModelOutput
from PIL import Image
from utils.published_schemas import VQA_RAD_ROWS, vqa_rad_parquet

from inspect_medreason.core.short_answers import final_answer, is_yes_no_reference, yes_no
from inspect_medreason.vqa.scorer import closed_correct
from inspect_medreason.vqa.vqa import medreason_vqa_rad, path_vqa, slake


def scripted_vqa(replies: dict[str, str]) -> Any:
    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        for question, reply in replies.items():
            if question in text:
                return scripted_output(reply)
        raise AssertionError(text)

    return respond


def grader(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    text = user_text(messages)
    candidate = re.search(
        r"<candidate_answer id-\w+>\s*(.*?)\s*</candidate_answer id-\w+>", text, re.S
    )
    assert candidate is not None
    correct = candidate.group(1).lower() == "computed tomography" and "ct" in text
    return scripted_output(
        json.dumps({"correct": correct, "rationale": "CT is computed tomography"})
    )


def run(task: Any, respond: Any, tmp_path: Path, grade: Any = grader) -> EvalLog:
    return run_with_grader(task, respond, tmp_path, grade)


def metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    return {k: v.value for k, v in log.results.scores[0].metrics.items()}


def test_vqa_rad_closed_exact_open_graded(tmp_path: Path) -> None:
    data = vqa_rad_parquet(tmp_path / "vqa_rad")
    replies = {q: reply for q, _, reply in VQA_RAD_ROWS}
    log = run(medreason_vqa_rad(data=str(data)), scripted_vqa(replies), tmp_path)
    assert log.samples is not None
    scores = {
        s.metadata["question"]: s.scores["vqa_scorer"]
        for s in log.samples
        if s.metadata and s.scores
    }
    assert scores["is there a fracture?"].value == 1.0
    assert scores["is the heart enlarged?"].value == 0.0
    assert scores["what organ is shown?"].metadata["graded_by"] == "exact_match"  # type: ignore[index]
    assert scores["what modality is used?"].value == 1.0  # by the grader
    assert scores["where is the lesion?"].value == 0.0  # no final answer: wrong, not graded
    m = metrics(log)
    assert m["accuracy"] == pytest.approx(3 / 5)
    assert m["accuracy_closed"] == pytest.approx(1 / 2)
    assert m["accuracy_open"] == pytest.approx(2 / 3)
    first = log.samples[0]
    assert any(isinstance(c, ContentImage) for c in first.input[-1].content)  # type: ignore[union-attr]
    assert (log.eval.metadata or {})["data"]["kind"] == "local parquet"


def test_grader_failure_is_unscored(tmp_path: Path) -> None:
    data = vqa_rad_parquet(tmp_path / "vqa_rad")
    replies = {q: reply for q, _, reply in VQA_RAD_ROWS}
    log = run(
        medreason_vqa_rad(data=str(data), judge_retries=1),
        scripted_vqa(replies),
        tmp_path,
        grade=lambda *_: scripted_output("Looks right to me."),
    )
    assert log.samples is not None
    graded = next(
        s for s in log.samples if s.metadata and s.metadata["question"] == "what modality is used?"
    )
    score = graded.scores["vqa_scorer"]  # type: ignore[index]
    assert isinstance(score.value, float) and math.isnan(score.value)
    assert score.metadata["grader"]["attempts"] == 2  # type: ignore[index]
    # fracture right, heart wrong, organ right, lesion wrong (no answer): the unscored is left out
    assert metrics(log)["accuracy"] == pytest.approx(2 / 4)


def test_blind_control(tmp_path: Path) -> None:
    data = vqa_rad_parquet(tmp_path / "vqa_rad")
    seen: list[str] = []

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        assert not any(isinstance(c, ContentImage) for c in messages[-1].content)
        seen.append(user_text(messages))
        return scripted_output("ANSWER: yes")

    run(
        medreason_vqa_rad(data=str(data), images=False),
        respond,
        tmp_path,
        grade=lambda *_: scripted_output('{"correct": false, "rationale": "no"}'),
    )
    assert len(seen) == 5 and all("withheld" in text for text in seen)


def test_path_vqa_from_a_saved_datasets_folder(tmp_path: Path) -> None:
    dataset = datasets.Dataset.from_dict(
        {
            "image": [Image.new("RGB", (8, 8), (200, 100, 150))],
            "question": ["is this tissue malignant?"],
            "answer": ["no"],
        }
    ).cast_column("image", datasets.Image())
    datasets.DatasetDict({"test": dataset}).save_to_disk(str(tmp_path / "pathvqa"))
    log = run(
        path_vqa(data=str(tmp_path / "pathvqa")), lambda *_: scripted_output("ANSWER: No"), tmp_path
    )
    assert metrics(log)["accuracy"] == 1.0
    assert (log.eval.metadata or {})["data"]["kind"] == "datasets folder"


def test_slake_json_with_image_folder_language_and_groups(tmp_path: Path) -> None:
    write_png(tmp_path / "slake" / "imgs" / "xmlab1" / "source.jpg")
    rows = [
        {
            "img_name": "xmlab1/source.jpg",
            "question": "Is the lung healthy?",
            "answer": "No",
            "q_lang": "en",
            "answer_type": "CLOSED",
            "modality": "X-Ray",
            "content_type": "Abnormality",
            "location": "Lung",
            "qid": 1,
        },
        {
            "img_name": "xmlab1/source.jpg",
            "question": "肺部健康吗?",
            "answer": "否",
            "q_lang": "zh",
            "answer_type": "CLOSED",
            "modality": "X-Ray",
            "content_type": "Abnormality",
            "location": "Lung",
            "qid": 2,
        },
        {
            "img_name": "xmlab1/source.jpg",
            "question": "Which is bigger, liver or spleen?",
            "answer": "Liver",
            "q_lang": "en",
            "answer_type": "CLOSED",
            "modality": "CT",
            "content_type": "Size",
            "location": "Abdomen",
            "qid": 3,
        },
    ]
    write_json(tmp_path / "slake" / "test.json", rows)
    replies = {
        "Is the lung healthy?": "ANSWER: no",
        "肺部健康吗": "ANSWER: 没有",
        "Which is bigger": "ANSWER: the spleen",
    }
    english = run(
        slake(
            data=str(tmp_path / "slake" / "test.json"), image_root=str(tmp_path / "slake" / "imgs")
        ),
        scripted_vqa(replies),
        tmp_path,
    )
    m = metrics(english)
    assert english.samples is not None and len(english.samples) == 2
    assert m["accuracy"] == 0.5 and m["accuracy by modality:X-Ray"] == 1.0
    assert m["accuracy by modality:CT"] == 0.0
    assert m["accuracy by organ:Lung"] == 1.0 and m["accuracy by content_type:Size"] == 0.0
    both = run(
        slake(
            data=str(tmp_path / "slake" / "test.json"),
            language="all",
            image_root=str(tmp_path / "slake" / "imgs"),
        ),
        scripted_vqa(replies),
        tmp_path,
    )
    assert metrics(both)["accuracy"] == pytest.approx(2 / 3)  # 否 == 没有 (both "no")


def test_slake_missing_image_folder_is_a_clear_error(tmp_path: Path) -> None:
    write_json(
        tmp_path / "test.json",
        [
            {
                "img_name": "xmlab9/source.jpg",
                "question": "Q?",
                "answer": "Yes",
                "q_lang": "en",
                "answer_type": "CLOSED",
            }
        ],
    )
    with pytest.raises(ValueError, match=r"xmlab9/source\.jpg.*does not exist"):
        slake(data=str(tmp_path / "test.json"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes.", "yes"),
        ("yes, there is", "yes"),
        ("No", "no"),
        ("是", "yes"),
        ("否", "no"),
        ("没有", "no"),
        ("有", "yes"),
        ("left lung", None),
        ("", None),
        # both polarities at once are no answer
        ("yes and no", None),
        ("Yes or no.", None),
        ("yes/no", None),
        ("No, or yes", None),
        ("是或否", None),
        ("No, no effusion", "no"),
        # invisible format characters are not read
        ("yes\u200b", "yes"),
        ("\ufeffNo.", "no"),
        ("\u200b", None),
    ],
)
def test_yes_no(text: str, expected: str | None) -> None:
    assert yes_no(text) == expected


def test_final_answer_and_closed_rules() -> None:
    assert final_answer("blah\nAnswer: **Left kidney**") == ("Left kidney", "answer_line")
    assert final_answer('{"answer": "no"}') == ("no", "json_answer_field")
    assert final_answer("Liver") == ("Liver", "bare_reply")
    assert final_answer("Long\nreasoning without a conclusion") == ("", "unparsed")
    assert closed_correct("No.", "no") and not closed_correct("yes", "no")
    assert closed_correct("liver", "Liver") and not closed_correct("", "Liver")
    assert not closed_correct("yes and no", "yes") and not closed_correct("yes or no", "no")


def test_the_answer_line_stays_on_its_line_and_is_read_in_one_pass() -> None:
    """Blank lines and long runs of spaces once made the answer-line search quadratic (a
    reply of blank lines took seconds); the marker is matched within its line."""
    assert final_answer("\n" * 200_000) == ("", "unparsed")
    assert final_answer("Answer: x" + " " * 200_000 + "y\nmore") == (
        "x" + " " * 200_000 + "y",
        "answer_line",
    )
    assert final_answer("Answer:\nyes") == ("yes", "answer_line")  # the answer on the next line
    assert final_answer("  **Final answer:** left lung. \r\n") == ("left lung.", "answer_line")


@pytest.mark.parametrize(
    ("reference", "closed"),
    [("yes", True), ("No.", True), ("no fracture", False), ("present", False), ("true", False)],
)
def test_closed_means_a_yes_no_reference(reference: str, closed: bool) -> None:
    assert is_yes_no_reference(reference) is closed


def test_vqa_samples_carry_the_question_and_the_solver_prompts(tmp_path: Path) -> None:
    data = vqa_rad_parquet(tmp_path / "vqa_rad")
    seen: list[tuple[list[ChatMessage], Any]] = []

    def respond(messages: list[ChatMessage], _tools: Any, _choice: Any, config: Any) -> ModelOutput:
        seen.append((list(messages), config))
        return scripted_output("ANSWER: yes")

    log = run(medreason_vqa_rad(data=str(data)), respond, tmp_path)
    assert log.samples is not None
    first = log.samples[0]
    assert isinstance(first.input, list) and first.input[0].role == "user"
    assert first.input[0].text == VQA_RAD_ROWS[0][0]  # the case's question, not the prompt
    messages, _ = seen[0]
    assert messages[0].role == "system" and "ANSWER:" in user_text(messages)
