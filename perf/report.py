"""Regenerate perf/README.md's tables from ``perf/results/*.json``.

Each table sits between ``<!-- perf:NAME -->`` and ``<!-- /perf:NAME -->`` in perf/README.md
and is rendered from ``perf/results/NAME.json`` (with the machine and date of the
measurement). ``--check`` exits 1 when a table differs from what its results file gives, or
a results file has no table, so the page cannot drift from the measurements (a test runs it).

Usage: python perf/report.py [--check]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_medreason.core.files import write_text_atomically

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"
README = ROOT / "perf" / "README.md"


def measured_on(result: dict[str, Any]) -> str:
    return f"*Measured {result['date']} on {result['machine']}.*"


def mcq_table(result: dict[str, Any]) -> str:
    variants = ["bare", "multiple_choice", "load_time_prompt", "plugin"]
    names = [
        "bare Inspect",
        "`multiple_choice()`",
        "prompt at load time",
        "`inspect_medreason/mcq`",
    ]
    if "load_time_prompt" not in result:  # recorded before the variant existed
        del variants[2], names[2]
    baselines = [
        ("bare", "bare"),
        ("multiple_choice", "`multiple_choice()`"),
        ("load_time_prompt", "prompt at load time"),
    ]
    baselines = [(key, name) for key, name in baselines if key in variants]
    rows = [
        ("wall time", "seconds", "{:.1f} s", "time"),
        ("CPU time", "cpu_seconds", "{:.1f} s", "cpu"),
        ("peak RSS", "peak_rss_mib", "{:.0f} MiB", "memory"),
        ("log bytes per sample", "log_bytes_per_sample", "{:,.0f}", "log"),
        ("in garbage collection", "gc_seconds", "{:.1f} s", "gc"),
    ]
    rows = [row for row in rows if row[1] in result["plugin"]]
    lines = [
        f"| median of {result['repeats']}, {result['cases']:,} cases | "
        + " | ".join(names)
        + " | "
        + " | ".join(f"plugin / {name}" for _, name in baselines)
        + " |",
        "|---" * (1 + len(variants) + len(baselines)) + "|",
    ]
    for label, key, form, ratio in rows:
        values = " | ".join(form.format(result[v][key]) for v in variants)
        ratios = " | ".join(f"{result[f'{ratio}_ratio_vs_{b}']:.3f}×" for b, _ in baselines)
        lines.append(f"| {label} | {values} | {ratios} |")
    return "\n".join([*lines, "", measured_on(result)])


def mcq_instructions_table(result: dict[str, Any]) -> str:
    counts, small, per_case = (
        result["instructions"],
        result["instructions_small"],
        result["per_case"],
    )

    def row(name: str, values: dict[str, int], scale: float, unit: str, note: str = "") -> str:
        cells = [f"{values[v] / scale:.2f} {unit}" for v in ("bare", "multiple_choice", name)]
        return (
            f"| {note} | {' | '.join(cells)} | **{values[name] / values['bare']:.3f}×** | "
            f"**{values[name] / values['multiple_choice']:.3f}×** |"
        )

    return "\n".join(
        [
            "| instructions executed (valgrind callgrind, one run each) | bare Inspect | "
            "`multiple_choice()` | `inspect_medreason/mcq` | plugin / bare | "
            "plugin / `multiple_choice()` |",
            "|---|---|---|---|---|---|",
            row(
                "plugin",
                counts,
                1e9,
                "G",
                f"whole run, {result['cases']:,} cases, first run on the "
                "folder (every image decoded in full)",
            ),
            row("plugin_again", counts, 1e9, "G", "whole run, the same folder again"),
            row(
                "plugin_again",
                small,
                1e9,
                "G",
                f"whole run, {result['small_cases']} cases (start-up)",
            ),
            row(
                "plugin_again",
                per_case,
                1e6,
                "M",
                "one case (difference over the difference in cases), later runs",
            ),
            row("plugin", per_case, 1e6, "M", "one case, first run on the folder"),
            *(
                [
                    row(
                        "load_time_prompt",
                        per_case,
                        1e6,
                        "M",
                        "one case, the task with its prompt "
                        "rendered at load time instead of by the solver, later runs",
                    )
                ]
                if "load_time_prompt" in per_case
                else []
            ),
            "",
            measured_on(result),
        ]
    )


def load_table(result: dict[str, Any]) -> str:
    lines = [
        f"| cases ({result['images']} image files) | load | peak RSS growth | one read of "
        "every sample |",
        "|---|---|---|---|",
    ]
    for size, row in result["sizes"].items():
        lines.append(
            f"| {int(size):,} | {row['seconds']:.2f} s | +{row['peak_growth_mib']:.0f} MiB | "
            f"{row['read_all_seconds']:.2f} s |"
        )
    return "\n".join([*lines, "", measured_on(result)])


def hub_load_table(result: dict[str, Any]) -> str:
    lines = [
        f"| {result['rows']:,} rows ({result['cmyk']} CMYK), {result['split_mib']} MiB of "
        "parquet | time | peak RSS |",
        "|---|---|---|",
    ]
    for variant, name in (
        ("bare", "bare `datasets` load, every image decoded"),
        ("plugin", "`path_vqa(data=...)`, cold cache"),
        ("plugin_warm", "`path_vqa(data=...)`, images already prepared"),
    ):
        row = result[variant]
        lines.append(f"| {name} | {row['seconds']:.1f} s | {row['peak_rss_mib']:.0f} MiB |")
    lines.append(
        f"| **plugin / bare** | **{result['time_ratio_vs_bare']}×** | "
        f"**{result['memory_ratio_vs_bare']}×** |"
    )
    return "\n".join([*lines, "", measured_on(result)])


def cli_table(result: dict[str, Any]) -> str:
    lines = [
        f"| command ({result['cases']:,}-case log, {result['log_mib']} MiB) | wall | peak RSS "
        f"| within {result['target_seconds']:g} s |",
        "|---|---|---|---|",
    ]
    for name, row in result["commands"].items():
        met = "yes" if row["seconds"] <= result["target_seconds"] else "**no**"
        lines.append(
            f"| `medreason {name}` | {row['seconds']:.1f} s | {row['peak_rss_mib']:.0f} MiB | {met} |"
        )
    return "\n".join([*lines, "", measured_on(result)])


def judge_table(result: dict[str, Any]) -> str:
    lines = [
        f"| median of {result['repeats']}; judge latency {result['latency_seconds'] * 1000:.0f} "
        f"ms, `--max-connections {result['max_connections']}` | plugin | plugin, "
        "`judge_cache=true` | bare three-call scorer | no scoring | latency floor | plugin / "
        "bare | plugin / floor | bare / floor |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for size, row in result["cases"].items():
        seconds = " | ".join(
            f"{row[v]['seconds']:.1f} s" for v in ("plugin", "plugin_cache", "bare", "no_score")
        )
        lines.append(
            f"| {int(size):,} cases | {seconds} | {row['floor_seconds']:.1f} s | "
            f"**{row['plugin_vs_bare']:.2f}×** | {row['plugin_vs_floor']:.2f}× | "
            f"{row['bare_vs_floor']:.2f}× |"
        )
    lines += per_size_sentence(
        result,
        "metrics_pass_seconds",
        "One metrics pass over all of a run's scores (Inspect's "
        "`recompute_metrics`, the cost of each progress-display pass at the run's end): ",
        lambda row: (
            f"plugin {row['plugin']['metrics_pass_seconds']:.3f} s, bare "
            f"{row['bare']['metrics_pass_seconds']:.4f} s"
        ),
    )
    lines += per_size_sentence(
        result,
        "gc_seconds",
        "Time in the garbage collector's collections (`perf/harness.py`): ",
        lambda row: (
            f"plugin {row['plugin']['gc_seconds']:.1f} s, bare "
            f"{row['bare']['gc_seconds']:.1f} s, no scoring {row['no_score']['gc_seconds']:.1f} s"
        ),
    )
    return "\n".join([*lines, "", measured_on(result)])


def per_size_sentence(
    result: dict[str, Any], key: str, intro: str, figures: Callable[[dict[str, Any]], str]
) -> list[str]:
    """A paragraph after the judge table giving one measure for each run size, when the
    results file holds it (older files do not): ``intro`` then "300 cases: ...; 1,000 ..."."""
    parts = [
        f"{int(size):,} cases: {figures(row)}"
        for size, row in result["cases"].items()
        if key in row["plugin"]
    ]
    return ["", intro + "; ".join(parts) + "."] if parts else []


def judge_instructions_table(result: dict[str, Any]) -> str:
    lines = [
        "| instructions executed (valgrind callgrind, one run each) | no scoring | bare "
        "three-call scorer | plugin | plugin / bare |",
        "|---|---|---|---|---|",
    ]
    for size, row in result["cases"].items():
        counts, per_case = row["instructions"], row["scoring_instructions_per_case"]
        lines.append(
            f"| {int(size):,} cases, whole run | {counts['no_score'] / 1e9:.2f} G | "
            f"{counts['bare'] / 1e9:.2f} G | {counts['plugin'] / 1e9:.2f} G | "
            f"{row['plugin_vs_bare_whole_run']:.3f}× |"
        )
        lines.append(
            f"| {int(size):,} cases, scoring one case (run minus no scoring, per case) | — | "
            f"{per_case['bare'] / 1e6:.1f} M | {per_case['plugin'] / 1e6:.1f} M | "
            f"**{row['plugin_vs_bare_scoring']:.3f}×** |"
        )
    if "between_sizes" in result:
        between = result["between_sizes"]
        small, large = between["cases"]
        per_case = between["scoring_instructions_per_case"]
        lines.append(
            f"| scoring one case, the difference between {small:,} and {large:,} cases (without "
            f"what a run pays once) | — | {per_case['bare'] / 1e6:.1f} M | "
            f"{per_case['plugin'] / 1e6:.1f} M | **{between['plugin_vs_bare_scoring']:.3f}×** |"
        )
    return "\n".join([*lines, "", measured_on(result)])


def log_bytes_table(result: dict[str, Any]) -> str:
    plugin, bare = result["plugin"], result["bare"]
    lines = [
        f"| bytes per sample ({result['cases']} open cases, `--no-log-images`) | plugin | bare "
        "three-call scorer |",
        "|---|---|---|",
        f"| whole log / samples | {plugin['log_bytes_per_sample']:,} | "
        f"{bare['log_bytes_per_sample']:,} |",
    ]
    parts = sorted(
        set(plugin["typical_sample_parts"]) | set(bare["typical_sample_parts"]),
        key=lambda part: -plugin["typical_sample_parts"].get(part, 0),
    )
    for part in parts:
        mine = plugin["typical_sample_parts"].get(part, 0)
        theirs = bare["typical_sample_parts"].get(part, 0)
        if max(mine, theirs) >= 40:  # the parts that matter; the rest is noise of the method
            label = (
                "a typical sample, compressed on its own"
                if part == "whole_sample"
                else f"… of which `{part}` (what the sample would lose without it)"
            )
            lines.append(f"| {label} | {mine:,} | {theirs:,} |")
    return "\n".join([*lines, "", measured_on(result)])


def agreement_table(result: dict[str, Any]) -> str:
    lines = [
        f"| `medreason agreement` on | wall | exit | within {result['target_seconds']:g} s |",
        "|---|---|---|---|",
    ]
    for name, row in (
        (f"a folder of {result['logs']:,} judged logs", result["many_logs"]),
        (
            f"one log and a {result['reference_rows']:,}-row reference "
            f"({result['reference_matching']} rows match)",
            result["large_reference"],
        ),
    ):
        met = "yes" if row["seconds"] <= result["target_seconds"] else "**no**"
        what = "refused (too many raters)" if row["exit"] == 1 else str(row["exit"])
        lines.append(f"| {name} | {row['seconds']:.1f} s | {what} | {met} |")
    return "\n".join([*lines, "", measured_on(result)])


def shift_table(result: dict[str, Any]) -> str:
    images = result["images"]
    names = list(images)
    models = list(next(iter(images.values())))
    lines = [
        "| model (severity "
        + str(result["severity"])
        + ") | "
        + " | ".join(f"{name}: cold / cached" for name in names)
        + " |",
        "|---|" + "---|" * len(names),
    ]
    for model in models:
        cells = [
            f"{images[name][model]['cold_ms']:.0f} ms / {images[name][model]['cached_ms']:.2f} ms"
            for name in names
        ]
        lines.append(f"| `{model}` | " + " | ".join(cells) + " |")
    return "\n".join([*lines, "", measured_on(result)])


TABLES: dict[str, Callable[[dict[str, Any]], str]] = {
    "mcq": mcq_table,
    "mcq_instructions": mcq_instructions_table,
    "load": load_table,
    "hub_load": hub_load_table,
    "cli": cli_table,
    "agreement": agreement_table,
    "judge": judge_table,
    "judge_instructions": judge_instructions_table,
    "log_bytes": log_bytes_table,
    "shift": shift_table,
}


def replace_block(readme: str, name: str, text: str) -> str:
    """The README with the block between the ``perf:NAME`` markers replaced by ``text``."""
    block = re.compile(rf"(<!-- perf:{name} -->\n)(?:.*?\n)?(<!-- /perf:{name} -->)", re.S)
    return block.sub(lambda match: f"{match.group(1)}{text}\n{match.group(2)}", readme)


def render(readme: str, results: Path = RESULTS) -> str:
    for name, table in TABLES.items():
        path = results / f"{name}.json"
        if path.is_file():
            readme = replace_block(
                readme, name, table(json.loads(path.read_text(encoding="utf-8")))
            )
    return readme


def problems(readme: str, results: Path = RESULTS) -> list[str]:
    """What keeps ``readme`` from showing every measurement as its results file gives it: a
    results file no table renders, a table without its place in the page, a stale table."""
    found = [
        f"perf/results/{path.name} has no table in report.py"
        for path in sorted(results.glob("*.json"))
        if path.stem not in TABLES
    ]
    found += [
        f"perf/README.md has no <!-- perf:{name} --> block for perf/results/{name}.json"
        for name in TABLES
        if (results / f"{name}.json").is_file() and f"<!-- perf:{name} -->\n" not in readme
    ]
    if render(readme, results) != readme:
        found.append("perf/README.md's tables differ from perf/results: run perf/report.py")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is stale")
    args = parser.parse_args()
    readme = README.read_text(encoding="utf-8")
    if args.check:
        found = problems(readme)
        for problem in found:
            print(problem)
        return 1 if found else 0
    write_text_atomically(README, render(readme), force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
