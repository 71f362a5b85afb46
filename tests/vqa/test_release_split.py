"""VQA-RAD's closed/open split as the release defines it, on the hub copy too (issue 51
item 5).

The hub copy (flaviagiammarino/vqa-rad) dropped the release's ``answer_type``; the package
ships it (``vqa/data/vqa_rad_answer_types.json``, built by
``scripts/build_vqa_rad_answer_types.py`` from the release's ``VQA_RAD Dataset
Public.json`` and image folder as published in jingweii97/vqa_rad at
b55ea1ce322a3b73c795f3d0cb2b5d0554c2c745, ``input/``), keyed by the SHA-256 of the image's
bytes and the question as the hub normalises it.

``vqa_rad_hub_rows/`` holds three real test questions in the hub's form (question and
answer as its processing script normalised them) with their two real images, copied from
the release unchanged, as the hub's script copies them (VQA-RAD is CC0 1.0): one open, one
closed yes/no and one closed either/or ("is this supratentorial or infratentorial?",
CLOSED in the release, open by the yes/no rule).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import datasets
import pytest
from PIL import Image

from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.loaders import DatasetError
from inspect_medreason.vqa.dataset import RELEASE_ANSWER_TYPES, hub_question
from inspect_medreason.vqa.vqa import medreason_vqa_rad

HUB_ROWS = Path(__file__).parent / "vqa_rad_hub_rows"
# The hub's test shard, as the snapshot names it.
TEST_SHARD = "test-00000-of-00001-e5bc3d208bb4deeb.parquet"


def hub_parquet(folder: Path, extra: list[dict[str, Any]] | None = None) -> Path:
    """The fixture rows as the hub stores them: an Image feature with the file's bytes."""
    rows = json.loads((HUB_ROWS / "rows.json").read_text(encoding="utf-8"))
    images = [{"bytes": (HUB_ROWS / row["image"]).read_bytes(), "path": None} for row in rows]
    questions = [row["question"] for row in rows]
    answers = [row["answer"] for row in rows]
    for row in extra or []:
        images.append(row["image"])
        questions.append(row["question"])
        answers.append(row["answer"])
    folder.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_dict(
        {"image": images, "question": questions, "answer": answers}
    ).cast_column("image", datasets.Image()).to_parquet(str(folder / TEST_SHARD))
    return folder / TEST_SHARD


def answer_types(task: Any) -> dict[str, str]:
    return {
        str((s.metadata or {})["question"]): (s.metadata or {})["answer_type"] for s in task.dataset
    }


@pytest.mark.parametrize("images", [True, False])
def test_hub_rows_get_the_release_labels_and_the_log_says_so(tmp_path: Path, images: bool) -> None:
    task = medreason_vqa_rad(data=str(hub_parquet(tmp_path)), images=images)
    assert answer_types(task) == {
        "the hemorrhage is adjacent to what structures?": "open",
        "is this a t1 weighted mri?": "closed",
        "is this supratentorial or infratentorial?": "closed",
    }
    data = (task.metadata or {})["data"]
    assert data["closed_open"] == "release"
    assert data["answer_type_from"]["joined"] == 3
    assert data["answer_type_from"]["release"]["repository"] == "jingweii97/vqa_rad"
    assert data["closed_open_counts"] == {"closed": 2, "open": 1}


def test_the_yes_no_rule_stays_available_by_name(tmp_path: Path) -> None:
    task = medreason_vqa_rad(data=str(hub_parquet(tmp_path)), closed_open="yes_no")
    assert answer_types(task)["is this supratentorial or infratentorial?"] == "open"
    data = (task.metadata or {})["data"]
    assert data["closed_open"] == "yes_no"
    assert data["closed_open_counts"] == {"closed": 1, "open": 2}


def test_rows_that_do_not_join_beside_rows_that_do_are_refused_by_name(tmp_path: Path) -> None:
    stranger = {
        "image": Image.new("L", (8, 8), 7),
        "question": "is there a fracture?",
        "answer": "yes",
    }
    with pytest.raises(DatasetError) as refused:
        medreason_vqa_rad(data=str(hub_parquet(tmp_path, [stranger])), images=False)
    message = str(refused.value)
    assert "row 3" in message and "answer_type" in message
    assert "not in the release's table" in message and "closed_open=yes_no" in message
    assert "row 0" not in message


def test_an_unknown_rule_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TaskArgumentError, match="closed_open='paper'"):
        medreason_vqa_rad(data=str(hub_parquet(tmp_path)), closed_open="paper")


def test_the_shipped_table_splits_the_hub_test_split_272_closed_179_open() -> None:
    table = json.loads(RELEASE_ANSWER_TYPES.read_text(encoding="utf-8"))
    columns = table["columns"]
    rows = [dict(zip(columns, values, strict=True)) for values in table["questions"]]
    assert table["source"]["rows"] == len(rows) == 2248
    test = [row for row in rows if row["phrase_type"].startswith("test")]
    # the hub's test split is the release's 451 test questions (none duplicated)
    keys = {(table["images"][row["image_name"]], row["hub_question"]) for row in test}
    assert len(test) == len(keys) == 451
    assert Counter(row["answer_type"] for row in test) == {"CLOSED": 272, "OPEN": 179}
    # each (image, question) has one label across both splits; 2,244 keys, the hub's
    # 2,244 rows (its card: four train triplets dropped from the release's 2,248)
    labels: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        key = (table["images"][row["image_name"]], row["hub_question"])
        labels.setdefault(key, set()).add(row["answer_type"])
    assert len(labels) == 2244
    assert all(len(found) == 1 for found in labels.values())
    assert all(hub_question(row["hub_question"]) == row["hub_question"] for row in rows)
