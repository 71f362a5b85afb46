"""Reading eval logs for the analyses: which files are logs (:func:`log_files`), the
headers of this package's runs (:func:`medreason_headers`), and samples one at a time.

The command line needs little of a sample (its id, metadata, reply, error and scores) and reads
thousands of them. Inspect's readers validate the whole sample, events and all, which
costs about 3 ms a sample (a 4,000-case export took 15 s, two thirds of it in pydantic
validation of events the export never looks at). A local ``.eval`` log is a zip of one
JSON entry per sample, so :func:`logged_samples` reads those entries directly with the
standard library (the zstd codec Inspect itself registers for ``zipfile``), keeps only
the fields it needs, and validates them with Inspect's own ``ModelOutput``, ``EvalError``
and ``Score``: about 0.25 ms a sample. Whenever that reading does not apply (a ``.json``
log, a remote log, a log whose entries are not named as expected, an older log without
sample ids in its header, a codec this Python lacks) it falls back to Inspect's public
readers, which give the same records (a test holds the two to each other).

Headers likewise: Inspect's header-only read also loads the per-sample epoch reductions
(9 MB, 0.5 s and 25 MiB for a 4,000-case log) that no command here uses, so a local
``.eval`` log's ``header.json`` is read on its own (1 ms).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import sys
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar
from urllib.parse import unquote, urlparse

import yaml
from inspect_ai.log import (
    EvalError,
    EvalLog,
    EvalLogInfo,
    EvalSample,
    list_eval_logs,
    read_eval_log,
    read_eval_log_sample_summaries,
    read_eval_log_samples_by_id,
)
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.core.errors import invalid_fields
from inspect_medreason.core.user_files import (
    MAX_JSON_LOG_BYTES,
    UserFileError,
    check_regular_file,
)

if sys.version_info < (3, 14):
    # Python before 3.14 has no zstd codec for zipfile; this is the package Inspect
    # itself uses to register one (and writes its .eval logs with).
    import zipfile_zstd  # noqa: F401

__all__ = [
    "LoggedSample",
    "PathArg",
    "Progress",
    "TaskRecord",
    "UnreadableSample",
    "log_files",
    "log_header",
    "logged_samples",
    "medreason_headers",
    "no_progress",
    "one_attempt_per_run",
    "task_record",
]

SampleKey = tuple[int | str, int]
Item = TypeVar("Item")

# A log, a folder of logs or a file as a user names it (the command passes its arguments).
PathArg = str | os.PathLike[str]


class Progress(Protocol):
    """Shows progress over long work: yields ``items`` as it draws ``total`` steps named
    ``description`` (the ``medreason`` command passes its progress bars; a notebook may pass
    its own, e.g. one over ``tqdm``). The analyses show none unless given one."""

    def __call__(
        self, items: Iterable[Item], description: str, total: int | None = None
    ) -> Iterator[Item]: ...


def no_progress(
    items: Iterable[Item], description: str, total: int | None = None
) -> Iterator[Item]:
    """The :class:`Progress` that shows nothing."""
    return iter(items)


# Compression methods zipfile can read here (zstd: registered above, or stdlib from 3.14).
_READABLE_CODECS = frozenset(
    {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED}
    | ({zipfile.ZIP_ZSTANDARD} if hasattr(zipfile, "ZIP_ZSTANDARD") else set())
)

# A sample entry larger than this is refused, not read into memory: a sample with its
# images logged is a few MB; a zip bomb declares gigabytes.
MAX_ENTRY_BYTES = 512 * 1024 * 1024

# Samples read per call on Inspect's path: enough that Inspect parses the zip's directory
# rarely, few enough that memory stays flat in the size of the log.
SAMPLE_BATCH = 250
# On Inspect's path samples are read whole although only a few fields are needed: with any
# field excluded, Inspect (0.3.285) streams the entry through ijson and keeps its last
# decompressed chunk for the rest of the process (+24 MiB per 1,000 samples, measured).


class LoggedSample(BaseModel):
    """What the command line reads of one logged sample: never its messages, events or
    attachments (the images)."""

    model_config = ConfigDict(frozen=True)

    id: int | str
    epoch: int
    metadata: dict[str, Any] = Field(default_factory=dict)
    completion: str = ""
    error: str | None = None
    scores: dict[str, Score] = Field(default_factory=dict)
    choices: list[str] = Field(default_factory=list)  # an MCQ sample's option texts

    @classmethod
    def from_eval_sample(cls, sample: EvalSample) -> LoggedSample:
        return cls(
            id=sample.id,
            epoch=sample.epoch,
            metadata=sample.metadata or {},
            completion=sample.output.completion if sample.output else "",
            error=sample.error.message if sample.error is not None else None,
            scores=sample.scores or {},
            choices=sample.choices or [],
        )

    @classmethod
    def from_entry(cls, data: dict[str, Any], key: SampleKey) -> LoggedSample | UnreadableSample:
        """From a sample's JSON entry, through Inspect's models for the reply and error
        (``ModelOutput`` fills an empty completion from the first choice). A field that is
        not what Inspect writes makes the sample unreadable, named with that field."""
        try:
            output = _field(data, "output", dict)
            error = _field(data, "error", dict)
            scores = _field(data, "scores", dict) or {}
            choices = _field(data, "choices", list) or []
            if not all(isinstance(choice, str) for choice in choices):
                raise _FieldError("choices", "not a list of option texts")
            return cls(
                id=data["id"],
                epoch=data["epoch"],
                metadata=_field(data, "metadata", dict) or {},
                completion=_validated(ModelOutput, output, "output").completion if output else "",
                error=_validated(EvalError, error, "error").message if error is not None else None,
                scores={
                    name: _validated(Score, score, f"scores.{name}")
                    for name, score in scores.items()
                },
                choices=choices,
            )
        except _FieldError as problem:
            return UnreadableSample(key[0], key[1], problem.field, problem.reason)


@dataclass(frozen=True)
class UnreadableSample:
    """A logged sample with a field that is not what Inspect writes (an edited or foreign
    log): the readers name it with its field and go on with the other samples, instead of
    refusing the whole log or reading a value that is not one."""

    id: int | str
    epoch: int
    field: str
    reason: str

    def describe(self) -> str:
        return (
            f"case {str(self.id)!r} (epoch {self.epoch}): its logged field {self.field!r} "
            f"cannot be read ({self.reason}; an edited or foreign log?); re-run the case"
        )


class _FieldError(Exception):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


def _field(data: dict[str, Any], name: str, kind: type) -> Any:
    value = data.get(name)
    if value is not None and not isinstance(value, kind):
        raise _FieldError(name, f"a {type(value).__name__}, not a {kind.__name__}")
    return value


def _validated(model: type[BaseModel], value: Any, field: str) -> Any:
    try:
        return model.model_validate(value)
    except ValidationError as error:
        raise _FieldError(*_first_problem(error, field)) from None


def _first_problem(error: ValidationError, prefix: str = "") -> tuple[str, str]:
    """The first invalid field of a pydantic error (dotted, under ``prefix``) and why,
    bounded."""
    field, reason = invalid_fields(error, prefix)[0]
    return field or "(sample)", reason if len(reason) <= 200 else reason[:200] + "..."


class _Record(BaseModel):
    # Fields a newer version adds are kept, not refused; a known field of the wrong type is.
    model_config = ConfigDict(extra="allow", frozen=True)


class DataRecord(_Record):
    cases_file: str | None = None
    cases_sha256: str | None = None
    ground_truth_file: str | None = None
    ground_truth_sha256: str | None = None
    num_cases: int | None = None


class TemplateRecord(_Record):
    sha256: str | None = None


class ExtractionRecord(_Record):
    mode: str | None = None


class JudgesRecord(_Record):
    settings: dict[str, Any] = Field(default_factory=dict)
    panel_reduce: str = "median"
    templates: dict[str, TemplateRecord] = Field(default_factory=dict)


class TaskRecord(_Record):
    """The record of a MedReason run's choices that the tasks write into the log header's
    task metadata (``run_record``), as the command line reads it: a field of the wrong
    type (an edited header) is a refusal naming it, not a crash or a guess."""

    data: DataRecord
    prompts: dict[str, TemplateRecord] = Field(default_factory=dict)
    extraction: ExtractionRecord = Field(default_factory=ExtractionRecord)
    judges: JudgesRecord | None = None
    images: bool | None = None
    shuffle_choices: bool | None = None
    shuffle_seed: int | None = None


def task_record(header: EvalLog) -> TaskRecord:
    """The header's run record; ValueError naming the field that cannot be read."""
    try:
        return TaskRecord.model_validate(header.eval.metadata or {})
    except ValidationError as error:
        field, reason = _first_problem(error, "eval.metadata")
        raise ValueError(f"its run record cannot be read: {field}: {reason}") from None


