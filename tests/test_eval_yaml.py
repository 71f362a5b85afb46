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
        "medreason",
        "med_cmr",
        "vqa",
        "gemex",
        "cmb",
        "medxpertqa",
        "judge_meta",
    }


@pytest.mark.parametrize("path", EVAL_YAMLS, ids=lambda path: path.parent.name)
def test_each_task_is_registered_at_its_familys_eval_yaml_version(path: Path) -> None:
    metadata: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert metadata["tasks"], path
    for entry in metadata["tasks"]:
        assert set(entry) <= {"name", "dataset_samples"}, entry  # the one source is the family's
        task = getattr(inspect_medreason, entry["name"])
        registered = registry_info(task).metadata["attribs"]["version"]
        assert registered == metadata["version"], (path, entry["name"])


def code_pins() -> dict[str, str]:
    """Each hub dataset's commit as the code pins it."""
    from inspect_medreason.cmb.dataset import CMB_EXAM_HUB
    from inspect_medreason.gemex.dataset import gemex_source
    from inspect_medreason.medxpertqa.dataset import MEDXPERTQA_HUB
    from inspect_medreason.vqa.dataset import PATH_VQA, SLAKE, VQA_RAD

    sources = [CMB_EXAM_HUB, gemex_source("open"), MEDXPERTQA_HUB] + [
        benchmark.hub for benchmark in (PATH_VQA, SLAKE, VQA_RAD)
    ]
    return {source.path: str(source.revision) for source in sources}


@pytest.mark.parametrize("path", EVAL_YAMLS, ids=lambda path: path.parent.name)
def test_pinned_hub_assets_name_the_commit_the_code_reads(path: Path) -> None:
    pins = code_pins()
    assets: list[dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))[
        "external_assets"
    ]
    for asset in assets:
        if asset["type"] != "huggingface":
            continue
        if asset["state"] == "pinned":
            assert pins[asset["source"]] in asset["comment"], (path, asset)
        else:
            # only a dataset whose commit the code does not pin may float
            assert asset["source"] not in pins, (path, asset)
    assert {a["source"] for a in assets if a["type"] == "huggingface"} <= set(pins) | {
        a["source"] for a in assets if a["state"] == "floating"
    }


@pytest.mark.parametrize("path", EVAL_YAMLS, ids=lambda path: path.parent.name)
def test_each_eval_yaml_validates_against_inspect_evals_own_model(path: Path) -> None:
    from inspect_evals.metadata import InternalEvalMetadata

    metadata = InternalEvalMetadata.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    assert metadata.id == path.parent.name
    assert {task.name for task in metadata.tasks} <= set(inspect_medreason.__all__)
