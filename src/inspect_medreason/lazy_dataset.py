"""A dataset that keeps its validated cases and builds each Inspect sample when it is read.

An Inspect sample carrying an image is about 3.4 KB in memory (the message, its content
parts, the metadata); 100,000 of them held at once cost more than the cases themselves, and
Inspect builds its per-sample state lazily while the run goes (O(concurrent samples)), so a
sample only has to exist while Inspect reads it. Operations that need every sample at once
(``sort``, ``shuffle_choices``) build them all and from then on behave as a
``MemoryDataset``.
"""

from __future__ import annotations

import itertools
import random
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar, overload

from inspect_ai.dataset import Dataset, MemoryDataset, Sample

Item = TypeVar("Item")

# Message ids: unique per process, without a UUID encoding per message (Inspect's default, a
# shortuuid per message, was the largest single cost of building a sample).
_MESSAGE_ID_PREFIX = uuid.uuid4().hex[:12]
_message_counter = itertools.count()


def next_message_id() -> str:
    """A unique id for a chat message built by this process."""
    return f"{_MESSAGE_ID_PREFIX}{next(_message_counter):x}"


class LazySampleDataset(Dataset, Generic[Item]):
    """Items (validated cases) that become samples through ``make_sample`` on access."""

    def __init__(
        self,
        items: Sequence[Item],
        make_sample: Callable[[Item], Sample],
        name: str | None = None,
        location: str | None = None,
        shuffled: bool = False,
    ) -> None:
        self._items = list(items)
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
            return LazySampleDataset(self._items[index], self._make_sample, self._name,
                                     self._location, self._shuffled)  # fmt: skip
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
            self._built = MemoryDataset(list(self), self._name, self._location, self._shuffled)
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
        return LazySampleDataset(kept, self._make_sample, name or self._name, self._location,
                                 self._shuffled)  # fmt: skip
