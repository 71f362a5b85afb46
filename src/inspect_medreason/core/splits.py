"""Split names as the Hugging Face hub reads them from file and folder names (``datasets``'
own keywords): ``test-00000-of-00001.parquet`` is test, ``CMB-val-merge.json`` and
``MM/dev.jsonl`` validation."""

from __future__ import annotations

import functools
import re

# A file name's words, for telling which split a file holds.
_NAME_WORDS = re.compile(r"[A-Za-z]+")


# Publishers' own names that ``datasets`` does not know: SLAKE's authors ship its
# validation split as ``validate.json``; MEVF's VQA-RAD files (which many later papers
# use) are ``trainset.json`` and ``testset.json``.
EXTRA_KEYWORDS = {
    "validation": frozenset({"validate"}),
    "train": frozenset({"trainset"}),
    "test": frozenset({"testset"}),
}


@functools.cache
def _split_keywords() -> dict[str, frozenset[str]]:
    # read once: every file name of a folder is matched against them
    from datasets.data_files import SPLIT_KEYWORDS

    return {
        str(split): frozenset(words) | EXTRA_KEYWORDS.get(str(split), frozenset())
        for split, words in SPLIT_KEYWORDS.items()
    }


def canonical_split(split: str) -> str:
    """The ``datasets`` name of a split (``dev``, ``val``, ``valid`` and SLAKE's
    ``validate`` are ``validation``); a name ``datasets`` does not know is kept as it is."""
    wanted = split.strip().lower()
    for name, words in _split_keywords().items():
        if wanted == name or wanted in words:
            return name
    return split.strip()


def split_named_by(file_name: str) -> set[str]:
    """The splits a file's name (or folder's name) names by ``datasets``' keywords:
    ``train-00000-of-00001.parquet`` names train, ``CMB-val-merge.json`` validation."""
    words = {word.lower() for word in _NAME_WORDS.findall(file_name)}
    return {name for name, keywords in _split_keywords().items() if words & keywords}
