"""Issue 51: precision first. Every reading names its rule; what only a less-proven rule reads
is unread (its tentative label shown, the extractor asked); and a label from an option review,
a hypothesis, a question the model wrote itself or a mention after the stated answer is never
the answer, in English and Chinese, in forms the rules were not written from."""

from __future__ import annotations

import pytest

from inspect_medreason.core.extraction import (
    LESS_PROVEN,
    NO_ANSWER_METHODS,
    PROVEN_RULES,
    extract_label,
)

FOUR = [("A", "Pneumothorax"), ("B", "Pleural effusion"), ("C", "Consolidation"),
        ("D", "Cardiomegaly")]  # fmt: skip
VACCINES = [("A", "Tdap vaccine"), ("B", "MMR vaccine"), ("C", "Varicella vaccine"),
            ("D", "Naloxone")]  # fmt: skip
CHINESE = [("A", "气胸"), ("B", "胸腔积液"), ("C", "肺实变"), ("D", "心脏增大")]
AREAS = [("A", "$144 \\mathrm{~cm}^{2}$"), ("B", "$72 \\mathrm{~cm}^{2}$"),
         ("C", "$2\\sqrt{3} : 1$"), ("D", "$36 \\mathrm{~cm}^{2}$")]  # fmt: skip
ESTROGEN = [("A", "Oral antibiotics"), ("B", "Surgery"), ("C", "Observation"),
            ("D", "Topical estrogen")]  # fmt: skip

# (reply, options): a person reads no answer, and no rule may read one, not even tentatively
NO_READING: list[tuple[str, list[tuple[str, str]]]] = [
    # an option review: the first reviewed label is not the answer, even cut off mid-review
    (
        "(A) **Tdap vaccine**: recommended in each pregnancy.\nIt protects the newborn.\n"
        "(B) **MMR vaccine**: live, contraindicated.\n(C) **Varicella vaccine**: live too.",
        VACCINES,
    ),
    (
        "(A) Pneumothorax: the pleural line would show.\n\nThis is absent here.\n\n"
        "(B) Pleural effusion: the angle is blunted.\n\n(C) Consolidation",
        FOUR,
    ),
    ("A. Pneumothorax - no pleural line.\nThat rules it out.\nB. Pleural effusion - maybe", FOUR),
    ("A．气胸：应可见脏层胸膜线。\n与影像不符。\nB．胸腔积液：肋膈角变钝。\nC．肺实变", CHINESE),
    # a hypothesis states what would follow, not the answer
    (
        "If the bar is smaller, then the answer is (A) Yes. If it is larger, then the answer "
        "is (B) No. It is not possible to determine.",
        [("A", "Yes"), ("B", "No")],
    ),
    ("Suppose the mass is benign; then the answer would be A. We cannot tell.", FOUR),
    ("Assuming it is an effusion, the answer is (B). The film is not diagnostic.", FOUR),
    ("如果是气胸，答案是A；如果是积液，答案是B。无法确定。", CHINESE),
    ("若肋膈角变钝，则选B。图像不清，无法判断。", CHINESE),
    # a question the model wrote itself, and answered
    (
        "I cannot see the image, so I cannot answer.\n\nQuestion: Which organ secretes "
        "insulin?\na. Liver\nb. Pancreas\nThe answer is b.",
        FOUR,
    ),
    ("Sorry, the image did not load.\n\nQ2. What is 2 + 2?\nAnswer: C", FOUR),
    ("无法根据图片判断。\n\n问题：胰岛素由哪个器官分泌？\nA. 肝 B. 胰\n答案是B。", CHINESE),
    # issue 59: an answer heading whose lines walk the options, verdict by verdict
    (
        "## Answer\n- A. Pneumothorax - incorrect\n- B. Pleural effusion - correct\n"
        "- C. Consolidation - incorrect",
        FOUR,
    ),
    ("**Final Answer:**\n(A) Pneumothorax ✗\n(B) Pleural effusion ✓\n(C) Consolidation ✗", FOUR),
    (
        "Answer:\nA) Tdap vaccine: not indicated\nB) MMR vaccine: indicated\nD) Naloxone: no",
        VACCINES,
    ),
    ("### Final answer\n\n**A.** Pneumothorax: no edge.\n**C.** Consolidation: none.", FOUR),
    ("答案：\nA．气胸：不符\nB．胸腔积液：符合", CHINESE),
    # several labels given as the answer, each with its text, or joined to an end token
    ("Therefore, among A through D, the answer is B, VCUG, and C, renal ultrasound.", FOUR),
    ("The answer is A (pneumothorax) or C (consolidation).", FOUR),
    ("【解析】两项都对。<eoe>\n【答案】B，C<eoa>", CHINESE),
    ("【答案】A、D<eoa>", CHINESE),
]


@pytest.mark.parametrize(("reply", "options"), NO_READING)
def test_no_rule_reads_a_review_a_hypothesis_or_an_invented_question(
    reply: str, options: list[tuple[str, str]]
) -> None:
    result = extract_label(reply, options)
    assert result.reading is None, (result.method, result.detail)
    assert result.method in NO_ANSWER_METHODS


