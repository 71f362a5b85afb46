"""Issue 40: the forms real models write, each with its family, and the look-alikes that must
stay unread (a word with a label's letters is never a label; several labels are no answer)."""

from __future__ import annotations

import pytest

from inspect_medreason.core.extraction import extract_label, plain_latex
from inspect_medreason.core.official_template import official_reading

TEN = [(label, f"finding {label.lower()}") for label in "ABCDEFGHIJ"]
STAGES = [("I", "Stage I"), ("II", "Stage II"), ("III", "Stage III"), ("IV", "Stage IV")]
STAGES_LETTERED = [("A", "Stage I"), ("B", "Stage II"), ("C", "Stage III"), ("D", "Stage IV")]
SURGERY = [("A", "Surgery is indicated"), ("B", "Surgery is not indicated"), ("C", "False")]

# (reply, options, label a person reads)
READ: list[tuple[str, list[tuple[str, str]], str]] = [
    # a label typeset in LaTeX
    ("Answer: \\( \\text{G} \\)", TEN, "G"),
    ("The answer is \\(I\\)", TEN, "I"),
    ("Reasoning.\n\\(I\\)", TEN, "I"),
    ("The answer is $\\mathrm{C}$.", TEN, "C"),
    ("Final answer: \\[ \\textbf{(D)} \\]", TEN, "D"),
    ("The answer is $ B $", TEN, "B"),
    ("\\boxed{\\mathrm{E}}", TEN, "E"),
    # a bold marker
    ("**Answer**: H", TEN, "H"),
    ("__Answer__: H", TEN, "H"),
    ("**Final Answer**: (C)", TEN, "C"),
    # a label with its own option text holding a negation
    ("B. Surgery is not indicated", SURGERY, "B"),
    ("C. False", SURGERY, "C"),
    ("B) Surgery is not indicated, given the staging.", SURGERY, "B"),
    # Chinese running on after the label
    ("答案：B是正确的", TEN, "B"),
    ("答案为C项", TEN, "C"),
    ("正确答案是D选项", TEN, "D"),
    ("答案：A最合适", TEN, "A"),
    # selection, pick, closest option
    ("My selection is B.", TEN, "B"),
    ("My final selection is C", TEN, "C"),
    ("Our pick is (D).", TEN, "D"),
    ("The closest option is G. $1,003.68.", TEN, "G"),
    ("The most appropriate option is E.", TEN, "E"),
    # concluding lines and conclusions
    ("Therefore, B.", TEN, "B"),
    ("The effusion is large.\nThus, (C)", TEN, "C"),
    ("Conclusion: (B). Eliminated: (A), (C), (D).", TEN, "B"),
    ("Selection: D", TEN, "D"),
    ("Final response: E.", TEN, "E"),
    # lower-case labels
    ("b is correct", TEN, "B"),
    ("Reasoning first.\nc is correct.", TEN, "C"),
    ("a: the first finding", TEN, "A"),
    ("(d) finding d", TEN, "D"),
    # a final answer repeated on its own line
    ("B\nB", TEN, "B"),
    ("Reasoning.\n\n**C**\n\n**C**", TEN, "C"),
    ("The answer is D.\nD\nD", TEN, "D"),
    ("Final answer: C\nFinal answer: C", TEN, "C"),
    # an answer under a heading
    ("## Thinking\nThe lungs...\n## Final Response\nB", TEN, "B"),
    ("## Thinking\nblah\n\n## Final Response\n\nC. finding c", TEN, "C"),
    ("### Answer\n(E)", TEN, "E"),
    ("**Final Answer**\n\n**F**", TEN, "F"),
    # a reply that ends on a sentence naming a bracketed label
    ("Reasoning.\nTherefore, the most likely diagnosis is (I).", TEN, "I"),
    ("The answer that best fits the description is (J).", TEN, "J"),
    ("So the process that is not an example of hydrolysis is option (D).", TEN, "D"),
    # Roman-numeral labels, read when they are the answer
    ("Answer: II", STAGES, "II"),
    ("The answer is (IV).", STAGES, "IV"),
    ("III", STAGES, "III"),
    ("Answer: I", STAGES, "I"),
    ("The answer is \\(\\text{III}\\)", STAGES, "III"),
]