PACKAGE = "inspect_medreason"
# Tasks renamed since: old name -> current name. Logs written under the old name are read
# as the current task (the same data, scorer and sample ids; only the name moved), so every
# subcommand pairs, groups and labels them with the new runs. ``vqa_rad`` became
# ``medreason_vqa_rad`` in task version 5-B: inspect_evals ships its own ``vqa_rad`` and one
# register holds both.
RENAMED_TASKS = {"vqa_rad": "medreason_vqa_rad"}


def task_name(header: EvalLog) -> str:
    """The log's task under its current name: this plugin's task (an old name mapped to its
    new one), or the name the log records for another's."""
    return plugin_task(header) or header.eval.task


def plugin_task(header: EvalLog) -> str | None:
    """The name of this plugin's task that wrote the log, or None for another's log.

    A task is recognised whichever way it was run: by its registered name
    (``inspect eval inspect_medreason/mcq``: ``inspect_medreason/mcq``); by its file
    (``inspect eval <path>/medreason/medreason.py@mcq``, as an inspect_evals register entry
    runs it: the name is then plain ``mcq`` and the log names the file); or, when Inspect
    recorded neither (a task object run from Python), by its name together with the run
    record this plugin's tasks write (``task_version`` and ``data`` in the task metadata).
    The file is only compared as text, never opened."""
    names = [str(name) for name in (header.eval.task_registry_name, header.eval.task) if name]
    for name in names:
        if name.startswith(f"{PACKAGE}/"):
            plain = name.removeprefix(f"{PACKAGE}/")
            return RENAMED_TASKS.get(plain, plain)
    files = task_files()
    recorded = {"task_version", "data"} <= (header.eval.metadata or {}).keys()
    for name in names:
        if name not in files:
            continue
        # Inspect records the file relative to the folder it ran in: from inside the
        # package it is "medreason/medreason.py", which names less, so the run record must
        # agree too.
        task_file = header.eval.task_file
        given = [part for part in (task_file or "").replace("\\", "/").split("/") if part]
        expected = [PACKAGE, *files[name].split("/")]
        if given and given[-len(expected) :] == expected:
            return RENAMED_TASKS.get(name, name)
        if recorded and (
            not given or (len(given) < len(expected) and expected[-len(given) :] == given)
        ):
            return RENAMED_TASKS.get(name, name)
    return None


