"""A dataset that keeps its validated cases and builds each Inspect sample when it is read.

An Inspect sample carrying an image is about 3.4 KB in memory (the message, its content
parts, the metadata); 100,000 of them held at once cost more than the cases themselves, and
Inspect builds its per-sample state lazily while the run goes (O(concurrent samples)), so a
sample only has to exist while Inspect reads it. But Inspect reads the whole dataset about
ten times as a run starts (its ids, the duplicate check, the header's list), so a dataset of
up to ``KEEP_BUILT_UP_TO`` cases is built once, on its first read, and kept (68 MB at the
limit; building 2,000 samples ten times cost about 0.5 s of a 40 s run); a larger one builds
each sample when it is read. Operations that need every sample at once (``sort``,
``shuffle_choices``) build them all and from then on behave as a ``MemoryDataset``.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import random
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

from inspect_ai.dataset import Dataset, MemoryDataset, Sample

Item = TypeVar("Item")

# Message ids: unique per process, without a UUID encoding per message (Inspect's default, a
# shortuuid per message, was the largest single cost of building a sample).
_MESSAGE_ID_PREFIX = uuid.uuid4().hex[:12]
_message_counter = itertools.count()

KEEP_BUILT_UP_TO = 20_000


def next_message_id() -> str:
    """A unique id for a chat message built by this process."""
    return f"{_MESSAGE_ID_PREFIX}{next(_message_counter):x}"


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a data set is built.

    Building 100,000 cases allocates millions of long-lived objects and none of them is
    cyclic garbage, yet the collector would traverse the growing heap again and again: it
    took 60% of the load time. Reference counting still frees everything as usual.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _already_built(item: Any) -> Sample:
    raise RuntimeError("the dataset's samples are built: read them from the dataset")


class LazySampleDataset(Dataset, Generic[Item]):
    """Items (validated cases) that become samples through ``make_sample`` on access."""

    def __init__(
        self,
        items: Sequence[Item],
        make_sample: Callable[[Item], Sample],
        name: str | None = None,
        location: str | None = None,
        shuffled: bool = False,
        keep_built_up_to: int = KEEP_BUILT_UP_TO,
    ) -> None:
        self._items = list(items)
        self._keep_built_up_to = keep_built_up_to
        self._make_sample = make_sample
        self._name = name
        self._location = location
        self._shuffled = shuffled
        self._built: MemoryDataset | None = None

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def location(self) -> str | None:
        return self._location

    @property
    def shuffled(self) -> bool:
        return self._built.shuffled if self._built is not None else self._shuffled

    @overload
    def __getitem__(self, index: int) -> Sample: ...

    @overload
    def __getitem__(self, index: slice) -> Dataset: ...

    def __getitem__(self, index: int | slice) -> Sample | Dataset:
        if self._built is not None:
            return self._built[index]
        if isinstance(index, slice):
            return LazySampleDataset(
                self._items[index],
                self._make_sample,
                self._name,
                self._location,
                self._shuffled,
                self._keep_built_up_to,
            )
        if len(self._items) <= self._keep_built_up_to:
            return self._all_built()[index]
        return self._make_sample(self._items[index])

    def __len__(self) -> int:
        return len(self._built) if self._built is not None else len(self._items)

    def shuffle(self, seed: int | None = None) -> None:
        if self._built is not None:
            self._built.shuffle(seed)
            return
        # The same permutation MemoryDataset.shuffle gives a list of this length.
        if seed is not None:
            random.Random(seed).shuffle(self._items)
        else:
            random.shuffle(self._items)
        self._shuffled = True

    def _all_built(self) -> MemoryDataset:
        if self._built is None:
            with collection_paused():  # thousands of long-lived objects, none cyclic garbage
                samples = [self._make_sample(item) for item in self._items]
            self._built = MemoryDataset(samples, self._name, self._location, self._shuffled)
            # Every read now goes to the built samples: the cases would only stay alive for
            # each of the collector's full passes to walk again (16 objects a case, measured).
            self._items = []
            self._make_sample = _already_built  # and what it holds (each case's image paths)
        return self._built

    def shuffle_choices(self, seed: int | None = None) -> None:
        self._all_built().shuffle_choices(seed)

    def sort(
        self,
        reverse: bool = False,
        key: Callable[[Sample], Any] | None = None,
    ) -> None:
        if key is None:
            self._all_built().sort(reverse=reverse)
        else:
            self._all_built().sort(reverse=reverse, key=key)

    def filter(
        self, predicate: Callable[[Sample], bool], name: str | None = None
    ) -> LazySampleDataset[Item] | Dataset:
        if self._built is not None:
            return self._built.filter(predicate, name)
        kept = [item for item in self._items if predicate(self._make_sample(item))]
        return LazySampleDataset(
            kept,
            self._make_sample,
            name or self._name,
            self._location,
            self._shuffled,
            self._keep_built_up_to,
        )
