"""``medreason/image-sensitive``: its measures of blur and noise follow their definitions,
its answers follow the clarity of the image it is sent (and nothing else), and a shift run
with it shows a drop that ``medreason shift`` reports."""

from __future__ import annotations

import base64
import io
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from inspect_ai import eval
from inspect_ai.model import ChatMessageUser, ContentImage, ContentText
from PIL import Image
from scipy import ndimage

import inspect_medreason
from inspect_medreason.analysis.shift import shift_report
from inspect_medreason.core.errors import UserInputError
from inspect_medreason.core.image_quality import blur_effect, immerkaer_noise
from inspect_medreason.core.offline_model import (
    UNCLEAR_ANSWER,
    PipelineCheckModel,
    image_sensitive_reply,
    needed_clarity,
)
from inspect_medreason.medreason.medreason import mcq

QUESTION = "Question: Which side is the lesion on?\n\nOptions:\nA. left\nB. right\nC. neither\n"


def structure(side: int = 128) -> np.ndarray:
    rng = np.random.default_rng(0)
    values = ndimage.gaussian_filter(rng.random((side, side)), 1.5)
    return (values - values.min()) / np.ptp(values)


def data_uri(values: np.ndarray) -> str:
    buffer = io.BytesIO()
    Image.fromarray((np.clip(values, 0, 1) * 255).astype(np.uint8), mode="L").save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def ask(values: np.ndarray, question: str = QUESTION) -> dict[str, str]:
    message = ChatMessageUser(
        content=[ContentImage(image=data_uri(values)), ContentText(text=question)]
    )
    reply: dict[str, str] = json.loads(image_sensitive_reply([message], []))
    return reply


def test_blur_and_noise_are_measured_as_their_definitions_say() -> None:
    sharp = structure()
    blurs = [blur_effect(ndimage.gaussian_filter(sharp, sigma)) for sigma in (0.0, 1.0, 2.0, 4.0)]
    assert blurs == sorted(blurs) and blurs[0] < 0.5 < blurs[-1]
    # Immerkaer's estimate recovers white Gaussian noise added to a smooth image
    smooth = ndimage.gaussian_filter(sharp, 6.0)
    for sigma in (0.02, 0.05):
        noisy = smooth + np.random.default_rng(1).normal(0.0, sigma, smooth.shape)
        assert immerkaer_noise(noisy) == pytest.approx(sigma, rel=0.1)


def test_the_answer_follows_the_clarity_of_the_image_and_nothing_else() -> None:
    sharp, blurred = structure(), ndimage.gaussian_filter(structure(), 6.0)
    assert needed_clarity("Which side is the lesion on?") < 0.7
    clear, unclear = ask(sharp), ask(blurred)
    assert clear["answer"] == "A" and "clear" in clear["reasoning_trace"]
    assert unclear["answer"] in {"B", "C"} and "too blurred or noisy" in unclear["reasoning_trace"]
    assert ask(sharp) == clear and ask(blurred) == unclear  # deterministic
    open_question = ask(blurred, "Question: Describe the lesion.")
    assert open_question["answer"] == UNCLEAR_ANSWER


def test_an_unknown_offline_name_or_half_the_answer_files_is_a_message() -> None:
    with pytest.raises(UserInputError, match="medreason/pipeline-check, medreason/image-sensitive"):
        PipelineCheckModel("image-sensitiv")
    with pytest.raises(UserInputError, match="give both"):
        PipelineCheckModel("image-sensitive", cases="cases.json")


def test_a_shift_run_with_it_shows_a_drop_the_report_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("INSPECT_MEDREASON_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "demo"
    shutil.copytree(Path(inspect_medreason.__file__).parent / "sample_data", data)
    answers = {"cases": str(data / "cases.json"), "answers": str(data / "ground_truth.json")}
    shifts: list[dict[str, Any]] = [{}, {"shift": "downsample", "severity": 3}]
    for shift in shifts:
        [log] = eval(
            mcq(data=str(data), **shift),
            model="medreason/image-sensitive",
            model_args=answers,
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
        assert log.status == "success", log.error
    [pair] = shift_report([str(tmp_path / "logs")]).pairs
    accuracy = pair.metrics["MCQ Accuracy"]
    assert accuracy.mean_a > 0.8 and accuracy.difference < -0.2
    assert pair.consistency is not None and pair.consistency < 0.8
