"""End to end through a real provider's code path: both judge roles point at local
OpenAI-compatible servers (as they would at vLLM), so the request bodies on the wire are
checked, not just what mockllm was handed."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from conftest import scripted_output, write_json, write_png
from inspect_ai import eval
from inspect_ai.model import ModelOutput, get_model
from utils.openai_stub import message_parts, openai_stub

from inspect_medreason.medreason.medreason import open_ended


def test_vllm_style_judges_receive_data_uris_and_scores_land(tmp_path: Path) -> None:
    write_png(tmp_path / "data" / "scan.png", size=(16, 16), colour=90)
    write_json(
        tmp_path / "data" / "cases.json",
        {
            "cases": [
                {
                    "case_id": "h1",
                    "task_type": "open",
                    "question": "What is shown?",
                    "image_path": "scan.png",
                }
            ]
        },
    )
    write_json(
        tmp_path / "data" / "ground_truth.json",
        {"cases": [{"case_id": "h1", "task_type": "open", "answer": "A round lesion."}]},
    )

    def text_judge(request: dict[str, Any]) -> str:
        return json.dumps({"score": 3, "rationale": "Largely aligned with the reference."})

    def vision_judge(request: dict[str, Any]) -> str:
        text, _ = message_parts(request)
        score = 2 if "<candidate_reasoning id-" in text else 4
        return f"```json\n{json.dumps({'score': score, 'rationale': 'grounded enough'})}\n```"

    def model_under_test(*_: Any) -> ModelOutput:
        return scripted_output(
            json.dumps(
                {
                    "reasoning_trace": "A round hypodense area is visible.",
                    "answer": "A round lesion.",
                }
            )
        )

    with (
        openai_stub("text-judge", text_judge) as (text_url, text_requests),
        openai_stub("vision-judge", vision_judge) as (vision_url, vision_requests),
    ):
        [log] = eval(
            open_ended(data=str(tmp_path / "data"), judge_cache=False),
            model=get_model("mockllm/model", custom_outputs=model_under_test),
            model_roles={
                "grader": get_model("vllm/text-judge", base_url=text_url, api_key="stub"),
                "vision_grader": get_model(
                    "vllm/vision-judge", base_url=vision_url, api_key="stub"
                ),
            },
            display="none",
            log_dir=str(tmp_path / "logs"),
        )
    assert log.status == "success", log.error

    assert len(text_requests) == 1 and len(vision_requests) == 2
    gt_text, gt_images = message_parts(text_requests[0])
    assert gt_images == [] and "A round lesion." in gt_text  # the text judge sees no image
    for request in vision_requests:
        _, images = message_parts(request)
        assert len(images) == 1 and images[0].startswith("data:image/png;base64,")
        assert request["temperature"] == 0.0 and request["seed"] == 42
        assert request["max_tokens"] == 512
        assert request["response_format"]["type"] == "json_schema"

    assert log.samples is not None
    score = log.samples[0].scores["open_ended_scorer"]  # type: ignore[index]
    assert score.value == {
        "gt_final": 3.0,
        "va_answer": 4.0,
        "rvf_trace": 2.0,
        "va_final": 3.0,
    }
    assert score.metadata is not None
    assert score.metadata["judge_models"]["gt_final"] == ["vllm/text-judge"]  # a panel of one
    assert score.metadata["judge_models"]["rvf_trace"] == ["vllm/vision-judge"]


def one_open_case(folder: Path) -> None:
    """One open case about one image, with its reference answer."""
    write_png(folder / "scan.png")
    write_json(
        folder / "cases.json",
        {
            "cases": [
                {
                    "case_id": "c1",
                    "task_type": "open",
                    "question": "What is shown?",
                    "image_path": "scan.png",
                }
            ]
        },
    )
    write_json(
        folder / "ground_truth.json",
        {"cases": [{"case_id": "c1", "task_type": "open", "answer": "A lesion."}]},
    )


def test_judge_replies_are_cached_across_runs(tmp_path: Path) -> None:
    one_open_case(tmp_path / "data")

    def judge(_: dict[str, Any]) -> str:
        return json.dumps({"score": 3, "rationale": "ok"})

    def model_under_test(*_: Any) -> ModelOutput:
        return scripted_output(
            json.dumps({"reasoning_trace": "A lesion is seen.", "answer": "A lesion."})
        )

    with openai_stub("judge", judge) as (url, requests):
        for _ in range(2):
            [log] = eval(
                open_ended(data=str(tmp_path / "data"), judge_cache=True),
                model=get_model("mockllm/model", custom_outputs=model_under_test),
                # openai-api, not vllm: Inspect's vllm provider sets its URL lazily, so its
                # first calls are cached under another key (see README).
                model_roles={
                    "grader": get_model("openai-api/stub/judge", base_url=url, api_key="stub"),
                    "vision_grader": get_model(
                        "openai-api/stub/judge", base_url=url, api_key="stub"
                    ),
                },
                display="none",
                log_dir=str(tmp_path / "logs"),
            )
            assert log.status == "success", log.error
        # Three judge requests for the first run; the second is served from the cache.
        assert len(requests) == 3


def test_a_cached_unusable_reply_is_always_followed_by_a_fresh_call(tmp_path: Path) -> None:
    one_open_case(tmp_path / "data")

    def judge(request: dict[str, Any]) -> str:
        text, _ = message_parts(request)
        if "could not be used" in text:  # the correction: answer properly
            return json.dumps({"score": 2, "rationale": "ok"})
        return "four out of four"  # the first reply is never usable

    def model_under_test(*_: Any) -> ModelOutput:
        return scripted_output(json.dumps({"reasoning_trace": "A lesion.", "answer": "A lesion."}))

    with openai_stub("judge", judge) as (url, requests):
        calls = []
        for _ in range(2):
            before = len(requests)
            [log] = eval(
                open_ended(data=str(tmp_path / "data"), judge_cache=True),
                model=get_model("mockllm/model", custom_outputs=model_under_test),
                model_roles={
                    "grader": get_model("openai-api/stub/judge", base_url=url, api_key="stub"),
                    "vision_grader": get_model(
                        "openai-api/stub/judge", base_url=url, api_key="stub"
                    ),
                },
                display="none",
                log_dir=str(tmp_path / "logs"),
            )
            assert log.status == "success", log.error
            assert log.samples is not None
            score = log.samples[0].scores["open_ended_scorer"]  # type: ignore[index]
            assert isinstance(score.value, dict) and score.value["gt_final"] == 2.0
            calls.append(len(requests) - before)
    # First run: three bad first replies and three corrections. Second run: the bad first
    # replies come from the cache, the corrections are asked afresh.
    assert calls == [6, 3]


def test_judge_max_connections_sizes_the_judges_pool_apart_from_the_eval(
    tmp_path: Path,
) -> None:
    """Six cases, three judge calls each, --max-connections 20: the judges' pool holds 20
    requests in flight unless -T judge_max_connections bounds it (here to 2)."""
    write_png(tmp_path / "data" / "scan.png")
    write_json(
        tmp_path / "data" / "cases.json",
        {
            "cases": [
                {
                    "case_id": f"c{i}",
                    "task_type": "open",
                    "question": f"What is shown? ({i})",
                    "image_path": "scan.png",
                }
                for i in range(6)
            ]
        },
    )
    write_json(
        tmp_path / "data" / "ground_truth.json",
        {
            "cases": [
                {"case_id": f"c{i}", "task_type": "open", "answer": "A lesion."} for i in range(6)
            ]
        },
    )
    in_flight, peak = [0], [0]
    lock = threading.Lock()

    def slow_judge(_: dict[str, Any]) -> str:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.15)
        with lock:
            in_flight[0] -= 1
        return json.dumps({"score": 3, "rationale": "ok"})

    def model_under_test(*_: Any) -> ModelOutput:
        return scripted_output(
            json.dumps({"reasoning_trace": "A lesion is seen.", "answer": "A lesion."})
        )

    peaks = {}
    for bound in (None, 2):
        peak[0] = 0
        # A model name per run: Inspect keeps one pool per model for the whole process.
        name = f"judge-{bound}"
        with openai_stub(name, slow_judge) as (url, requests):
            judge = get_model(f"openai-api/stub/{name}", base_url=url, api_key="stub")
            [log] = eval(
                open_ended(
                    data=str(tmp_path / "data"), judge_cache=False, judge_max_connections=bound
                ),
                model=get_model("mockllm/model", custom_outputs=model_under_test),
                model_roles={"grader": judge, "vision_grader": judge},
                max_connections=20,
                display="none",
                log_dir=str(tmp_path / "logs"),
            )
        assert log.status == "success", log.error
        assert len(requests) == 18
        assert log.eval.metadata is not None
        assert log.eval.metadata["judges"]["settings"]["max_connections"] == bound
        peaks[bound] = peak[0]
    assert peaks[2] == 2  # bounded, and the two slots were used at once
    assert peaks[None] > 2  # without it the judges had the eval's 20
