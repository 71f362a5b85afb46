from __future__ import annotations

import sys
import unicodedata

import pytest

from inspect_medreason.core.extraction import (
    EXTRACTION_MODE,
    INVISIBLE_FORMAT_CHARACTERS,
    extract_label,
    parse_reply,
    readable_text,
)

OPTIONS = [
    ("A", "Pneumothorax"),
    ("B", "Pleural effusion"),
    ("C", "Consolidation"),
    ("D", "None of the above"),
]

# (reply, expected label or None)
TABLE: list[tuple[str, str | None]] = [
    # JSON as asked, with the variants models produce
    ('{"reasoning_trace": "Blunted costophrenic angle.", "answer": "B"}', "B"),
    ('```json\n{"reasoning_trace": "Air without lung markings.", "answer": "A"}\n```', "A"),
    ('Here is my answer:\n```\n{"rationale": "Air bronchograms.", "final_answer": "C"}\n```', "C"),
    ('Sure! {"reasoning_trace": "Meniscus sign.", "answer": "B"} Hope this helps.', "B"),
    ('{"reasoning_trace": "...", "answer": " B "}', "B"),
    ('{"reasoning_trace": "...", "answer": "(C)"}', "C"),
    ('{"reasoning_trace": "...", "answer": "B. Pleural effusion"}', "B"),
    ('{"reasoning_trace": "...", "answer": "Option D"}', "D"),
    ('{"reasoning_trace": "...", "answer": "Pleural effusion"}', "B"),
    ('{"reasoning_trace": "...", "answer": "b"}', "B"),
    ('{"reasoning_trace": "...", "answer": "None of the above"}', "D"),
    ('{"reasoning_trace": "The answer is C.", "answer": ""}', None),
    ('{"reasoning_trace": "...", "answer": "A, B"}', None),
    ('{"reasoning_trace": "...", "answer": "I cannot tell from this image"}', None),
    ('{"reasoning_trace": "...", "answer": "A large effusion"}', None),
    # ANSWER: forms (inspect_ai #5145: $B$ was read as no answer)
    ("The lung edge is visible.\nANSWER: $B$", "B"),
    ("ANSWER: C", "C"),
    ("Reasoning...\nAnswer: **D**", "D"),
    ("Final answer: (A)", "A"),
    ("answer: b", "B"),
    ("The answer is (C).", "C"),
    ("The correct answer is B because the meniscus sign is present.", "B"),
    ("The answer is A because no lung markings extend to the wall.", "A"),
    ("Therefore, the best option is C", "C"),
    ("The final answer is: \\boxed{B}", "B"),
    ("$\\boxed{\\text{C}}$", "C"),
    # Chinese
    ("根据影像表现，答案是B。", "B"),
    ("分析：肋膈角变钝。\n答案：C", "C"),
    ("正确选项为A", "A"),
    # The last stated answer wins over discussion
    ("At first glance the answer is A, but on closer look the answer is C.", "C"),
    ("Answer: A\nWait, the lung markings are present. Final answer: B", "B"),
    ("Option A is unlikely and option C is possible, but B is correct.", "B"),
    ("I would choose D.", "D"),
    # Emphasis and bare replies
    ("After reviewing the image, I pick the effusion.\n\n**B**", "B"),
    ("**C. Consolidation**", "C"),
    ("B", "B"),
    ("(D)", "D"),
    ("C) Consolidation", "C"),
    ("Consolidation", "C"),
    # Traps: the English article, several options, discussion without a conclusion
    ("A large pleural effusion is seen.", "B"),  # the article, then the option's text
    ("Answer: A large effusion obscures the base.", None),
    ("a", "A"),
    ("No pleural effusion is seen.", None),
    ("Answer: not consolidation", None),
    ("Both C and D seem plausible; the image is ambiguous.", None),
    ("Answer: A, B, and C", None),
    ("The answer is A and C.", None),
    ("I think none of the above options fully fit.", "D"),
    ("The image shows a pleural effusion.", "B"),
    ("", None),
    ("I'm unable to determine this from the image.", None),
    ("The answer is not clear from this image.", None),
]


@pytest.mark.parametrize(("reply", "expected"), TABLE)
def test_extraction_table(reply: str, expected: str | None) -> None:
    result = extract_label(reply, OPTIONS)
    assert result.reading == expected, (result.method, result.detail)


def test_table_is_large() -> None:
    assert len(TABLE) >= 40


