"""The ratings raters give, read and checked: a ratings file the page downloads
(``read_rater_file``) or a served round's SQLite file (``store``, read back by
``read_store``), merged into one ``RatingRound`` (``read_rating_round``; a table with
``to_pandas()``) and mapped back to the logged samples (``map_round_to_logs``).

The ratings file (``RATINGS_FORMAT`` version 2; version 1 files are read too), what the
page's Save button downloads::

    {"format": "medreason-ratings", "version": 2, "page_id": "...", "rater": "alice",
     "rubric_sha256": "...", "page_cases": 60, "saved_at": "2026-...Z",
     "ratings": [{"case": "c...", "gt": 3, "va": 2, "rvf": 4, "seconds": 41.5,
                  "rated_at": "2026-...Z"},
                 {"case": "c...", "gt": 1, "cannot_assess": {"rvf": "no trace"},
                  "comments": {"gt": "close"}, "rated_at": "..."},
                 {"case": "c...", "skipped": "image does not load", "rated_at": "..."}]}

A case with some components neither scored nor marked "cannot assess" is partial: kept with
what it has and counted as partial. Every problem of every file is listed at once (unknown
keys, a score that is not a whole number 0-4, a case rated twice, files of different pages,
one rater in two files).
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.core.errors import describe_error
from inspect_medreason.core.user_files import MAX_RATINGS_BYTES, UserFileError, read_user_bytes
from inspect_medreason.rating.cases import (
    RATED_COMPONENTS,
    Candidate,
    case_digest,
    collect_candidates,
)
from inspect_medreason.rating.rules import (
    MAX_NOTE_CHARS,
    MAX_RATER_CHARS,
    MAX_SECONDS,
    rater_key,
    text_problem,
)
from inspect_medreason.rating.store import CASE_COMPONENT, is_store, read_store_rows

RATINGS_FORMAT = "medreason-ratings"
RATINGS_VERSION = 2
READ_VERSIONS = (1, 2)
RATINGS_KEYS = {
    "format",
    "version",
    "page_id",
    "rubric_sha256",
    "page_cases",
    "rater",
    "ratings",
    "saved_at",
}
ENTRY_KEYS = {
    "case",
    "gt",
    "va",
    "rvf",
    "skipped",
    "rated_at",
    "cannot_assess",
    "comments",
    "seconds",
}


# The columns of ``RatingRound.to_pandas()``, in order.
RATING_COLUMNS = (
    "page_id",
    "rater",
    "case",
    "component",
    "score",
    "cannot_assess",
    "comment",
    "skipped",
    "seconds",
    "source",
)


@dataclass
class RatingRound:
    """Several raters' ratings of one page, read and checked (``read_rating_round``); a
    table of them with ``to_pandas()``."""

    page_id: str
    rubric_sha256: str = ""  # the rubric the raters read (the judges' it was made from)
    page_cases: int = 0  # the page's number of cases
    # rater -> case -> the components scored ({"gt": 0-4, "va": 0-4, "rvf": 0-4}, or fewer
    # in a partly rated case)
    scores: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    skipped: dict[str, dict[str, str]] = field(default_factory=dict)  # rater -> case -> why
    # rater -> case -> component -> why it cannot be assessed / the rater's comment
    cannot_assess: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    comments: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    seconds: dict[str, dict[str, float]] = field(default_factory=dict)  # time on a case
    files: dict[str, Path] = field(default_factory=dict)  # rater -> file (or database)

    @property
    def cases(self) -> set[str]:
        return {case for by_case in self.scores.values() for case in by_case}

    def partial(self, rater: str) -> set[str]:
        """The rater's cases with a component neither scored nor marked "cannot assess"."""
        blocked = self.cannot_assess.get(rater, {})
        touched = set(self.scores.get(rater, {})) | set(blocked)
        return {
            case
            for case in touched
            if set(self.scores.get(rater, {}).get(case, {})) | set(blocked.get(case, {}))
            != set(RATED_COMPONENTS)
        }

    def to_pandas(self) -> pd.DataFrame:
        """One row per rater, case and component (gt, va, rvf) of every case the rater
        touched: ``score`` (0-4, missing when not scored), ``cannot_assess`` (why the
        component cannot be assessed), ``comment``, ``skipped`` (why the whole case was
        skipped), ``seconds`` spent on the case, and ``source``, the rater's file or store.
        Raters and cases in a stable order (sorted); a case id maps to its logged sample
        with the logs (``map_round_to_logs``)."""
        import pandas as pd  # only a table needs it

        rows = [
            {
                "page_id": self.page_id,
                "rater": rater,
                "case": case,
                "component": component,
                "score": self.scores.get(rater, {}).get(case, {}).get(component),
                "cannot_assess": self.cannot_assess.get(rater, {}).get(case, {}).get(component),
                "comment": self.comments.get(rater, {}).get(case, {}).get(component),
                "skipped": self.skipped.get(rater, {}).get(case),
                "seconds": self.seconds.get(rater, {}).get(case),
                "source": str(self.files[rater]),
            }
            for rater in sorted(self.files)
            for case in sorted(_touched(self, rater))
            for component in RATED_COMPONENTS
        ]
        table = pd.DataFrame(rows, columns=RATING_COLUMNS)
        # a nullable integer: a score left out stays missing, never a 0 nor a float
        table["score"] = table["score"].astype("Int64")
        table["seconds"] = table["seconds"].astype("float64")
        return table

    def described_files(self) -> str:
        return ", ".join(str(self.files[r]) for r in sorted(self.files))

    def add(self, other: RatingRound, rater: str) -> None:
        """Take ``rater``'s ratings from ``other`` (a round of one source)."""
        self.scores[rater] = other.scores.get(rater, {})
        self.skipped[rater] = other.skipped.get(rater, {})
        self.cannot_assess[rater] = other.cannot_assess.get(rater, {})
        self.comments[rater] = other.comments.get(rater, {})
        self.seconds[rater] = other.seconds.get(rater, {})
        self.files[rater] = other.files[rater]


