"""``medreason shift``: a scripted model whose accuracy falls by a known amount per severity
is reported with that drop inside the interval; answer consistency and quality remarks; a
grid run split into its combinations; runs that cannot be paired refused by name; the
outputs in every format."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import scripted_output, user_text, write_json
from inspect_ai import Task, eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessage, ContentImage, ModelOutput, get_model
from PIL import Image
from utils.dicom_fixtures import FILE_WINDOWS, RAW, write_dicom
from utils.published_schemas import gemex_folder, medxpertqa_folder, vqa_rad_parquet

import inspect_medreason
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.shift import (
    PairReport,
    ShiftReport,
    ShiftRun,
    _confined_files,
    contact_sheets,
    says_poor_quality,
    shift_report,
    summarise,
)
from inspect_medreason.cli.commands import main
from inspect_medreason.core.intervals import CLUSTER_TEST, NO_INTERVAL, PairedResult
from inspect_medreason.core.shift import judge_image_files
from inspect_medreason.gemex.gemex import gemex
from inspect_medreason.medreason.medreason import mcq, medreason
from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm
from inspect_medreason.vqa.vqa import medreason_vqa_rad

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("test_shift_report")

CASES = 60
WRONG_PER_SEVERITY = 10  # a known drop of 10/60 in MCQ accuracy per severity


def write_cases(folder: Path) -> Path:
    options = [{"label": label, "text": text} for label, text in (("A", "yes"), ("B", "no"))]
    cases, truth = [], []
    for index in range(CASES):
        name = f"img{index:03d}.png"
        pixels = (np.random.default_rng(index).random((16, 16)) * 200).astype(np.uint8)
        folder.mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels, mode="L").save(folder / name)
        case = f"c{index:03d}"
        modality = "CT" if index % 2 else "MRI"
        cases.append({"case_id": case, "task_type": "mcq", "question": f"Q {case}?",
                      "image_path": name, "options": options, "metadata": {"modality": modality}})  # fmt: skip
        truth.append({"case_id": case, "task_type": "mcq", "answer": "A"})
    write_json(folder / "cases.json", {"cases": cases})
    write_json(folder / "ground_truth.json", {"cases": truth})
    return folder


def scripted(severity: int) -> Any:
    """Right on every case when clean; wrong on the first 10 x severity cases when shifted,
    and then says the image is blurry."""

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        match = re.search(r"Q c(\d+)\?", user_text(messages))
        assert match
        wrong = int(match.group(1)) < WRONG_PER_SEVERITY * severity
        trace = "The image is blurry." if severity else "A clear image."
        return scripted_output(
            json.dumps({"reasoning_trace": trace, "answer": "B" if wrong else "A"})
        )

    return respond


def run(data: Path, logs: Path, severity: int, model: str = "mockllm/model", **kwargs: Any) -> None:
    shift: dict[str, Any] = {"shift": "blur", "severity": severity} if severity else {}
    [log] = eval(
        mcq(data=str(data), **shift),
        model=get_model(model, custom_outputs=scripted(severity)),
        display="none",
        log_dir=str(logs),
        **kwargs,
    )
    assert log.status == "success", log.error


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A clean run and one per severity of the same scripted model on the same cases."""
    root = tmp_path_factory.mktemp("shift_runs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(root / "cache"))
        patch.setenv("INSPECT_CACHE_DIR", str(root / "inspect_cache"))
        data = write_cases(root / "data")
        for severity in (0, 1, 2, 3):
            run(data, root / "logs", severity)
        yield root


def test_a_known_drop_per_severity_lies_inside_its_interval(runs: Path) -> None:
    report = shift_report([str(runs / "logs")])
    assert [(p.shifted.shift, p.shifted.severity) for p in report.pairs] == [
        ("blur", 1),
        ("blur", 2),
        ("blur", 3),
    ]
    for pair in report.pairs:
        severity = pair.shifted.severity
        drop = WRONG_PER_SEVERITY * severity / CASES
        result = pair.metrics["MCQ Accuracy"]
        assert result.cases == CASES and result.mean_a == 1.0
        assert result.difference == pytest.approx(-drop)
        assert result.interval.lower <= -drop <= result.interval.upper
        assert result.interval.upper < 0  # a real loss, not chance
        assert result.test == CLUSTER_TEST
        # both modalities, each with its own paired interval
        by_modality = {m.modality: m.result for m in pair.modalities["MCQ Accuracy"]}
        assert set(by_modality) == {"CT", "MR"} or set(by_modality) == {"CT", "MRI"}
        assert sum(r.cases for r in by_modality.values()) == CASES
        for r in by_modality.values():
            assert r.interval.lower <= r.difference <= r.interval.upper
        assert pair.consistency == pytest.approx(1 - drop)
        assert pair.poor_quality.mean_a == 0.0 and pair.poor_quality.mean_b == 1.0


def test_runs_that_cannot_be_paired_are_refused_all_at_once_by_name(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    others = tmp_path / "others"
    run(runs / "data", others, 2, model="mockllm/other")
    run(runs / "data", others, 1, limit=30)
    with pytest.raises(AnalysisError) as refused:
        shift_report([str(runs / "logs"), str(others)])
    message = str(refused.value)
    assert "no clean run of that model and task" in message and "mockllm/other" in message
    assert "scored other cases" in message and "30 scored only in the clean run" in message
    code = main(["shift", str(runs / "logs"), str(others), "--output", str(tmp_path / "r.md")])
    assert code == 1 and not (tmp_path / "r.md").exists()


def test_the_command_writes_json_markdown_html_and_the_severity_curves(
    runs: Path, tmp_path: Path
) -> None:
    output, plot = tmp_path / "shift.json", tmp_path / "curves.png"
    assert main(["shift", str(runs / "logs"), "--format", "json", "--output", str(output),
                 "--plot", str(plot)]) == 0  # fmt: skip
    document = json.loads(output.read_text())
    assert len(document["pairs"]) == 3
    first = document["pairs"][0]
    assert first["metrics"]["MCQ Accuracy"]["change"] == pytest.approx(-10 / 60)
    assert set(first["metrics"]["MCQ Accuracy"]["interval"]) == {"lower", "upper", "level"}
    assert first["says_poor_quality"]["shifted"] == 1.0
    assert plot.read_bytes().startswith(b"\x89PNG")
    for fmt, marker in (("md", "| MCQ Accuracy |"), ("html", "<img alt=")):
        target = tmp_path / f"shift.{fmt}"
        assert main(["shift", str(runs / "logs"), "--format", fmt, "--output", str(target)]) == 0
        assert marker in target.read_text()


def test_a_grid_run_is_split_into_its_combinations(tmp_path: Path) -> None:
    data = write_cases(tmp_path / "data")
    [log] = eval(
        mcq(data=str(data), shift=["noise", "jpeg"], severity=[0, 2]),
        model="medreason/pipeline-check",
        display="none",
        log_dir=str(tmp_path / "logs"),
        limit=12,
    )
    assert log.status == "success", log.error
    report = shift_report([str(tmp_path / "logs")])
    assert [(p.shifted.shift, p.shifted.severity) for p in report.pairs] == [
        ("jpeg", 2),
        ("noise", 2),
    ]
    for pair in report.pairs:
        # the pipeline check answers the first option whatever it sees
        assert pair.metrics["MCQ Accuracy"].difference == 0.0
        assert pair.metrics["MCQ Accuracy"].cases == 4  # 12 samples: 4 cases x 3
        assert pair.consistency == 1.0


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        ("The image quality is poor, limiting assessment.", True),
        ("Poor image quality; the answer is B.", True),
        ("This is a non-diagnostic study.", True),
        ("The image is too noisy to see the lesion.", True),
        ("Motion artefacts obscure the liver.", True),
        ("There are streak artifacts from metal.", True),
        ("Low resolution makes the margin unclear.", True),
        ("No motion artefact is seen; a nodule is present.", False),
        ("The image is not of poor quality.", False),
        ("A 2 cm nodule in the right upper lobe.", False),
        ("Image quality is adequate.", False),
        ("", False),
    ],
)
def test_what_counts_as_saying_the_image_is_poor(reply: str, says: bool) -> None:
    assert says_poor_quality(reply) is says


