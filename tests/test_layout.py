"""The package's layout is its architecture: the families and ``core`` never import the
``medreason`` command (``cli``), ``core`` imports no family, and the command's modules
import one way, never its table of subcommands (``cli/main.py``)."""

from __future__ import annotations

import ast
import graphlib
import re
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


def module_level_imports(path: Path) -> set[str]:
    """What a module imports when it is imported (not inside its functions)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
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


def test_the_medreason_command_modules_never_import_its_table_and_have_no_cycle() -> None:
    """Each subcommand declares its arguments in its own module (``add_parsers``) and
    ``cli/main.py`` imports them all: none of them imports ``main``, even in a function,
    and their module-level imports form no cycle."""
    cli = {
        path.stem: path
        for path in (PACKAGE / "cli").glob("*.py")
        if path.stem not in ("__init__", "__main__")
    }
    table = "inspect_medreason.cli.main"
    for name, path in cli.items():
        if name != "main":
            assert table not in imported_modules(path), path
    prefix = "inspect_medreason.cli."
    graph = {
        name: {m.removeprefix(prefix) for m in module_level_imports(path)} & cli.keys() - {name}
        for name, path in cli.items()
    }
    assert "command_line" in graph["challenge"] and "leaderboard" in graph["main"]
    # raises graphlib.CycleError naming the modules of a cycle
    assert len(list(graphlib.TopologicalSorter(graph).static_order())) == len(cli)


def test_the_core_package_map_names_every_module() -> None:
    """core/__init__.py is a newcomer's map of the package: each module and subpackage of
    core is named there (in double backquotes)."""
    import re

    import inspect_medreason.core as core

    folder = Path(core.__file__).parent
    modules = {
        path.stem if path.is_file() else path.name
        for path in folder.iterdir()
        if (path.suffix == ".py" and path.stem != "__init__")
        or (path.is_dir() and (path / "__init__.py").is_file())
    }
    named = set(re.findall(r"``([a-z_]+)``", core.__doc__ or ""))
    assert not modules - named, f"core modules missing from core/__init__.py: {modules - named}"


def test_no_task_code_reads_the_command_line() -> None:
    """Whether a run scores, which log ``inspect score`` re-scores, where images are read
    from: decided where Inspect decides it, never by reading ``sys.argv`` (which misses
    every environment form of Inspect's options, and Python's own ``eval()``). The
    ``medreason`` command's own ``main(argv)`` in cli/ is the one exception."""
    readers = [
        f"{path.relative_to(PACKAGE)}:{number}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if "cli" not in path.relative_to(PACKAGE).parts
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bsys\.argv\b|\bfrom sys import\b.*\bargv\b", line)
    ]
    assert not readers, readers
