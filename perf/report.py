"""Regenerate the README's performance tables from ``perf/results/*.json``.

Each table sits between ``<!-- perf:NAME -->`` and ``<!-- /perf:NAME -->`` in README.md and
is rendered from ``perf/results/NAME.json`` (with the machine and date of the measurement).
``--check`` exits 1 when a table differs from what its results file gives, so the README
cannot drift from the measurements (a test runs it).

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

from inspect_medreason.files import write_text_atomically

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "perf" / "results"


def measured_on(result: dict[str, Any]) -> str:
    return f"*Measured {result['date']} on {result['machine']}.*"


def mcq_table(result: dict[str, Any]) -> str:
    variants = ["bare", "multiple_choice", "load_time_prompt", "plugin"]
    names = ["bare Inspect", "`multiple_choice()`", "prompt at load time",
             "`inspect_medreason/mcq`"]  # fmt: skip
    if "load_time_prompt" not in result:  # recorded before the variant existed
        del variants[2], names[2]
    baselines = [("bare", "bare"), ("multiple_choice", "`multiple_choice()`"),
                 ("load_time_prompt", "prompt at load time")]  # fmt: skip
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
        f"| median of {result['repeats']}, {result['cases']:,} cases | " + " | ".join(names)
        + " | " + " | ".join(f"plugin / {name}" for _, name in baselines) + " |",
        "|---" * (1 + len(variants) + len(baselines)) + "|",
    ]
    for label, key, form, ratio in rows:
        values = " | ".join(form.format(result[v][key]) for v in variants)
        ratios = " | ".join(f"{result[f'{ratio}_ratio_vs_{b}']:.3f}×" for b, _ in baselines)
        lines.append(f"| {label} | {values} | {ratios} |")
    return "\n".join([*lines, "", measured_on(result)])


def mcq_instructions_table(result: dict[str, Any]) -> str:
    counts, small, per_case = result["instructions"], result["instructions_small"], result["per_case"]

    def row(name: str, values: dict[str, int], scale: float, unit: str, note: str = "") -> str:
        cells = [f"{values[v] / scale:.2f} {unit}" for v in ("bare", "multiple_choice", name)]
        return (f"| {note} | {' | '.join(cells)} | **{values[name] / values['bare']:.3f}×** | "
                f"**{values[name] / values['multiple_choice']:.3f}×** |")

    return "\n".join([
        "| instructions executed (valgrind callgrind, one run each) | bare Inspect | "
        "`multiple_choice()` | `inspect_medreason/mcq` | plugin / bare | "
        "plugin / `multiple_choice()` |",
        "|---|---|---|---|---|---|",
        row("plugin", counts, 1e9, "G", f"whole run, {result['cases']:,} cases, first run on the "
            "folder (every image decoded in full)"),
        row("plugin_again", counts, 1e9, "G", "whole run, the same folder again"),
        row("plugin_again", small, 1e9, "G", f"whole run, {result['small_cases']} cases "
            "(start-up)"),
        row("plugin_again", per_case, 1e6, "M", "one case (difference over the difference in "
            "cases), later runs"),
        row("plugin", per_case, 1e6, "M", "one case, first run on the folder"),
        *([row("load_time_prompt", per_case, 1e6, "M", "one case, the task with its prompt "
               "rendered at load time instead of by the solver, later runs")]
          if "load_time_prompt" in per_case else []),
        "",
        measured_on(result),
    ])  # fmt: skip


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
        result, "metrics_pass_seconds", "One metrics pass over all of a run's scores (Inspect's "
        "`recompute_metrics`, the cost of each progress-display pass at the run's end): ",
        lambda row: f"plugin {row['plugin']['metrics_pass_seconds']:.3f} s, bare "
                    f"{row['bare']['metrics_pass_seconds']:.4f} s",
    )  # fmt: skip
    lines += per_size_sentence(
        result, "gc_seconds", "Time in the garbage collector's collections "
        "(`perf/collections_time.py`): ",
        lambda row: f"plugin {row['plugin']['gc_seconds']:.1f} s, bare "
                    f"{row['bare']['gc_seconds']:.1f} s, no scoring {row['no_score']['gc_seconds']:.1f} s",
    )  # fmt: skip
    return "\n".join([*lines, "", measured_on(result)])


def per_size_sentence(
    result: dict[str, Any], key: str, intro: str, figures: Callable[[dict[str, Any]], str]
) -> list[str]:
    """A paragraph after the judge table giving one measure for each run size, when the
    results file holds it (older files do not): ``intro`` then "300 cases: ...; 1,000 ..."."""
    parts = [f"{int(size):,} cases: {figures(row)}" for size, row in result["cases"].items()
             if key in row["plugin"]]  # fmt: skip
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


MCQ_PARTS = {
    "no_system_prompt": "the system prompt (sent as `system_message`)",
    "lean_sample": "sample metadata beyond `task_type`, `question`, `option_labels` and the "
    "breakdown fields",
    "lean_score": "score metadata beyond `parsed` and `strict_correct`",
    "accuracy_only": "metrics beyond `accuracy()` (stderr, Wilson interval, strict and parsed "
    "accuracy, breakdowns)",
    "all_out": "all four at once",
}
JUDGE_PARTS = {
    "lean_score": "the score's metadata and explanation (the judges' records, cost, models)",
    "mean_only": "metrics beyond `mean()` (stderr, bootstrap intervals, breakdowns)",
    "lean_score_mean_only": "both",
}


def mcq_ablation_table(result: dict[str, Any]) -> str:
    counts, cases = result["instructions"], result["cases"]
    over_bare = result["plugin_over_bare_per_case"]
    lines = [
        f"| the MCQ task without … ({cases} cases, later runs) | whole run | saved per case "
        "| share of the plugin's extra over bare |",
        "|---|---|---|---|",
        f"| nothing (as shipped) | {counts['plugin'] / 1e9:.2f} G | — | — |",
    ]
    for variant, part in MCQ_PARTS.items():
        if variant not in result["saved_per_case"]:
            continue  # a results file from before the variant was counted
        saved = result["saved_per_case"][variant]
        lines.append(f"| {part} | {counts[variant] / 1e9:.2f} G | {saved / 1e6:.2f} M | "
                     f"{saved / over_bare:.0%} |")  # fmt: skip
    lines.append(f"| (bare Inspect) | {counts['bare'] / 1e9:.2f} G | {over_bare / 1e6:.2f} M "
                 "| 100% |")  # fmt: skip
    return "\n".join([*lines, "", measured_on(result)])


def judge_ablation_table(result: dict[str, Any]) -> str:
    judging, ratio = result["judging_per_case"], result["judging_vs_bare"]
    sizes = result["cases"] if isinstance(result["cases"], list) else [result["cases"]]
    counted = (f"between runs of {sizes[0]:,} and {sizes[-1]:,} cases" if len(sizes) > 1
               else f"{sizes[0]:,} cases")  # fmt: skip
    lines = [
        f"| the judged scorer without … (one case, {counted}) | judging one case | / bare "
        "three-call scorer |",
        "|---|---|---|",
        f"| nothing (as shipped) | {judging['plugin'] / 1e6:.1f} M | {ratio['plugin']:.3f}× |",
    ]
    for variant, part in JUDGE_PARTS.items():
        lines.append(f"| {part} | {judging[variant] / 1e6:.1f} M | {ratio[variant]:.3f}× |")
    lines.append(f"| (bare three-call scorer) | {judging['bare'] / 1e6:.1f} M | 1.000× |")
    return "\n".join([*lines, "", measured_on(result)])


def parsers_table(result: dict[str, Any]) -> str:
    lines = [
        f"| parser ({result['replies']} hostile replies of {result['reply_chars']:,} characters) "
        "| slowest reply | its time | growth over 4× the size | failures |",
        "|---|---|---|---|---|",
    ]
    for name, row in result["parsers"].items():
        growth = "—" if row["growth_4x_size"] is None else f"{row['growth_4x_size']:.1f}×"
        failures = len(row["failures"])
        reply = row["worst_reply"].replace("`", "\\`").replace("|", "\\|")  # literal in Markdown
        lines.append(
            f"| {name} | {reply} | {row['worst_seconds'] * 1000:.0f} ms | {growth} | "
            f"{'**' + str(failures) + '**' if failures else 0} |"
        )
    return "\n".join([*lines, "", measured_on(result)])


SYSTEM_PROMPT_VARIANTS = {
    "no_system": "no system prompt",
    "system_config": "`system_message=` in the generate config",
    "system_solver": "Inspect's `system_message()` solver",
}
SAMPLE_METADATA_VARIANTS = {
    "no_metadata": "no metadata",
    "six_keys": "the plugin's six keys (short strings)",
    "six_numbers": "the six keys holding integers",
}


def reproduction_table(names: dict[str, str]) -> Callable[[dict[str, Any]], str]:
    """A reproduction's table (``perf/reproduction.py``): one column per variant, named by
    ``names`` (the first is the baseline the others are divided by); a row per measure that
    was run."""
    variants = list(names)
    baseline = variants[0]

    def table(result: dict[str, Any]) -> str:
        lines = [
            "| measure | " + " | ".join(names.values()) + " |",
            "|---" * (len(variants) + 1) + "|",
        ]
        footers = []
        timings = result.get("timings")
        if timings:
            ratios = timings[f"ratio_vs_{baseline}"]
            rows = [("wall time", "seconds", "{:.2f} s"), ("CPU time", "cpu_seconds", "{:.2f} s"),
                    ("log bytes per sample", "log_bytes_per_sample", "{:,.0f}")]  # fmt: skip
            for label, key, form in rows:
                cells = [form.format(timings[baseline][key])] + [
                    f"{form.format(timings[v][key])} ({ratios[v][key]:.2f}×)" for v in variants[1:]
                ]
                where = f"{timings['samples']:,} samples, median of {timings['repeats']}"
                lines.append(f"| {label} ({where}) | " + " | ".join(cells) + " |")
            footers.append(measured_on(timings))
        counted = result.get("instructions")
        if counted:
            per, ratios = counted["per_sample"], counted[f"per_sample_vs_{baseline}"]
            cells = [f"{per[baseline] / 1e6:.2f} M"] + [
                f"{per[v] / 1e6:.2f} M ({ratios[v]:.3f}×)" for v in variants[1:]
            ]
            lines.append(f"| instructions per sample (callgrind, {counted['samples']:,} vs "
                         f"{counted['small_samples']} samples) | " + " | ".join(cells) + " |")  # fmt: skip
            if measured_on(counted) not in footers:
                footers.append(measured_on(counted))
        return "\n".join([*lines, "", " ".join(footers)])

    return table


repro_system_prompt_table = reproduction_table(SYSTEM_PROMPT_VARIANTS)
repro_sample_metadata_table = reproduction_table(SAMPLE_METADATA_VARIANTS)


TABLES: dict[str, Callable[[dict[str, Any]], str]] = {
    "mcq": mcq_table,
    "mcq_instructions": mcq_instructions_table,
    "load": load_table,
    "cli": cli_table,
    "judge": judge_table,
    "judge_instructions": judge_instructions_table,
    "log_bytes": log_bytes_table,
    "mcq_ablation": mcq_ablation_table,
    "judge_ablation": judge_ablation_table,
    "parsers": parsers_table,
    "repro_system_prompt": repro_system_prompt_table,
    "repro_sample_metadata": repro_sample_metadata_table,
}


def replace_block(readme: str, name: str, text: str) -> str:
    """The README with the block between the ``perf:NAME`` markers replaced by ``text``."""
    block = re.compile(rf"(<!-- perf:{name} -->\n)(?:.*?\n)?(<!-- /perf:{name} -->)", re.S)
    return block.sub(lambda match: f"{match.group(1)}{text}\n{match.group(2)}", readme)


def render(readme: str, results: Path = RESULTS) -> str:
    for name, table in TABLES.items():
        path = results / f"{name}.json"
        if path.is_file():
            readme = replace_block(readme, name, table(json.loads(path.read_text(encoding="utf-8"))))
    return readme


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the README is stale")
    args = parser.parse_args()
    readme_path = ROOT / "README.md"
    readme = readme_path.read_text(encoding="utf-8")
    fresh = render(readme)
    if args.check:
        if fresh != readme:
            print("README.md performance tables differ from perf/results: run perf/report.py")
            return 1
        return 0
    write_text_atomically(readme_path, fresh, force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
