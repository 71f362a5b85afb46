"""The rating page in a real browser: Debian's headless Chromium, driven by Selenium, opens the
page from a file, rates several cases, skips one, reloads (nothing is lost), saves, and the
downloaded file is read back by ``medreason``. Skips, saying why, where Chromium or its
driver is not installed (``apt-get install chromium chromium-driver``; CI installs them)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from utils.ports import free_port
from utils.rated_logs import judged_log

from inspect_medreason.cli import main
from inspect_medreason.rating.ratings_file import map_round_to_logs, read_rating_round

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # Chromium 156's RenderDocument (a new document per navigation) gave a reloaded file://
    # page empty localStorage in about 1 run in 4 with a fresh headless profile (a bare page
    # that sets one key and reloads shows it; 0 in 20 without the feature, 0 in 12 over
    # http). The page takes in late storage and never replaces what is stored (see
    # rating_page.html); docs/rating.md tells raters to save often.
    "--disable-features=RenderDocument",
)


def _missing() -> str | None:
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.exists():
            return f"{path} is missing: apt-get install -y {package} to test the page in a browser"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")


def _open_browser(profile: Path, downloads: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    downloads.mkdir(parents=True, exist_ok=True)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")  # a fresh profile
    options.add_experimental_option(
        "prefs",
        {
            "download.default_directory": str(downloads),
            "download.prompt_for_download": False,
            "safebrowsing.enabled": False,
        },
    )
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    # Headless Chromium writes downloads only where it is told to, through DevTools.
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    return driver


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[tuple[Any, Path]]:
    downloads = tmp_path / "downloads"
    driver = _open_browser(tmp_path / "profile", downloads)
    try:
        yield driver, downloads
    finally:
        driver.quit()


def _past_the_guide(driver: Any) -> None:
    """The first visit opens the guide; Enter starts rating."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    assert driver.find_element(By.ID, "intro").is_displayed()
    assert "Two worked examples" in driver.find_element(By.ID, "intro").text
    ActionChains(driver).send_keys("\n").perform()
    assert not driver.find_element(By.ID, "intro").is_displayed()


def _wait_for_file(folder: Path, timeout: float = 15.0) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = [p for p in folder.glob("*.json") if not p.name.endswith(".crdownload")]
        if done and not list(folder.glob("*.crdownload")):
            return done[0]
        time.sleep(0.1)
    raise AssertionError(f"no download in {folder}: {list(folder.iterdir())}")


def _wait_for_text(driver: Any, element: str, text: str, timeout: float = 5.0) -> None:
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while driver.find_element(By.ID, element).text != text:
        if time.monotonic() > deadline:
            kept = driver.execute_script("return JSON.stringify(localStorage)")
            raise AssertionError(f"#{element} never read {text!r}; the browser keeps {kept}")
        time.sleep(0.1)