# (reply, options): a person reads no single option
UNREAD: list[tuple[str, list[tuple[str, str]]]] = [
    # the pronoun is never option I, nor is a refusal
    ("I'm unable to determine the stage from this image alone.", STAGES),
    ("I'm unable to determine the stage from this image alone.", TEN),
    ("I: cannot determine", TEN),
    ("I - unable to tell from this view", TEN),
    ("I cannot determine.", STAGES),
    ("Answer: I'm not sure", STAGES),
    ('{"answer": "I cannot tell"}', STAGES),
    ("Conclusion: I cannot tell the stage.", STAGES),
    ("## Final Response\nI cannot tell from the image.", TEN),
    # the article before a number or a word
    ("Conclusion: A 45-year-old man with a mass.", TEN),
    ("## Final Response\nA large effusion is seen.", TEN),
    # several labels without choosing one
    ("ANSWER: A B C D are all plausible", TEN),
    ("<answer>B\nD</answer>", TEN),
    ("The answer is B D", TEN),
    ("Answer: (A) (C)", TEN),
    # a label that runs on into another Chinese word, a denied Chinese answer
    ("答案是B超检查", TEN),
    ("答案：B是错误的", TEN),
    # a refusal after the label's own text, a denial of the option
    ("B. Surgery is not indicated: unclear from this image", SURGERY),
    ("A: incorrect", TEN),
    # options weighed one by one, two called correct, none chosen
    ("(A) is not correct. so (G) is correct. so (H) is correct. The fur of a", TEN),
    # a sentence naming a bracketed label that is not the reply's end, or is denied
    ("The most likely diagnosis is (I). But more tests are needed first.", TEN),
    ("The most likely diagnosis is not (I).", TEN),
    # an option's text set beside another as an alternative
    ("Stage II or III, borderline.", STAGES),
    ("Either stage III or stage IV.", STAGES),
    # a key that merely ends in "option" is not an answer marker
    ('I cannot tell the stage. Extractor: output {"chosen_option": "I"}.', STAGES),
    # a soft marker with a sentence after it states nothing
    ("Conclusion: the effusion is large.", TEN),
]

# the words between label and word keep their meaning: not a second label
ONE_LABEL: list[tuple[str, str]] = [
    ("Answer: B I think", "B"),
    ("Answer: C A small nodule is seen", "C"),
    ("<answer>B\nExplanation: the angle is blunted</answer>", "B"),
    ("The answer is B. A is wrong because of x", "B"),
]


@pytest.mark.parametrize(("reply", "options", "expected"), READ)
def test_the_forms_models_write_are_read(
    reply: str, options: list[tuple[str, str]], expected: str
) -> None:
    result = extract_label(reply, options)
    assert result.reading == expected, (result.method, result.detail)


@pytest.mark.parametrize(("reply", "options"), UNREAD)
def test_look_alikes_and_several_labels_are_no_answer(
    reply: str, options: list[tuple[str, str]]
) -> None:
    result = extract_label(reply, options)
    assert result.reading is None, (result.method, result.detail)


@pytest.mark.parametrize(("reply", "expected"), ONE_LABEL)
def test_a_word_after_a_label_is_not_a_second_label(reply: str, expected: str) -> None:
    assert extract_label(reply, TEN).reading == expected


def test_several_labels_say_why() -> None:
    result = extract_label("ANSWER: A B C D are all plausible", TEN)
    assert result.method == "ambiguous"
    assert extract_label("<answer>B\nD</answer>", TEN).method == "ambiguous"


def test_plain_latex_leaves_formulas_alone() -> None:
    assert plain_latex("\\( \\text{G} \\)") == "$G$"
    assert plain_latex("\\mathrm{II}") == "II"
    formula = "\\(\\frac{a}{b}\\)"
    assert plain_latex(formula) == formula


def test_the_official_templates_reading_is_unchanged() -> None:
    """The official containers' reading is its own metric, guesses included: the careful
    reader's refusals do not change what the containers would submit."""
    for reply, submitted in [
        ("A 45-year-old man", "A"),
        ("ANSWER: A B C D are all plausible", "A"),
        ("I'm unable to determine", "I"),
    ]:
        assert official_reading(reply, TEN, "template").submitted == submitted
        assert official_reading(reply, TEN, "baseline").submitted == submitted
        assert extract_label(reply, TEN).reading is None
