"""docs/reliability.md names, for each guarantee, the tests that hold it: every test file
and test it names exists, so a renamed or removed test cannot leave a guarantee unheld."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reliability.md"


def test_every_test_the_reliability_page_names_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    guarantees = [part for part in re.split(r"\n- ", text) if part.startswith("**")]
    assert len(guarantees) >= 10
    current: Path | None = None
    named = 0
    for reference in re.findall(r"`([\w/.]*test_\w+\.py|)(::\w+)?`", text):
        path, test = reference
        if path:
            current = ROOT / path
            assert current.is_file(), f"docs/reliability.md names {path}, which does not exist"
        if test:
            assert current is not None
            tree = ast.parse(current.read_text(encoding="utf-8"))
            names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
            assert test[2:] in names, f"{current.relative_to(ROOT)} has no {test[2:]}"
        named += 1
    assert named >= 25
    for guarantee in guarantees:  # each guarantee names at least one test
        assert re.search(r"`[\w/.]*test_\w+\.py|`::test_\w+`", guarantee), guarantee[:80]
