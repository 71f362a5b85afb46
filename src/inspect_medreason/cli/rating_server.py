"""``medreason rate --serve``: the rating page served to a team, every rating written to a
SQLite store (``rating_store``) as it is given.

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

Routes: ``GET /?token=T`` the page; ``GET /api/ratings?rater=NAME`` the rater's latest
ratings (a per-rater link's own, without ``rater``); ``POST /api/ratings`` one rating (a
JSON object, below); ``GET /image/CASE/N`` a case's image at its original resolution (the
page embeds the scaled-down one).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import re
import secrets
import sqlite3
import sys
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from inspect_medreason.cli.challenge import ChallengeError
from inspect_medreason.cli.rating import case_digest, case_images
from inspect_medreason.cli.rating_page import PAGE_POLICY, SERVED_POLICY, WrittenPage
from inspect_medreason.cli.rating_store import (
    CASE_COMPONENT,
    COMPONENTS,
    StoredRating,
    StoreError,
    add_rating,
    latest_ratings,
    open_store,
)
from inspect_medreason.cli.ratings_file import (
    MAX_NOTE_CHARS,
    MAX_RATER_CHARS,
    MAX_SECONDS,
    is_timestamp,
    rater_key,
)
from inspect_medreason.core import strict_json
from inspect_medreason.core.user_files import UserFileError, read_user_bytes

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TOKEN_HEADER = "X-Round-Token"
RATING_KEYS = {"rater", "case", "component", "value", "reason", "comment", "seconds", "given_at"}
# One rating is a few hundred bytes; two notes at their limit fit well inside this.
MAX_BODY_BYTES = 16 * 1024
# A client that stops mid-request holds a thread no longer than this.
REQUEST_TIMEOUT_S = 30.0
# What a rater's token is derived for: one secret, one purpose.
RATER_TOKEN_CONTEXT = b"medreason-rate rater link:"
# The page names the rater of a per-rater link here (null: the rater types their name).
LINKED_RATER_ELEMENT = '<script type="application/json" id="linked-rater">null</script>'


def rater_token(round_token: str, rater: str) -> str:
    """A rater's own token: an HMAC-SHA256 of their name (trimmed, case-folded) keyed by the
    round's secret, so it is the same after a restart and cannot be made without the secret."""
    message = RATER_TOKEN_CONTEXT + rater_key(rater).encode("utf-8")
    return hmac.new(round_token.encode("utf-8"), message, hashlib.sha256).hexdigest()


# A file of raters' names is a short list; anything larger is not one.
MAX_RATERS_FILE_BYTES = 64 * 1024


def parse_raters(given: str) -> list[str]:
    """The raters of ``--raters a,b`` or ``--raters @FILE`` (a UTF-8 file of names, one a
    line or between commas; blank lines ignored): their names, or ChallengeError naming
    every problem."""
    if given.startswith("@"):
        try:
            data = read_user_bytes(Path(given[1:]), MAX_RATERS_FILE_BYTES, "raters file")
            text = data.decode("utf-8-sig")
        except UserFileError as error:
            raise ChallengeError([f"--raters: {error}"]) from None
        except UnicodeDecodeError:
            raise ChallengeError([f"--raters: {given[1:]} is not UTF-8 text"]) from None
        parts = [p for line in text.splitlines() for p in line.split(",") if p.strip()]
        if not parts:
            raise ChallengeError([f"--raters: {given[1:]} names no rater"])
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
        raise ChallengeError(problems)
    return names


