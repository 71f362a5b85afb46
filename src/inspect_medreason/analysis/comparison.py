"""Is run B really better than run A? A paired comparison of two MedReason eval logs.

Only the cases both logs scored are compared (the count is stated; different data files
are warned about; no shared case is a refusal). For each metric: both means and the
difference (B - A) by ``core.intervals.clustered_paired_change``, the statistic the shift
report uses, which counts images, not cases: its 95% interval (MCQ correctness: the
adjusted Wald interval widened by the images' design effect; 0-4 judge components, and
MCQ over several epochs: Student's t on Bell-McCaffrey degrees of freedom), the clustered sign-flip
test, and the smallest difference the images could detect (alpha 0.05, power 0.8). Then
the same difference per modality and organ system.

:func:`compare_logs` reads two logs and compares them; ``cli/compare.py`` is the
``medreason compare`` command around it.
"""

from __future__ import annotations

import base64
import html
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from inspect_medreason.analysis.calibration import add_calibrated_cases, read_calibration
from inspect_medreason.analysis.display import NotebookDisplay
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.figures import (
    DOUBLE_COLUMN,
    display_names,
    metric_label,
    png_bytes,
    print_style,
)
from inspect_medreason.analysis.logs import (
    LoggedSample,
    PathArg,
    Progress,
    UnreadableSample,
    log_files,
    log_header,
    logged_samples,
    medreason_headers,
    no_progress,
    task_name,
    task_record,
)
from inspect_medreason.analysis.markdown import html_table, markdown_row, markdown_text
from inspect_medreason.analysis.score_values import left_out, read_score
from inspect_medreason.core import strict_json
from inspect_medreason.core.errors import describe_error, first_few
from inspect_medreason.core.intervals import PairedResult, case_cluster, clustered_paired_change

if TYPE_CHECKING:
    import pandas

__all__ = [
    "CategoryDifference",
    "Comparison",
    "RunCases",
    "compare_logs",
    "compare_runs",
    "comparison_figure",
    "plot_caption",
    "plot_png",
    "read_run",
    "render",
]

# metric -> (score name in a sample, key in a dict-valued score or None). An MCQ score written
# before it was a dictionary is a float: the key is then the value itself.
METRICS = {
    "MCQ Accuracy": ("mcq_scorer", "correct"),
    "Open-ended GT": ("open_ended_scorer", "gt_final"),
    "Open-ended VA": ("open_ended_scorer", "va_final"),
    "VA_answer": ("open_ended_scorer", "va_answer"),
    "RVF_trace": ("open_ended_scorer", "rvf_trace"),
}
LEADERBOARD_METRICS = ("MCQ Accuracy", "Open-ended GT", "Open-ended VA")
CATEGORY_FIELDS = ("modality", "organ_system")
MIN_CATEGORY_CASES = 2


@dataclass
class RunCases:
    """One log's per-case values (means over epochs) and what identifies the run."""

    path: Path
    model: str
    task: str
    epochs: int
    data: dict[str, Any]
    values: dict[str, dict[str, float]]  # metric -> case id -> value
    groups: dict[str, dict[str, str]]  # case id -> field -> value
    clusters: dict[str, str]  # case id -> image cluster
    unreadable: list[str] = field(default_factory=list)  # samples left out, each named


@dataclass
class CategoryDifference:
    """A leaderboard metric's means over one category's shared cases (e.g. modality CT)."""

    field: str
    category: str
    cases: int
    mean_a: float
    mean_b: float
    difference: float


