"""The README's performance tables are generated from perf/results and cannot drift."""

from __future__ import annotations

import gc
import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def report_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("perf_report", ROOT / "perf" / "report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_tables_match_the_committed_results() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "perf" / "report.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for name in (
        "mcq",
        "mcq_instructions",
        "mcq_ablation",
        "judge",
        "judge_instructions",
        "judge_ablation",
        "log_bytes",
        "load",
        "cli",
        "parsers",
        "repro_system_prompt",
        "repro_sample_metadata",
    ):
        block = readme.split(f"<!-- perf:{name} -->\n")[1].split(f"<!-- /perf:{name} -->")[0]
        assert block.startswith("| ") and "*Measured " in block, name  # a filled table


def test_a_table_is_rendered_from_its_results_file_and_stays_put(tmp_path: Path) -> None:
    report = report_module()
    (tmp_path / "cli.json").write_text(
        json.dumps(
            {
                "machine": "test-machine",
                "date": "2026-01-02",
                "cases": 10,
                "log_mib": 0.1,
                "target_seconds": 5.0,
                "commands": {
                    "export": {"seconds": 7.25, "peak_rss_mib": 100.0},
                    "score": {"seconds": 1.0, "peak_rss_mib": 50.0},
                },
            }
        )
    )
    readme = "intro\n<!-- perf:cli -->\nold table\n<!-- /perf:cli -->\noutro\n"
    fresh = report.render(readme, tmp_path)
    assert "old table" not in fresh and fresh.startswith("intro\n") and fresh.endswith("outro\n")
    assert "| `medreason export` | 7.2 s | 100 MiB | **no** |" in fresh
    assert "| `medreason score` | 1.0 s | 50 MiB | yes |" in fresh
    assert "*Measured 2026-01-02 on test-machine.*" in fresh
    assert report.render(fresh, tmp_path) == fresh  # idempotent
    empty = "<!-- perf:cli -->\n<!-- /perf:cli -->\n"
    assert "`medreason export`" in report.render(empty, tmp_path)


def test_ablation_tables_say_what_each_part_saves(tmp_path: Path) -> None:
    report = report_module()
    counts = {
        "plugin": 30_000_000_000,
        "no_system_prompt": 29_400_000_000,
        "lean_sample": 29_700_000_000,
        "lean_score": 29_900_000_000,
        "accuracy_only": 29_950_000_000,
        "bare": 27_000_000_000,
    }
    (tmp_path / "mcq_ablation.json").write_text(
        json.dumps(
            {
                "machine": "m",
                "date": "2026-01-02",
                "cases": 300,
                "instructions": counts,
                "saved_per_case": {
                    v: (counts["plugin"] - counts[v]) // 300
                    for v in counts
                    if v not in {"plugin", "bare"}
                },
                "plugin_over_bare_per_case": 10_000_000,
            }
        )
    )
    judging = {
        "plugin": 150e6,
        "lean_score": 140e6,
        "mean_only": 148e6,
        "lean_score_mean_only": 139e6,
        "bare": 130e6,
    }
    (tmp_path / "judge_ablation.json").write_text(
        json.dumps(
            {
                "machine": "m",
                "date": "2026-01-02",
                "cases": [10, 100],
                "judging_per_case": judging,
                "judging_vs_bare": {v: round(judging[v] / judging["bare"], 3) for v in judging},
            }
        )
    )
    readme = (
        "<!-- perf:mcq_ablation -->\n<!-- /perf:mcq_ablation -->\n"
        "<!-- perf:judge_ablation -->\n<!-- /perf:judge_ablation -->\n"
    )
    fresh = report.render(readme, tmp_path)
    # 0.6 G over 300 cases is 2 M a case, a fifth of the plugin's 10 M over bare
    assert "| the system prompt (sent as `system_message`) | 29.40 G | 2.00 M | 20% |" in fresh
    assert "| (bare Inspect) | 27.00 G | 10.00 M | 100% |" in fresh
    assert "| both | 139.0 M | 1.069× |" in fresh
    assert "| nothing (as shipped) | 150.0 M | 1.154× |" in fresh
    assert "(one case, between runs of 10 and 100 cases)" in fresh


def test_judge_counts_report_one_case_between_the_two_sizes(tmp_path: Path) -> None:
    report = report_module()

    def size(no_score: float, bare: float, plugin: float) -> dict[str, object]:
        return {
            "instructions": {"no_score": no_score, "bare": bare, "plugin": plugin},
            "scoring_instructions_per_case": {"bare": 0, "plugin": 0},
            "plugin_vs_bare_scoring": 0.0,
            "plugin_vs_bare_whole_run": 0.0,
        }

    (tmp_path / "judge_instructions.json").write_text(
        json.dumps(
            {
                "machine": "m",
                "date": "2026-01-02",
                "cases": {"10": size(17e9, 19e9, 19.5e9), "100": size(23e9, 34e9, 35.5e9)},
                "between_sizes": {
                    "cases": [10, 100],
                    "scoring_instructions_per_case": {"bare": 100e6, "plugin": 110e6},
                    "plugin_vs_bare_scoring": 1.1,
                },
            }
        )
    )
    readme = "<!-- perf:judge_instructions -->\n<!-- /perf:judge_instructions -->\n"
    fresh = report.render(readme, tmp_path)
    assert "| 100 cases, whole run | 23.00 G | 34.00 G | 35.50 G |" in fresh
    assert (
        "| scoring one case, the difference between 10 and 100 cases (without what a run "
        "pays once) | — | 100.0 M | 110.0 M | **1.100×** |"
    ) in fresh


def test_one_case_of_judging_is_the_slope_between_two_sizes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "perf"))
    bench_judge = importlib.import_module("bench_judge")
    small = {"no_score": 17_000, "bare": 19_000, "plugin": 20_000}
    large = {"no_score": 23_000, "bare": 34_000, "plugin": 35_900}
    # bare: run minus unscored 2,000 and 11,000 at 10 and 100 cases, so 9,000 over the 90 between
    assert bench_judge.judging_per_case({10: small, 100: large}, "bare") == 100
    assert bench_judge.judging_per_case({10: small, 100: large}, "plugin") == 110
    assert bench_judge.judging_per_case({100: large}, "bare") == 110  # one size: per case


