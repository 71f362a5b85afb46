"""medreason agreement: every statistic against a value computed independently here or
published (Shrout & Fleiss 1979 for the ICC, Krippendorff 2011 for alpha)."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import edit_log_entry, scripted_output, user_text, write_json, write_png
from inspect_ai import eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ChatMessage, ModelOutput, get_model

from inspect_medreason.analysis.agreement import (
    icc_two_way,
    krippendorff_alpha,
    quadratic_kappa,
    read_ratings,
    score_confusion,
    score_counts,
)
from inspect_medreason.cli import main
from inspect_medreason.medreason.medreason import open_ended


def kappa_by_hand(a: list[int], b: list[int], k: int = 5) -> float:
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[x, y] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    weights = np.array([[(i - j) ** 2 for j in range(k)] for i in range(k)]) / (k - 1) ** 2
    return float(1 - (weights * observed).sum() / (weights * expected).sum())


def test_weighted_kappa_matches_the_formula() -> None:
    a, b = [0, 1, 2, 3, 4, 4, 2, 1], [0, 1, 3, 4, 4, 3, 2, 0]
    assert quadratic_kappa(a, b) == pytest.approx(kappa_by_hand(a, b))


def test_weighted_kappa_and_confusion_equal_scikit_learns_on_random_raters() -> None:
    """The written-out kappa against scikit-learn's on 500 random pairs of raters: small
    and large, skewed, agreeing, one-category (undefined: NaN in both)."""
    import warnings

    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    rng = np.random.default_rng(7)
    undefined = 0
    for _ in range(500):
        size = int(rng.integers(1, 60))
        spread = int(rng.integers(1, 6))  # 1: a single score from each rater
        a = rng.integers(0, spread, size) + int(rng.integers(0, 6 - spread))
        b = np.where(rng.random(size) < rng.random(), a, rng.integers(0, 5, size))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = cohen_kappa_score(a, b, labels=[0, 1, 2, 3, 4], weights="quadratic")
        ours = quadratic_kappa(a.tolist(), b.tolist())
        assert (
            score_confusion(a, b).tolist()
            == confusion_matrix(a, b, labels=[0, 1, 2, 3, 4]).tolist()
        )
        if np.isnan(expected):
            undefined += 1
            assert np.isnan(ours), (a, b)
        else:
            assert ours == pytest.approx(float(expected), abs=1e-12), (a, b)
    assert 0 < undefined < 500


def test_alpha_of_resampled_score_counts_equals_alpha_of_the_matrix() -> None:
    """The bootstrap resamples rows of per-case score counts; each resample must give the
    alpha of the same cases' ratings matrix (gaps, unrated cases, one-value resamples)."""
    from inspect_medreason.analysis.agreement import _ordinal_alpha_of_rows

    rng = np.random.default_rng(3)
    for _ in range(200):
        raters, cases = int(rng.integers(2, 5)), int(rng.integers(2, 40))
        matrix = rng.integers(0, int(rng.integers(1, 6)), (raters, cases)).astype(float)
        matrix[rng.random((raters, cases)) < rng.random() * 0.5] = np.nan
        rows = rng.integers(0, cases, cases)
        expected = krippendorff_alpha(matrix[:, rows])
        ours = _ordinal_alpha_of_rows(score_counts(matrix), rows)
        assert (np.isnan(ours) and np.isnan(expected)) or ours == pytest.approx(expected)


def test_icc_matches_shrout_and_fleiss() -> None:
    ratings = np.array(
        [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]],
        dtype=float,
    )
    icc = icc_two_way(ratings)
    assert icc.value == pytest.approx(0.29, abs=0.005)
    assert icc.interval.lower < icc.value < icc.interval.upper


def test_krippendorff_alpha_matches_the_published_example() -> None:
    nan = math.nan
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=0.001)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=0.001)


CASES = {f"c{i}": score for i, score in enumerate([0, 1, 2, 3, 4, 2, 3, 1])}


def panel_data(tmp_path: Path) -> Path:
    """The CASES as an open-ended data folder."""
    write_png(tmp_path / "data" / "img.png")
    write_json(
        tmp_path / "data" / "cases.json",
        {
            "cases": [
                {
                    "case_id": c,
                    "task_type": "open",
                    "question": f"What? [{c}]",
                    "image_path": "img.png",
                }
                for c in CASES
            ]
        },
    )
    write_json(
        tmp_path / "data" / "ground_truth.json",
        {"cases": [{"case_id": c, "task_type": "open", "answer": "a nodule"} for c in CASES]},
    )
    return tmp_path / "data"


