"""Shifts on the tasks: the log records the shift, every sample's images are the degraded
ones, the vision judge sees the clean image by default and the degraded one when asked, every
image task takes the arguments, and a bad value stops the task before any data is read."""

from __future__ import annotations

import base64
import inspect as pyinspect
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import scripted_output, user_text, write_json
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ChatMessageUser, ContentImage, ModelOutput, get_model
from PIL import Image
from utils.published_schemas import vqa_rad_parquet

from inspect_medreason.cmb.cmb import cmb_clin, cmb_exam
from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.shift import SHIFTS
from inspect_medreason.gemex.gemex import gemex
from inspect_medreason.med_cmr.med_cmr import med_cmr
from inspect_medreason.medreason.medreason import mcq, medreason, open_ended
from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm
from inspect_medreason.vqa.vqa import medreason_vqa_rad, path_vqa, slake

SHIFT_ARGUMENTS = ("shift", "severity", "shift_seed", "shift_judge_image")


def pixels_of(image: str) -> np.ndarray:
    """A data URI's or a file's pixels."""
    if image.startswith("data:"):
        data = base64.b64decode(image.split(",", 1)[1])
        return np.asarray(Image.open(io.BytesIO(data)))
    return np.asarray(Image.open(image))


def images_in(messages: list[ChatMessage]) -> list[str]:
    return [
        part.image
        for message in messages
        if isinstance(message, ChatMessageUser) and not isinstance(message.content, str)
        for part in message.content
        if isinstance(part, ContentImage)
    ]