def test_collections_are_timed_by_generation_and_the_hook_is_removed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "perf"))
    collections_time = importlib.import_module("collections_time")
    hooks_before = list(gc.callbacks)
    with collections_time.collections_timed() as times:
        gc.collect(0)
        gc.collect(2)
        gc.collect(2)
    assert gc.callbacks == hooks_before
    assert times.counts[0] >= 1 and times.counts[2] >= 2  # allocations may add collections
    assert times.seconds[2] > 0 and times.total_seconds >= times.seconds[2]
    recorded = list(times.counts)
    gc.collect(2)  # outside the block: not recorded
    assert times.counts == recorded
    result = times.as_result()
    assert result["gc_full_collections"] == times.counts[2]
    assert result["gc_seconds"] == round(times.total_seconds, 3)


def test_the_mcq_table_shows_time_in_collections_when_measured(tmp_path: Path) -> None:
    report = report_module()
    variant = {
        "seconds": 10.0,
        "cpu_seconds": 10.0,
        "peak_rss_mib": 300.0,
        "log_bytes_per_sample": 2000.0,
    }
    result: dict[str, Any] = {
        "machine": "m",
        "date": "2026-01-02",
        "cases": 20,
        "repeats": 1,
        "bare": {**variant, "gc_seconds": 2.0},
        "multiple_choice": {**variant, "gc_seconds": 2.5},
        "plugin": {**variant, "gc_seconds": 3.0},
    }
    for name in ("time", "cpu", "memory", "log", "gc"):
        for baseline in ("bare", "multiple_choice"):
            result[f"{name}_ratio_vs_{baseline}"] = 1.0
    result["gc_ratio_vs_bare"], result["gc_ratio_vs_multiple_choice"] = 1.5, 1.2
    (tmp_path / "mcq.json").write_text(json.dumps(result))
    fresh = report.render("<!-- perf:mcq -->\n<!-- /perf:mcq -->\n", tmp_path)
    assert "| in garbage collection | 2.0 s | 2.5 s | 3.0 s | 1.500× | 1.200× |" in fresh
    del result["plugin"]["gc_seconds"]  # an older results file: no such row
    (tmp_path / "mcq.json").write_text(json.dumps(result))
    assert "garbage" not in report.render("<!-- perf:mcq -->\n<!-- /perf:mcq -->\n", tmp_path)


def test_the_mcq_table_compares_with_the_load_time_prompt_when_measured(
    tmp_path: Path,
) -> None:
    report = report_module()
    result: dict[str, Any] = {"machine": "m", "date": "2026-01-02", "cases": 20, "repeats": 3}
    for name, seconds in (
        ("bare", 10.0),
        ("multiple_choice", 10.5),
        ("load_time_prompt", 12.0),
        ("plugin", 11.4),
    ):
        result[name] = {
            "seconds": seconds,
            "cpu_seconds": seconds,
            "peak_rss_mib": 300.0,
            "log_bytes_per_sample": 2000.0,
        }
    for name, key in (
        ("time", "seconds"),
        ("cpu", "cpu_seconds"),
        ("memory", "peak_rss_mib"),
        ("log", "log_bytes_per_sample"),
    ):
        for baseline in ("bare", "multiple_choice", "load_time_prompt"):
            result[f"{name}_ratio_vs_{baseline}"] = round(
                result["plugin"][key] / result[baseline][key], 3
            )
    (tmp_path / "mcq.json").write_text(json.dumps(result))
    fresh = report.render("<!-- perf:mcq -->\n<!-- /perf:mcq -->\n", tmp_path)
    assert "| prompt at load time | `inspect_medreason/mcq` |" in fresh
    assert "| plugin / prompt at load time |" in fresh
    assert "| wall time | 10.0 s | 10.5 s | 12.0 s | 11.4 s | 1.140× | 1.086× | 0.950× |" in fresh
    assert "|---|---|---|---|---|---|---|---|" in fresh