@dataclass(repr=False)
class Comparison(NotebookDisplay):
    """Run B against run A on the cases both scored: per metric the paired difference
    (``results``), per leaderboard metric the differences by category, and the warnings on
    what keeps the runs from being alike (other data files, epochs, cases left out)."""

    a: RunCases
    b: RunCases
    shared_cases: int
    warnings: list[str]
    results: dict[str, PairedResult]
    categories: dict[str, list[CategoryDifference]] = field(default_factory=dict)

    def display_summary(self) -> str:
        changes = "; ".join(
            f"{metric} {r.difference:+.3f} [{r.interval.lower:.3f}, {r.interval.upper:.3f}]"
            for metric, r in self.results.items()
        )
        return (
            f"{self.b.model} (B) vs {self.a.model} (A) on {self.shared_cases} shared cases: "
            f"{changes or 'no metric in common'}; {len(self.warnings)} warning(s)"
        )

    def display_notes(self) -> list[str]:
        return list(self.warnings)

    def render(self, fmt: str = "md") -> str:
        """The report as ``medreason compare`` writes it: ``fmt`` is md, json or html."""
        return render(self, fmt)

    def to_markdown(self) -> str:
        """The Markdown report: both runs, the warnings, the metrics and the categories."""
        return render(self, "md")

    def plot_png(self) -> bytes:
        """Each run's means and each metric's difference B − A with its 95% interval, as
        PNG bytes (:func:`plot_png`); its caption is :meth:`plot_caption`."""
        return plot_png(self)

    def plot_caption(self) -> str:
        """The caption of :meth:`plot_png`, as text to set under it."""
        return plot_caption(self)

    def to_pandas(self) -> pandas.DataFrame:
        """One row per metric: metric, cases (shared), mean_a, mean_b, difference (B − A),
        lower and upper (its 95% interval), test, p_value, detectable (the smallest
        difference the cases could detect)."""
        import pandas

        return pandas.DataFrame(
            [
                {
                    "metric": metric,
                    "cases": r.cases,
                    "mean_a": r.mean_a,
                    "mean_b": r.mean_b,
                    "difference": r.difference,
                    "lower": r.interval.lower,
                    "upper": r.interval.upper,
                    "test": r.test,
                    "p_value": r.p_value,
                    "detectable": r.detectable,
                }
                for metric, r in self.results.items()
            ],
            columns=_RESULT_COLUMNS,
        )

    def categories_to_pandas(self) -> pandas.DataFrame:
        """One row per leaderboard metric and category: metric, field, category, cases,
        mean_a, mean_b, difference."""
        import pandas

        return pandas.DataFrame(
            [
                {"metric": metric, **asdict(difference)}
                for metric, differences in self.categories.items()
                for difference in differences
            ],
            columns=["metric", *CATEGORY_COLUMNS],
        )


_RESULT_COLUMNS = [
    "metric",
    "cases",
    "mean_a",
    "mean_b",
    "difference",
    "lower",
    "upper",
    "test",
    "p_value",
    "detectable",
]
CATEGORY_COLUMNS = ["field", "category", "cases", "mean_a", "mean_b", "difference"]


def compare_logs(
    a: PathArg,
    b: PathArg,
    calibration: PathArg | None = None,
    progress: Progress = no_progress,
) -> Comparison:
    """Run B (``b``) against run A (``a``): each a log file or a folder holding one run,
    compared on the cases both scored (see the module docstring); with ``calibration`` (a
    ``medreason calibrate`` file), the calibrated judge metrics too, beside the raw ones.
    Raises :class:`AnalysisError` when a log is not one MedReason run or the runs share no
    scored case. ``progress`` shows the reading of a folder's log headers."""
    runs = read_run(Path(a), progress=progress), read_run(Path(b), progress=progress)
    if calibration:
        found = read_calibration(Path(calibration))
        for run in runs:
            add_calibrated_cases(run, found)
    return compare_runs(*runs)


def run_log(path: Path, progress: Progress = no_progress) -> Path:
    """The log a compare argument names: the file itself, or a folder's one run (its latest
    complete attempt, as every command reads a folder); a folder of several runs is refused
    with them named."""
    notes: list[str] = []
    logs = log_files([path], notes)  # a FIFO, a device or an oversized log is refused here
    if not path.is_dir():
        if not logs:
            raise AnalysisError([f"{path}: not an eval log (.eval or .json)"])
        return logs[0]
    headers = medreason_headers(logs, notes, progress=progress)
    if len(headers) != 1:
        found = ", ".join(str(found) for found, _ in headers) or "none"
        raise AnalysisError(
            [
                f"{path}: compare takes one run per side and this folder holds {len(headers)} "
                f"MedReason runs ({found}); name the log of the run you mean",
                *notes,
            ]
        )
    return headers[0][0]


