"""``medreason rate --serve`` reached only by its raters, and stopped by no input (issue 54):
the store is private (0600), a POST needs the token in its header, JSON, and the page's own
Origin; nothing may be framed; ``/api/hello`` proves the server holds the page's token; every
field is checked and every request answered, fuzzed with random Unicode and JSON shapes; a
slow client is cut at the deadline, the workers are capped, a burst is answered; and the
served options are checked before the page is built."""

from __future__ import annotations

import http.client
import json
import random
import socket
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from utils.rated_logs import judged_log

from inspect_medreason.rating import server as rating_server
from inspect_medreason.rating.page import RatingPage, build_rating_page
from inspect_medreason.rating.rules import MAX_NOTE_CHARS, MAX_RATER_CHARS
from inspect_medreason.rating.server import (
    TOKEN_HEADER,
    RatingServer,
    rater_token,
    server_proof,
    token_id,
)
from inspect_medreason.rating.store import STORE_MODE, StoreError

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("test_rating_server_guard")


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> RatingPage:
    return build_rating_page(
        [judged_log(tmp_path_factory.mktemp("guarded"), 4)], 4, 0, max_image_px=64
    )


def start(server: RatingServer) -> RatingServer:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def served(page: RatingPage, tmp_path: Path) -> Iterator[RatingServer]:
    server = start(RatingServer(page, tmp_path / "round.sqlite", {}, "127.0.0.1", 0))
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def send(
    server: RatingServer,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    port = server.server_address[1]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def post(
    server: RatingServer, body: bytes | Any, **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """A rating posted as the page posts it, any header replaced by ``headers``."""
    port = server.server_address[1]
    given = {
        TOKEN_HEADER: server.token,
        "Content-Type": "application/json",
        "Origin": f"http://127.0.0.1:{port}",
        **headers,
    }
    data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    return send(server, "POST", "/api/ratings", data, {k: v for k, v in given.items() if v})


def rating(page: RatingPage, **more: Any) -> dict[str, Any]:
    case = page.data["cases"][0]["case"]
    return {
        "rater": "alice",
        "case": case,
        "component": "gt",
        "value": 3,
        "given_at": now(),
        **more,
    }


def rows(server: RatingServer) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(server.store)
    try:
        return connection.execute(
            "SELECT rater, case_id, component, value, reason, comment FROM ratings ORDER BY id"
        ).fetchall()
    finally:
        connection.close()


def test_the_store_and_its_write_ahead_files_are_the_owners_only(
    served: RatingServer, page: RatingPage, tmp_path: Path
) -> None:
    # a reader held open keeps the write-ahead files (the last connection closed removes them)
    keeper = sqlite3.connect(served.store)
    try:
        keeper.execute("SELECT count(*) FROM ratings").fetchone()
        assert post(served, rating(page))[0] == 200
        files = [served.store, *(Path(f"{served.store}{end}") for end in ("-wal", "-shm"))]
        assert all(f.exists() for f in files)
        for path in files:
            assert stat.S_IMODE(path.stat().st_mode) == STORE_MODE == 0o600, path
    finally:
        keeper.close()
    # a store an earlier version left readable by others is made private when served again
    served.shutdown()
    served.server_close()
    served.store.chmod(0o644)
    again = RatingServer(page, served.store, {}, "127.0.0.1", 0)
    again.server_close()
    assert stat.S_IMODE(served.store.stat().st_mode) == 0o600
    # a file given as --store by mistake is refused, its mode left as it was
    notes = tmp_path / "notes.txt"
    notes.write_text("not a store\n", encoding="utf-8")
    notes.chmod(0o644)
    with pytest.raises(StoreError):
        RatingServer(page, notes, {}, "127.0.0.1", 0)
    assert stat.S_IMODE(notes.stat().st_mode) == 0o644


def test_a_post_needs_its_token_in_the_header_json_and_the_pages_own_origin(
    served: RatingServer, page: RatingPage
) -> None:
    port = served.server_address[1]
    body = rating(page)
    refused = {
        "a foreign origin": post(served, body, Origin="http://evil.example"),
        "an origin on another port": post(served, body, Origin=f"http://127.0.0.1:{port + 1}"),
        "no origin": post(served, body, Origin=""),
        "a null origin (a sandboxed frame)": post(served, body, Origin="null"),
        "text/plain (a form)": post(served, body, **{"Content-Type": "text/plain"}),
        "no content type": post(served, body, **{"Content-Type": ""}),
    }
    for why, (status, _, answer) in refused.items():
        assert status in (403, 415), why
        assert "error" in json.loads(answer), why
    # the token in the address, not the header: refused even with everything else right
    status, _, _ = send(
        served,
        "POST",
        f"/api/ratings?token={served.token}",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{port}"},
    )
    assert status == 403
    assert rows(served) == []
    assert post(served, body)[0] == 200
    assert post(served, body, Origin=f"http://localhost:{port}", Host=f"localhost:{port}")[0] == 200
    assert len(rows(served)) == 2


def test_no_response_may_be_framed(served: RatingServer) -> None:
    for path in (f"/?token={served.token}", "/api/ratings?rater=a", "/nowhere", "/api/hello"):
        _, headers, _ = send(served, "GET", path, headers={TOKEN_HEADER: served.token})
        assert headers["X-Frame-Options"] == "DENY", path
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"], path


def test_hello_proves_the_server_holds_the_pages_token_without_being_sent_it(
    page: RatingPage, tmp_path: Path
) -> None:
    server = start(RatingServer(page, tmp_path / "r.sqlite", {}, "127.0.0.1", 0, ["Alice", "bob"]))
    try:
        nonce = "0123456789abcdef" * 2
        alice = rater_token(server.token, "Alice")
        status, _, body = send(server, "GET", f"/api/hello?id={token_id(alice)}&nonce={nonce}")
        assert status == 200 and json.loads(body) == {"proof": server_proof(alice, nonce)}
        assert server_proof(alice, nonce) != server_proof(rater_token(server.token, "bob"), nonce)
        # the round's own token opens nothing with --raters; nor a guessed id, nor a bad nonce
        for query in (
            f"id={token_id(server.token)}&nonce={nonce}",
            f"id={'0' * 64}&nonce={nonce}",
            f"id={token_id(alice)}&nonce=short",
            f"id={token_id(alice)}&nonce={'G' * 32}",
        ):
            assert send(server, "GET", f"/api/hello?{query}")[0] == 403, query
    finally:
        server.shutdown()
        server.server_close()


def test_every_field_is_checked_and_the_reason_said(served: RatingServer, page: RatingPage) -> None:
    clock = datetime.now(UTC)
    wrong: dict[str, tuple[dict[str, Any], str]] = {
        "a lone surrogate": ({"comment": "bad \ud800 char"}, "U+D800"),
        "a control character": ({"reason": "no\x07bell", "value": None}, "U+0007"),
        "a comment one over": ({"comment": "x" * (MAX_NOTE_CHARS + 1)}, "more than 2000"),
        "a name one over": ({"rater": "r" * (MAX_RATER_CHARS + 1)}, "rater:"),
        "a name of a surrogate": ({"rater": "\udc00"}, "rater:"),
        "a case that is a list": ({"case": ["x"]}, "case:"),
        "a case that is an object": ({"case": {"a": 1}}, "case:"),
        "a component that is an object": ({"component": {"a": 1}}, "component:"),
        "a time with no offset": ({"given_at": "2026-11-28T10:00:00"}, "no offset"),
        "a time in the year 9999": ({"given_at": "9999-01-01T00:00:00Z"}, "ahead"),
        "a time a year ago": ({"given_at": (clock - timedelta(days=365)).isoformat()}, "before"),
        "a time that is a number": ({"given_at": 1700000000}, "given_at"),
    }
    for why, (change, said) in wrong.items():
        status, _, body = post(served, rating(page, **change))
        assert status == 400, why
        assert said in json.loads(body)["error"], why
    assert rows(served) == []
    # at the limits, and an astral character, are taken as given
    limit = rating(page, comment="x" * MAX_NOTE_CHARS, rater="r" * MAX_RATER_CHARS)
    assert post(served, limit)[0] == 200
    assert post(served, rating(page, comment="tab\tand line\nand \U0001f9e0"))[0] == 200
    assert [r[5] for r in rows(served)] == ["x" * MAX_NOTE_CHARS, "tab\tand line\nand \U0001f9e0"]


def random_text(rng: random.Random) -> str:
    """Any code point, lone surrogates and controls included, of any length up to 2,500."""
    pools = [
        (0, 0x20),
        (0x20, 0x7F),
        (0x7F, 0xA0),
        (0xA0, 0xD800),
        (0xD800, 0xE000),
        (0xE000, 0x110000),
    ]
    size = rng.choice([0, 1, 5, 50, 500, MAX_NOTE_CHARS, MAX_NOTE_CHARS + 1, 2500])
    return "".join(chr(rng.randrange(*rng.choice(pools))) for _ in range(size))


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, 4, -1, 5, 2**70, 3.5, 1e308])
    if kind == 3:
        return random_text(rng)
    if kind == 4:
        return rng.choice(["gt", "va", "rvf", "case", now()])
    if kind == 5:
        return float(rng.choice(["nan", "inf", "-inf"]))
    if kind == 6:
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {random_text(rng)[:8]: random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_fuzzed_ratings_are_each_answered_and_only_good_ones_stored(
    served: RatingServer, page: RatingPage
) -> None:
    """300 posts of random Unicode in every field and random JSON shapes (NaN and Infinity
    too, as Python writes them): every one answered 200 or 400 (never a dropped connection
    nor a 500), and the store holds exactly the 200s, each as sent."""
    rng = random.Random(54)
    keys = ["rater", "case", "component", "value", "reason", "comment", "seconds", "given_at"]
    answered: list[int] = []
    stored: list[tuple[Any, ...]] = []
    for _ in range(300):
        clean = "".join(chr(rng.randrange(0x20, 0xD7FF)) for _ in range(rng.randrange(60)))
        body: Any = rating(page, comment=random_text(rng) if rng.random() < 0.5 else clean)
        for key in rng.sample(keys, rng.randrange(3)):
            body[key] = random_value(rng)
        if rng.random() < 0.1:
            body = random_value(rng)
        # json.dumps escapes a lone surrogate as \\ud800, as a browser's JSON.stringify does
        data = json.dumps(body).encode("utf-8")
        if len(data) > rating_server.MAX_BODY_BYTES:
            continue
        status, _, answer = post(served, data)
        answered.append(status)
        assert status in (200, 400), (status, answer[:200])
        assert json.loads(answer)
        if status == 200:
            stored.append((body["component"], body["value"], body.get("comment")))
    assert 50 < answered.count(200) < len(answered) - 50, answered  # both kinds were tried
    assert [(r[2], r[3], r[5]) for r in rows(served)] == [
        (c, v, (t.strip() or None) if t else None) for c, v, t in stored
    ]


def address(server: RatingServer) -> tuple[str, int]:
    return "127.0.0.1", int(server.server_address[1])


def raw(server: RatingServer, data: bytes) -> bytes:
    """What the server answers to bytes sent as they are (the client then stops sending)."""
    with socket.create_connection(address(server), timeout=15) as connection:
        connection.sendall(data)
        connection.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
        return answer


def test_broken_requests_are_answered_never_dropped(served: RatingServer) -> None:
    port = served.server_address[1]
    head = (
        f"POST /api/ratings HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}"
        f"\r\n{TOKEN_HEADER}: {served.token}\r\nContent-Type: application/json\r\n"
    ).encode()
    for length, body in (
        (b"\xb2", b"{}"),  # a digit str.isdigit takes (read as Latin-1) and int() does not
        (b"-1", b"{}"),
        (b"99999999999999999999", b"{}"),
        (b"4", b"\xff\xfe\xfd\xfc"),  # not UTF-8
        (b"5", b'"\\ud8'),  # a cut escape
        (b"4400", b"[" + b"1" * 4398 + b"]"),  # an integer of 4,398 digits
        (b"15000", b"[" * 15000),  # nested past the parser's recursion limit
    ):
        answer = raw(served, head + b"Content-Length: " + length + b"\r\n\r\n" + body)
        assert answer.split(b" ")[1] in (b"400", b"413"), (length, answer[:100])


def test_a_slow_client_is_cut_and_the_others_answered(
    page: RatingPage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two clients that trickle a byte at a time hold both workers (the cap, 2 here): a
    third request is told to come back at once, and both are cut at the deadline."""
    monkeypatch.setattr(rating_server, "REQUEST_DEADLINE_S", 1.5)
    monkeypatch.setattr(rating_server, "MAX_WORKERS", 2)
    monkeypatch.setattr(rating_server, "WORKER_WAIT_S", 0.5)
    server = start(RatingServer(page, tmp_path / "r.sqlite", {}, "127.0.0.1", 0))
    slow = [socket.create_connection(address(server), timeout=10) for _ in range(2)]
    try:
        began = time.monotonic()
        for connection in slow:
            connection.sendall(b"GET /api/hello HTTP/1.0\r\n")  # the headers never end
            connection.settimeout(0.2)
        time.sleep(0.3)
        assert raw(server, b"GET /api/hello HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 503 ")
        cut: set[int] = set()
        while len(cut) < len(slow) and time.monotonic() - began < 8:
            for number, connection in enumerate(slow):
                if number in cut:
                    continue
                try:
                    connection.sendall(b"X")  # one byte a while
                    if connection.recv(1024) == b"":
                        cut.add(number)
                except TimeoutError:
                    pass
                except OSError:  # reset: cut
                    cut.add(number)
        assert cut == {0, 1} and 1.4 < time.monotonic() - began < 5
        time.sleep(0.2)
        status, _, _ = send(server, "GET", "/api/hello")
        assert status == 403  # answered (a hello naming no link): the workers are free again
    finally:
        for connection in slow:
            connection.close()
        server.shutdown()
        server.server_close()


def test_a_burst_of_connections_is_answered(served: RatingServer) -> None:
    """300 connections opened at once, then each asks: every one is answered (200, or 503:
    come back), none reset by a full listen queue."""
    assert served.request_queue_size >= 1024
    connections = [socket.create_connection(address(served), timeout=30) for _ in range(300)]
    nonce = "ab" * 16
    port = served.server_address[1]
    request = (
        f"GET /api/hello?id={token_id(served.token)}&nonce={nonce} HTTP/1.0\r\n"
        f"Host: 127.0.0.1:{port}\r\n\r\n"
    )
    statuses = []
    try:
        for connection in connections:
            connection.sendall(request.encode())
        for connection in connections:
            answer = b""
            while chunk := connection.recv(65536):
                answer += chunk
            statuses.append(answer.split(b" ")[1])
    finally:
        for connection in connections:
            connection.close()
    assert set(statuses) <= {b"200", b"503"} and statuses.count(b"200") > 0


def test_served_options_are_checked_before_the_page_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_medreason.cli import main, rate

    def never(*_: Any, **__: Any) -> Any:
        raise AssertionError("the page was built before the options were checked")

    monkeypatch.setattr(rate, "build_rating_page", never)
    store = tmp_path / "round.sqlite"
    code = main(
        [
            "rate",
            str(tmp_path / "no-such.eval"),
            "--serve",
            "--store",
            str(store),
            "--raters",
            "alice,,ALICE",
            "--allow-host",
            "https://rate.example.org/",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "an empty name" in err and "are one rater" in err and "--allow-host" in err
    assert not store.exists()
