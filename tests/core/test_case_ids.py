"""Case ids are checked at load by the official validator's reading (``str(value).strip()``):
white space at their ends, control characters (a NUL) and ids that are one case once
trimmed are refused, all named at once, before any model is called: in the challenge
layout and in Med-CMR's release (whose ``index`` becomes the case id)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import write_json, write_png
from utils.published_schemas import MED_CMR_OPEN, MED_CMR_OPEN_FILE, med_cmr_release

from inspect_medreason.core.loaders import DatasetError
from inspect_medreason.core.schema import case_id_problem
from inspect_medreason.med_cmr.med_cmr import med_cmr
from inspect_medreason.medreason.medreason import mcq


def mcq_case(case_id: str) -> dict[str, Any]:
    return {
        "case_id": case_id,
        "task_type": "mcq",
        "question": "Which side?",
        "image_path": "one.png",
        "options": ["Left", "Right"],
        "answer": "A",
    }


def test_the_validators_reading_of_a_case_id() -> None:
    assert case_id_problem("c1") is None and case_id_problem("case 7/b é") is None
    for bad in (" c1", "c1 ", "c1\n", "c\x001", "c\t1", "c\x7f"):
        assert case_id_problem(bad) is not None, bad


def test_untrimmed_nul_and_duplicate_ids_are_refused_before_any_model_call(
    tmp_path: Path,
) -> None:
    write_png(tmp_path / "one.png")
    cases = [mcq_case(i) for i in ("c1", " c1", "c\x002", "c3\t", "c4")]
    write_json(tmp_path / "cases.json", {"cases": cases})
    with pytest.raises(DatasetError) as caught:
        mcq(data=str(tmp_path))
    found = {(p.case_id, p.field, p.message.split(" (")[0]) for p in caught.value.problems}
    assert ("c1", "case_id", "duplicate case id") in found  # " c1" is "c1" once trimmed
    assert (" c1", "case_id", "duplicate case id") in found
    messages = {p.case_id: p.message for p in caught.value.problems if "duplicate" not in p.message}
    assert "trims (it reads 'c1')" in messages[" c1"]
    assert "U+0000" in messages["c\x002"]
    assert "U+0009" in messages["c3\t"]
    assert "c4" not in messages


def test_a_med_cmr_index_is_checked_the_same_way(tmp_path: Path) -> None:
    med_cmr_release(tmp_path)
    # an index "1 " is the MCQ record 1 once trimmed; " 9" has white space
    write_json(
        tmp_path / "dataset" / MED_CMR_OPEN_FILE,
        [{**MED_CMR_OPEN[0], "index": "1 "}, {**MED_CMR_OPEN[1], "index": " 9"}],
    )
    with pytest.raises(DatasetError) as caught:
        med_cmr(data=str(tmp_path))  # the task refuses at load: no sample, no model call
    found = {(p.case_id, p.message.split(" (")[0]) for p in caught.value.problems}
    assert ("1", "duplicate case id") in found and ("1 ", "duplicate case id") in found
    assert any(
        p.case_id == " 9" and "white space at its start or end" in p.message
        for p in caught.value.problems
    )
