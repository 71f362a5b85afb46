"""Re-scoring reads case images only from one data folder: the one named with
``-S data_dir=``, or else the one the run recorded in its log header, printed before any
judge call; never a folder written into a sample. A sample recording another folder is
named and unscored, and none of its images reaches a judge."""

from __future__ import annotations

import base64
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import write_json, write_png
from inspect_ai.log import read_eval_log, write_eval_log
from utils.openai_stub import message_parts, openai_stub

from inspect_medreason.medreason.image_folder import ImageFolder


def _data(root: Path, colour: int) -> Path:
    """Two open cases on two images; ``colour`` makes this folder's image bytes its own."""
    for name, shade in (("one.png", colour), ("two.png", colour + 1)):
        write_png(root / name, size=(12, 12), colour=shade)
    write_json(
        root / "cases.json",
        {
            "cases": [
                {
                    "case_id": f"c{n}",
                    "task_type": "open",
                    "question": f"What is shown in case {n}?",
                    "image_path": image,
                }
                for n, image in ((1, "one.png"), (2, "two.png"))
            ]
        },
    )
    write_json(
        root / "ground_truth.json",
        {
            "cases": [
                {"case_id": f"c{n}", "task_type": "open", "answer": "A lesion."} for n in (1, 2)
            ]
        },
    )
    return root


def _run(arguments: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", *arguments, "--display", "plain"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _image_bytes(requests: list[dict[str, Any]]) -> list[bytes]:
    images = [url for request in requests for url in message_parts(request)[1]]
    assert all(url.startswith("data:image/") for url in images), images
    return [base64.b64decode(url.split(",", 1)[1]) for url in images]


def test_rescoring_reads_images_only_from_the_runs_or_the_named_folder(tmp_path: Path) -> None:
    run_folder = _data(tmp_path / "run_data", colour=40)
    other = _data(tmp_path / "other", colour=200)  # same names, other images
    logs = tmp_path / "logs"
    # the plugin's own variables and a user's INSPECT_* ones must not steer the children
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("INSPECT_")},
        "NO_COLOR": "1",
        "COLUMNS": "2000",  # one log line per line, so the printed folder reads whole
        "INSPECT_MEDREASON_CACHE_DIR": os.environ["INSPECT_MEDREASON_CACHE_DIR"],
        "INSPECT_CACHE_DIR": os.environ["INSPECT_CACHE_DIR"],
        "STUB_API_KEY": "stub",
    }
    _run(
        [
            "eval",
            "inspect_medreason/open_ended",
            "-T",
            f"data={run_folder}",
            "--model",
            "medreason/pipeline-check",
            "--no-score",
            "--no-log-images",  # so the judges must read the images from a folder
            "--log-dir",
            str(logs),
        ],
        env,
    )
    [log_file] = list(logs.glob("*.eval"))
    log = read_eval_log(str(log_file))
    assert log.status == "success" and log.samples is not None
    assert (log.eval.metadata or {})["data"]["data_dir"] == str(run_folder)
    edited = next(s for s in log.samples if s.id == "c1")
    assert edited.metadata is not None and edited.metadata["data_dir"] == str(run_folder)
    edited.metadata["data_dir"] = str(other)
    write_eval_log(log, str(log_file))

    def judge(request: dict[str, Any]) -> str:
        return json.dumps({"score": 3, "rationale": "fine"})

    def rescore(*extra: str) -> tuple[subprocess.CompletedProcess[str], list[bytes]]:
        with openai_stub("judge", judge) as (url, requests):
            done = _run(
                [
                    "score",
                    str(log_file),
                    "--scorer",
                    "inspect_medreason/open_ended_scorer",
                    *extra,
                    "--model-role",
                    "grader=openai-api/stub/judge",
                    "--model-role",
                    "vision_grader=openai-api/stub/judge",
                    "--action",
                    "overwrite",
                    "--overwrite",
                ],
                {**env, "STUB_BASE_URL": url},
            )
            assert requests, "no judge was called"
            return done, _image_bytes(requests)

    other_bytes = {(other / name).read_bytes() for name in ("one.png", "two.png")}

    # 1. No folder named: the run's recorded folder, printed, and nothing else.
    done, sent = rescore()
    assert f"read only from {run_folder} (the folder the run recorded in {log_file})" in (
        done.stderr + done.stdout
    )
    assert sent and not other_bytes & set(sent)
    assert set(sent) == {(run_folder / "two.png").read_bytes()}  # c1 sent nothing at all
    rescored = {s.id: s for s in read_eval_log(str(log_file)).samples or []}
    refused = rescored["c1"].scores["open_ended_scorer"]  # type: ignore[index]
    assert isinstance(refused.value, float) and math.isnan(refused.value)  # unscored, not 0
    assert str(other) in str(refused.explanation) and str(run_folder) in str(refused.explanation)
    kept = rescored["c2"].scores["open_ended_scorer"]  # type: ignore[index]
    assert isinstance(kept.value, dict) and kept.value["va_answer"] == 3.0

    # 2. The data moved: -S data_dir names the new place; c1 still records another folder.
    moved = tmp_path / "moved_data"
    shutil.copytree(run_folder, moved)
    shutil.rmtree(run_folder)
    done, sent = rescore("-S", f"data_dir={moved}")
    assert f"read only from {moved} (named with -S data_dir)" in done.stderr + done.stdout
    assert set(sent) == {(moved / "two.png").read_bytes()}
    rescored = {s.id: s for s in read_eval_log(str(log_file)).samples or []}
    again = rescored["c1"].scores["open_ended_scorer"]  # type: ignore[index]
    assert isinstance(again.value, float) and math.isnan(again.value)
    moved_kept = rescored["c2"].scores["open_ended_scorer"]  # type: ignore[index]
    assert isinstance(moved_kept.value, dict) and moved_kept.value["va_answer"] == 3.0


def test_a_sample_recording_another_folder_is_refused() -> None:
    folder = ImageFolder("data/run", "the run's data folder", "data/run")
    assert folder.refusal({"data_dir": "data/run/"}) is None  # the same folder, spelt otherwise
    assert folder.refusal({"data_dir": None}) is None  # an MCQ case records none
    problem = folder.refusal({"data_dir": "/elsewhere"})
    assert problem is not None and "'/elsewhere'" in problem and "'data/run'" in problem
    # with no record of the run's folder, the one in force is the reference
    named = ImageFolder("new/place", "named with -S data_dir", None)
    assert named.refusal({"data_dir": "/elsewhere"}) is not None
    assert named.refusal({"data_dir": "new/place"}) is None
