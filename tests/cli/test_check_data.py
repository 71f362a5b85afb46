"""``medreason check-data``: the command's report, its exit codes and its messages (the
audit itself is tested in tests/analysis/test_data_audit.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import write_json
from utils.published_schemas import med_cmr_release

from inspect_medreason.cli import main


def test_check_data_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    release = med_cmr_release(tmp_path / "release")
    assert main(["check-data", str(release)]) == 0
    out = capsys.readouterr()
    assert "# Data audit" in out.out and "answer leakage in" in out.err
    # the release fixture leaks in cases 1 ("meningioma") and 2 ("left pneumothorax")
    assert (
        main(
            [
                "check-data",
                str(release),
                "--strict",
                "--format",
                "json",
                "--output",
                str(tmp_path / "audit.json"),
            ]
        )
        == 1
    )
    document = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))
    assert sorted(row["case_id"] for row in document["leakage"]) == ["1", "2"]
    assert document["clean"] is False
    # an existing report is not overwritten without --force
    assert main(["check-data", str(release), "--output", str(tmp_path / "audit.json")]) == 1
    assert "--force" in capsys.readouterr().err


def test_check_data_refuses_unreadable_data_with_a_message(tmp_path: Path) -> None:
    write_json(
        tmp_path / "cases.json",
        {"cases": [{"case_id": "x", "task_type": "mcq", "question": "Q", "options": ["a"]}]},
    )
    result = subprocess.run(
        [sys.executable, "-m", "inspect_medreason.cli", "check-data", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "case 'x': options: an MCQ case needs at least two options" in result.stderr
