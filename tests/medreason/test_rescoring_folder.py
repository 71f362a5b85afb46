"""Re-scoring reads case images only from one data folder: the one named with
``-S data_dir=``, printed before any image is read, each file checked against the digest the
run recorded; never a folder written into a log (a new log names none). With no folder
named, in a process that did not load the data, the vision judges are unscored with a
reason saying how to name one, and no image reaches a judge."""

from __future__ import annotations

import base64
import json
import math
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from conftest import write_json, write_png
from inspect_ai.log import read_eval_log, write_eval_log
from utils.inspect_cli import child_env, run_inspect
from utils.openai_stub import message_parts, openai_stub

from inspect_medreason.core.images import ImagePathError
from inspect_medreason.medreason.image_folder import (
    NAMED,
    RUN_FOLDER,
    ImageFolder,
    image_folder,
    register_data_folder,
)


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


def _image_bytes(requests: list[dict[str, Any]]) -> list[bytes]:
    images = [url for request in requests for url in message_parts(request)[1]]
    assert all(url.startswith("data:image/") for url in images), images
    return [base64.b64decode(url.split(",", 1)[1]) for url in images]


def test_rescoring_reads_images_only_from_the_named_folder(tmp_path: Path) -> None:
    run_folder = _data(tmp_path / "run_data", colour=40)
    other = _data(tmp_path / "other", colour=200)  # same names, other images
    logs = tmp_path / "logs"
    # the plugin's own variables and a user's INSPECT_* ones must not steer the children
    env = child_env(COLUMNS="2000")  # one log line per line: the printed folder reads whole
    run_inspect(
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
    assert "data_dir" not in (log.eval.metadata or {})["data"]
    # an edit naming another folder in a sample (as an old log's samples did) is never used
    edited = next(s for s in log.samples if s.id == "c1")
    assert edited.metadata is not None and "data_dir" not in edited.metadata
    edited.metadata["data_dir"] = str(other)
    write_eval_log(log, str(log_file))

    def judge(request: dict[str, Any]) -> str:
        return json.dumps({"score": 3, "rationale": "fine"})

    def rescore(*extra: str) -> tuple[subprocess.CompletedProcess[str], list[bytes]]:
        with openai_stub("judge", judge) as (url, requests):
            done = run_inspect(
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

    def vision_scores() -> dict[Any, Any]:
        rescored = read_eval_log(str(log_file)).samples or []
        return {s.id: s.scores["open_ended_scorer"] for s in rescored}  # type: ignore[index]

    # 1. No folder named: a new process knows none, the log names none; nothing is read,
    # and the vision judges are unscored (not 0) with a reason saying what to do.
    done, sent = rescore()
    assert "-S data_dir=FOLDER" in done.stderr + done.stdout
    assert sent == []
    for score in vision_scores().values():
        assert isinstance(score.value, dict) and math.isnan(score.value["va_answer"])
        assert score.value["gt_final"] == 3.0  # the text judge needs no image

    # 2. Another folder named, same file names, other images: refused by digest, none sent.
    done, sent = rescore("-S", f"data_dir={other}")
    assert f"read only from {other} (named with -S data_dir)" in done.stderr + done.stdout
    assert sent == []
    assert all(math.isnan(score.value["va_answer"]) for score in vision_scores().values())

    # 3. The data moved: -S data_dir names the new place; its files are the run's.
    moved = tmp_path / "moved_data"
    shutil.copytree(run_folder, moved)
    shutil.rmtree(run_folder)
    done, sent = rescore("-S", f"data_dir={moved}")
    assert f"read only from {moved} (named with -S data_dir)" in done.stderr + done.stdout
    assert set(sent) == {(moved / name).read_bytes() for name in ("one.png", "two.png")}
    assert not other_bytes & set(sent)
    assert all(score.value["va_answer"] == 3.0 for score in vision_scores().values())


def test_the_folder_in_force_is_the_named_one_else_the_one_this_process_loaded(
    tmp_path: Path,
) -> None:
    key = register_data_folder(f"test-{tmp_path.name}", tmp_path / "loaded")
    assert image_folder(None, key) == ImageFolder(str(tmp_path / "loaded"), RUN_FOLDER)
    # a folder named (-S data_dir, or an old log's recorded argument) comes first
    assert image_folder("elsewhere", key) == ImageFolder("elsewhere", NAMED)
    # a key this process never loaded (inspect score in a new process): none known
    unknown = image_folder(None, "not-loaded-here")
    assert unknown.path is None
    with pytest.raises(ImagePathError, match="-S data_dir=FOLDER"):
        unknown.files(cast(Any, SimpleNamespace(metadata={"image_paths": ["a.png"]})))
