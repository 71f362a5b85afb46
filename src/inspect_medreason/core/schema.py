"""Pydantic models at the data boundary: one MedReason case, its options and metadata."""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic.dataclasses import dataclass as pydantic_dataclass

TaskType = Literal["mcq", "open"]

# The official scorer accepts these spellings; the Docker template also takes the
# hyphenated forms, so a loader must too or it rejects files the template produces.
TASK_TYPE_ALIASES: dict[str, TaskType] = {
    "mcq": "mcq",
    "closed": "mcq",
    "closed_ended": "mcq",
    "closed-ended": "mcq",
    "multiple_choice": "mcq",
    "multiple-choice": "mcq",
    "open": "open",
    "open_ended": "open",
    "open-ended": "open",
    "free_text": "open",
    "free-text": "open",
    # Spellings seen in released Med-CMR-style records ("question type"); the official
    # scorer does not take them, so challenge files are still checked against its list.
    "close_ended": "mcq",
    "close-ended": "mcq",
    "multi_choice": "mcq",
    "multi-choice": "mcq",
    "single_choice": "mcq",
    "single-choice": "mcq",
    "choice": "mcq",
    "free_form": "open",
    "free-form": "open",
    "open_question": "open",
}

DEFAULT_LABELS = tuple(string.ascii_uppercase)
# Unicode's control characters (category Cc) are exactly these 65 code points: C0, DEL, C1.
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f]")


def normalised_case_id(case_id: object) -> str:
    """A case id as the official validator and scorer read it: ``str(value).strip()``."""
    return str(case_id).strip()


def case_id_problem(case_id: str) -> str | None:
    """Why a case id would not survive the official validator's reading, or None: white
    space at its ends (read trimmed, ``" c1"`` is ``"c1"``: two cases would become one,
    refused at validate after the run) or a control character (a NUL, a newline, a tab:
    not a case id that can be written, exported and matched back)."""
    # One regular-expression search per id: a loop over its characters was a tenth of a
    # 100,000-case load.
    if CONTROL_CHARACTERS.search(case_id):
        controls = sorted({f"U+{ord(c):04X}" for c in CONTROL_CHARACTERS.findall(case_id)})
        return f"holds control character(s) {', '.join(controls)}; a case id is printable text"
    if case_id != case_id.strip():
        return (
            f"{case_id!r} has white space at its start or end, which the official validator "
            f"trims (it reads {case_id.strip()!r}); remove it"
        )
    return None


def sample_options(metadata: Mapping[str, Any], choices: Sequence[str]) -> list[tuple[str, str]]:
    """An MCQ sample's options as (label, text), in the order shown: the texts are the
    sample's ``choices``, the labels A, B, C... unless the metadata's ``option_labels`` names
    the case's own. (Logs written before 2026-11-23 carry them as ``options`` in metadata,
    which Inspect copied and summarised for every sample.)"""
    logged = metadata.get("options")
    if logged is not None:
        return [(option["label"], option["text"]) for option in logged]
    labels = metadata.get("option_labels") or DEFAULT_LABELS
    return list(zip(labels, choices, strict=False))


def normalise_task_type(value: object) -> TaskType:
    """Map an official task-type alias to ``mcq`` or ``open``; raise ValueError otherwise."""
    if isinstance(value, str):
        if value in TASK_TYPE_ALIASES:  # as written, the common case: no string to rebuild
            return TASK_TYPE_ALIASES[value]
        key = value.strip().lower().replace(" ", "_")
        if key in TASK_TYPE_ALIASES:
            return TASK_TYPE_ALIASES[key]
    raise ValueError(
        f"unknown task type {value!r}; expected one of {sorted(set(TASK_TYPE_ALIASES))}"
    )


# A slotted pydantic dataclass, not a BaseModel: a data set holds hundreds of thousands of
# options, and a model instance carries a dict and a set of its own (about 500 bytes more).
@pydantic_dataclass(slots=True, config=ConfigDict(extra="forbid"))
class Option:
    label: Annotated[str, Field(min_length=1)]
    text: str

    @field_validator("label")
    @classmethod
    def _label_is_trimmed(cls, value: str) -> str:
        if value != value.strip():
            raise ValueError(f"option label {value!r} has surrounding white space")
        return value


class CaseMetadata(BaseModel):
    """Known grouping fields plus anything else the data carried, kept as given."""

    model_config = ConfigDict(extra="allow")

    modality: str | None = None
    organ_system: str | None = None
    task: str | None = None
    subtype: str | None = None
    category: str | None = None
    language: str | None = None
    source: str | None = None


class Case(BaseModel):
    """One question about zero or more images, in either track."""

    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(min_length=1)
    task_type: TaskType
    question: str = Field(min_length=1)
    image_paths: list[str] = Field(default_factory=list)
    context: str | None = None
    options: list[Option] = Field(default_factory=list)
    answer: str | None = None
    reference_reasoning: str | None = None
    metadata: CaseMetadata = Field(default_factory=CaseMetadata)

    @field_validator("task_type", mode="before")
    @classmethod
    def _normalise_task_type(cls, value: object) -> TaskType:
        return normalise_task_type(value)

    @field_validator("case_id", "question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("case_id")
    @classmethod
    def _as_the_validator_reads_it(cls, value: str) -> str:
        problem = case_id_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("options", mode="before")
    @classmethod
    def _options_from_strings(cls, value: Any) -> Any:
        # The contract allows a bare list of option texts, labelled A, B, C, ...
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            if len(value) > len(DEFAULT_LABELS):
                raise ValueError(
                    f"{len(value)} options given as bare strings, but only {len(DEFAULT_LABELS)} "
                    "can be labelled A-Z: give them as {label, text} objects"
                )
            return [{"label": DEFAULT_LABELS[i], "text": text} for i, text in enumerate(value)]
        return value

    @model_validator(mode="after")
    def _track_rules(self) -> Case:
        problems: list[str] = []
        labels = [option.label for option in self.options]
        if self.task_type == "mcq":
            if len(self.options) < 2:
                problems.append("options: an MCQ case needs at least two options")
            if len(set(labels)) != len(labels):
                problems.append(f"options: duplicate labels {labels}")
            if self.answer is not None and self.answer.strip() not in labels:
                problems.append(f"answer: {self.answer!r} is not one of the option labels {labels}")
        elif self.options:
            problems.append("options: an open case must not have options")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @property
    def labels(self) -> list[str]:
        return [option.label for option in self.options]


class GroundTruthEntry(BaseModel):
    """One row of the official ``ground_truth.json``; open cases may omit the answer."""

    model_config = ConfigDict(extra="allow")

    case_id: str = Field(min_length=1)
    task_type: TaskType
    answer: str | None = None

    @field_validator("case_id")
    @classmethod
    def _as_the_validator_reads_it(cls, value: str) -> str:
        problem = case_id_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("task_type", mode="before")
    @classmethod
    def _normalise_task_type(cls, value: object) -> TaskType:
        return normalise_task_type(value)
