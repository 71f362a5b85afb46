"""Log bytes per sample (``--no-log-images``) and where they go, for the open-ended track.

Runs N open-ended image cases against a local judge (``bench_judge.py``'s stand-in, no
latency), once with the plugin's scorer and once with a bare Inspect scorer that sends the
same three judge requests, and reads each log's sample entries: the bytes on disk per
sample, and for one typical sample the marginal compressed bytes of each part (what the
sample would lose without it: Inspect's events by type, the attachments where Inspect keeps
each distinct prompt text, the scores, ...). Issue 14 asked for <= 4 KB per open-ended
sample; the bare scorer's log shows what Inspect itself records for the three judge calls.

Usage: python perf/bench_log_bytes.py [--cases 200]
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import harness
import zstandard
from bench_judge import make_dataset

RESULTS = harness.RESULTS / "log_bytes.json"
VARIANTS = {"plugin": "plugin", "bare": "bare"}
COMPRESSOR = zstandard.ZstdCompressor(level=3)


def compressed(value: Any) -> int:
    return len(COMPRESSOR.compress(json.dumps(value).encode()))


def sample_entries(log: Path) -> tuple[list[zipfile.ZipInfo], zipfile.ZipFile]:
    archive = zipfile.ZipFile(log)
    return [i for i in archive.infolist() if i.filename.startswith("samples/")], archive


def read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> dict[str, Any]:
    """One sample entry (Inspect writes them zstd-compressed, which zipfile cannot read)."""
    assert archive.fp is not None
    archive.fp.seek(info.header_offset)
    header = archive.fp.read(30)
    name_length, extra_length = struct.unpack("<HH", header[26:30])
    archive.fp.read(name_length + extra_length)
    raw = archive.fp.read(info.compress_size)
    if info.compress_type == zipfile.ZIP_DEFLATED:
        import zlib

        return dict(json.loads(zlib.decompress(raw, -15)))
    return dict(json.loads(zstandard.ZstdDecompressor().decompressobj().decompress(raw)))


def breakdown(sample: dict[str, Any]) -> dict[str, int]:
    """Marginal compressed bytes of each part of one sample."""
    whole = compressed(sample)
    parts: dict[str, int] = {"whole_sample": whole}
    for key in sample:
        if key == "events":
            continue
        parts[key] = whole - compressed({k: v for k, v in sample.items() if k != key})
    for kind in Counter(event["event"] for event in sample.get("events", [])):
        rest = [event for event in sample["events"] if event["event"] != kind]
        parts[f"events:{kind}"] = whole - compressed({**sample, "events": rest})
    for name, score in (sample.get("scores") or {}).items():
        for key in score.get("metadata") or {}:
            trimmed = json.loads(json.dumps(sample))
            del trimmed["scores"][name]["metadata"][key]
            for event in trimmed["events"]:
                if event["event"] == "score":
                    (event["score"].get("metadata") or {}).pop(key, None)
            parts[f"score.metadata.{key}"] = whole - compressed(trimmed)
    return {key: value for key, value in parts.items() if value != 0}


def main() -> None:
    parser = argparse.ArgumentParser(description="open-ended log bytes per sample")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--side", type=int, default=256)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    bench = Path(__file__).parent / "bench_judge.py"
    server = subprocess.Popen(
        [sys.executable, str(bench), "--serve", "--latency", "0"], stdout=subprocess.PIPE, text=True
    )
    result: dict[str, Any] = {"cases": args.cases, **harness.stamp()}
    try:
        assert server.stdout is not None
        base_url = f"http://127.0.0.1:{server.stdout.readline().strip()}/v1"
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "data"
            make_dataset(folder, args.cases, args.side)
            for variant in VARIANTS:
                logs = Path(tmp) / f"logs_{variant}"
                command = [sys.executable, str(bench), "--child", variant]
                command += ["--folder", str(folder), "--base-url", base_url]
                env = {
                    **os.environ,
                    "BENCH_JUDGE_KEEP_LOGS": str(logs),
                    "INSPECT_CACHE_DIR": tempfile.mkdtemp(dir=tmp),
                }
                harness.run_child(variant, command, env)  # the run checks its log's status
                [log] = logs.glob("*.eval")
                entries, archive = sample_entries(log)
                typical = sorted(entries, key=lambda i: i.compress_size)[len(entries) // 2]
                result[variant] = {
                    "log_bytes_per_sample": round(log.stat().st_size / len(entries)),
                    "sample_entry_bytes": round(
                        sum(i.compress_size for i in entries) / len(entries)
                    ),
                    "typical_sample_parts": breakdown(read_entry(archive, typical)),
                }
    finally:
        server.terminate()
        server.wait(timeout=10)
    result["plugin_vs_bare"] = round(
        result["plugin"]["log_bytes_per_sample"] / result["bare"]["log_bytes_per_sample"], 3
    )
    harness.write_result(args.output, result)


if __name__ == "__main__":
    main()
