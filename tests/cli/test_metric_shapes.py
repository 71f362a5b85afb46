"""Every ``medreason`` subcommand that reads eval logs reads a log whose results are in an
earlier metric shape (tests/utils/metric_shapes.py) exactly as it reads the same log in the
current one: the open-ended components were one ``components`` metric from 2026-11-24 to
2026-11-28, and each a score with its breakdowns in it before."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from utils.metric_shapes import components_results, legacy_results
from utils.rated_logs import judged_log

from inspect_medreason.cli import main


def outputs(logs: list[Path], work: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    """What each log-reading subcommand writes for two logs judging the same cases (their
    folder's name masked)."""
    found: dict[str, str] = {}
    first, second = (str(log) for log in logs)
    commands = {
        "export": ["export", first, "--output", str(work / "export.json")],
        "judge-scores": ["judge-scores", first, "--output", str(work / "judges.json")],
        "leaderboard": ["leaderboard", first, second, "--format", "json", "--breakdown"],
        "compare": ["compare", first, second, "--format", "json"],
        "agreement": ["agreement", first, second, "--format", "json"],
        "rate": ["rate", first, second, "--output", str(work / "page.html"), "--cases", "4"],
    }
    for name, command in commands.items():
        assert main(command) == 0, (name, capsys.readouterr().err)
        printed = capsys.readouterr().out
        files = sorted(work.glob("*"))
        written = "".join(path.read_text(encoding="utf-8") for path in files)
        for path in files:
            path.unlink()
        found[name] = (printed + written).replace(str(logs[0].parent), "LOGS")
    return found


@pytest.mark.parametrize("rewrite", [components_results, legacy_results])
def test_every_subcommand_reads_a_log_in_an_earlier_metric_shape_as_the_current_one(
    rewrite: Callable[[EvalLog], EvalLog], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    current = [
        judged_log(tmp_path, 6),
        judged_log(tmp_path, 6, distort=lambda _, score: max(score - 1, 0), model="mockllm/b"),
    ]
    (tmp_path / "old").mkdir()
    old = [tmp_path / "old" / log.name for log in current]
    for log, copy in zip(current, old, strict=True):
        write_eval_log(rewrite(read_eval_log(str(log))), str(copy))
    work = tmp_path / "work"
    work.mkdir()
    expected = outputs(current, work, capsys)
    rows = json.loads(expected["leaderboard"])["rows"]
    assert len(rows) == 2 and all(row["metrics"]["Open-ended GT"] is not None for row in rows)
    found = outputs(old, work, capsys)
    # the old shapes' judge intervals did not count images (issue 61): the leaderboard counts
    # them again from the cases, today's interval, and each row says so
    board = json.loads(found.pop("leaderboard"))
    for row in board["rows"]:
        recounted = [note for note in row["notes"] if "interval counted from" in note]
        assert sorted(note.split(":")[0] for note in recounted) == [
            "Open-ended GT",
            "Open-ended VA",
        ]
        row["notes"] = [note for note in row["notes"] if note not in recounted]
    assert board == json.loads(expected.pop("leaderboard"))
    assert all(row["intervals"]["Open-ended GT"] for row in board["rows"])
    assert found == expected
