"""The official ``scoring.py`` and ``validate_submission.py``, decision for decision.

Both official scripts stop at the first problem (or crash on a malformed file); these
functions take the same decision on every input (accept or refuse) but list every problem
at once, and on acceptance produce the official scorer's output byte for byte: the same
keys and order, integers where its gate returns them, means from ``statistics.mean``,
non-ASCII written as is, compact JSON unless ``pretty``.

Where the official scripts accept what their own documentation or rubric forbids (a judge
score of NaN, 7 or "3", a judge row for an unknown case, a null answer read as the text
"None", extra members in a submission zip, a missing ``version``) the input is accepted
as they accept it, and every such value is named in a warning; ``strict`` turns the
warnings into refusals. One deliberate difference: a metrics file never holds NaN or
Infinity (they are not JSON); such a value is written as ``null`` and warned about.

:func:`score_submission` and :func:`validate_submission` read the files and give typed
results; ``cli/official.py`` is the ``medreason score`` and ``medreason validate`` commands
around them.
"""

from __future__ import annotations

import io
import json
import math
import statistics
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspect_medreason.analysis.display import NotebookDisplay
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.logs import PathArg, Progress, no_progress
from inspect_medreason.core.gate import gate_visual_accuracy
from inspect_medreason.core.loaders import near_miss
from inspect_medreason.core.strict_json import finite_or_null
from inspect_medreason.core.user_files import (
    MAX_DATA_BYTES,
    UserFileError,
    read_user_bytes,
    read_user_json,
)

if TYPE_CHECKING:
    import pandas

__all__ = [
    "OfficialScore",
    "SubmissionCheck",
    "SubmissionRefused",
    "score_like_official",
    "score_submission",
    "validate_like_official",
    "validate_submission",
]

# The official scorer's task types; validate_submission.py has the same minus free_text.
SCORER_TASK_TYPES = {
    "mcq": "mcq",
    "closed": "mcq",
    "closed_ended": "mcq",
    "closed-ended": "mcq",
    "multiple_choice": "mcq",
    "open": "open",
    "open_ended": "open",
    "open-ended": "open",
    "free_text": "open",
}
VALIDATOR_TASK_TYPES = {k: v for k, v in SCORER_TASK_TYPES.items() if k != "free_text"}
JUDGE_KEYS = ("gt_final", "va_answer", "rvf_trace")
RESULTS_FILE_NAME = "results.json"
RESULTS_VERSION = {"major": 1, "minor": 0}
# A submission's results.json is read from a zip up to this size: a zip bomb is refused
# instead of filling memory (the official validator has no limit). The same as a
# results.json given as is.
MAX_MEMBER_BYTES = MAX_DATA_BYTES


@dataclass
class Verdict:
    """What an official script would decide, with every problem and warning found."""

    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def refused(self, strict: bool = False) -> bool:
        return bool(self.problems) or (strict and bool(self.warnings))


@dataclass
class ScoreOutcome(Verdict):
    result: dict[str, Any] | None = None


def read_json(path: Path, what: str, verdict: Verdict) -> Any:
    """The file's JSON as ``json.load`` reads it (NaN and Infinity literals included), or
    None with a problem."""
    try:
        # A regular file within the limit (never a FIFO, a device or a link to one).
        return read_user_json(path, MAX_DATA_BYTES, what)
    except UserFileError as error:
        verdict.problems.append(str(error))
    return None


def _rows(payload: Any, key: str, what: str, verdict: Verdict) -> list[Any]:
    """``payload[key]`` for an object, the payload itself for a bare list."""
    rows = payload.get(key) if isinstance(payload, dict) else payload
    if not isinstance(rows, list):
        verdict.problems.append(
            f"{what}: expected a list of entries or an object with a {key!r} list"
        )
        return []
    return rows


def _text(item: dict[str, Any], key: str) -> str:
    """The official reading of a field: ``str(value).strip()``, "" when absent."""
    return str(item.get(key, "")).strip()


def _task_type(value: Any, aliases: dict[str, str], where: str, verdict: Verdict) -> str | None:
    normalised = aliases.get(str(value).strip().lower())
    if normalised is None:
        verdict.problems.append(f"{where}: task_type {value!r} is not one of {sorted(aliases)}")
    return normalised


