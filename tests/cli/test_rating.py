"""medreason rate: the page (self-contained, blinded, stratified, deterministic) and the
ratings files (format, validation, merging, mapping back to the logs)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json
from utils.rated_logs import (
    SECRET_RATIONALE,
    judged_log,
    page_cases,
    ratings_document,
)

from inspect_medreason.cli import main
from inspect_medreason.cli.challenge import ChallengeError
from inspect_medreason.cli.rating import (
    RATED_COMPONENTS,
    collect_candidates,
    map_round_to_logs,
    read_rating_round,
    rubric,
    stratified_sample,
)
from inspect_medreason.core.prompts import load_template


@pytest.fixture(scope="module")
def two_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two models' judged runs of the same 12 cases."""
    root = tmp_path_factory.mktemp("rated")
    return [
        judged_log(root, 12, model="mockllm/alpha-secret-7b"),
        judged_log(root, 12, model="mockllm/beta-secret-13b"),
    ]


def page_json(html: str) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="page-data">(.*?)</script>', html, re.DOTALL
    )
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def write_page(logs: list[Path], output: Path, *extra: str) -> tuple[str, str]:
    code = main(["rate", *map(str, logs), "--output", str(output), *extra])
    assert code == 0
    html = output.read_text(encoding="utf-8")
    return html, page_json(html)["page_id"]


def test_the_page_is_self_contained_and_blinded(two_logs: list[Path], tmp_path: Path) -> None:
    html, _ = write_page(two_logs, tmp_path / "page.html", "--cases", "10")
    data = page_json(html)
    # nothing fetched from anywhere: no URL but data URIs, and a policy forbidding requests
    assert not re.search(r"(src|href)\s*=\s*[\"'](?!data:)", html.replace("href = URL", ""))
    assert "default-src 'none'" in html
    assert "http://" not in html and "https://" not in html
    # never the model, the judges' words, a score key or where the case came from
    for secret in ("alpha-secret", "beta-secret", "mockllm", SECRET_RATIONALE, ".eval"):
        assert secret.lower() not in html.lower(), secret
    for case in data["cases"]:
        assert set(case) == {
            "case",
            "question",
            "context",
            "reference",
            "answer",
            "trace",
            "images",
        }
        assert case["images"] and all(
            i.startswith("data:image/png;base64,") for i in case["images"]
        )
        assert "[model]" in case["answer"] and "[model]" in case["trace"]
        assert not re.search(r"\[c\d+\]", case["case"])  # the id tells nothing of the sample
    serialised = json.dumps(data)
    for forbidden in ("gt_final", "va_answer", "rvf_trace", "judges", "eval_id", 'score"'):
        assert forbidden not in serialised, forbidden
    assert len(data["cases"]) == 10 and len({c["case"] for c in data["cases"]}) == 10


def test_the_rubric_is_the_judges_own_prompt_files() -> None:
    shown = rubric()
    for key, template in (
        ("gt", "judge_gt_system"),
        ("va", "judge_va_system"),
        ("rvf", "judge_rvf_system"),
    ):
        text = load_template(template).text
        assert [a[0] for a in shown[key]["anchors"]] == [4, 3, 2, 1, 0]
        for _, anchor in shown[key]["anchors"]:
            assert anchor in text
        assert shown[key]["uncertainty"].startswith("Uncertainty:")
        assert shown[key]["sha256"] == load_template(template).sha256


def test_the_sample_is_stratified_deterministic_and_order_free(two_logs: list[Path]) -> None:
    candidates, _ = collect_candidates(two_logs)
    assert len(candidates) == 24
    first = stratified_sample(candidates, 12, seed=5)
    again = stratified_sample(list(reversed(candidates)), 12, seed=5)
    assert [c.ref for c in first] == [c.ref for c in again]
    assert [c.ref for c in stratified_sample(candidates, 12, seed=6)] != [c.ref for c in first]
    # two models, three modalities, two tasks: 12 strata of 2; 12 cases take one from each
    strata = Counter((c.model, *c.stratum) for c in first)
    assert len(strata) == 12 and set(strata.values()) == {1}
    per_model = Counter(c.model for c in stratified_sample(candidates, 7, seed=1))
    assert sorted(per_model.values()) == [3, 4]
    # all of them when more are asked for than there are
    assert len(stratified_sample(candidates, 100, seed=1)) == 24


def test_the_same_seed_writes_the_same_page(two_logs: list[Path], tmp_path: Path) -> None:
    one, page_one = write_page(two_logs, tmp_path / "a.html", "--cases", "6", "--seed", "3")
    two, page_two = write_page(
        list(reversed(two_logs)), tmp_path / "b.html", "--cases", "6", "--seed", "3"
    )
    assert one == two and page_one == page_two
    _, other = write_page(two_logs, tmp_path / "c.html", "--cases", "6", "--seed", "4")
    assert other != page_one


