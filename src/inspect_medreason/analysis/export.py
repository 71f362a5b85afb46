"""The challenge's files from eval logs: the official results.json (:func:`official_results`),
the judge-score file (:func:`judge_score_file`), and the check of an exported submission
against the cases. The official ``scoring.py`` and ``validate_submission.py``, re-implemented
decision for decision, are in ``analysis/official.py``; the export's check is that same
validator, strict.

Every function here returns data or raises :class:`AnalysisError` listing all problems;
``cli/export.py`` is the ``medreason export`` and ``judge-scores`` commands around them.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspect_ai.log import EvalLog
from pydantic import BaseModel, ConfigDict, Field

from inspect_medreason.analysis.display import NotebookDisplay
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.judgings import OPEN_SCORER, choose_score, score_names
from inspect_medreason.analysis.logs import (
    LoggedSample,
    PathArg,
    Progress,
    SampleKey,
    UnreadableSample,
    absent_samples,
    log_files,
    logged_samples,
    medreason_headers,
    no_progress,
)
from inspect_medreason.analysis.official import (
    RESULTS_FILE_NAME,
    RESULTS_VERSION,
    Verdict,
    validate_like_official,
)
from inspect_medreason.analysis.score_values import left_out, read_score
from inspect_medreason.core import strict_json
from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.extraction import NO_ANSWER_METHODS, extract_label, parse_open_reply
from inspect_medreason.core.schema import sample_options

if TYPE_CHECKING:
    import pandas

__all__ = [
    "CaseSpec",
    "ExportReport",
    "JudgeScoreFile",
    "OfficialResults",
    "Submission",
    "SubmissionAnswer",
    "case_specs",
    "export_results",
    "judge_score_file",
    "judge_scores_from_logs",
    "official_results",
    "submission_problems",
]

RESULTS_TYPE = "Medical visual reasoning"
METRIC_NAMES = ("MCQ Accuracy", "Open-ended GT", "Open-ended VA")


class SubmissionAnswer(BaseModel):
    model_config = ConfigDict(extra="allow")

    case_id: str
    task_type: str
    answer: str
    reasoning_trace: str | None = None
    confidence: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class Submission(BaseModel):
    """The official results.json, version 1.0."""

    model_config = ConfigDict(extra="allow")

    name: str
    type: str = RESULTS_TYPE
    answers: list[SubmissionAnswer]
    version: dict[str, int] = Field(default_factory=lambda: dict(RESULTS_VERSION))


@dataclass(frozen=True)
class CaseSpec:
    """What validation needs of a case: its track and, for MCQ, its labels."""

    case_id: str
    task_type: str
    labels: tuple[str, ...] = ()


@dataclass
class ExportReport:
    submission: Submission
    problems: list[str]
    notes: list[str] = field(default_factory=list)


# --- results.json ---------------------------------------------------------------------


def _malformed_mcq_fields(sample: LoggedSample) -> list[tuple[str, str]]:
    """The MCQ fields export reads that are not as the task writes them: (field, what)."""
    problems: list[tuple[str, str]] = []
    metadata = sample.metadata
    options = metadata.get("options")  # logs written before option_labels
    if options is not None and (
        not isinstance(options, list)
        or not all(
            isinstance(option, dict)
            and isinstance(option.get("label"), str)
            and isinstance(option.get("text"), str)
            for option in options
        )
    ):
        problems.append(("metadata.options", "is not a list of {label, text} objects"))
    if options is None and not sample.choices:
        problems.append(("choices", "is empty: the case's options are missing"))
    labels = metadata.get("option_labels")
    if labels is not None and (
        not isinstance(labels, list)
        or not all(isinstance(label, str) for label in labels)
        or len(labels) != len(sample.choices)
    ):
        problems.append(
            ("metadata.option_labels", f"is not a list of {len(sample.choices)} labels")
        )
    label_map = metadata.get("label_map") or {}
    if not isinstance(label_map, dict) or not all(
        isinstance(key, str) and isinstance(value, str) for key, value in label_map.items()
    ):
        problems.append(("metadata.label_map", "is not an object of labels"))
    return problems


def _mcq_answer(sample: LoggedSample) -> tuple[str, str, str]:
    """(answer label in the original labelling, reasoning trace, how it was found)."""
    metadata = sample.metadata
    completion = sample.completion
    extraction = extract_label(completion, sample_options(metadata, sample.choices))
    label_map: dict[str, str] = metadata.get("label_map") or {}
    trace = (extraction.reasoning_trace or "").strip() or completion.strip()
    if extraction.label is None:
        raw = extraction.answer_field if extraction.answer_field is not None else completion
        return raw.strip(), trace, extraction.method
    return label_map.get(extraction.label, extraction.label), trace, extraction.method


def several_epochs(path: Path, epochs: int, holds: str) -> str:
    return (
        f"{path}: a run of {epochs} epochs, and {holds} per case: export a run of one "
        "epoch (the challenge's submission is one reply per case)"
    )


def one_model(
    headers: list[tuple[Path, EvalLog]], model: str | None, what: str
) -> tuple[list[tuple[Path, EvalLog]], list[str]]:
    """The runs of one model (``model``, or the only one the logs hold) and the problems
    that leave none: an official file (``what``) is one submission, one model's, and an
    ``inspect eval-set`` folder holds several models' runs."""
    models = list(dict.fromkeys(header.eval.model for _, header in headers))
    if model is not None:
        chosen = [(path, header) for path, header in headers if header.eval.model == model]
        if chosen:
            return chosen, []
        return [], [f"no run of --model {model} in the logs (their models: {', '.join(models)})"]
    if len(models) > 1:
        return [], [
            f"the logs hold runs of {len(models)} models ({', '.join(models)}) and {what} is "
            "one model's submission: pass --model with one of them"
        ]
    return headers, []


