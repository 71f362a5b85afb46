"""The rating round from Python, without the command: the page ``build_rating_page`` makes is
the page ``medreason rate`` writes (and what the command prints comes from it), a round's
ratings read back as a table (``RatingRound.to_pandas``), and a round served by
``served_round`` stores what a rater posts and stops at the block's end."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest
from utils.rated_logs import default_truth, judged_log, page_cases, ratings_document

from inspect_medreason.cli import main
from inspect_medreason.rating import (
    RATED_COMPONENTS,
    build_rating_page,
    read_rating_round,
    served_round,
)
from inspect_medreason.rating.ratings_file import RATING_COLUMNS
from inspect_medreason.rating.server import TOKEN_HEADER

pytestmark = pytest.mark.xdist_group("rating_library")


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return judged_log(tmp_path_factory.mktemp("library"), 6)


def test_the_page_built_in_python_is_the_page_the_command_writes(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    not_a_log = tmp_path / "notes.txt"
    not_a_log.write_text("not a log")
    page = build_rating_page([str(log.parent), not_a_log], cases=4, seed=2, max_image_px=64)
    assert page.cases == 4 and sum(page.strata.values()) == 4
    assert page.notes == [f"{not_a_log}: skipped, not an eval log (.eval or .json)"]
    assert page.data["page_id"] == page.page_id and len(page.data["cases"]) == 4
    capsys.readouterr()
    output = tmp_path / "page.html"
    code = main(
        [
            "rate",
            str(log.parent),
            str(not_a_log),
            "--output",
            str(output),
            "--cases",
            "4",
            "--seed",
            "2",
            "--max-image-px",
            "64",
        ]
    )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert output.read_text(encoding="utf-8") == page.html
    assert printed.err.splitlines() == [f"note: {note}" for note in page.notes]
    assert printed.out.splitlines()[1:] == [
        f"  {count:4d}  {stratum}" for stratum, count in page.strata.items()
    ]
    assert f"page {page.page_id}: {page.cases} cases" in printed.out.splitlines()[0]


def test_a_round_read_back_is_one_row_per_rater_case_and_component(
    log: Path, tmp_path: Path
) -> None:
    page = build_rating_page([log], cases=6, seed=0, max_image_px=64)
    numbers = page_cases([log], page.page_id)
    alice = ratings_document(page.page_id, "alice", numbers)
    bob = ratings_document(page.page_id, "bob", numbers)
    skipped, blocked, partial, *_ = sorted(numbers)
    entries = {entry["case"]: entry for entry in bob["ratings"]}
    entries[skipped] = {"case": skipped, "skipped": "the image does not load"}
    entries[blocked].pop("rvf")
    entries[blocked]["cannot_assess"] = {"rvf": "no trace to read"}
    entries[blocked]["comments"] = {"gt": "close"}
    entries[partial].pop("va")
    entries[partial]["seconds"] = 12.5
    bob["ratings"] = list(entries.values())
    files = []
    for document in (alice, bob):
        path = tmp_path / f"{document['rater']}.json"
        path.write_text(json.dumps(document))
        files.append(path)

    table = read_rating_round(files, logs=[log]).to_pandas()

    assert tuple(table.columns) == RATING_COLUMNS
    assert len(table) == 2 * len(numbers) * len(RATED_COMPONENTS)
    assert str(table["score"].dtype) == "Int64"
    assert set(table["page_id"]) == {page.page_id}
    by_key = table.set_index(["rater", "case", "component"])
    for case, number in numbers.items():
        for component, score in default_truth(number).items():
            assert by_key.loc[("alice", case, component), "score"] == score
    assert by_key.loc[("alice", skipped, "gt"), "source"] == str(files[0])
    for component in RATED_COMPONENTS:
        row = by_key.loc[("bob", skipped, component)]
        assert row["skipped"] == "the image does not load" and pd.isna(row["score"])
    assert pd.isna(by_key.loc[("bob", blocked, "rvf"), "score"])
    assert by_key.loc[("bob", blocked, "rvf"), "cannot_assess"] == "no trace to read"
    assert by_key.loc[("bob", blocked, "gt"), "comment"] == "close"
    assert pd.isna(by_key.loc[("bob", partial, "va"), "score"])  # left out: missing, not 0
    assert by_key.loc[("bob", partial, "gt"), "seconds"] == 12.5
    assert table["seconds"].isna().sum() == len(table) - len(RATED_COMPONENTS)


def test_a_round_served_from_python_stores_what_a_rater_posts(log: Path, tmp_path: Path) -> None:
    page = build_rating_page([log], cases=3, seed=1, max_image_px=64)
    store = tmp_path / "round.sqlite"
    case = page.data["cases"][0]["case"]
    with served_round(page, store, port=0, raters=["alice"]) as server:
        [(rater, link)] = server.links().items()
        assert rater == "alice" and link.startswith(f"http://127.0.0.1:{server.server_port}/")
        token = link.partition("token=")[2]
        request = urllib.request.Request(
            f"http://127.0.0.1:{server.server_port}/api/ratings",
            data=json.dumps(
                {
                    "case": case,
                    "component": "gt",
                    "value": 3,
                    "given_at": datetime.now(UTC).isoformat(),
                }
            ).encode(),
            headers={
                TOKEN_HEADER: token,
                "Content-Type": "application/json",
                "Origin": f"http://127.0.0.1:{server.server_port}",
            },
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 200
        port = server.server_port
    with pytest.raises(urllib.error.URLError):  # stopped at the block's end
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/hello", timeout=5)

    table = read_rating_round([store], logs=[log]).to_pandas()
    rated = table[table["score"].notna()]
    assert rated[["rater", "case", "component", "score"]].values.tolist() == [
        ["alice", case, "gt", 3]
    ]
    assert set(table["source"]) == {str(store)}
