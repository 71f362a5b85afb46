"""Every JSON file a ``medreason`` subcommand writes is strict JSON: read with a parser that
refuses the bare ``NaN``, ``Infinity`` and ``-Infinity`` Python's ``json`` writes by
default (JavaScript's ``JSON.parse`` and jq refuse them). The runs are judged by the
offline pipeline-check model, whose judges all give the same score: kappa and correlations
of constant raters are not numbers, so the not-a-number paths are taken, not assumed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval

from inspect_medreason.cli import main
from inspect_medreason.core.loaders import sample_data_dir
from inspect_medreason.medreason.medreason import medreason

MODEL = "medreason/pipeline-check"
ROLES = {role: MODEL for role in ("grader", "grader_2", "vision_grader")}


def strict_loads(text: str) -> Any:
    """json.loads refusing NaN, Infinity and -Infinity."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def nulls(value: Any) -> int:
    """How many nulls a parsed document holds, at any depth."""
    if isinstance(value, dict):
        return sum(nulls(v) for v in value.values())
    if isinstance(value, list):
        return sum(nulls(v) for v in value)
    return int(value is None)


def test_every_json_any_subcommand_writes_is_strict_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = Path(shutil.copytree(sample_data_dir(), tmp_path / "data"))
    logs = tmp_path / "logs"
    runs = {}
    for name, shift in (("clean", {}), ("shifted", {"shift": "jpeg", "severity": 2})):
        [log] = eval(
            medreason(data=str(data), **shift),
            model=MODEL,
            model_roles=ROLES,
            display="none",
            log_dir=str(logs / name),
        )
        assert log.status == "success", log.error
        assert log.location is not None
        runs[name] = log.location
    out = tmp_path / "out"
    out.mkdir()
    commands = {
        "export": ["export", runs["clean"], "--name", "team", "--output", str(out / "export.json")],
        "judge-scores": ["judge-scores", runs["clean"], "--output", str(out / "judge-scores.json")],
        "leaderboard": ["leaderboard", str(logs), "--format", "json"],
        "compare": ["compare", runs["clean"], runs["shifted"], "--format", "json"],
        "shift": ["shift", str(logs), "--format", "json"],
        "agreement": ["agreement", runs["clean"], "--format", "json"],
        "check-data": ["check-data", str(data), "--format", "json"],
    }
    for command, args in commands.items():
        if "--output" not in args:
            args += ["--output", str(out / f"{command}.json")]
        assert main(args) == 0, (command, capsys.readouterr().err[-2000:])
    official = [
        "score",
        "--predictions",
        str(out / "export.json"),
        "--ground-truth",
        str(data / "ground_truth.json"),
        "--judge-scores",
        str(out / "judge-scores.json"),
        "--output",
        str(out / "score.json"),
    ]
    assert main(official) == 0, capsys.readouterr().err[-2000:]
    written = {path.stem: strict_loads(path.read_text(encoding="utf-8")) for path in out.iterdir()}
    assert sorted(written) == sorted([*commands, "score"])
    # the constant judges' kappa is not a number: written as null, never as a bare NaN
    assert nulls(written["agreement"]) > 0
    [gt] = [c for c in written["agreement"]["components"] if c["component"] == "gt_final"]
    assert gt["pairs"] and gt["pairs"][0]["weighted_kappa"]["value"] is None
