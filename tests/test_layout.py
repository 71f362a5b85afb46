"""The package's layout is its architecture: the families and ``core`` never import the
``medreason`` command (``cli``), ``core`` imports no family, and the command's modules
import one way, never its table of subcommands (``cli/commands.py``)."""

from __future__ import annotations

import ast
import graphlib
import re
import subprocess
import sys
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


def package_modules() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its ``__init__``)."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


def import_graph() -> dict[str, set[str]]:
    """Which of the package's modules each imports, at its top or inside a function.
    ``from package import module`` counts as importing the module, not the package's
    ``__init__`` (whose own imports of its modules, inside functions, would otherwise close
    a circle that never runs: ``cli/__init__``'s ``main`` imports the table lazily)."""
    modules = package_modules()
    graph = {}
    for name, path in modules.items():
        imports = {m for m in imported_modules(path) if m in modules}
        submodule_parents = {m.rsplit(".", 1)[0] for m in imports if m.rsplit(".", 1)[0] in imports}
        graph[name] = imports - submodule_parents - {name}
    return graph


def test_the_package_has_no_import_circle() -> None:
    """No module reaches itself through the modules it imports, not even through an import
    inside a function: each package below imports only what is beneath it."""
    graph = import_graph()
    # raises graphlib.CycleError naming the modules of a circle
    order = list(graphlib.TopologicalSorter(graph).static_order())
    assert len(order) == len(graph)
    assert "inspect_medreason.analysis.logs" in graph["inspect_medreason.analysis.export"]


@pytest.mark.parametrize("library", ["analysis", "rating"])
def test_the_libraries_over_logs_never_import_the_command(library: str) -> None:
    """The analyses and the rating round are libraries a notebook imports: nothing in them
    imports the ``medreason`` command (``cli``), not even inside a function."""
    prefix = f"inspect_medreason.{library}"
    for name, imports in import_graph().items():
        if name == prefix or name.startswith(prefix + "."):
            bad = {m for m in imports if m.startswith("inspect_medreason.cli")}
            assert not bad, (name, bad)


def loaded_modules(code: str) -> list[str]:
    """The package's modules a fresh interpreter holds after running ``code``."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            code + "\nimport sys\n"
            "print(sorted(m for m in sys.modules if m.startswith('inspect_medreason.')))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded: list[str] = ast.literal_eval(done.stdout.strip().splitlines()[-1])
    return loaded


def test_every_public_name_of_the_libraries_imports_without_the_command() -> None:
    """In a plain interpreter, every name ``inspect_medreason.analysis`` and ``rating``
    offer resolves, and none loads a module of ``cli``. (The package itself imports its
    registry, and so the families: Inspect finds the tasks through it.)"""
    code = (
        "from inspect_medreason import analysis, rating\n"
        "for library in (analysis, rating):\n"
        "    for name in library.__all__:\n"
        "        assert getattr(library, name) is not None, name\n"
        "    assert sorted(library.__all__) == sorted(library._HOMES)\n"
    )
    loaded = loaded_modules(code)
    assert "inspect_medreason.analysis.leaderboard" in loaded
    assert "inspect_medreason.rating.server" in loaded
    assert not [m for m in loaded if m.startswith("inspect_medreason.cli")], loaded


@pytest.mark.parametrize(
    "first",
    [
        "inspect_medreason.rating.cases",
        "inspect_medreason.rating.ratings_file",
        "inspect_medreason.rating.page",
        "inspect_medreason.analysis.agreement",
        "inspect_medreason.analysis.calibration",
        "inspect_medreason.analysis.leaderboard",
    ],
)
def test_any_module_of_the_libraries_can_be_imported_first(first: str) -> None:
    """The analyses read rating rounds and the rating page reads logs: whichever a fresh
    interpreter imports first, nothing finds a module half-imported."""
    loaded = loaded_modules(f"import {first}\nimport inspect_medreason.analysis.shift")
    assert first in loaded


def test_the_medreason_command_table_is_imported_by_no_module() -> None:
    """``cli/commands.py`` is the table of subcommands: nothing imports it but the command's
    entry points."""
    table = "inspect_medreason.cli.commands"
    entry_points = {"inspect_medreason.cli", "inspect_medreason.cli.__main__"}
    importers = {name for name, imports in import_graph().items() if table in imports}
    assert importers == entry_points, importers


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
