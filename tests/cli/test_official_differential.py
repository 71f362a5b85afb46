"""Differential test against the official scripts themselves, on generated hostile inputs.

Opt-in: set ``MEDREASON_OFFICIAL_DIR`` to a folder holding the challenge repository's
``scoring.py`` and ``validate_submission.py`` (MedReason-Evaluation/). They are not shipped
here; CI runs without them. Every generated input must get the same decision (accept or
refuse) from both, and, when accepted, the same output bytes (except that NaN and Infinity
are written as null here, by design).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import random
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from inspect_medreason.cli import main

OFFICIAL_DIR = os.environ.get("MEDREASON_OFFICIAL_DIR", "")
pytestmark = pytest.mark.skipif(
    not (OFFICIAL_DIR and (Path(OFFICIAL_DIR) / "scoring.py").is_file()),
    reason="set MEDREASON_OFFICIAL_DIR to the official MedReason-Evaluation folder",
)

IDS: list[Any] = ["a", "b", " a", "c ", "", None, 5, "病例", "a\u200b"]
TYPES: list[Any] = [
    "mcq",
    "open",
    "MCQ",
    " open_ended ",
    "free_text",
    "free-text",
    "multiple-choice",
    "closed",
    None,
    3,
    "",
]
ANSWERS: list[Any] = ["A", " B ", "", "  ", None, 0, "b", ["A"], "长答案"]
SCORES: list[Any] = [
    0,
    1,
    2,
    3,
    4,
    1.5,
    2.0,
    "3",
    " 2 ",
    "nan",
    "inf",
    -1,
    7,
    True,
    None,
    "x",
    [1],
    10**400,
    2.0000001,
    "1_0",
]


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"official_{name}", Path(OFFICIAL_DIR) / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def _run(entry: Callable[[], Any], argv: list[str]) -> bool:
    """True when the script accepts (returns 0 without raising)."""
    saved = sys.argv
    sys.argv = ["script", *argv]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return entry() == 0
    except BaseException:  # the official scripts refuse by raising anything, SystemExit included
        return False
    finally:
        sys.argv = saved


def _entry(rng: random.Random, good: dict[str, Any], pools: dict[str, list[Any]]) -> Any:
    """Mostly the good value of each field; now and then a hostile one or none at all."""
    if rng.random() < 0.01:
        return rng.choice([[], "x", 1, None])
    entry = {}
    for key, value in good.items():
        roll = rng.random()
        if roll < 0.02:
            continue
        entry[key] = rng.choice(pools[key]) if roll < 0.08 else value
    return entry


def _document(rng: random.Random, key: str, rows: list[Any]) -> Any:
    roll = rng.random()
    if roll < 0.3:
        return rows
    if roll < 0.32:
        return {"other": rows}
    return {key: rows}


def _generate(rng: random.Random) -> tuple[Any, Any, Any | None]:
    ids = rng.sample(["a", "b", "c", "病例", " d "], rng.randint(1, 4))
    truth_rows, preds, judges = [], [], []
    for case_id in ids:
        kind = rng.choice(["mcq", "open"])
        truth_rows.append(
            _entry(
                rng,
                {"case_id": case_id, "task_type": kind, "answer": "A"},
                {"case_id": IDS, "task_type": TYPES, "answer": ["B", None, "", " A "]},
            )
        )
        if rng.random() < 0.97:
            preds.append(
                _entry(
                    rng,
                    {
                        "case_id": case_id,
                        "task_type": kind,
                        "answer": rng.choice("AB"),
                        "reasoning_trace": "why",
                    },
                    {
                        "case_id": IDS,
                        "task_type": TYPES,
                        "answer": ANSWERS,
                        "reasoning_trace": ["", None, " ", 1],
                    },
                )
            )
        if kind == "open" or rng.random() < 0.1:
            good = {
                "case_id": case_id,
                "gt_final": rng.randint(0, 4),
                "va_answer": rng.randint(0, 4),
                "rvf_trace": rng.choice([0, 1, 2, 3, 4, 1.0, 2.0]),
            }
            judges.append(
                _entry(
                    rng,
                    good,
                    {"case_id": IDS, "gt_final": SCORES, "va_answer": SCORES, "rvf_trace": SCORES},
                )
            )
    if preds and rng.random() < 0.05:
        preds.append(rng.choice(preds))  # a duplicate answer
    judge_doc = _document(rng, "scores", judges) if rng.random() < 0.95 else None
    return _document(rng, "answers", preds), _document(rng, "cases", truth_rows), judge_doc


def _write(path: Path, value: Any) -> str:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return str(path)


def test_score_matches_the_official_scorer(tmp_path: Path) -> None:
    scoring = _load("scoring")
    rng = random.Random(2026)
    accepted = refused = 0
    for round_ in range(int(os.environ.get("MEDREASON_DIFFERENTIAL_ROUNDS", "600"))):
        predictions, truth, judges = _generate(rng)
        args = [
            "--predictions",
            _write(tmp_path / "p.json", predictions),
            "--ground-truth",
            _write(tmp_path / "g.json", truth),
        ]
        if judges is not None:
            args += ["--judge-scores", _write(tmp_path / "j.json", judges)]
        pretty = ["--pretty"] if rng.random() < 0.5 else []
        theirs, ours = tmp_path / "theirs.json", tmp_path / "ours.json"
        theirs.unlink(missing_ok=True)
        ours.unlink(missing_ok=True)
        official_ok = _run(scoring.main, [*args, "--output", str(theirs), *pretty])
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            our_ok = main(["score", *args, "--output", str(ours), *pretty]) == 0
        context = (round_, predictions, truth, judges)
        assert official_ok == our_ok, context
        if official_ok:
            accepted += 1
            expected = theirs.read_text(encoding="utf-8")
            if "NaN" in expected or "Infinity" in expected:
                assert json.loads(ours.read_text(encoding="utf-8")) is not None, context
            else:
                assert ours.read_bytes() == theirs.read_bytes(), context
        else:
            refused += 1
    print(f"accepted {accepted}, refused {refused}")
    assert accepted > 50 and refused > 50


def test_validate_matches_the_official_validator(tmp_path: Path) -> None:
    validator = _load("validate_submission")
    rng = random.Random(7)
    for round_ in range(int(os.environ.get("MEDREASON_DIFFERENTIAL_ROUNDS", "400"))):
        predictions, truth, _ = _generate(rng)
        if isinstance(predictions, dict) and rng.random() < 0.5:
            predictions.pop("version", None)
        cases = _document(
            rng,
            "cases",
            [
                {
                    **(
                        {"case_id": row.get("case_id")}
                        if isinstance(row, dict) and "case_id" in row
                        else {}
                    ),
                    "task_type": row.get("task_type") if isinstance(row, dict) else "mcq",
                    "options": rng.choice(
                        [[{"label": "A"}, {"label": "B"}], ["x", "y"], None, {"A": 1}, []]
                    ),
                }
                for row in (truth.get("cases", []) if isinstance(truth, dict) else truth) or []
            ],
        )
        body = json.dumps(predictions, ensure_ascii=False)
        if rng.random() < 0.4:
            target = tmp_path / "sub.zip"
            with zipfile.ZipFile(target, "w") as archive:
                archive.writestr(
                    rng.choice(["results.json", "results.json", "x/results.json"]), body
                )
                if rng.random() < 0.3:
                    archive.writestr(rng.choice(["notes.txt", "dir/notes.txt"]), "x")
        else:
            target = tmp_path / "results.json"
            target.write_text(body, encoding="utf-8")
        args = [str(target)]
        if rng.random() < 0.6:
            args_cases = ["--cases-json", _write(tmp_path / "cases.json", cases)]
        else:
            args_cases = []
        official_ok = _run(validator.main, [*args, *args_cases])
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            our_ok = main(["validate", *args, *args_cases]) == 0
        assert official_ok == our_ok, (round_, predictions, cases, args_cases)