def judge(shift: int, name: str = "mockllm/model") -> Any:
    """A judge scoring each case its CASES score plus ``shift`` (at most 4)."""

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        case = re.search(r"\[(c\d+)\]", user_text(messages))
        assert case is not None
        score = min(4, CASES[case.group(1)] + shift)
        return scripted_output(json.dumps({"score": score, "rationale": "scripted"}))

    return get_model(name, custom_outputs=respond, memoize=False)


def judged_open_log(data: Path, log_dir: Path, roles: dict[str, Any], **task_args: Any) -> Path:
    reply = scripted_output(json.dumps({"reasoning_trace": "A density.", "answer": "A nodule."}))
    [log] = eval(
        open_ended(data=str(data), **task_args),
        model=get_model("mockllm/model", custom_outputs=lambda *_: reply),
        model_roles=roles,
        display="none",
        log_dir=str(log_dir),
    )
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.fixture
def panel_log(tmp_path: Path) -> Path:
    roles = {"grader": judge(0), "grader_2": judge(1), "vision_grader": judge(0)}
    return judged_open_log(panel_data(tmp_path), tmp_path / "logs", roles)


def test_a_panel_bound_as_a_list_has_its_members_named_as_numbered_roles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--model-role grader=a,b: the raters are grader=a and grader_2=b, as with grader_2=b."""
    roles = {
        "grader": [judge(0, "mockllm/judge-a"), judge(1, "mockllm/judge-b")],
        "vision_grader": judge(0, "mockllm/judge-c"),
    }
    log = judged_open_log(panel_data(tmp_path), tmp_path / "logs", roles)
    assert main(["agreement", str(log), "--format", "json"]) == 0
    [gt] = [
        c for c in json.loads(capsys.readouterr().out)["components"] if c["component"] == "gt_final"
    ]
    assert [(p["first"], p["second"]) for p in gt["pairs"]] == [
        ("grader=mockllm/judge-a", "grader_2=mockllm/judge-b")
    ]


def test_agreement_of_a_panel_and_a_reference(
    panel_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reference = write_json(
        tmp_path / "human.json",
        {
            "scores": [
                {"case_id": c, "gt_final": s, "va_answer": s, "rvf_trace": 4}
                for c, s in CASES.items()
            ]
        },
    )
    plot = tmp_path / "agreement.png"
    assert (
        main(
            [
                "agreement",
                str(panel_log),
                "--reference",
                str(reference),
                "--format",
                "json",
                "--plot",
                str(plot),
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    gt = next(c for c in report["components"] if c["component"] == "gt_final")
    pairs = {(p["first"].split("=")[0], p["second"].split("=")[0]): p for p in gt["pairs"]}
    first, second = [CASES[c] for c in CASES], [min(4, CASES[c] + 1) for c in CASES]
    one_up = pairs["grader", "grader_2"]
    # grader_2 scores one higher, except where grader already gave 4
    assert one_up["exact"]["value"] == pytest.approx(np.mean(np.equal(first, second)))
    assert one_up["within_one"]["value"] == 1.0
    assert one_up["bias"]["value"] == pytest.approx(np.mean(np.subtract(second, first)))
    assert one_up["weighted_kappa"]["value"] == pytest.approx(kappa_by_hand(first, second))
    assert one_up["confusion"][4][4] == 1 and one_up["confusion"][0][1] == 1
    same = pairs["reference", "grader"]  # the reference comes first: bias is the judge's
    assert ("reference", "grader_2") in pairs and ("grader_2", "reference") not in pairs
    assert pairs["reference", "grader_2"]["bias"]["value"] > 0  # grader_2 scores higher
    assert same["exact"]["value"] == 1.0 and same["weighted_kappa"]["value"] == pytest.approx(1.0)
    assert same["spearman"]["value"] == pytest.approx(1.0)
    assert gt["icc_cases"] == len(CASES)
    # the eight cases are questions on one image: resampling images sees no spread, so no
    # interval is given (a case bootstrap would give a falsely narrow one)
    alpha = gt["krippendorff_alpha_ordinal"]
    assert alpha["value"] is not None and alpha["lower"] is None and alpha["upper"] is None
    assert one_up["weighted_kappa"]["lower"] is None
    assert gt["distributions"][next(r for r in gt["raters"] if r.startswith("grader_2"))] == [
        0,
        1,
        2,
        2,
        3,
    ]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["agreement", str(panel_log), "--format", "md"]) == 0
    assert "Krippendorff's α" in capsys.readouterr().out


def test_impossible_and_duplicated_reference_values_are_named_and_left_out(
    panel_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The one rule for score values: a value outside the scale, a fraction where whole
    scores are compared, a case given twice (every copy: which is right is unknown)."""
    rows = [
        {"case_id": "c0", "gt_final": 7, "va_answer": 3},
        {"case_id": "c1", "gt_final": 2.5},
        {"case_id": "c2", "gt_final": 1},
        {"case_id": "c2", "gt_final": 4},
        *({"case_id": f"c{i}", "gt_final": CASES[f"c{i}"]} for i in range(3, 8)),
    ]
    reference = write_json(tmp_path / "reference.json", {"scores": rows})
    assert (
        main(["agreement", str(panel_log), "--reference", str(reference), "--format", "json"]) == 0
    )
    captured = capsys.readouterr()
    err = " ".join(captured.err.split())
    assert f"{reference}: case 'c0': gt_final=7 is outside its scale 0-4: left out" in err
    assert f"{reference}: case 'c1': gt_final=2.5 is not a whole score 0-4: left out" in err
    assert f"{reference}: case 'c2' is given 2 times: every copy left out" in err
    [gt] = [c for c in json.loads(captured.out)["components"] if c["component"] == "gt_final"]
    counts = {
        (pair["first"], pair["second"]): pair["cases"]
        for pair in gt["pairs"]
        if "reference" in (pair["first"], pair["second"])
    }
    assert counts and all(n == 5 for n in counts.values())  # c3-c7 alone are usable


