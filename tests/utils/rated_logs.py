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

from inspect_medreason.core.prompts import load_template
from inspect_medreason.rating.cases import (
    RUBRIC_TEMPLATES,
    case_digest,
    collect_candidates,
    rubric_digest,
)
from inspect_medreason.rating.ratings_file import RATINGS_FORMAT

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
    judge_prompts: Path | None = None,
    reply: tuple[str, str] | None = None,
) -> Path:
    """A real ``open_ended`` eval of ``count`` cases, judged by scripted judges (given the
    templates of ``judge_prompts`` when set); the model replies ``reply`` (trace, answer),
    by default a reply naming the model."""
    data = tmp_path / "data"
    if not (data / "cases.json").exists():
        write_cases(data, count)
    trace, answer = reply or (
        f"I am {model}. A round density on the left.",
        f"A nodule (answer by {model.split('/')[-1]}).",
    )
    output = scripted_output(json.dumps({"reasoning_trace": trace, "answer": answer}))
    task_args = {"data": str(data)}
    if judge_prompts is not None:
        task_args["judge_prompts"] = str(judge_prompts)
    # by its registered name, as a user runs it (the leaderboard reads only this package's
    # tasks' logs)
    [log] = eval(
        "inspect_medreason/open_ended",
        task_args=task_args,
        model=get_model(model, custom_outputs=lambda *_: output, memoize=False),
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


def custom_judge_prompts(folder: Path, marker: str) -> Path:
    """A copy of the built-in judge templates whose GT rubric's top anchor says ``marker``
    (what ``-T judge_prompts=DIR`` gives the judges)."""
    from inspect_medreason.core.judges import JUDGE_TEMPLATE_NAMES

    folder.mkdir(parents=True, exist_ok=True)
    for name in JUDGE_TEMPLATE_NAMES:
        text = load_template(name).text
        if name == "judge_gt_system":
            text = re.sub(r"^4 - .+$", f"4 - {marker}", text, count=1, flags=re.MULTILINE)
        (folder / f"{name}.txt").write_text(text, encoding="utf-8")
    return folder


def page_cases(logs: list[Path], page_id: str) -> dict[str, int]:
    """Each of the logs' case digests on page ``page_id`` -> the case number (what a test
    knows that a rater does not)."""
    candidates, _ = collect_candidates(logs)
    return {case_digest(page_id, c.ref): int(str(c.sample_id).lstrip("c")) for c in candidates}


def builtin_rubric_sha256() -> str:
    """The digest of the rubric a page shows for judges given the built-in templates."""
    return rubric_digest({name: load_template(name).sha256 for name in RUBRIC_TEMPLATES.values()})


def ratings_document(
    page_id: str,
    rater: str,
    cases: dict[str, int],
    truth: Truth = default_truth,
    noise: Callable[[str, int, int], int] | None = None,
    page_cases: int | None = None,
    rubric_sha256: str | None = None,
) -> dict[str, Any]:
    """A ratings file as the page saves it: the true ratings of each case, moved by
    ``noise(component, number, score)`` when given (a page of ``page_cases`` cases, by
    default the cases rated, showing the built-in rubric unless ``rubric_sha256``)."""
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
        "rubric_sha256": rubric_sha256 or builtin_rubric_sha256(),
        "page_cases": page_cases or len(cases),
        "rater": rater,
        "saved_at": "2026-12-01T11:00:00.000Z",
        "ratings": entries,
    }
