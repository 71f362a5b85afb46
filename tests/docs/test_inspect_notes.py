"""docs/inspect_notes.md's reproduction of what --no-log-images misses runs as shown and
prints what the page says: the day Inspect fixes either, this fails and the plugin's
workaround (core/solvers.py's two steps, core/rescored_images.py) can go."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "inspect_notes.md"


def test_the_no_log_images_reproduction_shows_both_leaks(tmp_path: Path) -> None:
    [block] = [
        code
        for code in re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
        if "--no-log-images leaves images" in code
    ]
    script = tmp_path / "repro.py"
    script.write_text(block, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()[-3:]
    assert lines == [
        "edit and insert in one step: 1 image(s) in the log",
        "insert, then edit: 0 image(s) in the log",
        "re-scored with a vision judge: 1 image(s) in the log",
    ], done.stdout
