"""The shift report as a library: ``shift_report`` on a clean and a shifted run gives the
figures ``medreason shift`` prints for the same logs, its table, its figure and the contact
sheets ``--examples`` writes."""

from __future__ import annotations

import base64
import html
import io
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import scripted_output, user_text, write_json
from inspect_ai import eval
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from matplotlib.text import Text
from PIL import Image

from inspect_medreason.analysis.figures import DOUBLE_COLUMN, MIN_FONT_POINTS, pyplot
from inspect_medreason.analysis.shift import (
    SHIFT_NAMES,
    TILE,
    ShiftReport,
    contact_sheets,
    fitted,
    sheet_images,
    shift_figure,
    shift_report,
    tile_box,
)
from inspect_medreason.cli import main
from inspect_medreason.core.intervals import Interval
from inspect_medreason.core.shift import SHIFTS
from inspect_medreason.medreason.medreason import mcq

from .test_display import Page, check_display

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("analysis_test_shift")

CASES = 8
WRONG = 2  # cases the shifted run gets wrong: a drop of 2/8
SHARED = (6, 7)  # the cases that share one image


def write_cases(folder: Path) -> Path:
    """Eight yes/no MCQ cases on seven small images of two shapes (c6 and c7 share one),
    over two modalities."""
    options = [{"label": "A", "text": "yes"}, {"label": "B", "text": "no"}]
    cases, truth = [], []
    folder.mkdir(parents=True)
    for index in range(CASES):
        name = f"img{min(index, SHARED[0])}.png"  # the last two cases share an image
        size = (16, 16) if index % 2 else (24, 12)  # two shapes: tiles must still be one size
        pixels = (np.random.default_rng(index).random(size) * 200).astype(np.uint8)
        if index <= SHARED[0]:
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


# --- the figure as a paper prints it -------------------------------------------------


def two_models(report: ShiftReport) -> ShiftReport:
    """The report's pair as two models' (provider-prefixed names), the second with an
    asymmetric interval and one whose lower end lies beyond the axis: what the figure must
    draw at their true bounds, beside each other."""
    [pair] = report.pairs
    result = pair.metrics["MCQ Accuracy"]
    pairs = []
    for model, interval in (
        ("provider/model-a", result.interval),
        ("provider/model-b", Interval(-1.6, 0.1)),
    ):
        runs = {side: replace(getattr(pair, side), model=model) for side in ("clean", "shifted")}
        metrics = {"MCQ Accuracy": replace(result, interval=interval)}
        pairs.append(replace(pair, **runs, metrics=metrics))
    return ShiftReport(pairs, [])


def drawn(figure: Any) -> tuple[list[tuple[float, float]], list[tuple[float, float, float]]]:
    """The points (x, change) and the interval bars (x, lower, upper) of every panel."""
    points, bars = [], []
    for axis in figure.axes:
        for line in axis.get_lines():
            if line.get_marker() == "o" and len(line.get_xdata()) == 1:
                points.append((float(line.get_xdata()[0]), float(line.get_ydata()[0])))
        for collection in axis.collections:
            for segment in collection.get_segments():
                (x0, y0), (x1, y1) = segment
                if x0 == x1:
                    bars.append((float(x0), float(min(y0, y1)), float(max(y0, y1))))
    return points, bars


