"""The package's layout is its architecture: the families and ``core`` never import the
``medreason`` command (``cli``), and ``core`` imports no family."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "inspect_medreason"
FAMILIES = sorted(path.parent.name for path in PACKAGE.glob("*/eval.yaml"))


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("folder", ["core", *FAMILIES])
def test_nothing_an_eval_imports_reaches_the_medreason_command(folder: str) -> None:
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        bad = {m for m in imported_modules(path) if m.startswith("inspect_medreason.cli")}
        assert not bad, (path, bad)


def test_core_imports_no_family() -> None:
    for path in sorted((PACKAGE / "core").rglob("*.py")):
        bad = {
            module
            for module in imported_modules(path)
            if any(module.startswith(f"inspect_medreason.{family}") for family in FAMILIES)
        }
        assert not bad, (path, bad)


def test_the_package_root_holds_only_the_registry_and_its_packages() -> None:
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert modules == ["__init__.py", "_registry.py"], modules