# (reply, options, the label a proven rule reads)
PROVEN: list[tuple[str, list[tuple[str, str]], str]] = [
    # a mention after the stated answer never overrides it
    ("The answer is (B). Note (A) is a common trap, as is (D).", FOUR, "B"),
    ("Answer: C\nOption (A) is tempting, as is (D).", FOUR, "C"),
    ("The answer is D. Unlike (B), it explains the enlarged silhouette.", FOUR, "D"),
    ("答案是B。注意A是常见陷阱，D也是。", CHINESE, "B"),
    ("【答案】C。A和D都是干扰项。", CHINESE, "C"),
    # an answer heading with one option under it, the review after it apart
    (
        "Answer:\nB. Pleural effusion\n\nA. Pneumothorax: no edge.\nC. Consolidation: none.",
        FOUR,
        "B",
    ),
    # a review followed by a stated answer
    (
        "(A) Pneumothorax: no.\n(B) Pleural effusion: yes.\n(C) Consolidation: no.\nAnswer: B",
        FOUR,
        "B",
    ),
    ("A．气胸：不符。\nB．胸腔积液：符合。\n故选B。", CHINESE, "B"),
    # a hypothesis weighed, then an answer stated
    ("If it were a pneumothorax the lung edge would show. It does not.\nAnswer: B", FOUR, "B"),
    # a restated question is the question asked
    ("Question: Which finding is shown?\nAnswer: C", FOUR, "C"),
    # a label joined to an end token, a marker with 选项
    ("【解析】肋膈角变钝。<eoe>\n【答案】B<eoa>", CHINESE, "B"),
    ("【答案】: C <eoa>", CHINESE, "C"),
    ("答案选项为A。", CHINESE, "A"),
    ("最终答案选项是D", CHINESE, "D"),
    # an option's value in other LaTeX spacing
    ("The answer is 144 $\\mathrm{cm}^2$.", AREAS, "A"),
    ("Answer: $72\\ \\mathrm{cm}^{2}$", AREAS, "B"),
    # the label and its own option's text, which holds other letters
    ("Answer: (F) C, A, B, D", [(x, f"{x} first") for x in "ABCDE"] + [("F", "C, A, B, D")], "F"),
    # the whole reply is a label; a reply that opens with a label and its text
    ("**C**", FOUR, "C"),
    ("**(D) Naloxone**\nIt reverses the respiratory depression within minutes.", VACCINES, "D"),
    # the whole reply is one option's text
    ("Pleural effusion", FOUR, "B"),
]


@pytest.mark.parametrize(("reply", "options", "expected"), PROVEN)
def test_a_proven_rule_reads_the_stated_answer(
    reply: str, options: list[tuple[str, str]], expected: str
) -> None:
    result = extract_label(reply, options)
    assert result.label == expected, (result.method, result.detail)
    assert result.trust == "proven"
    assert result.method in PROVEN_RULES, result.method


# (reply, options, the label only a less-proven rule reads): unread, shown, left to the extractor
TENTATIVE: list[tuple[str, list[tuple[str, str]], str]] = [
    ("Therefore, (B). Note (A) is a common trap, as is (D).", FOUR, "B"),
    ("So it is C. Unlike (A), it fits, as does nothing else.", FOUR, "C"),
    ("\\boxed{\\textbf{(A)}\\ 2\\sqrt{3} : 1}", AREAS[2:] + AREAS[:2], "A"),
    (
        "The best treatment is listed last.\n(D) Topical estrogen\nIt restores the epithelium.",
        ESTROGEN,
        "D",
    ),
    (
        "The drug to give first:\n**(D) Naloxone**\nIt reverses the respiratory depression.",
        VACCINES,
        "D",
    ),
    ("The second figure matches, as shown in picture (A).", FOUR, "A"),
    ("Reasoning about the angles.\nTherefore, the most likely diagnosis is (C).", FOUR, "C"),
    ("<answer>B</answer>", FOUR, "B"),
    ("影像提示右侧胸腔积液。", CHINESE, "B"),
]


@pytest.mark.parametrize(("reply", "options", "expected"), TENTATIVE)
def test_what_only_a_less_proven_rule_reads_is_unread_and_shown(
    reply: str, options: list[tuple[str, str]], expected: str
) -> None:
    """Each row is read by a rule that was less-proven when it was written; a rule promoted
    since (docs/mcq.md, with its evidence) reads it, any other leaves it unread."""
    result = extract_label(reply, options)
    if result.rule in PROVEN_RULES:
        assert result.label == expected and result.trust == "proven", result.detail
        return
    assert result.label is None
    assert result.tentative_label == expected, (result.method, result.detail)
    assert result.method == LESS_PROVEN and LESS_PROVEN in NO_ANSWER_METHODS
    assert result.rule is not None and result.rule not in PROVEN_RULES
    assert result.rule in result.detail and expected in result.detail
    assert result.trust == "less-proven"


def test_some_forms_are_still_left_to_the_extractor() -> None:
    rules = {extract_label(reply, options).rule for reply, options, _ in TENTATIVE}
    assert rules - PROVEN_RULES, "every less-proven form was promoted: the gate is untested"


def test_a_less_proven_reading_against_a_proven_one_is_unread() -> None:
    result = extract_label("Answer: A\nOn reflection, the diagnosis is (B).", FOUR)
    assert result.label is None and result.tentative_label == "B"
    agreeing = extract_label("Answer: B\nOn reflection, the diagnosis is (B).", FOUR)
    assert agreeing.label == "B" and agreeing.trust == "proven"


def test_every_reading_names_its_rule() -> None:
    for reply in ("ANSWER: B", "<answer>B</answer>", "Answer: unknown", "B or C", "", "Hi"):
        result = extract_label(reply, FOUR)
        assert result.rule, reply
