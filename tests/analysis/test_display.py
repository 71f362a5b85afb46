"""Typed results in a notebook: each shows a one-line repr (not a dataclass dump), its
table as HTML and, where it has one, its figure (in the HTML with its caption, and as PNG),
through IPython's own display formatter as Jupyter calls it."""

from __future__ import annotations

import base64
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from inspect_medreason.analysis import (
    audit_data,
    compare_logs,
    judge_score_file,
    official_results,
    rank_models,
    validate_submission,
)
from inspect_medreason.analysis.display import MAX_ROWS, cell
from inspect_medreason.analysis.official import OfficialScore

from .conftest import TwoRuns

formatters = pytest.importorskip("IPython.core.formatters")


class Page(HTMLParser):
    """The parts of a result's HTML a test reads: table headers, body rows, images and
    figure captions."""

    def __init__(self) -> None:
        super().__init__()
        self.headers: list[str] = []
        self.rows: list[list[str]] = []
        self.images: list[str] = []
        self.captions: list[str] = []
        self._in: str | None = None
        self._body = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tbody":
            self._body = True
        elif tag == "tr" and self._body:
            self.rows.append([])
        elif tag in ("th", "td", "figcaption"):
            self._in = tag
            if tag == "td":
                self.rows[-1].append("")
            elif tag == "th":
                self.headers.append("")
            else:
                self.captions.append("")
        elif tag == "img":
            self.images.append(dict(attrs).get("src") or "")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td", "figcaption"):
            self._in = None
        elif tag == "tbody":
            self._body = False

    def handle_data(self, data: str) -> None:
        target = {"td": self.rows[-1] if self.rows else None, "th": self.headers,
                  "figcaption": self.captions}.get(self._in or "")  # fmt: skip
        if target is not None:
            target[-1] += data


def results(two_runs: TwoRuns, tmp_path: Path) -> dict[str, Any]:
    exported = official_results([two_runs.a])
    submission = tmp_path / "results.json"
    submission.write_text(exported.text)
    return {
        "Comparison": compare_logs(two_runs.a, two_runs.b),
        "Leaderboard": rank_models([two_runs.logs]),
        "Audit": audit_data(two_runs.data),
        "OfficialResults": exported,
        "JudgeScoreFile": judge_score_file([two_runs.a]),
        "SubmissionCheck": validate_submission(submission, two_runs.data / "cases.json"),
        "OfficialScore": OfficialScore(
            {"mcq_accuracy": None, "gt_final": 2.5, "va_final": 1.75},
            {"open": 2},
            ({"case_id": "c1", "task_type": "open", "GT_final": 3.0},),
            (),
            "{}",
        ),
    }


def check_display(result: Any, name: str) -> None:
    data, _ = formatters.DisplayFormatter().format(result)
    text = data["text/plain"]
    assert text == repr(result) and text.startswith(f"<{name}: ") and "\n" not in text
    assert len(text) < 400 and "=" not in text.split(":", 1)[1].replace("==", "")
    page = Page()
    page.feed(data["text/html"])
    table = result.display_table()
    if table is not None:
        assert page.headers == [str(c) for c in table.columns]
        assert len(page.rows) == min(len(table), MAX_ROWS)
        expected = [[cell(v) for v in row] for row in table.head(MAX_ROWS).itertuples(False)]
        assert page.rows == expected
    figure: Callable[[], bytes] | None = getattr(result, "plot_png", None)
    if figure is None:
        assert "image/png" not in data and page.images == []
        return
    png = figure()
    assert data["image/png"] == png
    [image] = page.images
    assert base64.b64decode(image.split(",", 1)[1]) == png
    caption = getattr(result, "plot_caption", None)
    if caption is not None:
        assert page.captions == [caption()]


def test_each_result_shows_a_line_a_table_and_its_figure(two_runs: TwoRuns, tmp_path: Path) -> None:
    made = results(two_runs, tmp_path)
    for name, result in made.items():
        check_display(result, name)
    comparison = made["Comparison"]
    gt = comparison.results["Open-ended GT"]
    assert comparison.b.model in repr(comparison)
    assert f"Open-ended GT {gt.difference:+.3f} [{gt.interval.lower:.3f}," in repr(comparison)
    assert repr(made["SubmissionCheck"]).endswith("accepted, 0 warning(s)>")
    assert "gt_final 2.5000" in repr(made["OfficialScore"])


def test_a_long_table_is_cut_in_the_notebook_and_says_where_the_rest_is() -> None:
    rows = tuple(
        {"case_id": f"c{i}", "task_type": "open", "GT_final": 2.0} for i in range(MAX_ROWS + 5)
    )
    score = OfficialScore({"gt_final": 2.0}, {"open": len(rows)}, rows, (), "{}")
    page = Page()
    page.feed(score._repr_html_())
    assert len(page.rows) == MAX_ROWS and page.rows[0][0] == "c0"
    assert "5 more rows" in score._repr_html_()
    assert len(score.to_pandas()) == MAX_ROWS + 5  # the table itself keeps every row


def test_cells_read_as_numbers_people_read() -> None:
    assert [cell(0.83333), cell(float("nan")), cell(None), cell(3), cell(True)] == [
        "0.833",
        "—",
        "",
        "3",
        "True",
    ]
