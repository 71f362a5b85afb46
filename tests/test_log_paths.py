"""No eval log holds a local path: every task family run on its published layout, with the
data folder in a temporary folder, writes no string naming that folder, the user's home,
the plugin's image cache or the installed package, in the header or in any sample, in
either log format. Paths in a log are relative to the data folder, with digests."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import official_dataset as official_dataset
from inspect_ai import Task, eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model
from utils.published_schemas import (
    cmb_clin_file,
    cmb_exam_file,
    gemex_folder,
    med_cmr_release,
    medxpertqa_folder,
    vqa_rad_parquet,
)

import inspect_medreason
from inspect_medreason.cmb.cmb import cmb_clin, cmb_exam
from inspect_medreason.gemex.gemex import gemex
from inspect_medreason.judge_meta.judge_meta import judge_meta
from inspect_medreason.med_cmr.med_cmr import med_cmr
from inspect_medreason.medreason.medreason import mcq, medreason
from inspect_medreason.medxpertqa.medxpertqa import medxpertqa_mm
from inspect_medreason.vqa.vqa import medreason_vqa_rad

GRADER = {"grader": "mockllm/model", "vision_grader": "mockllm/model"}


def strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every string in a parsed JSON document, keys too, with where it is."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{where}.{key}", str(key)
            yield from strings(item, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings(item, f"{where}[{index}]")


def log_documents(log_file: Path) -> dict[str, Any]:
    """Each JSON document of a log: the entries of an .eval zip, or the .json whole."""
    if log_file.suffix == ".json":
        return {log_file.name: json.loads(log_file.read_text(encoding="utf-8"))}
    with zipfile.ZipFile(log_file) as archive:
        return {
            name: json.loads(archive.read(name))
            for name in archive.namelist()
            if name.endswith(".json")
        }


# Where Inspect records the task arguments as the user typed them (eval-retry rebuilds the
# task from them): Inspect's own record, not the plugin's (docs/reliability.md, "Local
# paths in a log").
TYPED_ARGUMENTS = (".eval.task_args.", ".eval.task_args_passed.")


def local_paths_in(log_file: Path, forbidden: list[str], typed: tuple[str, ...] = ()) -> list[str]:
    """Where a log names a forbidden folder, or climbs out of one (``..``), other than an
    argument the user typed (``typed``) where Inspect records the task's arguments."""
    found: dict[str, None] = {}
    for entry, document in log_documents(log_file).items():
        for where, text in strings(document):
            # a data: URL is an image Inspect holds in the log, not a path
            if text.startswith("data:"):
                continue
            if text in typed and any(place in f"{where}." for place in TYPED_ARGUMENTS):
                continue
            for folder in forbidden:
                if folder in text:
                    found[f"{log_file.suffix} {entry}{where}: {text[:160]!r}"] = None
            if "../" in text or "..\\" in text:
                found[f"{log_file.suffix} {entry}{where}: {text[:160]!r} climbs out"] = None
    return list(found)


def family_tasks(root: Path) -> dict[str, tuple[Callable[[], Task], dict[str, str] | None]]:
    """A task of each family on its published layout under ``root``, with its judge roles."""
    return {
        "medreason": (lambda: medreason(data=str(root)), GRADER),
        # written with --no-log-images: the images are left out of the log, not their paths in
        "medreason_no_log_images": (lambda: medreason(data=str(root)), GRADER),
        "mcq_shifted": (
            lambda: mcq(data=str(root), shift="noise", severity=2),
            None,
        ),
        "medreason_vqa_rad": (
            lambda: medreason_vqa_rad(data=str(vqa_rad_parquet(root / "vqa_rad"))),
            GRADER,
        ),
        "gemex": (lambda: gemex(data=str(gemex_folder(root / "gemex"))), GRADER),
        "medxpertqa_mm": (
            lambda: medxpertqa_mm(data=str(medxpertqa_folder(root / "mx"))),
            None,
        ),
        "cmb_exam": (lambda: cmb_exam(data=str(cmb_exam_file(root / "exam.json"))), None),
        "cmb_clin": (lambda: cmb_clin(data=str(cmb_clin_file(root / "clin.json"))), GRADER),
        "med_cmr": (lambda: med_cmr(data=str(med_cmr_release(root / "med_cmr"))), GRADER),
        "judge_meta": (lambda: judge_meta(), GRADER),
    }


@pytest.mark.parametrize("family", list(family_tasks(Path("."))))
def test_no_log_names_a_local_folder(
    family: str,
    official_dataset: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    data_root = official_dataset  # the other families' folders go beside its cases.json
    make_task, roles = family_tasks(data_root)[family]
    logs = tmp_path_factory.mktemp("logs")
    [log] = eval(
        make_task(),
        model="mockllm/model",
        model_roles={role: get_model(model) for role, model in (roles or {}).items()} or None,
        limit=4,
        log_images=family != "medreason_no_log_images",
        display="none",
        log_dir=str(logs),
    )
    assert log.status == "success", log.error
    as_json = logs / "as.json"
    write_eval_log(read_eval_log(log.location), str(as_json), format="json")
    forbidden = [
        str(data_root),
        os.path.realpath(data_root),
        str(Path.home()),
        os.environ["INSPECT_MEDREASON_CACHE_DIR"],
        str(Path(inspect_medreason.__file__).parent),
    ]
    if family == "medreason_no_log_images":  # the run is the one it claims to be
        assert log.samples is not None
        for sample in log.samples:
            inputs = [text for _, text in strings(sample.model_dump(mode="json")["input"])]
            assert inputs and not any(text.startswith("data:image") for text in inputs)
    typed = tuple(str(value) for value in log.eval.task_args_passed.values())
    found = local_paths_in(Path(log.location), forbidden, typed)
    found += local_paths_in(as_json, forbidden, typed)
    assert not found, "\n".join(found)


def test_the_scan_finds_a_path_in_either_format(tmp_path: Path) -> None:
    """The scan itself: a folder named anywhere in a document is found, a data: URL is not."""
    document = {"a": [{"b": f"see {tmp_path}/x.png"}], "c": f"data:image/png;{tmp_path}"}
    (tmp_path / "log.json").write_text(json.dumps(document), encoding="utf-8")
    with zipfile.ZipFile(tmp_path / "log.eval", "w") as archive:
        archive.writestr("header.json", json.dumps(document))
        archive.writestr("samples/1.json", json.dumps({"up": "../../etc"}))
    assert len(local_paths_in(tmp_path / "log.json", [str(tmp_path)])) == 1
    assert len(local_paths_in(tmp_path / "log.eval", [str(tmp_path)])) == 2
    # the argument the user typed is let through only where Inspect records the task's
    typed = {"eval": {"task_args": {"data": str(tmp_path)}}, "metadata": {"d": str(tmp_path)}}
    (tmp_path / "typed.json").write_text(json.dumps(typed), encoding="utf-8")
    found = local_paths_in(tmp_path / "typed.json", [str(tmp_path)], (str(tmp_path),))
    assert [where.split(":")[0] for where in found] == [".json typed.json.metadata.d"]
