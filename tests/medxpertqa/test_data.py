"""MedXpertQA read from its published hub snapshot (the card's configs MM and Text, each
with dev and test, and images.zip unpacked into images/), the MM folder, or one file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from utils.published_schemas import medxpertqa_folder

from inspect_medreason.core.loaders import DatasetError
from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm


def ids(task: object) -> list[str]:
    return [str(sample.id) for sample in task.dataset]  # type: ignore[attr-defined]


def test_the_snapshot_gives_the_mm_test_split_and_nothing_else(tmp_path: Path) -> None:
    root = medxpertqa_folder(tmp_path / "MedXpertQA")
    task = medxpertqa_mm(data=str(root))
    assert ids(task) == ["MM-1", "MM-2"]
    data = (task.metadata or {})["data"]
    assert data["config"] == "MM" and data["split"] == "test"
    assert data["files"] == ["MM/test.jsonl"]  # relative to the data folder named
    assert data["split_from"] == "the dataset card's configs"
    [first, _] = list(task.dataset)
    sources = (first.metadata or {})["image_sources"]
    assert sources == ["MM-1-a.jpeg", "MM-1-b.jpeg"]  # relative to the images/ folder
    assert ids(medxpertqa_mm(data=str(root), split="dev")) == ["MM-9"]


def test_without_a_card_the_config_folder_and_file_names_decide(tmp_path: Path) -> None:
    root = medxpertqa_folder(tmp_path / "MedXpertQA")
    (root / "README.md").unlink()
    task = medxpertqa_mm(data=str(root))
    assert ids(task) == ["MM-1", "MM-2"]
    assert (task.metadata or {})["data"]["config_folder"] == "MM"
    assert ids(medxpertqa_mm(data=str(root / "MM"), split="validation")) == ["MM-9"]
    # one file alone: its images are in the images/ beside its folder
    assert ids(medxpertqa_mm(data=str(root / "MM" / "test.jsonl"))) == ["MM-1", "MM-2"]
    with pytest.raises(DatasetError, match=r"holds the validation split"):
        medxpertqa_mm(data=str(root / "MM" / "dev.jsonl"))


def test_a_card_without_the_config_is_refused_with_the_ones_it_has(tmp_path: Path) -> None:
    root = medxpertqa_folder(tmp_path / "MedXpertQA")
    card = (root / "README.md").read_text(encoding="utf-8")
    (root / "README.md").write_text(card.replace("config_name: MM", "config_name: Multi"), "utf-8")
    with pytest.raises(DatasetError, match=r"no config 'MM' \(it has Multi, Text\)"):
        medxpertqa_mm(data=str(root))


def test_images_still_zipped_are_named(tmp_path: Path) -> None:
    root = medxpertqa_folder(tmp_path / "MedXpertQA")
    shutil.make_archive(str(root / "images"), "zip", root, "images")
    shutil.rmtree(root / "images")
    with pytest.raises(DatasetError, match=r"MM-1-a.jpeg.*images.zip: unpack it"):
        medxpertqa_mm(data=str(root))


def test_empty_fields_and_options_are_refused_with_file_and_row(tmp_path: Path) -> None:
    root = medxpertqa_folder(tmp_path / "MedXpertQA")
    path = root / "MM" / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[0]["options"]["C"] = ""
    rows[1]["label"] = ""
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as raised:
        medxpertqa_mm(data=str(root))
    message = str(raised.value)
    assert f"{path}: case 'row 1 (MM-2)': label: empty" in message
    with pytest.raises(DatasetError, match=r"row 0 \(MM-1\)': options: option\(s\) C empty"):
        rows[1]["label"] = "A"
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
        medxpertqa_mm(data=str(root))


def test_a_split_the_dataset_does_not_publish_is_refused_before_reading(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"-T split='train': TsinghuaC3I/MedXpertQA \(MM\) publishes dev, test"
    ):
        medxpertqa_mm(data=str(tmp_path / "nothing-read"), split="train")