@cache
def task_files() -> dict[str, str]:
    """Each task of the plugin and the file that defines it, under the package folder
    (``mcq``: ``medreason/medreason.py``)."""
    from inspect_medreason import _registry  # imported only when a log needs it

    files: dict[str, str] = {}
    # The tasks are the ones the families' eval.yaml list (as the register entries are).
    for listing in Path(_registry.__file__).parent.glob("*/eval.yaml"):
        for entry in yaml.safe_load(listing.read_text(encoding="utf-8"))["tasks"]:
            module = inspect.unwrap(getattr(_registry, entry["name"])).__module__
            files[entry["name"]] = "/".join(module.split(".")[1:]) + ".py"
    # An old log run by file names the old task and the same file.
    files.update({old: files[new] for old, new in RENAMED_TASKS.items()})
    return files


def log_header(path: Path) -> EvalLog:
    """A log's header (no samples, no per-sample reductions).

    Read from a local ``.eval`` log's ``header.json`` when it has one; otherwise (a run
    still going has only its journal, a ``.json`` log, a remote one) and whenever that entry
    cannot be read or validated, Inspect's own header-only read decides, and raises what it
    raises."""
    if path.suffix == ".eval" and path.is_file():
        try:
            with zipfile.ZipFile(path) as archive:
                info = archive.getinfo("header.json")
                if info.file_size <= MAX_ENTRY_BYTES and _codec_supported(info.compress_type):
                    header = EvalLog.model_validate(json.loads(archive.read(info)))
                    header.location = str(path)
                    return header
        except Exception:  # not swallowed: Inspect's reader below reads it again and reports
            pass
    return read_eval_log(str(path), header_only=True)


