"""Write inspect_evals register entries for this package: one entry per task, pointing at a
pinned commit of this repository, generated from the families' ``eval.yaml`` files.

inspect_evals lists evaluations hosted elsewhere as register entries (its
``ExternalEvalMetadata``): one task per entry, the repository and commit the task is run
from, and the file that defines it. An entry has no field for data assets, so each task's
pinned data revisions (its family's ``external_assets`` that name it, or all of them when
none does) and its task version go in the task's ``comment``. Every entry is validated
against inspect_evals' own model before anything is written.

Layout: each entry is ``<output>/<id>/eval.yaml``, the id being its folder's name, as
inspect_evals' own listing discovers them (``inspect_evals.metadata._discover_eval_yamls``
globs ``register/*/eval.yaml`` and ``_load_single_eval_yaml`` sets ``id`` from the folder;
inspect_evals 0.26.0). Its ``find_task`` returns the first eval with a task of the given
name, so no task here may share a name with one of inspect_evals' own (``vqa_rad`` is
theirs; ours is ``medreason_vqa_rad``); ``tests/test_register_entries.py`` loads the
entries with that listing to check it.

Usage: python scripts/register_entries.py --repository-url https://github.com/OWNER/REPO \\
    --commit <40-hex commit of that repository> --output register/
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from pathlib import Path
from typing import Any

import yaml
from inspect_evals.metadata import ExternalEvalMetadata

from inspect_medreason.core.files import OutputSet

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "inspect_medreason"
COMMIT = re.compile(r"^[0-9a-f]{40}$")
# Family keys an entry shares with its eval.yaml; the rest (version, group, assets) differ.
SHARED_KEYS = ("arxiv", "contributors", "tags", "metadata")


def _normalised(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def task_assets(task: str, assets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The family's data assets this task reads: those whose source names the task (VQA-RAD
    for ``vqa_rad``), else all of them (a family of one data set)."""
    # ``medreason_`` in a task's name names this package, not its data (medreason_vqa_rad).
    data_name = _normalised(task.removeprefix("medreason_"))
    named = [asset for asset in assets if data_name in _normalised(str(asset["source"]))]
    return named or assets


def _asset_note(asset: dict[str, Any]) -> str:
    comment = f" ({asset['comment']})" if asset.get("comment") else ""
    return (
        f"{asset['type']} {asset['source']} via {asset['fetch_method']}, {asset['state']}{comment}"
    )


def _task_path(task: str) -> str:
    """The file, relative to the repository, that defines the registered task: from the
    defining module's name (``inspect_medreason.cmb.cmb`` is ``src/inspect_medreason/cmb/
    cmb.py``), so it is right wherever the package is installed; checked to exist here."""
    from inspect_medreason import _registry

    module = inspect.unwrap(getattr(_registry, task)).__module__
    path = Path("src", *module.split(".")).with_suffix(".py")
    if not (ROOT / path).is_file():
        raise ValueError(f"task {task}: {path} is not in this repository")
    return path.as_posix()


def register_entries(repository_url: str, commit: str) -> dict[str, dict[str, Any]]:
    """Entry id -> register entry, one per task of every family; each validated."""
    if not COMMIT.fullmatch(commit):
        raise ValueError(f"--commit {commit!r}: give the full 40-character commit to pin")
    entries: dict[str, dict[str, Any]] = {}
    for eval_yaml in sorted(PACKAGE.glob("*/eval.yaml")):
        family = yaml.safe_load(eval_yaml.read_text(encoding="utf-8"))
        assets = family.get("external_assets") or []
        summary = " ".join(str(family["description"]).split())
        for task in family["tasks"]:
            name = task["name"]
            pins = task_assets(name, assets)
            data = (
                "; ".join(_asset_note(asset) for asset in pins)
                if pins
                else "no external data: the user's own folder, or the shipped demo set"
            )
            entry: dict[str, Any] = {
                "id": f"inspect_medreason_{name}",
                "full_title": f"{family['title']} ({name})",
                "common_title": name,
                "description": summary,
                "source": {"repository_url": repository_url, "repository_commit": commit},
                "tasks": [
                    {
                        **{k: v for k, v in task.items() if k in ("dataset_samples", "kind")},
                        "name": name,
                        "task_path": _task_path(name),
                        "comment": f"task version {family['version']}; data: {data}"
                        + (f"; {task['comment']}" if task.get("comment") else ""),
                    }
                ],
                **{key: family[key] for key in SHARED_KEYS if family.get(key) is not None},
            }
            ExternalEvalMetadata.model_validate(entry)
            entries[entry["id"]] = entry
    return entries


def entry_files(entries: dict[str, dict[str, Any]], output: Path) -> dict[Path, str]:
    """Each entry's file, ``<output>/<id>/eval.yaml``, and its YAML text. The id is left out
    of the text: the listing takes it from the folder, so the two can never disagree."""
    return {
        output / entry_id / "eval.yaml": yaml.safe_dump(
            {key: value for key, value in entry.items() if key != "id"},
            sort_keys=False,
            allow_unicode=True,
            width=100,
        )
        for entry_id, entry in entries.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repository-url", required=True, help="this repository's URL")
    parser.add_argument("--commit", required=True, help="the commit the entries pin")
    parser.add_argument(
        "--output", required=True, help="the register folder to write <id>/eval.yaml files to"
    )
    args = parser.parse_args(argv)
    try:
        entries = register_entries(args.repository_url, args.commit)
        files = entry_files(entries, Path(args.output))
        # Regenerating replaces the entries (force): all written together, or none.
        outputs = OutputSet(force=True)
        for path in files:
            outputs.add(path)
        outputs.write(files)
    except ValueError as error:  # a bad argument, an entry inspect_evals would refuse, a path
        print(f"register_entries: {error}", file=sys.stderr)
        return 1
    print(f"wrote {len(entries)} register entries to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