def _note_non_string(item: dict[str, Any], key: str, where: str, verdict: Verdict) -> None:
    value = item.get(key)
    if key in item and not isinstance(value, str):
        verdict.warnings.append(
            f"{where}: {key} is {json.dumps(value)}, not a string; the official scorer reads it "
            f"as the text {str(value).strip()!r}"
        )


def _keyed_rows(
    payload: Any, key: str, what: str, verdict: Verdict
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(case id, where, row) for each row of a file that is an object with a case id not
    seen before, as the official loaders take them; every other row is a problem."""
    seen: set[str] = set()
    for index, item in enumerate(_rows(payload, key, what, verdict)):
        where = f"{what} {key}[{index}]"
        if not isinstance(item, dict):
            verdict.problems.append(f"{where}: expected an object")
            continue
        case_id = _text(item, "case_id")
        if not case_id:
            verdict.problems.append(f"{where}: case_id is required")
            continue
        where = f"{what} case {case_id!r}"
        if case_id in seen:
            verdict.problems.append(f"{where}: a second entry for this case")
            continue
        seen.add(case_id)
        yield case_id, where, item


def _predictions(payload: Any, verdict: Verdict) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for case_id, where, item in _keyed_rows(payload, "answers", "predictions", verdict):
        if item.get("case_id") != case_id:
            _note_non_string(item, "case_id", where, verdict)
        task_type = _task_type(item.get("task_type", ""), SCORER_TASK_TYPES, where, verdict)
        answer, trace = _text(item, "answer"), _text(item, "reasoning_trace")
        if not answer:
            verdict.problems.append(f"{where}: answer is required (missing or blank)")
        else:
            _note_non_string(item, "answer", where, verdict)
        if task_type == "open":
            if not trace:
                verdict.problems.append(f"{where}: reasoning_trace is required for open cases")
            else:
                _note_non_string(item, "reasoning_trace", where, verdict)
        found[case_id] = {"task_type": task_type, "answer": answer}
    return found


def _ground_truth(payload: Any, verdict: Verdict) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for case_id, where, item in _keyed_rows(payload, "cases", "ground truth", verdict):
        task_type = _task_type(item.get("task_type", ""), SCORER_TASK_TYPES, where, verdict)
        answer = item.get("answer")
        if answer is not None and not isinstance(answer, str):
            _note_non_string(item, "answer", where, verdict)
        if task_type == "mcq" and answer is not None and not str(answer).strip():
            verdict.warnings.append(f"{where}: the MCQ answer is blank; no prediction can match it")
        found[case_id] = {
            "task_type": task_type,
            "answer": str(answer).strip() if answer is not None else None,
        }
    return found


def _judge_value(item: dict[str, Any], key: str, where: str, verdict: Verdict) -> float | None:
    """``float(item[key])`` as the official scorer computes it, with the rubric's checks as
    warnings (integers 0 to 4)."""
    if key not in item:
        verdict.problems.append(f"{where}: {key} is missing")
        return None
    raw = item[key]
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        verdict.problems.append(f"{where}: {key} is {json.dumps(raw)}, not a number")
        return None
    shown = json.dumps(raw)
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        verdict.warnings.append(f"{where}: {key} is {shown}, not a number; read as {value!r}")
    if not math.isfinite(value):
        verdict.warnings.append(f"{where}: {key} is {shown}, not a finite score")
    elif not 0 <= value <= 4 or not value.is_integer():
        verdict.warnings.append(
            f"{where}: {key} is {shown}, outside the rubric (integers 0 to 4)"
            + ("; the gate caps only RVF <= 1 and RVF == 2" if key == "rvf_trace" else "")
        )
    return value


def _judge_scores(payload: Any, verdict: Verdict) -> dict[str, tuple[float, float, float]]:
    found: dict[str, tuple[float, float, float]] = {}
    for case_id, where, item in _keyed_rows(payload, "scores", "judge scores", verdict):
        values = [_judge_value(item, key, where, verdict) for key in JUDGE_KEYS]
        gt, va, rvf = (value if value is not None else math.nan for value in values)
        found[case_id] = (gt, va, rvf)
    return found


def score_like_official(
    predictions: Any,
    ground_truth: Any,
    judge_scores: Any | None,
    progress: Progress = no_progress,
) -> ScoreOutcome:
    """Score parsed predictions, ground truth and (optional) judge scores as the official
    scorer does; the outcome's ``result`` is None when it would refuse."""
    outcome = ScoreOutcome()
    preds = _predictions(predictions, outcome)
    truth = _ground_truth(ground_truth, outcome)
    judged = _judge_scores(judge_scores, outcome) if judge_scores is not None else {}
    missing = [case_id for case_id in truth if case_id not in preds]
    extra = [case_id for case_id in preds if case_id not in truth]
    if missing:
        outcome.problems.append(f"no prediction for {len(missing)} case(s): {missing[:20]}")
    if extra:
        outcome.problems.append(f"predictions for {len(extra)} unknown case(s): {extra[:20]}")
    unused = [case_id for case_id in judged if case_id not in truth]
    if unused:
        outcome.warnings.append(
            f"judge scores for {len(unused)} case(s) not in the ground truth are ignored: {unused[:20]}"
        )
    mcq: list[float] = []
    gt_values: list[float] = []
    va_values: list[float] = []
    per_case: list[dict[str, Any]] = []
    for case_id, reference in progress(truth.items(), "scoring", len(truth)):
        prediction = preds.get(case_id)
        task_type = reference["task_type"]
        if prediction is None or task_type is None or prediction["task_type"] is None:
            continue
        if prediction["task_type"] != task_type:
            outcome.problems.append(
                f"case {case_id!r}: predicted as {prediction['task_type']!r}, "
                f"the ground truth says {task_type!r}"
            )
        elif task_type == "mcq":
            if reference["answer"] is None:
                outcome.problems.append(f"case {case_id!r}: MCQ ground truth has no answer")
                continue
            correct = float(prediction["answer"].strip() == reference["answer"].strip())
            mcq.append(correct)
            per_case.append({"case_id": case_id, "task_type": "mcq", "mcq_correct": correct})
        elif case_id not in judged:
            outcome.problems.append(
                f"case {case_id!r}: open case without judge scores (pass --judge-scores)"
            )
        else:
            gt, va, rvf = judged[case_id]
            # the one gate: the same expressions as the official scorer's compute_va_final
            va_final = gate_visual_accuracy(va, rvf)
            gt_values.append(gt)
            va_values.append(va_final)
            per_case.append(
                {
                    "case_id": case_id,
                    "task_type": "open",
                    "GT_final": gt,
                    "VA_answer": va,
                    "RVF_trace": rvf,
                    "VA_final": va_final,
                }
            )
    if outcome.problems:
        return outcome
    outcome.result = {
        "metrics": {
            "MCQ Accuracy": statistics.mean(mcq) if mcq else None,
            "Open-ended GT": statistics.mean(gt_values) if gt_values else None,
            "Open-ended VA": statistics.mean(va_values) if va_values else None,
        },
        "counts": {"num_cases": len(truth), "num_mcq": len(mcq), "num_open": len(gt_values)},
        "per_case": per_case,
    }
    return outcome


def metrics_text(result: dict[str, Any], pretty: bool, outcome: Verdict) -> str | None:
    """The official output text (without its final newline), NaN and Infinity as null
    (warned); None, with a problem, when the text cannot be written as UTF-8 (the official
    scorer crashes writing it)."""
    replaced: list[str] = []
    safe = finite_or_null(result, "", replaced)
    for where in replaced:
        outcome.warnings.append(
            f"{where}: written as null (the official scorer writes it as non-standard JSON)"
        )
    text = json.dumps(safe, ensure_ascii=False, indent=2 if pretty else None)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        outcome.problems.append(
            "a case id holds a lone surrogate (\\ud800-\\udfff) that cannot be written as UTF-8"
        )
        return None
    return text


# --- validate_submission.py --------------------------------------------------------------


def read_submission(path: Path, verdict: Verdict) -> Any:
    """The JSON of a ``.json`` submission or of the ``results.json`` in a ``.zip``."""
    suffix = path.suffix.lower()
    if suffix == ".json":
        return read_json(path, "submission", verdict)
    if suffix != ".zip":
        verdict.problems.append(f"{path}: a submission is a results.json or a .zip holding one")
        return None
    try:
        # Read through the user-file checks first: zipfile would open a FIFO and wait.
        packed = read_user_bytes(path, MAX_DATA_BYTES, "submission")
    except UserFileError as error:
        verdict.problems.append(str(error))
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(packed)) as archive:
            names = [name for name in archive.namelist() if not name.endswith("/")]
            if RESULTS_FILE_NAME not in names:
                verdict.problems.append(
                    f"{path}: no results.json at the top level (has {names[:10]})"
                )
                return None
            nested = [name for name in names if "/" in name]
            if nested:
                verdict.problems.append(
                    f"{path}: nested folders or files are not allowed: {nested[:10]}"
                )
                return None
            extra = [name for name in names if name != RESULTS_FILE_NAME]
            if extra:
                verdict.warnings.append(
                    f"{path}: the documentation asks for results.json alone; also holds {extra[:10]}"
                )
            with archive.open(RESULTS_FILE_NAME) as member:
                data = member.read(MAX_MEMBER_BYTES + 1)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        OSError,
        RuntimeError,
        ValueError,
        NotImplementedError,
        EOFError,
        zlib.error,
    ) as error:
        verdict.problems.append(f"{path}: not a readable zip ({error})")
        return None
    if len(data) > MAX_MEMBER_BYTES:
        verdict.problems.append(
            f"{path}: results.json unpacks to more than {MAX_MEMBER_BYTES // 2**20} MiB; refused"
        )
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        verdict.problems.append(f"{path}: results.json is not UTF-8 ({error.reason})")
    except json.JSONDecodeError as error:
        verdict.problems.append(f"{path}: results.json is not valid JSON ({error})")
    except RecursionError:
        verdict.problems.append(f"{path}: results.json is nested too deeply to read")
    return None