def test_bad_reference_files_are_refused(
    panel_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write_json(tmp_path / "bad.json", {"scores": [{"gt_final": 3}]})
    assert main(["agreement", str(panel_log), "--reference", str(bad)]) != 0
    assert "row 1: no case_id" in capsys.readouterr().err
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000, encoding="utf-8")
    assert main(["agreement", str(panel_log), "--reference", str(deep)]) != 0
    assert "deep.json: JSON nested too deeply to read" in capsys.readouterr().err


def test_a_corrupt_log_in_the_folder_is_left_out_with_a_note(
    panel_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (panel_log.parent / "broken.eval").write_bytes(b"not a log")
    (panel_log.parent / "notes.txt").write_text("other file", encoding="utf-8")
    assert main(["agreement", str(panel_log.parent), "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "broken.eval: not a readable eval log" in captured.err
    assert json.loads(captured.out)["components"][0]["pairs"]


def test_an_edited_logs_unreadable_judge_records_are_left_out_and_named(
    panel_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = read_eval_log(str(panel_log))
    assert log.samples is not None
    first, second, third = (s.scores["open_ended_scorer"] for s in log.samples[:3])  # type: ignore[index]
    assert first.metadata is not None and second.metadata is not None
    assert third.metadata is not None
    first.metadata = {**first.metadata, "judges": ["not", "a", "record"]}
    judges = dict(second.metadata["judges"])
    judges["va_answer"] = "edited"
    judges["rvf_trace"] = {**judges["rvf_trace"], "score": True}  # a bool is not a score
    second.metadata = {**second.metadata, "judges": judges}
    gt = dict(third.metadata["judges"]["gt_final"])
    gt["panel"] = [{"score": 3}, {"role": "grader_2", "score": 9}]  # no role; out of range
    third.metadata = {**third.metadata, "judges": {**third.metadata["judges"], "gt_final": gt}}
    edited = tmp_path / "edited.eval"
    write_eval_log(log, str(edited))
    ratings, notes = read_ratings([edited])
    [note] = [n for n in notes if "left out" in n]
    assert "5 judge record(s) left out" in note
    assert "judges" in note and "va_answer" in note and "rvf_trace ('vision_grader'=True)" in note
    cases = {str(s.id) for s in log.samples}
    # Every other judge's score is still read, the one-judge vision grader's included.
    vision = next(r for r in ratings["va_answer"] if r.startswith("vision_grader="))
    assert set(ratings["va_answer"][vision]) == cases - {
        str(log.samples[0].id),
        str(log.samples[1].id),
    }
    assert str(log.samples[2].id) not in next(
        scores for rater, scores in ratings["gt_final"].items() if rater.startswith("grader_2=")
    )


def test_an_unreadable_sample_is_named_and_the_other_cases_rated(
    panel_log: Path, tmp_path: Path
) -> None:
    edited = edit_log_entry(
        panel_log,
        tmp_path / "edited.eval",
        "samples/c2_epoch_1.json",
        lambda sample: sample.update(metadata=[1, 2]),
    )
    ratings, notes = read_ratings([edited])
    assert any(
        "case 'c2' (epoch 1): its logged field 'metadata' cannot be read" in note for note in notes
    )
    rated = {case for scores in ratings["gt_final"].values() for case in scores}
    assert rated == set(CASES) - {"c2"}


def test_a_panels_fractional_mean_is_written_with_a_note_and_left_out_of_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One decision for a panel's half points: judge-scores writes them as judged (the
    official scorer takes them) and says so; agreement, which compares whole scores, leaves
    them out by the one rule, naming them."""
    roles = {"grader": judge(0), "grader_2": judge(1), "vision_grader": judge(0)}
    log = judged_open_log(panel_data(tmp_path), tmp_path / "logs", roles, panel_reduce="mean")
    scores = tmp_path / "judge_scores.json"
    assert main(["judge-scores", str(log), "--output", str(scores)]) == 0
    rows = json.loads(scores.read_text())["scores"]
    halves = [row for row in rows if not float(row["gt_final"]).is_integer()]
    assert halves  # c0-c3 and c5-c7: k and k+1 average to k.5
    err = " ".join(capsys.readouterr().err.split())
    assert (
        f"case {halves[0]['case_id']!r}: gt_final={halves[0]['gt_final']:g} written as judged"
        in err
    )
    assert main(["agreement", str(log), "--reference", str(scores), "--format", "json"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert f"gt_final={halves[0]['gt_final']} is not a whole score 0-4: left out" in err


def appended_copy(source: Path, target: Path) -> Path:
    """The log as ``inspect score --action append`` leaves it, written to a new file (as
    Inspect's "create new file" choice does): the first judging kept as it was, a second
    beside it under Inspect's name for it, ``open_ended_scorer1``, its judges' rationales
    their own."""
    log = read_eval_log(str(source))
    assert log.samples is not None and log.results is not None
    for sample in log.samples:
        assert sample.scores is not None
        second = sample.scores["open_ended_scorer"].model_copy(deep=True)
        second.explanation = f"re-judged: {second.explanation}"
        sample.scores["open_ended_scorer1"] = second
    # a result per component and the breakdowns' result, each naming its scorer (Inspect's
    # shape for a dictionary of metrics, as a real append writes it: test_rejudging.py)
    first = [s for s in log.results.scores if s.scorer == "open_ended_scorer"]
    assert first
    log.results.scores.extend(
        s.model_copy(
            update={
                "scorer": "open_ended_scorer1",
                "name": s.name.replace("open_ended_scorer", "open_ended_scorer1"),
            }
        )
        for s in first
    )
    write_eval_log(log, str(target))
    return target


def test_a_judging_held_by_a_log_and_its_copies_is_one_set_of_raters(
    panel_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder with a judged log, its appended copy and a copy of that copy: the first
    judging is one set of raters (grader, grader_2), the appended one another, never a
    third set agreeing perfectly with the first; --scorer reads one judging only."""
    folder = panel_log.parent
    copy = appended_copy(panel_log, folder / "appended.eval")
    shutil.copy(copy, folder / "copy-of-appended.eval")

    def raters(*args: str) -> tuple[list[str], str]:
        assert main(["agreement", str(folder), "--format", "json", *args]) == 0
        captured = capsys.readouterr()
        report = json.loads(captured.out)
        [gt] = [c for c in report["components"] if c["component"] == "gt_final"]
        return sorted(gt["raters"]), captured.err

    every, err = raters()
    assert len(every) == 4, every
    assert sum("[open_ended_scorer1]" in rater for rater in every) == 2
    assert "the same judging as" in err and "counted once" in err
    first_only, err = raters("--scorer", "open_ended_scorer")
    assert len(first_only) == 2 and "counted once" in err
    second_only, err = raters("--scorer", "open_ended_scorer1")
    assert len(second_only) == 2
    assert f"{panel_log}: left out, no score 'open_ended_scorer1'" in err
    assert main(["agreement", str(folder), "--scorer", "mcq_scorer"]) != 0
    assert "--scorer 'mcq_scorer'" in capsys.readouterr().err
