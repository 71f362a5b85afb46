"""The cost of an image shift per image: each model at severity 2 on a grey radiograph-like
image (8-bit, square, of each size) and on a colour photograph of the smallest size, from a
cold cache (decode, degrade, encode the PNG, write) and from a warm one (the cached file
found: a digest lookup and a stat), median of the repeats, each repeat with another seed so
the cold time is never a cache hit.

Usage: python perf/bench_shift.py [--sizes 512 2048] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import harness
import numpy as np
from PIL import Image

from inspect_medreason.core.shift.catalog import COLOUR_ONLY_MODELS, MODEL_PARAMETERS

RESULTS = harness.RESULTS / "shift.json"
SEVERITY = 2


def textured(path: Path, side: int, colour: bool) -> Path:
    """Smooth anatomy-like structure plus fine texture, so compression and blur have work."""
    rng = np.random.default_rng(side)
    y, x = np.mgrid[0:side, 0:side] / side
    base = 0.5 + 0.3 * np.sin(6 * x) * np.cos(4 * y) + 0.1 * rng.random((side, side))
    pixels = (np.clip(base, 0, 1) * 255).astype(np.uint8)
    image = Image.fromarray(np.stack([pixels, pixels[::-1], pixels.T], -1) if colour else pixels)
    image.save(path)
    return path


def time_model(path: Path, model: str, repeats: int) -> dict[str, float]:
    from inspect_medreason.core.shift.degrade import degraded_path

    cold, warm = [], []
    for seed in range(repeats):
        start = time.perf_counter()
        degraded_path(path, model, SEVERITY, seed, "case", 0)
        cold.append(time.perf_counter() - start)
        start = time.perf_counter()
        degraded_path(path, model, SEVERITY, seed, "case", 0)
        warm.append(time.perf_counter() - start)
    return {
        "cold_ms": round(statistics.median(cold) * 1000, 2),
        "cached_ms": round(statistics.median(warm) * 1000, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 2048])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        # the degraded images go to a cache of this run's own, never the user's
        os.environ["INSPECT_MEDREASON_CACHE_DIR"] = str(folder / "cache")
        images = {f"grey {side}x{side}": textured(folder / f"grey{side}.png", side, False)
                  for side in args.sizes}  # fmt: skip
        smallest = min(args.sizes)
        images[f"colour {smallest}x{smallest}"] = textured(folder / "colour.png", smallest, True)
        measured = {
            name: {
                model: time_model(path, model, args.repeats)
                for model in MODEL_PARAMETERS
                # stain variation refuses a greyscale image
                if name.startswith("colour") or model not in COLOUR_ONLY_MODELS
            }
            for name, path in images.items()
        }
    harness.write_result(
        args.output,
        {"severity": SEVERITY, "repeats": args.repeats, "images": measured, **harness.stamp()},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
