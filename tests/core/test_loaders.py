from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import SHARED_OFFICIAL, write_json, write_png
from inspect_ai.model import ChatMessageUser, ContentImage

from inspect_medreason.core.loaders import DatasetError, load_cases, sample_data_dir
from inspect_medreason.core.schema import normalise_task_type, sample_options
from inspect_medreason.medreason.dataset import build_dataset, record_to_sample, shuffle_options
from inspect_medreason.medreason.medreason import mcq, open_ended


def problems_of(error: pytest.ExceptionInfo[DatasetError]) -> set[tuple[str, str]]:
    return {(p.case_id, p.field) for p in error.value.problems}


def test_official_layout_with_ground_truth_beside(official_dataset: Path) -> None:
    loaded = load_cases(official_dataset)
    by_id = {case.case_id: case for case in loaded.cases}
    assert [case.case_id for case in loaded.cases] == ["q1", "q2", "q3", "o1"]
    assert by_id["q2"].task_type == "mcq" and by_id["o1"].task_type == "open"
    assert by_id["q2"].labels == ["A", "B", "C"]  # bare option strings get A, B, C
    assert by_id["q2"].answer == "C"
    assert by_id["o1"].answer == "A small nodule."
    assert by_id["q3"].context == "Trauma patient."
    assert by_id["q1"].metadata.organ_system == "Chest"  # "organ system" alias
    assert loaded.ground_truth_file == official_dataset / "ground_truth.json"
    # What is sent is each file's bytes as read (b.png and c.png), kept by their digest.
    sent = [p.read_bytes() for p in loaded.resolved_images["q2"]]
    assert sent == [(official_dataset / "images" / n).read_bytes() for n in ("b.png", "c.png")]


def test_bare_list_and_explicit_ground_truth(tmp_path: Path) -> None:
    write_png(tmp_path / "data" / "x.png")
    write_json(
        tmp_path / "data" / "my_cases.json",
        [
            {
                "case_id": "c1",
                "task_type": "mcq",
                "question": "Q?",
                "image_path": "x.png",
                "options": ["yes", "no"],
            }
        ],
    )
    truth = write_json(
        tmp_path / "elsewhere.json",
        {"cases": [{"case_id": "c1", "task_type": "mcq", "answer": "B"}]},
    )
    loaded = load_cases(tmp_path / "data" / "my_cases.json", truth)
    assert loaded.cases[0].answer == "B"
    unlabeled = load_cases(tmp_path / "data" / "my_cases.json")
    assert unlabeled.cases[0].answer is None


def test_raw_training_layout_and_jsonl(tmp_path: Path) -> None:
    write_png(tmp_path / "img" / "1.png")
    raw = [
        {
            "case_id": "t1",
            "question type": "mcq",
            "question": "Which organ?",
            "image_path": "img/1.png",
            "A": "A) Liver",
            "B": "B) Spleen",
            "C": "C. Kidney",
            "answer": "A",
            "visual_description": "A liver is shown.",
            "modality": "CT",
            "organ system": "Abdomen",
            "task": "anatomy",
            "subtype": "organ",
            "split_order": 7,
        },
        {
            "case_id": "t2",
            "question type": "open",
            "question": "What is seen?",
            "image_paths": ["img/1.png"],
            "answer": "A cyst",
            "primary_modality": "MR",
        },
    ]
    jsonl = tmp_path / "train.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in raw) + "\n", encoding="utf-8")
    loaded = load_cases(jsonl)
    first, second = loaded.cases
    assert [o.text for o in first.options] == ["Liver", "Spleen", "Kidney"]
    assert first.answer == "A" and first.reference_reasoning == "A liver is shown."
    assert first.metadata.modality == "CT" and first.metadata.organ_system == "Abdomen"
    assert first.metadata.model_extra == {"split_order": 7}
    assert second.task_type == "open" and second.metadata.modality == "MR"
    # A folder holding a single .jsonl is accepted too.
    assert [c.case_id for c in load_cases(tmp_path).cases] == ["t1", "t2"]


