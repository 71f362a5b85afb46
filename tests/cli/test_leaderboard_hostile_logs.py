"""leaderboard with hostile logs beside a good one: a sample entry holding another sample,
an entry declaring 700 MB, a header naming another task than the run's own start record.
Each is one line naming its log, and the good log is still ranked."""

from __future__ import annotations

import json
import shutil
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import edit_log_entry
from inspect_ai import eval

from inspect_medreason.cli import main
from inspect_medreason.core.loaders import sample_data_dir
from inspect_medreason.medreason.medreason import medreason

MODEL = "medreason/pipeline-check"
ROLES = {role: MODEL for role in ("grader", "vision_grader")}
DECLARED = 734_003_200  # 700 MiB


def another_run(source: Path, target: Path, task_id: str) -> Path:
    """A copy of the log as another run's (its own task_id in the header and the journal),
    so that it is not an attempt of the good run."""

    def rename(document: Any) -> None:
        document["eval"]["task_id"] = task_id
        document["eval"]["eval_id"] = task_id

    middle = edit_log_entry(source, target.with_suffix(".tmp"), "header.json", rename)
    edit_log_entry(middle, target, "_journal/start.json", rename)
    middle.unlink()
    return target


def swap_entries(source: Path, target: Path, first: str, second: str) -> Path:
    """The log with two sample entries' contents exchanged (each holds the other's sample)."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            name = {first: second, second: first}.get(info.filename, info.filename)
            new.writestr(info.filename, old.read(name), compress_type=zipfile.ZIP_DEFLATED)
    return target


def declare_size(path: Path, entry: str, size: int) -> Path:
    """Rewrite the central directory's uncompressed size of ``entry`` (what a zip bomb
    declares), leaving its data as it is."""
    raw = bytearray(path.read_bytes())
    name = entry.encode()
    at = raw.find(b"PK\x01\x02")  # the first central directory record
    while at != -1:
        name_length = struct.unpack_from("<H", raw, at + 28)[0]
        if raw[at + 46 : at + 46 + name_length] == name:
            struct.pack_into("<I", raw, at + 24, size)
            path.write_bytes(bytes(raw))
            return path
        at = raw.find(b"PK\x01\x02", at + 46)
    raise AssertionError(f"{entry} not in {path}")


def test_hostile_logs_are_each_one_line_and_the_good_log_is_ranked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = Path(shutil.copytree(sample_data_dir(), tmp_path / "data"))
    logs = tmp_path / "logs"
    [log] = eval(
        medreason(data=str(data)),
        model=MODEL,
        model_roles=ROLES,
        display="none",
        log_dir=str(logs),
        limit=4,  # two MCQ cases, then an open one, then an MCQ: both tracks judged
    )
    assert log.status == "success" and log.location is not None and log.samples is not None
    good = Path(log.location)
    [open_id] = [s.id for s in log.samples if s.metadata.get("task_type") == "open"]
    mcq_id = log.samples[0].id
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    swapped = swap_entries(
        another_run(good, hostile / "a.eval", "run-swapped"),
        logs / "swapped.eval",
        f"samples/{mcq_id}_epoch_1.json",
        f"samples/{open_id}_epoch_1.json",
    )
    bomb = declare_size(
        another_run(good, logs / "bomb.eval", "run-bomb"),
        f"samples/{open_id}_epoch_1.json",
        DECLARED,
    )

    def other_task(document: Any) -> None:
        document["eval"]["task"] = "inspect_medreason/mcq"
        document["eval"]["task_registry_name"] = "inspect_medreason/mcq"

    retitled = edit_log_entry(
        another_run(good, hostile / "b.eval", "run-retitled"),
        logs / "retitled.eval",
        "header.json",
        other_task,
    )

    # the good run is a --limit run: shown as its own row with --include-partial
    assert main(["leaderboard", str(logs), "--format", "json", "--include-partial"]) == 0
    captured = capsys.readouterr()
    rows = json.loads(captured.out)["rows"]
    assert [row["model"].split(" (partial")[0] for row in rows] == [MODEL]
    assert rows[0]["metrics"]["MCQ Accuracy"] is not None
    lines = captured.err.splitlines()
    assert "Traceback" not in captured.err

    def line_of(path: Path) -> str:
        [line] = [line for line in lines if str(path) in line]
        return line

    assert "holds sample" in line_of(swapped)
    assert f"declares {DECLARED:,} bytes" in line_of(bomb)
    assert "names task 'inspect_medreason/mcq' but its start record" in line_of(retitled)
