"""Loading a PathVQA-size published split: time and peak memory of the plugin's load
against a bare ``datasets`` load of the same files.

Writes a synthetic split in PathVQA's published layout (``data/test-0000N-of-00003-
<hash>.parquet`` shards; columns ``image`` (Image feature: encoded bytes inside the row),
``question``, ``answer``): 6,719 rows by default, each with its own noise JPEG, 443 of
them CMYK as in the real test split. Then, each in a fresh process with empty caches:

- ``bare``: ``datasets.load_dataset("parquet", ...)`` and one pass that decodes every
  image (``row["image"].load()``): what any loader of the split does at least;
- ``plugin``: ``path_vqa(data=FOLDER)``: every row read, every image decoded whole,
  converted when a provider would not take it (the CMYK ones), stored by digest, and the
  samples built;
- ``plugin_warm``: the same again with the cache the first run left (images already
  prepared are found by the digest of their bytes and not decoded again).

Reports seconds and peak RSS (``ru_maxrss``) of each; the ratios are plugin / bare.

Usage: python perf/bench_hub_load.py [--rows 6719] [--cmyk 443] [--side 256]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import harness

RESULTS = harness.RESULTS / "hub_load.json"
SHARDS = 3


def make_split(folder: Path, rows: int, cmyk: int, side: int) -> None:
    """The published layout, written one shard at a time (never the split in memory)."""
    import datasets
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    (folder / "data").mkdir(parents=True, exist_ok=True)
    every = max(rows // max(cmyk, 1), 1)
    per_shard = -(-rows // SHARDS)
    for shard in range(SHARDS):
        images, questions, answers = [], [], []
        for index in range(shard * per_shard, min(rows, (shard + 1) * per_shard)):
            # Smooth tissue-like colour with noise on top: compresses as photographs do.
            base = rng.integers(0, 256, size=(side // 16, side // 16, 3), dtype=np.uint8)
            pixels = np.kron(base, np.ones((16, 16, 1), dtype=np.uint8))
            pixels = (pixels + rng.integers(0, 24, size=pixels.shape, dtype=np.uint8)).astype(
                np.uint8
            )
            image = Image.fromarray(pixels)
            if index % every == 0 and index // every < cmyk:
                image = image.convert("CMYK")
            buffer = io.BytesIO()
            image.save(buffer, format="JPEG", quality=85)
            images.append({"bytes": buffer.getvalue(), "path": None})
            questions.append(f"is there evidence of inflammation in section {index}?")
            answers.append("yes" if index % 2 else "no")
        datasets.Dataset.from_dict(
            {"image": images, "question": questions, "answer": answers}
        ).cast_column("image", datasets.Image()).to_parquet(
            str(folder / "data" / f"test-{shard:05d}-of-{SHARDS:05d}-0123456789abcdef.parquet")
        )


def child(folder: Path, variant: str) -> None:
    start = time.perf_counter()
    if variant == "bare":
        import datasets

        files = sorted(str(p) for p in (folder / "data").glob("test-*.parquet"))
        dataset = datasets.load_dataset("parquet", data_files=files, split="train")
        rows = sum(1 for row in dataset if row["image"].load() is not None or True)
    else:
        from inspect_medreason.vqa.vqa import path_vqa

        task = path_vqa(data=str(folder))
        rows = sum(1 for sample in task.dataset if sample.metadata)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "peak_rss_mib": peak, "rows": rows}))


def main() -> None:
    parser = argparse.ArgumentParser(description="PathVQA-size split: plugin vs bare datasets")
    parser.add_argument("--rows", type=int, default=6719)
    parser.add_argument("--cmyk", type=int, default=443)
    parser.add_argument("--side", type=int, default=256)
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--variant", default="plugin", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.variant)
        return
    results: dict[str, object] = {
        **harness.stamp(),
        "rows": args.rows,
        "cmyk": args.cmyk,
        "side": args.side,
    }
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "path-vqa"
        make_split(folder, args.rows, args.cmyk, args.side)
        results["split_mib"] = round(
            sum(p.stat().st_size for p in (folder / "data").iterdir()) / 2**20, 1
        )
        for variant, caches in (("bare", "bare"), ("plugin", "plugin"), ("plugin_warm", "plugin")):
            env = {
                **os.environ,
                "INSPECT_MEDREASON_CACHE_DIR": str(Path(scratch) / caches / "medreason"),
                "HF_DATASETS_CACHE": str(Path(scratch) / variant / "hf"),
                "PYTHONPATH": os.pathsep.join(
                    [
                        str(Path(__file__).resolve().parents[1] / "src"),
                        os.environ.get("PYTHONPATH", ""),
                    ]
                ),
            }
            command = [sys.executable, __file__, "--child", str(folder), "--variant", variant]
            measured = harness.run_child(variant, command, env)
            results[variant] = measured
            print(
                f"{variant:>11}: {measured['seconds']:.1f} s, peak RSS "
                f"{measured['peak_rss_mib']:.0f} MiB ({int(measured['rows'])} rows)"
            )
    bare, plugin = results["bare"], results["plugin"]
    assert isinstance(bare, dict) and isinstance(plugin, dict)
    results["time_ratio_vs_bare"] = round(plugin["seconds"] / bare["seconds"], 3)
    results["memory_ratio_vs_bare"] = round(plugin["peak_rss_mib"] / bare["peak_rss_mib"], 3)
    print(
        f"plugin / bare: time {results['time_ratio_vs_bare']}, "
        f"peak memory {results['memory_ratio_vs_bare']}"
    )
    harness.write_result(args.output, results)


if __name__ == "__main__":
    main()
