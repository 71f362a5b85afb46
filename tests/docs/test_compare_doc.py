"""docs/medreason_command.md's comparison example is what the commands give (issue 62): two
scripted models on the demo data (one always answers A, the other B; both judged 3 by a
constant judge), then `medreason compare` and `medreason leaderboard --bootstrap 1000`; the
page's table rows and rank-stability figures are these commands' output."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import scripted_output
from inspect_ai import eval
from inspect_ai.model import get_model

from inspect_medreason.cli import main
from inspect_medreason.medreason.medreason import medreason

PAGE = Path(__file__).resolve().parents[2] / "docs" / "medreason_command.md"


def run(label: str, log_dir: Path) -> Path:
    def respond(*_: Any) -> Any:
        return scripted_output(json.dumps({"reasoning_trace": "Looked at it.", "answer": label}))

    def judge(*_: Any) -> Any:
        return scripted_output(json.dumps({"score": 3, "rationale": "r"}))

    [log] = eval(
        medreason(judge_cache=False),
        model=get_model(f"mockllm/always-{label}", custom_outputs=respond),
        model_roles={
            role: get_model("mockllm/judge", custom_outputs=judge, memoize=False)
            for role in ("grader", "vision_grader")
        },
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success", log.error
    return Path(log.location)


def test_the_comparison_example_is_what_the_commands_print(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first, second = run("A", tmp_path / "logs"), run("B", tmp_path / "logs")
    capsys.readouterr()
    assert main(["compare", str(first), str(second), "--format", "md"]) == 0
    printed = capsys.readouterr().out
    page = PAGE.read_text(encoding="utf-8")
    table = page[page.index("Measured on the demo data with two scripted models") :]
    shown = [line for line in table.split("\n\n")[1].splitlines() if line.startswith("| ")]
    assert shown[0].startswith("| metric | shared cases |")
    for row in shown[2:]:
        assert row in printed, (row, printed)
    assert main(["leaderboard", str(tmp_path / "logs"), "--bootstrap", "1000"]) == 0
    board = capsys.readouterr().out
    for model in ("A", "B"):
        [said] = re.findall(rf"`([^`]+)`\s+for {model}\b", table)
        [row] = [
            line
            for line in board.splitlines()
            if line.startswith("| cases.json") and f"| mockllm/always-{model} |" in line
        ]
        assert said in row, (said, row)
