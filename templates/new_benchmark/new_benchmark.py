"""NEW_BENCHMARK (paper link): the task reads as a table of contents: data, solver, scorer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.solver import generate, prompt_template

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.hub import collect_images, load_rows, missing_fields
from inspect_medreason.core.loaders import DatasetError
from inspect_medreason.core.params import DEFAULT_GENERATE_CONFIG, refuse_unknown_parameters
from inspect_medreason.core.prompts import load_template

from .dataset import HUB, REQUIRED_FIELDS, record_to_sample
from .scorer import new_benchmark_scorer

# The family's eval.yaml is the one source of the version.
TASK_VERSION = family_version(__file__)
# The prompt lives in a file beside the task; its text and digest go to the log.
USER_PROMPT = load_template("user", Path(__file__).parent / "prompts")


@task(version=TASK_VERSION)
def new_benchmark(
    data: str | None = None,
    split: str | None = None,
    revision: str | None = None,
    **unknown_parameters: Any,
) -> Task:
    """NEW_BENCHMARK, one split (default: the one the paper reports)."""
    refuse_unknown_parameters(new_benchmark, unknown_parameters)
    loaded = load_rows(data, HUB, revision, split)

    def id_of(row: dict[str, Any], index: int) -> str:
        return str(row.get("id", f"new_benchmark_{index:05d}"))

    problems = missing_fields(loaded, REQUIRED_FIELDS, id_of)
    if problems:
        raise DatasetError(problems)
    images = collect_images(loaded, lambda row: [row["image"]], loaded.image_root, id_of)
    samples = [
        record_to_sample(row, id_of(row, index), row_images)
        for index, (row, row_images) in enumerate(zip(loaded.rows, images, strict=True))
    ]
    return Task(
        dataset=MemoryDataset(samples, name="new_benchmark", location=str(data or HUB.path)),
        solver=[prompt_template(USER_PROMPT.text), generate()],
        scorer=new_benchmark_scorer(),
        config=DEFAULT_GENERATE_CONFIG,
        version=TASK_VERSION,
        # every choice that changes a number, for the log
        metadata={
            "data": loaded.origin,
            "split": loaded.origin["split"],
            "prompts": {USER_PROMPT.name: USER_PROMPT.log_record()},
        },
    )
