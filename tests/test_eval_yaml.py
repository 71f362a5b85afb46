"""Each family's eval.yaml lists the tasks the package registers, at their registered versions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai.util import registry_info

import inspect_medreason

FAMILIES = Path(inspect_medreason.__file__).parent
EVAL_YAMLS = sorted(FAMILIES.glob("*/eval.yaml"))


def test_every_family_has_an_eval_yaml() -> None:
    assert {path.parent.name for path in EVAL_YAMLS} >= {
        "medreason", "med_cmr", "vqa", "gemex", "cmb", "medxpertqa", "judge_meta",
    }  # fmt: skip


@pytest.mark.parametrize("path", EVAL_YAMLS, ids=lambda path: path.parent.name)
def test_task_versions_match_the_registered_tasks(path: Path) -> None:
    listed: list[dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))["tasks"]
    assert listed, path
    for entry in listed:
        task = getattr(inspect_medreason, entry["name"])
        registered = registry_info(task).metadata["attribs"]["version"]
        assert entry["version"] == registered, (path, entry["name"])