def header_disagrees_with_start(path: Path, header: EvalLog) -> str | None:
    """Why a ``.eval`` log's header cannot be trusted to name its run: Inspect writes the
    run's spec twice, in ``_journal/start.json`` when the run starts and in ``header.json``
    at its end, and they name the same task and ``task_id``. A header naming another task
    than its own start record (an edited or assembled file) is the header of another run
    than the samples beside it. None when they agree, or when there is no start record to
    compare (a ``.json`` log, an entry too large or unreadable: the header stands)."""
    if path.suffix != ".eval" or not path.is_file():
        return None
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("_journal/start.json")
            if info.file_size > MAX_ENTRY_BYTES or not _codec_supported(info.compress_type):
                return None
            start = json.loads(archive.read(info)).get("eval") or {}
    except Exception:  # no start record to compare with
        return None
    if not isinstance(start, dict):
        return None
    for field in ("task", "task_id"):
        started, ended = start.get(field), getattr(header.eval, field)
        if started is not None and started != ended:
            return (
                f"its header names {field} {_brief(ended)} but its start record "
                f"{_brief(started)} (an edited or assembled log)"
            )
    return None


def header_sample_keys(header: EvalLog) -> list[SampleKey]:
    """Every (id, epoch) the run was given, in the dataset's order."""
    epochs = header.eval.config.epochs or 1
    return [
        (sample_id, epoch)
        for sample_id in header.eval.dataset.sample_ids or []
        for epoch in range(1, epochs + 1)
    ]


def absent_samples(header: EvalLog, read: set[SampleKey]) -> list[SampleKey]:
    """The samples a finished run's header lists that were not read from its file.

    A successful run writes every sample it lists, so an absent one means a damaged or
    edited file (a lost or renamed entry): its case would otherwise go missing without a
    word. An unfinished run's absent samples are expected (its status says so)."""
    if header.status != "success":
        return []
    return [key for key in header_sample_keys(header) if key not in read]


def logged_samples(path: Path, header: EvalLog) -> Iterator[LoggedSample | UnreadableSample]:
    """Every sample of a log, in the dataset's order (a sample the run did not finish is
    absent), one at a time; a sample whose fields are not what Inspect writes comes as an
    :class:`UnreadableSample` naming the field. Damage to the file itself (a failed
    checksum, an entry holding another sample, an oversized entry) raises: nothing of such
    a log is to be trusted."""
    keys = header_sample_keys(header)
    entries = _zip_entries(path, keys)
    if entries is None:
        for sample in _inspect_samples(path, keys):
            yield (
                sample
                if isinstance(sample, UnreadableSample)
                else LoggedSample.from_eval_sample(sample)
            )
        return
    archive, names = entries
    with archive:
        for key, name in zip(keys, names, strict=True):
            if name is None:  # a sample the run did not finish
                continue
            declared = archive.getinfo(name).file_size
            if declared > MAX_ENTRY_BYTES:
                # zipfile stops at the declared size (and fails the checksum beyond it), so
                # the declaration bounds what is held; a bomb is refused before reading.
                raise ValueError(f"entry {name} declares {declared:,} bytes; refused")
            try:
                data = json.loads(archive.read(name))
            except (ValueError, RecursionError):  # not JSON, or nested past the parser's limit
                # (a failed checksum is BadZipFile: it is raised, the file is damaged)
                yield UnreadableSample(key[0], key[1], "(entry)", "not a JSON document")
                continue
            if not isinstance(data, dict):
                yield UnreadableSample(key[0], key[1], "(entry)", "not a JSON object")
                continue
            if (data.get("id"), data.get("epoch")) != key:
                raise ValueError(
                    f"entry {name} holds sample {_brief(data.get('id'))} epoch "
                    f"{_brief(data.get('epoch'))}"
                )
            yield LoggedSample.from_entry(data, key)


