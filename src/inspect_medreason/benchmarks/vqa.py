"""VQA-RAD, SLAKE and PathVQA: short-answer medical VQA.

Closed (yes/no) questions are scored by normalised exact match of the final answer (English
and Chinese yes/no synonyms); other closed answers (SLAKE's "which is larger...") by
normalised exact match of the text. Open questions: a normalised exact match counts as
correct without a judge call, otherwise the ``grader`` role decides; a grader failure is
unscored, never wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.scorer import Metric, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from inspect_medreason.benchmarks.common import (
    accuracy_closed,
    accuracy_open,
    build_sample,
    final_answer,
    grade_correctness,
    is_yes_no_reference,
    normalise_answer,
    yes_no,
)
from inspect_medreason.benchmarks.hub import HubSource, collect_images, load_rows
from inspect_medreason.judges import JudgeSettings
from inspect_medreason.loaders import DatasetError, Problem
from inspect_medreason.params import coerce_bool
from inspect_medreason.prompts import load_template
from inspect_medreason.scorers import breakdown, require_judge_roles
from inspect_medreason.solvers import template_prompt
from inspect_medreason.tasks import DEFAULT_GENERATE_CONFIG

VQA_TASK_VERSION = "1.1.0"


@dataclass(frozen=True)
class VqaBenchmark:
    """How one VQA dataset's rows map onto questions, answers, images and groups."""

    name: str
    hub: HubSource
    licence: str
    images_of: Callable[[dict[str, Any]], list[Any]]
    answer_type_of: Callable[[dict[str, Any]], str]
    group_fields: dict[str, str] = field(default_factory=dict)  # metadata key -> row field
    language_field: str | None = None


VQA_RAD = VqaBenchmark(
    name="vqa_rad",
    hub=HubSource(
        "flaviagiammarino/vqa-rad",
        split="test",
        layout="the test split as parquet (or a datasets.save_to_disk folder) with image, question, answer",
    ),
    licence="CC0 1.0",
    images_of=lambda row: [row["image"]],
    answer_type_of=lambda row: "closed" if is_yes_no_reference(str(row["answer"])) else "open",
)
PATH_VQA = VqaBenchmark(
    name="path_vqa",
    hub=HubSource(
        "flaviagiammarino/path-vqa",
        split="test",
        layout="the test split as parquet (or a datasets.save_to_disk folder) with image, question, answer",
    ),
    licence="MIT",
    images_of=lambda row: [row["image"]],
    answer_type_of=lambda row: "closed" if is_yes_no_reference(str(row["answer"])) else "open",
)
SLAKE = VqaBenchmark(
    name="slake",
    hub=HubSource(
        "BoKelvin/SLAKE",
        split="test",
        layout="test.json with img_name, question, answer, q_lang, answer_type, modality, content_type, location, and the imgs/ folder as -T image_root",
    ),
    licence="CC BY 4.0",
    images_of=lambda row: [row.get("image") or row["img_name"]],
    answer_type_of=lambda row: (
        "closed" if str(row.get("answer_type", "")).upper() == "CLOSED" else "open"
    ),
    group_fields={"modality": "modality", "content_type": "content_type", "organ": "location"},
    language_field="q_lang",
)


def closed_correct(answer: str, reference: str) -> bool:
    expected = yes_no(reference)
    if expected is not None:
        return yes_no(answer) == expected
    return bool(answer) and normalise_answer(answer) == normalise_answer(reference)


def vqa_metrics(group_fields: list[str]) -> list[Metric | dict[str, list[Metric]]]:
    base: list[Metric | dict[str, list[Metric]]] = [
        accuracy(), stderr(), accuracy_closed(), accuracy_open(),
    ]  # fmt: skip
    return [*base, *breakdown(group_fields, of="accuracy")]


@scorer(metrics=vqa_metrics([]))
def vqa_scorer(allow_self_judging: bool = False, **judge_args: Any) -> Scorer:
    """Closed: normalised exact match. Open: exact match, else the ``grader`` role."""
    settings = JudgeSettings.from_judge_args(judge_args)
    self_judging = coerce_bool(allow_self_judging, "allow_self_judging")

    async def score(state: TaskState, target: Target) -> Score:
        answer, method = final_answer(state.output.completion)
        reference = target.text
        details: dict[str, Any] = {
            "extracted_answer": answer, "extraction_method": method, "reference": reference,
        }  # fmt: skip
        if state.metadata.get("answer_type") == "closed":
            correct = closed_correct(answer, reference)
            return Score(value=float(correct), answer=answer, metadata=details,
                         explanation=f"closed: {answer!r} vs {reference!r}")  # fmt: skip
        if not answer:
            return Score(value=0.0, answer="", metadata=details,
                         explanation="no final answer in the reply: counted wrong")  # fmt: skip
        if normalise_answer(answer) == normalise_answer(reference):
            return Score(value=1.0, answer=answer, metadata={**details, "graded_by": "exact_match"},
                         explanation="open: exact match with the reference")  # fmt: skip
        outcome = await grade_correctness(
            state.metadata.get("question", ""), reference, answer, settings, self_judging
        )
        details["grader"] = outcome.as_metadata()
        if outcome.score is None:
            return Score.unscored(reason=outcome.failure, answer=answer, metadata=details)
        return Score(value=float(outcome.score), answer=answer, metadata=details,
                     explanation=f"open, grader: {outcome.rationale}")  # fmt: skip

    return score


