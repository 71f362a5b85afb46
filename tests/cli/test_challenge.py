"""Export-side submission checks and the validate command on the official docker-test data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import write_json

from inspect_medreason.cli import main
from inspect_medreason.cli.challenge import (
    CaseSpec,
    submission_problems,
)


def predictions(*answers: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "t",
        "type": "Medical visual reasoning",
        "answers": list(answers),
        "version": {"major": 1, "minor": 0},
    }


def mcq(case_id: str, answer: str) -> dict[str, Any]:
    return {"case_id": case_id, "task_type": "mcq", "answer": answer, "reasoning_trace": "r"}


def open_answer(case_id: str, answer: str = "x", trace: str = "t") -> dict[str, Any]:
    return {"case_id": case_id, "task_type": "open", "answer": answer, "reasoning_trace": trace}


CASES = [CaseSpec("m1", "mcq", ("A", "B", "C")), CaseSpec("o1", "open")]


def test_valid_submission_has_no_problems() -> None:
    assert submission_problems(predictions(mcq("m1", "B"), open_answer("o1")), CASES) == []


def test_every_submission_problem_is_listed() -> None:
    document = predictions(
        mcq("m1", "b"),  # label case matters
        mcq("m1", "B"),  # duplicate
        open_answer("o1", trace=" "),  # empty trace
        mcq("ghost", "A"),  # unknown case
        {"case_id": "", "task_type": "mcq", "answer": "A"},
    )
    document["version"] = {"major": 2, "minor": 0}
    problems = "\n".join(submission_problems(document, [*CASES, CaseSpec("m2", "mcq", ("A", "B"))]))
    for expected in [
        "version",
        "2 answers for one case",
        "'b' is not exactly one of the option labels",
        "reasoning_trace: required",
        "'ghost': case_id: not a case",
        "non-empty string",
        "'m2': no answer",
    ]:
        assert expected in problems, expected
    wrong_type = submission_problems(predictions(open_answer("m1"), open_answer("o1")), CASES)
    assert any("task_type: 'open' but the case is 'mcq'" in p for p in wrong_type)
    empty = submission_problems(predictions(mcq("m1", ""), open_answer("o1")), CASES)
    assert any("answer: must be a non-empty string" in p for p in empty)


def test_validate_cli(
    official_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write_json(
        tmp_path / "r.json",
        predictions(mcq("q1", "A"), mcq("q2", "C"), mcq("q3", "B"), open_answer("o1")),
    )
    cases = str(official_dataset / "cases.json")
    assert main(["validate", str(good), "--cases", cases]) == 0
    assert "valid against the cases file: 4 answers" in capsys.readouterr().out
    bad = write_json(
        tmp_path / "bad.json", predictions(mcq("q1", "D"), open_answer("o1", trace=""))
    )
    assert main(["validate", str(bad), "--cases", cases]) == 1
    err = capsys.readouterr().err
    assert "answer 'D' is not one of ['A', 'B', 'C']" in err
    assert "reasoning_trace is required" in err
    assert "no answer for 2 case(s): ['q2', 'q3']" in err