def _document_warnings(payload: Any, verdict: Verdict) -> None:
    if not isinstance(payload, dict):
        if isinstance(payload, list):
            verdict.warnings.append(
                "results.json is a bare list; the documented format is an object"
            )
        return
    if "version" not in payload:
        verdict.warnings.append(f"version: missing; the documented value is {RESULTS_VERSION}")
    elif payload["version"] != RESULTS_VERSION:
        verdict.warnings.append(f"version: {payload['version']!r}, documented {RESULTS_VERSION}")
    for key in ("name", "type"):
        if key not in payload:
            verdict.warnings.append(f"{key}: missing (the documented format has it)")


# The keys of an answer in the documented results.json v1.0.
ANSWER_KEYS = frozenset(
    {"case_id", "task_type", "answer", "reasoning_trace", "confidence", "metadata"}
)


def _is_probability(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= 1
    )


def validate_like_official(payload: Any, cases: Any | None, verdict: Verdict) -> int:
    """Apply validate_submission.py's rules to a parsed submission (and, when given, the
    parsed cases.json); return the number of answers."""
    answers = payload.get("answers") if isinstance(payload, dict) else payload
    if not isinstance(answers, list):
        verdict.problems.append("results.json must hold an 'answers' list")
        return 0
    if not all(isinstance(item, dict) for item in answers):
        bad = [i for i, item in enumerate(answers) if not isinstance(item, dict)]
        verdict.problems.append(f"answers{bad[:10]}: every answer must be an object")
        return len(answers)
    _document_warnings(payload, verdict)
    for _, where, item in _keyed_rows(answers, "answers", "submission", verdict):
        for key in sorted(set(item) - ANSWER_KEYS, key=str):
            # the official validator ignores other keys; a misspelt one loses its field
            likely = near_miss(str(key), ANSWER_KEYS)
            verdict.warnings.append(
                f"{where}: unknown key {key!r}"
                + (f" (did you mean {likely!r}?)" if likely else "")
                + f"; the documented keys are {sorted(ANSWER_KEYS)}"
            )
        task_type = _task_type(item.get("task_type", ""), VALIDATOR_TASK_TYPES, where, verdict)
        answer = item.get("answer")
        if not isinstance(answer, str) or not answer.strip():
            verdict.problems.append(f"{where}: answer must be a non-empty string")
        trace = item.get("reasoning_trace", "")
        if task_type == "open" and (not isinstance(trace, str) or not trace.strip()):
            verdict.problems.append(
                f"{where}: reasoning_trace is required and non-empty for open cases"
            )
        confidence = item.get("confidence")
        if confidence is not None and not _is_probability(confidence):
            # the official validator ignores the field; the documented one is a probability
            verdict.warnings.append(
                f"{where}: confidence {json.dumps(confidence)} is not a number from 0 to 1 "
                "(the official validator does not check it)"
            )
    if cases is not None:  # listed even after other problems: all of them at once
        _validate_against_cases(answers, cases, verdict)
    return len(answers)


