"""GEMeX end to end on mockllm, and its row adapter on a row in the published schema."""

from __future__ import annotations

import json
from pathlib import Path

from inspect_ai import eval
from utils.published_schemas import gemex_folder

from inspect_medreason.core.prompts import load_template
from inspect_medreason.gemex.dataset import record_to_sample
from inspect_medreason.gemex.gemex import gemex


def test_gemex_runs_end_to_end_on_mockllm(tmp_path: Path) -> None:
    data = gemex_folder(tmp_path / "gemex")
    [log] = eval(
        gemex(data=str(data)),
        model="mockllm/model",
        model_roles={"grader": "mockllm/model"},
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 4
    assert {s.metadata["question_type"] for s in log.samples} == {
        "closed",
        "single",
        "multi",
        "open",
    }


def test_record_to_sample_maps_a_multi_choice_row(tmp_path: Path) -> None:
    row = {
        "q_id": 3,
        "question": "Which findings?",
        "answer": ["A", "C"],
        "reason": "Both visible.",
        "choices": ["A: Effusion", "B: Pneumothorax", "C: Cardiomegaly"],
        "type": "abnormality",
        "visual_locations": [[10, 20, 60, 120]],
        "visual_regions": ["left lung"],
        "image_path": "files/img.jpg",
    }
    templates = (
        load_template("gemex_system", family="gemex"),
        load_template("gemex_user", family="gemex"),
    )
    sample = record_to_sample(row, "multi", "multi_3", [tmp_path / "img.jpg"], templates, 224, True)
    assert json.loads(str(sample.target)) == ["A", "C"]
    assert sample.choices == ["Effusion", "Pneumothorax", "Cardiomegaly"]
    assert sample.metadata is not None
    assert sample.metadata["reference_boxes"] == [[10.0, 20.0, 60.0, 120.0]]
    assert sample.metadata["reference_text"].startswith("A, C ")