def test_missing_answer_is_never_a_guess() -> None:
    result = extract_label("Both C and D seem plausible.", OPTIONS)
    assert result.reading is None and result.method == "unparsed"
    ambiguous = extract_label("Answer: A, B, and C", OPTIONS)
    assert ambiguous.method == "ambiguous"


def test_methods_are_reported() -> None:
    assert extract_label('{"answer": "B"}', OPTIONS).method == "json_answer_field"
    assert extract_label("ANSWER: B", OPTIONS).method == "answer_statement"
    assert extract_label("答案是B", OPTIONS).method == "chinese_statement"
    assert extract_label("**B**", OPTIONS).method == "reply_is_label"
    assert extract_label("B", OPTIONS).method == "reply_is_label"
    assert extract_label("Reasoning.\n**B**", OPTIONS).rule == "label_line"
    assert extract_label("Reasoning.\nC) Consolidation", OPTIONS).rule == "final_line"
    assert extract_label("<answer>B</answer>", OPTIONS).rule == "answer_tag"
    assert extract_label("Consolidation", OPTIONS).method == "reply_is_option_text"
    assert extract_label("It is consolidation", OPTIONS).rule == "option_text"
    assert extract_label("Answer: E", OPTIONS).method == "invalid_label"
    assert extract_label("Answer: unknown", OPTIONS).method == "no_option"


def test_parse_reply_keeps_raw_fields() -> None:
    reply = parse_reply('```json\n{"rationale": "why", "final_answer": " C "}\n```')
    assert reply.json_found and reply.answer_field == " C " and reply.reasoning_trace == "why"
    assert not parse_reply("no json here").json_found


def test_none_of_the_above_is_not_a_label_list() -> None:
    three = OPTIONS[:3]
    assert extract_label("None of the above.", three).reading is None
    assert extract_label("Answer: none of the above", three).reading is None
    assert extract_label("None of the above", OPTIONS).reading == "D"


def test_labels_beyond_a_to_e() -> None:
    options = [(label, f"text {label}") for label in "ABCDEFG"]
    assert extract_label("ANSWER: G", options).reading == "G"
    assert extract_label("ANSWER: H", options).reading is None


# The final statement is authoritative: when it names no option, the reply has no answer,
# whatever an earlier statement or the reply's first word said.
FINAL_STATEMENT: list[tuple[str, str | None]] = [
    ("Answer: B\nOn reflection, the final answer is unknown.", None),
    ("Answer: C\nFinal answer: A or B", None),
    ("The answer is B.\n\\boxed{}", None),
    ("ANSWER: A\nANSWER: E", None),  # E is not an option here
    ("The answer is E.", None),
    ("(E)", None),
    ("<answer>B</answer> then again <answer>not sure</answer>", None),
    ("B is not my selection.", None),
    ("C would be wrong here; the lungs are clear.", None),
    ("At first B, but the final answer is C", "C"),
    ("ANSWER: C\nThis answer is consistent with the image.", "C"),
    ("this answer is consistent with an effusion\nANSWER: B", "B"),
    ("Answer: B and a small effusion", "B"),
    ("B\n\nExplanation: the meniscus sign.", "B"),  # a line that is only a label
    ("A. Pneumothorax\nB. Pleural effusion\nC. Consolidation", None),  # an echoed list
    ("The options are:\n(A)\n(B)\nI cannot decide.", None),
]

# What peers read, and this reader must too.
PEER_FORMS: list[tuple[str, str | None]] = [
    ("the answer is b because the costophrenic angle is blunted", "B"),
    ("Option b is correct", "B"),
    ("I choose c", "C"),
    ("I'd choose D.", "D"),
    ("<answer>A</answer> ... on reflection <answer>C</answer>", "C"),
    ("Reasoning: blunted angle.\n<answer> B", "B"),
    ("<answer></answer>", None),
    ("*B*", "B"),
    ("_C_", "C"),
    ("'D'", "D"),
    ("`A`", "A"),
    ("答案是（B）", "B"),
    ("答案：Ｃ", "C"),
    ("选D", "D"),
    ("肋膈角变钝，故选B", "B"),
    ("所以选B。", "B"),
    ("首选检查是胸片。故选A", "A"),
    ("选项C正确", "C"),
    ("Ｂ", "B"),
    ("答案是B超检查", None),  # B超 is B-mode ultrasound, not option B
    ("The answer is a bit unclear.", None),
    ("\\boxed{\\textbf{D}}", "D"),
    ("Final Answer: $\\boxed{A}$", "A"),
    ("answer is c", "C"),
    ("Final answer - D", "D"),
    ("Answer — B", "B"),
    ("An answer-based approach suggests B\nANSWER: B", "B"),
    ("**Answer:** B", "B"),
    ("Therefore, the answer is: **D. None of the above**", "D"),
    ("<think>maybe A</think>\nThe answer is C", "C"),
]