def _validate_against_cases(answers: list[dict[str, Any]], payload: Any, verdict: Verdict) -> None:
    cases = payload.get("cases") if isinstance(payload, dict) else payload
    if not isinstance(cases, list):
        verdict.problems.append("cases file: must hold a 'cases' list")
        return
    by_answer = {str(item.get("case_id", "")): item for item in answers}
    by_case: dict[str, dict[str, Any]] = {}
    for index, case in enumerate(cases):
        if not isinstance(case, dict) or "case_id" not in case:
            verdict.problems.append(f"cases file cases[{index}]: expected an object with a case_id")
            continue
        by_case[str(case["case_id"])] = case
    missing = [case_id for case_id in by_case if case_id not in by_answer]
    extra = [case_id for case_id in by_answer if case_id not in by_case]
    if missing:
        verdict.problems.append(f"no answer for {len(missing)} case(s): {sorted(missing)[:20]}")
    if extra:
        verdict.problems.append(
            f"answers for {len(extra)} case(s) not in the cases file (ids compare unstripped): "
            f"{sorted(extra)[:20]}"
        )
    for case_id, case in by_case.items():
        item = by_answer.get(case_id)
        where = f"case {case_id!r}"
        expected = _task_type(
            case.get("task_type", ""), VALIDATOR_TASK_TYPES, f"cases file {where}", verdict
        )
        if item is None or expected is None:
            continue
        given = VALIDATOR_TASK_TYPES.get(str(item.get("task_type", "")).strip().lower())
        if given != expected:
            verdict.problems.append(f"{where}: task_type {given!r}, the case is {expected!r}")
            continue
        if expected != "mcq":
            continue
        options = case.get("options", [])
        if isinstance(options, int | float | bool) or options is None:
            verdict.problems.append(
                f"cases file {where}: options is {json.dumps(options)}, not a list"
            )
            continue
        labels = {str(o.get("label", "")).strip() for o in options if isinstance(o, dict)}
        answer = _text(item, "answer")
        if labels and answer not in labels:
            verdict.problems.append(f"{where}: answer {answer!r} is not one of {sorted(labels)}")
        elif not labels and isinstance(options, list) and options:
            implied = [chr(ord("A") + i) for i in range(len(options))]
            if answer not in implied:
                verdict.warnings.append(
                    f"{where}: answer {answer!r} is not one of the implied labels {implied} "
                    "(the official validator checks labels only for {label, text} options)"
                )


