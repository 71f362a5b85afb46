"""The inspect_evals register entries generated from the eval.yaml files: one per task,
each accepted by inspect_evals' own model, pinned to a commit, naming the file that defines
the task and the task's pinned data revisions."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import inspect_evals
import yaml
from inspect_evals.metadata import ExternalEvalMetadata, load_listing, load_listing_safe

from inspect_medreason import _registry

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from register_entries import main, register_entries  # noqa: E402

URL = "https://github.com/example-org/inspect_medreason"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def registered_tasks() -> set[str]:
    tasks = set()
    for path in (ROOT / "src" / "inspect_medreason").glob("*/eval.yaml"):
        tasks |= {t["name"] for t in yaml.safe_load(path.read_text())["tasks"]}
    return tasks


def test_one_valid_entry_per_task_pinned_to_the_commit() -> None:
    entries = register_entries(URL, COMMIT)
    assert {entry["tasks"][0]["name"] for entry in entries.values()} == registered_tasks()
    for entry in entries.values():
        metadata = ExternalEvalMetadata.model_validate(entry)
        [task] = metadata.tasks
        assert metadata.source.repository_commit == COMMIT
        assert str(metadata.source.repository_url) == URL
        assert task.task_path is not None
        source = (ROOT / task.task_path).read_text(encoding="utf-8")
        assert f"def {task.name}(" in source  # the file that defines the task
        defined = inspect.getfile(inspect.unwrap(getattr(_registry, task.name)))
        assert defined.endswith(task.task_path)


def test_each_task_carries_its_own_pinned_data() -> None:
    entries = register_entries(URL, COMMIT)
    comment = {e["tasks"][0]["name"]: e["tasks"][0]["comment"] for e in entries.values()}
    assert "flaviagiammarino/vqa-rad" in comment["medreason_vqa_rad"]
    assert "bcf91e7654fb9d51c8ab6a5b82cacf3fafd2fae9" in comment["medreason_vqa_rad"]
    assert (
        "path-vqa" not in comment["medreason_vqa_rad"]
        and "SLAKE" not in comment["medreason_vqa_rad"]
    )
    assert "a9083ce6c34ac3ffb17671a605962924d8a8f9e9" in comment["slake"]
    assert "FreedomIntelligence/CMB" in comment["cmb_exam"]
    assert "task version" in comment["mcq"] and "no external data" in comment["mcq"]


def test_the_script_writes_the_entries_and_refuses_a_commit_that_pins_nothing(
    tmp_path: Path,
) -> None:
    script = [sys.executable, str(ROOT / "scripts" / "register_entries.py")]
    args = ["--repository-url", URL, "--output", str(tmp_path / "register")]
    done = subprocess.run([*script, *args, "--commit", COMMIT], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    written = sorted((tmp_path / "register").glob("*/eval.yaml"))
    assert len(written) == len(registered_tasks())
    entry = yaml.safe_load(written[0].read_text())
    ExternalEvalMetadata.model_validate({**entry, "id": written[0].parent.name})
    refused = subprocess.run([*script, *args, "--commit", "main"], capture_output=True, text=True)
    assert refused.returncode == 1 and "40-character commit" in refused.stderr


def test_inspect_evals_own_listing_finds_every_entry_and_no_task_name_twice(
    tmp_path: Path,
) -> None:
    """The entries in a checkout's layout (``<root>/src/inspect_evals`` beside
    ``<root>/register``), read by inspect_evals' own ``load_listing``, which globs
    ``register/*/eval.yaml`` there: every entry found and valid, each task found by
    ``find_task`` as ours, and no task name shared with inspect_evals' own evals."""
    root = tmp_path / "checkout"
    (root / "src").mkdir(parents=True)
    (root / "src" / "inspect_evals").symlink_to(Path(inspect_evals.__file__).parent)
    assert (
        main(["--repository-url", URL, "--commit", COMMIT, "--output", str(root / "register")]) == 0
    )
    package = root / "src" / "inspect_evals"
    _, errors = load_listing_safe(package)
    assert errors == []
    listing = load_listing(package)
    theirs = load_listing(Path(inspect_evals.__file__).parent)
    assert theirs.external_evals == []  # the installed package alone holds only its own
    ours = {entry.id: entry for entry in listing.external_evals}
    assert set(ours) == set(register_entries(URL, COMMIT))
    names = [task.name for entry in listing.evals for task in entry.tasks]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)
    their_names = {task.name for entry in theirs.evals for task in entry.tasks}
    assert "vqa_rad" in their_names  # the clash the rename avoids is real
    for name in registered_tasks():
        assert name not in their_names
        found, task = listing.find_task(name)
        assert found is not None and found.id in ours and task is not None
        assert found.id == f"inspect_medreason_{name}"
