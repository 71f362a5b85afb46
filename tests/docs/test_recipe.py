"""CONTRIBUTING's "Adding a benchmark" recipe works as written: in a copy of the repository,
its commands are run for a toy family (the copy, the renames, the registry entry), and then
every check `.ci/run` runs passes on the result with no other file edited: ruff check, ruff
format --check, mypy, inspect-evals-lint --all, the README-command test for the family, the
family's own tests, and the checks every registered task is held to."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from docs.test_contributing import section_commands

ROOT = Path(__file__).resolve().parents[2]
# A name of another length than the template's, so a line the rename lengthens or shortens
# past the formatter's limit fails the format check.
FAMILY = "toy_kidney_ultrasound_vqa"
TITLE = "Toy Kidney Ultrasound VQA"
REGISTRY = Path("src/inspect_medreason/_registry.py")


def repository_copy(target: Path) -> None:
    """The repository's files as a clone has them (tracked, or new and not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted in the working tree is listed but absent
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def for_family(command: str) -> str:
    return command.replace("my_benchmark", FAMILY).replace("My Benchmark", TITLE)


def register(repo: Path) -> None:
    """Step 2 as CONTRIBUTING words it: the import among the family imports, both names in
    ``__all__`` (anywhere: the ruff command it shows puts them in order)."""
    path = repo / REGISTRY
    text = path.read_text(encoding="utf-8")
    line = for_family(
        "from inspect_medreason.my_benchmark import my_benchmark, my_benchmark_scorer"
    )
    *_, last = re.finditer(r"^from inspect_medreason\.\w+ import .*$", text, re.M)
    text = text[: last.end()] + "\n" + line + text[last.end() :]
    text = text.replace("__all__ = [\n", f'__all__ = [\n    "{FAMILY}_scorer",\n    "{FAMILY}",\n')
    path.write_text(text, encoding="utf-8")


def run(argv: list[str], repo: Path, env: dict[str, str]) -> None:
    result = subprocess.run(
        argv, cwd=repo, env=env, capture_output=True, text=True, timeout=1200, check=False
    )
    assert result.returncode == 0, (argv, result.stdout[-4000:], result.stderr[-3000:])


def test_the_recipe_passes_every_check_as_written(tmp_path: Path) -> None:
    repo = tmp_path / "repository"
    repository_copy(repo)
    env = {
        **os.environ,
        "PYTHONPATH": str(repo / "src"),
        "INSPECT_LOG_DIR": str(tmp_path / "inspect_logs"),
        "MYPY_CACHE_DIR": str(tmp_path / "mypy_cache"),
        "RUFF_CACHE_DIR": str(tmp_path / "ruff_cache"),
    }
    commands = section_commands("Adding a benchmark")
    assert commands[-1] == f"ruff check --fix {REGISTRY}", commands
    for command in commands[:-1]:  # step 1: copy and rename
        run(["bash", "-c", for_family(command)], repo, env)
    register(repo)
    run(shlex.split(commands[-1]), repo, env)  # step 2's ruff command
    assert f"\nfrom inspect_medreason.{FAMILY} import" in (repo / REGISTRY).read_text("utf-8")
    copied = [
        *(repo / "src/inspect_medreason" / FAMILY).rglob("*"),
        *(repo / "tests" / FAMILY).rglob("*"),
    ]
    assert (repo / "tests" / FAMILY / f"test_{FAMILY}.py").is_file()
    assert not [path for path in copied if "new_benchmark" in path.name], copied

    # the checks .ci/run runs, each as it runs them, on the copy
    run(["ruff", "check", "."], repo, env)
    run(["ruff", "format", "--check", "."], repo, env)
    run([sys.executable, "-m", "mypy"], repo, env)
    run(["inspect-evals-lint", "--all"], repo, env)
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    run(
        [
            *pytest,
            f"tests/{FAMILY}",
            f"tests/docs/test_readme_commands.py::test_every_family_readme_command_runs[{FAMILY}]",
            "tests/docs/test_readme_commands.py::test_every_link_to_a_file_or_heading_resolves"
            f"[src/inspect_medreason/{FAMILY}/README.md]",
            "tests/test_task_parameters.py",
            "tests/test_eval_yaml.py",
            "tests/docs/test_template.py",
        ],
        repo,
        env,
    )
    # and the copy is flagged as unfinished until steps 3-6 replace the template's
    # placeholders: the check names each, with its file and line (issue 62)
    flagged = subprocess.run(
        [*pytest, "tests/test_benchmarks_finished.py", "-k", FAMILY, "-p", "no:randomly"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert flagged.returncode == 1, (flagged.stdout[-3000:], flagged.stderr[-2000:])
    for placeholder in ("one line", "0000.00000", "owner/dataset", "One paragraph"):
        assert placeholder in flagged.stdout, placeholder
    # the family's tests hold for the contributor's own cases, whatever their answers: the
    # first not "yes", two with the same answer, one more row
    layout = repo / "tests" / FAMILY / "published_layout.py"
    text = layout.read_text(encoding="utf-8")
    start, end = text.index("TEST_ROWS = ["), text.index("]\n", text.index("TEST_ROWS = ["))
    layout.write_text(
        text[:start]
        + "TEST_ROWS = [\n"
        + '    ("What organ is shown?", "Liver"),\n'
        + '    ("Is there a fracture?", "no"),\n'
        + '    ("Is the heart enlarged?", "no"),\n'
        + '    ("Which side is affected?", "left"),\n'
        + text[end:],
        encoding="utf-8",
    )
    run([*pytest, f"tests/{FAMILY}"], repo, env)

    # nothing outside the new family, its tests and the registry was edited
    changed = [
        name
        for name in subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
        if (ROOT / name).is_file() and (ROOT / name).read_bytes() != (repo / name).read_bytes()
    ]
    assert changed == [str(REGISTRY)], changed
