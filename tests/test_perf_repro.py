"""The upstream reproductions and benches in perf/ run offline and report what they measure."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from inspect_ai.log import EvalLog

ROOT = Path(__file__).resolve().parents[1]


def run_perf_script(script: str, *args: str, timeout: int = 300) -> str:
    """Run ``perf/<script>`` with ``args``; its stdout, once it has exited 0."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "perf" / script), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def perf_module(name: str) -> ModuleType:
    """``perf/<name>.py`` imported (the perf scripts import each other by bare name)."""
    sys.path.insert(0, str(ROOT / "perf"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "perf"))


def scripted_eval(task: Any, log_dir: Path) -> EvalLog:
    """``task`` run against bench_mcq's scripted mockllm; its log, once it succeeded."""
    from inspect_ai import eval

    [log] = eval(
        task, model=perf_module("bench_mcq").scripted_model(), display="none", log_dir=str(log_dir)
    )
    assert log.status == "success"
    return log


def test_metrics_pass_reproduction_runs_and_reports_a_ratio() -> None:
    stdout = run_perf_script("repro_metrics_pass.py", "--samples", "20")
    passes = re.findall(
        r"(4-key dictionary|float) score: one metrics pass over 20 samples: "
        r"(\d+\.\d{3}) s",
        stdout,
    )
    assert [name for name, _ in passes] == ["4-key dictionary", "float"]
    assert re.search(r"^ratio: \d+\.\dx$", stdout, re.M)


def test_the_reply_parser_bench_runs_every_parser_and_reports_no_failure(tmp_path: Path) -> None:
    output = tmp_path / "parsers.json"
    stdout = run_perf_script("bench_parsers.py", "--size", "2000", "--output", str(output))
    assert re.search(r"^14 parsers x \d+ replies: 0 failure\(s\)$", stdout, re.M)
    result = json.loads(output.read_text(encoding="utf-8"))
    assert result["reply_chars"] == 2000 and len(result["parsers"]) == 14
    assert all(row["failures"] == [] and row["worst_reply"] for row in result["parsers"].values())


@pytest.mark.parametrize(
    ("script", "baseline", "variants"),
    [
        # the system prompt / the metadata is logged with every sample: a run without it
        # writes less
        ("repro_system_prompt.py", "no_system", ("system_config", "system_solver")),
        ("repro_sample_metadata.py", "no_metadata", ("six_keys", "six_numbers")),
    ],
)
def test_a_reproduction_reports_every_variant(
    tmp_path: Path, script: str, baseline: str, variants: tuple[str, ...]
) -> None:
    output = tmp_path / "repro.json"
    run_perf_script(
        script,
        "--samples",
        "12",
        "--repeats",
        "1",
        "--side",
        "32",
        "--output",
        str(output),
        timeout=600,
    )
    timings = json.loads(output.read_text(encoding="utf-8"))["timings"]
    assert timings["samples"] == 12 and timings["repeats"] == 1
    floor = timings[baseline]["log_bytes_per_sample"]
    for variant in variants:
        assert timings[variant]["log_bytes_per_sample"] > floor
        assert set(timings[f"ratio_vs_{baseline}"][variant]) == {
            "seconds",
            "cpu_seconds",
            "log_bytes_per_sample",
        }


def test_the_metadata_reproduction_carries_the_plugins_keys_and_nothing_else(
    tmp_path: Path,
) -> None:
    from inspect_medreason.medreason.medreason import mcq

    repro = perf_module("repro_sample_metadata")
    perf_module("bench_mcq").make_dataset(tmp_path / "data", 2, 16)
    logged: dict[str, object] = {}
    for variant in ("no_metadata", "six_keys", "six_numbers"):
        log = scripted_eval(repro.task(tmp_path / "data", variant), tmp_path / variant)
        logged[variant] = (log.samples or [])[0].metadata
    plugin_log = scripted_eval(mcq(data=str(tmp_path / "data")), tmp_path / "plugin")
    plugin_metadata = (plugin_log.samples or [])[0].metadata
    assert logged["no_metadata"] == {}
    assert logged["six_keys"] == plugin_metadata  # the same keys and values as the plugin's
    assert isinstance(logged["six_numbers"], dict)
    assert set(logged["six_numbers"]) == set(plugin_metadata)
    assert all(isinstance(value, int) for value in logged["six_numbers"].values())


def test_both_ways_of_sending_the_system_prompt_send_the_model_the_same_messages(
    tmp_path: Path,
) -> None:
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import resolve_sample_attachments

    repro = perf_module("repro_system_prompt")
    perf_module("bench_mcq").make_dataset(tmp_path / "data", 2, 16)
    sent: dict[str, list[tuple[str, str]]] = {}
    for variant in ("system_config", "system_solver"):
        log = scripted_eval(repro.task(tmp_path / "data", variant), tmp_path / variant)
        [sample, *_] = log.samples or []
        sample = resolve_sample_attachments(sample)
        [event] = [event for event in sample.events if isinstance(event, ModelEvent)]
        sent[variant] = [(message.role, message.text) for message in event.input]
    assert sent["system_config"] == sent["system_solver"]
    assert sent["system_config"][0] == ("system", repro.SYSTEM)


def test_the_load_time_prompt_variant_sends_what_the_plugins_solver_sends(
    tmp_path: Path,
) -> None:
    """bench_mcq's design-before-the-solver variant is a fair comparison: the model is sent
    the same messages (system prompt, images, rendered user text) and the scores agree."""
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import resolve_sample_attachments

    from inspect_medreason.medreason.medreason import mcq

    bench_mcq = perf_module("bench_mcq")
    bench_mcq.make_dataset(tmp_path / "data", 3, 16)
    sent: dict[str, list[list[tuple[str, str, int]]]] = {}
    scores: dict[str, list[object]] = {}
    for name, task in (
        ("plugin", mcq(data=str(tmp_path / "data"))),
        ("load_time", bench_mcq.load_time_prompt_task(tmp_path / "data")),
    ):
        log = scripted_eval(task, tmp_path / name)
        sent[name], scores[name] = [], []
        for sample in log.samples or []:
            sample = resolve_sample_attachments(sample)
            [event] = [event for event in sample.events if isinstance(event, ModelEvent)]
            sent[name].append(
                [
                    (
                        message.role,
                        message.text,
                        len(message.content) if isinstance(message.content, list) else 0,
                    )
                    for message in event.input
                ]
            )
            scores[name].append(sample.scores["mcq_scorer"].value if sample.scores else None)
    assert sent["plugin"] == sent["load_time"]
    assert [roles for roles, *_ in sent["plugin"][0]] == ["system", "user"]
    assert "Options:" in sent["plugin"][0][1][1]  # the rendered prompt, not the bare question
    assert scores["plugin"] == scores["load_time"] and None not in scores["plugin"]


def test_the_plugin_code_bench_times_each_part_per_case(tmp_path: Path) -> None:
    output = tmp_path / "plugin_code.json"
    run_perf_script(
        "bench_plugin_code.py",
        "--cases",
        "8",
        "--side",
        "16",
        "--repeats",
        "1",
        "--output",
        str(output),
    )
    result = json.loads(output.read_text(encoding="utf-8"))
    assert set(result["per_case_us"]) == {"load", "prompt", "score"}
    assert all(value > 0 for value in result["per_case_us"].values())
    assert result["total_per_case_us"] == round(sum(result["per_case_us"].values()), 2)
    # beside bare Inspect's per-case wall time from the committed MCQ results
    share = result["total_per_case_us"] / result["bare_inspect_per_case_us"]
    assert abs(result["share_of_bare_case"] - share) < 1e-3
