"""The analyses of finished eval logs, as a library: what the ``medreason`` command computes,
for a notebook or a script. Each takes logs or folders of logs (paths, as the command does)
and returns a typed result; a table has ``to_pandas()``. A user's mistake raises
``AnalysisError`` with every problem found. Nothing here prints, exits or writes a file; the
command (``inspect_medreason.cli``) is the shell that does. For example::

    from inspect_medreason.analysis import compare_logs, rank_models

    board = rank_models(["logs/"])
    board.to_pandas()[["model", "MCQ Accuracy", "Open-ended GT", "Open-ended VA"]]
    compare_logs("logs/run_a.eval", "logs/run_b.eval").to_pandas()

What each module computes (``medreason`` subcommand in brackets):

- ``leaderboard``: models ranked per metric and overall (leaderboard): ``rank_models``;
- ``comparison``: two runs compared case by case (compare): ``compare_logs``;
- ``agreement``: how far judges agree with each other, a reference or people (agreement):
  ``judge_agreement``;
- ``calibration``: the judges calibrated to people's ratings (calibrate):
  ``calibrate_judges``, ``read_calibration``;
- ``shift``: what image-quality shifts cost each model (shift): ``shift_report``,
  ``contact_sheets``;
- ``export``: the official results and judge-score files from logs (export, judge-scores):
  ``official_results``, ``judge_score_file``;
- ``official``: the official scorer and validator on those files (score, validate):
  ``score_submission``, ``validate_submission``;
- ``data_audit``: a data set checked before use (check-data): ``audit_data``;
- beneath them: ``logs`` (reading logs, bounded), ``judgings`` (which judging a score is),
  ``score_values`` (a score's value, or why it has none), ``markdown``, ``figures``
  and ``display`` (rendering; how a result shows itself in Jupyter), ``errors``.

The names below are imported on first use, so that importing one analysis does not import
them all (matplotlib, scipy and the rating round load only when asked for).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspect_medreason.analysis.agreement import Agreement, judge_agreement
    from inspect_medreason.analysis.calibration import (
        Calibration,
        CalibrationFit,
        calibrate_judges,
        read_calibration,
    )
    from inspect_medreason.analysis.comparison import Comparison, compare_logs
    from inspect_medreason.analysis.data_audit import Audit, audit_data
    from inspect_medreason.analysis.errors import AnalysisError
    from inspect_medreason.analysis.export import (
        JudgeScoreFile,
        OfficialResults,
        judge_score_file,
        official_results,
    )
    from inspect_medreason.analysis.leaderboard import Leaderboard, rank_models
    from inspect_medreason.analysis.official import (
        OfficialScore,
        SubmissionCheck,
        SubmissionRefused,
        score_submission,
        validate_submission,
    )
    from inspect_medreason.analysis.shift import (
        ContactSheets,
        ShiftReport,
        contact_sheets,
        shift_report,
    )

# Each public name and the module that defines it.
_HOMES = {
    "AnalysisError": "errors",
    "rank_models": "leaderboard",
    "Leaderboard": "leaderboard",
    "compare_logs": "comparison",
    "Comparison": "comparison",
    "judge_agreement": "agreement",
    "Agreement": "agreement",
    "calibrate_judges": "calibration",
    "CalibrationFit": "calibration",
    "read_calibration": "calibration",
    "Calibration": "calibration",
    "shift_report": "shift",
    "ShiftReport": "shift",
    "contact_sheets": "shift",
    "ContactSheets": "shift",
    "official_results": "export",
    "OfficialResults": "export",
    "judge_score_file": "export",
    "JudgeScoreFile": "export",
    "score_submission": "official",
    "OfficialScore": "official",
    "SubmissionRefused": "official",
    "validate_submission": "official",
    "SubmissionCheck": "official",
    "audit_data": "data_audit",
    "Audit": "data_audit",
}

__all__ = [
    "Agreement",
    "AnalysisError",
    "Audit",
    "Calibration",
    "CalibrationFit",
    "Comparison",
    "ContactSheets",
    "JudgeScoreFile",
    "Leaderboard",
    "OfficialResults",
    "OfficialScore",
    "ShiftReport",
    "SubmissionCheck",
    "SubmissionRefused",
    "audit_data",
    "calibrate_judges",
    "compare_logs",
    "contact_sheets",
    "judge_agreement",
    "judge_score_file",
    "official_results",
    "rank_models",
    "read_calibration",
    "score_submission",
    "shift_report",
    "validate_submission",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
