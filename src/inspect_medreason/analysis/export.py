"""The challenge's I/O: results.json from eval logs (``export``), judge-score files from
them (``judge-scores``), and the check of an exported submission against the cases. The
official ``scoring.py`` and ``validate_submission.py``, re-implemented decision for
decision, are in ``analysis/official.py`` (``medreason score``, ``medreason validate``); the
export's check is that same validator, strict.

Every function here returns data or raises :class:`AnalysisError` listing all problems;
printing and exit codes are the two commands' own, at the end of the module (``add_parsers``
declares their arguments; ``cli/command_line.py`` holds what all subcommands share).
"""

from __future__ import annotations

import argparse
import io
import sys
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from inspect_ai.log import (
    EvalLog,
    EvalLogInfo,
    list_eval_logs,
)
from pydantic import BaseModel, ConfigDict, Field

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.logs import (
    Judgings,
    LoggedSample,
    SampleKey,
    UnreadableSample,
    absent_samples,
    header_disagrees_with_start,
    log_header,
    logged_samples,
    one_attempt_per_run,
    plugin_task,
    task_record,
)
from inspect_medreason.analysis.official import (
    RESULTS_FILE_NAME,
    RESULTS_VERSION,
    Verdict,
    validate_like_official,
)
from inspect_medreason.analysis.score_values import left_out, read_score
from inspect_medreason.cli.command_line import (
    DATA_FILE,
    EXIT_FAILED,
    EXIT_OK,
    TOGETHER,
    Subcommands,
    print_notes,
    print_problems,
)
from inspect_medreason.cli.progress import track
from inspect_medreason.core import strict_json
from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.extraction import NO_ANSWER_METHODS, extract_label, parse_open_reply
from inspect_medreason.core.files import OutputSet
from inspect_medreason.core.schema import sample_options
from inspect_medreason.core.user_files import (
    MAX_JSON_LOG_BYTES,
    UserFileError,
    check_regular_file,
)

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


# --- reading logs ---------------------------------------------------------------------


def log_files(paths: Iterable[str | Path], notes: list[str] | None = None) -> list[Path]:
    """Eval logs named directly or found (recursively) by Inspect's own log listing in the
    named folders; a named file that is not a log is skipped with a note.

    Each log must be a regular file (a ``.json`` log within ``MAX_JSON_LOG_BYTES``, which
    Inspect reads whole) before Inspect opens it by name: a FIFO would block the command
    and a link to a device would read without end. A log named so is refused; one found in
    a folder is skipped with a note."""
    found: list[Path] = []
    missing: list[str] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for log in sorted(
                _info_path(info) for info in list_eval_logs(str(path), recursive=True)
            ):
                problem = _not_a_log_file(log)
                if problem is None:
                    found.append(log)
                elif notes is not None:
                    notes.append(f"skipped, {problem}")
                else:
                    missing.append(problem)
        elif path.suffix in {".eval", ".json"} and path.exists():
            problem = _not_a_log_file(path)
            if problem is None:
                found.append(path)
            else:
                missing.append(problem)
        elif path.is_file():
            if notes is not None:
                notes.append(f"{path}: skipped, not an eval log (.eval or .json)")
        elif path.exists():
            missing.append(f"{path}: not a file or folder (a FIFO or a device?)")
        else:
            missing.append(f"{path}: no such file or folder")
    if missing:
        raise AnalysisError(missing)
    return found


def _not_a_log_file(path: Path) -> str | None:
    """Why ``path`` cannot be read as a log file, or None when it can be."""
    # A .eval log is read entry by entry, each entry within log_reading.MAX_ENTRY_BYTES.
    limit = MAX_JSON_LOG_BYTES if path.suffix == ".json" else None
    try:
        check_regular_file(path, "eval log", limit)
    except UserFileError as error:
        return str(error)
    return None


def _info_path(info: EvalLogInfo) -> Path:
    parsed = urlparse(info.name)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else Path(info.name)