# --- the typed results: score_submission, validate_submission -------------------------------


class SubmissionRefused(AnalysisError):
    """The official scorer's refusal: every problem, and the warnings found on the way (the
    values it would accept outside the rubric; with ``strict``, the reason it refused)."""

    def __init__(self, problems: list[str], warnings: list[str]) -> None:
        super().__init__(problems)
        self.warnings = warnings


@dataclass(frozen=True, repr=False)
class OfficialScore(NotebookDisplay):
    """What the official ``scoring.py`` computes from a submission: its three ``metrics``
    (null for an absent track), the ``counts`` of cases, the ``per_case`` rows, the
    ``warnings`` on values accepted outside the rubric, and ``text``, the metrics file as
    the official scorer writes it (compact, or indented with ``pretty``)."""

    metrics: dict[str, float | None]
    counts: dict[str, int]
    per_case: tuple[dict[str, Any], ...]
    warnings: tuple[str, ...]
    text: str

    def display_summary(self) -> str:
        metrics = "; ".join(
            f"{name} {'—' if value is None else f'{value:.4f}'}"
            for name, value in self.metrics.items()
        )
        return f"{metrics}; {sum(self.counts.values())} case(s) scored"

    def display_notes(self) -> list[str]:
        return list(self.warnings)

    def to_pandas(self) -> pandas.DataFrame:
        """One row per scored case: case_id, task_type, mcq_correct (MCQ) or GT_final,
        VA_answer, RVF_trace and VA_final (open); a column a track lacks is empty."""
        import pandas

        columns = ["case_id", "task_type", "mcq_correct", *_OPEN_COLUMNS]
        return pandas.DataFrame(list(self.per_case), columns=columns)