def _brief(value: Any) -> str:
    if not isinstance(value, str | int | float | None):
        return f"<a {type(value).__name__}>"
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


def _entry_name(key: SampleKey) -> str:
    # How Inspect names a sample's entry in an .eval zip (stable since the format's first
    # version); an entry that is not found this way sends the whole log to Inspect's reader.
    return f"samples/{key[0]}_epoch_{key[1]}.json"


def _zip_entries(
    path: Path, keys: list[SampleKey]
) -> tuple[zipfile.ZipFile, list[str | None]] | None:
    """The open archive and each key's entry (None for a sample the log does not hold),
    or None when this log is not one to read directly."""
    if path.suffix != ".eval" or not keys or not path.is_file():
        return None
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile):
        return None
    present = {info.filename: info for info in archive.infolist()}
    names = [_entry_name(key) for key in keys]
    held = [name for name in names if name in present]
    listed = sum(1 for name in present if name.startswith("samples/"))
    codecs_known = all(_codec_supported(present[name].compress_type) for name in held)
    # Every sample entry must be one the header names (else the naming differs from
    # what is assumed here, and Inspect's reader decides), and readable with our codecs.
    if not held or len(held) != listed or not codecs_known:
        archive.close()
        return None
    return archive, [name if name in present else None for name in names]


def _codec_supported(compress_type: int) -> bool:
    return compress_type in _READABLE_CODECS


def _inspect_samples(path: Path, keys: list[SampleKey]) -> Iterator[EvalSample | UnreadableSample]:
    """Every sample through Inspect's public reader, in batches.

    ``read_eval_log_samples`` parses the zip's central directory again for every sample it
    yields (quadratic: 53 s for a 4,000-case log); ``read_eval_log_samples_by_id`` parses
    it once per call. The sample summaries, which cost as much memory as a few batches, are
    read only when a batch names a sample the log does not hold (an unfinished run) or the
    header lists no ids.
    """
    present: set[SampleKey] | None = None
    if not keys:
        present = _summary_keys(path)
        keys = sorted(present, key=lambda key: (str(key[0]), key[1]))
    for start in range(0, len(keys), SAMPLE_BATCH):
        batch = keys[start : start + SAMPLE_BATCH]
        try:
            samples = _samples_by_id(path, batch)
        except IndexError:  # a sample the header lists is not in the log
            present = present if present is not None else _summary_keys(path)
            samples = _samples_by_id(path, [key for key in batch if key in present])
        yield from samples


def _samples_by_id(path: Path, batch: list[SampleKey]) -> list[EvalSample | UnreadableSample]:
    """A batch through Inspect's reader; when a sample in it does not validate, each of the
    batch's samples on its own, so that only the invalid ones are left out."""
    try:
        return list(read_eval_log_samples_by_id(str(path), batch))
    except ValidationError:
        pass
    samples: list[EvalSample | UnreadableSample] = []
    for key in batch:
        try:
            samples.extend(read_eval_log_samples_by_id(str(path), [key]))
        except ValidationError as error:
            if error.errors()[0]["loc"][:1] == ("samples",):
                # A .json log is validated whole: no sample of it can be read on its own.
                raise
            samples.append(UnreadableSample(key[0], key[1], *_first_problem(error)))
    return samples


