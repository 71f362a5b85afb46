"""User errors print as a message; Inspect's own set-up errors are recognised; the package
imports only Inspect's public API."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import TracebackType

import pytest
from inspect_ai.model import get_model

from inspect_medreason.core.errors import (
    TaskArgumentError,
    UserInputError,
    describe_error,
    first_few,
    install_user_error_hook,
    is_setup_error,
    user_error_hook,
)

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "inspect_medreason"


def test_hook_prints_a_user_error_as_its_message_and_passes_others_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    passed_on: list[BaseException] = []

    def previous(kind: type[BaseException], error: BaseException, tb: TracebackType | None) -> None:
        passed_on.append(error)

    hook = user_error_hook(previous)
    hook(TaskArgumentError, TaskArgumentError("-T shuffle='maybe': use true or false"), None)
    other = RuntimeError("a bug")
    hook(RuntimeError, other, None)
    assert "-T shuffle='maybe': use true or false" in capsys.readouterr().err
    assert passed_on == [other]


def test_hook_is_chained_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "excepthook", sys.__excepthook__)
    install_user_error_hook()
    first = sys.excepthook
    install_user_error_hook()
    assert sys.excepthook is first and first is not sys.__excepthook__


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