def _wait_for_value(driver: Any, element: str, value: str, timeout: float = 5.0) -> None:
    """What a field holds once the page has taken in what the browser hands over late."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while driver.find_element(By.ID, element).get_attribute("value") != value:
        if time.monotonic() > deadline:
            kept = driver.execute_script("return JSON.stringify(localStorage)")
            raise AssertionError(f"#{element} never held {value!r}; the browser keeps {kept}")
        time.sleep(0.1)


def test_rating_in_a_browser_survives_a_reload_and_saves_a_file_the_tool_reads(
    browser: tuple[Any, Path], tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    driver, downloads = browser
    log = judged_log(tmp_path, 6)
    page = tmp_path / "page.html"
    assert main(["rate", str(log), "--output", str(page), "--cases", "5"]) == 0

    driver.get(page.as_uri())
    _past_the_guide(driver)
    text = driver.find_element(By.ID, "position").text
    assert text == "1 of 5"
    # the images are shown (decoded by the browser, not broken)
    widths = driver.execute_script(
        "return [...document.querySelectorAll('#images img')].map(i => i.naturalWidth)"
    )
    assert widths and all(w > 0 for w in widths)
    # the rubric's anchors are on the page
    assert "Well aligned with the reference" in driver.find_element(By.ID, "rubric").text

    driver.find_element(By.ID, "rater").send_keys("Dr Alice")
    given: dict[int, tuple[int, int, int]] = {0: (4, 3, 2), 1: (0, 1, 2), 3: (2, 2, 2)}
    for position in range(5):
        if position in given:
            for component, score in zip(("gt", "va", "rvf"), given[position], strict=True):
                driver.find_element(By.ID, f"{component}-{score}").click()
        if position == 2:
            driver.find_element(By.ID, "skip-reason").send_keys("image does not load")
            driver.find_element(By.ID, "skip").click()
        if position == 4:  # partly rated: kept in the browser, saved with what it has
            driver.find_element(By.ID, "gt-1").click()
        if position < 4:
            driver.find_element(By.ID, "next").click()
    assert driver.find_element(By.ID, "progress").text == "4 of 5 done, 1 partly rated"
    case_ids = driver.execute_script(
        "return JSON.parse(document.getElementById('page-data').textContent).cases.map(c => c.case)"
    )

    driver.refresh()  # nothing is lost (the page takes in what the browser hands over late)
    _wait_for_text(driver, "progress", "4 of 5 done, 1 partly rated")
    assert driver.find_element(By.ID, "rater").get_attribute("value") == "Dr Alice"
    assert driver.find_element(By.ID, "position").text == "5 of 5"
    assert driver.find_element(By.ID, "gt-1").is_selected()
    driver.find_element(By.ID, "prev").click()
    assert driver.find_element(By.ID, "gt-2").is_selected()
    assert driver.find_element(By.ID, "rvf-2").is_selected()

    driver.find_element(By.ID, "save").click()
    saved = _wait_for_file(downloads)
    assert "1 of them partly rated" in driver.find_element(By.ID, "status").text

    document = json.loads(saved.read_text(encoding="utf-8"))
    assert document["rater"] == "Dr Alice" and document["version"] == 2
    rated = read_rating_round([saved])
    scores = rated.scores["Dr Alice"]
    for position, (gt, va, rvf) in given.items():
        assert scores[case_ids[position]] == {"gt": gt, "va": va, "rvf": rvf}
    assert rated.skipped["Dr Alice"] == {case_ids[2]: "image does not load"}
    assert scores[case_ids[4]] == {"gt": 1}  # partly rated, counted as partial
    assert rated.partial("Dr Alice") == {case_ids[4]}
    mapping, _ = map_round_to_logs(rated, [log])
    assert set(mapping) == set(case_ids)


def test_a_second_rater_on_the_same_browser_keeps_their_own_ratings(
    browser: tuple[Any, Path], tmp_path: Path
) -> None:
    """Alice rates, leaves; Bob opens the same page on the same browser: "New rater" gives
    him an empty page under his name, and each name switches to that person's own ratings
    (names compared trimmed and case-folded), across a reload; Bob's file holds only his."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver, downloads = browser
    log = judged_log(tmp_path, 4)
    page = tmp_path / "page.html"
    assert main(["rate", str(log), "--output", str(page), "--cases", "3"]) == 0

    def rate(scores: tuple[int, int, int]) -> None:
        for component, score in zip(("gt", "va", "rvf"), scores, strict=True):
            button = driver.find_element(By.ID, f"{component}-{score}")
            # clear of the sticky header, as a person scrolls to it
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", button)
            button.click()

    def rater(name: str) -> None:
        field = driver.find_element(By.ID, "rater")
        field.clear()
        field.send_keys(name + Keys.ENTER)  # Enter (or leaving the field) commits the name

    def progress() -> str:
        return str(driver.find_element(By.ID, "progress").text)

    driver.get(page.as_uri())
    _past_the_guide(driver)
    rater("Alice")
    rate((4, 4, 4))
    driver.find_element(By.ID, "next").click()
    rate((3, 3, 3))
    assert progress() == "2 of 3 done"

    driver.refresh()  # Bob sits down: Alice's session is still open...
    _wait_for_value(driver, "rater", "Alice")
    driver.find_element(By.ID, "new-rater").click()  # ...and he starts his own
    assert progress() == "0 of 3 done"
    assert driver.find_element(By.ID, "rater").get_attribute("value") == ""
    assert not driver.find_element(By.ID, "gt-4").is_selected()
    rater("Bob")
    rate((1, 1, 1))
    assert progress() == "1 of 3 done"

    rater(" alice ")  # Alice's own ratings back
    assert progress() == "2 of 3 done"
    assert driver.find_element(By.ID, "position").text == "2 of 3"
    assert driver.find_element(By.ID, "gt-3").is_selected()
    rater("Bob")
    driver.refresh()
    _wait_for_value(driver, "rater", "Bob")
    assert progress() == "1 of 3 done"

    driver.find_element(By.ID, "save").click()
    document = json.loads(_wait_for_file(downloads).read_text(encoding="utf-8"))
    assert document["rater"] == "Bob"
    assert [(r["gt"], r["va"], r["rvf"]) for r in document["ratings"]] == [(1, 1, 1)]
    rated = read_rating_round([_wait_for_file(downloads)], [log])
    assert list(rated.scores) == ["Bob"] and len(rated.scores["Bob"]) == 1


