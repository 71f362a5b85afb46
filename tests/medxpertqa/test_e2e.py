"""MedXpertQA-MM end to end on mockllm, and its row adapter."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval
from utils.published_schemas import medxpertqa_folder

from inspect_medreason.core.loaders import Problem
from inspect_medreason.medxpertqa.dataset import question_without_choices, record_to_sample
from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm


def test_medxpertqa_runs_end_to_end_on_mockllm(tmp_path: Path) -> None:
    [log] = eval(
        medxpertqa_mm(data=str(medxpertqa_folder(tmp_path / "mx"))),
        model="mockllm/model",
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert log.results is not None
    metrics = log.results.scores[0].metrics
    # mockllm's default reply names no option: no answer, never a guessed label
    assert metrics["unparsed"].value == 1.0 and metrics["accuracy"].value == 0.0


def test_record_to_sample_strips_the_repeated_choices_and_refuses_a_bad_label() -> None:
    row = {
        "id": "MM-9",
        "question": "Which? Answer Choices: (A) a (B) b",
        "options": {"A": "Gout", "B": "RA", "C": "OA", "D": "SLE", "E": "PsA"},
        "label": "B",
    }
    sample = record_to_sample(row, "MM-9", [], True, "test.jsonl")
    assert not isinstance(sample, Problem)
    assert sample.target == "B" and sample.choices == ["Gout", "RA", "OA", "SLE", "PsA"]
    assert sample.metadata is not None and sample.metadata["question"] == "Which?"
    problem = record_to_sample({**row, "label": "F"}, "MM-9", [], True, "test.jsonl")
    assert isinstance(problem, Problem) and problem.field == "label"


def test_the_choices_marker_is_found_in_one_pass() -> None:
    """A question with a long run of spaces and no marker stays whole (the old pattern
    rescanned the run from each of its characters: quadratic)."""
    spaced = "Which?" + " " * 300_000 + "Look closely."
    assert question_without_choices(spaced) == spaced
    assert question_without_choices("Which?\n\nAnswer Choices: (A) a") == "Which?"
    assert question_without_choices("Answer Choices: (A) a") == ""