def _summary_keys(path: Path) -> set[SampleKey]:
    return {(summary.id, summary.epoch) for summary in read_eval_log_sample_summaries(str(path))}


@dataclass(frozen=True)
class RunAttempts:
    """The logs of a folder, one attempt per run: what was used, what was left and why."""

    used: list[tuple[Path, EvalLog]]
    notes: list[str]
    conflicts: list[str]  # two complete attempts of one run that differ: a refusal


# What to do with two judgings of one run: complete attempts with the same replies and
# other scores (``inspect score`` wrote a re-judged copy, which keeps the run's task_id).
# "each": use every judging (the leaderboard's rows, agreement's raters); "newest": the
# newest (export reads only the replies); "refuse": name them (a command that reads one
# judging and cannot choose).
Judgings = Literal["each", "newest", "refuse"]


def one_attempt_per_run(
    headers: list[tuple[Path, EvalLog]], judgings: Judgings = "refuse"
) -> RunAttempts:
    """Each run's latest complete attempt.

    ``inspect eval-retry`` (and ``inspect eval-set``, which retries failed tasks the same
    way) writes a new log for a run with the run's own ``task_id``: an interrupted run and
    its resumed attempts are one run in several files, and a folder holding them must count
    each case once. So logs are grouped by ``task_id``; a run's newest successful attempt
    is used (or, when none succeeded, its newest attempt, which the command then treats as
    the unfinished run it is), and every other attempt is named and left out. Two
    successful attempts are both complete: when their replies differ neither can be
    preferred silently, and the run is a conflict to refuse. When only their scores differ
    they are two judgings of the run's replies (``inspect score`` keeps the ``task_id``),
    handled as ``judgings`` says.
    """
    runs: dict[str, list[tuple[Path, EvalLog]]] = {}
    for path, header in headers:
        runs.setdefault(header.eval.task_id or f"file:{path}", []).append((path, header))
    used: list[tuple[Path, EvalLog]] = []
    notes: list[str] = []
    conflicts: list[str] = []
    for run, attempts in runs.items():
        if len(attempts) == 1:
            used.extend(attempts)
            continue
        attempts.sort(key=_attempt_order, reverse=True)  # newest first
        complete = [attempt for attempt in attempts if attempt[1].status == "success"]
        chosen = complete[0] if complete else attempts[0]
        # read the chosen attempt's samples once, however many attempts it is held to
        chosen_outcome = _outcome(*chosen) if len(complete) > 1 else _Outcome("", "", "")
        outcomes = [(path, header, _outcome(path, header)) for path, header in complete[1:]]
        # Other replies, or the same scores with other reported results (an edited header),
        # are attempts that differ; the same replies with other scores are another judging.
        differing = [
            path
            for path, _, outcome in outcomes
            if outcome.replies != chosen_outcome.replies
            or (outcome.scores == chosen_outcome.scores and outcome != chosen_outcome)
        ]
        if differing:
            conflicts.append(
                f"run {run} has several complete attempts that differ: {chosen[0]} and "
                + ", ".join(str(path) for path in differing)
                + "; pass the attempt you mean (or move the other out of the folder)"
            )
            continue
        # each attempt whose scores differ from every newer one's is a judging of its own
        judged: list[tuple[Path, EvalLog]] = [chosen]
        seen = {chosen_outcome.scores}
        for path, header, outcome in outcomes:
            if outcome.scores not in seen:
                seen.add(outcome.scores)
                judged.append((path, header))
        if len(judged) > 1 and judgings == "refuse":
            conflicts.append(
                f"run {run} was judged several times ({len(judged)} logs with the same replies "
                "and other scores: "
                + ", ".join(str(path) for path, _ in judged)
                + "); pass the log of the judging you mean"
            )
            continue
        kept = judged if judgings == "each" and len(judged) > 1 else [chosen]
        used.extend(kept)
        what = "its latest complete attempt" if complete else "its latest attempt (none finished)"
        if len(kept) > 1:
            notes.append(
                f"run {run}: {len(kept)} judgings of its replies used, each on its own: "
                + ", ".join(str(path) for path, _ in kept)
            )
        else:
            notes.append(f"{chosen[0]}: used, {what} of run {run} ({len(attempts)} attempts)")
        kept_paths = {path for path, _ in kept}
        for path, header in attempts:
            if path not in kept_paths:
                if header.status != "success":
                    why = f"status {header.status!r}, superseded"
                elif any(path == other for other, _ in judged):
                    why = "another judging of the same replies, older (export reads replies only)"
                else:
                    why = "the same results, an earlier complete attempt"
                notes.append(f"{path}: left out, an attempt of run {run} ({why})")
    order = {path: index for index, (path, _) in enumerate(headers)}
    used.sort(key=lambda item: order[item[0]])
    return RunAttempts(used, notes, conflicts)


