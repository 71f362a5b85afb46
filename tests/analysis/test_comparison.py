"""The paired comparison as a library: ``compare_logs`` on two real judged runs gives what
``medreason compare`` prints, and tables of it."""

from __future__ import annotations

import json

import pytest

from inspect_medreason.analysis.comparison import Comparison, compare_logs
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.cli import main

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
