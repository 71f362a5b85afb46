"""The agreement as a library: ``judge_agreement`` on judged logs and people's ratings gives
the figures ``medreason agreement`` prints for the same files, and its pair table."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json
from utils.rated_logs import judged_log, page_cases, ratings_document

from inspect_medreason.analysis.agreement import (
    PAIR_STATISTICS,
    Agreement,
    agreement_of,
    judge_agreement,
    read_rater_scores,
)
from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.cli import main

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("analysis_test_agreement")

# the JSON report's name of each statistic of a pair
JSON_NAMES = {"kappa": "weighted_kappa", "icc": "icc_2_1"}


def one_up(component: str, score: int) -> int:
    return min(4, score + 1)


def bob_noise(component: str, number: int, score: int) -> int:
    return max(0, score - 1) if number % 3 == 0 else score


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 12-case log judged one higher than the truth, rated by alice (the truth) and bob
    (one lower on every third case) on a page of all its cases."""
    root = tmp_path_factory.mktemp("agreement")
    log = judged_log(root, 12, distort=one_up)
    page = root / "page.html"
    assert main(["rate", str(log), "--output", str(page), "--cases", "12"]) == 0
    html = page.read_text(encoding="utf-8")
    start = html.index('id="page-data">') + len('id="page-data">')
    page_id = json.loads(html[start : html.index("</script>", start)])["page_id"]
    cases = page_cases([log], page_id)
    alice = write_json(root / "alice.json", ratings_document(page_id, "alice", cases))
    bob = write_json(root / "bob.json", ratings_document(page_id, "bob", cases, noise=bob_noise))
    return {"log": log, "alice": alice, "bob": bob}


@pytest.fixture(scope="module")
def agreement(rated: dict[str, Path]) -> Agreement:
    return judge_agreement([rated["log"]], ratings=[rated["alice"], rated["bob"]])


def printed(rated: dict[str, Path], capsys: pytest.CaptureFixture[str], *extra: str) -> Any:
    ratings = [str(rated["alice"]), str(rated["bob"])]
    code = main(["agreement", str(rated["log"]), "--ratings", *ratings, *extra])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out


def as_json(value: float) -> float | None:
    """A figure as the JSON report writes it: NaN as null."""
    return None if math.isnan(value) else value


