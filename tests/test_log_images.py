"""``--no-log-images`` logs no image: every family, a shifted run, the blind control, a DICOM
case, ``inspect score`` re-judging and eval-retry, in either log format, hold no image bytes
and no data URI in any string (the scan decodes base64 at every alignment); and the bytes a
sample costs are a budget, on incompressible images."""

from __future__ import annotations

import base64
import json
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import official_dataset as official_dataset
from conftest import scripted_output, write_json
from inspect_ai import eval, eval_retry
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from PIL import Image
from utils.dicom_fixtures import FILE_WINDOWS, RAW, write_dicom
from utils.inspect_cli import child_env, run_inspect
from utils.log_scan import family_tasks, image_traces, images_in_log
from utils.openai_stub import openai_stub
from utils.rated_logs import SECRET_RATIONALE, write_cases

from inspect_medreason.core.rescored_images import RESCORED_IMAGE_PLACEHOLDER
from inspect_medreason.core.solvers import RUN_SYSTEM_MESSAGE, SYSTEM_PROMPT_KEY
from inspect_medreason.medreason.medreason import mcq, open_ended

FORMATS = ["eval", "json"]


def run_without_images(
    task: Any, roles: dict[str, str] | None, logs: Path, log_format: str
) -> Path:
    [log] = eval(
        task,
        model="mockllm/model",
        model_roles={role: get_model(model) for role, model in (roles or {}).items()} or None,
        limit=4,
        log_images=False,
        log_format=log_format,  # type: ignore[arg-type]
        display="none",
        log_dir=str(logs),
    )
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.mark.parametrize("log_format", FORMATS)
@pytest.mark.parametrize("family", list(family_tasks(Path("."))))
def test_no_family_logs_an_image(
    family: str, log_format: str, official_dataset: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    make_task, roles = family_tasks(official_dataset)[family]
    log_file = run_without_images(make_task(), roles, tmp_path_factory.mktemp("logs"), log_format)
    assert log_file.suffix == f".{log_format}"
    found = images_in_log(log_file)
    assert not found, "\n".join(found[:20])


def test_the_scan_finds_each_image_form(tmp_path: Path) -> None:
    """The scan can fail: a PNG, a JPEG and a DICOM, as data URIs, bare base64 (at each
    alignment inside a payload) and raw, are each found; text is not."""
    png, jpeg = tmp_path / "a.png", tmp_path / "a.jpg"
    Image.new("RGB", (8, 8), (10, 20, 30)).save(png)
    Image.new("RGB", (8, 8), (10, 20, 30)).save(jpeg)
    dicom = write_dicom(tmp_path / "a.dcm", RAW)
    for path, name in ((png, "PNG"), (jpeg, "JPEG"), (dicom, "DICOM")):
        data = path.read_bytes()
        for prefix in (b"", b"x", b"xy", b"xyz"):
            encoded = base64.b64encode(prefix + data).decode()
            assert f"{name} bytes in base64" in image_traces(f"payload {encoded} end")
        assert image_traces(f"data:image/png;base64,{base64.b64encode(data).decode()}")
        assert f"raw {name} bytes" in image_traces(data.decode("latin-1"))
    assert image_traces("A round density in the left upper lobe; no fracture.") == []
    assert image_traces("attachment://63bc0d921448df239fc0a0e93b339d03") == []


def test_a_log_with_images_is_found_by_the_scan(official_dataset: Path, tmp_path: Path) -> None:
    """The same run with images logged fails the scan (the test above can fail)."""
    [log] = eval(
        mcq(data=str(official_dataset)),
        model="mockllm/model",
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success"
    assert images_in_log(Path(log.location))


def dicom_data(root: Path) -> Path:
    """Two open cases, the first on a CT DICOM, the second on a PNG."""
    data = write_cases(root, 2)
    write_dicom(data / "images/i0.dcm", RAW, rescale=(1.0, -1024.0), windows=FILE_WINDOWS)
    cases = json.loads((data / "cases.json").read_text())
    cases["cases"][0]["image_path"] = "images/i0.dcm"
    (data / "cases.json").write_text(json.dumps(cases))
    return data


@pytest.mark.parametrize("log_format", FORMATS)
def test_a_dicom_case_logs_no_image(tmp_path: Path, log_format: str) -> None:
    data = dicom_data(tmp_path / "data")
    log_file = run_without_images(
        open_ended(data=str(data)),
        {"grader": "mockllm/model", "vision_grader": "mockllm/model"},
        tmp_path / "logs",
        log_format,
    )
    log = read_eval_log(str(log_file))
    assert log.samples and log.samples[0].metadata["image_paths"] == ["images/i0.dcm"]
    assert not images_in_log(log_file)


@pytest.mark.parametrize("blind", [False, True], ids=["images", "blind"])
def test_inspect_score_rejudging_adds_no_image(tmp_path: Path, blind: bool) -> None:
    """``inspect score`` has no --no-log-images: the judges are sent the images read again
    from the data folder, and the re-scored log holds none of them (a placeholder)."""
    data = dicom_data(tmp_path / "data")
    logs = tmp_path / "logs"
    env = child_env()
    run_inspect(
        [
            "eval",
            "inspect_medreason/open_ended",
            "-T",
            f"data={data}",
            *(["-T", "images=false"] if blind else []),
            "--model",
            "medreason/pipeline-check",
            "--no-score",
            "--no-log-images",
            "--log-dir",
            str(logs),
        ],
        env,
    )
    [log_file] = list(logs.glob("*.eval"))
    sent: list[str] = []

    def judge(request: dict[str, Any]) -> str:
        sent.extend(
            part["image_url"]["url"]
            for message in request["messages"]
            if isinstance(message["content"], list)
            for part in message["content"]
            if part.get("type") == "image_url"
        )
        return json.dumps({"score": 3, "rationale": SECRET_RATIONALE})

    with openai_stub("judge", judge) as (url, _requests):
        run_inspect(
            [
                "score",
                str(log_file),
                "--scorer",
                "inspect_medreason/open_ended_scorer",
                "-S",
                f"data_dir={data}",
                "--model-role",
                "grader=openai-api/stub/judge",
                "--model-role",
                "vision_grader=openai-api/stub/judge",
                "--action",
                "overwrite",
                "--overwrite",
            ],
            {**env, "STUB_BASE_URL": url},
        )
    assert len(sent) == 4 and all(uri.startswith("data:image/png") for uri in sent)
    rescored = read_eval_log(str(log_file))
    assert rescored.samples is not None
    values = [s.scores["open_ended_scorer"].value for s in rescored.samples if s.scores]
    assert len(values) == 2 and all(isinstance(v, dict) and v["va_answer"] == 3 for v in values)
    found = images_in_log(log_file)
    assert not found, "\n".join(found[:20])
    assert RESCORED_IMAGE_PLACEHOLDER in json.dumps(rescored.samples[0].model_dump(mode="json"))


def test_eval_retry_logs_no_image(official_dataset: Path, tmp_path: Path) -> None:
    """A run that failed on a case, retried: the retried log keeps --no-log-images."""
    failing = {"on": True}

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        if failing["on"] and "(q2)" in " ".join(m.text for m in messages):
            raise RuntimeError("provider down")
        return scripted_output(json.dumps({"reasoning_trace": "r", "answer": "A"}))

    model = get_model("mockllm/model", custom_outputs=respond, memoize=False)
    [log] = eval(
        mcq(data=str(official_dataset)),
        model=model,
        log_images=False,
        display="none",
        log_dir=str(tmp_path),
        retry_on_error=0,
    )
    assert log.status == "error"
    failing["on"] = False
    [retried] = eval_retry(log, display="none", log_dir=str(tmp_path / "retry"))
    assert retried.status == "success", retried.error
    found = images_in_log(Path(retried.location))
    assert not found, "\n".join(found[:20])


def noise_cases(folder: Path, count: int, task_type: str, side: int = 384) -> Path:
    """``count`` cases in the official layout, each on its own noise PNG (incompressible:
    any image byte that leaks into a log shows at full size)."""
    rng = np.random.default_rng(0)
    (folder / "images").mkdir(parents=True)
    cases, truth = [], []
    for index in range(count):
        name = f"images/n{index:03d}.png"
        pixels = rng.integers(0, 256, size=(side, side, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / name)
        case: dict[str, Any] = {
            "case_id": f"n{index:03d}",
            "task_type": task_type,
            "image_path": name,
            "question": f"Which finding is shown? [c{index:02d}]",
        }
        if task_type == "mcq":
            case["options"] = ["nodule", "effusion", "fracture", "normal"]
        cases.append(case)
        answer = "ABCD"[index % 4] if task_type == "mcq" else "A small nodule."
        truth.append({"case_id": case["case_id"], "task_type": task_type, "answer": answer})
    write_json(folder / "cases.json", {"cases": cases})
    write_json(folder / "ground_truth.json", {"cases": truth})
    return folder


# Bytes a sample may cost in a log written with --no-log-images (issue 60).
BUDGET = {"open": 7_000, "mcq": 4_000}
REPLY = {
    "mcq": {"reasoning_trace": "A round, well-defined density in the left lung.", "answer": "A"},
    "open": {
        "reasoning_trace": "A round, well-defined density in the left upper lobe, no effusion.",
        "answer": "A small pulmonary nodule in the left upper lobe.",
    },
}


@pytest.mark.parametrize("track", ["mcq", "open"])
def test_log_bytes_per_sample_are_within_budget(tmp_path: Path, track: str) -> None:
    cases = 40
    data = noise_cases(tmp_path / "data", cases, track)
    output = scripted_output(json.dumps(REPLY[track]))
    model = get_model("mockllm/model", custom_outputs=lambda *_: output, memoize=False)
    verdict = scripted_output(
        json.dumps({"score": 3, "rationale": "The answer names the nodule the image shows."})
    )
    judge = get_model("mockllm/judge", custom_outputs=lambda *_: verdict, memoize=False)
    task = mcq(data=str(data)) if track == "mcq" else open_ended(data=str(data))
    [log] = eval(
        task,
        model=model,
        model_roles={"grader": judge, "vision_grader": judge} if track == "open" else None,
        log_images=False,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == cases
    log_file = Path(log.location)
    assert not images_in_log(log_file)
    # What each sample costs: its entry in the .eval archive, as written (compressed). The
    # log's other entries (Inspect's header, journal and summaries) are perf/README.md's.
    with zipfile.ZipFile(log_file) as archive:
        entries = [i.compress_size for i in archive.infolist() if i.filename.startswith("samples/")]
    assert len(entries) == cases
    assert max(entries) <= BUDGET[track], f"{max(entries):,} B the largest sample"
    image_bytes = (data / "images/n000.png").stat().st_size
    assert image_bytes > 40 * BUDGET[track]  # a leaked image could not hide in the budget


def test_the_runs_system_message_replaces_the_tracks_and_logs_no_image(
    official_dataset: Path, tmp_path: Path
) -> None:
    seen: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        seen.append(list(messages))
        return scripted_output(json.dumps({"reasoning_trace": "r", "answer": "A"}))

    [log] = eval(
        mcq(data=str(official_dataset)),
        model="mockllm/model",  # by name: Inspect gives it the run's config
        model_args={"custom_outputs": respond},
        system_message="You are a terse radiologist.",
        log_images=False,
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success" and log.samples
    for messages in seen:
        systems = [m.text for m in messages if m.role == "system"]
        assert systems == ["You are a terse radiologist."]
    assert {s.metadata[SYSTEM_PROMPT_KEY] for s in log.samples} == {RUN_SYSTEM_MESSAGE}
    assert not images_in_log(Path(log.location))
