"""Judged logs whose judges' scores are a known function of known "true" ratings, and ratings
files as the rating page saves them: the fixtures of the rating page, the agreement with
raters and the calibration tests.

A case's true ratings are a function of its number; a scripted judge reads the case number
from the question it is sent (``[c07]``) and scores ``distort(component, truth)``. The
model's reply names the model, so that the page's blinding is tested on a reply that gives
it away.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import scripted_output, write_json, write_png
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, get_model
from inspect_ai.model import ModelOutput as _ModelOutput

from inspect_medreason.cli.rating import RATINGS_FORMAT, case_digest, collect_candidates

COMPONENTS = ("gt", "va", "rvf")
# A judge's rationale no rater may see: the page is checked for it.
SECRET_RATIONALE = "JUDGE-RATIONALE-NEVER-SHOWN"
MODALITIES = ("CT", "MR", "X-ray")
TASKS = ("diagnosis", "finding")

Truth = Callable[[int], dict[str, int]]
Distortion = Callable[[str, int], int]


def default_truth(number: int) -> dict[str, int]:
    """Varied, deterministic true ratings of case ``number``."""
    return {"gt": number % 5, "va": (number * 3 + 1) % 5, "rvf": (number * 2 + 2) % 5}


def identity(component: str, score: int) -> int:
    return score


def _kind(messages: list[ChatMessage]) -> str:
    system = " ".join(m.text for m in messages if m.role == "system")
    if "reasoning trace of a medical" in system:
        return "rvf"
    if "against a reference answer" in system:
        return "gt"
    return "va"


def scripted_judge(truth: Truth, distort: Distortion, name: str = "mockllm/model") -> Any:
    def respond(messages: list[ChatMessage], *_: Any) -> _ModelOutput:
        text = " ".join(m.text for m in messages)
        found = re.search(r"\[c(\d+)\]", text)
        assert found is not None, text[:300]
        kind = _kind(messages)
        score = distort(kind, truth(int(found.group(1)))[kind])
        return scripted_output(json.dumps({"score": score, "rationale": SECRET_RATIONALE}))

    return get_model(name, custom_outputs=respond, memoize=False)


def write_cases(folder: Path, count: int) -> Path:
    """``count`` open cases, each on its own small image, over three modalities and two
    tasks (the strata)."""
    cases, truth = [], []
    for number in range(count):
        image = f"images/i{number}.png"
        write_png(folder / image, colour=(number * 37) % 256)
        cases.append(
            {
                "case_id": f"c{number:02d}",
                "task_type": "open",
                "question": f"What does the image show? [c{number:02d}]",
                "image_path": image,
                "metadata": {
                    "modality": MODALITIES[number % 3],
                    "task": TASKS[number % 2],
                },
            }
        )
        truth.append({"case_id": f"c{number:02d}", "task_type": "open", "answer": "a nodule"})
    write_json(folder / "cases.json", {"cases": cases})
    write_json(folder / "ground_truth.json", {"cases": truth})
    return folder


def judged_log(
    tmp_path: Path,
    count: int,
    truth: Truth = default_truth,
    distort: Distortion = identity,
    model: str = "mockllm/model",
    log_images: bool = True,
    judge_model: str = "mockllm/model",
) -> Path:
    """A real ``open_ended`` eval of ``count`` cases, judged by scripted judges."""
    data = tmp_path / "data"
    if not (data / "cases.json").exists():
        write_cases(data, count)
    reply = scripted_output(
        json.dumps(
            {
                "reasoning_trace": f"I am {model}. A round density on the left.",
                "answer": f"A nodule (answer by {model.split('/')[-1]}).",
            }
        )
    )
    # by its registered name, as a user runs it (the leaderboard reads only this package's
    # tasks' logs)
    [log] = eval(
        "inspect_medreason/open_ended",
        task_args={"data": str(data)},
        model=get_model(model, custom_outputs=lambda *_: reply, memoize=False),
        model_roles={
            "grader": scripted_judge(truth, distort, judge_model),
            "vision_grader": scripted_judge(truth, distort, judge_model),
        },
        display="none",
        log_dir=str(tmp_path / "logs"),
        log_images=log_images,
    )
    assert isinstance(log, EvalLog)
    assert log.status == "success", log.error
    return Path(log.location)


def page_cases(logs: list[Path], page_id: str) -> dict[str, int]:
    """Each of the logs' case digests on page ``page_id`` -> the case number (what a test
    knows that a rater does not)."""
    candidates, _ = collect_candidates(logs)
    return {case_digest(page_id, c.ref): int(str(c.sample_id).lstrip("c")) for c in candidates}


def ratings_document(
    page_id: str,
    rater: str,
    cases: dict[str, int],
    truth: Truth = default_truth,
    noise: Callable[[str, int, int], int] | None = None,
) -> dict[str, Any]:
    """A ratings file as the page saves it: the true ratings of each case, moved by
    ``noise(component, number, score)`` when given."""
    entries = []
    for case, number in sorted(cases.items()):
        scores = truth(number)
        if noise is not None:
            scores = {k: noise(k, number, v) for k, v in scores.items()}
        entries.append({"case": case, **scores, "rated_at": "2026-12-01T10:00:00.000Z"})
    return {
        "format": RATINGS_FORMAT,
        "version": 1,
        "page_id": page_id,
        "rater": rater,
        "saved_at": "2026-12-01T11:00:00.000Z",
        "ratings": entries,
    }
