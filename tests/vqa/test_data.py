"""VQA-RAD, PathVQA and SLAKE read from small files in exactly their published layouts (hub
snapshot folders with the shard names as published, ``save_to_disk`` folders, single files):
one split, chosen, never mixed; every missing field and every library error a message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest
from conftest import sent_image_files, write_json
from inspect_ai import eval
from utils.published_schemas import (
    PATH_VQA_SHARDS,
    VQA_RAD_CARD,
    image_rows,
    path_vqa_snapshot,
    slake_snapshot,
    vqa_rad_snapshot,
)

from inspect_medreason.core.loaders import DatasetError
from inspect_medreason.vqa.vqa import medreason_vqa_rad, path_vqa, slake


def questions(task: Any) -> list[str]:
    return [str((sample.metadata or {})["question"]) for sample in task.dataset]


def test_a_hub_snapshot_is_read_for_the_test_split_only(tmp_path: Path) -> None:
    root = vqa_rad_snapshot(tmp_path / "vqa-rad")
    task = medreason_vqa_rad(data=str(root))
    assert questions(task) == [f"test question {i}?" for i in range(3)]
    data = (task.metadata or {})["data"]
    assert data["split"] == "test" == (task.metadata or {})["split"]
    assert data["files"] == ["data/test-00000-of-00001-e5bc3d208bb4deeb.parquet"]
    assert data["rows"] == 3
    train = medreason_vqa_rad(data=str(root), split="train")
    assert questions(train) == [f"train question {i}?" for i in range(4)]
    with pytest.raises(
        ValueError, match=r"-T split='validation': flaviagiammarino/vqa-rad publishes train, test"
    ):
        medreason_vqa_rad(data=str(root), split="validation")
    (root / "data" / "train-00000-of-00001-eb8844602202be60.parquet").unlink()
    with pytest.raises(DatasetError, match=r"no file of the 'train' split.*test: data/test-"):
        medreason_vqa_rad(data=str(root), split="train")


def test_the_snapshot_eval_logs_the_split_and_every_file_read(tmp_path: Path) -> None:
    from conftest import run_with_grader, scripted_output

    root = vqa_rad_snapshot(tmp_path / "vqa-rad")
    log = run_with_grader(
        medreason_vqa_rad(data=str(root)),
        lambda *_: scripted_output("ANSWER: yes"),
        tmp_path,
        lambda *_: scripted_output('{"correct": false, "rationale": "r"}'),
    )
    assert log.status == "success" and log.samples is not None and len(log.samples) == 3
    assert log.eval.metadata is not None
    assert log.eval.metadata["split"] == "test"
    assert log.eval.metadata["data"]["files"][0].endswith(
        "test-00000-of-00001-e5bc3d208bb4deeb.parquet"
    )


def test_sharded_splits_read_every_shard_of_the_one_split(tmp_path: Path) -> None:
    root = path_vqa_snapshot(tmp_path / "path-vqa")
    task = path_vqa(data=str(root))
    files = (task.metadata or {})["data"]["files"]
    assert [Path(f).name for f in files] == [
        f"test-{shard}.parquet" for shard in PATH_VQA_SHARDS["test"]
    ]
    assert len(task.dataset) == 6 and all(q.startswith("test ") for q in questions(task))
    validation = path_vqa(data=str(root), split="dev")  # an alias the hub's naming knows
    assert all(q.startswith("validation ") for q in questions(validation))
    assert (validation.metadata or {})["split"] == "validation"


def test_a_saved_dataset_dict_gives_its_requested_split(tmp_path: Path) -> None:
    saved = datasets.DatasetDict({"train": image_rows("train", 2), "test": image_rows("test", 1)})
    saved.save_to_disk(str(tmp_path / "saved"))
    assert questions(medreason_vqa_rad(data=str(tmp_path / "saved"))) == ["test question 0?"]
    with pytest.raises(DatasetError, match=r"no split 'validation' \(it has train, test\)"):
        path_vqa(data=str(tmp_path / "saved"), split="validation")


def test_a_single_file_is_taken_unless_its_name_names_another_split(tmp_path: Path) -> None:
    root = vqa_rad_snapshot(tmp_path / "vqa-rad")
    test_file = root / "data" / "test-00000-of-00001-e5bc3d208bb4deeb.parquet"
    assert len(medreason_vqa_rad(data=str(test_file)).dataset) == 3
    train_file = root / "data" / "train-00000-of-00001-eb8844602202be60.parquet"
    with pytest.raises(DatasetError, match=r"holds the train split.*evaluates 'test'"):
        medreason_vqa_rad(data=str(train_file))
    assert len(medreason_vqa_rad(data=str(train_file), split="train").dataset) == 4
    image_rows("mine", 2).to_parquet(str(tmp_path / "mine.parquet"))
    task = medreason_vqa_rad(data=str(tmp_path / "mine.parquet"))
    assert len(task.dataset) == 2 and (task.metadata or {})["split"] == "test"


def test_files_that_do_not_name_their_split_are_refused_by_name(tmp_path: Path) -> None:
    image_rows("a", 1).to_parquet(str(tmp_path / "part-a.parquet"))
    image_rows("b", 1).to_parquet(str(tmp_path / "part-b.parquet"))
    with pytest.raises(DatasetError, match=r"cannot be told apart: part-a.parquet, part-b.parquet"):
        medreason_vqa_rad(data=str(tmp_path))


def test_slake_snapshot_reads_test_json_and_its_unpacked_images(tmp_path: Path) -> None:
    root = slake_snapshot(tmp_path / "SLAKE")
    task = slake(data=str(root))
    assert questions(task) == ["test: which modality?"]  # English only, test only
    assert (task.metadata or {})["data"]["files"] == ["test.json"]
    [sample] = list(task.dataset)
    source = (sample.metadata or {})["image_sources"][0]
    assert source == "xmlab2/source.jpg"  # relative to the image folder, imgs/
    [sent] = sent_image_files(sample)
    assert sent.read_bytes() == (root / "imgs" / source).read_bytes()
    both = slake(data=str(root), language="all", split="validation")
    assert questions(both) == ["validation: which modality?", "validation: 这是什么模态?"]


def test_slake_images_still_zipped_get_a_message_naming_the_archive(tmp_path: Path) -> None:
    root = slake_snapshot(tmp_path / "SLAKE", unpacked=False)
    with pytest.raises(DatasetError, match=r"still be in KG.zip, imgs.zip: unpack it"):
        slake(data=str(root))


def test_images_one_folder_down_name_the_image_root_to_pass(tmp_path: Path) -> None:
    root = slake_snapshot(tmp_path / "SLAKE")
    (root / "imgs").rename(root / "unpacked")
    (root / "somewhere").mkdir()
    (root / "unpacked").rename(root / "somewhere" / "imgs")
    with pytest.raises(DatasetError, match=r"pass -T image_root=.*somewhere/imgs"):
        slake(data=str(root))


def test_every_missing_or_empty_field_is_named_with_file_and_row(tmp_path: Path) -> None:
    root = slake_snapshot(tmp_path / "SLAKE")
    rows = json.loads((root / "test.json").read_text(encoding="utf-8"))
    rows[0]["answer"] = "  "
    del rows[1]["question"]
    rows[1]["answer_type"] = "MAYBE"
    write_json(root / "test.json", rows)
    with pytest.raises(DatasetError) as raised:
        slake(data=str(root))
    message = str(raised.value)
    assert "3 problem(s)" in message
    assert "test.json: case 'row 0 (11934)': answer: empty" in message
    assert "test.json: case 'row 1 (11935)': question: missing" in message
    assert "answer_type: 'MAYBE' is not one of OPEN, CLOSED" in message


def test_a_library_error_names_the_file_and_says_what_to_do(tmp_path: Path) -> None:
    root = vqa_rad_snapshot(tmp_path / "vqa-rad")
    shard = root / "data" / "test-00000-of-00001-e5bc3d208bb4deeb.parquet"
    shard.write_bytes(shard.read_bytes()[:200])  # a download cut short
    with pytest.raises(DatasetError) as raised:
        medreason_vqa_rad(data=str(root))
    message = str(raised.value)
    assert str(shard) in message and "cannot be read" in message
    assert "Traceback" not in message
    (tmp_path / "rows.jsonl").write_text('{"question": "q?", "answer": "yes"}\nnot json\n', "utf-8")
    with pytest.raises(DatasetError, match=r"rows.jsonl: case '-': data: cannot be read"):
        medreason_vqa_rad(data=str(tmp_path / "rows.jsonl"))


def test_an_image_cell_that_does_not_decode_names_its_row(tmp_path: Path) -> None:
    dataset = datasets.Dataset.from_dict(
        {
            "image": [{"bytes": b"not an image", "path": None}],
            "question": ["q?"],
            "answer": ["yes"],
        }
    ).cast_column("image", datasets.Image())
    dataset.to_parquet(str(tmp_path / "test.parquet"))
    with pytest.raises(
        DatasetError,
        match=r"test.parquet: case 'row 0 \(vqa_rad_00000\)': image: the image of row 0 of "
        r"test.parquet \(image\) is not a decodable image \(not an image format",
    ):
        medreason_vqa_rad(data=str(tmp_path / "test.parquet"))


def test_local_data_runs_without_the_network_and_records_no_revision(tmp_path: Path) -> None:
    root = vqa_rad_snapshot(tmp_path / "vqa-rad")
    task = medreason_vqa_rad(data=str(root), revision="main")
    assert "revision" not in (task.metadata or {})["data"]
    assert "local data is read as it is" in (task.metadata or {})["data"]["revision_ignored"]
    [log] = eval(
        task, model="mockllm/model", display="none", log_dir=str(tmp_path / "logs"), score=False
    )
    assert log.status == "success"


def test_slake_from_the_hub_fetches_its_image_archive_at_the_same_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = slake_snapshot(tmp_path / "SLAKE", unpacked=False)
    calls: list[tuple[str, str, str]] = []

    def load_dataset(path: str, **kwargs: Any) -> datasets.Dataset:
        calls.append((path, "load_dataset", kwargs["revision"]))
        return datasets.Dataset.from_list(json.loads((root / "test.json").read_text("utf-8")))

    def hf_hub_download(repo_id: str, filename: str, repo_type: str, revision: str) -> str:
        calls.append((repo_id, filename, revision))
        assert repo_type == "dataset"
        return str(root / filename)

    import huggingface_hub

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", hf_hub_download)
    task = slake()
    pinned = "a9083ce6c34ac3ffb17671a605962924d8a8f9e9"
    assert calls == [
        ("BoKelvin/SLAKE", "load_dataset", pinned),
        ("BoKelvin/SLAKE", "imgs.zip", pinned),
    ]
    [sample] = list(task.dataset)
    assert (sample.metadata or {})["image_sources"] == ["xmlab2/source.jpg"]
    images = (task.metadata or {})["data"]["images"]
    assert images["archive"] == "imgs.zip" and images["revision"] == pinned


def test_a_card_cannot_point_outside_the_folder_and_pipes_are_never_read(tmp_path: Path) -> None:
    root = vqa_rad_snapshot(tmp_path / "vqa-rad")
    image_rows("secret", 1).to_parquet(str(tmp_path / "secret-test.parquet"))
    card = "---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: ../secret-test.parquet\n---\n"
    (root / "README.md").write_text(card, encoding="utf-8")
    with pytest.raises(DatasetError, match=r"no such file is here"):
        medreason_vqa_rad(data=str(root))
    import os

    os.mkfifo(tmp_path / "test.parquet")
    with pytest.raises(DatasetError, match=r"not a regular file or folder"):
        medreason_vqa_rad(data=str(tmp_path / "test.parquet"))
    (root / "README.md").write_text(VQA_RAD_CARD, encoding="utf-8")
    os.mkfifo(root / "data" / "test-00001-of-00002-fifo.parquet")
    assert len(medreason_vqa_rad(data=str(root)).dataset) == 3  # the pipe is not a data file


def test_the_hubs_parquet_conversion_layout_is_read_by_its_folder_names(tmp_path: Path) -> None:
    """The hub's own parquet export (the refs/convert/parquet branch): <config>/<split>/N.parquet."""
    root = tmp_path / "vqa-rad-parquet"
    for split, count in (("train", 2), ("test", 3)):
        (root / "default" / split).mkdir(parents=True)
        image_rows(split, count).to_parquet(str(root / "default" / split / "0000.parquet"))
    task = medreason_vqa_rad(data=str(root))
    assert questions(task) == [f"test question {i}?" for i in range(3)]
    assert (task.metadata or {})["data"]["files"] == ["default/test/0000.parquet"]


