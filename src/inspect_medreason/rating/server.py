"""A rating round served to a team (``medreason rate --serve``, or ``served_round`` from
Python): the rating page, every rating written to a SQLite store (``store``) as it is given.

The server listens on 127.0.0.1 unless told otherwise and answers only requests whose
``Host`` header names it (the bound address, ``localhost``, ``127.0.0.1`` with its port, or
a name given with ``--allow-host``: a page of another site whose name was rebound to this
address gets nothing) and that carry a token. Without ``--raters`` the token is the round's (a
random secret kept in the store, so a restarted server takes the same links), and raters name
themselves; with ``--raters`` each rater has their own link, whose token is an HMAC of the
round's secret and their name, and the server takes the rater from the token, never from
the request. The page's address holds the token, and the page sends it with every rating.
Several raters rate at once; a rater who opens the page again (another browser, after a
crash) gets back what the server holds for them.

Routes: ``GET /?token=T`` the page; ``GET /api/hello?id=I&nonce=N`` the server's proof that
it is the round's (below; no token); ``GET /api/ratings?rater=NAME`` the rater's latest
ratings (a per-rater link's own, without ``rater``); ``POST /api/ratings`` one rating (a
JSON object, below); ``GET /image/CASE/N`` a case's image at its original resolution (the
page embeds the scaled-down one).

Only the round's raters reach it. The store is created 0600 (it holds the round's secret).
Before the page sends its token anywhere it asks ``/api/hello`` for a proof only a holder of
that token can make (an HMAC of a fresh nonce keyed by the token, the token named by a
one-way digest of it), so a process that took the port while the server was down gets no
token and no rating. A POST carries the token in its ``X-Round-Token`` header (never in the
address), as ``application/json``, with an ``Origin`` that is the page's own: another site's
page cannot post, and no form can. No response may be framed. Every request is answered
(a rating refused says why), a slow client is cut at a deadline, and the workers are capped.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import os
import re
import secrets
import socket
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.core import strict_json
from inspect_medreason.core.user_files import UserFileError, read_user_bytes
from inspect_medreason.rating.cases import case_digest, case_images
from inspect_medreason.rating.page import PAGE_POLICY, SERVED_POLICY, RatingPage
from inspect_medreason.rating.rules import (
    MAX_NOTE_CHARS,
    MAX_RATER_CHARS,
    MAX_SECONDS,
    rater_key,
    text_problem,
)
from inspect_medreason.rating.store import (
    CASE_COMPONENT,
    COMPONENTS,
    StoredRating,
    StoreError,
    add_rating,
    latest_ratings,
    open_store,
)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TOKEN_HEADER = "X-Round-Token"
RATING_KEYS = {"rater", "case", "component", "value", "reason", "comment", "seconds", "given_at"}
# One rating is a few hundred bytes; two notes at their limit fit well inside this.
MAX_BODY_BYTES = 16 * 1024
# A client that stops mid-request holds a thread no longer than this between two reads...
REQUEST_TIMEOUT_S = 10.0
# ... nor longer than this in all (one byte every few seconds is not a request).
REQUEST_DEADLINE_S = 20.0
# Requests served at once; the next waits for a worker at most WORKER_WAIT_S, then is told
# to come back (503). A round is a handful of raters: this is room for a burst, not a cap
# they meet.
MAX_WORKERS = 32
WORKER_WAIT_S = 2.0
# Connections the kernel holds while the workers are busy (Python's default, 5, reset 86 of
# a burst of 5,000); the kernel caps it at net.core.somaxconn.
LISTEN_BACKLOG = 1024
# A rating's time as the page gives it: no earlier than this before the server's clock (a
# rating queued through a long outage is still taken), no later than this after (clocks
# differ; a day ahead is a wrong clock, said as one).
GIVEN_AT_PAST = timedelta(days=90)
GIVEN_AT_FUTURE = timedelta(days=1)
# The page's proof that it talks to its round's server (/api/hello): what the token is named
# by, and what is signed. One secret, one purpose each.
TOKEN_ID_CONTEXT = "medreason-rate token id:"
SERVER_PROOF_CONTEXT = "medreason-rate server proof:"
NONCE = re.compile(r"[0-9a-f]{32,128}")
# What a rater's token is derived for: one secret, one purpose.
RATER_TOKEN_CONTEXT = b"medreason-rate rater link:"
# The page names the rater of a per-rater link here (null: the rater types their name).
LINKED_RATER_ELEMENT = '<script type="application/json" id="linked-rater">null</script>'


def token_id(token: str) -> str:
    """The name a page gives its token by in ``/api/hello``: a SHA-256 digest, which names it
    without revealing it."""
    return hashlib.sha256((TOKEN_ID_CONTEXT + token).encode("utf-8")).hexdigest()


def server_proof(token: str, nonce: str) -> str:
    """What only a holder of ``token`` answers to ``nonce``: HMAC-SHA256 keyed by the token
    (the page computes the same, page.html's serverProof)."""
    message = (SERVER_PROOF_CONTEXT + nonce).encode("utf-8")
    return hmac.new(token.encode("utf-8"), message, hashlib.sha256).hexdigest()


def rater_token(round_token: str, rater: str) -> str:
    """A rater's own token: an HMAC-SHA256 of their name (trimmed, case-folded) keyed by the
    round's secret, so it is the same after a restart and cannot be made without the secret."""
    message = RATER_TOKEN_CONTEXT + rater_key(rater).encode("utf-8")
    return hmac.new(round_token.encode("utf-8"), message, hashlib.sha256).hexdigest()


# A file of raters' names is a short list; anything larger is not one.
MAX_RATERS_FILE_BYTES = 64 * 1024


def parse_raters(given: str) -> list[str]:
    """The raters of ``--raters a,b`` or ``--raters @FILE`` (a UTF-8 file of names, one a
    line or between commas; blank lines ignored): their names, or AnalysisError naming
    every problem."""
    if given.startswith("@"):
        try:
            data = read_user_bytes(Path(given[1:]), MAX_RATERS_FILE_BYTES, "raters file")
            text = data.decode("utf-8-sig")
        except UserFileError as error:
            raise AnalysisError([f"--raters: {error}"]) from None
        except UnicodeDecodeError:
            raise AnalysisError([f"--raters: {given[1:]} is not UTF-8 text"]) from None
        parts = [p for line in text.splitlines() for p in line.split(",") if p.strip()]
        if not parts:
            raise AnalysisError([f"--raters: {given[1:]} names no rater"])
    else:
        parts = given.split(",")
    names = [" ".join(part.split()) for part in parts]
    problems = []
    if any(not name for name in names):
        problems.append(f"--raters {given!r}: an empty name (write the names between commas)")
    seen: dict[str, str] = {}
    for name in names:
        if len(name) > MAX_RATER_CHARS:
            problems.append(f"--raters: {name[:20]!r}... is longer than {MAX_RATER_CHARS}")
        if name and rater_key(name) in seen:
            problems.append(
                f"--raters: {name!r} and {seen[rater_key(name)]!r} are one rater (names are "
                "compared trimmed and case-folded): give each rater once"
            )
        seen.setdefault(rater_key(name), name)
    if problems:
        raise AnalysisError(problems)
    return names


def check_allowed_hosts(names: list[str]) -> list[str]:
    """``--allow-host`` values as the Host header carries them (NAME or NAME:PORT), or
    AnalysisError naming each that is not one (a URL, a path, a space)."""
    wrong = [n for n in names if not re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d+)?", n)]
    if wrong:
        raise AnalysisError(
            [
                f"--allow-host {name!r}: a host name as a browser sends it (rate.example.org, "
                "or rate.example.org:8443), not a URL"
                for name in wrong
            ]
        )
    return names


def host_names(bound: str, port: int, allowed: list[str]) -> set[str]:
    """The ``Host`` headers this server answers (lower case): the bound address, localhost and
    127.0.0.1 with the port, and each ``--allow-host`` name (as given with a port, else with
    or without any)."""
    shown = f"[{bound}]" if ":" in bound else bound
    names = {f"{name.lower()}:{port}" for name in (shown, "localhost", "127.0.0.1")}
    names |= {name.lower() for name in allowed}
    return names


def host_allowed(header: str | None, names: set[str]) -> bool:
    if not header:
        return False
    given = header.strip().lower()
    if given in names:
        return True
    name, _, port = given.rpartition(":")
    # an --allow-host name given without a port answers on any port (behind a proxy)
    return bool(name) and port.isdigit() and name in names


@dataclass(frozen=True)
class Original:
    data: bytes
    media_type: str


def original_images(page: RatingPage, data_dir: Path | None) -> dict[str, list[Original]]:
    """Each case's images as the log (or data folder) holds them, by the page's case id."""
    shown = case_images(page.chosen, data_dir, None)
    found: dict[str, list[Original]] = {}
    for candidate in page.chosen:
        uris = shown.by_case.get(candidate.ref, [])
        found[case_digest(page.page_id, candidate.ref)] = [
            Original(
                base64.b64decode(uri.partition(",")[2]),
                uri.partition(";")[0].removeprefix("data:"),
            )
            for uri in uris
        ]
    return found


class RatingError(ValueError):
    """A rating the server refuses, said to the page."""


class NotThisRater(RatingError):
    """A rating of a per-rater link given under another rater's name."""


def given_at_problem(value: Any, now: datetime) -> str | None:
    """Why a rating's time is not one (None: it is): an ISO 8601 time with its offset, within
    GIVEN_AT_PAST before the server's clock and GIVEN_AT_FUTURE after it."""
    if not isinstance(value, str) or len(value) > 40:
        return "an ISO 8601 time with its offset (the page's clock)"
    try:
        given = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return f"{value!r} is not an ISO 8601 time"
    if given.tzinfo is None:
        return f"{value!r} has no offset (Z or +HH:MM)"
    if given > now + GIVEN_AT_FUTURE:
        return (
            f"{value!r} is more than a day ahead of the server's clock ({now.isoformat()}): "
            "set this computer's clock"
        )
    if given < now - GIVEN_AT_PAST:
        return f"{value!r} is more than {GIVEN_AT_PAST.days} days before the server's clock"
    return None


def check_rating(
    body: Any, cases: set[str], linked: str | None = None, now: datetime | None = None
) -> StoredRating:
    """A posted rating as stored, or RatingError naming every problem of it. ``linked`` is
    the rater of a per-rater link's token: the row is theirs, and a body that names another
    rater is refused (NotThisRater), never stored under either name."""
    if not isinstance(body, dict):
        raise RatingError("a rating is a JSON object")
    problems = []
    unknown = sorted(set(body) - RATING_KEYS)
    if unknown:
        problems.append(f"unknown key(s) {', '.join(map(repr, unknown))}")
    rater = body.get("rater") if linked is None else body.get("rater", linked)
    wrong_name = text_problem(rater, MAX_RATER_CHARS)
    if wrong_name or not isinstance(rater, str) or not rater.strip():
        problems.append(
            f"rater: a name of 1-{MAX_RATER_CHARS} characters ({wrong_name or 'empty'})"
        )
    elif linked is not None and rater_key(rater) != rater_key(linked):
        raise NotThisRater(
            f"this link is {linked!r}'s: a rating under another name ({rater!r}) is refused"
        )
    if not isinstance(body.get("case"), str) or body["case"] not in cases:
        problems.append("case: not a case of this page (reload the page)")
    component = body.get("component")
    if not isinstance(component, str) or component not in COMPONENTS:
        problems.append(f"component: one of {', '.join(COMPONENTS)}")
    value = body.get("value")
    if value is not None and (type(value) is not int or not 0 <= value <= 4):
        problems.append("value: an integer 0-4, or null")
    if value is not None and component == CASE_COMPONENT:
        problems.append("value: a whole case is skipped with a reason, not scored")
    texts = {}
    for key in ("reason", "comment"):
        text = body.get(key)
        wrong = None if text is None else text_problem(text, MAX_NOTE_CHARS)
        if wrong:
            problems.append(
                f"{key}: a text of at most {MAX_NOTE_CHARS} characters, or null ({wrong})"
            )
        texts[key] = text.strip() or None if isinstance(text, str) and not wrong else None
    if value is not None and texts["reason"]:
        problems.append("a score and a reason it cannot be assessed: one or the other")
    seconds = body.get("seconds")
    if seconds is not None and (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not 0 <= seconds <= MAX_SECONDS
    ):
        problems.append(f"seconds: 0-{MAX_SECONDS}, or null")
    given_at = given_at_problem(body.get("given_at"), now or datetime.now(UTC))
    if given_at:
        problems.append(f"given_at: {given_at}")
    if problems:
        raise RatingError("; ".join(problems))
    return StoredRating(
        " ".join(str(linked if linked is not None else rater).split()),
        str(body["case"]),
        str(component),
        value,
        texts["reason"],
        texts["comment"],
        None if seconds is None else float(seconds),
        str(body["given_at"]),
    )


class RatingServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG

    def __init__(
        self,
        page: RatingPage,
        store: Path,
        originals: dict[str, list[Original]],
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        raters: list[str] | None = None,
        allowed_hosts: list[str] | None = None,
    ) -> None:
        self.page = page
        self.store = store
        self.originals = originals
        self.cases = {case["case"] for case in page.data["cases"]}
        self.token = open_store(
            store,
            {
                "page_id": page.page_id,
                "rubric_sha256": page.data["rubric_sha256"],
                "page_cases": page.cases,
            },
            lambda: secrets.token_urlsafe(24),
        )
        if page.html.count(PAGE_POLICY) != 1:
            raise RuntimeError("the page template's content security policy changed")
        if page.html.count(LINKED_RATER_ELEMENT) != 1:
            raise RuntimeError("the page template's linked-rater element changed")
        self.html = page.html.replace(PAGE_POLICY, SERVED_POLICY)
        # with --raters only the raters' own tokens open the round: the round's secret is
        # kept in the store, never printed, and a name typed on the page is not taken
        self.raters = {rater_token(self.token, name): name for name in raters or []}
        self.policy = (
            SERVED_POLICY + " style-src 'unsafe-inline'; script-src 'unsafe-inline';"
            " frame-ancestors 'none'"
        )
        # what /api/hello answers: each token that opens the round, by its digest
        opening = list(self.raters) if self.raters else [self.token]
        self.token_ids = {token_id(token): token for token in opening}
        self.workers = threading.BoundedSemaphore(MAX_WORKERS)
        # one writer at a time: SQLite would serialize them anyway, this keeps the waits
        # in this process instead of in busy retries
        self.write_lock = threading.Lock()
        super().__init__((host, port), RatingHandler)
        address = self.server_address[0]
        bound = address.decode("ascii") if isinstance(address, bytes) else str(address)
        self.host_names = host_names(bound, int(self.server_address[1]), allowed_hosts or [])

    def process_request(self, request: Any, client_address: Any) -> None:
        """A worker for the request, or, none free within WORKER_WAIT_S, a 503 (the page
        keeps the rating and sends it again): a crowd of slow clients delays, never stops,
        a round."""
        if not self.workers.acquire(timeout=WORKER_WAIT_S):
            with _suppressed_socket_errors():
                request.settimeout(1.0)
                request.sendall(
                    b"HTTP/1.0 503 Service Unavailable\r\nRetry-After: 1\r\n"
                    b"Content-Length: 0\r\nConnection: close\r\n\r\n"
                )
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.workers.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.workers.release()

    def page_for(self, rater: str | None) -> bytes:
        """The page, naming the rater of a per-rater link (JSON inside a script element:
        ``<`` escaped so no name can close it)."""
        named = json.dumps(rater).replace("<", "\\u003c")
        element = LINKED_RATER_ELEMENT.replace(">null<", f">{named}<")
        return self.html.replace(LINKED_RATER_ELEMENT, element).encode("utf-8")

    def link_token(self, given: str) -> tuple[bool, str | None]:
        """Whether a token opens the round, and the rater it is the link of (None: the
        round's own token, taken only without --raters). Every candidate is compared in
        constant time."""
        given_bytes = given.encode("utf-8")
        found: tuple[bool, str | None] = (False, None)
        for token, name in self.raters.items():
            if hmac.compare_digest(given_bytes, token.encode("utf-8")):
                found = (True, name)
        if not self.raters and hmac.compare_digest(given_bytes, self.token.encode("utf-8")):
            found = (True, None)
        return found

    def links(self) -> dict[str | None, str]:
        """The link to send, per rater (one for all, None, without --raters)."""
        base = self.url.partition("?")[0]
        if not self.raters:
            return {None: f"{base}?token={self.token}"}
        return {name: f"{base}?token={token}" for token, name in self.raters.items()}

    @property
    def url(self) -> str:
        address, port = self.server_address[:2]
        host = address.decode("ascii") if isinstance(address, bytes) else address
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{port}/?token={self.token}"


class _suppressed_socket_errors:
    """A refusal to a client that is already gone is no error of the server's."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, *_: Any) -> bool:
        return kind is not None and issubclass(kind, OSError)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def is_unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return False


class RatingHandler(BaseHTTPRequestHandler):
    server: RatingServer
    timeout = REQUEST_TIMEOUT_S
    # HTTP/1.0: a connection per request, so a stopped server holds no open connection
    # that would go on taking ratings after shutdown()
    protocol_version = "HTTP/1.0"

    def setup(self) -> None:
        super().setup()
        # the whole request, however slowly it trickles in, within the deadline: the socket
        # is shut then, which ends any read or write in progress
        self._deadline = threading.Timer(REQUEST_DEADLINE_S, self._cut)
        self._deadline.daemon = True
        self._deadline.start()

    def _cut(self) -> None:
        with _suppressed_socket_errors():
            self.connection.shutdown(socket.SHUT_RDWR)

    def finish(self) -> None:
        self._deadline.cancel()
        with _suppressed_socket_errors():
            super().finish()

    def handle_one_request(self) -> None:
        """Every request answered: a fault of the server's own is a 500 that says so (the
        page keeps the rating and sends it again), never a dropped connection."""
        try:
            super().handle_one_request()
        except OSError:
            self.close_connection = True  # the client went, or its deadline passed
        except Exception as error:  # a bug must not cost the rater their queue
            self.close_connection = True
            with _suppressed_socket_errors():
                self._json(
                    HTTPStatus.INTERNAL_SERVER_ERROR,
                    {
                        "error": f"the server failed ({type(error).__name__}): the rating is "
                        "not stored; tell the organizer"
                    },
                )

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged: the token is in every page request's address."""

    def _send(self, status: HTTPStatus, body: bytes, media_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", media_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        # the page's own policy, as its meta element states it (and no framing, which only a
        # header can forbid); anything else runs nothing and is framed nowhere
        policy = (
            self.server.policy
            if media_type.startswith("text/html")
            else "default-src 'none'; frame-ancestors 'none'"
        )
        self.send_header("Content-Security-Policy", policy)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: HTTPStatus, value: Any) -> None:
        self._send(status, strict_json.dumps(value).encode("utf-8"), "application/json")

    def _host_allowed(self) -> bool:
        """A request whose Host header does not name this server (DNS rebinding: another
        site's name resolved to this address) is refused before its token is looked at."""
        if not host_allowed(self.headers.get("Host"), self.server.host_names):
            self._json(
                HTTPStatus.MISDIRECTED_REQUEST,
                {"error": "not a name this server answers to: open the link as it was sent"},
            )
            return False
        return True

    def _authorized(
        self, query: dict[str, list[str]], header_only: bool = False
    ) -> tuple[bool, str | None]:
        """Whether the request may go on, and the rater of its per-rater link."""
        if not self._host_allowed():
            return False, None
        given = self.headers.get(TOKEN_HEADER) or (
            "" if header_only else (query.get("token") or [""])[0]
        )
        opened, rater = self.server.link_token(given)
        if not opened:
            self._json(HTTPStatus.FORBIDDEN, {"error": "not this round's token: use its link"})
        return opened, rater

    def _hello(self, query: dict[str, list[str]]) -> None:
        """The server's proof that it holds the page's token, which the page never sent."""
        nonce = (query.get("nonce") or [""])[0]
        token = self.server.token_ids.get((query.get("id") or [""])[0])
        if not NONCE.fullmatch(nonce) or token is None:
            self._json(HTTPStatus.FORBIDDEN, {"error": "not a link of this round"})
            return
        self._json(HTTPStatus.OK, {"proof": server_proof(token, nonce)})

    def _same_origin(self) -> bool:
        """A POST is the page's own: its Origin names this server as the Host header does
        (a page of another site, even one holding a token, cannot post)."""
        origin = urlsplit(self.headers.get("Origin") or "")
        host = (self.headers.get("Host") or "").strip().lower()
        if origin.scheme in ("http", "https") and origin.netloc.lower() == host:
            return True
        self._json(
            HTTPStatus.FORBIDDEN,
            {"error": "a rating is posted by the round's own page (its Origin), not another"},
        )
        return False

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        if parts.path == "/api/hello":
            if self._host_allowed():
                self._hello(query)
            return
        opened, linked = self._authorized(query)
        if not opened:
            return
        if parts.path == "/":
            self._send(HTTPStatus.OK, self.server.page_for(linked), "text/html; charset=utf-8")
        elif parts.path == "/api/ratings":
            rater = (query.get("rater") or [linked or ""])[0]
            if not rater.strip() or text_problem(rater, MAX_RATER_CHARS):
                self._json(HTTPStatus.BAD_REQUEST, {"error": "rater: a name"})
                return
            if linked is not None and rater_key(rater) != rater_key(linked):
                self._json(HTTPStatus.FORBIDDEN, {"error": f"this link is {linked!r}'s"})
                return
            rows = latest_ratings(self.server.store, rater)
            self._json(HTTPStatus.OK, {"ratings": [row.__dict__ for row in rows]})
        elif parts.path.startswith("/image/"):
            _, _, case, number = [*parts.path.split("/"), "", ""][:4]
            images = self.server.originals.get(case, [])
            if not number.isdigit() or not 0 <= int(number) < len(images):
                self._json(HTTPStatus.NOT_FOUND, {"error": "no such image"})
                return
            image = images[int(number)]
            self._send(HTTPStatus.OK, image.data, image.media_type)
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such page"})

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        # the token from the header only: an address is logged by proxies and kept in
        # histories, and a form (text/plain, no custom header) can set one
        opened, linked = self._authorized(parse_qs(parts.query), header_only=True)
        if not opened or not self._same_origin():
            return
        if parts.path != "/api/ratings":
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such page"})
            return
        media_type = (self.headers.get("Content-Type") or "").partition(";")[0].strip().lower()
        if media_type != "application/json":
            self._json(
                HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                {"error": "a rating is posted as application/json"},
            )
            return
        length = self.headers.get("Content-Length", "")
        if not re.fullmatch(r"[0-9]{1,9}", length) or int(length) > MAX_BODY_BYTES:
            self._json(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                {"error": f"a rating is one JSON object of at most {MAX_BODY_BYTES} bytes"},
            )
            self.close_connection = True
            return
        try:
            body = json.loads(self.rfile.read(int(length)).decode("utf-8"))
            rating = check_rating(body, self.server.cases, linked)
        except NotThisRater as error:
            self._json(HTTPStatus.FORBIDDEN, {"error": str(error)})
            return
        except RatingError as error:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(error)})
            return
        except (ValueError, RecursionError):
            # not UTF-8, not JSON, nested too deep, an integer of thousands of digits
            self._json(HTTPStatus.BAD_REQUEST, {"error": "not a JSON object"})
            return
        received = datetime.now(UTC).isoformat(timespec="milliseconds")
        try:
            with self.server.write_lock:
                row = add_rating(self.server.store, rating, received)
        except sqlite3.Error as error:  # a full disk, a store locked too long: not saved
            self._json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": f"not saved ({error})"})
            return
        self._json(HTTPStatus.OK, {"id": row})