def _keys(driver: Any, *keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    for key in keys:
        ActionChains(driver).send_keys(key).perform()


def _name(driver: Any, name: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    field = driver.find_element(By.ID, "rater")
    field.clear()
    field.send_keys(name + Keys.ENTER)  # Enter leaves the field: the keys rate again


def test_keys_alone_rate_qualify_save_and_load_back(
    browser: tuple[Any, Path], tmp_path: Path
) -> None:
    """Three key presses rate a case and move on; X and C qualify a component; the overview,
    the key list, the image tools; the saved file loaded back on a fresh rater resumes it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver, downloads = browser
    log = judged_log(tmp_path, 5)
    page = tmp_path / "page.html"
    assert main(["rate", str(log), "--output", str(page), "--cases", "4"]) == 0
    driver.get(page.as_uri())
    _past_the_guide(driver)
    _name(driver, "Carol")
    case_ids = driver.execute_script(
        "return JSON.parse(document.getElementById('page-data').textContent).cases.map(c => c.case)"
    )

    def text(element: str) -> str:
        return str(driver.find_element(By.ID, element).text)

    # a phone: the header is not fixed over the page, and small
    driver.set_window_size(390, 844)
    header = driver.execute_script(
        "const h = document.querySelector('header'); return [getComputedStyle(h).position,"
        " h.getBoundingClientRect().height / window.innerHeight]"
    )
    assert header[0] == "static" and header[1] < 0.25, header
    driver.set_window_size(1280, 1000)
    _keys(driver, "3", "2", "4")  # one case: three keys
    assert text("position") == "2 of 4" and text("progress") == "1 of 4 done"
    _keys(driver, "p")
    assert driver.find_element(By.ID, "gt-3").is_selected()
    assert driver.find_element(By.ID, "rvf-4").is_selected()
    _keys(driver, "n", "1", "j", "k")  # K back up to VA, still open
    assert "focused" in str(driver.find_element(By.ID, "box-va").get_attribute("class"))
    _keys(driver, Keys.TAB)
    assert "focused" in str(driver.find_element(By.ID, "box-rvf").get_attribute("class"))
    _keys(driver, Keys.ARROW_UP)
    assert "focused" in str(driver.find_element(By.ID, "box-va").get_attribute("class"))
    _keys(driver, "x")
    driver.switch_to.active_element.send_keys("image is cropped" + Keys.ENTER)
    _keys(driver, "c")  # the RVF box now: comment on it, then score it
    assert "focused" in str(driver.find_element(By.ID, "box-rvf").get_attribute("class"))
    driver.switch_to.active_element.send_keys("trace is terse" + Keys.ENTER)
    _keys(driver, "2")  # the case is complete (VA cannot be assessed): next unrated
    assert text("position") == "3 of 4" and text("progress") == "2 of 4 done"
    _keys(driver, "0")  # a partly rated case
    assert text("progress") == "2 of 4 done, 1 partly rated"
    _keys(driver, "?")
    assert driver.find_element(By.ID, "keys-box").is_displayed()
    _keys(driver, Keys.ESCAPE, "o")
    grid = driver.find_elements(By.CSS_SELECTOR, "#grid button")
    assert [b.get_attribute("class").split()[0] for b in grid] == [
        "done",
        "done",
        "partial",
        "open",
    ]
    _keys(driver, Keys.ESCAPE)
    # the image tools: zoom in by key, the view's scale says so; a window narrows
    before = driver.execute_script("return document.querySelector('.viewer img').style.transform")
    _keys(driver, "+")
    after = driver.execute_script("return document.querySelector('.viewer img').style.transform")
    assert before != after and "scale" in after
    window = driver.find_elements(By.CSS_SELECTOR, ".tools input[type=range]")[1]
    driver.execute_script(
        "arguments[0].value = 40; arguments[0].dispatchEvent(new Event('input'))", window
    )
    assert "url(" in driver.execute_script(
        "return document.querySelector('.viewer img').style.filter"
    )
    time.sleep(1.2)  # time on a case is counted
    _keys(driver, "s")
    saved = _wait_for_file(downloads)
    document = json.loads(saved.read_text(encoding="utf-8"))
    by_case = {r["case"]: r for r in document["ratings"]}
    second = by_case[case_ids[1]]
    assert second["gt"] == 1 and second["rvf"] == 2 and "va" not in second
    assert second["cannot_assess"] == {"va": "image is cropped"}
    assert second["comments"] == {"rvf": "trace is terse"}
    assert by_case[case_ids[2]]["gt"] == 0 and by_case[case_ids[2]]["seconds"] >= 1
    rated = read_rating_round([saved], [log])
    assert rated.partial("Carol") == {case_ids[2]}

    driver.find_element(By.ID, "new-rater").click()  # another machine, as it were
    assert text("progress") == "0 of 4 done"
    driver.find_element(By.ID, "load-file").send_keys(str(saved))
    _wait_for_text(driver, "progress", "2 of 4 done, 1 partly rated")
    assert driver.find_element(By.ID, "rater").get_attribute("value") == "Carol"
    assert text("position") == "3 of 4"  # the first case not done
    # unsaved ratings: closing asks first (the page asks for it; the browser shows it)
    _keys(driver, "4")
    asks = driver.execute_script(
        "const e = new Event('beforeunload', {cancelable: true}); window.dispatchEvent(e);"
        "return e.defaultPrevented"
    )
    assert asks is True


def test_two_raters_at_once_a_killed_browser_and_a_restarted_server(tmp_path: Path) -> None:
    """Two browsers rate against one server; one is killed mid-round without saving and
    loses nothing; the server restarts on the same store and port, the other browser's
    ratings given while it was down reach it, and the store is read as the raters' files."""
    import threading

    from inspect_medreason.rating.page import build_rating_page
    from inspect_medreason.rating.server import RatingServer, original_images

    log = judged_log(tmp_path, 5)
    page = build_rating_page([log], 4, 0)
    store = tmp_path / "round.sqlite"
    port = free_port()

    def serve() -> RatingServer:
        server = RatingServer(page, store, original_images(page, None), "127.0.0.1", port)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    server = serve()
    alice = _open_browser(tmp_path / "alice", tmp_path / "alice-downloads")
    bob = _open_browser(tmp_path / "bob", tmp_path / "bob-downloads")
    try:
        for driver, name in ((alice, "Alice"), (bob, "Bob")):
            driver.get(server.url)
            _past_the_guide(driver)
            _name(driver, name)
        _keys(alice, "4", "4", "4", "3", "3", "3")
        _keys(bob, "1", "2", "3", "0")
        _wait_for_text(alice, "server-state", "all ratings on the server")
        _wait_for_text(bob, "server-state", "all ratings on the server")
        alice.quit()  # killed: never saved a file
        people = read_rating_round([store], [log])
        assert [len(people.scores[r]) for r in ("Alice", "Bob")] == [2, 2]
        assert people.partial("Bob") and not people.partial("Alice")

        server.shutdown()
        server.server_close()
        _keys(bob, "1", "2")  # the server is down: kept, waiting
        _wait_for_text(bob, "server-state", "2 rating(s) waiting for the server")
        server = serve()  # same store, same token, same port
        _wait_for_text(bob, "server-state", "all ratings on the server", timeout=15)

        alice = _open_browser(tmp_path / "alice-2", tmp_path / "alice-downloads")
        alice.get(server.url)  # Alice on a fresh browser: the server gives hers back
        _past_the_guide(alice)
        _name(alice, "alice")
        _wait_for_text(alice, "progress", "2 of 4 done")
        _wait_for_text(alice, "position", "3 of 4")  # at her first unrated case, not case 1
        people = read_rating_round([store], [log])
        assert len(people.scores["Bob"]) == 2 and not people.partial("Bob")
        assert all(set(s) == {"gt", "va", "rvf"} for s in people.scores["Alice"].values())
        mapping, _ = map_round_to_logs(people, [log])
        assert set(mapping) == set(people.scores["Bob"]) == set(people.scores["Alice"])
        # Alice skips her first case, then thinks better of it and scores GT alone: the
        # store holds that one score, not the ones the skip withdrew
        from selenium.webdriver.common.by import By

        first = sorted(people.scores["Alice"])[0]
        position = [c["case"] for c in page.data["cases"]].index(first)
        alice.execute_script(f"go({position})")
        alice.find_element(By.ID, "skip-reason").send_keys("image does not load")
        alice.find_element(By.ID, "skip").click()
        _wait_for_text(alice, "server-state", "all ratings on the server")
        assert read_rating_round([store]).skipped["alice"] == {first: "image does not load"}
        _keys(alice, "1")
        _wait_for_text(alice, "server-state", "all ratings on the server")
        assert read_rating_round([store]).scores["alice"][first] == {"gt": 1}
    finally:
        for driver in (alice, bob):
            with contextlib.suppress(Exception):  # the killed one is gone already
                driver.quit()
        server.shutdown()
        server.server_close()


def test_a_dicom_case_offers_its_windows_and_a_png_case_none(
    browser: tuple[Any, Path], tmp_path: Path
) -> None:
    """The preset menu is on the DICOM case only; choosing a window (menu or W) shows the
    rendering of the raw values the page embeds, keeping the zoom."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select
    from utils.dicom_fixtures import dicom_case_log

    driver, _ = browser
    log = dicom_case_log(tmp_path)
    page = tmp_path / "page.html"
    # the windows are rendered from the DICOM's raw values, read from the data folder named
    command = ["rate", str(log), "--output", str(page), "--cases", "2"]
    assert main([*command, "--data", str(tmp_path / "data")]) == 0
    driver.get(page.as_uri())
    _past_the_guide(driver)
    data = driver.execute_script(
        "return JSON.parse(document.getElementById('page-data').textContent)"
    )
    menus = []
    for position, case in enumerate(data["cases"]):
        driver.execute_script(f"go({position})")
        found = driver.find_elements(By.CSS_SELECTOR, "#images select.window-preset")
        menus.append(len(found))
        if "windows" not in case:
            continue
        presets = case["windows"][0]["presets"]
        menu = Select(found[0])
        assert menu.options[0].text == "as sent"
        assert [o.text.split(":")[0] for o in menu.options][1:] == [p["name"] for p in presets]
        img = driver.find_element(By.CSS_SELECTOR, "#images img")
        assert img.get_attribute("src") == case["images"][0]
        _keys(driver, "+", "+")
        zoomed = driver.execute_script("return views[0].scale")
        lung = next(n for n, p in enumerate(presets) if p["name"] == "lung (CT)")
        menu.select_by_index(lung + 1)
        assert img.get_attribute("src") == presets[lung]["src"]
        assert driver.execute_script("return views[0].scale") == zoomed
        _keys(driver, "w")  # the next window
        assert img.get_attribute("src") == presets[lung + 1]["src"]
        assert menu.first_selected_option.text.startswith(presets[lung + 1]["name"])
        for _ in range(len(presets) - lung - 1):
            _keys(driver, "w")
        assert img.get_attribute("src") == case["images"][0]  # back to the image as sent
    assert sorted(menus) == [0, 1]


def test_a_per_rater_link_fixes_the_name_and_rates_as_that_rater(tmp_path: Path) -> None:
    import threading

    from selenium.webdriver.common.by import By

    from inspect_medreason.rating.page import build_rating_page
    from inspect_medreason.rating.server import RatingServer

    log = judged_log(tmp_path, 3)
    page = build_rating_page([log], 3, 0)
    store = tmp_path / "round.sqlite"
    server = RatingServer(page, store, {}, "127.0.0.1", 0, ["Alice", "Bob"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = _open_browser(tmp_path / "profile", tmp_path / "downloads")
    try:
        links = server.links()
        driver.get(links["Bob"])  # Bob first, on this browser
        _past_the_guide(driver)
        _keys(driver, "2", "2", "2")
        _wait_for_text(driver, "server-state", "all ratings on the server")
        driver.get(links["Alice"])  # then Alice's link on the same browser
        field = driver.find_element(By.ID, "rater")
        assert field.get_attribute("value") == "Alice" and field.get_attribute("readOnly")
        assert not driver.find_element(By.ID, "new-rater").is_displayed()
        _wait_for_text(driver, "progress", "0 of 3 done")  # Bob's ratings are not hers
        driver.execute_script("switchRater('Bob')")  # the name cannot be changed
        assert field.get_attribute("value") == "Alice"
        assert "rates as Alice only" in driver.find_element(By.ID, "status").text
        _keys(driver, "4", "3")
        _wait_for_text(driver, "server-state", "all ratings on the server")
        people = read_rating_round([store], [log])
        assert sorted(people.scores) == ["Alice", "Bob"]
        assert list(people.scores["Alice"].values()) == [{"gt": 4, "va": 3}]
        assert list(people.scores["Bob"].values()) == [{"gt": 2, "va": 2, "rvf": 2}]
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()


# ---- issue 54: what the page says it keeps survives a killed browser; only the round's
# server is sent a token; a refused rating stays queued; any text typed is taken ----


def _process_tree(root: int) -> list[int]:
    """A process and every descendant (read from /proc: no dependency for one test)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="ascii", errors="replace")
            parent = int(stat.rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    tree, todo = [], [root]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo += children.get(pid, [])
    return tree


def _kill_browser(driver: Any) -> None:
    """Kill Chromium as a crash or a power cut would: every one of its processes at once
    (SIGKILL), none told first, then its driver."""
    import os
    import signal

    browser = [
        p for p in _process_tree(driver.service.process.pid) if p != driver.service.process.pid
    ]
    assert browser, "no Chromium process under chromedriver"
    for pid in browser:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in browser):
        assert time.monotonic() < deadline, "Chromium outlived SIGKILL"
        time.sleep(0.05)
    with contextlib.suppress(Exception):
        driver.quit()


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return "Z"


def _open_page(driver: Any, url: str) -> None:
    """The page, past the guide if it opens, with what the browser keeps on disk taken in."""
    from selenium.webdriver.common.by import By

    driver.get(url)
    deadline = time.monotonic() + 15
    while not driver.execute_script("return dbReady"):
        assert time.monotonic() < deadline, "the page never read what IndexedDB keeps"
        time.sleep(0.05)
    if driver.find_element(By.ID, "intro").is_displayed():
        driver.execute_script("closeDialogs()")


def _rate(driver: Any, position: int, component: str, value: int) -> None:
    driver.execute_script(
        "go(arguments[0]); rate(arguments[1], arguments[2]);", position, component, value
    )


def _wait_until(driver: Any, element: str, holds: Any, timeout: float = 15.0) -> str:
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    while True:
        text = str(driver.find_element(By.ID, element).text)
        if holds(text):
            return text
        if time.monotonic() > deadline:
            status = driver.find_element(By.ID, "status").text
            raise AssertionError(f"#{element} still reads {text!r} (status: {status!r})")
        time.sleep(0.05)


def _latest(store: Path, rater: str) -> dict[tuple[str, str], Any]:
    from inspect_medreason.rating.store import latest_ratings

    return {(r.case, r.component): r.value for r in latest_ratings(store, rater)}


def test_a_killed_browser_loses_no_rating_the_page_said_it_kept(tmp_path: Path) -> None:
    """Four rounds, the server down in two of them: ratings given until the page says they
    are kept (on the server, or waiting for it), then a few more, then Chromium killed at a
    random moment. Reopened on the same profile each time, the page sends what it kept, and
    the store holds every acknowledged rating exactly (a rating given after it, and killed
    before it was kept, may or may not have replaced it)."""
    import random
    import threading

    from inspect_medreason.rating.page import build_rating_page
    from inspect_medreason.rating.server import RatingServer

    log = judged_log(tmp_path, 6)
    page = build_rating_page([log], 6, 0)
    cases = [c["case"] for c in page.data["cases"]]
    store, port = tmp_path / "round.sqlite", free_port()

    def serve() -> RatingServer:
        server = RatingServer(page, store, {}, "127.0.0.1", port)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    first = serve()
    url = first.url
    server: RatingServer | None = first
    rng = random.Random(54)
    allowed: dict[tuple[str, str], set[int | None]] = {}
    driver = _open_browser(tmp_path / "profile", tmp_path / "downloads")
    try:
        _open_page(driver, url)
        _name(driver, "Alice")
        for up in (False, True, False, True):
            if not up and server is not None:
                server.shutdown()
                server.server_close()
                server = None
            for _ in range(rng.randint(2, 5)):
                position, component = rng.randrange(len(cases)), rng.choice(["gt", "va", "rvf"])
                value = rng.randrange(5)
                _rate(driver, position, component, value)
                allowed.setdefault((cases[position], component), set()).add(value)
            if up:
                _wait_until(driver, "server-state", lambda t: t == "all ratings on the server")
            else:
                _wait_until(driver, "server-state", lambda t: "waiting" in t and "saving" not in t)
            # acknowledged: from now on each of these holds its last value
            acknowledged = driver.execute_script("return JSON.stringify(state.ratings)")
            for case, entry in json.loads(acknowledged).items():
                for component in ("gt", "va", "rvf"):
                    if component in entry:
                        allowed[(case, component)] = {entry[component]}
            for _ in range(rng.randint(0, 3)):  # not waited for: kept or not
                position, component = rng.randrange(len(cases)), rng.choice(["gt", "va", "rvf"])
                value = rng.randrange(5)
                _rate(driver, position, component, value)
                allowed.setdefault((cases[position], component), {None}).add(value)
            time.sleep(rng.uniform(0, 0.4))
            _kill_browser(driver)
            if server is None:  # the page is served: reopened once its server is back
                server = serve()
            driver = _open_browser(tmp_path / "profile", tmp_path / "downloads")
            _open_page(driver, url)
        _wait_until(driver, "server-state", lambda t: t == "all ratings on the server", 30)
        stored = _latest(store, "Alice")
        for key, values in allowed.items():
            assert stored.get(key) in values, (key, stored.get(key), values)
        exact = [key for key, values in allowed.items() if len(values) == 1]
        assert len(exact) >= 5  # most were acknowledged and never touched again
    finally:
        with contextlib.suppress(Exception):
            driver.quit()
        if server is not None:
            server.shutdown()
            server.server_close()


def test_a_killed_browser_keeps_the_offline_pages_ratings(tmp_path: Path) -> None:
    """The page opened from a file: three ratings, 'kept in this browser', Chromium killed
    at once; reopened, the three are there (localStorage alone lost such ratings)."""
    from inspect_medreason.cli import main

    log = judged_log(tmp_path, 4)
    html = tmp_path / "page.html"
    assert main(["rate", str(log), "--output", str(html), "--cases", "4"]) == 0
    driver = _open_browser(tmp_path / "profile", tmp_path / "downloads")
    try:
        _open_page(driver, html.as_uri())
        _name(driver, "Bob")
        for position, value in ((0, 4), (1, 2), (2, 0)):
            _rate(driver, position, "gt", value)
        _wait_until(driver, "server-state", lambda t: t == "kept in this browser")
        _kill_browser(driver)
        driver = _open_browser(tmp_path / "profile", tmp_path / "downloads")
        _open_page(driver, html.as_uri())
        kept = json.loads(driver.execute_script("return JSON.stringify(state)"))
        assert kept["rater"] == "Bob"
        assert sorted(entry["gt"] for entry in kept["ratings"].values()) == [0, 2, 4]
    finally:
        with contextlib.suppress(Exception):
            driver.quit()


def test_a_process_on_the_port_is_sent_no_token(tmp_path: Path) -> None:
    """The server stops and another program takes its port, answering 200 to everything:
    the page sends it no token and no rating, keeps both ratings waiting, and says why;
    the round's server back, they reach it."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from inspect_medreason.rating.page import build_rating_page
    from inspect_medreason.rating.server import RatingServer

    log = judged_log(tmp_path, 3)
    page = build_rating_page([log], 3, 0)
    store, port = tmp_path / "round.sqlite", free_port()
    server = RatingServer(page, store, {}, "127.0.0.1", port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    seen: list[bytes] = []

    class Squatter(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            seen.append(self.requestline.encode() + bytes(self.headers) + self.rfile.read(length))
            body = json.dumps({"proof": "0" * 64, "id": 1, "ratings": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

    driver = _open_browser(tmp_path / "profile", tmp_path / "downloads")
    squatter = None
    try:
        _open_page(driver, server.url)
        _name(driver, "Carol")
        _rate(driver, 0, "gt", 4)
        _wait_until(driver, "server-state", lambda t: t == "all ratings on the server")
        server.shutdown()
        server.server_close()
        squatter = ThreadingHTTPServer(("127.0.0.1", port), Squatter)
        threading.Thread(target=squatter.serve_forever, daemon=True).start()
        _rate(driver, 1, "gt", 1)
        _rate(driver, 1, "va", 2)
        _wait_until(driver, "status", lambda t: "not this round's server" in t)
        time.sleep(2.5)  # a retry or two
        assert driver.find_element(By_ID(), "server-state").text.startswith(
            "2 rating(s) waiting for the server"
        )
        assert seen and all(server.token.encode() not in request for request in seen)
        assert all(b"POST" not in request.split(b" ")[0] for request in seen)
        squatter.shutdown()
        squatter.server_close()
        squatter = None
        server = RatingServer(page, store, {}, "127.0.0.1", port)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        _wait_until(driver, "server-state", lambda t: t == "all ratings on the server", 20)
        assert set(_latest(store, "Carol").values()) == {4, 1, 2}
    finally:
        with contextlib.suppress(Exception):
            driver.quit()
        for one in (server, squatter):
            if one is not None:
                one.shutdown()
                one.server_close()


def By_ID() -> str:
    from selenium.webdriver.common.by import By

    return str(By.ID)


def test_a_refused_rating_stays_queued_and_any_text_typed_is_taken(tmp_path: Path) -> None:
    """A rating the server refuses (an over-long comment, as an older page could queue) is
    kept, said with the server's reason, still there after a reload, and replaced when the
    rater changes that rating. Comments of random code units (lone surrogates, controls,
    astral characters, up to 2,500 long) all reach the server, within its limits. The
    fields count their length; E reaches the name field."""
    import random
    import threading

    from selenium.webdriver.common.by import By

    from inspect_medreason.rating.page import build_rating_page
    from inspect_medreason.rating.rules import MAX_NOTE_CHARS, UNTYPED
    from inspect_medreason.rating.server import RatingServer

    log = judged_log(tmp_path, 4)
    page = build_rating_page([log], 4, 0)
    store = tmp_path / "round.sqlite"
    server = RatingServer(page, store, {}, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    driver = _open_browser(tmp_path / "profile", tmp_path / "downloads")
    try:
        _open_page(driver, server.url)
        _keys(driver, "e")
        assert driver.switch_to.active_element.get_attribute("id") == "rater"
        _name(driver, "Dana")
        _rate(driver, 0, "gt", 3)
        driver.execute_script(
            "queue(Object.assign(rowFor(DATA.cases[0].case, 'va', {va: 2}, state.rater),"
            " {comment: 'x'.repeat(3000)}))"
        )
        _wait_until(driver, "server-state", lambda t: t == "1 rating(s) refused by the server")
        status = driver.find_element(By.ID, "status").text
        assert "case 1's va" in status and "comment:" in status and "change that rating" in status
        driver.refresh()
        _open_page(driver, server.url)
        _wait_until(driver, "server-state", lambda t: t == "1 rating(s) refused by the server")
        _rate(driver, 0, "va", 2)  # changed: the refused row is replaced
        _wait_until(driver, "server-state", lambda t: t == "all ratings on the server")
        assert _latest(store, "Dana") == {
            (page.data["cases"][0]["case"], c): v for c, v in (("gt", 3), ("va", 2))
        }

        field = driver.find_element(By.ID, "comment-gt")
        assert field.get_attribute("maxLength") == str(MAX_NOTE_CHARS)
        driver.execute_script(
            "const f = $('comment-gt'); f.value = 'abc'; f.dispatchEvent(new Event('input'))"
        )
        assert "3/2000" in driver.find_element(By.ID, "rubric").text

        rng = random.Random(54)
        pools = [
            (0, 0x20),
            (0x20, 0x7F),
            (0x7F, 0xA0),
            (0xA0, 0xD800),
            (0xD800, 0xE000),
            (0xE000, 0x10000),
        ]
        for number in range(12):
            size = rng.choice([1, 10, 300, MAX_NOTE_CHARS, 2500])
            units = [rng.randrange(*rng.choice(pools)) for _ in range(size)]
            driver.execute_script(
                "go(arguments[0] % DATA.cases.length); rate('rvf', 1);"
                " setComment('rvf', String.fromCharCode(...arguments[1]) + '.');",
                number,
                units,
            )
        _wait_until(driver, "server-state", lambda t: t == "all ratings on the server", 30)
        from inspect_medreason.rating.store import latest_ratings

        comments = [r.comment for r in latest_ratings(store, "Dana") if r.component == "rvf"]
        assert len(comments) == 4 and all(comments)
        for comment in comments:
            assert comment is not None and len(comment) <= MAX_NOTE_CHARS
            assert not UNTYPED.search(comment)
    finally:
        with contextlib.suppress(Exception):
            driver.quit()
        server.shutdown()
        server.server_close()
