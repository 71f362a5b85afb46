"""What the benchmarks in perf/ share: how a run is repeated, isolated, timed and counted.

- **Child runs.** Every measured run is a fresh process (``python perf/bench_X.py --child
  ...``) that prints its measures as one JSON line: peak RSS is then that run's own, and no
  run inherits another's imports or caches. ``run_child`` starts one and reads its line.
- **Alternating runs and medians.** On a shared machine a variant that always ran first
  would always meet a colder (or warmer) machine: each repeat runs every variant once, in
  reverse order on every other repeat, and the benchmarks report the median of each measure.
- **Time in the garbage collector.** ``collections_timed`` records every collection made in
  a block, by generation (``gc.callbacks``, two Python calls per collection). A full
  collection walks every object alive, so its cost grows with everything a run keeps in
  memory: part of every variant's wall time that no plugin code runs in.
- **Instruction counts.** Wall and CPU time on a shared machine wander by 15-30% between
  identical runs; the number of instructions a process executes does not depend on the
  machine's speed, so it resolves the 5-10% the benchmarks' bars are about. ``run_counted``
  runs a child under valgrind's callgrind with a fixed hash seed (string hashing otherwise
  changes dict and set work from run to run); repeated runs agree within 0.05%. What still
  varies is what depends on time (how often an event loop wakes while waiting on a server,
  Inspect's progress-display passes): run with the display off. Valgrind makes a run about
  30 times slower.
- **Cases and model.** ``make_image_cases`` writes N cases in the official layout, each on
  its own random-noise PNG (noise does not compress away); ``scripted_model`` is mockllm
  answering every request with one reply, usage set so that no tokenizer is touched.
- **Results.** ``stamp`` (machine and date) goes into every results file; ``write_result``
  writes ``perf/results/NAME.json``, from which ``report.py`` renders perf/README.md.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_medreason.core.files import write_text_atomically

RESULTS = Path(__file__).parent / "results"
COUNT_ENV = {"PYTHONHASHSEED": "0"}
CALLGRIND = "valgrind --tool=callgrind (instructions executed by the eval's process)"


def run_child(name: str, command: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``command`` (a child run) to its end; the JSON object on its last stdout line.
    Stops the benchmark, with the end of the child's stderr, when the child fails."""
    out = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if out.returncode != 0:
        raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def alternating_runs(
    variants: Sequence[str],
    run: Callable[[str], dict[str, float]],
    repeats: int,
    label: object = None,
) -> dict[str, list[dict[str, float]]]:
    """``run(variant)`` for every variant, ``repeats`` times, the order reversed on every
    other repeat; each result is printed as it comes (after ``label``, when given)."""
    runs: dict[str, list[dict[str, float]]] = {variant: [] for variant in variants}
    for repeat in range(repeats):
        for variant in variants if repeat % 2 == 0 else variants[::-1]:
            runs[variant].append(run(variant))
            shown = (variant,) if label is None else (label, variant)
            print(*shown, runs[variant][-1], flush=True)
    return runs


def medians(
    runs: dict[str, list[dict[str, float]]], keys: Iterable[str] | None = None, digits: int = 3
) -> dict[str, dict[str, float]]:
    """Per variant, the median of each measure (``keys``, default every one the runs report;
    a key a variant's runs do not report is left out), rounded to ``digits``."""
    return {
        variant: {
            key: round(float(statistics.median(run[key] for run in done)), digits)
            for key in (done[0] if keys is None else keys)
            if key in done[0]
        }
        for variant, done in runs.items()
    }


@dataclass
class CollectionTimes:
    """Collections made and seconds spent in them, per generation (0, 1, 2)."""

    counts: list[int] = field(default_factory=lambda: [0, 0, 0])
    seconds: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds)

    def as_result(self) -> dict[str, float]:
        return {
            "gc_seconds": round(self.total_seconds, 3),
            "gc_full_collections": self.counts[2],
            "gc_full_seconds": round(self.seconds[2], 3),
        }


@contextmanager
def collections_timed() -> Iterator[CollectionTimes]:
    """Record every collection made inside the block."""
    times = CollectionTimes()
    started: list[float] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            generation = int(info["generation"])
            times.counts[generation] += 1
            times.seconds[generation] += time.perf_counter() - started.pop()

    gc.callbacks.append(record)
    try:
        yield times
    finally:
        gc.callbacks.remove(record)


def valgrind_available() -> bool:
    return shutil.which("valgrind") is not None


def run_counted(
    name: str, command: list[str], folder: Path, env: dict[str, str] | None = None
) -> tuple[str, int]:
    """Run ``command`` under callgrind (its profile written into ``folder``); its stdout and
    the number of instructions it executed. Stops the benchmark when the run fails."""
    out = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/callgrind.%p", *command],
        capture_output=True,
        text=True,
        check=False,
        env={**(os.environ if env is None else env), **COUNT_ENV},
    )
    if out.returncode != 0:
        raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise SystemExit(f"{name}: callgrind reported no instruction count:\n{out.stderr[-3000:]}")
    return out.stdout, int(found.group(1))


def make_image_cases(folder: Path, count: int, side: int, task_type: str = "mcq") -> None:
    """``count`` cases of one track in the official layout (cases.json, ground_truth.json),
    each on its own ``side``-pixel noise PNG."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    cases, truth = [], []
    for index in range(count):
        name = f"images/case_{index:05d}.png"
        pixels = rng.integers(0, 256, size=(side, side, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / name)
        case_id = f"case_{index:05d}"
        case: dict[str, Any] = {
            "case_id": case_id,
            "task_type": task_type,
            "image_path": name,
            "metadata": {"modality": ["CT", "MR", "X-ray"][index % 3]},
        }
        if task_type == "mcq":
            case.update(
                question=f"Which option? ({case_id})",
                options=["first", "second", "third", "fourth"],
            )
            answer = "ABCD"[index % 4]
        else:
            case["question"] = f"Describe the main finding. ({case_id})"
            answer = "A small nodule."
        cases.append(case)
        truth.append({"case_id": case_id, "task_type": task_type, "answer": answer})
    (folder / "cases.json").write_text(json.dumps({"cases": cases}), encoding="utf-8")
    (folder / "ground_truth.json").write_text(json.dumps({"cases": truth}), encoding="utf-8")


def noise_images(folder: Path, count: int, side: int = 64) -> None:
    """``images/img_NNNN.png``: ``count`` noise PNGs for cases that share their images."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    for index in range(count):
        pixels = rng.integers(0, 256, size=(side, side, 3), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / "images" / f"img_{index:04d}.png")


def scripted_model(reply: str) -> Any:
    """mockllm answering every request with ``reply`` (usage set: no tokenizer)."""
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def respond(*_: Any) -> ModelOutput:
        output = ModelOutput.from_content(model="mockllm", content=reply)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return get_model("mockllm/model", custom_outputs=respond)


def require_success(name: str, log: Any) -> None:
    """Stop the benchmark when a measured eval did not succeed: its numbers would mean
    nothing."""
    if log.status != "success":
        raise SystemExit(f"{name} run failed: {log.error}")


def stamp() -> dict[str, Any]:
    """Where and when: the machine and date every results file records."""
    return {"machine": platform.platform(), "date": time.strftime("%Y-%m-%d")}


def write_result(path: Path, result: dict[str, Any]) -> None:
    """Write a results file (indented JSON) and print it."""
    text = json.dumps(result, indent=2) + "\n"
    write_text_atomically(path, text, force=True)
    print(text, end="")
