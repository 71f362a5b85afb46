"""User errors print as a message; Inspect's own set-up errors are recognised; the package
imports only Inspect's public API."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from inspect_ai.model import get_model

from inspect_medreason.core.errors import (
    TaskArgumentError,
    UserInputError,
    describe_error,
    first_few,
    is_setup_error,
)

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "inspect_medreason"


def test_a_user_error_prints_as_its_message_on_a_click_command_line() -> None:
    # Inspect's command line is a click program: it shows a ClickException as one line.
    @click.command()
    def run() -> None:
        raise TaskArgumentError("-T shuffle='maybe': use true or false")

    result = CliRunner().invoke(run, [])
    assert result.exit_code == 1
    assert result.output.strip() == "Error: -T shuffle='maybe': use true or false"
    error = UserInputError("bad data")
    assert isinstance(error, ValueError) and str(error) == error.message == "bad data"


def test_importing_the_plugin_installs_no_process_wide_hook() -> None:
    check = (
        "import sys, threading\n"
        "before = (sys.excepthook, threading.excepthook, sys.unraisablehook)\n"
        "import inspect_medreason, inspect_medreason._registry\n"
        "assert (sys.excepthook, threading.excepthook, sys.unraisablehook) == before\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_inspect_missing_role_error_is_a_setup_error() -> None:
    with pytest.raises(Exception) as raised:
        get_model(role="no_such_role_here", required=True)
    assert is_setup_error(raised.value)
    assert is_setup_error(UserInputError("bad data"))
    assert not is_setup_error(RuntimeError("provider hiccup"))


def test_the_package_imports_no_private_inspect_module() -> None:
    private = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            private += [f"{path.name}: {n}" for n in names if n.startswith("inspect_ai._")]
    assert private == []


def test_describe_error_is_one_bounded_line_naming_invalid_fields() -> None:
    from pydantic import BaseModel

    class Record(BaseModel):
        name: str
        count: int

    try:
        Record.model_validate({"name": ["x" * 10_000], "count": "many"})
    except ValueError as error:
        text = describe_error(error)
    assert text == (
        "ValidationError: name: Input should be a valid string; "
        "count: Input should be a valid integer, unable to parse string as an integer"
    )
    huge = describe_error(RuntimeError("line one\nline two " + "y" * 10_000))
    assert huge.startswith("RuntimeError: line one line two yyy") and len(huge) == 503


def test_first_few_names_the_rest_by_count() -> None:
    assert first_few(["a", "b"], 3) == "a, b"
    assert first_few(["a", "b", "c", "d"], 3) == "a, b, c and 1 more"
    assert first_few(["a", "b", "c"], 1, "; ") == "a and 2 more"