def test_files_beside_the_split_that_name_none_are_left_out_and_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = vqa_rad_snapshot(tmp_path / "vqa-rad")
    image_rows("notes", 1).to_parquet(str(root / "data" / "extra.parquet"))
    task = medreason_vqa_rad(data=str(root))
    assert len(task.dataset) == 3
    assert (task.metadata or {})["data"]["not_read"] == ["data/extra.parquet"]
    assert "not read, as their names name no split: data/extra.parquet" in caplog.text


def test_two_files_of_one_split_that_are_not_shards_are_refused(tmp_path: Path) -> None:
    image_rows("a", 2).to_parquet(str(tmp_path / "test.parquet"))
    image_rows("b", 2).to_parquet(str(tmp_path / "data_test.parquet"))
    with pytest.raises(
        DatasetError, match=r"not shards of one set \(data_test.parquet, test.parquet\)"
    ):
        medreason_vqa_rad(data=str(tmp_path))


def test_slake_language_is_matched_whatever_its_case(tmp_path: Path) -> None:
    root = slake_snapshot(tmp_path / "SLAKE")
    rows = json.loads((root / "test.json").read_text(encoding="utf-8"))
    rows[0]["q_lang"] = "EN"
    write_json(root / "test.json", rows)
    assert questions(slake(data=str(root))) == ["test: which modality?"]


def test_the_hub_is_asked_for_a_split_by_its_published_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm

    asked: list[str] = []

    def load_dataset(path: str, **kwargs: Any) -> datasets.Dataset:
        asked.append(kwargs["split"])
        raise ConnectionError("offline")

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    for split in ("validation", "Dev"):
        with pytest.raises(DatasetError):
            medxpertqa_mm(split=split)
    with pytest.raises(DatasetError):
        medreason_vqa_rad(split="Test")
    assert asked == ["dev", "dev", "test"]