def export_results(
    logs: list[Path],
    name: str | None = None,
    model: str | None = None,
    progress: Progress = no_progress,
) -> ExportReport:
    """Build results.json from log files of the mcq, open_ended or medreason tasks (of one
    model: ``model``, or the only one they hold), unchecked against the official rules (see
    :func:`official_results`)."""
    answers: list[SubmissionAnswer] = []
    problems: list[str] = []
    notes: list[str] = []
    model_names: list[str] = []
    headers, wrong_model = one_model(
        medreason_headers(logs, notes, "newest", progress), model, "results.json"
    )
    problems += wrong_model
    if not headers and not wrong_model:
        problems.append(
            f"none of the {len(logs)} log file(s) given is a log of a MedReason "
            "task (mcq, open_ended, medreason): nothing to export (see the notes)"
        )
    for path, header in headers:
        model_names.append(header.eval.model)
        epochs = header.eval.config.epochs or 1
        if epochs > 1:  # said once for the log, not once for every case it repeats
            problems.append(several_epochs(path, epochs, "results.json holds one answer"))
            continue
        if header.status != "success":
            problems.append(
                f"{path}: the run ended with status {header.status!r}; the cases it "
                "did not finish would be missing (resume it with inspect eval-retry)"
            )
        total = header.results.total_samples if header.results else None
        read: set[SampleKey] = set()
        try:
            for sample in progress(logged_samples(path, header), f"exporting {path.name}", total):
                read.add((sample.id, sample.epoch))
                if isinstance(sample, UnreadableSample):
                    problems.append(f"{path}: {sample.describe()}")
                    continue
                _export_sample(path, header, sample, answers, problems)
        except Exception as error:  # a log whose samples cannot be read
            problems.append(f"{path}: its samples cannot be read ({describe_error(error)})")
            continue
        problems.extend(_absent_message(path, key) for key in absent_samples(header, read))
    submission = Submission(name=name or ", ".join(dict.fromkeys(model_names)), answers=answers)
    return ExportReport(submission, problems, notes)


def _absent_message(path: Path, key: SampleKey) -> str:
    return (
        f"{path}: case {str(key[0])!r} (epoch {key[1]}): the log's header lists it but the "
        "file holds no sample for it (a damaged or edited log); re-run the case or pass "
        "the original log"
    )


def _export_sample(
    path: Path,
    header: EvalLog,
    sample: LoggedSample,
    answers: list[SubmissionAnswer],
    problems: list[str],
) -> None:
    """One sample's answer for results.json, or the problem that keeps it out."""
    metadata = sample.metadata
    case_id = str(metadata.get("case_id", sample.id))
    task_type = metadata.get("task_type")
    if sample.error is not None:
        problems.append(f"{path}: case {case_id!r}: the sample failed ({sample.error})")
        return
    if task_type == "mcq":
        malformed = _malformed_mcq_fields(sample)
        if malformed:
            problems.extend(
                f"{path}: case {case_id!r}: its logged field {field!r} {what} (an "
                "edited or foreign log?); re-run the case"
                for field, what in malformed
            )
            return
        answer, trace, method = _mcq_answer(sample)
        if method in NO_ANSWER_METHODS:
            problems.append(
                f"{path}: case {case_id!r}: no option label could be read from the "
                f"model's reply ({method})"
            )
    elif task_type == "open":
        reply = parse_open_reply(sample.completion)
        answer, trace, method = reply.answer, reply.reasoning_trace, reply.method
    else:
        problems.append(f"{path}: case {case_id!r}: not a MedReason sample (no task_type)")
        return
    answers.append(
        SubmissionAnswer(
            case_id=case_id,
            task_type=task_type,
            answer=answer,
            reasoning_trace=trace,
            metadata={"model": header.eval.model, "parse_method": method},
        )
    )