def _attempt_order(attempt: tuple[Path, EvalLog]) -> tuple[str, int]:
    path, header = attempt
    try:
        written = path.stat().st_mtime_ns
    except OSError:
        written = 0
    return header.eval.created, written


@dataclass(frozen=True)
class _Outcome:
    """What a complete attempt found, as digests: ``replies`` its model and each case's
    reply and error; ``scores`` each case's scores; ``results`` that with every reported
    metric."""

    replies: str
    scores: str
    results: str


def _outcome(path: Path, header: EvalLog) -> _Outcome:
    """A complete attempt's outcome (read only when a run has two complete attempts). An
    attempt whose samples cannot be read is its own outcome: it never passes for another."""
    replies, scored = hashlib.sha256(), hashlib.sha256()
    try:
        for sample in logged_samples(path, header):
            reply, judged = _sample_outcome(sample)
            replies.update(json.dumps(reply, sort_keys=True, default=str).encode())
            scored.update(json.dumps(judged, sort_keys=True, default=str).encode())
    except Exception as error:  # damaged: unlike any other attempt
        replies.update(f"unreadable {path}: {error}".encode())
    metrics = {
        # a dictionary of metrics logs one result per key for each scorer: the scorer too
        f"{score.scorer}/{score.name}/{score.reducer}": {
            name: m.value for name, m in score.metrics.items()
        }
        for score in (header.results.scores if header.results else [])
    }
    reply_digest = json.dumps({"model": header.eval.model, "samples": replies.hexdigest()})
    scores_digest = reply_digest + scored.hexdigest()
    return _Outcome(
        reply_digest,
        scores_digest,
        scores_digest + json.dumps(metrics, sort_keys=True, default=str),
    )


def _sample_outcome(sample: LoggedSample | UnreadableSample) -> tuple[Any, Any]:
    if isinstance(sample, UnreadableSample):
        return ["unreadable", sample.id, sample.epoch, sample.field], []
    return (
        [sample.id, sample.epoch, sample.completion, sample.error],
        {name: [score.value, score.answer] for name, score in sample.scores.items()},
    )


# --- which files are logs of this package's runs ---------------------------------------


def log_files(paths: Iterable[PathArg], notes: list[str] | None = None) -> list[Path]:
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
    # A .eval log is read entry by entry, each entry within MAX_ENTRY_BYTES.
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
    logs: list[Path],
    notes: list[str],
    judgings: Judgings = "refuse",
    progress: Progress = no_progress,
) -> list[tuple[Path, EvalLog]]:
    """The headers of the logs this package's challenge tasks wrote, one attempt per run
    (``one_attempt_per_run``: an interrupted run resumed with ``inspect eval-retry`` counts
    once); anything else (an unreadable or corrupt file, a log of another task, an exported
    results.json) is skipped with a one-line note. Refuses two complete attempts of one run
    that differ; two judgings of one run (the same replies, other scores) as ``judgings``
    says."""
    headers: list[tuple[Path, EvalLog]] = []
    for path in progress(logs, "reading log headers", len(logs)):
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
