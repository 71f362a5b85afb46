"""CONTRIBUTING.md shows the checks CI runs: each check command it shows is a line of
`.ci/run`, in `.ci/run`'s order, and every check `.ci/run` runs is shown."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
CI_RUN = ROOT / ".ci" / "run"


def section_commands(heading: str) -> list[str]:
    """The commands of the bash blocks under a `## heading` of CONTRIBUTING.md."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"CONTRIBUTING.md has no '## {heading}' section"
    commands: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", match.group(1), re.S):
        for line in block.splitlines():
            command = line.split("  #", 1)[0].strip()
            if command and not command.startswith("#"):
                commands.append(command)
    return commands


def ci_lines() -> list[str]:
    """The commands `.ci/run` runs, in order (not its comments, shell options or `cd`)."""
    lines = [line.strip() for line in CI_RUN.read_text(encoding="utf-8").splitlines()]
    return [
        line
        for line in lines
        if line and not line.startswith(("#", "set ", "cd ")) and not line.startswith("#!")
    ]


def test_the_set_up_command_is_the_one_ci_installs_with() -> None:
    [install] = [c for c in section_commands("Set-up") if c.startswith("pip install")]
    assert install in ci_lines()


def test_each_check_contributing_shows_is_a_line_of_ci_run_in_its_order() -> None:
    ci = ci_lines()
    checks = section_commands("Checks")
    assert checks, "CONTRIBUTING.md shows no check"
    missing = [check for check in checks if check not in ci]
    assert not missing, f"shown in CONTRIBUTING.md but not run by .ci/run: {missing}"
    positions = [ci.index(check) for check in checks]
    assert positions == sorted(positions), (checks, ci)


def test_every_check_ci_runs_is_shown() -> None:
    shown = set(section_commands("Checks")) | set(section_commands("Set-up"))
    not_shown = [line for line in ci_lines() if line not in shown]
    assert not not_shown, f"run by .ci/run but not shown in CONTRIBUTING.md: {not_shown}"


def test_the_fast_test_command_is_the_readmes_and_ci_runs_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    fast = 'python -m pytest -q -m "not slow"'
    assert fast in section_commands("Checks") and fast in ci_lines()
    assert re.search(rf"```bash\n{re.escape(fast)}\n```", readme), "README's test command"


def slow_tests() -> set[str]:
    """The keys of SLOW_TESTS in tests/conftest.py, the list that marks tests slow."""
    tree = ast.parse((ROOT / "tests" / "conftest.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "SLOW_TESTS" for t in targets):
                assert node.value is not None
                return set(ast.literal_eval(node.value))
    raise AssertionError("tests/conftest.py has no SLOW_TESTS")


def test_the_slow_tests_contributing_lists_are_the_ones_marked_slow() -> None:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    listed = set(re.findall(r"^\| `(tests/[^`]+)` \|", text, re.M))
    slow = slow_tests()
    assert slow, "no slow test"
    # every slow test is listed; every listed test path that is not a folder is slow
    assert slow <= listed, slow - listed
    assert {t for t in listed if t.endswith(".py") or "::" in t} <= slow
