"""Each family's eval.yaml lists the tasks the package registers, at their registered versions."""

from __future__ import annotations

import re
import shlex
import sys
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
        # the version's one source is the family's; kind and comment are inspect_evals' own
        assert set(entry) <= {"name", "dataset_samples", "kind", "comment"}, entry
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


# The families' assets are read from their publishers; the project mirrors and forks none.
MIRRORED: set[str] = set()


# the tasks that score a role's model (judges, the extractor), not the model under test
META_EVALUATIONS = {"judge_meta", "extractor_meta"}


@pytest.mark.parametrize("path", EVAL_YAMLS, ids=lambda path: path.parent.name)
def test_each_eval_yaml_uses_inspect_evals_meanings(path: Path) -> None:
    """kind, state, source, dataset_samples and tags as inspect_evals defines them."""
    metadata: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    for task in metadata["tasks"]:
        assert isinstance(task.get("dataset_samples"), int), (path, task)  # every task's size
        # a task that scores the judges, not the model under test, is a meta-evaluation
        expected = "maintenance" if task["name"] in META_EVALUATIONS else "benchmark"
        assert task.get("kind", "benchmark") == expected, (path, task)
    for asset in metadata["external_assets"]:
        source = asset["source"]
        assert " " not in source, (path, source)  # an id or a URL, never prose
        if asset["type"] == "huggingface":
            assert re.fullmatch(r"[\w.-]+/[\w.-]+", source), (path, source)
        else:
            assert source.startswith("https://"), (path, source)
        assert asset["state"] != "controlled" or source in MIRRORED, (path, asset)
    assert {"Medical", "Healthcare"} <= set(metadata["tags"]), path


def test_the_meta_evaluation_is_a_maintenance_task_in_its_register_entry() -> None:
    sys.path.insert(0, str(FAMILIES.parents[1] / "scripts"))
    from register_entries import register_entries

    entries = register_entries("https://github.com/o/r", "0" * 40)
    assert entries["inspect_medreason_judge_meta"]["tasks"][0]["kind"] == "maintenance"
    assert (
        "does not evaluate the model under test"
        in (entries["inspect_medreason_judge_meta"]["tasks"][0]["comment"])
    )
    assert "kind" not in entries["inspect_medreason_mcq"]["tasks"][0]


def test_the_release_command_contributing_shows_writes_the_entries(tmp_path: Path) -> None:
    sys.path.insert(0, str(FAMILIES.parents[1] / "scripts"))
    from register_entries import main

    text = (FAMILIES.parents[1] / "CONTRIBUTING.md").read_text(encoding="utf-8")
    [command] = re.findall(r"^python scripts/register_entries\.py .*$", text, re.M)
    argv = shlex.split(command.replace('"$(git rev-parse HEAD)"', "0" * 40))[2:]
    argv[argv.index("--output") + 1] = str(tmp_path / "register")
    assert main(argv) == 0
    assert len(list((tmp_path / "register").glob("*/eval.yaml"))) == sum(
        len(yaml.safe_load(p.read_text(encoding="utf-8"))["tasks"]) for p in EVAL_YAMLS
    )