@dataclass(frozen=True)
class ServeOptions:
    """``--raters`` and ``--allow-host`` as checked, before the page is built (a mistyped
    name is said at once, not after the images are read)."""

    raters: list[str] | None
    allowed_hosts: list[str]


def check_serve_options(raters: str | None, allowed_hosts: list[str] | None) -> ServeOptions:
    """The served options' values (``raters`` as ``--raters`` takes them: NAME,NAME or
    @FILE), or one AnalysisError naming every problem of them."""
    problems: list[str] = []
    names: list[str] | None = None
    allowed: list[str] = []
    try:
        names = parse_raters(raters) if raters else None
    except AnalysisError as error:
        problems += error.problems
    try:
        allowed = check_allowed_hosts(allowed_hosts or [])
    except AnalysisError as error:
        problems += error.problems
    if problems:
        raise AnalysisError(problems)
    return ServeOptions(names, allowed)


def serving_warnings(host: str, port: int, allowed_hosts: list[str]) -> list[str]:
    """What to tell the organizer before serving on ``host``: who else can connect to an
    address that is not this machine's loopback, and that the unspecified address is named
    by none of the names the server answers to."""
    if is_loopback(host):
        return []
    warnings = [
        f"serving on {host}, not this machine's loopback: every machine that can reach "
        f"{host} port {port} (the local network, or more) can connect, and anyone among them "
        "who has a link can read the cases and rate; the token is the only lock and travels "
        "unencrypted (no TLS): put the server behind your own HTTPS proxy"
    ]
    if is_unspecified(host) and not allowed_hosts:
        warnings.append(
            f"{host} is every address of this machine: a rater's browser names the server "
            "by one of them, which is refused unless given with --allow-host NAME"
        )
    return warnings


