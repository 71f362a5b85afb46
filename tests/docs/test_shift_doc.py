"""docs/shift.md's offline MCQ probe runs as written and gives what the page shows (issue 62):
the commands of its block, run in a fresh folder, write the report whose rows the page
prints, the figure, its caption and a contact sheet per shifted run."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "shift.md"
# the report's columns the page leaves out (model, task, seed, judge image, test, note)
SHOWN = (2, 3, 6, 7, 8, 9, 10, 11, 13)


def probe_block() -> tuple[list[str], list[str]]:
    """The commands of the block before "Its report on the demo set", and the report rows
    the page shows after it."""
    text = PAGE.read_text(encoding="utf-8")
    at = text.index("Its report on the demo set")
    commands = re.findall(r"```bash\n(.*?)```", text[:at], re.S)[-1].strip().splitlines()
    shown = re.search(r"```text\n(.*?)```", text[at:], re.S)
    assert shown is not None
    rows = [line for line in shown.group(1).splitlines() if line.startswith("| ")][1:]
    return commands, rows


def test_the_offline_probe_writes_what_the_page_shows(tmp_path: Path) -> None:
    commands, shown = probe_block()
    assert [c.split()[0] for c in commands] == ["medreason", "inspect", "medreason"]
    env = {**os.environ, "INSPECT_LOG_DIR": str(tmp_path / "default_logs")}
    for command in commands:
        done = subprocess.run(
            shlex.split(command), cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=900, check=False,
        )  # fmt: skip
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    report = (tmp_path / "reference.md").read_text(encoding="utf-8")
    rows = [
        "| " + " | ".join(cells[i] for i in SHOWN) + " |"
        for line in report.splitlines()
        if line.startswith("| medreason/image-sensitive | mcq |")
        for cells in [[cell.strip() for cell in line.strip().strip("|").split("|")]]
        if len(cells) == 15  # the per-run table, not the summary across shifts
    ]
    assert rows == shown  # the page's table is the report, row by row
    assert "18 MCQ cases on 10 images" in PAGE.read_text(encoding="utf-8")
    with Image.open(tmp_path / "reference.png") as figure:
        assert figure.format == "PNG" and figure.width > 1000
    assert (tmp_path / "reference.caption.txt").read_text(encoding="utf-8").strip()
    sheets = sorted((tmp_path / "sheets").glob("*.png"))
    assert len(sheets) == 6, sheets  # one per shifted run: two shifts, three severities
    for sheet in sheets:
        with Image.open(sheet) as image:
            assert image.width >= 2 * 192  # clean beside degraded, 192 px tiles