def test_each_interval_is_drawn_on_the_change_it_bounds_models_side_by_side(
    report: ShiftReport,
) -> None:
    both = two_models(report)
    figure = shift_figure(both)
    points, bars = drawn(figure)
    first, _ = (p.metrics["MCQ Accuracy"] for p in both.pairs)
    assert sorted(y for _, y in points) == pytest.approx([first.difference] * 2)
    # side by side: one x per model at severity 2, each point on its own bar
    assert len({x for x, _ in points}) == 2 and all(abs(x - 2) < 0.5 for x, _ in points)
    by_x = {x: (lower, upper) for x, lower, upper in bars}
    assert sorted(by_x) == sorted(x for x, _ in points)
    spans = sorted(by_x.values())
    # the first: exactly its interval, centred on the estimate (a symmetric interval)
    assert (first.interval.lower, first.interval.upper) in [pytest.approx(s) for s in spans]
    centre = (first.interval.lower + first.interval.upper) / 2
    symmetric = abs(centre - first.difference) < 1e-9
    assert not symmetric or any(
        (lower + upper) / 2 == pytest.approx(first.difference) for lower, upper in spans
    )
    # the second: its upper bound as computed, its lower cut at the axis (-1) and marked
    assert (-1.0, 0.1) in [pytest.approx(s) for s in spans]
    [axis] = [a for a in figure.axes if a.get_visible()]
    markers = [line.get_marker() for line in axis.get_lines()]
    assert markers.count("v") == 1 and "^" not in markers
    assert axis.get_ylim()[0] <= -1.0 and axis.get_ylim()[1] >= 1.0  # never autoscaled
    assert axis.get_ylabel() == "change in MCQ accuracy"
    assert axis.get_xlabel() == "severity"
    pyplot().close(figure)


def test_the_figure_prints_readably_names_models_as_people_do_and_has_no_caption_in_it(
    report: ShiftReport,
) -> None:
    both = two_models(report)
    figure = shift_figure(both)
    texts = [t for t in figure.findobj(Text) if t.get_text().strip() and t.get_visible()]
    assert texts and min(t.get_fontsize() for t in texts) >= MIN_FONT_POINTS
    assert figure.get_size_inches()[0] <= DOUBLE_COLUMN
    [legend] = figure.legends
    assert [t.get_text() for t in legend.get_texts()] == ["model-a", "model-b"]
    caption = both.plot_caption()
    drawn_text = " ".join(t.get_text() for t in texts)
    assert "95% interval" in caption and "95% interval" not in drawn_text
    assert max(len(t.get_text()) for t in texts) < 60  # titles and labels, no paragraph
    assert "model-a MCQ accuracy 1.000" in caption  # the clean means the changes are from
    pyplot().close(figure)


def test_panels_sit_side_by_side_one_per_shift_and_metric(report: ShiftReport) -> None:
    [pair] = report.pairs
    shifts = ["blur", "noise", "jpeg", "gamma"]
    many = ShiftReport(
        [replace(pair, shifted=replace(pair.shifted, shift=shift)) for shift in shifts], []
    )
    figure = shift_figure(many)
    visible = [a for a in figure.axes if a.get_visible()]
    assert [a.get_title().split(",")[0] for a in visible] == [
        "Blur",
        "Gamma",
        "JPEG compression",
        "Noise (lower dose)",
    ]
    lefts = sorted({round(a.get_position().x0, 3) for a in visible})
    assert len(lefts) == 3  # three columns at the double column's width, then a second row
    pyplot().close(figure)
    assert set(SHIFT_NAMES) == set(SHIFTS)  # every shift has a printed name


def test_the_command_writes_the_caption_beside_the_figure(
    logs: Path, report: ShiftReport, tmp_path: Path
) -> None:
    plot = tmp_path / "shift.png"
    page = tmp_path / "shift.html"
    command = ["shift", str(logs), "--format", "html", "--output", str(page), "--plot", str(plot)]
    assert main(command) == 0
    assert (tmp_path / "shift.caption.txt").read_text() == report.plot_caption() + "\n"
    assert f"<figcaption>{html.escape(report.plot_caption())}</figcaption>" in page.read_text()
    assert main(command) != 0  # the caption is an output: not overwritten without --force