def test_images_come_from_the_data_folder_when_the_log_holds_none(tmp_path: Path) -> None:
    log = judged_log(tmp_path, 3, log_images=False)
    html, _ = write_page([log], tmp_path / "page.html", "--cases", "3")
    assert all(c["images"] for c in page_json(html)["cases"])
    # a data folder that does not hold them is a message naming the case
    (tmp_path / "empty").mkdir()
    code = main(
        ["rate", str(log), "--output", str(tmp_path / "p2.html"), "--data", str(tmp_path / "empty")]
    )
    assert code == 1 and not (tmp_path / "p2.html").exists()


def test_ratings_files_merge_and_map_back_to_their_samples(
    two_logs: list[Path], tmp_path: Path
) -> None:
    _, page_id = write_page(two_logs, tmp_path / "page.html", "--cases", "8")
    shown = {c["case"] for c in page_json((tmp_path / "page.html").read_text("utf-8"))["cases"]}
    cases = {c: n for c, n in page_cases(two_logs, page_id).items() if c in shown}
    assert len(cases) == 8
    a = write_json(tmp_path / "a.json", ratings_document(page_id, "alice", cases))
    document = ratings_document(page_id, "bob", cases)
    document["ratings"][0] = {"case": document["ratings"][0]["case"], "skipped": "blurred"}
    b = write_json(tmp_path / "b.json", document)
    rated = read_rating_round([a, b])
    assert set(rated.scores) == {"alice", "bob"}
    assert len(rated.scores["alice"]) == 8 and len(rated.scores["bob"]) == 7
    assert list(rated.skipped["bob"].values()) == ["blurred"]
    mapping, _ = map_round_to_logs(rated, two_logs)
    for case, candidate in mapping.items():
        assert int(str(candidate.sample_id).lstrip("c")) == cases[case]


def problems_of(paths: list[Path]) -> list[str]:
    with pytest.raises(ChallengeError) as caught:
        read_rating_round(paths)
    return caught.value.problems


def test_a_bad_ratings_file_is_every_problem_named(tmp_path: Path) -> None:
    good = ratings_document("p1", "alice", {"ca": 1, "cb": 2})
    bad = {
        **good,
        "colour": "blue",
        "ratings": [
            {"case": "ca", "gt": 5, "va": 2.5, "rvf": True},
            {"case": "ca", "gt": 1, "va": 1, "rvf": 1},
            {"case": "cb", "gt": 1, "va": 1, "rvf": 1, "comment": "x"},
            {"case": "cc", "skipped": ""},
            {"case": "cd", "skipped": "no image", "gt": 2},
            {"case": "ce", "gt": 1, "va": 1, "rvf": 1, "rated_at": "yesterday"},
            "not an object",
        ],
    }
    problems = problems_of([write_json(tmp_path / "bad.json", bad)])
    text = "\n".join(problems)
    assert "unknown key(s) 'colour'" in text
    assert "case ca: gt=5, va=2.5, rvf=true" in text
    assert "case ca: rated twice (ratings 1 and 2)" in text
    assert "case cb: unknown key(s) 'comment'" in text
    assert 'case cc: skipped is ""' in text
    assert "case cd: skipped, yet scored gt" in text
    assert 'case ce: rated_at is "yesterday"' in text
    assert "rating 7: not an object" in text
    assert all(str(tmp_path / "bad.json") in p for p in problems)


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"{not json", "not a readable JSON file"),
        (b"[1, 2]", "not a ratings file"),
        (b'{"format": "medreason-calibration"}', "not a ratings file saved by"),
        (b"[" * 100_000, "nested too deeply"),
        (b"\xff\xfe", "not a readable JSON file"),
    ],
)
def test_what_is_not_a_ratings_file_is_a_message(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(content)
    assert any(expected in p for p in problems_of([path]))


def test_files_of_different_pages_or_one_rater_twice_are_refused(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", ratings_document("p1", "alice", {"ca": 1}))
    b = write_json(tmp_path / "b.json", ratings_document("p2", "bob", {"ca": 1}))
    c = write_json(tmp_path / "c.json", ratings_document("p1", " alice ", {"cb": 1}))
    assert any("different pages" in p and "p2" in p for p in problems_of([a, b]))
    assert any("rater 'alice' again" in p for p in problems_of([a, c]))
    version = write_json(
        tmp_path / "v.json", {**ratings_document("p1", "x", {"ca": 1}), "version": 2}
    )
    assert any("version 2; this medreason reads version 1" in p for p in problems_of([version]))


def test_ratings_of_another_page_do_not_map_to_these_logs(
    two_logs: list[Path], tmp_path: Path
) -> None:
    a = write_json(tmp_path / "a.json", ratings_document("0123456789abcdef", "alice", {"cfake": 1}))
    with pytest.raises(ChallengeError) as caught:
        map_round_to_logs(read_rating_round([a]), two_logs)
    assert (
        "cfake" in caught.value.problems[0]
        and "not cases of these logs" in caught.value.problems[0]
    )


def test_rated_components_are_the_logs_three() -> None:
    assert list(RATED_COMPONENTS.values()) == ["gt_final", "va_answer", "rvf_trace"]
