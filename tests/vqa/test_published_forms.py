"""The publishers' own layouts and labels: VQA-RAD's official release (answer_type,
phrase_type, image_name), SLAKE's validate.json, PathVQA's CMYK JPEGs in parquet, and the
blind control that opens no image."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import datasets
import pytest
from conftest import sent_image_files, write_json, write_png
from PIL import Image
from utils.published_schemas import slake_snapshot

from inspect_medreason.core.loaders import DatasetError
from inspect_medreason.vqa.vqa import medreason_vqa_rad, path_vqa, slake

RELEASE_FILE = "VQA_RAD Dataset Public.json"
RELEASE_IMAGES = "VQA_RAD Image Folder"


def release_row(
    qid: int, phrase_type: str, question: str, answer: Any, kind: str
) -> dict[str, Any]:
    # The official release's fields (OSF, "VQA_RAD Dataset Public.json").
    return {
        "qid": qid,
        "phrase_type": phrase_type,
        "qid_linked_id": f"0{qid}",
        "image_case_url": "https://medpix.nlm.nih.gov/case?id=x",
        "image_name": f"synpic{qid}.jpg",
        "image_organ": "HEAD",
        "evaluation": "given",
        "question": question,
        "question_rephrase": "NULL",
        "question_relation": "NULL",
        "question_frame": "NULL",
        "question_type": "POS",
        "answer": answer,
        "answer_type": kind,
    }


def vqa_rad_release(folder: Path) -> Path:
    rows = [
        release_row(
            1,
            "test_freeform",
            "Is the lesion supratentorial or infratentorial?",
            "Supratentorial",
            "CLOSED",
        ),
        release_row(2, "test_para", "Is there a fracture?", "yes", "CLOSED"),
        release_row(3, "test_freeform", "Where is the mass?", "left lobe", "OPEN"),
        release_row(4, "freeform", "Is this a CT?", "no", "CLOSED"),
    ]
    write_json(folder / RELEASE_FILE, rows)
    for row in rows:
        write_png(folder / RELEASE_IMAGES / row["image_name"])
    return folder / RELEASE_FILE


def answer_types(task: Any) -> dict[str, str]:
    return {str(s.id): (s.metadata or {})["answer_type"] for s in task.dataset}


def test_vqa_rad_release_labels_decide_closed_and_open_and_the_log_says_so(tmp_path: Path) -> None:
    task = medreason_vqa_rad(data=str(vqa_rad_release(tmp_path)))
    # The either/or question is closed as the release labels it (the yes/no rule: open);
    # the train row (phrase_type freeform) is not in the test split.
    assert answer_types(task) == {"1": "closed", "2": "closed", "3": "open"}
    data = (task.metadata or {})["data"]
    assert data["answer_type_from"].startswith("the rows' answer_type")
    assert data["split_from"].startswith("the rows' phrase_type")
    train = medreason_vqa_rad(data=str(tmp_path / RELEASE_FILE), split="train")
    assert answer_types(train) == {"4": "closed"}


def test_vqa_rad_hub_copy_without_labels_uses_the_yes_no_rule_and_says_so(tmp_path: Path) -> None:
    datasets.Dataset.from_dict(
        {
            "image": [Image.new("L", (4, 4)), Image.new("L", (4, 4), 9)],
            "question": ["Is the lesion supratentorial or infratentorial?", "Is there a fracture?"],
            "answer": ["supratentorial", "yes"],
        }
    ).cast_column("image", datasets.Image()).to_parquet(str(tmp_path / "test.parquet"))
    task = medreason_vqa_rad(data=str(tmp_path / "test.parquet"))
    assert sorted(answer_types(task).values()) == ["closed", "open"]
    # none of these rows is one of the release's questions: the yes/no rule, said so
    data = (task.metadata or {})["data"]
    assert data["closed_open"] == "yes_no"
    assert data["answer_type_from"]["rule"].startswith("the yes/no rule")
    assert data["answer_type_from"]["joined"] == 0


def test_rows_that_mix_labelled_and_unlabelled_are_refused(tmp_path: Path) -> None:
    data = vqa_rad_release(tmp_path)
    rows = [
        release_row(1, "test_freeform", "Q?", "yes", "CLOSED"),
        release_row(2, "test_para", "Q?", "no", ""),
    ]
    write_json(data, rows)
    with pytest.raises(DatasetError, match=r"row 1 \(2\)': answer_type: missing, while 1 other"):
        medreason_vqa_rad(data=str(data))


def test_slake_validate_json_is_its_validation_split(tmp_path: Path) -> None:
    root = slake_snapshot(tmp_path / "SLAKE")
    (root / "validation.json").rename(root / "validate.json")
    task = slake(data=str(root), split="validation")
    assert [(s.metadata or {})["question"] for s in task.dataset] == ["validation: which modality?"]
    assert (task.metadata or {})["data"]["files"] == ["validate.json"]


def cmyk_jpeg(seed: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("CMYK", (12, 8), (seed, 40, 80, 10)).save(buffer, format="JPEG")
    return buffer.getvalue()


def test_path_vqa_cmyk_jpegs_in_parquet_are_sent_as_rgb_png_and_recorded(tmp_path: Path) -> None:
    rgb = io.BytesIO()
    Image.new("RGB", (12, 8), (1, 2, 3)).save(rgb, format="JPEG")
    datasets.Dataset.from_dict(
        {
            "image": [
                {"bytes": cmyk_jpeg(9), "path": None},
                {"bytes": rgb.getvalue(), "path": None},
            ],
            "question": ["is this tissue?", "what stain?"],
            "answer": ["yes", "h&e"],
        }
    ).cast_column("image", datasets.Image()).to_parquet(str(tmp_path / "test.parquet"))
    task = path_vqa(data=str(tmp_path / "test.parquet"))
    cmyk, plain = list(task.dataset)
    sent = Image.open(sent_image_files(cmyk)[0])
    assert (sent.format, sent.mode) == ("PNG", "RGB")
    assert "CMYK -> RGB" in (cmyk.metadata or {})["image_conversions"][0]
    # An RGB JPEG is sent as the bytes the parquet holds.
    assert sent_image_files(plain)[0].read_bytes() == rgb.getvalue()
    assert "image_conversions" not in (plain.metadata or {})


def test_the_blind_control_opens_no_image_and_the_log_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    datasets.Dataset.from_dict(
        {
            "image": [{"bytes": b"never decoded", "path": None}],
            "question": ["is this tissue?"],
            "answer": ["yes"],
        }
    ).cast_column("image", datasets.Image()).to_parquet(str(tmp_path / "test.parquet"))
    import PIL.Image

    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("an image was opened")

    monkeypatch.setattr(PIL.Image, "open", refuse)
    task = path_vqa(data=str(tmp_path / "test.parquet"), images=False)
    [sample] = list(task.dataset)
    assert (sample.metadata or {})["images_withheld"] is True
    assert sent_image_files(sample) == [] and "image_sha256" not in (sample.metadata or {})
    assert (task.metadata or {})["data"]["images"].startswith("not read (images=false")
    # SLAKE's image folder need not exist at all.
    root = slake_snapshot(tmp_path / "SLAKE")
    import shutil

    shutil.rmtree(root / "imgs")
    (root / "imgs.zip").unlink()
    blind = slake(data=str(root), images=False)
    assert [(s.metadata or {})["images_withheld"] for s in blind.dataset] == [True]


# Six rows of the official release as published (VQA-RAD is CC0 1.0), copied unchanged from
# "data_RAD/VQA_RAD Dataset Public.json" in github.com/Harsh-Toshniwal/MUMC at commit
# 4051b901ead3dee984a751fbc95ee06e6bc5abe9: five test questions (three CLOSED whose answer is
# not yes or no) and a training row whose answer is a JSON number.
REAL_RELEASE_ROWS = Path(__file__).with_name("vqa_rad_release_rows.json")


def test_real_release_rows_are_closed_or_open_as_their_answer_type_says(tmp_path: Path) -> None:
    rows = json.loads(REAL_RELEASE_ROWS.read_text(encoding="utf-8"))
    write_json(tmp_path / RELEASE_FILE, rows)
    for row in rows:
        write_png(tmp_path / RELEASE_IMAGES / row["image_name"])
    task = medreason_vqa_rad(data=str(tmp_path / RELEASE_FILE))
    # "Are there multiple or just 1 metastatic focus?" (one), "right or left side?" (Left),
    # "supratentorial or infratentorial?": CLOSED in the release, open by the yes/no rule.
    assert answer_types(task) == {
        "10": "closed",
        "19": "open",
        "243": "closed",
        "454": "closed",
        "555": "closed",
    }
    assert (task.metadata or {})["data"]["answer_type_from"].startswith("the rows' answer_type")
    [train] = list(medreason_vqa_rad(data=str(tmp_path / RELEASE_FILE), split="train").dataset)
    assert train.id == "1511" and train.target == "4"  # the release's answer 4, a number


# Four rows of MEVF's VQA-RAD test file as published (the same questions as the release's,
# renumbered, phrase_type without the test_ mark), copied unchanged from
# "data_RAD/testset.json" in github.com/longle0702/med-v2qa at commit
# 727f26a3b05affd9e0e0cea56443a7efce956984 (451 rows: 272 CLOSED, 179 OPEN).
MEVF_TEST_ROWS = Path(__file__).with_name("vqa_rad_mevf_testset_rows.json")


def test_mevf_testset_json_is_the_test_split_with_its_answer_type(tmp_path: Path) -> None:
    rows = json.loads(MEVF_TEST_ROWS.read_text(encoding="utf-8"))
    write_json(tmp_path / "testset.json", rows)
    task = medreason_vqa_rad(data=str(tmp_path / "testset.json"), images=False)
    assert answer_types(task) == {"401": "closed", "733": "closed", "11": "closed", "20": "open"}
    data = (task.metadata or {})["data"]
    assert data["split_from"] == "the file given (its name agrees)"
    write_json(tmp_path / "trainset.json", rows)
    with pytest.raises(DatasetError, match="by its name this file holds the train split"):
        medreason_vqa_rad(data=str(tmp_path / "trainset.json"), images=False)