NINE_OPTIONS = [(label, f"finding {label.lower()}") for label in "ABCDEFGHIJ"]

# The pronoun "I" is never option I (as the article "a" is never option A).
PRONOUN: list[tuple[str, str | None]] = [
    ("I don't know", None),
    ("I think the image is inconclusive.", None),
    ("I’m not sure.", None),
    ('{"answer": "I don\'t know"}', None),
    # robust-v5 reads a hedged statement ("I think it is C", issue 31): C, never option I
    ('{"answer": "I think it is C"}', "C"),
    ('{"reasoning_trace": "...", "answer": "I"}', "I"),
    ("Answer: I", "I"),
    ("(I)", "I"),
    ("I", "I"),
    ("The answer is I because finding i is shown.", "I"),
]


@pytest.mark.parametrize(("reply", "expected"), FINAL_STATEMENT + PEER_FORMS)
def test_final_statement_and_peer_forms(reply: str, expected: str | None) -> None:
    result = extract_label(reply, OPTIONS)
    assert result.reading == expected, (result.method, result.detail)


@pytest.mark.parametrize(("reply", "expected"), PRONOUN)
def test_pronoun_i_is_not_option_i(reply: str, expected: str | None) -> None:
    result = extract_label(reply, NINE_OPTIONS)
    assert result.reading == expected, (result.method, result.detail)


def test_no_answer_says_why() -> None:
    invalid = extract_label("Answer: E", OPTIONS)
    assert invalid.method == "invalid_label" and "A/B/C/D" in invalid.detail
    assert extract_label("Answer: A or B", OPTIONS).method == "ambiguous"
    assert extract_label("Answer: B\n\\boxed{}", OPTIONS).method == "no_option"


def test_hostile_replies_end_in_no_answer() -> None:
    for reply in (
        "[" * 1000,
        '{"answer": ' + "[" * 5000 + "}",
        "{" * 10000,
        "x" * 2_000_000,
        "\x00\x01\x1b[31m",
        "\u2028B\u2029",
    ):
        result = extract_label(reply, OPTIONS)
        assert result.reading in {None, "B"}


def test_many_statements_stay_linear_to_read() -> None:
    for reply in (
        "<answer>" * 50_000,
        "The answer is A. " * 50_000,
        "答案是B " * 50_000,
        "\\boxed{" * 50_000,
        "I choose A " * 50_000,
    ):
        assert extract_label(reply, OPTIONS).reading in {None, "A", "B"}


def test_wrapper_runs_are_read_without_backtracking() -> None:
    """A markdown rule of asterisks or underscores is a line of wrappers around no label;
    the label-line pattern once split such runs in exponentially many ways (40 asterisks:
    9 s), so these lines would not finish."""
    for rule in ("*" * 200, "_" * 200, "*_" * 100, "(" * 200 + "B"):
        assert extract_label(f"Some findings.\n{rule}\n", OPTIONS).reading is None
    assert extract_label("Findings.\n" + "*" * 200 + "\n**B**", OPTIONS).reading == "B"


def test_extraction_mode_is_versioned() -> None:
    assert EXTRACTION_MODE == "robust-v11"


# Invisible format characters beside or inside an answer: read as if absent (robust-v3).
INVISIBLE: list[tuple[str, str | None]] = [
    ("Answer: B\u200b", "B"),
    ("\u200bB", "B"),
    ("\ufeffANSWER: C", "C"),
    ("Answer: \u202eB", "B"),
    ("Answer: \u2066D\u2069", "D"),
    ("The answer is \u200dA\u200d.", "A"),
    ('{"reasoning_trace": "x", "answer": "\u200bB\u200c"}', "B"),
    ('\ufeff{"reasoning_trace": "x", "answer": "C"}', "C"),
    ("Pleu\u00adral effusion", "B"),  # a soft hyphen inside the option's text
    ("Answer: A\u2060,\u2060B", None),  # still two labels
    ("\u200b\u200b\u200b", None),  # nothing but invisible characters: an empty reply
    ("Answer: \u0412", None),  # Cyrillic Ve looks like B but is not a label: never a guess
]