def test_an_output_on_an_input_is_refused_before_any_work(runs: Path, tmp_path: Path) -> None:
    log = next((runs / "logs").glob("*.eval"))
    before = log.read_bytes()
    assert main(["shift", str(runs / "logs"), "--output", str(log), "--force"]) == 1
    assert log.read_bytes() == before


def test_open_ended_answers_are_compared_and_the_plot_names_each_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An open-ended run's answers are the open_ended_scorer's (its mcq_scorer has none):
    every reply is compared, none is called unanswered; the plot is drawn on fixed scales."""
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "demo"
    shutil.copytree(Path(inspect_medreason.__file__).parent / "sample_data", data)
    judge = "medreason/pipeline-check"
    shifts: list[dict[str, Any]] = [{}, {"shift": "downsample", "severity": 3}]
    for shift in shifts:
        [log] = eval(
            medreason(data=str(data), **shift),
            model="medreason/image-sensitive",
            model_roles={"grader": judge, "vision_grader": judge},
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
        assert log.status == "success", log.error
    [pair] = shift_report([str(tmp_path / "logs")]).pairs
    assert pair.consistency_pairs == 28  # 18 MCQ and 10 open-ended replies, all answered
    assert not any("gave no answer" in w for w in pair.warnings)
    assert pair.consistency is not None and pair.consistency < 1.0
    assert pair.shifted.judge_image == "clean" and pair.shifted.seed == 0
    output = tmp_path / "shift.md"
    assert main(["shift", str(tmp_path / "logs"), "--output", str(output)]) == 0
    assert "| 0 | clean | Open-ended VA |" in output.read_text()


def test_contact_sheets_show_the_images_the_model_saw_made_again_from_the_data(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))  # made afresh
    sheets = tmp_path / "sheets"
    # a log names no data folder: without --data the report says to name it, and shows none
    assert main(["shift", str(runs / "logs"), "--output", str(tmp_path / "r.md"),
                 "--examples", str(sheets)]) == 0  # fmt: skip
    assert not list(sheets.iterdir())
    assert "no data folder recorded; name it with --data" in capsys.readouterr().err
    assert main(["shift", str(runs / "logs"), "--output", str(tmp_path / "r.md"), "--force",
                 "--examples", str(sheets), "--data", str(runs / "data")]) == 0  # fmt: skip
    names = sorted(path.name for path in sheets.iterdir())
    assert names == [f"mockllm_model_mcq_blur-{s}.png" for s in (1, 2, 3)]
    with Image.open(sheets / names[2]) as sheet:
        assert sheet.format == "PNG" and sheet.width >= 4 * 150
    # the image made again is, pixel for pixel, the one the model was sent
    log = next(
        read_eval_log(str(path), resolve_attachments=True)
        for path in (runs / "logs").glob("*.eval")
        if (read_eval_log(str(path), header_only=True).eval.metadata or {})["shift"]["severity"]
        == 3
    )
    assert log.samples
    sample = log.samples[0]
    [part] = [c for m in sample.input if not isinstance(m, str) and m.role == "user"
              for c in m.content if isinstance(c, ContentImage)]  # fmt: skip
    sent = Image.open(io.BytesIO(base64.b64decode(part.image.partition(",")[2])))
    files = _confined_files(runs / "data", sample.metadata)
    [again] = judge_image_files(files, {**sample.metadata, "shift_judge_image": "degraded"}, "x")
    assert np.array_equal(np.asarray(sent), np.asarray(Image.open(again)))
    # a data folder whose image is not the run's is named, and nothing of it is shown
    other = tmp_path / "other"
    shutil.copytree(runs / "data", other)
    Image.fromarray(np.zeros((16, 16), np.uint8), mode="L").save(other / "img000.png")
    report = shift_report([str(runs / "logs")])
    made, notes = contact_sheets(report, other)
    assert any("'c000'" in note and "not the file the run loaded" in note for note in notes)
    assert len(made) == 3


@pytest.mark.parametrize("family", ["vqa_rad", "gemex", "medxpertqa_mm"])
def test_the_other_image_families_are_reported(
    family: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    task: Callable[..., Task]
    if family == "vqa_rad":
        task, data, metric = (
            medreason_vqa_rad,
            vqa_rad_parquet(tmp_path / "vqa_rad", textured=True),
            "VQA closed accuracy",
        )
    elif family == "gemex":
        task, data, metric = gemex, gemex_folder(tmp_path / "gemex"), "GEMeX accuracy"
    else:
        task, data, metric = medxpertqa_mm, medxpertqa_folder(tmp_path / "mx"), "MCQ Accuracy"
    # random pixels, which a blur always changes (a uniform grey is refused as a no-op)
    generator = np.random.default_rng(0)
    for path in data.rglob("*"):
        if path.suffix.lower() in {".png", ".jpg", ".jpeg"}:
            pixels = (generator.random((16, 16)) * 200 + 20).astype(np.uint8)
            Image.fromarray(pixels, mode="L").save(path)
    shifts: list[dict[str, Any]] = [{}, {"shift": "blur", "severity": 2}]
    for shift in shifts:
        [log] = eval(
            task(data=str(data), **shift),
            model="mockllm/model",
            model_roles={"grader": "mockllm/model"},
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
        assert log.status == "success", log.error
    [pair] = shift_report([str(tmp_path / "logs")]).pairs
    assert metric in pair.metrics and pair.metrics[metric].cases > 0
    assert pair.shifted.shift == "blur" and pair.metrics[metric].difference == 0.0
    plot = tmp_path / "shift.png"
    assert main(["shift", str(tmp_path / "logs"), "--output", str(tmp_path / "r.md"),
                 "--plot", str(plot)]) == 0  # fmt: skip
    assert f"| {metric} |" in (tmp_path / "r.md").read_text()


def test_the_summary_across_shifts_names_what_it_cannot_compute(runs: Path) -> None:
    """The scripted model is right on every clean case: a corruption error relative to no
    error is undefined, and says so; each modality loses 5, 10 and 15 of its 30 cases."""
    [summary] = summarise(shift_report([str(runs / "logs")]))
    assert summary.metric == "MCQ Accuracy" and summary.mean_ce is None
    assert summary.shifts == {"blur": None} and "undefined" in summary.note
    assert set(summary.modality_drop) == {"CT", "MRI"}
    for drop in summary.modality_drop.values():
        assert drop == pytest.approx((5 + 10 + 15) / 30 / 3)


def test_the_corruption_error_is_the_shifts_errors_over_the_clean_ones() -> None:
    def pair(severity: int, shifted: float) -> PairReport:
        run = ShiftRun(
            Path("x"), "m", "t", "noise", severity, 0, "clean", 1, {}, {}, {}, {}, {}, {}
        )
        result = PairedResult(10, 0.8, shifted, shifted - 0.8, NO_INTERVAL, "", None, None)
        return PairReport(run, run, {"MCQ Accuracy": result}, {}, None, 0, result)

    [summary] = summarise(ShiftReport([pair(1, 0.8), pair(2, 0.6), pair(3, 0.4)], []))
    # errors 0.2 + 0.4 + 0.6 over 3 x 0.2
    assert summary.shifts["noise"] == pytest.approx(2.0) and summary.mean_ce == pytest.approx(2.0)


def test_a_dicom_case_is_made_again_for_its_contact_sheet(tmp_path: Path) -> None:
    """The contact sheets read a DICOM case again as the loader prepared it (its digest is
    the run's), in a process other than the run's as `medreason shift --examples` is, and
    the degraded picture made again is the one the model was sent."""
    data = tmp_path / "data"
    write_dicom(data / "scan.dcm", RAW, rescale=(1.0, -1024.0), windows=FILE_WINDOWS)
    options = [{"label": "A", "text": "CT"}, {"label": "B", "text": "MR"}]
    case = {"task_type": "mcq", "question": "Which modality? (d1)", "options": options}
    write_json(
        data / "cases.json", {"cases": [{"case_id": "d1", "image_path": "scan.dcm", **case}]}
    )
    truth = [{"case_id": "d1", "task_type": "mcq", "answer": "A"}]
    write_json(data / "ground_truth.json", {"cases": truth})
    [log] = eval(
        mcq(data=str(data), shift="noise", severity=2),
        model="mockllm/model",
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success" and log.samples
    sample = read_eval_log(log.location, resolve_attachments=True).samples[0]  # type: ignore[index]
    [part] = [c for m in sample.input if not isinstance(m, str) and m.role == "user"
              for c in m.content if isinstance(c, ContentImage)]  # fmt: skip
    sent = Image.open(io.BytesIO(base64.b64decode(part.image.partition(",")[2])))
    script = (
        "import json, sys\nfrom pathlib import Path\n"
        "from inspect_medreason.analysis.shift import _confined_files\n"
        "print(json.dumps([str(f) for f in _confined_files(Path(sys.argv[1]), "
        "json.loads(sys.argv[2]))]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(data), json.dumps(sample.metadata)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    files = [Path(f) for f in json.loads(done.stdout.strip().splitlines()[-1])]
    [again] = judge_image_files(files, {**sample.metadata, "shift_judge_image": "degraded"}, "x")
    assert np.array_equal(np.asarray(sent), np.asarray(Image.open(again)))