def open_rating_server(
    page: RatingPage,
    store: str | os.PathLike[str],
    data_dir: str | os.PathLike[str] | None = None,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    raters: list[str] | None = None,
    allowed_hosts: list[str] | None = None,
) -> RatingServer:
    """A server of the page, listening (``serve_forever()`` answers; ``links()`` are the
    links to send, one per rater with ``raters``), every rating written to the SQLite
    ``store`` as it is given: a new store, or the one a stopped server of the same page
    left. The original images are read from the logs, else ``data_dir``. A store of another
    round, or an address that cannot be served on, raises AnalysisError."""
    folder = None if data_dir is None else Path(data_dir)
    try:
        return RatingServer(
            page,
            Path(store),
            original_images(page, folder),
            host,
            port,
            raters,
            allowed_hosts or [],
        )
    except StoreError as error:
        raise AnalysisError([str(error)]) from error
    except OSError as error:
        raise AnalysisError(
            [f"cannot serve on {host}:{port} ({error}): give another --port"]
        ) from error


@contextmanager
def served_round(
    page: RatingPage,
    store: str | os.PathLike[str],
    data_dir: str | os.PathLike[str] | None = None,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    raters: list[str] | None = None,
    allowed_hosts: list[str] | None = None,
) -> Iterator[RatingServer]:
    """The page served in a background thread while the ``with`` block runs (a notebook's
    round: ``with served_round(page, "round.sqlite", port=0) as server: server.links()``),
    stopped and its port closed at the block's end; every rating given is in the store.
    Port 0 takes a free port (``server.url`` names it)."""
    server = open_rating_server(page, store, data_dir, host, port, raters, allowed_hosts)
    thread = threading.Thread(target=server.serve_forever, name="rating-round", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        thread.join()
        server.server_close()