def results_text(submission: Submission) -> str:
    """The results.json text of ``submission`` (ending with a newline), as ``export`` writes
    it: NaN and Infinity as null, non-ASCII as is."""
    document = submission.model_dump(exclude_none=True)
    return strict_json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def submission_zip(results: str) -> bytes:
    """The submission zip: the results.json text ``results`` as its only member."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(RESULTS_FILE_NAME, results)
    return buffer.getvalue()


@dataclass(frozen=True, repr=False)
class OfficialResults(NotebookDisplay):
    """The official results.json built from eval logs, checked against the official rules
    (and the cases, when given): ``problems`` lists every breach (empty: a valid
    submission); ``notes`` says which files were skipped and which attempt of a run was
    read."""

    submission: Submission
    problems: tuple[str, ...]
    notes: tuple[str, ...]

    def display_summary(self) -> str:
        verdict = "valid" if not self.problems else f"{len(self.problems)} problem(s)"
        return f"results.json of {len(self.submission.answers)} answer(s); {verdict}"

    def display_notes(self) -> list[str]:
        return [*self.problems, *self.notes]

    @property
    def valid(self) -> bool:
        return not self.problems

    @property
    def text(self) -> str:
        """The results.json text, as ``medreason export`` writes it."""
        return results_text(self.submission)

    def zip_bytes(self) -> bytes:
        """The submission zip holding only results.json."""
        return submission_zip(self.text)

    def counts(self) -> dict[str, int]:
        """The answers of each track: ``{"mcq": n, "open": m}``."""
        answers = self.submission.answers
        return {track: sum(a.task_type == track for a in answers) for track in ("mcq", "open")}

    def to_pandas(self) -> pandas.DataFrame:
        """One row per answer: case_id, task_type, answer, reasoning_trace, model and
        parse_method (how the answer was read from the reply)."""
        import pandas

        return pandas.DataFrame(
            [
                {
                    "case_id": a.case_id,
                    "task_type": a.task_type,
                    "answer": a.answer,
                    "reasoning_trace": a.reasoning_trace,
                    "model": a.metadata.get("model"),
                    "parse_method": a.metadata.get("parse_method"),
                }
                for a in self.submission.answers
            ],
            columns=_ANSWER_COLUMNS,
        )


_ANSWER_COLUMNS = ["case_id", "task_type", "answer", "reasoning_trace", "model", "parse_method"]


def official_results(
    logs: Iterable[PathArg],
    name: str | None = None,
    model: str | None = None,
    cases: PathArg | None = None,
    progress: Progress = no_progress,
) -> OfficialResults:
    """The official results.json of the runs in ``logs`` (log files or folders; of one
    model: ``model``, or the only one they hold), named ``name`` (default: the model's
    name), checked by the official validator, strict, against ``cases`` (a cases.json:
    labels and completeness) when given. Raises :class:`AnalysisError` when a log named
    cannot be read."""
    skipped: list[str] = []
    report = export_results(log_files(logs, skipped), name, model, progress)
    specs = case_specs(Path(cases)) if cases else None
    document = report.submission.model_dump(exclude_none=True)
    problems = report.problems + submission_problems(document, specs)
    return OfficialResults(report.submission, tuple(problems), tuple(skipped + report.notes))


def judge_scores_from_logs(
    logs: list[Path],
    model: str | None = None,
    scorer: str | None = None,
    progress: Progress = no_progress,
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The official judge-score file from judged log files (of one model: ``model``, or the
    only one they hold), the cases left out (with why), and notes (which attempt of a run was
    read; values written that the rubric's whole scores are not: a panel's mean).

    A log whose samples cannot be read contributes nothing (not the cases read before the
    damage) and is named among the left out; so does a run that did not finish (status
    other than success): the file never mixes part of a run with whole ones. A log judged
    several times (``inspect score --action append``) is written from the score ``scorer``
    names, refused without one; two logs judging one run's replies are refused too."""
    notes: list[str] = []
    headers = medreason_headers(logs, notes, progress=progress)
    if not headers:
        raise AnalysisError(
            [
                *notes,
                f"none of the {len(logs)} log file(s) given is a log of a "
                "MedReason task: no judge scores to write",
            ]
        )
    headers, wrong_model = one_model(headers, model, "judge_scores.json")
    if wrong_model:
        raise AnalysisError(wrong_model)
    chosen = _chosen_scores(headers, scorer)
    found = _JudgeRows(notes=notes)
    for path, header in headers:
        epochs = header.eval.config.epochs or 1
        if epochs > 1:  # said once for the log, not once for every case it repeats
            found.duplicates.append(
                several_epochs(path, epochs, "judge_scores.json holds one score")
            )
        elif header.status != "success":
            # An unfinished run's scores are part of a run: written, they would pass for a
            # whole run's. It contributes nothing, and is named.
            found.left_out.append(
                f"{path}: the run ended with status {header.status!r}; none of its scores are "
                "written (resume it with inspect eval-retry and pass the finished log)"
            )
        else:
            _add_judge_rows(path, header, chosen[path], found, progress)
    if found.duplicates:
        raise AnalysisError([*found.duplicates, "pass logs that judge each case once"])
    return {"scores": found.rows}, found.left_out, found.notes


