"""The paired comparison as a library: ``compare_logs`` on two real judged runs gives what
``medreason compare`` prints, and tables of it."""

from __future__ import annotations

import html
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from matplotlib.text import Text

from inspect_medreason.analysis.comparison import Comparison, compare_logs, comparison_figure
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.figures import (
    DOUBLE_COLUMN,
    MIN_FONT_POINTS,
    metric_label,
    pyplot,
)
from inspect_medreason.cli import main
from inspect_medreason.core.intervals import Interval

from .conftest import CASES, TwoRuns

pytestmark = pytest.mark.xdist_group("analysis_runs")  # two_runs built once


def test_compare_logs_is_what_compare_prints(
    two_runs: TwoRuns, capsys: pytest.CaptureFixture[str]
) -> None:
    comparison = compare_logs(two_runs.a, two_runs.b)
    assert isinstance(comparison, Comparison)
    assert (comparison.a.model, comparison.b.model) == ("mockllm/model", "mockllm/other")
    assert comparison.shared_cases == CASES
    assert comparison.warnings == []
    # B's judges score every component one lower (floor 0): B - A is negative throughout
    for metric in ("Open-ended GT", "VA_answer", "RVF_trace"):
        assert comparison.results[metric].difference < 0, metric
    assert "MCQ Accuracy" not in comparison.results  # open-ended runs only
    for fmt in ("md", "json"):
        assert main(["compare", str(two_runs.a), str(two_runs.b), "--format", fmt]) == 0
        printed = capsys.readouterr()
        assert printed.out == comparison.render(fmt) + (
            "" if comparison.render(fmt).endswith("\n") else "\n"
        )
        assert printed.err == ""
    assert comparison.to_markdown() == comparison.render("md")
    assert json.loads(comparison.render("json"))["shared_cases"] == CASES


def test_the_tables_of_metrics_and_categories(two_runs: TwoRuns) -> None:
    comparison = compare_logs(two_runs.a, two_runs.b)
    frame = comparison.to_pandas()
    assert list(frame.columns) == [
        "metric",
        "cases",
        "mean_a",
        "mean_b",
        "difference",
        "lower",
        "upper",
        "test",
        "p_value",
        "detectable",
    ]
    assert list(frame["metric"]) == list(comparison.results)
    for _, row in frame.iterrows():
        result = comparison.results[row["metric"]]
        assert (row["cases"], row["mean_a"], row["mean_b"]) == (
            result.cases,
            result.mean_a,
            result.mean_b,
        )
        assert row["difference"] == pytest.approx(row["mean_b"] - row["mean_a"])
    categories = comparison.categories_to_pandas()
    assert list(categories.columns) == [
        "metric",
        "field",
        "category",
        "cases",
        "mean_a",
        "mean_b",
        "difference",
    ]
    gt = categories[(categories["metric"] == "Open-ended GT") & (categories["field"] == "modality")]
    # the cases' modalities cycle CT, MR, X-ray (utils.rated_logs): 4 cases are 2, 1, 1
    assert dict(zip(gt["category"], gt["cases"], strict=True)) == {"CT": 2, "MR": 1, "X-ray": 1}


def test_a_folder_of_two_runs_is_refused_naming_them(two_runs: TwoRuns) -> None:
    with pytest.raises(AnalysisError) as refusal:
        compare_logs(two_runs.logs, two_runs.b)
    assert "compare takes one run per side" in refusal.value.problems[0]


def test_the_plot_is_a_png(two_runs: TwoRuns) -> None:
    assert compare_logs(two_runs.a, two_runs.b).plot_png().startswith(b"\x89PNG\r\n\x1a\n")


def test_the_figure_shows_both_runs_side_by_side_and_each_interval_on_its_difference(
    two_runs: TwoRuns, tmp_path: Path
) -> None:
    comparison = compare_logs(two_runs.a, two_runs.b)
    judged = dict(comparison.results)
    first = next(iter(judged.values()))
    # an MCQ row too (its own 0-1 panel) with an interval not centred on its difference
    mcq = replace(first, mean_a=0.5, mean_b=0.75, difference=0.25, interval=Interval(0.05, 0.6))
    both = replace(comparison, results={"MCQ Accuracy": mcq, **judged})
    figure = comparison_figure(both)
    texts = [t for t in figure.findobj(Text) if t.get_text().strip() and t.get_visible()]
    assert min(t.get_fontsize() for t in texts) >= MIN_FONT_POINTS
    assert figure.get_size_inches()[0] <= DOUBLE_COLUMN
    assert max(len(t.get_text()) for t in texts) < 60  # no caption drawn in
    [legend] = figure.legends
    assert [t.get_text() for t in legend.get_texts()] == ["A: model", "B: other"]
    rows = figure.axes
    assert len(rows) == 4  # (means, differences) for the 0-1 row and the 0-4 row
    for means, differences in (rows[0:2], rows[2:4]):
        assert means.get_position().x1 <= differences.get_position().x0  # side by side
        assert means.get_xlabel().startswith("mean") and differences.get_xlabel().startswith(
            "difference B − A"
        )
        labels = [t.get_text() for t in means.get_yticklabels()]
        metrics = [m for m in both.results if metric_label(m) in labels]
        assert [metric_label(m) for m in metrics] == labels  # named as the protocol does
        assert "GT_final (0-4)" in labels or labels == ["MCQ accuracy"]
        points = {
            round(float(line.get_ydata()[0])): float(line.get_xdata()[0])
            for line in differences.get_lines()
            if line.get_marker() == "o"
        }
        bars = {
            round(float(y0)): (float(min(x0, x1)), float(max(x0, x1)))
            for collection in differences.collections
            for (x0, y0), (x1, y1) in collection.get_segments()
            if y0 == y1
        }
        for y, metric in enumerate(metrics):
            result = both.results[metric]
            assert points[y] == pytest.approx(result.difference)
            if math.isnan(result.interval.lower):  # no interval (a note says why): no bar
                assert y not in bars and result.note
            else:
                assert bars[y] == pytest.approx((result.interval.lower, result.interval.upper))
            drawn_means = sorted(
                float(line.get_xdata()[0])
                for line in means.get_lines()
                if round(float(line.get_ydata()[0])) == y
            )
            assert drawn_means == pytest.approx(sorted([result.mean_a, result.mean_b]))
        low, high = means.get_xlim()
        assert (low, high) in ((0.0, 1.0), (0.0, 4.0))  # each mean on its whole scale
    pyplot().close(figure)
    assert "95% interval" in both.plot_caption()
    # the command writes the caption beside the figure and under it in the HTML
    plot, page = tmp_path / "diff.png", tmp_path / "diff.html"
    command = ["compare", str(two_runs.a), str(two_runs.b), "--plot", str(plot)]
    assert main([*command, "--format", "html", "--output", str(page)]) == 0
    caption = (tmp_path / "diff.caption.txt").read_text()
    assert caption == comparison.plot_caption() + "\n"
    assert f"<figcaption>{html.escape(comparison.plot_caption())}</figcaption>" in page.read_text()
