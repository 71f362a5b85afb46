"""Measuring an extractor judge before it is trusted: 44 replies with known readings.

``inspect eval inspect_medreason/extractor_meta --model-role extractor=...`` (no model
under test: the task's own model is ``none``). Each probe (``extractor_probes.json``) is
sent to the extractor as ``mcq_scorer`` sends an unread reply (``core.extractor``), and its
reading is compared with the known one: a label, or none. Kinds: ``read_by_rules`` (the
rules read them too), ``read_by_person`` (a person reads them, the rules do not: what an
extractor is for), ``none`` (no single option: the extractor must say none, never guess)
and ``injection`` (the reply tries to steer the extractor). An extractor that fails on a
probe leaves it unscored, counted, never a zero.
"""

from __future__ import annotations

import json
from importlib.resources import files
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Metric, Score, Scorer, Target, grouped, mean, scorer
from inspect_ai.solver import TaskState

from inspect_medreason.core.extractor import (
    NONE_CHOSEN,
    extractor_record,
    read_with_extractor,
)
from inspect_medreason.core.judges import JudgeSettings
from inspect_medreason.core.params import task_parameters
from inspect_medreason.judge_meta.judge_meta import JUDGE_META_TASK_VERSION

PROBES_FILE = "extractor_probes.json"


def extractor_probes() -> list[dict[str, Any]]:
    text = (files("inspect_medreason") / "judge_meta" / PROBES_FILE).read_text(encoding="utf-8")
    probes: list[dict[str, Any]] = json.loads(text)["probes"]
    return probes


def build_extractor_probes() -> MemoryDataset:
    samples = [
        Sample(
            id=probe["id"],
            input=probe["reply"],
            target=probe["reading"] or NONE_CHOSEN,
            metadata={
                "kind": probe["kind"],
                "question": probe["question"],
                "options": probe["options"],
                "reply": probe["reply"],
            },
        )
        for probe in extractor_probes()
    ]
    return MemoryDataset(samples, name="extractor_probes")


def extractor_meta_metrics() -> list[Metric]:
    """The share of probes read as known, overall and per kind (``kind:none`` ...)."""
    return [mean(), grouped(mean(), "kind", all=False, name_template="kind:{group_name}")]


@scorer(metrics=extractor_meta_metrics())
def extractor_meta_scorer() -> Scorer:
    """Ask the ``extractor`` role to read the probe; compare with its known reading."""
    settings = JudgeSettings()

    async def score(state: TaskState, target: Target) -> Score:
        meta = state.metadata
        options = [(str(label), str(text)) for label, text in meta["options"]]
        reading = await read_with_extractor(
            meta["question"], options, meta["reply"], settings, "probe"
        )
        said = reading.said()
        if reading.failure is not None:
            return Score.unscored(
                reason=f"the extractor failed: {reading.failure}",
                answer=said,
                metadata={"extractor": reading.as_metadata()},
            )
        return Score(
            value=float(said == target.text),
            answer=said,
            explanation=f"{meta['kind']}: extractor said {said}, known reading {target.text}"
            + (f" ({reading.failure})" if reading.failure else ""),
            metadata={"extractor": reading.as_metadata()},
        )

    return score


@task(version=JUDGE_META_TASK_VERSION)
@task_parameters()
def extractor_meta() -> Task:
    """44 replies with known readings (a label or none), to measure an extractor judge
    before its ``accuracy_extracted`` is trusted: share read as known, per kind."""
    return Task(
        dataset=build_extractor_probes(),
        solver=[],  # nothing is generated: the replies are the probes themselves
        scorer=extractor_meta_scorer(),
        model="none/none",
        version=JUDGE_META_TASK_VERSION,
        metadata={
            "task_version": JUDGE_META_TASK_VERSION,
            "extractor": extractor_record(0.0),
            "scoring": (__doc__ or "").strip(),
        },
    )