def textured_png(path: Path, seed: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pixels = (np.random.default_rng(seed).random((64, 64)) * 200 + 20).astype(np.uint8)
    Image.fromarray(pixels, mode="L").save(path)
    return path


@pytest.fixture
def shift_data(tmp_path: Path) -> Path:
    """Two MCQ cases (CT, MR), one X-ray open case, one case of no named modality."""
    folder = tmp_path / "data"
    for index, name in enumerate(("ct.png", "mr.png", "xr.png", "other.png")):
        textured_png(folder / name, index)
    options = [{"label": "A", "text": "Yes"}, {"label": "B", "text": "No"}]
    cases = [
        {"case_id": "ct1", "task_type": "mcq", "question": "Q ct1?", "image_path": "ct.png",
         "options": options, "metadata": {"modality": "CT"}},
        {"case_id": "mr1", "task_type": "mcq", "question": "Q mr1?", "image_path": "mr.png",
         "options": options, "metadata": {"modality": "MRI"}},
        {"case_id": "xr1", "task_type": "open", "question": "Q xr1?", "image_path": "xr.png",
         "metadata": {"modality": "X-ray"}},
        {"case_id": "un1", "task_type": "mcq", "question": "Q un1?", "image_path": "other.png",
         "options": options},
    ]  # fmt: skip
    truth = [
        {"case_id": "ct1", "task_type": "mcq", "answer": "A"},
        {"case_id": "mr1", "task_type": "mcq", "answer": "A"},
        {"case_id": "xr1", "task_type": "open", "answer": "A nodule."},
        {"case_id": "un1", "task_type": "mcq", "answer": "B"},
    ]
    write_json(folder / "cases.json", {"cases": cases})
    write_json(folder / "ground_truth.json", {"cases": truth})
    return folder


class Recorder:
    """A model and a vision judge that remember the images they were sent."""

    def __init__(self) -> None:
        self.model_images: dict[str, list[str]] = {}
        self.judge_images: list[str] = []

    def model(self, messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        case = next(c for c in ("ct1", "mr1", "xr1", "un1") if c in text)
        self.model_images[case] = images_in(messages)
        return scripted_output(
            json.dumps({"reasoning_trace": "The image is noisy.", "answer": "A"})
        )

    def vision(self, messages: list[ChatMessage], *_: Any) -> ModelOutput:
        self.judge_images.extend(images_in(messages))
        return scripted_output('{"score": 3, "rationale": "ok"}')

    def text(self, messages: list[ChatMessage], *_: Any) -> ModelOutput:
        return scripted_output('{"score": 3, "rationale": "ok"}')


def shift_record(log: EvalLog) -> dict[str, Any]:
    assert log.eval.metadata is not None
    record: dict[str, Any] = log.eval.metadata["shift"]
    return record


def run(task: Any, recorder: Recorder, tmp_path: Path) -> EvalLog:
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=recorder.model),
        model_roles={
            "grader": get_model("mockllm/model", custom_outputs=recorder.text, memoize=False),
            "vision_grader": get_model(
                "mockllm/model", custom_outputs=recorder.vision, memoize=False
            ),
        },
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return log


def test_a_shifted_run_records_the_shift_and_sends_only_degraded_images(
    shift_data: Path, tmp_path: Path
) -> None:
    recorder = Recorder()
    log = run(
        medreason(
            data=str(shift_data),
            shift="noise",
            severity=2,
            shift_seed=5,
            shift_judge_image="degraded",
        ),
        recorder,
        tmp_path,
    )
    record = shift_record(log)
    assert (record["name"], record["severity"], record["seed"]) == ("noise", 2, 5)
    assert record["parameters"]["ct"] == {
        "model": "ct_quantum",
        "dose_fraction": 0.15,
        "photons_per_reference_pixel": 10000.0,
        "reference_matrix": 512,
        "water_line_integral": 2.0,
        "picture_window_hu": [40.0, 400.0],
    }
    assert record["parameters"]["xray"]["max_line_integral"] == 4.0
    assert record["parameters"]["mr"]["snr"] == 10.0 and record["judge_image"] == "degraded"
    assert log.samples is not None
    models = {str(s.id): s.metadata["shift"]["model"] for s in log.samples}
    assert models == {
        "ct1": "ct_quantum",
        "mr1": "rician",
        "xr1": "poisson_transmission",
        "un1": "poisson_linear",
    }
    assert {str(s.id): s.metadata["shift"]["modality_class"] for s in log.samples}["un1"] == (
        "unknown"
    )
    names = {"ct1": "ct.png", "mr1": "mr.png", "xr1": "xr.png", "un1": "other.png"}
    for case, images in recorder.model_images.items():
        [image] = images
        seen, clean = pixels_of(image), pixels_of(str(shift_data / names[case]))
        assert seen.shape == clean.shape and not np.array_equal(seen, clean), case
    # asked for the degraded image, the vision judge saw what the model saw
    assert recorder.judge_images
    assert all(
        np.array_equal(pixels_of(j), pixels_of(recorder.model_images["xr1"][0]))
        for j in recorder.judge_images
    )


def test_the_same_seed_gives_the_same_images_and_another_seed_others(
    shift_data: Path, tmp_path: Path
) -> None:
    seen = []
    for seed in (1, 1, 2):
        recorder = Recorder()
        run(
            mcq(data=str(shift_data), shift="rician", severity=1, shift_seed=seed),
            recorder,
            tmp_path,
        )
        seen.append(pixels_of(recorder.model_images["mr1"][0]))
    assert np.array_equal(seen[0], seen[1]) and not np.array_equal(seen[0], seen[2])


def test_the_vision_judge_sees_the_clean_image_by_default(shift_data: Path, tmp_path: Path) -> None:
    recorder = Recorder()
    log = run(open_ended(data=str(shift_data), shift="blur", severity=3), recorder, tmp_path)
    assert shift_record(log)["judge_image"] == "clean"
    clean = pixels_of(str(shift_data / "xr.png"))
    assert not np.array_equal(pixels_of(recorder.model_images["xr1"][0]), clean)
    assert recorder.judge_images
    assert all(np.array_equal(pixels_of(j), clean) for j in recorder.judge_images)


def test_a_clean_run_records_severity_zero_and_sends_the_files_as_they_are(
    shift_data: Path, tmp_path: Path
) -> None:
    recorder = Recorder()
    log = run(mcq(data=str(shift_data)), recorder, tmp_path)
    assert shift_record(log)["name"] is None
    assert shift_record(log)["severity"] == 0
    assert np.array_equal(
        pixels_of(recorder.model_images["ct1"][0]), pixels_of(str(shift_data / "ct.png"))
    )


def test_an_unknown_shift_stops_the_task_with_the_valid_names(shift_data: Path) -> None:
    with pytest.raises(TaskArgumentError) as refused:
        mcq(data=str(shift_data), shift="fog", severity=9)
    assert all(name in str(refused.value) for name in SHIFTS)
    assert "0 (clean), 1, 2, 3" in str(refused.value)


@pytest.mark.parametrize(
    "task",
    [mcq, open_ended, medreason, med_cmr, medreason_vqa_rad, slake, path_vqa, medxpertqa_mm, gemex],
)
def test_every_image_task_takes_the_shift_arguments(task: Any) -> None:
    parameters = pyinspect.signature(task).parameters
    assert all(name in parameters for name in SHIFT_ARGUMENTS), task


@pytest.mark.parametrize("task", [cmb_exam, cmb_clin])
def test_cmb_has_no_images_and_no_shift(task: Any) -> None:
    assert not any(name in pyinspect.signature(task).parameters for name in SHIFT_ARGUMENTS)


def test_a_family_task_runs_shifted_end_to_end(tmp_path: Path) -> None:
    # textured: JPEG leaves a uniform grey as it is (refused: a shift that did not happen)
    data = vqa_rad_parquet(tmp_path / "vqa_rad", textured=True)
    [log] = eval(
        medreason_vqa_rad(data=str(data), shift="jpeg", severity=3),
        model="mockllm/model",
        model_roles={"grader": "mockllm/model"},
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert shift_record(log)["parameters"]["unknown"]["quality"] == 7
    assert log.samples and all(s.metadata["shift"]["model"] == "jpeg" for s in log.samples)


def test_a_grid_of_shifts_and_severities_runs_in_one_task(shift_data: Path, tmp_path: Path) -> None:
    recorder = Recorder()
    log = run(
        mcq(data=str(shift_data), shift=["noise", "blur"], severity=[0, 1, 3], shift_seed=4),
        recorder,
        tmp_path,
    )
    record = shift_record(log)
    assert record["name"] == ["blur", "noise"] and record["severity"] == [0, 1, 3]
    assert set(record["parameters"]) == {"noise:1", "noise:3", "blur:1", "blur:3"}
    assert log.samples is not None
    ids = {str(s.id) for s in log.samples}
    assert "ct1" in ids and "ct1@noise-3" in ids and "un1@blur-1" in ids
    assert len(ids) == 3 * 5  # three MCQ cases, clean and four shifted
    by_id = {str(s.id): s.metadata["shift"] for s in log.samples}
    assert by_id["ct1"]["name"] is None and by_id["ct1@blur-3"]["case"] == "ct1"
    assert by_id["mr1@noise-1"]["model"] == "rician"


def test_a_judge_reading_images_again_gets_them_degraded_as_the_model_did(
    tmp_path: Path,
) -> None:
    from inspect_medreason.core.images import ImagePathError
    from inspect_medreason.core.shift import judge_image_files
    from inspect_medreason.core.shift.degrade import degraded_path

    image = textured_png(tmp_path / "x.png")
    record = {"name": "blur", "severity": 2, "model": "gaussian_blur", "seed": 3, "case": "c1"}
    degraded = {"shift": record, "shift_judge_image": "degraded"}
    [again] = judge_image_files([image], degraded, "c1@blur-2")
    assert again == degraded_path(image, "gaussian_blur", 2, 3, "c1", 0)
    assert judge_image_files([image], {**degraded, "shift_judge_image": "clean"}, "c1") == [image]
    assert judge_image_files([image], {}, "c1") == [image]  # not a shifted run
    with pytest.raises(ImagePathError, match="cannot be read"):
        judge_image_files([image], {**degraded, "shift": {**record, "severity": 9}}, "c1")


def test_a_dicom_case_is_degraded_in_hounsfield_units_before_its_window(tmp_path: Path) -> None:
    import math

    import pydicom
    from utils.dicom_fixtures import write_dicom

    from inspect_medreason.core.shift.catalog import DOSE_FRACTIONS, PHOTONS_PER_REFERENCE_PIXEL
    from inspect_medreason.core.shift.noise import ct_noise_sigma_hu

    folder = tmp_path / "data"
    folder.mkdir()
    raw = np.full((128, 192), 1064, dtype=np.uint16)  # 40 HU soft tissue
    raw[:, :64], raw[:, 128:] = 24, 1424  # air (-1000 HU) and bone (400 HU)
    path = write_dicom(folder / "ct.dcm", raw, window=(40, 400))
    dataset = pydicom.dcmread(path)
    dataset.RescaleIntercept, dataset.RescaleSlope = -1024, 1
    dataset.save_as(path)
    options = [{"label": "A", "text": "Yes"}, {"label": "B", "text": "No"}]
    case = {"case_id": "d1", "task_type": "mcq", "question": "Q ct1?", "image_path": "ct.dcm",
            "options": options, "answer": "A", "metadata": {"modality": "CT"}}  # fmt: skip
    write_json(folder / "cases.json", {"cases": [case]})
    recorder = Recorder()
    run(mcq(data=str(folder), shift="noise", severity=2), recorder, tmp_path)
    seen = pixels_of(recorder.model_images["ct1"][0]).astype(float)
    # smaller than the reference matrix: each pixel gets the reference pixel's dose
    sigma_hu = ct_noise_sigma_hu(DOSE_FRACTIONS[2], PHOTONS_PER_REFERENCE_PIXEL, 2.0)
    assert sigma_hu == pytest.approx(
        math.sqrt(math.exp(2.0) / (DOSE_FRACTIONS[2] * PHOTONS_PER_REFERENCE_PIXEL)) * 500
    )
    # the noise is in HU, shown through the clean image's 40/400 window
    assert seen[:, 70:122].std() == pytest.approx(sigma_hu * 255 / 400, rel=0.15)


def test_a_shift_without_a_severity_stops_the_task(shift_data: Path) -> None:
    # the tasks' default severity is 0: `-T shift=noise` alone used to run clean, unsaid
    with pytest.raises(TaskArgumentError, match="needs a severity"):
        mcq(data=str(shift_data), shift="noise")


def test_a_shift_with_the_images_withheld_stops_the_task(shift_data: Path) -> None:
    # with images=false the log said "blur 2" of a run no image went through
    for task in (mcq, open_ended):
        with pytest.raises(TaskArgumentError, match="images=false"):
            task(data=str(shift_data), shift="blur", severity=2, images=False)


def image_of_kind(kind: str, folder: Path) -> Path:
    """One 48-px textured image of each kind a case may hold, as the loader sends it."""
    from utils.dicom_fixtures import write_colour_dicom, write_dicom

    from inspect_medreason.core.dicom import dicom_as_png

    generator = np.random.default_rng(11)
    grey = generator.random((48, 48)) * 0.6 + 0.2
    rgb = np.stack([grey, grey**1.5, 1 - grey], axis=-1)
    if kind == "grey png":
        return textured_png(folder / "grey.png")
    if kind == "rgb png":
        path = folder / "rgb.png"
        Image.fromarray((rgb * 255).astype(np.uint8), mode="RGB").save(path)
        return path
    if kind == "16-bit png":
        path = folder / "deep.png"
        Image.fromarray((grey * 65535).astype("<u2")).save(path)  # Pillow: I;16
        return path
    if kind.startswith("dicom MONOCHROME"):
        raw = (grey * 3000).astype(np.uint16)
        photometric = kind.split()[1]
        path = write_dicom(folder / f"{photometric}.dcm", raw, photometric, rescale=(1.0, -1024.0))
        return dicom_as_png(path)
    photometric = kind.split()[1]
    return dicom_as_png(write_colour_dicom(folder / f"{photometric}.dcm", rgb * 255, photometric))


KINDS = [
    "grey png",
    "rgb png",
    "16-bit png",
    "dicom MONOCHROME1",
    "dicom MONOCHROME2",
    "dicom RGB",
    "dicom YBR_FULL",
]


@pytest.mark.parametrize("kind", KINDS)
def test_every_shift_changes_every_kind_of_image(kind: str, tmp_path: Path) -> None:
    # a colour DICOM used to be sent clean under noise, blur, downsample, bias field,
    # ghosting and Rician noise while the log recorded them
    from inspect_medreason.core.shift import MODEL_PARAMETERS
    from inspect_medreason.core.shift.degrade import degraded_path

    tmp_path.mkdir(exist_ok=True)
    clean_path = image_of_kind(kind, tmp_path)
    clean = np.asarray(Image.open(clean_path))
    colour = kind in ("rgb png", "dicom RGB", "dicom YBR_FULL")
    for model in sorted(MODEL_PARAMETERS):
        for severity in (1, 3):
            if model == "hed_jitter" and not colour:
                with pytest.raises(ValueError, match="colour"):
                    degraded_path(clean_path, model, severity, 0, "c", 0)
                continue
            seen = np.asarray(Image.open(degraded_path(clean_path, model, severity, 0, "c", 0)))
            assert seen.shape[:2] == clean.shape[:2], (kind, model)
            assert seen.shape != clean.shape or not np.array_equal(seen, clean), (kind, model)


def dicom_sample(png: Path, name: str) -> Any:
    from inspect_ai.dataset import Sample

    turn = ChatMessageUser(content=[ContentImage(image=str(png))])
    return Sample(id="c1", input=[turn], target="A", metadata={"image_paths": [name]})


def test_ct_noise_on_a_dicom_without_rescale_tags_is_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    from utils.dicom_fixtures import write_dicom

    from inspect_medreason.core.dicom import dicom_as_png
    from inspect_medreason.core.shift import ShiftError, parse_shift
    from inspect_medreason.core.shift.dataset import shift_sample

    # stored values 0-3000 with no rescale: read as HU they were 2.8x too noisy, unsaid
    raw = (np.random.default_rng(1).random((64, 64)) * 3000).astype(np.uint16)
    png = dicom_as_png(write_dicom(tmp_path / "scan.dcm", raw, window=(1000, 2000)))
    [spec] = parse_shift("noise", 2, 0, "degraded", "CT").specs
    with pytest.raises(ShiftError) as refused:
        shift_sample(dicom_sample(png, "images/scan.dcm"), spec)
    message = str(refused.value)
    assert "'c1'" in message and "images/scan.dcm" in message
    assert "Hounsfield" in message and "RescaleSlope" in message
    # every other shift reads no HU and runs
    [blur] = parse_shift("blur", 2, 0, "degraded", "CT").specs
    shift_sample(dicom_sample(png, "images/scan.dcm"), blur)


def test_an_image_a_shift_cannot_change_is_refused_naming_it(tmp_path: Path) -> None:
    from inspect_medreason.core.shift import ShiftError, parse_shift
    from inspect_medreason.core.shift.dataset import shift_sample

    flat = tmp_path / "flat.png"
    Image.new("L", (64, 64), 90).save(flat)
    [spec] = parse_shift("blur", 1, 0).specs
    with pytest.raises(ShiftError) as refused:
        shift_sample(dicom_sample(flat, "flat.png"), spec)
    message = str(refused.value)
    assert "'c1'" in message and "flat.png" in message and "unchanged" in message
    assert "every pixel has the same value" in message


def test_two_dicoms_with_one_windowed_picture_are_each_degraded_from_their_own_values(
    tmp_path: Path,
) -> None:
    from utils.dicom_fixtures import write_dicom

    from inspect_medreason.core.dicom import converted_from
    from inspect_medreason.core.images import ImageStore
    from inspect_medreason.core.loaders import prepare_image_file
    from inspect_medreason.core.shift.degrade import degraded_path

    # the same picture through a 40/400 window: they differ only in bone, white in both
    base = np.full((64, 64), 1064, dtype=np.uint16)
    base[:, 40:] = 1624
    other = base.copy()
    other[:, 40:] = 3024
    for name, raw in (("a.dcm", base), ("b.dcm", other)):
        write_dicom(tmp_path / name, raw, window=(40, 400), rescale=(1.0, -1024.0))
    with ImageStore() as store:
        first = prepare_image_file(tmp_path, "a.dcm", store)
        second = prepare_image_file(tmp_path, "b.dcm", store)
    assert np.array_equal(np.asarray(Image.open(first.path)), np.asarray(Image.open(second.path)))
    # two files sent, each remembered as made from its own DICOM
    assert first.path != second.path
    assert converted_from(first.path) == (tmp_path / "a.dcm", None)
    assert converted_from(second.path) == (tmp_path / "b.dcm", None)
    # blurred in HU, the brighter bone spreads further into the tissue
    blurred = [
        np.asarray(Image.open(degraded_path(p.path, "gaussian_blur", 3, 0, "c", 0)), float)
        for p in (first, second)
    ]
    assert blurred[1][:, 30:40].mean() > blurred[0][:, 30:40].mean() + 1


def test_an_image_the_judge_cannot_get_degraded_again_is_refused_as_a_shift_error(
    tmp_path: Path,
) -> None:
    from inspect_medreason.core.shift import ShiftError, judge_image_files

    flat = tmp_path / "flat.png"
    Image.new("L", (32, 32), 90).save(flat)
    record = {"name": "blur", "severity": 1, "model": "gaussian_blur", "seed": 0, "case": "c1"}
    # a ShiftError is an image refused to the judge (that component unscored), never a crash
    with pytest.raises(ShiftError, match="unchanged"):
        judge_image_files([flat], {"shift": record, "shift_judge_image": "degraded"}, "c1")
