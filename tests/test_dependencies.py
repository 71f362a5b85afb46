"""The install is what the package imports at run time: every distribution the package's
code imports (at module level or inside a function) is a runtime dependency in
pyproject.toml, and every runtime dependency is imported. What only tests, scripts or
benchmarks import belongs in an extra (``dev``, ``sample-data``)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "inspect_medreason"


def normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules(folder: Path) -> dict[str, list[str]]:
    """Top-level module name -> the files importing it (relative imports left out)."""
    found: dict[str, list[str]] = {}
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.split(".")[0], []).append(str(path.relative_to(ROOT)))
    return found


def declared(group: str | None = None) -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = (
        project["dependencies"] if group is None else project["optional-dependencies"][group]
    )
    names = (re.match(r"[A-Za-z0-9_.-]+", requirement) for requirement in requirements)
    return {normalised(match.group(0)) for match in names if match}


def runtime_distributions() -> dict[str, list[str]]:
    """Distribution -> the package files importing it."""
    owners = packages_distributions()
    third_party = {
        module: files
        for module, files in imported_modules(PACKAGE).items()
        if module not in sys.stdlib_module_names and module != "inspect_medreason"
    }
    unknown = sorted(module for module in third_party if module not in owners)
    assert not unknown, f"imported but installed by no distribution: {unknown}"
    used: dict[str, list[str]] = {}
    for module, files in third_party.items():
        for distribution in owners[module]:
            used.setdefault(normalised(distribution), []).extend(files)
    return used


def test_every_import_of_the_package_is_a_runtime_dependency() -> None:
    missing = {
        name: sorted(set(files))[:3]
        for name, files in runtime_distributions().items()
        if name not in declared()
    }
    assert not missing, f"imported at run time, not in [project] dependencies: {missing}"


def test_every_runtime_dependency_is_imported_by_the_package() -> None:
    unused = declared() - set(runtime_distributions())
    assert not unused, (
        f"runtime dependencies the package never imports: {sorted(unused)}; "
        "a test's or script's own belongs in an extra"
    )


def test_what_only_tests_import_is_in_the_dev_extra() -> None:
    for name in ("pingouin", "scikit-learn"):
        assert name not in declared() and name in declared("dev")
