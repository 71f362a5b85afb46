"""Small local files in NEW_BENCHMARK's published layout (write down in the family README
where each fact of it comes from), for this family's tests and its README's commands.

``readme_data`` is found by convention: tests/docs/test_readme_commands.py calls the
``readme_data`` of every ``tests/<family>/published_layout.py`` to write the data paths the
family README's commands name."""

from __future__ import annotations

from pathlib import Path

import datasets
import numpy as np
from PIL import Image

# (question, reference answer) of the test split; the train split has one row.
TEST_ROWS = [
    ("Is there a fracture?", "yes"),
    ("Is the heart enlarged?", "no"),
    ("What organ is shown?", "liver"),
]


def checkerboard(shade: int) -> Image.Image:
    """An 8 x 8 picture with edges (a checkerboard, its dark squares ``shade``-dependent):
    an image shift always changes it, where a uniform grey would be refused as a no-op."""
    squares = np.indices((8, 8)).sum(axis=0) % 2
    return Image.fromarray((squares * 200 + 10 + 5 * shade).astype(np.uint8), mode="L")


def published_snapshot(root: Path) -> Path:
    """The hub snapshot: one parquet shard per split under data/, images stored inside."""
    (root / "data").mkdir(parents=True, exist_ok=True)
    splits = {"train": [("Is this a CT?", "yes")], "test": TEST_ROWS}
    for split, rows in splits.items():
        datasets.Dataset.from_dict(
            {
                "image": [checkerboard(i) for i in range(len(rows))],
                "question": [question for question, _ in rows],
                "answer": [answer for _, answer in rows],
            }
        ).cast_column("image", datasets.Image()).to_parquet(
            str(root / "data" / f"{split}-00000-of-00001-0123abcd.parquet")
        )
    return root


def readme_data(folder: Path) -> None:
    """Every data path the family README's commands name, under ``folder``."""
    published_snapshot(folder / "new_benchmark")
