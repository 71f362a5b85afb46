"""Task and scorer arguments: their coercion (`-T`/`-S` values arrive as YAML scalars or
strings), the refusal of a name a task does not take, and the parameters several tasks share
(the judges', the image shift's), declared once (``ParameterGroup``, ``task_parameters``)."""

from __future__ import annotations

import difflib
import functools
import inspect
import re
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from inspect_ai import Task
from inspect_ai.model import GenerateConfig

from inspect_medreason.core.errors import TaskArgumentError


def coerce_bool(value: Any, name: str) -> bool:
    """Accept real booleans and the usual spellings (``true``, ``no``, ``1``...)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"true", "yes", "1", "on"}:
        return True
    if text in {"false", "no", "0", "off"}:
        return False
    raise TaskArgumentError(f"-T {name}={value!r}: expected true or false")


def coerce_int(value: Any, name: str) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError) as error:
        raise TaskArgumentError(f"-T {name}={value!r}: expected a whole number") from error


def coerce_float(value: Any, name: str) -> float:
    """YAML reads ``1e-3`` as a string; accept it."""
    try:
        return float(str(value).strip())
    except (TypeError, ValueError) as error:
        raise TaskArgumentError(f"-T {name}={value!r}: expected a number") from error


# The official baseline decodes greedily; 1024 tokens leaves room for the reasoning trace.
DEFAULT_GENERATE_CONFIG = GenerateConfig(temperature=0.0, max_tokens=1024)


def refuse_unknown_parameters(
    task: Callable[..., Any],
    given: Mapping[str, Any],
    retired: Mapping[str, str] | None = None,
) -> None:
    """Refuse the ``-T`` names ``task`` does not take, each with the parameter it most likely
    misspells, or what replaced it for a parameter that was removed (``retired``: name ->
    what to do instead). Inspect passes a task only the names its signature lists and merely
    warns about the rest, so a misspelt ``-T judge_timoeut=0`` would run with the default:
    every task collects the rest in ``**unknown_parameters`` just to hand them here."""
    if not given:
        return
    retired = retired or {}
    name = getattr(task, "__name__", str(task))
    known = [
        parameter.name
        for parameter in inspect.signature(task).parameters.values()
        if parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL)
    ]
    problems = []
    for unknown in sorted(given):
        likely = difflib.get_close_matches(unknown, [*known, *retired], n=1, cutoff=0.6)
        if unknown in retired:
            hint = f" (it was removed: {retired[unknown]})"
        elif likely and likely[0] in retired:
            hint = f" (-T {likely[0]} was removed: {retired[likely[0]]})"
        elif likely:
            hint = f" (did you mean -T {likely[0]}?)"
        else:
            hint = ""
        problems.append(f"-T {unknown}{hint}")
    parameters = ", ".join(known) if known else "none"
    raise TaskArgumentError(
        f"{name} takes no {'; '.join(problems)}. Its parameters are: {parameters}."
    )


CATCH_ALL = "unknown_parameters"
Built = TypeVar("Built")


@dataclass(frozen=True)
class SharedParameter:
    """One ``-T`` parameter several tasks take: its name, type, default and ``Args:`` entry."""

    name: str
    annotation: Any
    default: Any
    doc: str


@dataclass(frozen=True)
class ParameterGroup(Generic[Built]):
    """Parameters several tasks take together (``parameters``), and what their values become
    for the task's body (``build``, which checks them and raises ``TaskArgumentError``);
    ``retired``: a removed parameter's name -> what to give instead, for its refusal."""

    parameters: tuple[SharedParameter, ...]
    build: Callable[[dict[str, Any]], Built]
    retired: Mapping[str, str] = field(default_factory=dict)


_ARGS_SECTION = re.compile(r"^Args:\n((?:[ \t]+.*\n?|\n)*)", re.MULTILINE)
_DOC_WIDTH = 92


