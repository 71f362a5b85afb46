"""GEMeX-VQA read as the hub publishes it (four JSONL files at the repository's root, one per
question type, no card) and as its GitHub release does (data-v1-subset/test/)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from utils.published_schemas import gemex_folder

from inspect_medreason.core.loaders import DatasetError
from inspect_medreason.gemex.gemex import gemex

TYPES = (
    "closed_ended_question",
    "single_choice_question",
    "multi_choice_question",
    "open_ended_question",
)


def hub_layout(root: Path) -> Path:
    """The hub's file names: no prefix, no split in them."""
    gemex_folder(root)
    assert sorted(path.stem for path in root.glob("*.jsonl")) == sorted(TYPES)
    return root


def test_the_hub_layout_reads_every_question_type(tmp_path: Path) -> None:
    root = hub_layout(tmp_path / "GEMeX-VQA")
    task = gemex(data=str(root), image_root=str(root))
    assert len(task.dataset) == 4
    data = (task.metadata or {})["data"]
    assert {kind: Path(origin["files"][0]).name for kind, origin in data.items()} == {
        "closed": "closed_ended_question.jsonl",
        "single": "single_choice_question.jsonl",
        "multi": "multi_choice_question.jsonl",
        "open": "open_ended_question.jsonl",
    }
    assert (task.metadata or {})["split"] == "test"


def test_the_github_release_reads_its_test_folder_not_the_training_file(tmp_path: Path) -> None:
    root = tmp_path / "data-v1-subset"
    hub_layout(root / "test")
    (root / "sub_training_data.json").write_text(json.dumps([{"conversations": []}]), "utf-8")
    shutil.copy(
        root / "test" / "closed_ended_question.jsonl", root / "train_closed_ended_question.jsonl"
    )
    task = gemex(data=str(root), image_root=str(root / "test"))
    assert len(task.dataset) == 4


def test_an_empty_reference_is_refused_with_file_row_and_field(tmp_path: Path) -> None:
    root = hub_layout(tmp_path / "GEMeX-VQA")
    path = root / "open_ended_question.jsonl"
    row = json.loads(path.read_text(encoding="utf-8"))
    row["answer"] = ""
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(
        DatasetError, match=r"open_ended_question.jsonl: case 'row 0 \(open_4\)': answer: empty"
    ):
        gemex(data=str(root), image_root=str(root))


def test_two_files_of_one_type_are_refused_by_name(tmp_path: Path) -> None:
    root = hub_layout(tmp_path / "GEMeX-VQA")
    shutil.copy(root / "closed_ended_question.jsonl", root / "closed_ended_question_v2.jsonl")
    with pytest.raises(DatasetError, match=r"2 files of this question type"):
        gemex(data=str(root), image_root=str(root), question_types="closed")