def _chosen_scores(headers: list[tuple[Path, EvalLog]], scorer: str | None) -> dict[Path, str]:
    """The score each log's rows are read from; refuses every log that cannot choose."""
    refused: list[str] = []
    chosen: dict[Path, str] = {}
    for path, header in headers:
        try:
            chosen[path] = choose_score(path, score_names(header, OPEN_SCORER), scorer) or (
                scorer or OPEN_SCORER
            )
        except AnalysisError as error:
            refused.extend(error.problems)
    if refused:
        raise AnalysisError(refused)
    return chosen


@dataclass
class _JudgeRows:
    """The judge-score file as it is read, log by log."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seen: dict[str, Path] = field(default_factory=dict)


def _add_judge_rows(
    path: Path, header: EvalLog, scorer: str, found: _JudgeRows, progress: Progress
) -> None:
    """One finished log's rows, or (a log whose samples cannot be read) none of them."""
    # ``seen``: the earlier logs' cases, read only; ``notes`` are kept even from a log that
    # turns out damaged (the note on a case already read stays true).
    log = _JudgeRows(seen=found.seen, notes=found.notes)
    log_seen: dict[str, Path] = {}
    read: set[SampleKey] = set()
    total = header.results.total_samples if header.results else None
    try:
        samples = logged_samples(path, header)
        for sample in progress(samples, f"reading judge scores in {path.name}", total):
            read.add((sample.id, sample.epoch))
            if isinstance(sample, UnreadableSample):
                log.left_out.append(f"{path}: {sample.describe()}")
            elif sample.metadata.get("task_type") == "open":
                _add_judge_case(path, sample, scorer, log, log_seen)
    except Exception as error:  # a damaged log: name it, take nothing from it
        found.left_out.append(
            f"{path}: its samples cannot be read ({describe_error(error)}); "
            "none of its scores are written"
        )
        return
    found.rows.extend(log.rows)
    found.left_out.extend(log.left_out)
    found.left_out.extend(_absent_message(path, key) for key in absent_samples(header, read))
    found.duplicates.extend(log.duplicates)
    found.seen.update(log_seen)


def _add_judge_case(
    path: Path, sample: LoggedSample, scorer: str, log: _JudgeRows, log_seen: dict[str, Path]
) -> None:
    """An open case's row, or why it has none."""
    case_id = str(sample.metadata.get("case_id", sample.id))
    if sample.epoch != 1:
        log.duplicates.append(
            f"case {case_id!r}: {path} has several epochs; the official file has one score per case"
        )
        return
    if case_id in log.seen or case_id in log_seen:
        first = log.seen.get(case_id, log_seen.get(case_id))
        log.duplicates.append(f"case {case_id!r} is in {first} and in {path}")
        return
    log_seen[case_id] = path
    row, why_not = _judge_row(case_id, sample, path, scorer)
    if row is None:
        log.left_out.append(why_not)
        return
    log.rows.append(row)
    fractional = [
        f"{key}={value:g}"
        for key, value in row.items()
        if isinstance(value, float) and not value.is_integer()
    ]
    if fractional:
        log.notes.append(
            f"{path}: case {case_id!r}: {', '.join(fractional)} written as "
            "judged (a panel's mean or median): the official scorer takes it, "
            "its rubric has whole scores, and agreement leaves it out"
        )


