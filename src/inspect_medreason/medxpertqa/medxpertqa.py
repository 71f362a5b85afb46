"""MedXpertQA, multimodal subset: five-option MCQ on expert-level clinical images, scored
with the MedReason MCQ extraction and metrics, grouped by body system and task."""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.scorer import Metric

from inspect_medreason.core.eval_metadata import family_version
from inspect_medreason.core.extraction import EXTRACTION_MODE, PROVEN_RULES
from inspect_medreason.core.metrics import mcq_metrics
from inspect_medreason.core.params import (
    DEFAULT_GENERATE_CONFIG,
    coerce_bool,
    task_parameters,
)
from inspect_medreason.core.shift import ShiftPlan, apply_shift, shift_parameters
from inspect_medreason.core.solvers import TrackPrompts, medreason_prompt
from inspect_medreason.medreason.scorer import mcq_scorer
from inspect_medreason.medxpertqa.dataset import (
    load_medxpertqa_dataset,
)

MEDXPERTQA_TASK_VERSION = family_version(__file__)


@task(version=MEDXPERTQA_TASK_VERSION)
@task_parameters(image_shift=shift_parameters())
def medxpertqa_mm(
    data: str | None = None,
    image_root: str | None = None,
    revision: str | None = None,
    split: str = "test",
    images: bool = True,
    *,
    image_shift: ShiftPlan,
) -> Task:
    """MedXpertQA MM, one split (``test``, or ``dev``). Images are file names under
    ``image_root`` (default: the snapshot's unpacked ``images/`` folder).

    Args:
        data: A local copy of the MM subset, a file or a folder in a layout the hub
            publishes (default: the hub at the pinned commit; see the family README).
        image_root: The folder image file names are relative to (default: the snapshot's
            unpacked ``images/`` folder).
        revision: Hub commit, branch or tag (resolved to a commit and recorded; default: the
            pinned commit).
        split: ``test`` or ``dev``.
        images: False withholds the images (blind control).
    """
    show_images = coerce_bool(images, "images")
    dataset, origin = load_medxpertqa_dataset(data, image_root, revision, split, show_images)
    prompts = TrackPrompts.load("mcq")
    metrics: list[Metric | dict[str, list[Metric]]] = list(
        mcq_metrics(["body_system", "medical_task", "question_type"])
    )
    task = Task(
        dataset=dataset,
        solver=medreason_prompt(),
        scorer=mcq_scorer(),
        metrics=metrics,
        config=DEFAULT_GENERATE_CONFIG,
        version=MEDXPERTQA_TASK_VERSION,
        metadata={
            "task_version": MEDXPERTQA_TASK_VERSION,
            "data": origin,
            "split": origin["split"],
            "images": show_images,
            "extraction": {"mode": EXTRACTION_MODE, "proven_rules": sorted(PROVEN_RULES)},
            "prompts": {t.name: t.log_record() for t in prompts.templates()},
        },
    )
    return apply_shift(task, image_shift)
