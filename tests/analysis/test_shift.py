"""The shift report as a library: ``shift_report`` on a clean and a shifted run gives the
figures ``medreason shift`` prints for the same logs, its table, its figure and the contact
sheets ``--examples`` writes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import scripted_output, user_text, write_json
from inspect_ai import eval
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from PIL import Image

from inspect_medreason.analysis.shift import ShiftReport, contact_sheets, shift_report
from inspect_medreason.cli import main
from inspect_medreason.medreason.medreason import mcq

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("analysis_test_shift")

CASES = 8
WRONG = 2  # cases the shifted run gets wrong: a drop of 2/8


def write_cases(folder: Path) -> Path:
    """Eight yes/no MCQ cases, each on its own small image, over two modalities."""
    options = [{"label": "A", "text": "yes"}, {"label": "B", "text": "no"}]
    cases, truth = [], []
    folder.mkdir(parents=True)
    for index in range(CASES):
        name = f"img{index}.png"
        pixels = (np.random.default_rng(index).random((16, 16)) * 200).astype(np.uint8)
        Image.fromarray(pixels, mode="L").save(folder / name)
        case = f"c{index}"
        metadata = {"modality": "CT" if index % 2 else "MRI"}
        question = {"question": f"Q {case}?", "image_path": name, "options": options}
        cases.append({"case_id": case, "task_type": "mcq", **question, "metadata": metadata})
        truth.append({"case_id": case, "task_type": "mcq", "answer": "A"})
    write_json(folder / "cases.json", {"cases": cases})
    write_json(folder / "ground_truth.json", {"cases": truth})
    return folder


def scripted(shifted: bool) -> Any:
    """Right on every case when clean; shifted, wrong on the first ``WRONG`` cases and
    saying the image is blurry."""

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        match = re.search(r"Q c(\d+)\?", user_text(messages))
        assert match
        wrong = shifted and int(match.group(1)) < WRONG
        trace = "The image is blurry." if shifted else "A clear image."
        return scripted_output(
            json.dumps({"reasoning_trace": trace, "answer": "B" if wrong else "A"})
        )

    return respond


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean run and a blurred run (severity 2) of one scripted model on the same cases."""
    root = tmp_path_factory.mktemp("shift")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(root / "cache"))
        patch.setenv("INSPECT_CACHE_DIR", str(root / "inspect_cache"))
        data = write_cases(root / "data")
        for severity in (0, 2):
            shift: dict[str, Any] = {"shift": "blur", "severity": severity} if severity else {}
            [log] = eval(
                mcq(data=str(data), **shift),
                model=get_model("mockllm/model", custom_outputs=scripted(severity > 0)),
                display="none",
                log_dir=str(root / "logs"),
            )
            assert log.status == "success", log.error
    return root / "logs"


@pytest.fixture(scope="module")
def report(logs: Path) -> ShiftReport:
    return shift_report([logs])


def test_the_typed_report_is_what_the_command_prints(
    logs: Path, report: ShiftReport, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["shift", str(logs), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    [pair] = report.pairs
    [written] = document["pairs"]
    assert (pair.shifted.shift, pair.shifted.severity, pair.clean.shift) == ("blur", 2, None)
    assert written["shifted"]["log"] == str(pair.shifted.path)
    result = pair.metrics["MCQ Accuracy"]
    assert result.difference == pytest.approx(-WRONG / CASES)
    assert written["metrics"]["MCQ Accuracy"]["change"] == result.difference
    assert written["metrics"]["MCQ Accuracy"]["interval"]["lower"] == result.interval.lower
    assert written["answer_consistency"] == {
        "same": pair.consistency,
        "pairs": pair.consistency_pairs,
    }
    assert pair.consistency == pytest.approx(1 - WRONG / CASES)
    assert written["says_poor_quality"]["shifted"] == pair.poor_quality.mean_b == 1.0
    [summary] = report.summary()
    assert document["summary"][0]["mean_corruption_error"] == summary.mean_ce
    assert document["notes"] == list(report.notes)


def test_the_table_has_a_row_per_pair_and_metric(report: ShiftReport) -> None:
    table = report.to_pandas()
    assert list(table.columns[:7]) == [
        "model",
        "task",
        "shift",
        "severity",
        "seed",
        "judge_image",
        "metric",
    ]
    [row] = table.to_dict("records")  # one pair, one metric (MCQ accuracy)
    assert (row["model"], row["shift"], row["severity"], row["metric"]) == (
        "mockllm/model",
        "blur",
        2,
        "MCQ Accuracy",
    )
    assert row["cases"] == CASES and row["clean"] == 1.0
    assert row["change"] == pytest.approx(-WRONG / CASES)
    assert row["lower"] <= row["change"] <= row["upper"]


def test_the_figure_and_the_contact_sheets_are_the_commands(
    logs: Path, report: ShiftReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    plot, sheets = tmp_path / "shift.png", tmp_path / "sheets"
    command = ["shift", str(logs), "--output", str(tmp_path / "r.md"), "--plot", str(plot)]
    # a log names no data folder: the images are re-made from the one named
    data = logs.parent / "data"
    assert main([*command, "--examples", str(sheets), "--data", str(data)]) == 0
    assert report.plot_png().startswith(b"\x89PNG")
    assert report.plot_png() == plot.read_bytes()
    made, notes = contact_sheets(report, data)
    assert notes == []
    assert sorted(made) == ["mockllm_model_mcq_blur-2.png"]
    assert {name: (sheets / name).read_bytes() for name in made} == made


def test_the_modality_table_splits_the_change_by_modality(report: ShiftReport) -> None:
    table = report.modalities_to_pandas().set_index("modality")
    assert sorted(table.index) == ["CT", "MRI"]
    assert table["cases"].sum() == CASES
    # the wrong cases are c0 (MRI) and c1 (CT): one of four in each modality
    for modality in ("CT", "MRI"):
        row = table.loc[modality]
        assert (row["metric"], row["severity"], row["clean"]) == ("MCQ Accuracy", 2, 1.0)
        assert row["change"] == pytest.approx(-1 / 4)