def read_run(
    path: Path, scores: dict[str, str] | None = None, progress: Progress = no_progress
) -> RunCases:
    """Per-case values of a MedReason log, read as a stream (its header, then one sample at
    a time, never the images); a refusal naming the file when it is not one. A sample with
    a field that cannot be read is left out and named in ``unreadable``. ``path`` may be a
    folder holding one run (``run_log``). ``scores`` names, per scorer, the score to read
    when the log holds several judgings (``{"open_ended_scorer": "open_ended_scorer1"}``)."""
    path = run_log(path, progress)
    try:
        header = log_header(path)
    except Exception as error:  # any file can be handed in: report it, never a traceback
        raise AnalysisError(
            [f"{path}: not a readable eval log ({describe_error(error)})"]
        ) from error
    if header.status != "success":
        raise AnalysisError(
            [f"{path}: the run did not finish (status {header.status!r}); compare finished runs"]
        )
    try:
        # a log of another task has no run record: its lack of MedReason scores is the refusal
        data = (
            task_record(header).data.model_dump() if "data" in (header.eval.metadata or {}) else {}
        )
    except ValueError as error:  # an edited header: which data it ran on is unknown
        raise AnalysisError([f"{path}: {error} (an edited log?)"]) from error
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    groups: dict[str, dict[str, str]] = {}
    clusters: dict[str, str] = {}
    unreadable: list[str] = []
    try:
        for sample in logged_samples(path, header):
            if isinstance(sample, UnreadableSample):
                unreadable.append(sample.describe())
                continue
            unreadable.extend(_add_case_values(sample, sums, groups, clusters, scores or {}))
    except Exception as error:  # a damaged file: nothing of it is compared
        raise AnalysisError(
            [f"{path}: its samples cannot be read ({describe_error(error)})"]
        ) from error
    values = {m: {c: float(np.mean(v)) for c, v in cases.items()} for m, cases in sums.items()}
    if not values:
        raise AnalysisError(
            [
                *(f"{path}: {problem}" for problem in unreadable),
                f"{path}: no MedReason scores in this log (a medreason, mcq or "
                "open_ended run is needed)",
            ]
        )
    return RunCases(
        path,
        header.eval.model,
        task_name(header),
        int(header.eval.config.epochs or 1),
        data,
        values,
        groups,
        clusters,
        unreadable,
    )


def _add_case_values(
    sample: LoggedSample,
    sums: dict[str, dict[str, list[float]]],
    groups: dict[str, dict[str, str]],
    clusters: dict[str, str],
    scores: dict[str, str] | None = None,
) -> list[str]:
    """Adds a sample's values; returns the impossible ones, named (``score_values``)."""
    problems: list[str] = []
    case = str(sample.id)
    metadata = sample.metadata
    groups[case] = {name: str(metadata.get(name, "unknown")) for name in CATEGORY_FIELDS}
    clusters[case] = case_cluster(metadata, f"case:{case}")
    for metric, (scorer_name, key) in METRICS.items():
        score = sample.scores.get((scores or {}).get(scorer_name, scorer_name))
        if score is None:
            continue
        value = score.value.get(key) if key and isinstance(score.value, dict) else score.value
        read = read_score(key, value)
        if read.problem is not None:
            problems.append(left_out(f"case {case!r} (epoch {sample.epoch})", read.problem))
        elif read.number is not None:
            sums[metric][case].append(read.number)
    return problems