def _load_json(path: Path, problems: list[str]) -> Any:
    try:
        # a regular file within the limit, never a FIFO or a link to a device; utf-8-sig:
        # a file opened and saved again by a Windows editor starts with a byte order mark
        data = read_user_bytes(path, MAX_RATINGS_BYTES, "ratings file")
        return json.loads(data.decode("utf-8-sig"))
    except UserFileError as error:
        problems.append(str(error))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        problems.append(f"{path}: not a readable JSON file ({describe_error(error, 200)})")
    except RecursionError:
        problems.append(f"{path}: JSON nested too deeply to read")
    return None


def _is_score(value: Any) -> bool:
    return type(value) is int and 0 <= value <= 4


def _brief(value: Any) -> str:
    # a lone surrogate is shown escaped (\ud800): it cannot be printed as it is
    text = json.dumps(value, ensure_ascii=False, default=str)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= 40 else text[:40] + "..."


# A page's case ids in the logs given, by page id (``None``: the logs were not given).
KnownCases = Callable[[str], set[str]] | None


def read_rater_file(
    path: Path, problems: list[str], known: KnownCases = None
) -> RatingRound | None:
    """One rater's file, every problem appended to ``problems`` (None when unusable). With
    ``known``, a case id that is not a case of the file's page in the logs is one of the
    file's problems, listed with the others."""
    document = _load_json(path, problems)
    if document is None:
        return None
    if not isinstance(document, dict):
        problems.append(
            f"{path}: not a ratings file (a JSON object with format {RATINGS_FORMAT!r})"
        )
        return None
    if document.get("format") != RATINGS_FORMAT:
        problems.append(
            f"{path}: format is {_brief(document.get('format'))}, not {RATINGS_FORMAT!r}: not a "
            "ratings file saved by a medreason rating page"
        )
        return None
    start = len(problems)
    version = document.get("version")
    if type(version) is not int or version not in READ_VERSIONS:  # true == 1 in Python
        problems.append(
            f"{path}: version {_brief(version)}; this medreason reads versions "
            f"{', '.join(map(str, READ_VERSIONS))}"
        )
    unknown = sorted(set(document) - RATINGS_KEYS)
    if unknown:
        problems.append(f"{path}: unknown key(s) {', '.join(map(repr, unknown))}")
    page_id, rater = document.get("page_id"), document.get("rater")
    if not isinstance(page_id, str) or not page_id.strip():
        problems.append(f"{path}: page_id is {_brief(page_id)}, not the page's id")
        page_id = None
    wrong_name = text_problem(rater, MAX_RATER_CHARS)
    if wrong_name or not isinstance(rater, str) or not rater.strip():
        problems.append(
            f"{path}: rater is {_brief(rater)}, not a name (1-{MAX_RATER_CHARS} characters"
            f"{': ' + wrong_name if wrong_name else ''})"
        )
    rubric = document.get("rubric_sha256")
    if not isinstance(rubric, str) or not re.fullmatch(r"[0-9a-f]{64}", rubric):
        problems.append(
            f"{path}: rubric_sha256 is {_brief(rubric)}, not the digest of the rubric the page "
            "showed (a file saved by a page made before it was recorded: rate on a new page)"
        )
    page_cases = document.get("page_cases")
    if type(page_cases) is not int or page_cases < 1:
        problems.append(f"{path}: page_cases is {_brief(page_cases)}, not the page's case count")
    saved_at = document.get("saved_at")
    if saved_at is not None and not is_timestamp(saved_at):
        problems.append(f"{path}: saved_at is {_brief(saved_at)}, not an ISO 8601 time")
    entries = document.get("ratings")
    if not isinstance(entries, list) or not entries:
        problems.append(f"{path}: ratings is {_brief(entries)}, not a list of rated cases")
        entries = []
    on_page = known(page_id) if known is not None and page_id is not None else None
    scores: dict[str, dict[str, int]] = {}
    skipped: dict[str, str] = {}
    cannot: dict[str, dict[str, str]] = {}
    comments: dict[str, dict[str, str]] = {}
    seconds: dict[str, float] = {}
    first_seen: dict[str, int] = {}
    not_on_page: list[str] = []
    for number, entry in enumerate(entries, 1):
        where = f"{path}: rating {number}"
        if not isinstance(entry, dict):
            problems.append(f"{where}: not an object")
            continue
        case = entry.get("case")
        if not isinstance(case, str) or not case.strip():
            problems.append(f"{where}: case is {_brief(case)}, not a case id from the page")
            continue
        where = f"{path}: case {case}"
        if case in first_seen:
            problems.append(f"{where}: rated twice (ratings {first_seen[case]} and {number})")
            continue
        first_seen[case] = number
        if on_page is not None and case not in on_page:
            not_on_page.append(case)
        unknown = sorted(set(entry) - ENTRY_KEYS)
        if unknown:
            problems.append(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}")
        rated_at = entry.get("rated_at")
        if rated_at is not None and not is_timestamp(rated_at):
            problems.append(f"{where}: rated_at is {_brief(rated_at)}, not an ISO 8601 time")
        given = [k for k in RATED_COMPONENTS if k in entry]
        if "skipped" in entry:
            reason = entry["skipped"]
            wrong = text_problem(reason, MAX_NOTE_CHARS)
            if wrong or not isinstance(reason, str) or not reason.strip():
                problems.append(
                    f"{where}: skipped is {_brief(reason)}; give the reason as text"
                    f"{' (' + wrong + ')' if wrong else ''}"
                )
            elif given:
                problems.append(
                    f"{where}: skipped, yet scored {', '.join(given)}: one or the other"
                )
            elif entry.get("cannot_assess"):
                problems.append(f"{where}: skipped, yet marked cannot_assess: one or the other")
            else:
                skipped[case] = reason.strip()
            continue
        blocked = _notes(entry, "cannot_assess", where, problems, required=True)
        remarks = _notes(entry, "comments", where, problems, required=False)
        bad = [f"{key}={_brief(entry[key])}" for key in given if not _is_score(entry[key])]
        if bad:
            problems.append(
                f"{where}: {', '.join(bad)}: a score is an integer 0-4 (4, not 4.0 nor "
                '"4"); leave a component out (a partly rated case) or say why it cannot be '
                "assessed under cannot_assess"
            )
        both = sorted(set(given) & set(blocked))
        if both:
            problems.append(
                f"{where}: {', '.join(both)} both scored and marked cannot_assess: one or the other"
            )
        if not given and not blocked:
            problems.append(
                f"{where}: no component scored nor marked cannot_assess (skip the case with a "
                "reason, or leave it out)"
            )
        spent = entry.get("seconds")
        if spent is not None and (
            isinstance(spent, bool)
            or not isinstance(spent, int | float)
            or not 0 <= spent <= MAX_SECONDS
        ):
            problems.append(
                f"{where}: seconds is {_brief(spent)}, not the time spent on the case "
                f"(0-{MAX_SECONDS} seconds)"
            )
            spent = None
        if bad or both or (not given and not blocked):
            continue
        if given:
            scores[case] = {key: int(entry[key]) for key in given}
        if blocked:
            cannot[case] = blocked
        if remarks:
            comments[case] = remarks
        if spent is not None:
            seconds[case] = float(spent)
    if not_on_page:
        problems += _not_on_page(path, page_id or "", not_on_page, len(first_seen))
    if len(problems) > start:
        return None
    assert isinstance(rater, str) and isinstance(page_id, str)
    assert isinstance(rubric, str) and isinstance(page_cases, int)
    name = " ".join(rater.split())
    return RatingRound(
        page_id,
        rubric,
        page_cases,
        {name: scores},
        {name: skipped},
        {name: cannot},
        {name: comments},
        {name: seconds},
        {name: path},
    )


