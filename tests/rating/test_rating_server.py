"""``medreason rate --serve`` without a browser: the server on 127.0.0.1 (port 0), its
token, every rating written to SQLite as it is given (several raters at once), a restart
on the same store, and ``agreement``/``calibrate``'s reader taking the store directly."""

from __future__ import annotations

import io
import json
import sqlite3
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from utils.rated_logs import judged_log

from inspect_medreason.analysis.agreement import read_ratings
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.rating.page import SERVED_POLICY, RatingPage, build_rating_page
from inspect_medreason.rating.ratings_file import map_round_to_logs, read_rating_round
from inspect_medreason.rating.server import (
    MAX_BODY_BYTES,
    TOKEN_HEADER,
    RatingServer,
    original_images,
)
from inspect_medreason.rating.store import StoreError

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("test_rating_server")

# a rating given now: the server refuses a time far from its clock
GIVEN_AT = datetime.now(UTC).isoformat(timespec="milliseconds")


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_log(tmp_path_factory.mktemp("served"), 4)


def start(page: RatingPage, store: Path, originals: Any = None) -> RatingServer:
    server = RatingServer(page, store, originals or {}, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def served(log: Path, tmp_path: Path) -> Iterator[tuple[RatingServer, RatingPage]]:
    page = build_rating_page([log], 4, 0, max_image_px=64)
    server = start(page, tmp_path / "round.sqlite", original_images(page, None))
    try:
        yield server, page
    finally:
        server.shutdown()
        server.server_close()


def request(
    server: RatingServer, path: str, body: Any = None, token: str | None = None
) -> tuple[int, bytes]:
    port = server.server_address[1]
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data)
    req.add_header(TOKEN_HEADER, server.token if token is None else token)
    if data is not None:  # as the page posts: JSON, from its own origin
        req.add_header("Content-Type", "application/json")
        req.add_header("Origin", f"http://127.0.0.1:{port}")
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def rating(case: str, component: str, value: int | None, rater: str = "alice", **more: Any) -> Any:
    return {
        "rater": rater,
        "case": case,
        "component": component,
        "value": value,
        "given_at": GIVEN_AT,
        **more,
    }


def test_the_served_page_needs_the_round_token(
    served: tuple[RatingServer, RatingPage],
) -> None:
    server, page = served
    assert server.server_address[0] == "127.0.0.1"
    status, body = request(server, "/", token="wrong")
    assert status == 403 and b"token" in body
    status, body = request(server, "/", token="")
    assert status == 403
    status, body = request(server, f"/?token={server.token}", token="")
    assert status == 200 and SERVED_POLICY.encode() in body and page.page_id.encode() in body
    case = page.data["cases"][0]["case"]
    status, _ = request(server, "/api/ratings", rating(case, "gt", 3), token="wrong")
    assert status == 403
    assert not sqlite3.connect(server.store).execute("SELECT * FROM ratings").fetchall()


def test_every_rating_is_a_row_as_given_and_bad_ones_are_refused(
    served: tuple[RatingServer, RatingPage], log: Path
) -> None:
    server, page = served
    first, second = (c["case"] for c in page.data["cases"][:2])
    for component, value in (("gt", 1), ("gt", 3), ("va", 2), ("rvf", 4)):
        status, _ = request(server, "/api/ratings", rating(first, component, value))
        assert status == 200
    status, _ = request(
        server,
        "/api/ratings",
        rating(second, "va", None, "Bob", reason="image cropped", comment="lesion cut off"),
    )
    assert status == 200
    request(server, "/api/ratings", rating(second, "gt", 2, "Bob", seconds=12.5))
    status, body = request(
        server, "/api/ratings", {**rating("nope", "xx", 5), "colour": "blue", "given_at": "x"}
    )
    assert status == 400
    for part in ("unknown key(s) 'colour'", "case: not a case", "component:", "value:", "given_at"):
        assert part in json.loads(body)["error"]
    status, _ = request(server, "/api/ratings", b"{" + b" " * MAX_BODY_BYTES + b"}")
    assert status == 413
    status, _ = request(server, "/api/ratings", b"[[[[")
    assert status == 400
    rows = sqlite3.connect(server.store).execute(
        "SELECT rater, case_id, component, value, reason, comment FROM ratings ORDER BY id"
    )
    assert [r[2:4] for r in rows.fetchall()] == [
        ("gt", 1),
        ("gt", 3),
        ("va", 2),
        ("rvf", 4),
        ("va", None),
        ("gt", 2),
    ]
    status, body = request(server, "/api/ratings?rater=ALICE%20")
    latest = {r["component"]: r["value"] for r in json.loads(body)["ratings"]}
    assert latest == {"gt": 3, "va": 2, "rvf": 4}
    # the store is the raters' files: read directly, Bob's case counted as partial
    people = read_rating_round([server.store], [log])
    assert people.scores["alice"] == {first: {"gt": 3, "va": 2, "rvf": 4}}
    assert people.scores["Bob"] == {second: {"gt": 2}}
    assert people.cannot_assess["Bob"] == {second: {"va": "image cropped"}}
    assert people.comments["Bob"] == {second: {"va": "lesion cut off"}}
    assert people.seconds["Bob"] == {second: 12.5}
    assert people.partial("Bob") == {second} and people.partial("alice") == set()
    mapping, _ = map_round_to_logs(people, [log])
    assert set(mapping) == {first, second}
    ratings, notes = read_ratings([log], None, people)
    assert ratings["gt_final"]["rater:Bob"] == {second: 2}
    assert second not in ratings["va_final"].get("rater:Bob", {})
    assert any("rater:Bob: 1 case(s) rated, 1 of them partly" in n for n in notes)


