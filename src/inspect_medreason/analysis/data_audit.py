"""An audit of a data set before anyone trains or evaluates on it (``medreason check-data``
is its shell, ``cli/check_data.py``).

Findings:

- **answer leakage**: the reference reasoning (``visual_description``) contains the case's
  normalised reference answer (an open answer, or the text of an MCQ's correct option) as a
  whole phrase, so a model prompted or trained with it can read the answer off. Answers that
  are a bare yes/no are not checked (their words occur in any description);
- **conflicting answers**: cases on the same image content (by hash, whatever the file names)
  asking the same question with different answers (MCQ answers compared by option text);
- **duplicate questions**: the same question on the same image content more than once;
- **MCQ answer-label balance**: how often each label is the answer, against what a uniform
  draw over each case's own options would give (chi-square test);
- **coverage**: cases per track, modality and organ system;
- **images** that are missing, leave the data folder, do not decode, or are tiny.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from inspect_medreason.analysis.display import NotebookDisplay
from inspect_medreason.core.extraction import normalise_text
from inspect_medreason.core.files import file_sha256
from inspect_medreason.core.images import ImagePathError, check_images_decode
from inspect_medreason.core.loaders import (
    UNKNOWN_GROUP,
    load_cases,
    prepare_image,
    refuse_non_utf8_path,
)
from inspect_medreason.core.schema import Case

# Smaller than this on either side is reported as tiny (icons, thumbnails, broken exports).
DEFAULT_MIN_SIDE = 32
UNCHECKABLE_ANSWERS = frozenset({"yes", "no", "是", "否"})


def reference_answer_text(case: Case) -> str | None:
    """The answer as words: an open case's answer, or the text of an MCQ's correct option."""
    if case.answer is None or not case.answer.strip():
        return None
    if case.task_type == "mcq":
        by_label = {option.label: option.text for option in case.options}
        return by_label.get(case.answer.strip())
    return case.answer


def leaks_answer(case: Case) -> bool | None:
    """True when the reference reasoning holds the normalised answer as a whole phrase;
    None when it cannot be checked (no reasoning, no answer, a bare yes/no)."""
    answer = reference_answer_text(case)
    if not case.reference_reasoning or answer is None:
        return None
    needle = normalise_text(answer)
    if not needle or needle in UNCHECKABLE_ANSWERS:
        return None
    return f" {needle} " in f" {normalise_text(case.reference_reasoning)} "


@dataclass
class ImageFinding:
    path: str
    problem: str
    cases: list[str]


@dataclass(repr=False)
class Audit(NotebookDisplay):
    """Everything ``check-data`` found; ``leakage`` decides ``--strict``."""

    data: str
    cases: int
    by_track: dict[str, int]
    by_modality: dict[str, int]
    by_organ_system: dict[str, int]
    leakage: list[dict[str, str]] = field(default_factory=list)
    leakage_checked: int = 0
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    label_balance: dict[str, Any] = field(default_factory=dict)
    images: list[ImageFinding] = field(default_factory=list)
    distinct_images: int = 0

    def display_summary(self) -> str:
        found = {
            "leakage": len(self.leakage),
            "conflicts": len(self.conflicts),
            "duplicates": len(self.duplicates),
            "image findings": len(self.images),
        }
        findings = ", ".join(f"{n} {what}" for what, n in found.items() if n) or "clean"
        return f"{self.data}: {self.cases} case(s), {self.distinct_images} image(s); {findings}"

    @property
    def clean(self) -> bool:
        return not (self.leakage or self.conflicts or self.duplicates or self.images)

    def as_dict(self) -> dict[str, Any]:
        """Every finding, and ``clean`` (``check-data --format json``'s document)."""
        return {**asdict(self), "clean": self.clean}

    def to_pandas(self) -> Any:
        """One row per finding: ``finding`` (leakage, conflict, duplicate, image), the
        ``cases`` it concerns, and its ``detail`` (the answer, the question, the problem)."""
        import pandas as pd

        rows = [("leakage", [row["case_id"]], f"answer {row['answer']!r}") for row in self.leakage]
        rows += [
            ("conflict", list(c["cases"]), f"{c['question']!r} -> {c['answers']}")
            for c in self.conflicts
        ]
        rows += [("duplicate", list(d["cases"]), repr(d["question"])) for d in self.duplicates]
        rows += [("image", list(i.cases), f"{i.path}: {i.problem}") for i in self.images]
        return pd.DataFrame(rows, columns=["finding", "cases", "detail"])


def _image_hashes(
    cases: list[Case], data_dir: Path, min_side: int
) -> tuple[dict[str, str], list[ImageFinding]]:
    """Content hash per image path, and what is wrong with the images (each file once)."""
    users: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        for relative in case.image_paths:
            users[relative].append(case.case_id)
    hashes: dict[str, str] = {}
    findings: list[ImageFinding] = []
    resolved: dict[str, Path] = {}
    real_root = Path(os.path.realpath(data_dir))
    for relative, case_ids in users.items():
        try:
            resolved[relative] = prepare_image(
                data_dir, relative, check_decodes=False, real_root=real_root
            )
        except ImagePathError as error:
            findings.append(ImageFinding(relative, str(error), case_ids))
    # Decoded in full as the loader does, and remembered across runs with it.
    undecodable = check_images_decode(list(resolved.values()))
    for relative, path in resolved.items():
        case_ids = users[relative]
        if path in undecodable:
            findings.append(ImageFinding(relative, undecodable[path], case_ids))
            continue
        with Image.open(path) as image:
            width, height = image.size
        if min(width, height) < min_side:
            findings.append(
                ImageFinding(
                    relative,
                    f"tiny: {width}x{height} pixels (under {min_side} on a side)",
                    case_ids,
                )
            )
        hashes[relative] = file_sha256(path)
    return hashes, findings


def label_balance(cases: list[Case]) -> dict[str, Any]:
    """Answer-label counts against a uniform draw over each case's own options."""
    from scipy.stats import chisquare

    mcq = [case for case in cases if case.task_type == "mcq" and case.answer]
    if not mcq:
        return {}
    observed: Counter[str] = Counter(str(case.answer).strip() for case in mcq)
    expected: dict[str, float] = defaultdict(float)
    for case in mcq:
        for label in case.labels:
            expected[label] += 1 / len(case.labels)
    labels = sorted(expected)
    rows = {
        label: {
            "answers": observed[label],
            "expected": round(expected[label], 1),
            "share": round(observed[label] / len(mcq), 3),
        }
        for label in labels
    }
    result: dict[str, Any] = {"cases": len(mcq), "labels": rows}
    if len(labels) > 1:
        test = chisquare(
            [observed[label] for label in labels], [expected[label] for label in labels]
        )
        result["chi_square"] = round(float(test.statistic), 3)
        result["p_value"] = float(test.pvalue)
    return result


def audit_data(data: str | Path, min_side: int = DEFAULT_MIN_SIDE) -> Audit:
    """Audit every case of ``data`` (any layout the loader reads). Raises DatasetError when
    the records themselves cannot be read; image problems are findings, not errors."""
    refuse_non_utf8_path(data)
    loaded = load_cases(data, check_images=False)
    cases = loaded.cases

    def count(values: list[str | None]) -> dict[str, int]:
        return dict(Counter(value or UNKNOWN_GROUP for value in values).most_common())

    report = Audit(
        data=str(data),
        cases=len(cases),
        by_track=count([case.task_type for case in cases]),
        by_modality=count([case.metadata.modality for case in cases]),
        by_organ_system=count([case.metadata.organ_system for case in cases]),
    )
    for case in cases:
        leaked = leaks_answer(case)
        if leaked is None:
            continue
        report.leakage_checked += 1
        if leaked:
            report.leakage.append(
                {
                    "case_id": case.case_id,
                    "task_type": case.task_type,
                    "answer": str(reference_answer_text(case)),
                }
            )
    hashes, report.images = _image_hashes(cases, loaded.data_dir, min_side)
    report.distinct_images = len(set(hashes.values()))
    groups: dict[tuple[tuple[str, ...], str], list[Case]] = defaultdict(list)
    for case in cases:
        content = tuple(sorted(hashes.get(path, f"unreadable:{path}") for path in case.image_paths))
        groups[content, normalise_text(case.question)].append(case)
    for members in groups.values():
        if len(members) < 2:
            continue
        ids = [case.case_id for case in members]
        answers = {
            normalise_text(text)
            for case in members
            if (text := reference_answer_text(case)) is not None
        }
        entry = {
            "cases": ids,
            "question": members[0].question[:200],
            "images": members[0].image_paths,
        }
        if len(answers) > 1:
            report.conflicts.append({**entry, "answers": sorted(answers)})
        else:
            report.duplicates.append(entry)
    report.label_balance = label_balance(cases)
    return report
