"""A minimal reproduction, for an upstream Inspect report: a metrics pass over a dictionary
score costs several times a pass over a float score, with ``mean()`` alone.

Inspect computes the metrics of a dictionary score key by key, deep-copying every sample's
``SampleScore`` (score metadata and sample metadata included) once per key, and reduces even a
single epoch with ``statistics.mean``; its progress display repeats that pass while a run goes
on, spaced at ten times its cost. This script has no plugin code: one task of N samples scored
by a scorer returning a 4-key dictionary, one by a scorer returning a float, both with the
same small metadata and ``mean()`` only, mockllm as the model (no network); it times Inspect's
public ``recompute_metrics`` on each log (median of 5 passes).

Usage: python perf/repro_metrics_pass.py [--samples 1000]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog, recompute_metrics
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

KEYS = ["a", "b", "c", "d"]
METADATA = {"record": {"rationale": "x" * 200, "score": 3}}


@scorer(metrics={key: [mean()] for key in KEYS})
def dictionary_score() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value={key: 3.0 for key in KEYS}, metadata=METADATA)

    return score


@scorer(metrics=[mean()])
def float_score() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=3.0, metadata=METADATA)

    return score


def reply(*_: object) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm", content="a")
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer
    return output


def median_pass_seconds(log: EvalLog, passes: int = 5) -> float:
    seconds = []
    for _ in range(passes):
        started = time.perf_counter()
        recompute_metrics(log)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description="Inspect's metrics pass: dict vs float score")
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    samples = [
        Sample(id=i, input=f"q{i}", target="t",
               metadata={"question": f"q{i}", "paths": [f"p{i}.png"], "group": "g"})
        for i in range(args.samples)
    ]  # fmt: skip
    timed: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as logs:
        for name, chosen in (("4-key dictionary", dictionary_score()), ("float", float_score())):
            task = Task(dataset=MemoryDataset(samples), solver=generate(), scorer=chosen)
            model = get_model("mockllm/model", custom_outputs=reply)
            [log] = eval(task, model=model, display="none", log_dir=logs)
            if log.status != "success":
                raise SystemExit(f"{name} run failed: {log.error}")
            timed[name] = median_pass_seconds(log)
            print(f"{name} score: one metrics pass over {args.samples} samples: "
                  f"{timed[name]:.3f} s")  # fmt: skip
    print(f"ratio: {timed['4-key dictionary'] / timed['float']:.1f}x")


if __name__ == "__main__":
    main()
