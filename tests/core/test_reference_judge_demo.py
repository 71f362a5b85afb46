"""The open-ended drop of docs/shift.md: a clean and a blur-3 run of the image-sensitive
model judged by ``medreason/reference-judge`` lose GT and VA where answers changed, none
where they did not, ``medreason shift`` and ``medreason compare`` find it, and the document
shows the numbers ``scripts/reference_judge_demo.py`` prints."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import reference_judge_demo  # noqa: E402


def test_a_blurred_open_ended_run_loses_gt_and_va_where_answers_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    clean, shifted = reference_judge_demo.run_demo(tmp_path)
    assert clean.status == "success" and shifted.status == "success"
    before = reference_judge_demo.case_scores(clean)
    after = reference_judge_demo.case_scores(shifted)
    changed = [case for case in before if before[case][0] != after[case][0]]
    same = [case for case in before if before[case][0] == after[case][0]]
    assert changed and same
    for case in changed:
        for key in ("gt_final", "va_final"):
            assert after[case][1][key] < before[case][1][key], (case, key)
    for case in same:
        assert after[case][1] == before[case][1], case
    lines = reference_judge_demo.report_lines(tmp_path, clean, shifted)
    drops = [
        line for line in lines if line.startswith(("| medreason shift", "| medreason compare"))
    ]
    assert len(drops) == 4 and all(float(line.split("|")[-2]) < 0 for line in drops)
    document = (ROOT / "docs" / "shift.md").read_text(encoding="utf-8")
    assert "\n".join(lines) in document
