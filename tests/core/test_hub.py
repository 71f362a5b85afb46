"""The hub path of the benchmark loaders (stubbed: tests never touch the network), and
images given as file names, including DICOM."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import datasets
import pytest
from conftest import write_json
from inspect_ai.model import ContentImage
from PIL import Image
from utils.dicom_fixtures import gradient, write_dicom

from inspect_medreason.core import hub
from inspect_medreason.vqa.dataset import VQA_RAD
from inspect_medreason.vqa.vqa import medreason_vqa_rad, slake


def test_hub_load_reads_the_pinned_commit_and_resolves_an_override(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: dict[str, Any] = {}

    def dataset_info(self: Any, repo_id: str, revision: str | None = None, **_: Any) -> Any:
        calls["info"] = (repo_id, revision)
        return SimpleNamespace(sha="0123456789abcdef0123456789abcdef01234567")

    def load_dataset(path: str, **kwargs: Any) -> datasets.Dataset:
        calls["load"] = (path, kwargs)
        return datasets.Dataset.from_dict(
            {
                "image": [Image.new("L", (4, 4))],
                "question": ["is it normal?"],
                "answer": ["yes"],
            }
        ).cast_column("image", datasets.Image())

    monkeypatch.setattr("huggingface_hub.HfApi.dataset_info", dataset_info)
    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    task = medreason_vqa_rad()
    # The pinned commit is read as it is: no lookup of a branch.
    assert "info" not in calls
    path, kwargs = calls["load"]
    assert path == "flaviagiammarino/vqa-rad" and kwargs["split"] == "test"
    assert kwargs["revision"] == VQA_RAD.hub.revision == "bcf91e7654fb9d51c8ab6a5b82cacf3fafd2fae9"
    origin = (task.metadata or {})["data"]
    assert origin["revision"] == kwargs["revision"] and origin["split"] == "test"
    assert "inspect_evals" in origin["revision_source"]
    overridden = medreason_vqa_rad(revision="v1.0", split="train")
    assert calls["info"] == ("flaviagiammarino/vqa-rad", "v1.0")
    assert calls["load"][1]["revision"] == "0123456789abcdef0123456789abcdef01234567"
    assert calls["load"][1]["split"] == "train"
    origin = (overridden.metadata or {})["data"]
    assert origin["revision_requested"] == "v1.0" and origin["revision_source"] == "-T revision"
    assert (overridden.metadata or {})["split"] == "train"


def test_a_hub_dataset_without_a_verified_commit_needs_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def load_dataset(*_: Any, **__: Any) -> None:
        raise AssertionError("nothing is loaded without a revision")

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    unpinned = hub.HubSource("owner/benchmark", split="test")
    with pytest.raises(ValueError, match=r"pass -T revision=<commit id>"):
        hub.load_rows(None, unpinned)


def test_benchmark_images_by_name_may_be_dicom(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    write_dicom(tmp_path / "slake" / "imgs" / "ct1" / "slice.dcm", gradient(), window=(2000, 4000))
    write_json(
        tmp_path / "slake" / "test.json",
        [
            {
                "img_name": "ct1/slice.dcm",
                "question": "Is this a CT?",
                "answer": "Yes",
                "q_lang": "en",
                "answer_type": "CLOSED",
                "modality": "CT",
                "content_type": "Modality",
                "location": "Abdomen",
            }
        ],
    )
    task = slake(
        data=str(tmp_path / "slake" / "test.json"), image_root=str(tmp_path / "slake" / "imgs")
    )
    [sample] = list(task.dataset)
    message = sample.input[-1]
    assert not isinstance(message, str) and not isinstance(message.content, str)
    [image] = [c.image for c in message.content if isinstance(c, ContentImage)]
    assert image.endswith(".png") and Path(image).parent == tmp_path / "cache" / "images"
    assert Image.open(image).format == "PNG"
    assert (sample.metadata or {})["image_conversions"] == ["DICOM windowed to 8-bit PNG"]


def test_image_names_cannot_leave_the_image_folder(tmp_path: Path) -> None:
    (tmp_path / "imgs").mkdir()
    write_json(
        tmp_path / "test.json",
        [
            {
                "img_name": "../secret.png",
                "question": "Q?",
                "answer": "Yes",
                "q_lang": "en",
                "answer_type": "CLOSED",
            }
        ],
    )
    (tmp_path / "secret.png").write_bytes(b"x")
    with pytest.raises(ValueError, match="resolves outside the data folder"):
        slake(data=str(tmp_path / "test.json"), image_root=str(tmp_path / "imgs"))


def test_image_cell_forms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    import io

    store = hub.ImageStore()
    buffer = io.BytesIO()
    Image.new("L", (5, 5)).save(buffer, format="JPEG")
    from_bytes = hub.image_file({"bytes": buffer.getvalue(), "path": None}, None, store).path
    assert Image.open(from_bytes).size == (5, 5)
    with pytest.raises(hub.ImagePathError, match="image_root"):
        hub.image_file("imgs/x.png", None, store)
    with pytest.raises(hub.ImagePathError, match="not a decodable image"):
        hub.image_file({"bytes": b"not an image"}, None, store)
    store.close()


def test_hub_failure_advises_local_data(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any, **__: Any) -> None:
        raise RuntimeError("Dataset scripts are no longer supported")

    monkeypatch.setattr(datasets, "load_dataset", refuse)
    with pytest.raises(
        ValueError, match=r"pass -T data=PATH: the hub snapshot \(data/train-00000-of-00001"
    ):
        medreason_vqa_rad()


def test_cmb_option_forms() -> None:
    from inspect_medreason.cmb.dataset import exam_options

    expected = [("A", "甲"), ("B", "乙")]
    assert exam_options({"option": {"A": "甲", "B": "乙"}}) == expected
    assert (
        exam_options({"option": [{"key": "A", "value": "甲"}, {"key": "B", "value": "乙"}]})
        == expected
    )
    assert exam_options({"option": "{'A': '甲', 'B': '乙'}"}) == expected
    assert exam_options({"option": '{"A": "甲", "B": "乙"}'}) == expected


def test_an_image_the_cache_cannot_hold_is_a_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    (tmp_path / "cache").write_text("a file where the cache folder should be")
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    buffer = io.BytesIO()
    Image.new("CMYK", (2, 2)).save(buffer, format="JPEG")
    with pytest.raises(hub.ImagePathError, match=r"could not be stored in"):
        hub.image_file({"bytes": buffer.getvalue()}, None, hub.ImageStore())


def test_wrong_types_names_file_row_and_field() -> None:
    loaded = hub.LoadedRows(
        [{"q": "ok", "n": [1]}, {"q": {"x": 1}, "n": True}, {"q": None, "n": "2"}],
        {},
        None,
        ["a.json"] * 3,
        [0, 1, 2],
    )
    found = hub.wrong_types(
        loaded, {"q": ((str,), "text"), "n": ((list,), "a list")}, lambda _, i: f"id{i}"
    )
    assert [(p.file, p.case_id, p.field) for p in found] == [
        ("a.json", "row 1 (id1)", "q"),
        ("a.json", "row 1 (id1)", "n"),
        ("a.json", "row 2 (id2)", "n"),
    ]
    assert found[0].message.startswith("expected text, got an object")
    assert "got true/false" in found[1].message