def vqa_task(
    benchmark: VqaBenchmark,
    data: str | None,
    image_root: str | None,
    revision: str | None,
    language: str | None,
    images: Any,
    judge_args: dict[str, Any],
) -> Task:
    show_images = coerce_bool(images, "images")
    require_judge_roles(
        ["grader"], coerce_bool(judge_args.get("allow_self_judging", False), "allow_self_judging")
    )
    loaded = load_rows(data, benchmark.hub, revision)
    rows = loaded.rows
    if benchmark.language_field and language and language != "all":
        rows = [r for r in rows if str(r.get(benchmark.language_field, "")) == language]
    root = loaded.image_root if image_root is None else Path(image_root)
    source = str(data or benchmark.hub.path)

    def id_of(row: dict[str, Any], index: int) -> str:
        return str(row.get("qid", row.get("id", f"{benchmark.name}_{index:05d}")))

    files = collect_images(rows, benchmark.images_of, root, source, id_of)
    missing = [Problem(source, id_of(r, i), key, "missing") for i, r in enumerate(rows)
               for key in ("question", "answer") if not str(r.get(key, "")).strip()]  # fmt: skip
    if missing:
        raise DatasetError(missing)
    if not rows:
        raise DatasetError([Problem(source, "-", "data", "no rows (check -T language)")])
    system, user = load_template("vqa_system"), load_template("vqa_user")
    samples = []
    for index, (row, row_files) in enumerate(zip(rows, files, strict=True)):
        metadata = {
            "question": str(row["question"]),
            "answer_type": benchmark.answer_type_of(row),
            **{
                key: str(row.get(column) or "unknown")
                for key, column in benchmark.group_fields.items()
            },
        }
        if benchmark.language_field:
            metadata["language"] = str(row.get(benchmark.language_field, ""))
        prompt = {
            "system": system.name,
            "user": user.name,
            "values": {"question": str(row["question"])},
        }
        samples.append(build_sample(
            f"{id_of(row, index)}", row_files, str(row["question"]), prompt,
            str(row["answer"]), metadata, show_images,
        ))  # fmt: skip
    return Task(
        dataset=MemoryDataset(samples, name=benchmark.name, location=source),
        solver=template_prompt(),
        scorer=vqa_scorer(**judge_args),
        metrics=vqa_metrics(list(benchmark.group_fields)),
        config=DEFAULT_GENERATE_CONFIG,
        version=VQA_TASK_VERSION,
        metadata={
            "task_version": VQA_TASK_VERSION,
            "data": loaded.origin,
            "licence": benchmark.licence,
            "language": language,
            "images": show_images,
            "prompts": {t.name: t.log_record() for t in (system, user)},
            "scoring": __doc__,
        },
    )


def _judge_args(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if k.startswith(("judge_", "allow_"))}


@task(version=VQA_TASK_VERSION)
def vqa_rad(
    data: str | None = None,
    revision: str | None = None,
    images: bool = True,
    allow_self_judging: bool = False,
    judge_temperature: float = 0.0,
    judge_seed: int = 42,
    judge_max_tokens: int = 256,
    judge_retries: int = 2,
    judge_structured_output: bool = True,
    judge_cache: bool = True,
    judge_timeout: float = 120.0,
) -> Task:
    """VQA-RAD test split (451 QA): closed yes/no by exact match, open by the grader role."""
    return vqa_task(VQA_RAD, data, None, revision, None, images, _judge_args(locals()))


@task(version=VQA_TASK_VERSION)
def path_vqa(
    data: str | None = None,
    revision: str | None = None,
    images: bool = True,
    allow_self_judging: bool = False,
    judge_temperature: float = 0.0,
    judge_seed: int = 42,
    judge_max_tokens: int = 256,
    judge_retries: int = 2,
    judge_structured_output: bool = True,
    judge_cache: bool = True,
    judge_timeout: float = 120.0,
) -> Task:
    """PathVQA test split: closed yes/no by exact match, open by the grader role."""
    return vqa_task(PATH_VQA, data, None, revision, None, images, _judge_args(locals()))


@task(version=VQA_TASK_VERSION)
def slake(
    data: str | None = None,
    image_root: str | None = None,
    language: str = "en",
    revision: str | None = None,
    images: bool = True,
    allow_self_judging: bool = False,
    judge_temperature: float = 0.0,
    judge_seed: int = 42,
    judge_max_tokens: int = 256,
    judge_retries: int = 2,
    judge_structured_output: bool = True,
    judge_cache: bool = True,
    judge_timeout: float = 120.0,
) -> Task:
    """SLAKE test split (``language=en|zh|all``); images by ``img_name`` under ``image_root``
    (default: the data folder). Grouped by modality, content type and organ."""
    return vqa_task(SLAKE, data, image_root, revision, language, images, _judge_args(locals()))