_OPEN_COLUMNS = ["GT_final", "VA_answer", "RVF_trace", "VA_final"]


def score_submission(
    predictions: PathArg,
    ground_truth: PathArg,
    judge_scores: PathArg | None = None,
    pretty: bool = False,
    strict: bool = False,
    progress: Progress = no_progress,
) -> OfficialScore:
    """Score a results.json (``predictions``) against ``ground_truth`` and, for open
    cases, ``judge_scores`` (the official files), decision for decision as the official
    ``scoring.py``. Raises :class:`AnalysisError` when a file cannot be read and
    :class:`SubmissionRefused` when the official scorer would refuse (or, with ``strict``,
    would accept only with warnings)."""
    outcome = ScoreOutcome()
    predicted = read_json(Path(predictions), "predictions", outcome)
    truth = read_json(Path(ground_truth), "ground truth", outcome)
    judged = read_json(Path(judge_scores), "judge scores", outcome) if judge_scores else None
    if outcome.problems:
        raise AnalysisError(outcome.problems)
    scored = score_like_official(predicted, truth, judged, progress)
    text = metrics_text(scored.result, pretty, scored) if scored.result else None
    if scored.refused(strict) or text is None or scored.result is None:
        problems = scored.problems or ["refused: see the warnings above"]
        raise SubmissionRefused(problems, scored.warnings)
    result = scored.result
    return OfficialScore(
        result["metrics"], result["counts"], tuple(result["per_case"]), tuple(scored.warnings), text
    )


@dataclass(frozen=True, repr=False)
class SubmissionCheck(NotebookDisplay):
    """What the official ``validate_submission.py`` decides of a submission: every
    ``problem`` it refuses for, every ``warning`` on what it accepts that the documentation
    forbids, the number of ``answers``, and whether the cases were checked too
    (``against_cases``: labels and completeness)."""

    problems: tuple[str, ...]
    warnings: tuple[str, ...]
    answers: int
    against_cases: bool

    def display_summary(self) -> str:
        verdict = "accepted" if not self.problems else f"refused: {len(self.problems)} problem(s)"
        checked = " against the cases" if self.against_cases else ""
        return (
            f"{self.answers} answer(s) checked{checked}; {verdict}, {len(self.warnings)} warning(s)"
        )

    def display_table(self) -> pandas.DataFrame:
        import pandas

        rows = [("problem", p) for p in self.problems] + [("warning", w) for w in self.warnings]
        return pandas.DataFrame(rows, columns=["kind", "message"])

    def valid(self, strict: bool = False) -> bool:
        """Accepted by the official validator (and, with ``strict``, without a warning)."""
        return not self.problems and not (strict and self.warnings)


def validate_submission(submission: PathArg, cases: PathArg | None = None) -> SubmissionCheck:
    """Check a submission (a results.json, or a .zip holding one) as the official
    ``validate_submission.py`` does, against ``cases`` (a cases.json) when given, listing
    every problem at once. A file that cannot be read is a problem of the check."""
    verdict = Verdict()
    document = read_submission(Path(submission), verdict)
    case_list = read_json(Path(cases), "cases", verdict) if cases else None
    count = 0
    if not verdict.problems:
        count = validate_like_official(document, case_list, verdict)
    return SubmissionCheck(
        tuple(verdict.problems), tuple(verdict.warnings), count, case_list is not None
    )
