"""The final committed yes/no of a reply (issue 51 item 4; issue 53's last bullet).

``read_committed_yes_no`` reads the yes or no a reply ends committed to: a later one
replaces an earlier one only through a self-correction ("No. Wait, actually yes."), two
opposite commitments with no correction between ("Yes.\\nNo.") are no answer, and a hedged
or withdrawn one is no answer. ``CLASS`` is what the rule was written from; the
``HELD_OUT_*`` sets were written after it, each measured once before any change made for
it (the counts are in vqa/README.md, "Self-corrections"), and kept here so that a later
change that moves any of them fails.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from conftest import scripted_output, user_text
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from inspect_ai.solver import generate

from inspect_medreason.core.short_answers import read_committed_yes_no, read_short_answer
from inspect_medreason.vqa.scorer import vqa_scorer

Case = tuple[str, str | None]

# What the rule was written from: the two replies and the classes it names.
CLASS: list[Case] = [
    ("ANSWER: No. Wait, actually yes.", "yes"),
    ("Yes.\nNo.", None),
    ("ANSWER: yes. On second thought, no.", "no"),
    ("答案：否。其实是的。", "yes"),
    ("答案：是。不对，应该是否。", "no"),
    ("ANSWER: Probably yes", None),
    ("ANSWER: Yes, probably not.", None),
    ("Yes and no", None),
    ("ANSWER: yes", "yes"),
    ("No, there is no fracture.", "no"),
    ("ANSWER: yes\nNo other abnormality is seen.", "yes"),
    ("<think>ANSWER: no. Wait, actually yes.</think>\nANSWER: no", "no"),
]

# Written after the rule; first run: 22 of 26 as a person reads them (one wrong label:
# "Yes, probably not." read yes), fixed in the rule; "No doubt: yes." stays unread.
HELD_OUT_1: list[Case] = [
    ("ANSWER: yes. Hmm, on reflection, no.", "no"),
    ("Answer: No\n\nCorrection: yes", "yes"),
    ("The answer is yes... actually no.", "no"),
    ("ANSWER: Yes — wait, no.", "no"),
    ("I'd say no. Hold on, yes.", "yes"),
    ("ANSWER: no\nOn second thought: yes, the effusion is there.", "yes"),
    ("ANSWER: No. I take that back, yes.", "yes"),
    ("Yes.\n\nNo.", None),
    ("No.\nYes.", None),
    ("ANSWER: yes\nNo.", None),
    ("ANSWER: Yes. No.", None),
    ("Maybe yes.", None),
    ("ANSWER: possibly no", None),
    ("ANSWER: No\nYes, I am confident.", None),
    ("答案：否。等等，其实是。", "yes"),
    ("答：是\n不对，否。", "no"),
    ("是。\n否。", None),
    ("答案：可能是。", None),
    ("答案是否。实际上，是的。", "yes"),
    ("ANSWER: yes\nThere is no fracture; no, nothing else.", "yes"),
    ("ANSWER: No. There is no evidence of pneumothorax.", "no"),
    ("ANSWER: **Yes**\n\nThe lesion is enhancing. No other findings.", "yes"),
    ("ANSWER: no. Actually, wait. Yes.", "yes"),
    ("Yes. Scratch that: no.", "no"),
]
# Second set, first run: 14 of 17 (two wrong labels, both a correction whose yes/no
# closes its sentence: "Hmm, no — yes."), fixed.
HELD_OUT_2: list[Case] = [
    ("ANSWER: No.\n\nWait — looking again at the left apex, yes.", "yes"),
    ("Final answer: yes. Upon further review, no.", "no"),
    ("ANSWER: YES\nActually, I change my answer to no.", "no"),
    ("yes\nno", None),
    ("ANSWER: no, wait, actually yes, the vessel is dilated.", "yes"),
    ("ANSWER: Yes\nI think it's probably not, though.", None),
    ("**Answer:** No.\nHmm, no — yes.", "yes"),
    ("The answer is no.\nNo, I'm sure.", "no"),
    ("ANSWER: yes. Perhaps.", "yes"),
    ("答案：否\n再想想，是的。", "yes"),
    ("否。\n等一下，否。", "no"),
    ("答案：是。也许不是。", None),
    ("ANSWER: no\n\nExplanation: yes, there is a nodule in the left lobe, but it is benign.", None),
    ("ANSWER: No, actually.", "no"),
    ("ANSWER: Likely yes.", None),
    ("No. Yes. No.", None),
    ("Actually yes.", "yes"),
]
# Third set, first run: 8 of 10 (two wrong labels: "I'd say yes." after "Hmm, actually"
# and "(wait, yes)"), fixed.
HELD_OUT_3: list[Case] = [
    ("ANSWER: yes\n\nReasoning: the aorta measures 5 cm, so yes.", "yes"),
    ("ANSWER: No\n\nHmm, actually, looking at the contrast, I'd say yes.", "yes"),
    ("Yes, there is a fracture. No, it is not displaced.", None),
    ("ANSWER: no (wait, yes)", "yes"),
    ("是的。不对。", None),
    ("ANSWER: Yes.\nNote: no contrast was given.", "yes"),
    ("ANSWER: No\nMy mistake — yes.", None),
    ("I'm not sure, maybe no.", None),
    ("答案：没有。其实有。", "yes"),
    ("ANSWER: yes; no mass effect.", "yes"),
]
# Fourth set, first run: 8 of 12. A wrong label ("Yes. Actually, I'm not sure." read yes)
# fixed: a correction that withdraws the answer. Left as they read (see the README):
# "On closer inspection, no." and "Yes\nYes" unread; "The answer could be yes if ..."
# after "ANSWER: no" reads no (a conditional, not a commitment).
HELD_OUT_4: list[Case] = [
    ("ANSWER: No, there is no pneumothorax.\nYes, the tube is in place.", None),
    ("ANSWER: yes\nActually no, sorry: yes.", "yes"),
    ("答案：是\n更正：否", "no"),
    ("答：否。实际上也可能是。", None),
    ("ANSWER: no!", "no"),
    ("ANSWER: No. Correction - the answer is yes.", "yes"),
    ("Yes. Actually, I'm not sure.", None),
    ("ANSWER: Yes, though no calcification is seen.", "yes"),
    ("No... yes.", None),
    ("ANSWER: no\nThe answer could be yes if the lesion enhances.", "no"),
]
# Read by no rule yet: no answer, never a wrong one.
UNREAD_THOUGH_A_PERSON_READS: list[Case] = [
    ("No doubt: yes.", None),
    ("ANSWER: Yes\n\nOn closer inspection, no.", None),
    ("Yes\nYes", None),
]

ALL = CLASS + HELD_OUT_1 + HELD_OUT_2 + HELD_OUT_3 + HELD_OUT_4 + UNREAD_THOUGH_A_PERSON_READS


@pytest.mark.parametrize(("reply", "expected"), ALL)
def test_the_final_committed_yes_or_no_is_read(reply: str, expected: str | None) -> None:
    said, reason = read_committed_yes_no(read_short_answer(reply), "default")
    assert said == expected, reason
    if expected is None:
        assert reason  # no answer always says why


def test_a_correction_to_a_word_the_dataset_does_not_count_is_no_answer() -> None:
    # VQA-RAD counts yes and no only: the corrected "true" is not a yes
    said, reason = read_committed_yes_no(
        read_short_answer("ANSWER: no. Actually, true."), "vqa_rad"
    )
    assert said is None and "vqa_rad" in reason


def test_a_reply_with_one_commitment_reads_as_before() -> None:
    for reply, expected in [("ANSWER: No.", "no"), ("The answer is yes.", "yes"), ("True.", None)]:
        read = read_short_answer(reply)
        assert read_committed_yes_no(read, "vqa_rad")[0] == expected


ROWS = [
    ("q-corrected", "yes", "ANSWER: No. Wait, actually yes."),
    ("q-both", "no", "Yes.\nNo."),
    ("q-chinese", "yes", "答案：否。其实是的。"),
    ("q-plain", "no", "ANSWER: no"),
]


def test_the_vqa_scorer_scores_the_final_commitment(tmp_path: Path) -> None:
    replies = {question: reply for question, _, reply in ROWS}

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        return scripted_output(replies[user_text(messages)])

    task = Task(
        dataset=MemoryDataset(
            [
                Sample(
                    input=question,
                    target=reference,
                    id=question,
                    metadata={"question": question, "answer_type": "closed"},
                )
                for question, reference, _ in ROWS
            ]
        ),
        solver=generate(),
        scorer=vqa_scorer(yes_no_vocabulary="slake"),
    )
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=respond),
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert log.samples
    scores = {str(s.id): s.scores["vqa_scorer"] for s in log.samples if s.scores}
    assert scores["q-corrected"].value == 1.0
    assert "self-correction" in str(scores["q-corrected"].explanation)
    assert scores["q-both"].value == 0.0
    assert "no correction between" in str(scores["q-both"].explanation)
    assert scores["q-chinese"].value == 1.0
    assert scores["q-plain"].value == 1.0


def test_a_long_reply_of_commitments_is_read_in_linear_time() -> None:
    # 225,000 characters of alternating commitments: a quadratic scan took minutes
    reply = "ANSWER: yes\n" + "No. Yes. " * 25_000
    started = time.monotonic()
    said, reason = read_committed_yes_no(read_short_answer(reply), "default")
    assert said is None and "no correction between" in reason
    assert time.monotonic() - started < 30
