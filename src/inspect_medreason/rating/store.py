"""A served round's ratings: one SQLite file (write-ahead log), one row per rating as the
rater gave it, never updated nor deleted, so a closed tab, a crashed browser or a stopped
server loses nothing that reached the server.

A row is (rater, case, component, value, reason, comment, seconds, given_at, received_at):
``component`` is ``gt``, ``va`` or ``rvf`` (``value`` 0-4, or NULL with ``reason``: the
component cannot be assessed; both NULL: the rater withdrew the score) or ``case`` (a whole
case skipped: ``reason``; NULL: the skip withdrawn). ``seconds`` is the time the rater had
spent on the case when the row was given. A rater's rating of a component is their latest
row for it; earlier rows stay as the history.

The ``round`` table holds what the round is: the page id, the rubric digest, the number of
cases and the round's token (so a restarted server takes the same links).
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspect_medreason.rating.cases import RATED_COMPONENTS
from inspect_medreason.rating.rules import (
    MAX_NOTE_CHARS,
    MAX_RATER_CHARS,
    MAX_SECONDS,
    rater_key,
)

SQLITE_MAGIC = b"SQLite format 3\x00"
STORE_FORMAT = "medreason-rating-store"
STORE_VERSION = 1
CASE_COMPONENT = "case"
COMPONENTS = (*RATED_COMPONENTS, CASE_COMPONENT)
# Every wait on the file is bounded: a writer holding it longer is a fault, said as one.
BUSY_TIMEOUT_S = 10.0
# Owner only: the store holds the round's secret.
STORE_MODE = 0o600
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS round (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ratings (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rater TEXT NOT NULL CHECK (length(rater) BETWEEN 1 AND {MAX_RATER_CHARS}),
    rater_key TEXT NOT NULL,
    case_id TEXT NOT NULL,
    component TEXT NOT NULL CHECK (component IN ('gt', 'va', 'rvf', 'case')),
    value INTEGER CHECK (value IS NULL OR value BETWEEN 0 AND 4),
    reason TEXT CHECK (reason IS NULL OR length(reason) <= {MAX_NOTE_CHARS}),
    comment TEXT CHECK (comment IS NULL OR length(comment) <= {MAX_NOTE_CHARS}),
    seconds REAL CHECK (seconds IS NULL OR seconds BETWEEN 0 AND {MAX_SECONDS}),
    given_at TEXT NOT NULL,
    received_at TEXT NOT NULL
);
"""
ROUND_KEYS = ("format", "version", "page_id", "rubric_sha256", "page_cases", "token")


class StoreError(ValueError):
    """A file that is not a round's store, or a store of another round."""


@dataclass(frozen=True)
class StoredRating:
    rater: str
    case: str
    component: str
    value: int | None
    reason: str | None
    comment: str | None
    seconds: float | None
    given_at: str


def is_store(path: Path) -> bool:
    """Whether a file given as ratings is a SQLite file (read its first bytes only; what
    is not a regular file is left to the ratings-file reader to refuse, never opened)."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    uri = f"{path.resolve().as_uri()}?mode={'ro' if read_only else 'rwc'}"
    connection = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    connection.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    return connection


def private_file(path: Path) -> None:
    """The store readable by its owner only (0600): it holds every rating and the round's
    secret, from which every rater's link is made. A new store is created so, before SQLite
    opens it (SQLite gives its -wal and -shm files the same permissions); one an earlier
    version left readable by others is made private, and its write-ahead files with it."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, STORE_MODE)
    os.close(descriptor)
    if not is_store(path):  # new (empty), or not a store: refused next, its mode left alone
        return
    for one in (path, *(path.with_name(path.name + end) for end in ("-wal", "-shm"))):
        if one.exists() and stat.S_IMODE(one.stat().st_mode) & 0o077:
            one.chmod(STORE_MODE)