def medreason_headers(
    logs: list[Path], notes: list[str], judgings: Judgings = "refuse"
) -> list[tuple[Path, EvalLog]]:
    """The headers of the logs this package's challenge tasks wrote, one attempt per run
    (``one_attempt_per_run``: an interrupted run resumed with ``inspect eval-retry`` counts
    once); anything else (an unreadable or corrupt file, a log of another task, an exported
    results.json) is skipped with a one-line note. Refuses two complete attempts of one run
    that differ; two judgings of one run (the same replies, other scores) as ``judgings``
    says."""
    headers: list[tuple[Path, EvalLog]] = []
    for path in track(logs, "reading log headers", len(logs)):
        try:
            header = log_header(path)
        except Exception as error:  # a corrupt or foreign file: skip it, say why
            notes.append(f"{path}: skipped, not a readable eval log ({type(error).__name__})")
            continue
        # Recognised by its registered name, its file or its run record, however it was
        # run (a register entry runs a task by file: its log names the task plain "mcq").
        if plugin_task(header) is None or "data" not in (header.eval.metadata or {}):
            notes.append(f"{path}: skipped, a log of {header.eval.task!r}, not a MedReason task")
            continue
        try:
            task_record(header)
        except ValueError as error:  # an edited header: its settings cannot be trusted
            notes.append(f"{path}: skipped, {error} (an edited log?)")
            continue
        mismatch = header_disagrees_with_start(path, header)
        if mismatch is not None:
            notes.append(f"{path}: skipped, {mismatch}")
            continue
        headers.append((path, header))
    attempts = one_attempt_per_run(headers, judgings)
    if attempts.conflicts:
        raise AnalysisError(attempts.conflicts)
    notes.extend(attempts.notes)
    return attempts.used


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
    logs: list[Path], name: str | None = None, model: str | None = None
) -> ExportReport:
    """Build results.json from logs of the mcq, open_ended or medreason tasks (of one model:
    ``model``, or the only one they hold)."""
    answers: list[SubmissionAnswer] = []
    problems: list[str] = []
    notes: list[str] = []
    model_names: list[str] = []
    headers, wrong_model = one_model(
        medreason_headers(logs, notes, judgings="newest"), model, "results.json"
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
            for sample in track(logged_samples(path, header), f"exporting {path.name}", total):
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


def write_results(
    submission: Submission, outputs: OutputSet, output: Path, zip_path: Path | None = None
) -> list[str]:
    """Write results.json and the zip holding only it (if asked) together: both or neither,
    so the pair always matches (``outputs`` checked both paths before any work). Returns
    notes about leftovers the write could not remove."""
    text = strict_json.dumps(submission.model_dump(exclude_none=True), indent=2, ensure_ascii=False)
    files: dict[Path, bytes | str] = {output: text + "\n"}
    if zip_path is not None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(RESULTS_FILE_NAME, text + "\n")
        files[zip_path] = buffer.getvalue()
    return outputs.write(files)


def judge_scores_from_logs(
    logs: list[Path], model: str | None = None, scorer: str | None = None
) -> tuple[dict[str, Any], list[str], list[str]]:
    """The official judge-score file from judged logs (of one model: ``model``, or the only
    one they hold), the cases left out (with why), and notes (which attempt of a run was
    read; values written that the rubric's whole scores are not: a panel's mean).

    A log whose samples cannot be read contributes nothing (not the cases read before the
    damage) and is named among the left out; so does a run that did not finish (status
    other than success): the file never mixes part of a run with whole ones. A log judged
    several times (``inspect score --action append``) is written from the score ``scorer``
    names, refused without one; two logs judging one run's replies are refused too."""
    from inspect_medreason.analysis.judgings import OPEN_SCORER, choose_score, score_names

    rows: list[dict[str, Any]] = []
    left_out: list[str] = []
    seen: dict[str, Path] = {}
    duplicates: list[str] = []
    notes: list[str] = []
    headers = medreason_headers(logs, notes)
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
    for path, header in headers:
        epochs = header.eval.config.epochs or 1
        if epochs > 1:  # said once for the log, not once for every case it repeats
            duplicates.append(several_epochs(path, epochs, "judge_scores.json holds one score"))
            continue
        if header.status != "success":
            # An unfinished run's scores are part of a run: written, they would pass for a
            # whole run's. It contributes nothing, and is named.
            left_out.append(
                f"{path}: the run ended with status {header.status!r}; none of its scores are "
                "written (resume it with inspect eval-retry and pass the finished log)"
            )
            continue
        log_rows: list[dict[str, Any]] = []
        log_left_out: list[str] = []
        log_duplicates: list[str] = []
        log_seen: dict[str, Path] = {}
        read: set[SampleKey] = set()
        total = header.results.total_samples if header.results else None
        try:
            for sample in track(
                logged_samples(path, header), f"reading judge scores in {path.name}", total
            ):
                read.add((sample.id, sample.epoch))
                if isinstance(sample, UnreadableSample):
                    log_left_out.append(f"{path}: {sample.describe()}")
                    continue
                metadata = sample.metadata
                if metadata.get("task_type") != "open":
                    continue
                case_id = str(metadata.get("case_id", sample.id))
                if sample.epoch != 1:
                    log_duplicates.append(
                        f"case {case_id!r}: {path} has several epochs; "
                        "the official file has one score per case"
                    )
                    continue
                if case_id in seen or case_id in log_seen:
                    first = seen.get(case_id, log_seen.get(case_id))
                    log_duplicates.append(f"case {case_id!r} is in {first} and in {path}")
                    continue
                log_seen[case_id] = path
                row, why_not = _judge_row(case_id, sample, path, chosen[path])
                if row is None:
                    log_left_out.append(why_not)
                else:
                    log_rows.append(row)
                    fractional = [
                        f"{key}={value:g}"
                        for key, value in row.items()
                        if isinstance(value, float) and not value.is_integer()
                    ]
                    if fractional:
                        notes.append(
                            f"{path}: case {case_id!r}: {', '.join(fractional)} written as "
                            "judged (a panel's mean or median): the official scorer takes it, "
                            "its rubric has whole scores, and agreement leaves it out"
                        )
        except Exception as error:  # a damaged log: name it, take nothing from it
            left_out.append(
                f"{path}: its samples cannot be read ({describe_error(error)}); "
                "none of its scores are written"
            )
            continue
        rows.extend(log_rows)
        left_out.extend(log_left_out)
        left_out.extend(_absent_message(path, key) for key in absent_samples(header, read))
        duplicates.extend(log_duplicates)
        seen.update(log_seen)
    if duplicates:
        raise AnalysisError([*duplicates, "pass logs that judge each case once"])
    return {"scores": rows}, left_out, notes


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


# --- the command line: medreason export, medreason judge-scores ---------------------------


def add_parsers(commands: Subcommands) -> None:
    """``export`` and ``judge-scores``: their arguments and the functions that run them."""
    export = commands.add_parser(
        "export",
        help="write the official results.json (and zip) from eval logs",
        description="Write the official results.json v1.0 from logs of the mcq, open_ended or "
        "medreason tasks (several logs are merged). Refuses to write an invalid file unless "
        "--force.",
    )
    export.add_argument("logs", nargs="+", metavar="LOG", help="eval log files or folders")
    export.add_argument("--output", required=True, help="results.json to write" + TOGETHER)
    export.add_argument(
        "--zip", help="also write a submission zip holding only results.json" + TOGETHER
    )
    export.add_argument("--name", help="submission name (default: the model names)")
    export.add_argument(
        "--model", help="the model whose runs to export, when the logs hold several's"
    )
    export.add_argument(
        "--cases", help="validate completeness and labels against this cases.json" + DATA_FILE
    )
    export.add_argument(
        "--force", action="store_true", help="write even if invalid; overwrite files"
    )
    export.set_defaults(handler=cmd_export)

    judge = commands.add_parser(
        "judge-scores",
        help="write the official judge_scores.json from judged logs",
        description="Write {'scores': [{case_id, gt_final, va_answer, rvf_trace}]} for every "
        "open case whose three components were scored; unscored ones are reported and left "
        "out, never written as zeros.",
    )
    judge.add_argument("logs", nargs="+", metavar="LOG")
    judge.add_argument("--output", required=True, help="judge_scores.json to write" + TOGETHER)
    judge.add_argument(
        "--model", help="the model whose judged runs to write, when the logs hold several's"
    )
    judge.add_argument(
        "--scorer",
        metavar="NAME",
        help="of a log judged several times (inspect score --action append), the score to "
        "write (open_ended_scorer, open_ended_scorer1, ...); refused without it",
    )
    judge.add_argument("--force", action="store_true", help="overwrite the output file")
    judge.set_defaults(handler=cmd_judge_scores)


def cmd_export(args: argparse.Namespace) -> int:
    outputs = OutputSet(args.force, [*args.logs, args.cases])
    output = outputs.add(args.output)
    zip_path = outputs.add(args.zip) if args.zip else None
    skipped: list[str] = []
    logs = log_files(args.logs, skipped)
    report = export_results(logs, args.name, args.model)
    report.notes[:0] = skipped
    cases = case_specs(Path(args.cases)) if args.cases else None
    problems = report.problems + submission_problems(
        report.submission.model_dump(exclude_none=True), cases
    )
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if problems and not args.force:
        print_problems(
            f"refusing to write {args.output}: the submission would be invalid", problems
        )
        return EXIT_FAILED
    if problems:
        print_problems("writing an INVALID submission because of --force", problems)
    print_notes(write_results(report.submission, outputs, output, zip_path))
    counts = {t: sum(a.task_type == t for a in report.submission.answers) for t in ("mcq", "open")}
    print(
        f"wrote {args.output} ({len(report.submission.answers)} answers: {counts['mcq']} mcq, "
        f"{counts['open']} open)" + (f" and {args.zip}" if args.zip else "")
    )
    return EXIT_OK


def cmd_judge_scores(args: argparse.Namespace) -> int:
    outputs = OutputSet(args.force, args.logs)
    output = outputs.add(args.output)
    skipped: list[str] = []
    document, unscored, notes = judge_scores_from_logs(
        log_files(args.logs, skipped), args.model, args.scorer
    )
    for note in [*skipped, *notes]:
        print(f"note: {note}", file=sys.stderr)
    print_notes(outputs.write({output: strict_json.dumps(document, indent=2) + "\n"}))
    print(f"wrote {args.output} ({len(document['scores'])} open cases)")
    if unscored:
        print_problems("left out (not written as zeros)", unscored)
    return EXIT_OK
