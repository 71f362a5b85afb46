"""A minimal reproduction, for an upstream Inspect report: what one short system prompt costs
Inspect per image sample, by the way a solver sends it.

No plugin code. N samples, each a user turn of one image (a file path) and a question,
mockllm answering every request with the same reply, logs written with ``--no-log-images``;
every variant rewrites the text part of the user turn first (what ``multiple_choice()`` and
this plugin's solver do), then:

- ``no_system``: ``generate()``;
- ``system_config``: ``generate(state, system_message=SYSTEM)``, the system prompt in the
  generation's config (this plugin's way);
- ``system_solver``: Inspect's own ``system_message(SYSTEM)`` solver before the rewrite (the
  message inserted at the head of ``state.messages``), then ``generate()``.

``SYSTEM`` is about as long as the plugin's MCQ system prompt. The model is sent
the same two messages either way. How each variant is run, timed and counted:
``reproduction.py``.

Usage: python perf/repro_system_prompt.py [--samples 1000] [--repeats 5]
       python perf/repro_system_prompt.py --instructions [--samples 100]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import reproduction

SYSTEM = (
    "You are a careful medical imaging expert answering a multiple-choice question about one "
    "or more medical images. Base your choice on what the image shows. Reply with one JSON "
    "object and nothing else."
)
VARIANTS = ["no_system", "system_config", "system_solver"]


def task(folder: Path, variant: str) -> Any:
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
    from inspect_ai.scorer import match
    from inspect_ai.solver import Generate, Solver, TaskState, solver, system_message

    @solver
    def rewrite_then_generate(with_system_config: bool) -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            content = state.user_prompt.content
            assert isinstance(content, list)
            content[-1] = ContentText(text=f"Question: {state.user_prompt.text}\nAnswer in JSON.")
            if with_system_config:
                return await generate(state, system_message=SYSTEM)
            return await generate(state)

        return solve

    cases = json.loads((folder / "cases.json").read_text(encoding="utf-8"))["cases"]
    samples = []
    for case in cases:
        image = ContentImage(image=str(folder / case["image_path"]))
        turn = ChatMessageUser(content=[image, ContentText(text=case["question"])])
        samples.append(Sample(id=case["case_id"], input=[turn], target="A"))
    plan = [rewrite_then_generate(with_system_config=variant == "system_config")]
    if variant == "system_solver":
        plan.insert(0, system_message(SYSTEM))
    return Task(dataset=MemoryDataset(samples), solver=plan, scorer=match())


REPRODUCTION = reproduction.Reproduction(
    description="what a system prompt costs Inspect per sample",
    variants=VARIANTS,
    task=task,
    script=__file__,
)


if __name__ == "__main__":
    reproduction.main(REPRODUCTION)