def _notes(
    entry: dict[str, Any], key: str, where: str, problems: list[str], required: bool
) -> dict[str, str]:
    """An entry's per-component texts (``cannot_assess`` reasons, ``comments``), checked."""
    given = entry.get(key)
    if given is None:
        return {}
    if not isinstance(given, dict):
        problems.append(f"{where}: {key} is {_brief(given)}, not an object of gt, va, rvf")
        return {}
    found: dict[str, str] = {}
    for component, text in given.items():
        if component not in RATED_COMPONENTS:
            problems.append(f"{where}: {key}: unknown component {component!r} (gt, va, rvf)")
        elif not isinstance(text, str) or text_problem(text, MAX_NOTE_CHARS):
            problems.append(
                f"{where}: {key}.{component} is {_brief(text)}, not a text of at most "
                f"{MAX_NOTE_CHARS} characters ({text_problem(text, MAX_NOTE_CHARS)})"
            )
        elif required and not text.strip():
            problems.append(f"{where}: {key}.{component} is empty: say why it cannot be assessed")
        elif text.strip():
            found[component] = text.strip()
    return found


def _not_on_page(path: Path, page_id: str, cases: list[str], total: int) -> list[str]:
    """The problem lines of a file's case ids that are no case of its page in the logs."""
    if len(cases) == total:  # not one case found: the logs are not the page's
        return [
            f"{path}: none of its {total} case(s) is a case of page {page_id} in these logs: "
            "give the logs the page was made from (all of them, as given to medreason rate)"
        ]
    return [
        f"{path}: case {case}: not a case of page {page_id} in these logs, though the file's "
        "other cases are: an entry edited by hand or copied from another page's file, or a "
        "case of a log not given here; give every log the page was made from, or remove the "
        "entry"
        for case in cases
    ]


