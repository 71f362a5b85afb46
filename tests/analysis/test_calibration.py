"""Calibration as a library: ``calibrate_judges`` fits what ``medreason calibrate`` writes for
the same files, its table per component, and the file read back by ``read_calibration``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import write_json
from utils.rated_logs import judged_log, page_cases, ratings_document

from inspect_medreason.analysis.calibration import (
    INTEGRITY_KEY,
    MIN_CASES,
    CalibrationFit,
    calibrate_judges,
    calibrated_means,
    read_calibration,
)
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.cli import main

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("analysis_test_calibration")

CASES = 32  # just above MIN_CASES: every component can be fitted


def harsh(component: str, score: int) -> int:
    """The judges score one lower than the truth (0 stays 0)."""
    return max(0, score - 1)


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 32-case log judged harshly, every case rated by alice (the truth)."""
    root = tmp_path_factory.mktemp("calibration")
    log = judged_log(root, CASES, distort=harsh)
    page = root / "page.html"
    assert main(["rate", str(log), "--output", str(page), "--cases", str(CASES)]) == 0
    html = page.read_text(encoding="utf-8")
    start = html.index('id="page-data">') + len('id="page-data">')
    page_id = json.loads(html[start : html.index("</script>", start)])["page_id"]
    cases = page_cases([log], page_id)
    assert len(cases) == CASES >= MIN_CASES
    alice = write_json(root / "alice.json", ratings_document(page_id, "alice", cases))
    return {"root": root, "log": log, "alice": alice}


@pytest.fixture(scope="module")
def fit(rated: dict[str, Path]) -> CalibrationFit:
    return calibrate_judges([rated["log"]], [rated["alice"]])


def without_time(document: dict[str, object]) -> dict[str, object]:
    """A calibration document without what depends on when it was written."""
    return {k: v for k, v in document.items() if k not in {"created", INTEGRITY_KEY}}


def test_the_fit_is_the_file_the_command_writes(
    rated: dict[str, Path],
    fit: CalibrationFit,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    output = tmp_path / "calibration.json"
    command = ["calibrate", str(rated["log"]), "--ratings", str(rated["alice"])]
    assert main([*command, "--output", str(output)]) == 0
    err = capsys.readouterr().err
    written = json.loads(output.read_text(encoding="utf-8"))
    assert without_time(json.loads(fit.file_text())) == without_time(written)
    assert fit.document["page_id"] == written["page_id"] == fit.page_id
    assert f"({fit.page_id}: {fit.rater_count} rater(s))" in err and fit.rater_count == 1
    assert [f.component for f in fit.components] == list(written["components"])
    for figures in fit.components:
        entry = written["components"][figures.component]
        assert figures.cases == entry["cases"] == CASES
        assert figures.judge == entry["map"]["judge"]
        assert figures.calibrated == entry["map"]["calibrated"]
        after = entry["cross_validated"]["after"]["mae"]["value"]
        assert figures.after["mae"].value == after


def test_the_table_has_a_row_per_component_with_each_figure_before_and_after(
    fit: CalibrationFit,
) -> None:
    table = fit.to_pandas()
    assert list(table.component) == ["gt_final", "va_answer", "rvf_trace", "va_final"]
    expected = {"cases", "people_mean", "judge_mean", "mae_before", "mae_after_lower"}
    expected |= {"weighted_kappa_after", "mae_change", "mae_change_upper"}
    assert expected <= set(table.columns)
    gt = table.set_index("component").loc["gt_final"]
    [figures] = [f for f in fit.components if f.component == "gt_final"]
    assert gt["mae_before"] == figures.before["mae"].value > 0  # the judge is harsh
    # the harsh judge keeps the people's order: the calibrated judge errs less
    assert gt["mae_after"] == figures.after["mae"].value < gt["mae_before"]
    assert gt["judge_mean"] < gt["people_mean"]
    assert not math.isnan(gt["mae_change_lower"])


def test_the_written_file_reads_back_and_calibrates_its_log(
    rated: dict[str, Path], fit: CalibrationFit, tmp_path: Path
) -> None:
    path = tmp_path / "calibration.json"
    path.write_text(fit.file_text(), encoding="utf-8")
    calibration = read_calibration(str(path))  # a path as a notebook writes it
    assert calibration.rater_count == 1
    means = calibrated_means(str(rated["log"]), calibration, resamples=200)
    gt = means["gt_final"]
    assert gt.cases == CASES and gt.interval.lower <= gt.mean <= gt.interval.upper
    # calibrated, the harsh judge's mean comes up to the people's
    [figures] = [f for f in fit.components if f.component == "gt_final"]
    assert abs(gt.mean - figures.people_mean) < abs(figures.judge_mean - figures.people_mean)


def test_too_few_folds_are_refused_by_the_library_as_by_the_command(
    rated: dict[str, Path],
) -> None:
    with pytest.raises(AnalysisError, match="give 2 to 30 folds"):
        calibrate_judges([rated["log"]], [rated["alice"]], folds=1)