def compare_runs(a: RunCases, b: RunCases) -> Comparison:
    """Run B against run A on the cases both scored; see the module docstring."""
    warnings: list[str] = []
    for key in ("cases_sha256", "ground_truth_sha256"):
        if a.data.get(key) != b.data.get(key):
            warnings.append(
                f"the runs used different data files ({key.split('_')[0]}: "
                f"{a.data.get(key.replace('_sha256', '_file'))} vs "
                f"{b.data.get(key.replace('_sha256', '_file'))}); only the case ids "
                "they share are compared"
            )
    if a.epochs > 1 or b.epochs > 1:
        warnings.append(
            f"epochs {a.epochs} vs {b.epochs}: per-case values are means over epochs, "
            "and MCQ correctness is compared on that 0-1 scale (Student's t on the images)"
        )
    cases_a = {case for metric in a.values for case in a.values[metric]}
    cases_b = {case for metric in b.values for case in b.values[metric]}
    shared_any = cases_a & cases_b
    for label, only in (("A", cases_a - cases_b), ("B", cases_b - cases_a)):
        if only and shared_any:
            examples = first_few([repr(case) for case in sorted(only)], 5)
            warnings.append(
                f"{len(only)} case(s) scored only in {label} ({examples}) are "
                "left out of the comparison"
            )
    for label, run in (("A", a), ("B", b)):
        if run.unreadable:
            warnings.append(
                f"{len(run.unreadable)} value(s) or sample(s) of {label} are left out: "
                + first_few(run.unreadable, 3, "; ")
            )
    if not shared_any:
        raise AnalysisError(
            [
                f"{a.path} and {b.path} share no scored case: nothing to compare "
                "(were they run on the same data?)"
            ]
        )
    results: dict[str, PairedResult] = {}
    categories: dict[str, list[CategoryDifference]] = {}
    binary_mcq = a.epochs == 1 and b.epochs == 1
    # then what was added to the runs' values (calibrated judge metrics, with --calibration)
    for metric in (*METRICS, *sorted(set(a.values) - set(METRICS))):
        first, second = a.values.get(metric, {}), b.values.get(metric, {})
        cases = sorted(set(first) & set(second))
        if not cases:
            continue
        results[metric] = clustered_paired_change(
            [first[c] for c in cases],
            [second[c] for c in cases],
            [a.clusters.get(c, c) for c in cases],
            binary=metric == "MCQ Accuracy" and binary_mcq,
        )
        if metric in LEADERBOARD_METRICS:
            categories[metric] = _category_differences(a, cases, first, second)
    return Comparison(a, b, len(shared_any), warnings, results, categories)


def _category_differences(
    a: RunCases, cases: list[str], first: dict[str, float], second: dict[str, float]
) -> list[CategoryDifference]:
    found: list[CategoryDifference] = []
    for name in CATEGORY_FIELDS:
        by_value: dict[str, list[str]] = defaultdict(list)
        for case in cases:
            by_value[a.groups.get(case, {}).get(name, "unknown")].append(case)
        for value, members in sorted(by_value.items()):
            mean_a = float(np.mean([first[c] for c in members]))
            mean_b = float(np.mean([second[c] for c in members]))
            found.append(
                CategoryDifference(name, value, len(members), mean_a, mean_b, mean_b - mean_a)
            )
    return found


def _number(value: float | None, digits: int = 3) -> str:
    return "—" if value is None or value != value else f"{value:.{digits}f}"


def _p_value(value: float | None) -> str:
    if value is None:
        return "—"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _rows(comparison: Comparison) -> list[list[str]]:
    return [
        [
            metric,
            str(r.cases),
            _number(r.mean_a),
            _number(r.mean_b),
            f"{r.difference:+.3f}",
            f"[{_number(r.interval.lower)}, {_number(r.interval.upper)}]",
            r.test,
            _p_value(r.p_value),
            _number(r.detectable) if r.detectable is not None else "— (no spread)",
        ]
        for metric, r in comparison.results.items()
    ]


HEADER = [
    "metric",
    "shared cases",
    "A",
    "B",
    "B − A",
    "95% interval",
    "test",
    "p",
    "smallest detectable |B − A|",
]
CATEGORY_HEADER = ["metric", "field", "category", "cases", "A", "B", "B − A"]


def _category_rows(comparison: Comparison) -> list[list[str]]:
    return [
        [
            metric,
            d.field,
            d.category,
            str(d.cases),
            _number(d.mean_a),
            _number(d.mean_b),
            f"{d.difference:+.3f}"
            + (" (too few cases to read)" if d.cases < MIN_CATEGORY_CASES else ""),
        ]
        for metric, differences in comparison.categories.items()
        for d in differences
    ]


def _summary(comparison: Comparison) -> str:
    a, b = comparison.a, comparison.b
    return (
        f"A = {a.model} ({a.path.name}), B = {b.model} ({b.path.name}): "
        f"{comparison.shared_cases} cases scored in both runs."
    )