def open_store(path: Path, round_info: dict[str, Any], new_token: Callable[[], str]) -> str:
    """Create the store of a round, or open the one a stopped server left: the same page
    (page id, rubric, case count) or a StoreError. The round's token (kept, so the raters'
    links still work after a restart)."""
    try:
        private_file(path)
    except OSError as error:
        raise StoreError(f"{path}: cannot be created or opened ({error})") from error
    connection = connect(path)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = FULL")  # a rating acknowledged is on disk
        connection.executescript(SCHEMA)
        connection.execute("BEGIN IMMEDIATE")
        stored = dict(connection.execute("SELECT key, value FROM round").fetchall())
        if not stored:
            token = new_token()
            wanted = {
                "format": STORE_FORMAT,
                "version": str(STORE_VERSION),
                **{k: str(v) for k, v in round_info.items()},
                "token": token,
            }
            connection.executemany("INSERT INTO round VALUES (?, ?)", sorted(wanted.items()))
            connection.execute("COMMIT")
            return token
        connection.execute("COMMIT")
    except sqlite3.DatabaseError as error:
        raise StoreError(f"{path}: not a rating store ({error})") from error
    finally:
        connection.close()
    different = [
        f"{key} {stored.get(key)!r} (this page: {value!r})"
        for key, value in round_info.items()
        if stored.get(key) != str(value)
    ]
    if stored.get("format") != STORE_FORMAT or different:
        raise StoreError(
            f"{path}: the store of another round ({'; '.join(different) or 'another format'}): "
            "serve the logs, --cases and --seed it was made with, or give a new --store"
        )
    return stored["token"]


def add_rating(path: Path, rating: StoredRating, received_at: str) -> int:
    """Append one rating (its row id); the caller checked it against the page."""
    connection = connect(path)
    try:
        cursor = connection.execute(
            "INSERT INTO ratings (rater, rater_key, case_id, component, value, reason, comment,"
            " seconds, given_at, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                rating.rater,
                rater_key(rating.rater),
                rating.case,
                rating.component,
                rating.value,
                rating.reason,
                rating.comment,
                rating.seconds,
                rating.given_at,
                received_at,
            ),
        )
        return int(cursor.lastrowid or 0)
    finally:
        connection.close()


def latest_ratings(path: Path, rater: str | None = None) -> list[StoredRating]:
    """Each rater's latest row per case and component (one rater's, with ``rater``)."""
    query = (
        "SELECT r.rater, r.case_id, r.component, r.value, r.reason, r.comment, r.seconds,"
        " r.given_at FROM ratings r JOIN (SELECT max(id) AS id FROM ratings"
        + (" WHERE rater_key = ?" if rater is not None else "")
        + " GROUP BY rater_key, case_id, component) latest ON r.id = latest.id ORDER BY r.id"
    )
    connection = connect(path, read_only=True)
    try:
        rows = connection.execute(query, (rater_key(rater),) if rater is not None else ())
        return [StoredRating(*row) for row in rows.fetchall()]
    finally:
        connection.close()


def read_store_rows(
    path: Path, problems: list[str]
) -> tuple[dict[str, str], list[StoredRating]] | None:
    """A store's round (its ``round`` table) and each rater's latest rows, problems appended
    (None): a file that is not a store, or a store of another version. What the rows say is
    checked by their reader (``ratings_file.read_store``)."""
    try:
        connection = connect(path, read_only=True)
        try:
            info = dict(connection.execute("SELECT key, value FROM round").fetchall())
            columns = [row[1] for row in connection.execute("PRAGMA table_info(ratings)")]
        finally:
            connection.close()
        rows = latest_ratings(path)
    except sqlite3.DatabaseError as error:
        problems.append(
            f"{path}: a SQLite file, but not a 'medreason rate --serve' store ({error})"
        )
        return None
    missing = [key for key in ROUND_KEYS if key not in info]
    if info.get("format") != STORE_FORMAT or missing or "rater_key" not in columns:
        problems.append(
            f"{path}: a SQLite file, but not a 'medreason rate --serve' store (missing "
            f"{', '.join(missing) or 'its ratings table'})"
        )
        return None
    if info["version"] != str(STORE_VERSION) or not info["page_cases"].isdigit():
        problems.append(
            f"{path}: store version {info['version']!r}; this medreason reads {STORE_VERSION}"
        )
        return None
    return info, rows
