"""No eval log holds a local path: every task family run on its published layout, with the
data folder in a temporary folder, writes no string naming that folder, the user's home,
the plugin's image cache or the installed package, in the header or in any sample, in
either log format. Paths in a log are relative to the data folder, with digests."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import pytest
from conftest import official_dataset as official_dataset
from inspect_ai import eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import get_model
from utils.log_scan import family_tasks, log_documents, strings

import inspect_medreason

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
