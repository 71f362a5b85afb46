from __future__ import annotations

import gc
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_json, write_png
from inspect_ai import eval
from inspect_ai.dataset import MemoryDataset, Sample

from inspect_medreason.core.lazy_dataset import LazySampleDataset, next_message_id
from inspect_medreason.core.loaders import load_cases
from inspect_medreason.medreason.dataset import build_dataset
from inspect_medreason.medreason.medreason import mcq


def numbered(count: int, keep_built_up_to: int = 0) -> tuple[LazySampleDataset[int], list[int]]:
    built: list[int] = []

    def make(item: int) -> Sample:
        built.append(item)
        return Sample(id=f"s{item}", input=f"q{item}", choices=["x", "y"], target="A")

    dataset = LazySampleDataset(
        list(range(count)), make, name="n", location="here", keep_built_up_to=keep_built_up_to
    )
    return dataset, built


def test_a_small_dataset_is_built_once_and_kept() -> None:
    """Inspect reads a dataset several times as a run starts: up to the limit, each sample
    is built once; above it, on every read (memory flat in the number of cases)."""
    small, built = numbered(4, keep_built_up_to=4)
    assert built == []
    for _ in range(10):
        assert [s.id for s in small] == ["s0", "s1", "s2", "s3"]
    assert small[2] is small[2] and built == [0, 1, 2, 3]
    large, built_large = numbered(5, keep_built_up_to=4)
    for _ in range(3):
        list(large)
    assert len(built_large) == 15 and large[1] is not large[1]


def test_the_cases_are_released_once_their_samples_are_kept() -> None:
    """Built and kept, the samples answer every read: the cases are not held beside them
    (each is another few objects for every full pass of the garbage collector)."""

    class Item:
        def __init__(self, number: int) -> None:
            self.number = number

    def builder(held: Item) -> Callable[[Item], Sample]:
        # held: what make_sample's closure keeps (the cases' image paths)
        return lambda item: Sample(id=f"s{item.number}", input=f"q{held.number}")

    items = [Item(number) for number in range(3)]
    held = Item(99)
    alive = [weakref.ref(item) for item in [*items, held]]
    dataset = LazySampleDataset(items, builder(held), keep_built_up_to=10)
    del items, held
    assert all(ref() is not None for ref in alive)  # not built yet: the cases are needed
    assert [sample.id for sample in dataset] == ["s0", "s1", "s2"]
    gc.collect()
    assert all(ref() is None for ref in alive)
    # every operation still works on the kept samples
    assert len(dataset) == 3 and dataset[1].id == "s1"
    assert [sample.id for sample in dataset[1:]] == ["s1", "s2"]
    assert [sample.id for sample in dataset.filter(lambda sample: sample.id != "s0")] == [
        "s1",
        "s2",
    ]
    dataset.shuffle(seed=1)
    assert sorted(str(sample.id) for sample in dataset) == ["s0", "s1", "s2"]


def test_samples_are_built_only_when_read() -> None:
    dataset, built = numbered(5)
    assert len(dataset) == 5 and built == []
    assert dataset[3].id == "s3" and built == [3]
    part = dataset[1:3]
    assert isinstance(part, LazySampleDataset) and [s.id for s in part] == ["s1", "s2"]
    assert part.name == "n" and part.location == "here"


def test_shuffle_gives_memory_datasets_order() -> None:
    lazy, _ = numbered(20)
    memory = MemoryDataset(list(lazy))
    lazy.shuffle(7)
    memory.shuffle(7)
    assert [s.id for s in lazy] == [s.id for s in memory]
    assert lazy.shuffled


def test_filter_stays_lazy_and_sort_builds_once() -> None:
    dataset, built = numbered(6)
    kept = dataset.filter(lambda sample: sample.id in {"s1", "s4"}, name="two")
    assert isinstance(kept, LazySampleDataset) and kept.name == "two"
    assert len(built) == 6  # the predicate saw each sample once
    assert [s.id for s in kept] == ["s1", "s4"]
    dataset.sort(reverse=True, key=lambda sample: str(sample.id))
    assert [s.id for s in dataset] == ["s5", "s4", "s3", "s2", "s1", "s0"]
    dataset.shuffle_choices(3)  # works on the built samples, which it keeps
    assert {tuple(s.choices or []) for s in dataset} == {("x", "y"), ("y", "x")}
    assert len(built) == 14  # built once more for the sort, never again


def test_message_ids_are_unique() -> None:
    assert len({next_message_id() for _ in range(10_000)}) == 10_000


def test_images_are_resolved_once_per_distinct_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_png(tmp_path / "a.png")
    write_png(tmp_path / "b.png")
    cases = [
        {
            "case_id": f"c{i}",
            "task_type": "open",
            "question": "Q?",
            "image_paths": ["a.png", "b.png"] if i % 2 else ["a.png"],
        }
        for i in range(50)
    ]
    write_json(tmp_path / "cases.json", {"cases": cases})
    import inspect_medreason.core.loaders as loaders

    calls: list[str] = []
    real = loaders.prepare_image_file

    def counting(data_dir: Path, relative: str, *args: object, **kwargs: object) -> object:
        calls.append(relative)
        return real(data_dir, relative, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(loaders, "prepare_image_file", counting)
    loaded = load_cases(tmp_path)
    assert sorted(calls) == ["a.png", "b.png"]
    assert len(loaded.resolved_images) == 50
    dataset, _ = build_dataset(tmp_path, None, {"open"})
    assert dataset[0] is dataset[0]  # 50 cases: built once and kept, as a MemoryDataset would


def test_eval_over_the_lazy_dataset_with_limit_and_sample_ids(
    official_dataset: Path, tmp_path: Path
) -> None:
    task = mcq(data=str(official_dataset))
    assert isinstance(task.dataset, LazySampleDataset)
    logs = str(tmp_path / "logs")
    [log] = eval(task, model="mockllm/model", sample_id=["q2", "q3"], display="none", log_dir=logs)
    assert log.status == "success" and log.samples is not None
    assert sorted(str(s.id) for s in log.samples) == ["q2", "q3"]
    [log] = eval(
        mcq(data=str(official_dataset)),
        model="mockllm/model",
        limit=1,
        display="none",
        log_dir=logs,
    )
    assert log.status == "success" and [s.id for s in log.samples or []] == ["q1"]