def test_jsonl_in_official_layout(tmp_path: Path) -> None:
    write_png(tmp_path / "a.png")
    record = {"case_id": "j1", "task_type": "open", "question": "Q", "image_path": "a.png"}
    (tmp_path / "cases.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert load_cases(tmp_path / "cases.jsonl").cases[0].case_id == "j1"


def test_text_only_case_allowed(tmp_path: Path) -> None:
    write_json(tmp_path / "cases.json", [{"case_id": "t", "task_type": "open", "question": "Q"}])
    loaded = load_cases(tmp_path)
    sample = record_to_sample(loaded.cases[0], loaded.resolved_images["t"])
    message = sample.input[0]
    # a case without images is a plain-text turn (text-only servers reject list content)
    assert isinstance(message, ChatMessageUser) and message.content == "Q"


def test_sample_keeps_images_as_file_paths(official_dataset: Path) -> None:
    dataset, _ = build_dataset(official_dataset, None, {"mcq"})
    sample = dataset[1]
    assert sample.id == "q2" and sample.target == "C"
    message = sample.input[0]
    assert isinstance(message, ChatMessageUser) and not isinstance(message.content, str)
    images = [c.image for c in message.content if isinstance(c, ContentImage)]
    # The files sent are the bytes read at load (kept by digest), never the user's paths.
    assert [Path(image).read_bytes() for image in images] == [
        (official_dataset / "images/b.png").read_bytes(),
        (official_dataset / "images/c.png").read_bytes(),
    ]
    assert not any(image.startswith(str(official_dataset)) for image in images)
    assert not any(image.startswith("data:") for image in images)
    assert sample.metadata is not None
    assert sample.metadata["modality"] == "MR" and sample.metadata["organ_system"] == "Brain"


def test_shuffle_is_seeded_stable_and_maps_answers(official_dataset: Path) -> None:
    loaded = load_cases(official_dataset)
    case = loaded.cases[0]
    shown, label_map = shuffle_options(case, seed=3)
    again, _ = shuffle_options(case, seed=3)
    assert shown == again
    assert sorted(o["text"] for o in shown) == ["CT", "MRI", "Ultrasound"]
    sample = record_to_sample(case, loaded.resolved_images["q1"], shuffle_seed=3)
    assert sample.metadata is not None
    shown_ct = next(
        label
        for label, text in sample_options(sample.metadata, sample.choices or [])
        if text == "CT"
    )
    assert sample.target == shown_ct and label_map[shown_ct] == "A"
    different = {tuple(o["text"] for o in shuffle_options(case, seed=s)[0]) for s in range(20)}
    assert len(different) > 1


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    write_png(tmp_path / "data" / "ok.png")
    (tmp_path / "data" / "broken.png").write_bytes(b"not an image at all")
    write_png(tmp_path / "outside.png")
    os.symlink(tmp_path / "outside.png", tmp_path / "data" / "link.png")
    cases = [
        {"case_id": "dup", "task_type": "mcq", "question": "Q", "options": ["a", "b"]},
        {"case_id": "dup", "task_type": "mcq", "question": "Q", "options": ["a", "b"]},
        {"case_id": "badtype", "task_type": "essay", "question": "Q"},
        {"case_id": "noopts", "task_type": "mcq", "question": "Q"},
        {
            "case_id": "badlabel",
            "task_type": "mcq",
            "question": "Q",
            "options": ["a", "b"],
            "answer": "E",
        },
        {"case_id": "noquestion", "task_type": "open", "question": "  "},
        {"case_id": "missing", "task_type": "open", "question": "Q", "image_path": "nope.png"},
        {"case_id": "broken", "task_type": "open", "question": "Q", "image_path": "broken.png"},
        {"case_id": "dotdot", "task_type": "open", "question": "Q", "image_path": "../outside.png"},
        {
            "case_id": "absolute",
            "task_type": "open",
            "question": "Q",
            "image_path": str(tmp_path / "data" / "ok.png"),
        },
        {"case_id": "symlink", "task_type": "open", "question": "Q", "image_path": "link.png"},
    ]
    write_json(tmp_path / "data" / "cases.json", {"cases": cases})
    with pytest.raises(DatasetError) as error:
        load_cases(tmp_path / "data")
    assert problems_of(error) >= {
        ("dup", "case_id"),
        ("badtype", "task_type"),
        ("noopts", "options"),
        ("badlabel", "answer"),
        ("noquestion", "question"),
        ("missing", "image_paths"),
        ("broken", "image_paths"),
        ("dotdot", "image_paths"),
        ("absolute", "image_paths"),
        ("symlink", "image_paths"),
    }
    message = str(error.value)
    assert str(tmp_path / "data" / "cases.json") in message
    assert "resolves outside the data folder" in message and "absolute path" in message
    assert "not a decodable image" in message and "does not exist" in message


def test_a_data_folder_reached_through_a_link_confines_to_its_real_folder(
    tmp_path: Path,
) -> None:
    """The data folder's real path is resolved once per load: its images load through the
    link, and a path that leaves the real folder is still refused."""
    write_png(tmp_path / "real" / "images" / "a.png")
    write_png(tmp_path / "elsewhere.png")
    os.symlink(tmp_path / "real", tmp_path / "linked")
    cases = [
        {"case_id": "inside", "task_type": "open", "question": "Q", "image_path": "images/a.png"},
        {"case_id": "out", "task_type": "open", "question": "Q", "image_path": "../elsewhere.png"},
    ]
    write_json(tmp_path / "real" / "cases.json", {"cases": cases})
    with pytest.raises(DatasetError) as error:
        load_cases(tmp_path / "linked")
    assert problems_of(error) == {("out", "image_paths")}
    assert "resolves outside the data folder" in str(error.value)
    write_json(tmp_path / "real" / "cases.json", {"cases": cases[:1]})
    loaded = load_cases(tmp_path / "linked")
    [sent] = loaded.resolved_images["inside"]
    assert sent.read_bytes() == (tmp_path / "real" / "images" / "a.png").read_bytes()


def test_dotdot_that_stays_inside_is_fine(tmp_path: Path) -> None:
    write_png(tmp_path / "images" / "a.png")
    write_json(
        tmp_path / "cases.json",
        [
            {
                "case_id": "c",
                "task_type": "open",
                "question": "Q",
                "image_path": "images/../images/a.png",
            }
        ],
    )
    [sent] = load_cases(tmp_path).resolved_images["c"]
    assert sent.read_bytes() == (tmp_path / "images" / "a.png").read_bytes()


def test_decompression_bomb_is_refused(tmp_path: Path) -> None:
    from PIL import Image

    write_png(tmp_path / "big.png", size=(200, 200))
    write_json(
        tmp_path / "cases.json",
        [{"case_id": "bomb", "task_type": "open", "question": "Q", "image_path": "big.png"}],
    )
    previous = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = 1000  # 40,000 px is then more than twice the limit
    try:
        with pytest.raises(DatasetError, match="decompression bomb"):
            load_cases(tmp_path)
    finally:
        Image.MAX_IMAGE_PIXELS = previous


def test_ground_truth_problems(official_dataset: Path) -> None:
    write_json(
        official_dataset / "ground_truth.json",
        {
            "cases": [
                {"case_id": "q1", "task_type": "open", "answer": "x"},
                {"case_id": "ghost", "task_type": "mcq", "answer": "A"},
                {"case_id": "q2", "task_type": "mcq", "answer": "Z"},
            ]
        },
    )
    with pytest.raises(DatasetError) as error:
        load_cases(official_dataset)
    found = problems_of(error)
    assert ("q1", "task_type") in found or ("q1", "answer") in found
    assert ("ghost", "case_id") in found and ("q2", "answer") in found


def test_missing_data_path_is_clear(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file or folder"):
        load_cases(tmp_path / "nowhere.json")
    with pytest.raises(DatasetError, match=r"holds no cases\.json"):
        load_cases(tmp_path)


@pytest.mark.parametrize(
    ("alias", "expected"),
    [
        ("closed_ended", "mcq"),
        ("Multiple-Choice", "mcq"),
        ("closed", "mcq"),
        ("free_text", "open"),
        ("open-ended", "open"),
        ("free-text", "open"),
    ],
)
def test_task_type_aliases(alias: str, expected: str) -> None:
    assert normalise_task_type(alias) == expected


def test_shipped_sample_data_is_valid_and_diverse() -> None:
    loaded = load_cases(None)
    assert loaded.cases_file == sample_data_dir() / "cases.json"
    assert 20 <= len(loaded.cases) <= 40
    assert {c.task_type for c in loaded.cases} == {"mcq", "open"}
    modalities = {c.metadata.modality for c in loaded.cases}
    assert {
        "X-ray",
        "CT",
        "MR",
        "Ultrasound",
        "Nuclear medicine",
        "Fundus photography",
    } <= modalities
    assert all(c.answer for c in loaded.cases)
    assert any(len(c.image_paths) > 1 for c in loaded.cases)


@pytest.mark.skipif(not SHARED_OFFICIAL.is_dir(), reason="shared/reference not present")
def test_official_docker_test_cases_load() -> None:
    loaded = load_cases(SHARED_OFFICIAL / "docker-test")
    assert [c.case_id for c in loaded.cases] == ["case_mcq_001", "case_open_001"]
    assert loaded.cases[0].labels == ["A", "B", "C"]
    assert loaded.cases[1].image_paths == ["images/case_open_001.png"]
    assert loaded.cases[0].metadata.model_extra == {"split": "smoke"}


@pytest.mark.skipif(not SHARED_OFFICIAL.is_dir(), reason="shared/reference not present")
def test_official_evaluation_test_cases_only_lack_their_images() -> None:
    # That folder ships cases and ground truth but no images: the schema and the ground-truth
    # merge must pass, so the only complaints are the two missing image files.
    with pytest.raises(DatasetError) as error:
        load_cases(SHARED_OFFICIAL / "evaluation-test")
    assert problems_of(error) == {("case_mcq_001", "image_paths"), ("case_open_001", "image_paths")}
    assert all("does not exist" in p.message for p in error.value.problems)


def test_unreadable_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "cases.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"cases\.json: case '-': json:"):
        load_cases(tmp_path)
    lines = '{"case_id": "a", "task_type": "open", "question": "Q"}\n{broken\n'
    (tmp_path / "c.jsonl").write_text(lines, encoding="utf-8")
    with pytest.raises(DatasetError) as error:
        load_cases(tmp_path / "c.jsonl")
    assert problems_of(error) == {("line 2", "json")}
    write_json(
        tmp_path / "ok" / "cases.json", [{"case_id": "a", "task_type": "open", "question": "Q"}]
    )
    with pytest.raises(DatasetError, match="no such file"):
        load_cases(tmp_path / "ok", tmp_path / "missing_truth.json")


def test_every_case_problem_and_ground_truth_problem_together(official_dataset: Path) -> None:
    cases = json.loads((official_dataset / "cases.json").read_text())
    cases["cases"][0]["question"] = ""
    (official_dataset / "cases.json").write_text(json.dumps(cases))
    write_json(
        official_dataset / "ground_truth.json",
        {"cases": [{"case_id": "ghost", "task_type": "mcq", "answer": "A"}]},
    )
    with pytest.raises(DatasetError) as error:
        load_cases(official_dataset)
    assert problems_of(error) == {("q1", "question"), ("ghost", "case_id")}


@pytest.mark.parametrize(
    ("key", "suggestion"),
    [
        ("img_path", "image_path"),
        ("imagepath", "image_path"),
        ("Image-Path", "image_path"),
        ("optoins", "options"),
        ("anwser", "answer"),
        ("qestion", "question"),
        ("caseid", "case_id"),
        ("images", "image_paths"),
        ("choices", "options"),
        ("modalty", "modality"),
        ("organ_systen", "organ_system"),
    ],
)
def test_a_misspelt_key_is_refused_with_a_suggestion(
    official_dataset: Path, key: str, suggestion: str
) -> None:
    document = json.loads((official_dataset / "cases.json").read_text())
    document["cases"][3][key] = "images/a.png"
    (official_dataset / "cases.json").write_text(json.dumps(document))
    with pytest.raises(DatasetError) as error:
        load_cases(official_dataset)
    assert (key, "o1") in {(p.field, p.case_id) for p in error.value.problems}
    assert f"did you mean {suggestion!r}" in str(error.value)


def test_other_unknown_keys_are_kept_listed_and_logged(
    official_dataset: Path, caplog: pytest.LogCaptureFixture
) -> None:
    document = json.loads((official_dataset / "cases.json").read_text())
    for case in document["cases"]:
        case["question_id"] = f"Q-{case['case_id']}"
    document["cases"][0]["answer_type"] = "CLOSED"
    (official_dataset / "cases.json").write_text(json.dumps(document))
    with caplog.at_level("WARNING"):
        loaded = load_cases(official_dataset)
    assert loaded.unknown_keys == {"question_id": 4, "answer_type": 1}
    assert loaded.cases[0].metadata.model_extra == {"question_id": "Q-q1", "answer_type": "CLOSED"}
    [warning] = [r.getMessage() for r in caplog.records if "does not know" in r.getMessage()]
    assert "'question_id' (4 cases)" in warning and "'answer_type' (1 cases)" in warning
    task = mcq(data=str(official_dataset))
    assert task.metadata is not None
    assert task.metadata["data"]["unknown_keys"] == {"question_id": 4, "answer_type": 1}


def test_ground_truth_typos_and_missing_mcq_answers_are_refused(official_dataset: Path) -> None:
    truth = json.loads((official_dataset / "ground_truth.json").read_text())
    truth["cases"][0] = {"case_id": "q1", "task_type": "mcq", "anwser": "A"}
    del truth["cases"][1]["answer"]
    (official_dataset / "ground_truth.json").write_text(json.dumps(truth))
    with pytest.raises(DatasetError) as error:
        load_cases(official_dataset)
    found = problems_of(error)
    assert ("q1", "anwser") in found and ("q1", "answer") in found and ("q2", "answer") in found


def test_ground_truth_that_gives_no_case_a_reference_stops_the_run(official_dataset: Path) -> None:
    truth = {"cases": [{"case_id": "o1", "task_type": "open"}]}
    (official_dataset / "ground_truth.json").write_text(json.dumps(truth))
    with pytest.raises(DatasetError, match="none of the 1 open cases has a reference answer"):
        open_ended(data=str(official_dataset))


def test_unknown_ground_truth_keys_are_reported_not_ignored(
    official_dataset: Path, caplog: pytest.LogCaptureFixture
) -> None:
    truth = json.loads((official_dataset / "ground_truth.json").read_text())
    truth["cases"][0]["explanation"] = "The CT window is used."
    (official_dataset / "ground_truth.json").write_text(json.dumps(truth))
    with caplog.at_level("WARNING"):
        loaded = load_cases(official_dataset)
    assert loaded.unknown_keys == {"ground_truth.explanation": 1}
    assert any("'ground_truth.explanation' (1 cases)" in r.getMessage() for r in caplog.records)


def test_a_folder_of_several_splits_is_refused_not_read_as_one(tmp_path: Path) -> None:
    case = {"case_id": "c1", "task_type": "open", "question": "What is shown?"}
    write_json(tmp_path / "train.json", [case])
    write_json(tmp_path / "validation.json", [{**case, "case_id": "c2"}])
    with pytest.raises(
        DatasetError, match=r"several splits \(train: train.json; validation: validation.json\)"
    ):
        load_cases(tmp_path, check_images=False)
    # an MCQ and an open file of one split are read together
    (tmp_path / "train.json").unlink()
    write_json(tmp_path / "validation_open.json", [{**case, "case_id": "c3"}])
    loaded = load_cases(tmp_path, check_images=False)
    assert sorted(case.case_id for case in loaded.cases) == ["c2", "c3"]


def test_a_data_path_that_is_not_utf8_is_a_message_in_every_loader(tmp_path: Path) -> None:
    """The eval log and the decode records hold paths as UTF-8 text: a folder whose name is
    not is refused up front with the bytes shown, by every family's loader alike."""
    import os

    from inspect_medreason.core.hub import load_rows
    from inspect_medreason.core.loaders import DatasetError, load_cases
    from inspect_medreason.med_cmr.dataset import locate_release
    from inspect_medreason.vqa.dataset import VQA_RAD

    folder = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/data-\xff"))
    folder.mkdir()
    for load in (
        lambda: load_cases(folder),
        lambda: load_rows(str(folder), VQA_RAD.hub),
        lambda: locate_release(str(folder)),
    ):
        with pytest.raises(DatasetError) as raised:
            load()
        assert "data-\\xff" in str(raised.value) and "not UTF-8" in str(raised.value)
