"""NEW_BENCHMARK (paper link): the task reads as a table of contents: data, solver, scorer."""

from __future__ import annotations

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset
from inspect_ai.solver import generate, prompt_template

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.hub import load_rows
from inspect_medreason.core.params import (
    DEFAULT_GENERATE_CONFIG,
    coerce_bool,
    task_parameters,
)
from inspect_medreason.core.prompts import load_template
from inspect_medreason.core.shift import ShiftPlan, apply_shift, shift_parameters

from .dataset import HUB, read_samples
from .scorer import new_benchmark_scorer

# The family's eval.yaml is the one source of the version.
TASK_VERSION = family_version(__file__)
# The prompt lives in a file beside the task; its text and digest go to the log.
USER_PROMPT = load_template("user", Path(__file__).parent / "prompts")


# The parameters every image task shares, declared once: the task takes them built (a
# ShiftPlan, checked before anything is read, so a mistyped shift costs no download), and
# any -T name it does not take is refused. A judged task adds judges=judge_parameters().
@task(version=TASK_VERSION)
@task_parameters(image_shift=shift_parameters())
def new_benchmark(
    data: str | None = None,
    image_root: str | None = None,
    split: str | None = None,
    revision: str | None = None,
    images: bool = True,
    *,
    image_shift: ShiftPlan,
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
    """
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
    return apply_shift(task_, image_shift)