def test_several_raters_at_once_lose_nothing(served: tuple[RatingServer, RatingPage]) -> None:
    server, page = served
    cases = [c["case"] for c in page.data["cases"]]
    statuses: list[int] = []

    def rate_all(rater: str) -> None:
        for case in cases:
            for component in ("gt", "va", "rvf"):
                for value in range(5):
                    statuses.append(
                        request(server, "/api/ratings", rating(case, component, value, rater))[0]
                    )

    threads = [threading.Thread(target=rate_all, args=(f"r{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert statuses == [200] * (4 * len(cases) * 15)
    count = sqlite3.connect(server.store).execute("SELECT count(*) FROM ratings").fetchone()
    assert count == (4 * len(cases) * 15,)
    mode = sqlite3.connect(server.store).execute("PRAGMA journal_mode").fetchone()
    assert mode == ("wal",)


def test_a_restarted_server_keeps_its_ratings_and_token(log: Path, tmp_path: Path) -> None:
    page = build_rating_page([log], 4, 0)
    store = tmp_path / "round.sqlite"
    server = start(page, store)
    case = page.data["cases"][0]["case"]
    assert request(server, "/api/ratings", rating(case, "gt", 4))[0] == 200
    token = server.token
    server.shutdown()
    server.server_close()
    again = start(build_rating_page([log], 4, 0), store)
    try:
        assert again.token == token
        _, body = request(again, "/api/ratings?rater=alice")
        assert [r["value"] for r in json.loads(body)["ratings"]] == [4]
    finally:
        again.shutdown()
        again.server_close()
    with pytest.raises(StoreError, match="the store of another round"):
        RatingServer(build_rating_page([log], 3, 1), store, {}, "127.0.0.1", 0)


def test_the_original_image_is_served_beside_the_scaled_one(tmp_path: Path) -> None:
    import numpy as np
    from utils.rated_logs import write_cases

    data = write_cases(tmp_path / "data", 1)
    noise = np.random.default_rng(0).integers(0, 255, (200, 300), dtype=np.uint8)
    Image.fromarray(noise).save(data / "images/i0.png")
    page = build_rating_page([judged_log(tmp_path, 1)], 1, 0, max_image_px=64)
    server = start(page, tmp_path / "round.sqlite", original_images(page, None))
    try:
        case = page.data["cases"][0]["case"]
        status, body = request(server, f"/image/{case}/0?token={server.token}", token="")
        assert status == 200
        with Image.open(io.BytesIO(body)) as image:
            assert image.size == (300, 200)  # the page embeds it at 64 x 43
        assert request(server, f"/image/{case}/9")[0] == 404
        assert request(server, f"/image/{case}/0", token="x")[0] == 403
    finally:
        server.shutdown()
        server.server_close()


def test_a_store_that_is_not_one_is_named(tmp_path: Path, log: Path) -> None:
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(AnalysisError) as caught:
        read_rating_round([other], [log])
    assert "not a 'medreason rate --serve' store" in str(caught.value.problems)


def test_rate_serve_prints_the_link_and_stops_on_ctrl_c(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command itself: the round's link on 127.0.0.1, the store made, Ctrl-C stops it."""
    from inspect_medreason.cli import main

    served: list[RatingServer] = []

    def interrupted(server: RatingServer, *_: Any) -> None:
        served.append(server)
        raise KeyboardInterrupt

    monkeypatch.setattr(RatingServer, "serve_forever", interrupted)
    store = tmp_path / "round.sqlite"
    args = ["rate", str(log), "--cases", "3", "--serve", "--store", str(store), "--port", "0"]
    assert main(args) == 0
    out = capsys.readouterr()
    [server] = served
    assert f"send each rater this link: http://127.0.0.1:{server.server_address[1]}/?token=" in (
        out.out
    )
    assert server.token in out.out and "every rating given is in the store" in out.err
    assert sqlite3.connect(store).execute("PRAGMA journal_mode").fetchone() == ("wal",)


def raw_request(server: RatingServer, host: str, path: str) -> tuple[int, bytes]:
    """A request as a rebinding page would send it: the round's token, another Host."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_a_request_naming_another_host_is_refused_before_its_token(
    served: tuple[RatingServer, RatingPage],
) -> None:
    server, page = served
    port = server.server_address[1]
    link = f"/?token={server.token}"
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", ""):
        status, body = raw_request(server, host, link)
        assert status == 421, host
        assert page.page_id.encode() not in body and b"token" not in body
    status, body = raw_request(server, f"evil.example:{port}", "/api/ratings?rater=alice")
    assert status == 421 and b"ratings" not in body
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}"):
        status, body = raw_request(server, host, link)
        assert status == 200 and page.page_id.encode() in body, host


def test_an_allowed_host_name_is_answered(log: Path, tmp_path: Path) -> None:
    page = build_rating_page([log], 2, 0)
    server = RatingServer(
        page, tmp_path / "r.sqlite", {}, "127.0.0.1", 0, allowed_hosts=["rate.example.org"]
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        link = f"/?token={server.token}"
        assert raw_request(server, "rate.example.org", link)[0] == 200
        assert raw_request(server, "rate.example.org:443", link)[0] == 200
        assert raw_request(server, "rate.example.org.evil.example", link)[0] == 421
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def linked(log: Path, tmp_path: Path) -> Iterator[tuple[RatingServer, RatingPage]]:
    page = build_rating_page([log], 4, 0, max_image_px=64)
    server = RatingServer(page, tmp_path / "round.sqlite", {}, "127.0.0.1", 0, ["Alice", "bob"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server, page
    finally:
        server.shutdown()
        server.server_close()


def test_a_per_rater_link_rates_under_its_own_name_only(
    linked: tuple[RatingServer, RatingPage], log: Path
) -> None:
    import hashlib
    import hmac

    server, page = linked
    links = server.links()
    assert set(links) == {"Alice", "bob"}
    alice = links["Alice"].partition("token=")[2]
    bob = links["bob"].partition("token=")[2]
    expected = hmac.new(
        server.token.encode(), b"medreason-rate rater link:alice", hashlib.sha256
    ).hexdigest()
    assert alice == expected and alice != bob and server.token not in links["Alice"]
    case = page.data["cases"][0]["case"]
    # the round's own token no longer opens it, nor does a made-up one
    for token in (server.token, "wrong", alice[:-1] + ("0" if alice[-1] != "0" else "1")):
        assert request(server, "/api/ratings", rating(case, "gt", 1), token=token)[0] == 403
    # alice's link claiming to be bob is refused, whatever the case of the name
    status, body = request(server, "/api/ratings", rating(case, "gt", 2, "bob"), token=alice)
    assert status == 403 and "this link is 'Alice'" in json.loads(body)["error"]
    assert request(server, "/api/ratings", rating(case, "gt", 3, " alice"), token=alice)[0] == 200
    no_name = {k: v for k, v in rating(case, "va", 4).items() if k != "rater"}
    assert request(server, "/api/ratings", no_name, token=alice)[0] == 200
    assert request(server, "/api/ratings", rating(case, "gt", 0, "bob"), token=bob)[0] == 200
    rows = sqlite3.connect(server.store).execute(
        "SELECT rater, component, value FROM ratings ORDER BY id"
    )
    assert rows.fetchall() == [("Alice", "gt", 3), ("Alice", "va", 4), ("bob", "gt", 0)]
    # each link reads back only its own rater's ratings
    assert request(server, "/api/ratings?rater=bob", token=alice)[0] == 403
    status, body = request(server, "/api/ratings", token=alice)
    assert status == 200
    assert {r["component"]: r["value"] for r in json.loads(body)["ratings"]} == {"gt": 3, "va": 4}
    # the page a link opens names its rater, escaped inside its script element
    status, html = request(server, "/", token=alice)
    assert status == 200
    assert b'<script type="application/json" id="linked-rater">"Alice"</script>' in html
    status, html = request(server, "/", token=bob)
    assert b'id="linked-rater">"bob"</script>' in html
    people = read_rating_round([server.store], [log])
    assert people.scores == {"Alice": {case: {"gt": 3, "va": 4}}, "bob": {case: {"gt": 0}}}


def test_a_restarted_server_gives_the_same_rater_links(log: Path, tmp_path: Path) -> None:
    page = build_rating_page([log], 2, 0)
    store = tmp_path / "round.sqlite"
    first = RatingServer(page, store, {}, "127.0.0.1", 0, ["alice"])
    links = first.links()
    first.server_close()
    again = RatingServer(page, store, {}, "127.0.0.1", 0, ["alice"])
    try:
        assert again.links()["alice"].partition("?")[2] == links["alice"].partition("?")[2]
    finally:
        again.server_close()


def test_rate_serve_prints_one_link_per_rater_and_warns_off_loopback(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_medreason.cli import main

    served: list[RatingServer] = []

    def interrupted(server: RatingServer, *_: Any) -> None:
        served.append(server)
        raise KeyboardInterrupt

    monkeypatch.setattr(RatingServer, "serve_forever", interrupted)
    store = tmp_path / "round.sqlite"
    args = ["rate", str(log), "--cases", "3", "--serve", "--store", str(store), "--port", "0"]
    assert main([*args, "--host", "0.0.0.0", "--raters", "alice, Bob"]) == 0
    out = capsys.readouterr()
    [server] = served
    assert "warning: serving on 0.0.0.0, not this machine's loopback" in out.err
    assert "no TLS" in out.err and "--allow-host" in out.err
    assert server.token not in out.out
    for name, link in server.links().items():
        assert f"  {name}: {link}" in out.out
    assert set(server.links()) == {"alice", "Bob"}
    assert main([*args, "--raters", "alice,,ALICE"]) == 1
    err = capsys.readouterr().err
    assert "an empty name" in err and "'ALICE' and 'alice' are one rater" in err
    assert len(served) == 1  # refused before serving


def test_raters_from_a_file_and_a_url_as_a_host_are_named(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_medreason.cli import main

    served: list[RatingServer] = []

    def interrupted(server: RatingServer, *_: Any) -> None:
        served.append(server)
        raise KeyboardInterrupt

    monkeypatch.setattr(RatingServer, "serve_forever", interrupted)
    names = tmp_path / "raters.txt"
    names.write_text("\ufeffDr Alice\n\n  bob  \ncarol, dan\n", encoding="utf-8")
    store = tmp_path / "round.sqlite"
    args = ["rate", str(log), "--cases", "3", "--serve", "--store", str(store), "--port", "0"]
    assert main([*args, "--raters", f"@{names}"]) == 0
    assert list(served[0].links()) == ["Dr Alice", "bob", "carol", "dan"]
    capsys.readouterr()
    assert main([*args, "--raters", f"@{tmp_path / 'missing.txt'}"]) == 1
    assert "--raters:" in capsys.readouterr().err
    assert main([*args, "--allow-host", "https://rate.example.org/", "--allow-host", "ok.org"]) == 1
    err = capsys.readouterr().err
    assert "--allow-host 'https://rate.example.org/': a host name" in err and "'ok.org'" not in err
    assert len(served) == 1  # neither was served


def test_served_options_without_serve_are_refused(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inspect_medreason.cli import main

    page = tmp_path / "page.html"
    args = ["rate", str(log), "--output", str(page), "--raters", "a,b", "--allow-host", "x.org"]
    assert main(args) == 1
    assert "--raters and --allow-host: only with --serve" in capsys.readouterr().err
    assert not page.exists()