def render(comparison: Comparison, fmt: str) -> str:
    """The comparison as Markdown, JSON or a standalone HTML page."""
    if fmt == "json":
        return strict_json.dumps(_document(comparison), indent=2, default=str)
    if fmt == "html":
        return _html(comparison)
    title = markdown_text(f"{comparison.b.model} vs {comparison.a.model}")
    lines = [f"# {title}", "", markdown_text(_summary(comparison)), ""]
    lines += [f"> warning: {markdown_text(w)}" for w in comparison.warnings] + (
        [""] if comparison.warnings else []
    )
    lines += [*_markdown_table(HEADER, _rows(comparison)), "", NOTE, "", "## By category", ""]
    lines += _markdown_table(CATEGORY_HEADER, _category_rows(comparison))
    return "\n".join(lines) + "\n"


NOTE = (
    "B − A > 0 favours B. Cases sharing an image count as one image: the interval (MCQ: the "
    "adjusted Wald interval widened by the images' design effect; 0–4 scores: Student's t on "
    "Bell-McCaffrey degrees of freedom, docs/intervals.md) and the clustered sign-flip test both count images, not cases; the "
    "interval excludes 0 when the difference is unlikely to be chance. The smallest detectable "
    "difference is for alpha 0.05 and power 0.8 at that standard error: a smaller true "
    "difference is likely to be missed."
)


def _markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        markdown_row(header),
        "|" + "---|" * len(header),
        *(markdown_row(row) for row in rows),
    ]


def _document(comparison: Comparison) -> dict[str, Any]:
    def run(r: RunCases) -> dict[str, Any]:
        return {
            "log": str(r.path),
            "model": r.model,
            "task": r.task,
            "epochs": r.epochs,
            "data": r.data,
        }

    return {
        "a": run(comparison.a),
        "b": run(comparison.b),
        "shared_cases": comparison.shared_cases,
        "warnings": comparison.warnings,
        "metrics": {
            metric: {
                **{k: v for k, v in asdict(r).items() if k != "interval"},
                "interval": {"lower": r.interval.lower, "upper": r.interval.upper, "level": 0.95},
            }
            for metric, r in comparison.results.items()
        },
        "categories": {m: [asdict(d) for d in ds] for m, ds in comparison.categories.items()},
        "method": NOTE,
    }


def _html(comparison: Comparison) -> str:
    image = base64.b64encode(plot_png(comparison)).decode("ascii")
    warnings = "".join(
        f"<p class='warn'>warning: {html.escape(w)}</p>" for w in comparison.warnings
    )
    title = html.escape(f"{comparison.b.model} vs {comparison.a.model}")
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        f"<title>{title}</title>\n<style>body{{font-family:system-ui,sans-serif;margin:2rem}}"
        "table{border-collapse:collapse;margin:1rem 0}th,td{border-bottom:1px solid #d9e2ec;"
        "padding:.3rem .6rem;text-align:right}th{background:#f0f4f8}.warn{color:#b44d12}"
        "img{max-width:100%}</style>\n</head>\n<body>\n"
        f"<h1>{title}</h1>\n<p>{html.escape(_summary(comparison))}</p>\n{warnings}"
        f"{html_table(HEADER, _rows(comparison))}<p>{html.escape(NOTE)}</p>\n"
        "<figure><img alt='Means and differences with their 95% intervals' "
        f"src='data:image/png;base64,{image}'>\n"
        f"<figcaption>{html.escape(plot_caption(comparison))}</figcaption></figure>\n"
        f"<h2>By category</h2>\n{html_table(CATEGORY_HEADER, _category_rows(comparison))}</body>\n</html>\n"
    )


def _scale(metric: str) -> tuple[float, float, str]:
    """A metric's range and unit: MCQ accuracy 0-1, the judge components (raw or
    calibrated) 0-4."""
    return (0.0, 1.0, "accuracy (0-1)") if metric.startswith("MCQ") else (0.0, 4.0, "score (0-4)")