def test_the_typed_agreement_is_what_the_command_prints(
    rated: dict[str, Path], agreement: Agreement, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(printed(rated, capsys, "--format", "json").out)
    assert [c.component for c in agreement.components] == [
        c["component"] for c in document["components"]
    ]
    assert list(agreement.notes) == document["notes"]
    assert any(note.startswith("rater:bob: 12 case(s) rated") for note in agreement.notes)
    for ours, theirs in zip(agreement.components, document["components"], strict=True):
        assert ours.raters == theirs["raters"] and ours.raters[:2] == ["rater:alice", "rater:bob"]
        assert ours.icc_cases == theirs["icc_cases"] == 12
        assert ours.alpha is not None and ours.icc is not None and ours.people_icc is not None
        assert as_json(ours.alpha.value) == theirs["krippendorff_alpha_ordinal"]["value"]
        assert as_json(ours.icc.value) == theirs["icc_2_1"]["value"]
        assert as_json(ours.people_icc.value) == theirs["people_icc_2_1"]["value"]
        assert ours.distributions == theirs["distributions"]
        assert len(ours.pairs) == len(theirs["pairs"]) == 3  # alice, bob and the judge
        for pair, written in zip(ours.pairs, theirs["pairs"], strict=True):
            assert (pair.first, pair.second, pair.kind, pair.cases) == (
                written["first"],
                written["second"],
                written["kind"],
                written["cases"],
            )
            assert pair.confusion == written["confusion"]
            for name in PAIR_STATISTICS:
                estimate = getattr(pair, name)
                assert {k: as_json(v) for k, v in estimate.as_dict().items()} == written[
                    JSON_NAMES.get(name, name)
                ]


def test_the_pair_table_has_a_row_per_component_and_pair(agreement: Agreement) -> None:
    table = agreement.to_pandas()
    assert list(table.columns[:5]) == ["component", "first", "second", "kind", "cases"]
    assert {"kappa", "kappa_lower", "kappa_upper", "mae", "bias_upper"} <= set(table.columns)
    assert len(table) == sum(len(c.pairs) for c in agreement.components) == 12
    row = table[
        (table.component == "gt_final")
        & (table["first"] == "rater:alice")
        & (table.kind == "person-judge")
    ].iloc[0]
    # the judge scores one higher than the truth, 4 staying 4: alice is the truth
    pair = next(p for p in agreement.components[0].pairs if p.second == row["second"])
    assert row["bias"] == pair.bias.value > 0 and row["mae"] == pair.mae.value
    assert row["kappa_lower"] == pair.kappa.interval.lower


def test_the_plot_is_the_commands_plot(
    rated: dict[str, Path],
    agreement: Agreement,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    plot = tmp_path / "agreement.png"
    printed(rated, capsys, "--plot", str(plot))
    assert agreement.plot_png().startswith(b"\x89PNG")
    assert agreement.plot_png() == plot.read_bytes()


def test_too_few_raters_are_refused_after_reading_with_what_was_read(
    rated: dict[str, Path],
) -> None:
    # one log, one judge per component: no pair of raters anywhere
    scores = read_rater_scores([str(rated["log"])])
    assert all(len(raters) == 1 for raters in scores.scores.values())
    assert scores.scores["gt_final"] and len(next(iter(scores.scores["gt_final"].values()))) == 12
    with pytest.raises(AnalysisError, match="fewer than two raters"):
        agreement_of(scores)


def test_a_reference_and_ratings_together_are_refused(rated: dict[str, Path]) -> None:
    with pytest.raises(AnalysisError, match="give one of them"):
        judge_agreement([rated["log"]], reference=rated["alice"], ratings=[rated["bob"]])


def test_the_component_table_has_alpha_and_the_iccs_of_each_component(
    agreement: Agreement,
) -> None:
    table = agreement.components_to_pandas().set_index("component")
    assert list(table.index) == ["gt_final", "va_answer", "rvf_trace", "va_final"]
    for component in agreement.components:
        row = table.loc[component.component]
        assert component.alpha is not None and component.people_icc is not None
        assert row["raters"] == len(component.raters) == 3
        assert row["alpha"] == component.alpha.value
        assert row["alpha_lower"] == component.alpha.interval.lower
        assert row["people_icc"] == component.people_icc.value
        assert row["icc_cases"] == row["people_icc_cases"] == 12


def test_judges_are_compared_only_on_the_reply_both_judged(tmp_path: Path) -> None:
    """Two logs of the same cases are the same items only where they hold the same reply:
    another model's (or run's) replies are other cases, never a judge agreeing with a
    judge of something else. Two runs with the same replies are compared case by case."""
    same = ("A round density on the left.", "A nodule.")
    first = judged_log(tmp_path / "first", 6, reply=same)
    again = judged_log(tmp_path / "again", 6, reply=same, distort=one_up)
    other = judged_log(tmp_path / "other", 6, model="mockllm/other", distort=one_up)

    replies_differ = judge_agreement([first, other])
    [note] = [n for n in replies_differ.notes if "different replies" in n]
    assert note.startswith("6 case(s) hold different replies")
    gt = replies_differ.components[0]
    assert gt.component == "gt_final" and gt.pairs == []  # nothing judged in common
    assert any("share 0 case(s)" in n for n in gt.notes)

    replies_same = judge_agreement([first, again])
    assert not any("different replies" in n for n in replies_same.notes)
    [pair] = replies_same.components[0].pairs
    assert pair.cases == 6
    assert pair.exact.value < 1.0  # the second run's judges score one higher
