"""perf/README.md's tables are generated from perf/results and cannot drift."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PERF = ROOT / "perf"
KEPT_TABLES = (
    "mcq",
    "mcq_instructions",
    "judge",
    "judge_instructions",
    "log_bytes",
    "load",
    "shift",
    "hub_load",
    "cli",
    "agreement",
)


@pytest.fixture
def report(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``perf/report.py`` imported (the perf scripts import each other by bare name)."""
    monkeypatch.syspath_prepend(str(PERF))
    return importlib.import_module("report")


def test_the_perf_readme_tables_match_the_committed_results() -> None:
    run = subprocess.run(
        [sys.executable, str(PERF / "report.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    readme = (PERF / "README.md").read_text(encoding="utf-8")
    for name in KEPT_TABLES:
        block = readme.split(f"<!-- perf:{name} -->\n")[1].split(f"<!-- /perf:{name} -->")[0]
        assert block.startswith("| ") and "*Measured " in block, name  # a filled table
    # every results file is a kept benchmark's, and has its table
    assert {path.stem for path in (PERF / "results").glob("*.json")} == set(KEPT_TABLES)


def test_the_check_names_a_results_file_without_a_table_and_a_missing_block(
    report: Any, tmp_path: Path
) -> None:
    (tmp_path / "cli.json").write_text(
        json.dumps(
            {
                "machine": "m",
                "date": "2026-01-02",
                "cases": 10,
                "log_mib": 0.1,
                "target_seconds": 5.0,
                "commands": {"export": {"seconds": 1.0, "peak_rss_mib": 100.0}},
            }
        )
    )
    (tmp_path / "ablation.json").write_text("{}")
    found = report.problems("no blocks here\n", tmp_path)
    assert "perf/results/ablation.json has no table in report.py" in found
    assert "perf/README.md has no <!-- perf:cli --> block for perf/results/cli.json" in found
    (tmp_path / "ablation.json").unlink()
    stale = "<!-- perf:cli -->\nold\n<!-- /perf:cli -->\n"
    assert report.problems(stale, tmp_path) == [
        "perf/README.md's tables differ from perf/results: run perf/report.py"
    ]
    assert report.problems(report.render(stale, tmp_path), tmp_path) == []


def test_a_table_is_rendered_from_its_results_file_and_stays_put(
    report: Any, tmp_path: Path
) -> None:
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


def test_judge_counts_report_one_case_between_the_two_sizes(report: Any, tmp_path: Path) -> None:
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


def test_the_mcq_table_shows_time_in_collections_when_measured(report: Any, tmp_path: Path) -> None:
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
    report: Any, tmp_path: Path
) -> None:
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


def test_the_judge_table_reports_time_in_collections(report: Any, tmp_path: Path) -> None:
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
