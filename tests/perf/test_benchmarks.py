"""The six benchmarks run offline at tiny sizes and write what their tables read; the
variants they compare are fair comparisons."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from inspect_ai.log import EvalLog


def results(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text(encoding="utf-8")))


def test_the_mcq_bench_times_every_variant(tmp_path: Path, perf_script: Callable[..., str]) -> None:
    output = tmp_path / "mcq.json"
    perf_script(
        "bench_mcq.py", "--cases", "4", "--side", "16", "--repeats", "1", "--output", str(output)
    )
    result = results(output)
    assert result["cases"] == 4 and result["repeats"] == 1
    for variant in ("bare", "multiple_choice", "load_time_prompt", "plugin"):
        assert result[variant]["seconds"] > 0 and result[variant]["log_bytes_per_sample"] > 0
        assert result[variant]["gc_full_collections"] >= 0
    assert result["time_ratio_vs_bare"] == round(
        result["plugin"]["seconds"] / result["bare"]["seconds"], 3
    )


def test_the_judge_bench_times_every_variant_against_the_floor(
    tmp_path: Path, perf_script: Callable[..., str]
) -> None:
    output = tmp_path / "judge.json"
    perf_script(
        "bench_judge.py",
        *("--cases", "3", "--repeats", "1", "--latency", "0.05", "--side", "16"),
        *("--output", str(output)),
    )
    result = results(output)
    [row] = result["cases"].values()  # the run checked every judge call scored 3
    assert set(row) >= {"plugin", "plugin_cache", "bare", "no_score", "floor_seconds"}
    # the floor: the unscored run plus ceil(3 * 3 / 30) rounds of 0.05 s
    assert abs(row["floor_seconds"] - (row["no_score"]["seconds"] + 0.05)) < 1e-3
    assert row["plugin"]["metrics_pass_seconds"] > 0
    assert row["plugin_vs_bare"] == round(row["plugin"]["seconds"] / row["bare"]["seconds"], 3)


def test_the_log_bytes_bench_breaks_a_sample_down(
    tmp_path: Path, perf_script: Callable[..., str]
) -> None:
    output = tmp_path / "log_bytes.json"
    perf_script("bench_log_bytes.py", "--cases", "3", "--side", "16", "--output", str(output))
    result = results(output)
    for variant in ("plugin", "bare"):
        parts = result[variant]["typical_sample_parts"]
        assert parts["whole_sample"] > 0 and parts["events:model"] > 0
    assert "score.metadata.judges" in result["plugin"]["typical_sample_parts"]
    assert "score.metadata.judges" not in result["bare"]["typical_sample_parts"]


def test_the_load_bench_reports_each_size(tmp_path: Path, perf_script: Callable[..., str]) -> None:
    output = tmp_path / "load.json"
    perf_script("bench_load.py", "--sizes", "10", "20", "--images", "3", "--output", str(output))
    result = results(output)
    assert set(result["sizes"]) == {"10", "20"}
    assert all(row["samples"] == int(size) for size, row in result["sizes"].items())
    assert result["linearity_ratio"] > 0


def test_the_hub_load_bench_compares_the_plugin_with_bare_datasets(
    tmp_path: Path, perf_script: Callable[..., str]
) -> None:
    output = tmp_path / "hub_load.json"
    perf_script(
        "bench_hub_load.py", "--rows", "9", "--cmyk", "2", "--side", "32", "--output", str(output)
    )
    result = results(output)
    for variant in ("bare", "plugin", "plugin_warm"):
        assert result[variant]["rows"] == 9 and result[variant]["peak_rss_mib"] > 0
    assert result["time_ratio_vs_bare"] == round(
        result["plugin"]["seconds"] / result["bare"]["seconds"], 3
    )


def test_the_cli_bench_times_every_command(tmp_path: Path, perf_script: Callable[..., str]) -> None:
    output, work = tmp_path / "cli.json", tmp_path / "work"
    perf_script("bench_cli.py", "--cases", "6", "--keep", str(work), "--output", str(output))
    result = results(output)
    assert list(result["commands"]) == [
        "export",
        "judge-scores",
        "score",
        "leaderboard",
        "compare",
        "agreement",
    ]
    assert all(row["seconds"] > 0 for row in result["commands"].values())
    assert (work / "results.json").is_file() and (work / "metrics.json").is_file()


def scripted_eval(task: Any, log_dir: Path, bench_mcq: ModuleType) -> EvalLog:
    """``task`` run against bench_mcq's scripted mockllm; its log, once it succeeded."""
    from inspect_ai import eval

    [log] = eval(task, model=bench_mcq.scripted_model(), display="none", log_dir=str(log_dir))
    assert log.status == "success"
    return log


def test_the_load_time_prompt_variant_sends_what_the_plugins_solver_sends(
    tmp_path: Path, perf_module: Callable[[str], ModuleType]
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
        log = scripted_eval(task, tmp_path / name, bench_mcq)
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


def test_one_case_of_judging_is_the_slope_between_two_sizes(
    perf_module: Callable[[str], ModuleType],
) -> None:
    bench_judge = perf_module("bench_judge")
    small = {"no_score": 17_000, "bare": 19_000, "plugin": 20_000}
    large = {"no_score": 23_000, "bare": 34_000, "plugin": 35_900}
    # bare: run minus unscored 2,000 and 11,000 at 10 and 100 cases, so 9,000 over the 90 between
    assert bench_judge.judging_per_case({10: small, 100: large}, "bare") == 100
    assert bench_judge.judging_per_case({10: small, 100: large}, "plugin") == 110
    assert bench_judge.judging_per_case({100: large}, "bare") == 110  # one size: per case


def test_the_agreement_bench_times_many_logs_and_a_large_reference(
    tmp_path: Path, perf_script: Callable[..., str]
) -> None:
    output = tmp_path / "agreement.json"
    perf_script(
        "bench_agreement.py", "--logs", "3", "--reference-rows", "40", "--output", str(output)
    )
    result = results(output)
    assert result["logs"] == 3 and result["reference_matching"] > 0
    # three logs are three raters, within the bound: both runs finish
    assert result["many_logs"]["exit"] == 0 and result["large_reference"]["exit"] == 0
    assert result["many_logs"]["seconds"] > 0


def test_the_shift_bench_times_every_model_cold_and_cached(
    tmp_path: Path, perf_script: Callable[..., str]
) -> None:
    output = tmp_path / "shift.json"
    perf_script("bench_shift.py", "--sizes", "32", "--repeats", "1", "--output", str(output))
    result = results(output)
    from inspect_medreason.core.shift import MODEL_PARAMETERS
    from inspect_medreason.core.shift.catalog import COLOUR_ONLY_MODELS

    assert set(result["images"]) == {"grey 32x32", "colour 32x32"}
    assert set(result["images"]["colour 32x32"]) == set(MODEL_PARAMETERS)
    assert set(result["images"]["grey 32x32"]) == set(MODEL_PARAMETERS) - COLOUR_ONLY_MODELS
    for timings in result["images"].values():
        assert all(t["cold_ms"] > 0 and t["cached_ms"] > 0 for t in timings.values())
