"""A log's results rewritten to the metric shapes earlier versions wrote, for the tests that
hold every ``medreason`` subcommand to reading them (cli.leaderboard's ``METRIC_SOURCES``
describes the three shapes).

The current shape is Inspect's for a dictionary score: a score per open-ended component
(``gt_final``: ``mean``, ``stderr``, ``image_ci`` lower/upper, Inspect's scored and
unscored counts) and the ``grouped()`` breakdowns (``gt_final by modality:CT``) among the
``open_ended_scorer`` score's own metrics."""

from __future__ import annotations

from inspect_ai.log import EvalLog, EvalMetric, EvalScore

COMPONENTS = ("gt_final", "va_answer", "rvf_trace", "va_final")
OPEN_SCORER = "open_ended_scorer"


def _split(log: EvalLog) -> tuple[EvalScore, dict[str, EvalScore], list[EvalScore]]:
    assert log.results is not None
    own = next(s for s in log.results.scores if s.name == OPEN_SCORER)
    parts = {s.name: s for s in log.results.scores if s.scorer == OPEN_SCORER}
    others = [s for s in log.results.scores if s.scorer != OPEN_SCORER]
    return own, {key: parts[key] for key in COMPONENTS}, others


def _bound(score: EvalScore, name: str) -> float:
    return next(m.value for m in score.metrics.values() if m.group == "image_ci" and m.name == name)


def _stderr(score: EvalScore) -> float:
    return next(m.value for key, m in score.metrics.items() if key.endswith("stderr"))


def components_results(log: EvalLog) -> EvalLog:
    """The results as versions from 2026-11-24 to 2026-11-28 wrote them: one
    ``open_ended_scorer`` score whose single ``components`` metric held every component's
    ``{key}``, ``{key}_stderr``, ``{key}_lower``/``_upper``, ``{key}_unscored`` (NaN
    components only) and ``{key} by field:value``."""
    own, parts, others = _split(log)
    old = log.model_copy(deep=True)
    assert old.results is not None
    not_scored = own.unscored_samples or 0  # cases the scorer does not score (MCQ ones)
    metrics: dict[str, EvalMetric] = {}
    for key, part in parts.items():
        values = {
            key: part.metrics["mean"].value,
            f"{key}_stderr": _stderr(part),
            f"{key}_lower": _bound(part, "lower"),
            f"{key}_upper": _bound(part, "upper"),
            f"{key}_unscored": float((part.unscored_samples or 0) - not_scored),
            **{name: m.value for name, m in own.metrics.items() if name.startswith(f"{key} by ")},
        }
        metrics |= {
            name: EvalMetric(name=name, group="components", value=value)
            for name, value in values.items()
        }
    old.results.scores = [
        *others,
        own.model_copy(update={"metrics": metrics}),
    ]
    return old


def legacy_results(log: EvalLog) -> EvalLog:
    """The results as versions before 2026-11-24 wrote them: each component a score of its
    own, its breakdowns in it (``grouped_modality:CT``), and no ``open_ended_scorer`` score."""
    own, parts, others = _split(log)
    old = log.model_copy(deep=True)
    assert old.results is not None
    legacy = []
    for key, part in parts.items():
        breakdowns = {
            name.removeprefix(f"{key} by "): m.value
            for name, m in own.metrics.items()
            if name.startswith(f"{key} by ")
        }
        # those versions' interval was a cluster bootstrap, Inspect's stderr counted cases
        metrics = {
            name: m
            for name, m in part.metrics.items()
            if m.group != "image_ci" and not name.endswith("stderr")
        }
        metrics["stderr"] = EvalMetric(name="stderr", value=_stderr(part))
        metrics["bootstrap_ci_lower"] = EvalMetric(
            name="lower", group="bootstrap_ci", value=_bound(part, "lower")
        )
        metrics["bootstrap_ci_upper"] = EvalMetric(
            name="upper", group="bootstrap_ci", value=_bound(part, "upper")
        )
        metrics |= {
            f"grouped_{name}": EvalMetric(name=name, group="grouped", value=value)
            for name, value in breakdowns.items()
        }
        legacy.append(part.model_copy(update={"metrics": metrics}))
    old.results.scores = [*others, *legacy]
    return old