def comparison_figure(comparison: Comparison) -> Any:
    """The figure of :func:`plot_png` as a matplotlib ``Figure``; its caption is
    :func:`plot_caption`. Per scale (MCQ accuracy 0-1, the judge components 0-4) a row:
    left, each run's mean per metric side by side on the metric's whole scale; right, the
    difference B − A with its 95% interval drawn at its own bounds, around a line at zero."""
    panels = [
        [m for m in comparison.results if _scale(m)[1] == 1.0],
        [m for m in comparison.results if _scale(m)[1] != 1.0],
    ]
    panels = [p for p in panels if p]
    names = display_names([comparison.a.model, comparison.b.model])
    if names[comparison.a.model] == names[comparison.b.model]:  # one model, two runs
        names = {comparison.a.model: "A", comparison.b.model: "B"}
    label_a, label_b = f"A: {names[comparison.a.model]}", f"B: {names[comparison.b.model]}"
    heights = [max(len(metrics), 1) for metrics in panels]
    with print_style() as plt:
        figure, axes = plt.subplots(
            max(len(panels), 1),
            2,
            figsize=(DOUBLE_COLUMN, 0.9 + 0.45 * sum(heights) + 0.5 * len(panels)),
            squeeze=False,
            gridspec_kw={"height_ratios": heights or [1], "width_ratios": [1, 1]},
        )
        for (means, differences), metrics in zip(axes, panels, strict=False):
            low_end, high_end, unit = _scale(metrics[0])
            for y, metric in enumerate(metrics):
                result = comparison.results[metric]
                means.plot([result.mean_a], [y - 0.15], "s", color="#829ab1", label=label_a)
                means.plot([result.mean_b], [y + 0.15], "o", color="#102a43", label=label_b)
                low, high = result.interval.lower, result.interval.upper
                if low == low and high == high:
                    differences.hlines(y, low, high, color="#486581", linewidth=2)
                    differences.vlines([low, high], y - 0.12, y + 0.12, color="#486581")
                differences.plot(
                    [result.difference],
                    [y],
                    "o",
                    color="#102a43",
                    markerfacecolor="#102a43" if low == low and high == high else "white",
                )
            span = high_end - low_end
            for axis in (means, differences):
                axis.set_yticks(range(len(metrics)), [metric_label(m) for m in metrics])
                axis.set_ylim(len(metrics) - 0.5, -0.5)
                axis.grid(axis="x", alpha=0.3)
            means.set_xlim(low_end, high_end)
            means.set_xlabel(f"mean {unit}")
            differences.axvline(0.0, color="0.6", linestyle="--", linewidth=0.8)
            widest = max(
                [abs(v) for m in metrics for v in (
                    comparison.results[m].interval.lower,
                    comparison.results[m].interval.upper,
                    comparison.results[m].difference,
                ) if v == v] or [0.0]
            )  # fmt: skip
            reach = min(span, max(0.1 * span, 1.15 * widest))
            differences.set_xlim(-reach, reach)
            differences.set_xlabel(f"difference B − A, {unit}")
            differences.tick_params(labelleft=False)
        handles, labels = axes[0, 0].get_legend_handles_labels()
        figure.legend(
            handles[:2], labels[:2], loc="lower center", ncol=2, frameon=False,
            bbox_to_anchor=(0.5, 0.0),
        )  # fmt: skip
        figure.tight_layout(rect=(0, 0.12 / max(len(panels), 1), 1, 1))
    return figure


def plot_caption(comparison: Comparison) -> str:
    """The figure's caption, as text to set under it."""
    a, b = comparison.a, comparison.b
    return (
        f"{b.model} (B) against {a.model} (A) on the {comparison.shared_cases} cases both "
        "runs scored. Left: each run's mean per metric on the metric's whole scale. Right: "
        "the difference B − A (point) with its 95% interval (bar, at its own bounds; cases "
        "sharing an image resampled together); right of the dashed line favours B. A hollow "
        "point has no interval (see the table's note)."
    )


def plot_png(comparison: Comparison) -> bytes:
    """Each run's means side by side and each metric's difference B − A with its 95%
    interval, per scale; PNG bytes at print size. The caption is :func:`plot_caption`."""
    return png_bytes(comparison_figure(comparison))
