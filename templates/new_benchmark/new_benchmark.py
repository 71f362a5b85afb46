"""NEW_BENCHMARK (paper link): the task reads as a table of contents: data, solver, scorer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.solver import generate, prompt_template

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.hub import load_rows
from inspect_medreason.core.params import (
    DEFAULT_GENERATE_CONFIG,
    coerce_bool,
    refuse_unknown_parameters,
)
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.shift import apply_shift, parse_shift

from .dataset import HUB, read_samples
from .scorer import new_benchmark_scorer

# The family's eval.yaml is the one source of the version.
TASK_VERSION = family_version(__file__)
# The prompt lives in a file beside the task; its text and digest go to the log.
USER_PROMPT = load_template("user", Path(__file__).parent / "prompts")


@task(version=TASK_VERSION)
def new_benchmark(
    data: str | None = None,
    image_root: str | None = None,
    split: str | None = None,
    revision: str | None = None,
    images: bool = True,
    shift: str | list[str] | None = None,
    severity: int | list[int] = 0,
    shift_seed: int = 0,
    shift_judge_image: str = "clean",
    **unknown_parameters: Any,
) -> Task:
    """NEW_BENCHMARK, one split (default: the one the paper reports).

    Args:
        data: A local copy of the dataset, a file or a folder in a layout the hub publishes
            (default: the hub at the pinned commit; see the family README).
        image_root: The folder image file names are relative to (default: the data folder);
            no image may leave it.
        split: The published split to evaluate (default: the one the paper reports).
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        images: False withholds the images (blind control).
        shift: An image-quality shift by name, or several for a grid (docs/shift.md); none
            is the clean image.
        severity: The shift's severity, 1 to 3 (0 is clean), or several for a grid.
        shift_seed: The seed of the shift's randomness (drawn per case and image).
        shift_judge_image: What a vision judge sees: the clean image (``clean``, the
            default: the judge grades against the best evidence) or the one the model saw
            (``degraded``).
    """
    refuse_unknown_parameters(new_benchmark, unknown_parameters)
    # Checked before anything is read, so a mistyped shift costs no download.
    shift_plan = parse_shift(shift, severity, shift_seed, shift_judge_image)
    show_images = coerce_bool(images, "images")
    loaded = load_rows(data, HUB, revision, split, read_images=show_images)

    root = Path(image_root) if image_root is not None else loaded.image_root
    samples = read_samples(loaded, root, show_images)
    dataset = MemoryDataset(
        samples,
        name="new_benchmark",
        location=str(data or HUB.path),
    )
    task_ = Task(
        dataset=dataset,
        solver=[prompt_template(USER_PROMPT.text), generate()],
        scorer=new_benchmark_scorer(),
        config=DEFAULT_GENERATE_CONFIG,
        version=TASK_VERSION,
        # every choice that changes a number, for the log
        metadata={
            "data": loaded.origin,
            "split": loaded.origin["split"],
            "images": show_images,
            "prompts": {USER_PROMPT.name: USER_PROMPT.log_record()},
        },
    )
    return apply_shift(task_, shift_plan)