@pytest.mark.parametrize(("reply", "expected"), INVISIBLE)
def test_invisible_format_characters_are_not_read(reply: str, expected: str | None) -> None:
    result = extract_label(reply, OPTIONS)
    assert result.reading == expected, (result.method, result.detail)


def test_an_invisible_only_reply_is_empty() -> None:
    assert extract_label("\u200b\ufeff \u2060", OPTIONS).method == "empty"


def test_the_invisible_set_is_every_format_character_but_script_marks() -> None:
    removed = {
        chr(c) for c in range(sys.maxunicode + 1) if INVISIBLE_FORMAT_CHARACTERS.match(chr(c))
    }
    assert all(unicodedata.category(c) == "Cf" for c in removed)
    kept = {
        chr(c)
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) == "Cf" and chr(c) not in removed
    }
    # Only marks that belong to a script's words or numbers stay.
    assert all(unicodedata.name(c, "").startswith(SCRIPT_MARK_PREFIXES) for c in kept), sorted(
        f"U+{ord(c):04X} {unicodedata.name(c, '?')}"
        for c in kept
        if not unicodedata.name(c, "").startswith(SCRIPT_MARK_PREFIXES)
    )
    assert readable_text("Ｂ\u200b") == "B"


SCRIPT_MARK_PREFIXES = (
    "ARABIC",
    "SYRIAC",
    "MONGOLIAN",
    "KAITHI",
    "EGYPTIAN HIEROGLYPH",
    "SHORTHAND FORMAT",
    "MUSICAL SYMBOL",
    "BRAHMI",
)


NUMBERED = [("1", "CT"), ("2", "MRI"), ("3", "Ultrasound")]
ROMAN = [("i", "CT"), ("ii", "MRI"), ("iii", "Ultrasound"), ("iv", "PET")]


@pytest.mark.parametrize(
    ("reply", "options", "expected"),
    [
        ('{"reasoning_trace": "x", "answer": "2"}', NUMBERED, "2"),
        ("ANSWER: 2", NUMBERED, "2"),
        ("The answer is 3.", NUMBERED, "3"),
        ("Findings.\n(2)", NUMBERED, "2"),
        ("2", NUMBERED, "2"),
        ("Answer: 2 mm", NUMBERED, None),  # a measurement, not the label
        ("ANSWER: 4", NUMBERED, None),  # no such option
        ("ANSWER: 1 or 2", NUMBERED, None),
        ('{"reasoning_trace": "x", "answer": "ii"}', ROMAN, "ii"),
        ("The final answer is (iii).", ROMAN, "iii"),
        ("ANSWER: IV", ROMAN, "iv"),  # case-insensitive when one label matches
        ("**ii**", ROMAN, "ii"),
        ("ANSWER: ii and iii", ROMAN, None),
        ("ANSWER: v", ROMAN, None),
        ("ANSWER: MRI", NUMBERED, "2"),  # an option's text, as for letters
        # labels are compared as the reply is read (NFKC): the numeral sign Ⅳ is "IV"
        ('{"reasoning_trace": "x", "answer": "Ⅳ"}', [("Ⅲ", "CT"), ("Ⅳ", "MRI")], "Ⅳ"),
        ("ANSWER: Ⅲ", [("Ⅲ", "CT"), ("Ⅳ", "MRI")], "Ⅲ"),
        # a label that is a word the answer-phrase rules would strip, or a Chinese "option A"
        (
            '{"reasoning_trace": "x", "answer": "Answer"}',
            [("Answer", "CT"), ("Other", "MRI")],
            "Answer",
        ),
        (
            '{"reasoning_trace": "x", "answer": "选项B"}',
            [("选项A", "CT"), ("选项B", "MRI")],
            "选项B",
        ),
    ],
)
def test_labels_that_are_not_letters_are_read(
    reply: str, options: list[tuple[str, str]], expected: str | None
) -> None:
    """cases.json may label options as it likes: a reply that states exactly such a label
    was no answer (robust-v3 read single letters only), now it is that label."""
    assert extract_label(reply, options).reading == expected


def test_letter_labels_are_read_as_before() -> None:
    """The label rule for other labels never applies to single-letter ones: a bare "a"
    after an answer phrase stays the letter rules' decision."""
    letters = [("A", "CT"), ("B", "MRI")]
    assert extract_label("The answer is a small nodule.", letters).reading is None
    assert extract_label("ANSWER: b", letters).reading == "B"
