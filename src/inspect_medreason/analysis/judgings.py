"""The judgings of a log, read from what each sample's score records.

``inspect score`` re-judges a log without regenerating: ``--action overwrite`` replaces
the scores (in place, or in a copy that keeps the run's ``task_id``), ``--action append``
adds a score beside the first (``open_ended_scorer1``, Inspect's name for a second score of
one scorer). Neither rewrites the header's model roles or the task's judge record, which
keep naming the first judges. What judged a case is in that case's score: the models of
each component (``judge_models``), each judge's record with its role and generation
settings (``judges``), the template set's digest. The commands read judges, panels and
lineage from there, for the score they use, never from the header.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.logs import LoggedSample, UnreadableSample, logged_samples
from inspect_medreason.core.judges import panel_members
from inspect_medreason.core.lineage import role_lineage

__all__ = [
    "COMPONENTS",
    "MCQ_SCORER",
    "OPEN_SCORER",
    "Judging",
    "choose_score",
    "is_score_of",
    "member_models",
    "read_judging",
    "score_names",
]

OPEN_SCORER = "open_ended_scorer"
MCQ_SCORER = "mcq_scorer"
COMPONENTS = ("gt_final", "va_answer", "rvf_trace")


def is_score_of(name: str, base: str) -> bool:
    """Whether a logged score is one of ``base``'s: its own name, or a later judging's
    (Inspect names an appended score ``open_ended_scorer1``, a sample's also ``-1``)."""
    return re.fullmatch(rf"{re.escape(base)}-?\d*", name) is not None


def score_names(header: EvalLog, base: str) -> list[str]:
    """The scores of scorer ``base`` a log's results hold, in order (once each, whatever
    the number of epoch reducers and of components). Read from each result's ``scorer``:
    a scorer with a dictionary of metrics logs a result per key (``gt_final``, ...), each
    naming its scorer (``open_ended_scorer1`` for an appended judging)."""
    scores = header.results.scores if header.results else []
    return list(dict.fromkeys(s.scorer for s in scores if is_score_of(s.scorer, base)))


def choose_score(path: Path, names: list[str], wanted: str | None) -> str | None:
    """The one score to read of several judgings: the one named with ``--scorer``, the only
    one, or none (no such score). Several and none named, or a name the log lacks, is a
    refusal naming the choices."""
    if wanted is not None:
        if wanted in names or not names:
            return wanted if wanted in names else None
        raise AnalysisError([f"{path}: no score {wanted!r}; it holds {_choices(names)}"])
    if len(names) > 1:
        raise AnalysisError(
            [
                f"{path} was judged {len(names)} times ({_choices(names)}); "
                "name the judging to use with --scorer"
            ]
        )
    return names[0] if names else None


def _choices(names: Iterable[str]) -> str:
    return ", ".join(repr(name) for name in names)


def member_models(record: dict[str, Any], judge_models: Any, component: str) -> list[str | None]:
    """The model of each judge of a component's record (its panel's members, in order, or
    the one judge), from the case's ``judge_models``; None where the case does not record
    it (a log written before judge_models, an edited one)."""
    members = panel_members(record)
    models = judge_models.get(component) if isinstance(judge_models, dict) else None
    if not isinstance(models, list) or len(models) != len(members):
        return [None] * len(members)
    return [model if isinstance(model, str) else None for model in models]


@dataclass
class Judging:
    """Who judged a log's cases under one score, as the cases record it."""

    scorer: str
    # role -> the models that judged under it (one, unless the log was edited)
    judges: dict[str, list[str]] = field(default_factory=dict)
    # role -> each distinct set of generation settings its judge was called with
    generation: dict[str, list[str]] = field(default_factory=dict)
    templates: list[str] = field(default_factory=list)  # judge_templates_sha256 values
    panel_reduce: list[str] = field(default_factory=list)
    cases: int = 0  # cases with a judge record under this score
    unreadable: list[str] = field(default_factory=list)

    def settings(self) -> dict[str, Any]:
        """What of the judging changes a number, for telling leaderboard rows apart."""
        return {
            "judges": self.judges,
            "generation": self.generation,
            "judge_templates": self.templates,
            "panel_reduce": self.panel_reduce,
        }

    def lineage(self, tested: str) -> list[str]:
        """Each judge that is the model under test or of its family, as the leaderboard
        shows it beside the row."""
        return [
            f"{warning.role} {warning.judge} {warning.relation}"
            for warning in role_lineage(tested, self.judges)
        ]


def read_judging(path: Path, header: EvalLog, scorer: str) -> Judging:
    """The judging of score ``scorer`` as its cases record it. A case whose record is not
    what the scorer writes is named in ``unreadable``; damage to the file raises (as
    :func:`logged_samples` does)."""
    judging = Judging(scorer)
    judges: dict[str, set[str]] = {}
    generation: dict[str, set[str]] = {}
    templates: set[str] = set()
    reductions: set[str] = set()
    for sample in logged_samples(path, header):
        if isinstance(sample, UnreadableSample):
            judging.unreadable.append(sample.describe())
            continue
        problem = _add_case(sample, scorer, judges, generation, templates, reductions)
        if problem is True:
            judging.cases += 1
        elif problem:
            judging.unreadable.append(f"case {str(sample.id)!r}: {problem}")
    judging.judges = {role: sorted(models) for role, models in sorted(judges.items())}
    judging.generation = {role: sorted(values) for role, values in sorted(generation.items())}
    judging.templates = sorted(templates)
    judging.panel_reduce = sorted(reductions)
    return judging


def _add_case(
    sample: LoggedSample,
    scorer: str,
    judges: dict[str, set[str]],
    generation: dict[str, set[str]],
    templates: set[str],
    reductions: set[str],
) -> bool | str:
    """Adds a case's judges; True when it has a judge record, else why not ("" when the
    case was not judged under this score: an MCQ case, a case refused before judging)."""
    score = sample.scores.get(scorer)
    metadata = score.metadata if score is not None else None
    if not metadata or "judges" not in metadata:
        return ""
    records, models = metadata.get("judges"), metadata.get("judge_models") or {}
    if not isinstance(records, dict) or not isinstance(models, dict):
        return "its judge record is not the scorer's (an edited log?)"
    digest = metadata.get("judge_templates_sha256")
    if isinstance(digest, str):
        templates.add(digest)
    for component in COMPONENTS:
        record = records.get(component)
        if not isinstance(record, dict) or record.get("by_rule") or component not in models:
            continue  # no judge was called: scored by rule, or refused before judging
        if isinstance(record.get("panel_reduce"), str):
            reductions.add(record["panel_reduce"])
        members = panel_members(record)
        component_models = models.get(component) or []
        # The scorer lists a component's models in its panel's order, one per judge called.
        if not isinstance(component_models, list) or len(component_models) != len(members):
            return f"{component}: {len(members)} judge(s) but models {component_models!r}"
        for member, model in zip(members, component_models, strict=True):
            role = member.get("role")
            if not isinstance(role, str) or not isinstance(model, str):
                return f"{component}: a judge without its role or model"
            judges.setdefault(role, set()).add(model)
            settings = member.get("generation")
            if isinstance(settings, dict):
                chosen = {key: value for key, value in settings.items() if key != "from"}
                generation.setdefault(role, set()).add(json.dumps(chosen, sort_keys=True))
    return True