def _touched(rated: RatingRound, rater: str) -> set[str]:
    """The cases a rater scored, skipped or marked "cannot assess" in part."""
    return (
        set(rated.scores.get(rater, {}))
        | set(rated.skipped.get(rater, {}))
        | set(rated.cannot_assess.get(rater, {}))
    )


def is_timestamp(value: Any) -> bool:
    if not isinstance(value, str) or len(value) > 64:
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def read_store(path: Path, problems: list[str]) -> list[RatingRound]:
    """A served round's store as one round per rater (as if each had saved a file), problems
    appended: a file that is not a store, or rows no served page writes (an edited database)."""
    found = read_store_rows(path, problems)
    if found is None:
        return []
    info, rows = found
    by_rater: dict[str, RatingRound] = {}
    names: dict[str, str] = {}
    start = len(problems)
    for row in rows:
        key = rater_key(row.rater)
        names[key] = row.rater  # a rater's latest spelling of their name
        one = by_rater.setdefault(
            key, RatingRound(info["page_id"], info["rubric_sha256"], int(info["page_cases"]))
        )
        where = f"{path}: rater {row.rater!r}, case {row.case}, {row.component}"
        if row.component == CASE_COMPONENT:
            if row.reason:
                one.skipped.setdefault(key, {})[row.case] = row.reason
            continue
        if row.component not in RATED_COMPONENTS:
            problems.append(f"{where}: unknown component (gt, va, rvf, case)")
            continue
        if row.value is not None and row.reason:
            problems.append(f"{where}: both a score and a reason it cannot be assessed")
            continue
        if row.value is not None:
            one.scores.setdefault(key, {}).setdefault(row.case, {})[row.component] = row.value
        elif row.reason:
            one.cannot_assess.setdefault(key, {}).setdefault(row.case, {})[row.component] = (
                row.reason
            )
        if row.comment:
            one.comments.setdefault(key, {}).setdefault(row.case, {})[row.component] = row.comment
        if row.seconds is not None:
            spent = one.seconds.setdefault(key, {})
            spent[row.case] = max(spent.get(row.case, 0.0), float(row.seconds))
    if len(problems) > start:
        return []
    rounds = []
    for key, one in by_rater.items():
        name = names[key]
        # a case skipped after it was rated is skipped; rated after the skip was withdrawn,
        # rated: the rows say which came last, and a skip withdrawn has no reason
        skipped = one.skipped.get(key, {})
        scores = {c: s for c, s in one.scores.get(key, {}).items() if c not in skipped}
        blocked = {c: s for c, s in one.cannot_assess.get(key, {}).items() if c not in skipped}
        single = RatingRound(
            one.page_id,
            one.rubric_sha256,
            one.page_cases,
            {name: scores},
            {name: skipped},
            {name: blocked},
            {name: one.comments.get(key, {})},
            {name: one.seconds.get(key, {})},
            {name: path},
        )
        rounds.append(single)
    return rounds


