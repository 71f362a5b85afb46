"""medreason agreement --ratings: people's ratings from a rating page as raters, every figure
against one computed here from the known ratings and the known judge distortion."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import write_json
from utils.rated_logs import default_truth, judged_log, page_cases, ratings_document

from inspect_medreason.analysis.agreement import icc_two_way, quadratic_kappa
from inspect_medreason.cli import main

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("test_rating_agreement")


def one_up(component: str, score: int) -> int:
    """The judges score one higher than the truth (4 stays 4)."""
    return min(4, score + 1)


def bob_noise(component: str, number: int, score: int) -> int:
    return max(0, score - 1) if number % 4 == 0 else score


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("agreement")
    log = judged_log(root, 16, distort=one_up)
    page = root / "page.html"
    assert main(["rate", str(log), "--output", str(page), "--cases", "14", "--seed", "2"]) == 0
    html = page.read_text(encoding="utf-8")
    start = html.index('id="page-data">') + len('id="page-data">')
    data = json.loads(html[start : html.index("</script>", start)])
    shown = {c["case"] for c in data["cases"]}
    cases = {c: n for c, n in page_cases([log], data["page_id"]).items() if c in shown}
    alice = write_json(root / "alice.json", ratings_document(data["page_id"], "alice", cases))
    bob_doc = ratings_document(data["page_id"], "bob", cases, noise=bob_noise)
    skipped = bob_doc["ratings"].pop(0)
    bob_doc["ratings"].append({"case": skipped["case"], "skipped": "cannot see the lesion"})
    bob = write_json(root / "bob.json", bob_doc)
    return {"log": log, "cases": cases, "alice": alice, "bob": bob, "skipped": skipped["case"]}


def report(rated: dict[str, Any], capsys: pytest.CaptureFixture[str], *extra: str) -> Any:
    code = main(
        [
            "agreement",
            str(rated["log"]),
            "--ratings",
            str(rated["alice"]),
            str(rated["bob"]),
            *extra,
        ]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    return out


def test_judges_are_compared_with_each_person_and_people_with_each_other(
    rated: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(report(rated, capsys, "--format", "json").out)
    gt = next(c for c in document["components"] if c["component"] == "gt_final")
    assert gt["raters"][:2] == ["rater:alice", "rater:bob"]
    pairs = {(p["first"], p["second"].split("=")[0]): p for p in gt["pairs"]}
    numbers = sorted(rated["cases"].values())
    truth = np.array([default_truth(n)["gt"] for n in numbers])
    judge = np.array([one_up("gt", t) for t in truth])
    alice = pairs["rater:alice", "grader"]
    assert alice["kind"] == "person-judge" and alice["cases"] == len(numbers) == 14
    assert alice["mae"]["value"] == pytest.approx(np.mean(np.abs(judge - truth)))
    assert alice["bias"]["value"] == pytest.approx(np.mean(judge - truth))  # judge minus person
    assert alice["weighted_kappa"]["value"] == pytest.approx(quadratic_kappa(truth, judge))
    assert alice["icc_2_1"]["value"] == pytest.approx(
        icc_two_way(np.stack([truth, judge], axis=1).astype(float)).value
    )
    assert alice["mae"]["lower"] <= alice["mae"]["value"] <= alice["mae"]["upper"]
    # bob skipped one case and is one lower on every fourth
    kept = [
        n for c, n in sorted(rated["cases"].items(), key=lambda x: x[1]) if c != rated["skipped"]
    ]
    people = pairs["rater:alice", "rater:bob"]
    assert people["kind"] == "person-person" and people["cases"] == 13
    a = np.array([default_truth(n)["gt"] for n in kept])
    b = np.array([bob_noise("gt", n, default_truth(n)["gt"]) for n in kept])
    assert people["mae"]["value"] == pytest.approx(np.mean(np.abs(b - a)))
    assert gt["people_icc_cases"] == 13
    assert gt["people_icc_2_1"]["value"] == pytest.approx(
        icc_two_way(np.stack([a, b], axis=1).astype(float)).value
    )
    # a person's VA_final is their VA gated by their RVF
    va_final = next(c for c in document["components"] if c["component"] == "va_final")
    assert "rater:alice" in va_final["raters"]


def test_the_markdown_report_separates_people_and_judges(
    rated: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    out = report(rated, capsys)
    assert "### Judges against people" in out.out and "### Between people" in out.out
    assert "| Spearman ρ | MAE | ICC(2,1) |" in out.out
    assert "rater:bob: 13 case(s) rated, 1 skipped" in out.err


def test_ratings_with_another_logs_cases_are_refused(
    rated: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = judged_log(tmp_path, 3)
    code = main(["agreement", str(other), "--ratings", str(rated["alice"])])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert f"{rated['alice']}: none of its" in err and "in these logs" in err
    code = main(
        ["agreement", str(rated["log"]), "--ratings", str(rated["alice"]), "--reference", "x.json"]
    )
    assert code == 1 and "give one of them" in capsys.readouterr().err