def _judge_row(
    case_id: str, sample: LoggedSample, path: Path, scorer: str = "open_ended_scorer"
) -> tuple[dict[str, Any] | None, str]:
    """A case's row of the judge-score file from score ``scorer``, or why it has none."""
    score = sample.scores.get(scorer)
    if score is None or not isinstance(score.value, dict):
        return None, f"{case_id}: not judged in {path}"
    values = {key: score.value.get(key) for key in ("gt_final", "va_answer", "rvf_trace")}
    # A score the judges cannot have given (an edited log) is reported with the unscored,
    # never written to the official file.
    read = {key: read_score(key, value) for key, value in values.items()}
    impossible = [r.problem for r in read.values() if r.problem is not None]
    if impossible:
        return None, left_out(f"{path}: case {case_id!r}", "; ".join(impossible))
    unscored = [key for key, r in read.items() if r.unscored]
    if unscored:
        judges = (score.metadata or {}).get("judges")
        records = judges if isinstance(judges, dict) else {}
        why = "; ".join(
            f"{k}: {record.get('failure') if isinstance(record := records.get(k), dict) else None}"
            for k in unscored
        )
        return None, f"{case_id}: unscored {', '.join(unscored)} ({why})"
    return {"case_id": case_id, **{k: r.number for k, r in read.items()}}, ""


@dataclass(frozen=True, repr=False)
class JudgeScoreFile(NotebookDisplay):
    """The official judge-score file built from judged logs: one row per open case whose
    three components were scored (``case_id``, ``gt_final``, ``va_answer``, ``rvf_trace``);
    ``left_out`` names every open case not written, and why (unscored, never a zero);
    ``notes`` says which files were skipped, which attempt of a run was read and which
    values are a panel's mean rather than a whole score."""

    scores: tuple[dict[str, Any], ...]
    left_out: tuple[str, ...]
    notes: tuple[str, ...]

    def display_summary(self) -> str:
        return (
            f"judge scores of {len(self.scores)} case(s); {len(self.left_out)} open case(s) "
            "left out"
        )

    def display_notes(self) -> list[str]:
        return [*self.left_out, *self.notes]

    @property
    def document(self) -> dict[str, Any]:
        """The file's JSON: ``{"scores": [...]}``."""
        return {"scores": list(self.scores)}

    @property
    def text(self) -> str:
        """The judge_scores.json text, as ``medreason judge-scores`` writes it."""
        return strict_json.dumps(self.document, indent=2) + "\n"

    def to_pandas(self) -> pandas.DataFrame:
        """One row per written case: case_id, gt_final, va_answer, rvf_trace."""
        import pandas

        columns = ["case_id", "gt_final", "va_answer", "rvf_trace"]
        return pandas.DataFrame(list(self.scores), columns=columns)


def judge_score_file(
    logs: Iterable[PathArg],
    model: str | None = None,
    scorer: str | None = None,
    progress: Progress = no_progress,
) -> JudgeScoreFile:
    """The official judge-score file of the judged runs in ``logs`` (log files or folders;
    of one model: ``model``, or the only one they hold), read from the score ``scorer``
    names in a log judged several times. Raises :class:`AnalysisError` when no log is a
    MedReason run, a log cannot choose its score, or a case is judged twice."""
    skipped: list[str] = []
    document, unscored, notes = judge_scores_from_logs(
        log_files(logs, skipped), model, scorer, progress
    )
    return JudgeScoreFile(tuple(document["scores"]), tuple(unscored), tuple(skipped + notes))


# --- validation -------------------------------------------------------------------------


def submission_problems(document: Any, cases: list[CaseSpec] | None) -> list[str]:
    """Every breach of the official submission rules (against the cases, when given), by
    the one validator ``medreason validate`` runs (``official.validate_like_official``).
    What the official validator accepts only with a warning (a missing version, an unknown
    key) is a problem here too: an export writes the documented format or nothing."""
    verdict = Verdict()
    validate_like_official(document, None if cases is None else cases_payload(cases), verdict)
    return [*verdict.problems, *verdict.warnings]


def cases_payload(cases: list[CaseSpec]) -> dict[str, Any]:
    """The cases as a cases.json holds what the validator reads of them: id, track and,
    for MCQ, the option labels."""
    return {
        "cases": [
            {
                "case_id": case.case_id,
                "task_type": case.task_type,
                "options": [{"label": label} for label in case.labels],
            }
            for case in cases
        ]
    }


def case_specs(cases_path: Path) -> list[CaseSpec]:
    """Ids, tracks and labels of a cases file (images are not opened)."""
    from inspect_medreason.core.loaders import load_cases

    loaded = load_cases(cases_path, check_images=False)
    return [CaseSpec(c.case_id, c.task_type, tuple(c.labels)) for c in loaded.cases]