def check_allowed_hosts(names: list[str]) -> list[str]:
    """``--allow-host`` values as the Host header carries them (NAME or NAME:PORT), or
    ChallengeError naming each that is not one (a URL, a path, a space)."""
    wrong = [n for n in names if not re.fullmatch(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d+)?", n)]
    if wrong:
        raise ChallengeError(
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


def original_images(page: WrittenPage, data_dir: Path | None) -> dict[str, list[Original]]:
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


def check_rating(body: Any, cases: set[str], linked: str | None = None) -> StoredRating:
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
    if not isinstance(rater, str) or not rater.strip() or len(rater) > MAX_RATER_CHARS:
        problems.append(f"rater: a name of 1-{MAX_RATER_CHARS} characters")
    elif linked is not None and rater_key(rater) != rater_key(linked):
        raise NotThisRater(
            f"this link is {linked!r}'s: a rating under another name ({rater!r}) is refused"
        )
    if body.get("case") not in cases:
        problems.append("case: not a case of this page")
    component = body.get("component")
    if component not in COMPONENTS:
        problems.append(f"component: one of {', '.join(COMPONENTS)}")
    value = body.get("value")
    if value is not None and (type(value) is not int or not 0 <= value <= 4):
        problems.append("value: an integer 0-4, or null")
    if value is not None and component == CASE_COMPONENT:
        problems.append("value: a whole case is skipped with a reason, not scored")
    texts = {}
    for key in ("reason", "comment"):
        text = body.get(key)
        if text is not None and (not isinstance(text, str) or len(text) > MAX_NOTE_CHARS):
            problems.append(f"{key}: a text of at most {MAX_NOTE_CHARS} characters, or null")
        texts[key] = text.strip() or None if isinstance(text, str) else None
    if value is not None and texts["reason"]:
        problems.append("a score and a reason it cannot be assessed: one or the other")
    seconds = body.get("seconds")
    if seconds is not None and (
        isinstance(seconds, bool)
        or not isinstance(seconds, int | float)
        or not 0 <= seconds <= MAX_SECONDS
    ):
        problems.append(f"seconds: 0-{MAX_SECONDS}, or null")
    if not is_timestamp(body.get("given_at")):
        problems.append("given_at: an ISO 8601 time")
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

    def __init__(
        self,
        page: WrittenPage,
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
        self.policy = SERVED_POLICY + " style-src 'unsafe-inline'; script-src 'unsafe-inline'"
        # one writer at a time: SQLite would serialize them anyway, this keeps the waits
        # in this process instead of in busy retries
        self.write_lock = threading.Lock()
        super().__init__((host, port), RatingHandler)
        address = self.server_address[0]
        bound = address.decode("ascii") if isinstance(address, bytes) else str(address)
        self.host_names = host_names(bound, int(self.server_address[1]), allowed_hosts or [])

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

    def log_message(self, format: str, *args: Any) -> None:
        """Requests are not logged: the token is in every page request's address."""

    def _send(self, status: HTTPStatus, body: bytes, media_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", media_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Content-Type-Options", "nosniff")
        # the page's own policy, as its meta element states it; anything else runs nothing
        policy = self.server.policy if media_type.startswith("text/html") else "default-src 'none'"
        self.send_header("Content-Security-Policy", policy)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: HTTPStatus, value: Any) -> None:
        self._send(status, strict_json.dumps(value).encode("utf-8"), "application/json")

    def _authorized(self, query: dict[str, list[str]]) -> tuple[bool, str | None]:
        """Whether the request may go on, and the rater of its per-rater link. A request
        whose Host header does not name this server (DNS rebinding: another site's name
        resolved to this address) is refused before its token is even looked at."""
        if not host_allowed(self.headers.get("Host"), self.server.host_names):
            self._json(
                HTTPStatus.MISDIRECTED_REQUEST,
                {"error": "not a name this server answers to: open the link as it was sent"},
            )
            return False, None
        given = self.headers.get(TOKEN_HEADER) or (query.get("token") or [""])[0]
        opened, rater = self.server.link_token(given)
        if not opened:
            self._json(HTTPStatus.FORBIDDEN, {"error": "not this round's token: use its link"})
        return opened, rater

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        opened, linked = self._authorized(query)
        if not opened:
            return
        if parts.path == "/":
            self._send(HTTPStatus.OK, self.server.page_for(linked), "text/html; charset=utf-8")
        elif parts.path == "/api/ratings":
            rater = (query.get("rater") or [linked or ""])[0]
            if not rater.strip() or len(rater) > MAX_RATER_CHARS:
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
        opened, linked = self._authorized(parse_qs(parts.query))
        if not opened:
            return
        if parts.path != "/api/ratings":
            self._json(HTTPStatus.NOT_FOUND, {"error": "no such page"})
            return
        length = self.headers.get("Content-Length", "")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            self._json(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                {"error": f"a rating is one JSON object of at most {MAX_BODY_BYTES} bytes"},
            )
            self.close_connection = True
            return
        try:
            body = json.loads(self.rfile.read(int(length)).decode("utf-8"))
            rating = check_rating(body, self.server.cases, linked)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            self._json(HTTPStatus.BAD_REQUEST, {"error": "not a JSON object"})
            return
        except NotThisRater as error:
            self._json(HTTPStatus.FORBIDDEN, {"error": str(error)})
            return
        except RatingError as error:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(error)})
            return
        received = datetime.now(UTC).isoformat(timespec="milliseconds")
        try:
            with self.server.write_lock:
                row = add_rating(self.server.store, rating, received)
        except sqlite3.Error as error:  # a full disk, a store locked too long: not saved
            self._json(HTTPStatus.SERVICE_UNAVAILABLE, {"error": f"not saved ({error})"})
            return
        self._json(HTTPStatus.OK, {"id": row})


def serve_round(page: WrittenPage, store: Path, data_dir: Path | None, args: Any) -> None:
    """Serve the page until interrupted (``medreason rate --serve``)."""
    raters = parse_raters(args.raters) if args.raters else None
    allowed = check_allowed_hosts(args.allow_host or [])
    if not is_loopback(args.host):
        print(
            f"warning: serving on {args.host}, not this machine's loopback: every machine that "
            f"can reach {args.host} port {args.port} (the local network, or more) can connect, "
            "and anyone among them who has a link can read the cases and rate; the token is "
            "the only lock and travels unencrypted (no TLS): put the server behind your own "
            "HTTPS proxy",
            file=sys.stderr,
        )
        if is_unspecified(args.host) and not args.allow_host:
            print(
                f"warning: {args.host} is every address of this machine: a rater's browser "
                "names the server by one of them, which is refused unless given with "
                "--allow-host NAME",
                file=sys.stderr,
            )
    try:
        server = RatingServer(
            page,
            store,
            original_images(page, data_dir),
            args.host,
            args.port,
            raters,
            allowed,
        )
    except StoreError as error:
        raise ChallengeError([str(error)]) from error
    except OSError as error:
        raise ChallengeError(
            [f"cannot serve on {args.host}:{args.port} ({error}): give another --port"]
        ) from error
    print(f"serving page {page.page_id} ({page.cases} cases); ratings go to {store}")
    links = server.links()
    if None in links:
        print(f"send each rater this link: {links[None]}", flush=True)
    else:
        print("send each rater their own link (it rates under their name only):")
        for name, link in links.items():
            print(f"  {name}: {link}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped; every rating given is in the store", file=sys.stderr)
    finally:
        server.server_close()