def read_rating_round(
    paths: Sequence[str | os.PathLike[str]], logs: Sequence[str | os.PathLike[str]] | None = None
) -> RatingRound:
    """Several raters' ratings of one page merged into one round: each path a ratings file
    a rater saved from the page, or a served round's store (one round per rater in it); one
    page, one file per rater. With the eval log files the page was made from, a case id
    that is no case of its page in them is one of that file's problems. Raises
    AnalysisError listing every problem of every file."""
    problems: list[str] = []
    known: KnownCases = None
    if logs is not None:
        candidates, _ = collect_candidates([Path(log) for log in logs])

        def known(page_id: str) -> set[str]:
            return {case_digest(page_id, c.ref) for c in candidates}

    rounds: list[RatingRound] = []
    for path in map(Path, paths):
        if is_store(path):
            stored = read_store(path, problems)
            for one in stored:
                [rater] = one.files
                cases = _touched(one, rater)
                on_page = known(one.page_id) if known is not None else cases
                if cases - on_page:
                    problems += _not_on_page(path, one.page_id, sorted(cases - on_page), len(cases))
            rounds += stored
            if not stored and not problems:
                problems.append(f"{path}: a rating store with no rating yet")
        else:
            one_file = read_rater_file(path, problems, known)
            if one_file is not None:
                rounds.append(one_file)
    if problems:
        raise AnalysisError(problems)
    if not rounds:
        raise AnalysisError(["no ratings given"])
    merged = RatingRound(rounds[0].page_id, rounds[0].rubric_sha256, rounds[0].page_cases)
    first = rounds[0].files[next(iter(rounds[0].files))]
    by_key: dict[str, str] = {}
    for one in rounds:
        [rater] = one.files
        path = one.files[rater]
        if one.page_id != merged.page_id:
            problems.append(
                f"{path}: page {one.page_id}, but {first} is page {merged.page_id}: ratings "
                "of different pages (samples) are not merged"
            )
            continue
        if (one.rubric_sha256, one.page_cases) != (merged.rubric_sha256, merged.page_cases):
            problems.append(
                f"{path}: page {one.page_id} with rubric {one.rubric_sha256[:12]} and "
                f"{one.page_cases} cases, but {first} says rubric "
                f"{merged.rubric_sha256[:12]} and {merged.page_cases} cases (an edited file?)"
            )
            continue
        if rater_key(rater) in by_key:
            earlier = by_key[rater_key(rater)]
            problems.append(
                f"{path}: rater {rater!r} again (also {merged.files[earlier]}, as "
                f"{earlier!r}): one file (or store) per rater; rename one or join the files"
            )
            continue
        by_key[rater_key(rater)] = rater
        merged.add(one, rater)
    if problems:
        raise AnalysisError(problems)
    return merged


def map_round_to_logs(
    rated: RatingRound, logs: Sequence[Path]
) -> tuple[dict[str, Candidate], list[str]]:
    """Each rated (or skipped) case id -> the logged sample it shows, by recomputing the
    digests over the logs' rateable cases. Raises AnalysisError naming each file's ids
    that map to none of them, and ratings made against another rubric than the judges'."""
    candidates, notes = collect_candidates(logs)
    by_digest = {case_digest(rated.page_id, c.ref): c for c in candidates}
    problems: list[str] = []
    for rater, path in sorted(rated.files.items()):
        cases = _touched(rated, rater)
        unknown = sorted(cases - set(by_digest))
        if unknown:
            problems += _not_on_page(path, rated.page_id, unknown, len(cases))
    if problems:
        raise AnalysisError([*problems, *notes])
    wanted = {case for rater in rated.files for case in _touched(rated, rater)}
    mapping = {case: by_digest[case] for case in wanted}
    other_rubrics: dict[str, list[Path]] = defaultdict(list)
    for candidate in mapping.values():
        assert candidate.rubric is not None  # collect_candidates gives every one its log's
        digest = candidate.rubric.sha256
        if digest != rated.rubric_sha256 and candidate.path not in other_rubrics[digest]:
            other_rubrics[digest].append(candidate.path)
    if other_rubrics:
        raise AnalysisError(
            [
                f"{path}: the raters read rubric {rated.rubric_sha256[:12]}, but the judges of "
                f"{', '.join(map(str, paths))} were given rubric {digest[:12]} (other "
                "-T judge_prompts): ratings are compared only with judges held to the words "
                "the raters read; rate a page made from these logs"
                for digest, paths in sorted(other_rubrics.items())
                for path in [rated.described_files()]
            ]
        )
    return mapping, notes
