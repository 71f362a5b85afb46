"""Export-side submission checks and the validate command on the official docker-test data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import write_json

from inspect_medreason.analysis.export import (
    CaseSpec,
    submission_problems,
)
from inspect_medreason.cli import main


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
    """Export's check is the validate command's (official.validate_like_official), with its
    warnings as problems: an export writes the documented format or nothing."""
    document = predictions(
        mcq("m1", "B"),
        mcq("m1", "A"),  # duplicate
        mcq("m3", "b"),  # label case matters
        open_answer("o1", trace=" "),  # empty trace
        mcq("ghost", "A"),  # unknown case
        {"case_id": "", "task_type": "mcq", "answer": "A"},
        {**mcq("m4", "A"), "confidense": 0.5},  # a misspelt key
    )
    document["version"] = {"major": 2, "minor": 0}
    cases = [
        *CASES,
        CaseSpec("m2", "mcq", ("A", "B")),
        CaseSpec("m3", "mcq", ("A", "B")),
        CaseSpec("m4", "mcq", ("A", "B")),
    ]
    problems = "\n".join(submission_problems(document, cases))
    for expected in [
        "version: {'major': 2, 'minor': 0}, documented",
        "case 'm1': a second entry for this case",
        "case 'm3': answer 'b' is not one of ['A', 'B']",
        "case 'o1': reasoning_trace is required",
        "not in the cases file (ids compare unstripped): ['', 'ghost']",
        "answers[5]: case_id is required",
        "no answer for 1 case(s): ['m2']",
        "unknown key 'confidense' (did you mean 'confidence'?)",
    ]:
        assert expected in problems, expected
    wrong_type = submission_problems(predictions(open_answer("m1"), open_answer("o1")), CASES)
    assert wrong_type == ["case 'm1': task_type 'open', the case is 'mcq'"]
    empty = submission_problems(predictions(mcq("m1", ""), open_answer("o1")), CASES)
    assert any("answer must be a non-empty string" in p for p in empty)
    missing_version = predictions(mcq("m1", "B"), open_answer("o1"))
    del missing_version["version"]
    assert submission_problems(missing_version, CASES) == [
        "version: missing; the documented value is {'major': 1, 'minor': 0}"
    ]


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
