"""VQA-RAD end to end on mockllm, and its row adapter on a row in the published schema."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import eval
from inspect_ai.model import ContentImage
from utils.published_schemas import VQA_RAD_ROWS, vqa_rad_parquet

from inspect_medreason.core.prompts import load_template
from inspect_medreason.vqa.dataset import SLAKE, VQA_RAD, record_to_sample
from inspect_medreason.vqa.vqa import medreason_vqa_rad


def test_vqa_rad_runs_end_to_end_on_mockllm(tmp_path: Path) -> None:
    data = vqa_rad_parquet(tmp_path / "vqa_rad")
    [log] = eval(
        medreason_vqa_rad(data=str(data)),
        model="mockllm/model",
        model_roles={"grader": "mockllm/model"},
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == len(VQA_RAD_ROWS)
    # mockllm's default reply answers nothing: closed questions are wrong, not unscored
    assert log.results is not None
    assert log.results.scores[0].metrics["accuracy_closed"].value == 0.0


def test_record_to_sample_maps_a_published_row(tmp_path: Path) -> None:
    templates = (load_template("vqa_system", family="vqa"), load_template("vqa_user", family="vqa"))
    row = {"question": "is there a fracture?", "answer": "yes", "image": "x"}
    sample = record_to_sample(VQA_RAD, row, "vqa_rad_00001", [tmp_path / "a.png"], True, templates)
    assert sample.id == "vqa_rad_00001" and sample.target == "yes"
    assert sample.metadata is not None and sample.metadata["answer_type"] == "closed"
    turn = sample.input[-1]
    assert not isinstance(turn, str) and isinstance(turn.content, list)
    assert any(isinstance(part, ContentImage) for part in turn.content)
    slake_row = {
        "question": "Which organ?",
        "answer": "Liver",
        "answer_type": "OPEN",
        "modality": "CT",
        "content_type": "Organ",
        "location": "Abdomen",
        "q_lang": "en",
    }
    slake_sample = record_to_sample(SLAKE, slake_row, "s1", [], False, templates)
    assert slake_sample.metadata is not None
    assert slake_sample.metadata["organ"] == "Abdomen" and slake_sample.metadata["language"] == "en"
    assert slake_sample.metadata["images_withheld"] is False  # no image to withhold