def test_the_judge_table_reports_time_in_collections(tmp_path: Path) -> None:
    report = report_module()
    row = {
        "plugin": {"seconds": 30.0, "gc_seconds": 6.04},
        "plugin_cache": {"seconds": 31.0},
        "bare": {"seconds": 25.0, "gc_seconds": 4.96},
        "no_score": {"seconds": 7.0, "gc_seconds": 1.0},
        "floor_seconds": 13.0,
        "plugin_vs_bare": 1.2,
        "plugin_vs_floor": 2.3,
        "bare_vs_floor": 1.9,
    }
    result = {
        "machine": "m",
        "date": "2026-01-02",
        "repeats": 3,
        "latency_seconds": 0.2,
        "max_connections": 30,
        "cases": {"300": row},
    }
    (tmp_path / "judge.json").write_text(json.dumps(result))
    fresh = report.render("<!-- perf:judge -->\n<!-- /perf:judge -->\n", tmp_path)
    assert "| 300 cases | 30.0 s | 31.0 s | 25.0 s | 7.0 s | 13.0 s | **1.20×** |" in fresh
    assert "300 cases: plugin 6.0 s, bare 5.0 s, no scoring 1.0 s." in fresh


def test_the_parsers_table_names_the_slowest_reply_and_the_growth(tmp_path: Path) -> None:
    report = report_module()
    result = {
        "machine": "m",
        "date": "2026-01-02",
        "reply_chars": 200_000,
        "replies": 87,
        "parsers": {
            "MCQ label": {
                "worst_seconds": 0.1805,
                "worst_reply": "'答案' repeated",
                "growth_4x_size": 4.2,
                "failures": [],
            },
            "VQA yes/no": {
                "worst_seconds": 0.0079,
                "worst_reply": "mixture 10",
                "growth_4x_size": None,
                "failures": ["x: over 5 s"],
            },
        },
    }
    (tmp_path / "parsers.json").write_text(json.dumps(result))
    fresh = report.render("<!-- perf:parsers -->\n<!-- /perf:parsers -->\n", tmp_path)
    assert "| MCQ label | '答案' repeated | 180 ms | 4.2× | 0 |" in fresh
    assert "| VQA yes/no | mixture 10 | 8 ms | — | **1** |" in fresh
    assert "87 hostile replies of 200,000 characters" in fresh


def test_the_system_prompt_table_shows_what_was_measured(tmp_path: Path) -> None:
    report = report_module()
    variants = ("no_system", "system_config", "system_solver")
    timings = {
        "samples": 1000,
        "repeats": 3,
        "machine": "m",
        "date": "2026-01-02",
        **{
            v: {"seconds": 10.0 + i, "cpu_seconds": 9.0 + i, "log_bytes_per_sample": 2000.0 + i}
            for i, v in enumerate(variants)
        },
        "ratio_vs_no_system": {
            v: {"seconds": 1.1, "cpu_seconds": 1.11, "log_bytes_per_sample": 1.0}
            for v in variants[1:]
        },
    }
    only_timed = report.repro_system_prompt_table({"timings": timings})
    assert (
        "| wall time (1,000 samples, median of 3) | 10.00 s | 11.00 s (1.10×) | 12.00 s (1.10×) |"
        in only_timed
    )
    assert "instructions" not in only_timed and "*Measured 2026-01-02 on m.*" in only_timed
    counted = {
        "samples": 100,
        "small_samples": 10,
        "machine": "m",
        "date": "2026-01-03",
        "per_sample": {
            "no_system": 60_000_000,
            "system_config": 62_000_000,
            "system_solver": 90_000_000,
        },
        "per_sample_vs_no_system": {"system_config": 1.033, "system_solver": 1.5},
    }
    both = report.repro_system_prompt_table({"timings": timings, "instructions": counted})
    assert "| 60.00 M | 62.00 M (1.033×) | 90.00 M (1.500×) |" in both
    assert "*Measured 2026-01-03 on m.*" in both


def test_the_sample_metadata_table_divides_by_its_own_baseline() -> None:
    report = report_module()
    variants = ("no_metadata", "six_keys", "six_numbers")
    counted = {
        "samples": 100,
        "small_samples": 10,
        "machine": "m",
        "date": "2026-01-03",
        "per_sample": dict(zip(variants, (60_000_000, 61_500_000, 60_600_000), strict=True)),
        "per_sample_vs_no_metadata": {"six_keys": 1.025, "six_numbers": 1.01},
    }
    table = report.repro_sample_metadata_table({"instructions": counted})
    assert "| measure | no metadata | the plugin's six keys (short strings) |" in table
    assert "| 60.00 M | 61.50 M (1.025×) | 60.60 M (1.010×) |" in table
    assert "wall time" not in table  # only what was measured
