"""Cross-check with inspect_evals' own ``vqa_rad``: one set of recorded replies to the 451
test questions, scored by both harnesses, question by question.

The data is a stand-in for ``flaviagiammarino/vqa-rad``'s test split in its published
layout (``data/test-00000-of-00001-e5bc3d208bb4deeb.parquet``: ``image`` as an Image
feature with its bytes inside, ``question``, ``answer``; 451 rows), synthetic because
nothing is downloaded in tests: the schema and the size are the real ones, the questions,
answers and images are not (inspect_evals' loader also looks each question and image up in
its own tables, so its ``record_to_sample`` cannot read a stand-in; its scorer can). A
scripted model replays a fixed reply set in every shape a model answers in. Our side is a
real ``vqa_rad`` run; theirs is ``vqa_rad_graded_scorer`` applied to that run's samples with
``inspect_ai.score``. Both harnesses' open-question grader is one stand-in, a reader that
takes the answer a reply states and compares it with the reference (exactly, after
normalisation): what is measured is what each harness reads and sends, not a judge.

Every difference must be one vqa/README.md explains (``EXPECTED``), with the counts that
README reports; a change in either harness fails here.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import datasets
import pytest
from conftest import scripted_output
from inspect_ai import eval, score
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model
from PIL import Image

from inspect_medreason.core.short_answers import normalise_answer, read_short_answer
from inspect_medreason.vqa import medreason_vqa_rad

evals_scorer = pytest.importorskip("inspect_evals.vqa_rad.scorer")
CLOSED_ENDED_ANSWERS = pytest.importorskip("inspect_evals.vqa_rad.dataset").CLOSED_ENDED_ANSWERS

ROOT = Path(__file__).resolve().parents[2]
TEST_SHARD = "data/test-00000-of-00001-e5bc3d208bb4deeb.parquet"
ROWS = 451
OPEN_ANSWERS = ["ct", "axial", "liver", "right lobe", "x-ray", "brain", "2", "left", "mri"]

# Reply shapes: (name, reply from the reference and a wrong answer).
Shape = tuple[str, Callable[[str, str], str]]
CLOSED_SHAPES: list[Shape] = [
    ("answer line", lambda ref, _: f"ANSWER: {ref}"),
    ("answer line, capitalised", lambda ref, _: f"ANSWER: {ref.capitalize()}"),
    ("answer line, full stop", lambda ref, _: f"ANSWER: {ref.capitalize()}."),
    ("reasoning, then the answer line", lambda ref, _: f"The image was reviewed.\nANSWER: {ref}"),
    ("answer line, lower case label", lambda ref, _: f"answer: {ref}"),
    ("answer on the next line", lambda ref, _: f"ANSWER:\n{ref}"),
    ("bold answer", lambda ref, _: f"ANSWER: **{ref}**"),
    ("bare reply", lambda ref, _: ref.capitalize()),
    ("yes/no with an explanation", lambda ref, _: f"ANSWER: {ref.capitalize()}, as seen."),
    ("answer line, then a remark", lambda ref, _: f"ANSWER: {ref}\nThe finding is clear."),
    ("'the answer is'", lambda ref, _: f"The answer is {ref}."),
    ("JSON answer field", lambda ref, _: json.dumps({"answer": ref})),
    ("two answer lines, the last right", lambda ref, wrong: f"ANSWER: {wrong}\nANSWER: {ref}"),
    ("two answer lines, the first right", lambda ref, wrong: f"ANSWER: {ref}\nANSWER: {wrong}"),
    (
        "thinking block, then the answer",
        lambda ref, wrong: f"<think>ANSWER: {wrong}</think>\nANSWER: {ref}",
    ),
    ("wrong answer", lambda _, wrong: f"ANSWER: {wrong}"),
    ("both yes and no", lambda *_: "ANSWER: yes and no"),
    ("true for yes", lambda ref, _: f"ANSWER: {'true' if ref == 'yes' else 'false'}"),
    ("refusal", lambda *_: "I cannot tell from this image."),
    ("empty reply", lambda *_: ""),
    (
        "self-correction to the right answer",
        lambda ref, wrong: f"ANSWER: {wrong.capitalize()}. Wait, actually {ref}.",
    ),
    (
        "both, no correction between",
        lambda ref, wrong: f"{ref.capitalize()}.\n{wrong.capitalize()}.",
    ),
]
OPEN_SHAPES: list[Shape] = [
    ("answer line", lambda ref, _: f"ANSWER: {ref}"),
    ("answer line, capitalised, full stop", lambda ref, _: f"ANSWER: {ref.capitalize()}."),
    ("reasoning, then the answer line", lambda ref, _: f"Findings reviewed.\nANSWER: {ref}"),
    ("bare reply", lambda ref, _: ref),
    ("JSON answer field", lambda ref, _: json.dumps({"answer": ref})),
    ("two answer lines, the last right", lambda ref, wrong: f"ANSWER: {wrong}\nANSWER: {ref}"),
    ("wrong answer", lambda _, wrong: f"ANSWER: {wrong}"),
    ("refusal", lambda *_: "I cannot tell from this image."),
    ("empty reply", lambda *_: ""),
]

# (track, shape) -> (ours, theirs) for the shapes where the harnesses differ; every other
# shape agrees on every question. Explained in src/inspect_medreason/vqa/README.md.
EXPECTED: dict[tuple[str, str], tuple[str, str]] = {
    ("closed", "answer line, full stop"): ("C", "I"),
    ("closed", "bold answer"): ("C", "I"),
    ("closed", "bare reply"): ("C", "I"),
    ("closed", "yes/no with an explanation"): ("C", "I"),
    ("closed", "answer line, then a remark"): ("C", "I"),
    ("closed", "'the answer is'"): ("C", "I"),
    ("closed", "JSON answer field"): ("C", "I"),
    ("closed", "self-correction to the right answer"): ("C", "I"),
}


def stand_in_rows() -> list[dict[str, Any]]:
    """451 rows, closed (yes/no) and open alternating in blocks, each question its own."""
    rows = []
    for index in range(ROWS):
        closed = index % 5 < 3  # three closed for two open
        answer = ("yes" if index % 2 else "no") if closed else OPEN_ANSWERS[index % 9]
        rows.append({"question": f"question {index}: is the finding shown?", "answer": answer})
    return rows


def write_snapshot(root: Path) -> Path:
    rows = stand_in_rows()
    table = datasets.Dataset.from_dict(
        {
            "image": [Image.new("L", (8, 8), index % 256) for index in range(ROWS)],
            "question": [row["question"] for row in rows],
            "answer": [row["answer"] for row in rows],
        }
    ).cast_column("image", datasets.Image())
    (root / "data").mkdir(parents=True)
    table.to_parquet(str(root / TEST_SHARD))
    return root


def reply_plan() -> dict[str, tuple[str, str, str]]:
    """Question -> (track, shape, reply): the shapes of each track in turn."""
    plan: dict[str, tuple[str, str, str]] = {}
    counts: Counter[str] = Counter()
    for row in stand_in_rows():
        track = "closed" if row["answer"] in ("yes", "no") else "open"
        shapes = CLOSED_SHAPES if track == "closed" else OPEN_SHAPES
        name, make = shapes[counts[track] % len(shapes)]
        counts[track] += 1
        wrong = ("no" if row["answer"] == "yes" else "yes") if track == "closed" else "spleen"
        plan[row["question"]] = (track, name, make(row["answer"], wrong))
    return plan


def reader_verdict(predicted: str, reference: str) -> bool:
    """The open-question grader stand-in: the answer the text states, equal to the
    reference after normalisation."""
    stated = read_short_answer(predicted).text
    return bool(stated) and normalise_answer(stated) == normalise_answer(reference)


def _usage(output: ModelOutput) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def our_grader(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    text = messages[-1].text
    reference = text.split("Reference answer:\n", 1)[1].split("\n", 1)[0]
    candidate = re.search(r"<candidate_answer [^>]+>\n(.*)\n</candidate_answer", text, re.S)
    assert candidate is not None, text
    verdict = reader_verdict(candidate.group(1), reference)
    return scripted_output(json.dumps({"correct": verdict, "rationale": "read"}))


def their_grader(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    text = messages[-1].text
    reference = text.split("Gold target: ", 1)[1].split("\n", 1)[0]
    predicted = text.split("Predicted answer: ", 1)[1].rsplit("\n\nUse the provided tool", 1)[0]
    grade = "CORRECT" if reader_verdict(predicted, reference) else "INCORRECT"
    return _usage(ModelOutput.for_tool_call("grader", "submit", {"grade": grade}))


def run_both(tmp_path: Path) -> tuple[EvalLog, EvalLog]:
    data = write_snapshot(tmp_path / "vqa-rad")
    plan = reply_plan()

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        question = next(q for q in plan if q in messages[-1].text)
        return scripted_output(plan[question][2])

    [ours] = eval(
        medreason_vqa_rad(data=str(data)),
        model=get_model("mockllm/model", custom_outputs=respond),
        model_roles={
            "grader": get_model("mockllm/model", custom_outputs=our_grader, memoize=False)
        },
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert ours.status == "success", ours.error
    theirs = score(
        ours,
        evals_scorer.vqa_rad_graded_scorer(),
        model_roles={
            "grader": get_model("mockllm/model", custom_outputs=their_grader, memoize=False)
        },
        action="overwrite",
        display="none",
    )
    assert theirs.status == "success"
    return ours, theirs


def _ours(value: Any) -> str:
    return "U" if isinstance(value, float) and math.isnan(value) else ("C" if value == 1 else "I")


def _theirs(value: Any) -> str:
    return "U" if isinstance(value, float) and math.isnan(value) else str(value)


def test_both_harnesses_score_the_same_replies_alike_except_where_explained(
    tmp_path: Path,
) -> None:
    ours, theirs = run_both(tmp_path)
    plan = reply_plan()
    assert ours.samples is not None and theirs.samples is not None
    assert len(ours.samples) == ROWS
    theirs_by_id = {sample.id: sample for sample in theirs.samples}
    outcomes: dict[tuple[str, str], Counter[tuple[str, str]]] = {}
    agree = 0
    for sample in ours.samples:
        assert sample.metadata is not None and sample.scores is not None
        question = sample.metadata["question"]
        track, shape, _ = plan[question]
        # both harnesses call a question closed when its reference is yes or no
        reference = str(sample.target)
        their_type = "closed" if reference.strip().lower() in CLOSED_ENDED_ANSWERS else "open"
        assert sample.metadata["answer_type"] == their_type == track
        mine = _ours(sample.scores["vqa_scorer"].value)
        their_scores = theirs_by_id[sample.id].scores or {}
        other = _theirs(their_scores["vqa_rad_graded_scorer"].value)
        outcomes.setdefault((track, shape), Counter())[(mine, other)] += 1
        agree += mine == other
    for key, seen in outcomes.items():
        expected = EXPECTED.get(key)
        if expected is None:
            assert all(mine == other for mine, other in seen), (key, seen)
        else:
            assert set(seen) == {expected}, (key, seen)
    assert set(EXPECTED) <= set(outcomes)
    readme = (ROOT / "src" / "inspect_medreason" / "vqa" / "README.md").read_text("utf-8")
    assert f"agree on {agree} of {ROWS} questions" in readme, agree
    for (track, shape), seen in outcomes.items():
        if (track, shape) in EXPECTED:
            ours_says, theirs_says = EXPECTED[track, shape]
            count = sum(seen.values())
            assert f"| {track} | {shape} | {count} | {ours_says} | {theirs_says} |" in readme, (
                track,
                shape,
                count,
            )