def test_a_contact_sheet_shows_each_image_once_clean_beside_degraded_in_tiles_of_one_size(
    logs: Path, report: ShiftReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    data = logs.parent / "data"
    found, notes = sheet_images(report, data)
    assert notes == []
    [(name, (title, shifted, images))] = found.items()
    assert "Blur, severity 2" in title and shifted.startswith("blur 2")
    # one tile per image: the shared image once, naming both its cases
    assert len(images) == CASES - 1
    assert [image.cases for image in images][-1] == [f"c{i}" for i in SHARED]
    assert sum(len(image.cases) for image in images) == CASES
    clean = {tuple(np.asarray(image.clean).ravel()) for image in images}
    assert len(clean) == len(images)
    for image in images:  # degraded: the same shape, other pixels
        assert image.clean.size == image.degraded.size
        assert not np.array_equal(np.asarray(image.clean), np.asarray(image.degraded))
    sheet = Image.open(io.BytesIO(contact_sheets(report, data).sheets[name])).convert("RGB")
    boxes = [tile_box(i, degraded) for i in range(len(images)) for degraded in (False, True)]
    assert {(right - left, bottom - top) for left, top, right, bottom in boxes} == {(TILE, TILE)}
    assert max(box[2] for box in boxes) <= sheet.width
    assert max(box[3] for box in boxes) <= sheet.height
    for index, image in enumerate(images):
        for degraded, picture in ((False, image.clean), (True, image.degraded)):
            tile = sheet.crop(tile_box(index, degraded))
            assert np.array_equal(np.asarray(tile), np.asarray(fitted(picture)))
        # beside each other: the same row, the degraded one to the right
        left, right = tile_box(index, False), tile_box(index, True)
        assert left[1] == right[1] and right[0] == left[2]
    # a wide and a tall image both fill their tile at their longer side
    for image in images[:2]:
        pixels = np.asarray(fitted(image.clean))
        filled = np.any(pixels != np.array([224, 224, 224]), axis=2)
        assert filled.any(axis=0).sum() == TILE or filled.any(axis=1).sum() == TILE


def test_the_report_and_its_sheets_display_themselves_in_a_notebook(
    logs: Path, report: ShiftReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    check_display(report, "ShiftReport")
    assert repr(report).startswith("<ShiftReport: 1 shifted run(s) of mockllm/model")
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    sheets = contact_sheets(report, logs.parent / "data")
    assert repr(sheets) == "<ContactSheets: 1 sheet(s), 0 note(s)>"
    page = Page()
    page.feed(sheets._repr_html_())
    [image] = page.images
    [png] = sheets.sheets.values()
    assert base64.b64decode(image.split(",", 1)[1]) == png
    assert page.captions == list(sheets.sheets)


def test_a_shifts_metrics_share_a_row_each_on_its_own_scale(report: ShiftReport) -> None:
    [pair] = report.pairs
    result = pair.metrics["MCQ Accuracy"]
    judged = replace(result, mean_a=3.0, mean_b=2.5, difference=-0.5, interval=Interval(-1, 0))
    metrics = {"MCQ Accuracy": result, "Open-ended GT": judged}
    two = ShiftReport(
        [
            replace(pair, shifted=replace(pair.shifted, shift=shift), metrics=metrics)
            for shift in ("blur", "jpeg")
        ],
        [],
    )
    figure = shift_figure(two)
    axes = [a for a in figure.axes if a.get_visible()]
    grid = [[a.get_title().split(",")[0], a.get_ylabel()] for a in axes]
    assert grid == [
        ["Blur", "change in MCQ accuracy"],
        ["Blur", "change in GT_final (0-4)"],
        ["JPEG compression", "change in MCQ accuracy"],
        ["JPEG compression", "change in GT_final (0-4)"],
    ]
    assert axes[0].get_position().y0 == pytest.approx(axes[1].get_position().y0)  # one row
    assert [a.get_ylim()[1] >= top for a, top in zip(axes, (1, 4, 1, 4), strict=True)] == [True] * 4
    assert all(a.get_xticklabels()[0].get_text() == "1\nmild" for a in axes)
    pyplot().close(figure)