def _args_entries(doc: str) -> tuple[str, dict[str, str], str]:
    """A cleaned docstring cut around its ``Args:`` section: the text before, each entry
    (name -> its lines, as written), the text after."""
    found = _ARGS_SECTION.search(doc)
    if found is None:
        return doc.rstrip() + "\n\n", {}, ""
    entries: dict[str, str] = {}
    current = ""
    for line in found.group(1).splitlines():
        if line.startswith("    ") and not line.startswith("     ") and ":" in line:
            current = line.strip().split(":", 1)[0]
            entries[current] = line
        elif current and line.strip():
            entries[current] += "\n" + line
    return doc[: found.start()], entries, doc[found.end() :]


def _entry(parameter: SharedParameter) -> str:
    return textwrap.fill(
        f"{parameter.name}: {parameter.doc}",
        width=_DOC_WIDTH,
        initial_indent="    ",
        subsequent_indent="        ",
        break_on_hyphens=False,
    )


def task_parameters(
    **groups: ParameterGroup[Any],
) -> Callable[[Callable[..., Task]], Callable[..., Task]]:
    """Give a task function its public parameters: its own, each shared group in place of the
    keyword-only parameter of the group's name (which the body then receives built: a
    ``JudgeArguments``, a ``ShiftPlan``), and a ``**unknown_parameters`` that refuses any
    other name. Inspect reads the result's ``inspect.signature`` (which names it passes on,
    the defaults it logs in ``task_args``) and inspect_evals' README tooling its signature
    and ``Args:`` entries (``inspect.getdoc``), so both list every parameter, each group's
    documented once here. Every group is checked before the body runs, all problems in one
    message."""

    def declare(body: Callable[..., Task]) -> Callable[..., Task]:
        name = body.__name__
        own = inspect.signature(body, eval_str=True)
        before, entries, after = _args_entries(inspect.getdoc(body) or "")
        public: list[inspect.Parameter] = []
        lines: list[str] = []
        for parameter in own.parameters.values():
            group = groups.get(parameter.name)
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise TypeError(f"{name}: task_parameters adds the catch-all; drop *{parameter}")
            if group is None:
                if parameter.name not in entries:
                    raise TypeError(f"{name}: no Args: entry for {parameter.name}")
                public.append(parameter)
                lines.append(entries.pop(parameter.name))
                continue
            if parameter.kind is not parameter.KEYWORD_ONLY or parameter.default is not (
                parameter.empty
            ):
                raise TypeError(f"{name}: {parameter.name} must be keyword-only, no default")
            for shared in group.parameters:
                public.append(
                    inspect.Parameter(
                        shared.name,
                        inspect.Parameter.KEYWORD_ONLY,
                        default=shared.default,
                        annotation=shared.annotation,
                    )
                )
                lines.append(_entry(shared))
        missing = sorted(set(groups) - set(own.parameters))
        if missing or entries:
            raise TypeError(f"{name}: no parameter {missing}, or Args: for none {list(entries)}")
        public.append(inspect.Parameter(CATCH_ALL, inspect.Parameter.VAR_KEYWORD, annotation=Any))
        signature = own.replace(parameters=public)  # raises on a name two groups share
        retired = {n: note for group in groups.values() for n, note in group.retired.items()}

        @functools.wraps(body)
        def task_function(*args: Any, **kwargs: Any) -> Task:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as error:
                raise TaskArgumentError(f"{name}: {error}") from None
            bound.apply_defaults()
            values = dict(bound.arguments)
            refuse_unknown_parameters(task_function, values.pop(CATCH_ALL, {}), retired)
            call = {p: values[p] for p in own.parameters if p not in groups}
            problems: list[str] = []
            for key, group in groups.items():
                try:
                    call[key] = group.build({p.name: values[p.name] for p in group.parameters})
                except TaskArgumentError as error:
                    problems.append(str(error.message))
            if problems:
                raise TaskArgumentError("\n".join(problems))
            return body(**call)

        setattr(task_function, "__signature__", signature)  # noqa: B010 (mypy: no attribute)
        task_function.__annotations__ = {
            **{p.name: p.annotation for p in public if p.annotation is not p.empty},
            "return": own.return_annotation,
        }
        args_section = "Args:\n" + "\n".join(lines) + "\n" if lines else ""
        task_function.__doc__ = (before + args_section + after).rstrip() + "\n"
        return task_function

    return declare
