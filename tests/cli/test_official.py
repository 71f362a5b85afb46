"""`medreason score` and `medreason validate` against the official scripts' rules: the same
decision on every input, the same bytes when accepted, every problem listed."""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path
from typing import Any

import pytest
from conftest import SHARED_OFFICIAL, write_json

from inspect_medreason.analysis import official
from inspect_medreason.cli import main


def answer(
    case_id: Any, task_type: str = "mcq", value: Any = "A", trace: Any = "r"
) -> dict[str, Any]:
    return {"case_id": case_id, "task_type": task_type, "answer": value, "reasoning_trace": trace}


def judge(case_id: str, gt: Any = 2, va: Any = 3, rvf: Any = 4) -> dict[str, Any]:
    return {"case_id": case_id, "gt_final": gt, "va_answer": va, "rvf_trace": rvf}


def run_score(
    tmp_path: Path,
    predictions: Any,
    truth: Any,
    judges: Any | None = None,
    *flags: str,
) -> tuple[int, str | None]:
    """(exit code, bytes of the --output file or None)."""
    args = [
        "score",
        "--predictions",
        str(write_json(tmp_path / "p.json", predictions)),
        "--ground-truth",
        str(write_json(tmp_path / "g.json", truth)),
    ]
    if judges is not None:
        args += ["--judge-scores", str(write_json(tmp_path / "j.json", judges))]
    output = tmp_path / "metrics.json"
    output.unlink(missing_ok=True)
    code = main([*args, "--output", str(output), "--force", *flags])
    return code, output.read_text(encoding="utf-8") if output.exists() else None


@pytest.mark.skipif(not SHARED_OFFICIAL.is_dir(), reason="shared/reference not present")
def test_official_test_data_byte_for_byte(tmp_path: Path) -> None:
    folder = SHARED_OFFICIAL / "evaluation-test"
    output = tmp_path / "metrics.json"
    code = main(
        [
            "score",
            "--predictions",
            str(folder / "example_results.json"),
            "--ground-truth",
            str(folder / "ground_truth.json"),
            "--judge-scores",
            str(folder / "judge_scores.json"),
            "--output",
            str(output),
            "--pretty",
        ]
    )
    assert code == 0
    assert output.read_bytes() == (folder / "metrics.json").read_bytes()


def test_compact_by_default_pretty_on_request(tmp_path: Path) -> None:
    truth = {"cases": [{"case_id": "a", "task_type": "mcq", "answer": "A"}]}
    code, text = run_score(tmp_path, {"answers": [answer("a")]}, truth)
    assert code == 0 and text == (
        '{"metrics": {"MCQ Accuracy": 1.0, "Open-ended GT": null, "Open-ended VA": null}, '
        '"counts": {"num_cases": 1, "num_mcq": 1, "num_open": 0}, '
        '"per_case": [{"case_id": "a", "task_type": "mcq", "mcq_correct": 1.0}]}\n'
    )
    code, pretty = run_score(tmp_path, {"answers": [answer("a")]}, truth, None, "--pretty")
    assert code == 0 and pretty is not None and pretty.startswith('{\n  "metrics": {\n')


@pytest.mark.parametrize(
    ("va", "rvf", "written"),
    [
        (4, 0, "1"),
        (4, 1, "1"),
        (0, 1, "0.0"),
        (1, 0, "1.0"),
        (4, 2, "3"),
        (2, 2, "2.0"),
        (4, 3, "4.0"),
        (3, 2.0, "3.0"),
        (4, 1.5, "4.0"),
    ],
)
def test_gate_writes_what_the_official_gate_returns(
    tmp_path: Path, va: float, rvf: float, written: str
) -> None:
    code, text = run_score(
        tmp_path,
        [answer("o", "open")],
        [{"case_id": "o", "task_type": "open"}],
        [judge("o", 2, va, rvf)],
    )
    assert code == 0 and text is not None
    assert f'"VA_final": {written}}}' in text


def test_all_capped_means_stay_integers_and_use_statistics_mean(tmp_path: Path) -> None:
    truth = [{"case_id": c, "task_type": "open"} for c in "abc"]
    preds = [answer(c, "open") for c in "abc"]
    code, text = run_score(tmp_path, preds, truth, [judge(c, 0.1, 4, 0) for c in "abc"])
    assert code == 0 and text is not None
    metrics = json.loads(text)["metrics"]
    assert '"Open-ended VA": 1}' in text  # mean of int 1s is the int 1
    assert (
        metrics["Open-ended GT"] == 0.1 and '"Open-ended GT": 0.1,' in text
    )  # not 0.10000000000000002


def test_case_ids_are_stripped_and_written_as_given(tmp_path: Path) -> None:
    truth = [{"case_id": " 病例-1 ", "task_type": "mcq", "answer": "B"}]
    code, text = run_score(tmp_path, [answer("病例-1", value=" B ")], truth)
    assert code == 0 and text is not None and '"case_id": "病例-1"' in text


@pytest.mark.parametrize(
    ("prediction", "message"),
    [
        (answer("a", value=""), "answer is required"),
        ({"case_id": "a", "task_type": "mcq"}, "answer is required"),
        (answer("a", value="   "), "answer is required"),
        (answer("a", task_type="multiple-choice"), "task_type 'multiple-choice'"),
        (answer("", value="A"), "case_id is required"),
    ],
)
def test_score_refuses_what_the_official_refuses(
    tmp_path: Path, prediction: dict[str, Any], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = [{"case_id": "a", "task_type": "mcq", "answer": "A"}]
    code, text = run_score(tmp_path, [prediction], truth)
    assert code == 1 and text is None
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("trace", [None, "", "  "])
def test_open_case_needs_a_trace(tmp_path: Path, trace: Any) -> None:
    prediction = answer("o", "open", trace=trace)
    if trace is None:
        del prediction["reasoning_trace"]
    code, _ = run_score(
        tmp_path, [prediction], [{"case_id": "o", "task_type": "open"}], [judge("o")]
    )
    assert code == 1


def test_every_problem_is_listed_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    preds = [answer("a"), answer("a"), answer("b", "open", trace=""), answer("ghost")]
    truth = [
        {"case_id": "a", "task_type": "mcq"},
        {"case_id": "b", "task_type": "open"},
        {"case_id": "c", "task_type": "mcq", "answer": "A"},
    ]
    judges = [{"case_id": "b", "gt_final": 1, "va_answer": 1}]
    code, text = run_score(tmp_path, preds, truth, judges)
    err = capsys.readouterr().err
    assert code == 1 and text is None and "Traceback" not in err
    for expected in [
        "predictions case 'a': a second entry",
        "reasoning_trace is required",
        "rvf_trace is missing",
        "no prediction for 1 case(s): ['c']",
        "unknown case(s): ['ghost']",
    ]:
        assert expected in err, expected


def test_bare_lists_are_accepted_for_all_three_files(tmp_path: Path) -> None:
    code, text = run_score(
        tmp_path, [answer("o", "open")], [{"case_id": "o", "task_type": "open"}], [judge("o")]
    )
    assert code == 0 and text is not None and json.loads(text)["metrics"]["Open-ended GT"] == 2.0


@pytest.mark.parametrize(
    ("value", "warning"),
    [
        (7, "outside the rubric"),
        (-1, "outside the rubric"),
        ("3", "not a number; read as 3.0"),
        (True, "not a number"),
        (2.5, "outside the rubric"),
    ],
)
def test_values_outside_the_rubric_are_warned_and_strict_refuses(
    tmp_path: Path, value: Any, warning: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ([answer("o", "open")], [{"case_id": "o", "task_type": "open"}], [judge("o", gt=value)])
    code, text = run_score(tmp_path, *args)
    assert code == 0 and text is not None
    assert json.loads(text)["metrics"]["Open-ended GT"] == float(value)
    assert warning in capsys.readouterr().err
    strict_code, strict_text = run_score(tmp_path, *args, "--strict")
    assert strict_code == 1 and strict_text is None


def test_nan_and_infinity_are_never_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = [{"case_id": c, "task_type": "open"} for c in "ab"]
    judges = [judge("a", gt="nan"), judge("b", gt=2, va="Infinity", rvf=4)]
    code, text = run_score(tmp_path, [answer(c, "open") for c in "ab"], truth, judges)
    assert code == 0 and text is not None
    assert "NaN" not in text and "Infinity" not in text
    document = json.loads(text)
    assert (
        document["metrics"]["Open-ended GT"] is None
        and document["per_case"][1]["VA_answer"] is None
    )
    assert "written as null" in capsys.readouterr().err
    assert run_score(tmp_path, [answer(c, "open") for c in "ab"], truth, judges, "--strict")[0] == 1


def test_judge_rows_for_unknown_cases_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run_score(
        tmp_path,
        [answer("a")],
        [{"case_id": "a", "task_type": "mcq", "answer": "A"}],
        [judge("zz")],
    )
    assert code == 0 and "not in the ground truth are ignored: ['zz']" in capsys.readouterr().err


@pytest.mark.parametrize(
    "row", [judge("o", gt=None), judge("o", va="high"), judge("o", rvf=[3]), {"case_id": "o"}]
)
def test_malformed_judge_rows_are_clean_refusals(
    tmp_path: Path, row: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run_score(
        tmp_path, [answer("o", "open")], [{"case_id": "o", "task_type": "open"}], [row]
    )
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and "judge scores case 'o'" in err


def test_null_answer_is_read_as_the_official_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    truth = [{"case_id": "a", "task_type": "mcq", "answer": "A"}]
    code, text = run_score(tmp_path, [answer("a", value=None)], truth)
    assert code == 0 and text is not None and json.loads(text)["metrics"]["MCQ Accuracy"] == 0.0
    assert "reads it as the text 'None'" in capsys.readouterr().err


def test_unwritable_case_id_is_refused(tmp_path: Path) -> None:
    (tmp_path / "p.json").write_text('[{"case_id": "\\ud800", "task_type": "mcq", "answer": "A"}]')
    (tmp_path / "g.json").write_text('[{"case_id": "\\ud800", "task_type": "mcq", "answer": "A"}]')
    code = main(
        [
            "score",
            "--predictions",
            str(tmp_path / "p.json"),
            "--ground-truth",
            str(tmp_path / "g.json"),
        ]
    )
    assert code == 1


def test_output_is_never_a_folder_and_never_overwritten_silently(tmp_path: Path) -> None:
    write_json(tmp_path / "p.json", [answer("a")])
    write_json(tmp_path / "g.json", [{"case_id": "a", "task_type": "mcq", "answer": "A"}])
    base = [
        "score",
        "--predictions",
        str(tmp_path / "p.json"),
        "--ground-truth",
        str(tmp_path / "g.json"),
    ]
    (tmp_path / "folder").mkdir()
    assert main([*base, "--output", str(tmp_path / "folder"), "--force"]) == 1
    (tmp_path / "old.json").write_text("keep")
    assert main([*base, "--output", str(tmp_path / "old.json")]) == 1
    assert (tmp_path / "old.json").read_text() == "keep"


def test_mean_matches_statistics_not_naive_sum() -> None:
    outcome = official.score_like_official(
        [answer(c, "open") for c in "abc"],
        [{"case_id": c, "task_type": "open"} for c in "abc"],
        [judge(c, gt=0.1) for c in "abc"],
    )
    assert outcome.result is not None
    assert outcome.result["metrics"]["Open-ended GT"] == 0.1 != sum([0.1] * 3) / 3
    assert not math.isnan(outcome.result["metrics"]["Open-ended VA"])


# --- validate ---------------------------------------------------------------------------


def submission(*answers: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "name": "t",
        "type": "Medical visual reasoning",
        "answers": list(answers),
        "version": {"major": 1, "minor": 0},
        **top,
    }


def zipped(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    return path


def test_validate_refuses_free_text_that_the_scorer_accepts(tmp_path: Path) -> None:
    document = submission(answer("o", "free_text"))
    assert main(["validate", str(write_json(tmp_path / "r.json", document))]) == 1
    document = submission(answer("o", "open_ended"))
    assert main(["validate", str(write_json(tmp_path / "r.json", document))]) == 0


def test_validate_warns_where_the_documentation_is_stricter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = json.dumps({"answers": [answer("a")]})
    extra = zipped(tmp_path / "extra.zip", {"results.json": body, "README.txt": "hi"})
    assert main(["validate", str(extra)]) == 0
    err = capsys.readouterr().err
    assert "also holds ['README.txt']" in err and "version: missing" in err
    assert main(["validate", str(extra), "--strict"]) == 1


def test_validate_packaging_refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = json.dumps(submission(answer("a")))
    nested = zipped(tmp_path / "nested.zip", {"results.json": body, "sub/x.txt": "x"})
    missing = zipped(tmp_path / "missing.zip", {"out/results.json": body})
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04 not a zip")
    (tmp_path / "r.txt").write_text(body)
    for path in (nested, missing, tmp_path / "broken.zip", tmp_path / "r.txt"):
        assert main(["validate", str(path)]) == 1, path
    assert "Traceback" not in capsys.readouterr().err


def test_validate_reads_a_zip_member_only_up_to_a_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(official, "MAX_MEMBER_BYTES", 1000)
    bomb = zipped(
        tmp_path / "bomb.zip", {"results.json": json.dumps(submission(answer("a"))) + " " * 10**6}
    )
    assert main(["validate", str(bomb)]) == 1
    assert "unpacks to more than" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("entry", "accepted"),
    [
        (answer("a", value=None), False),
        (answer("a", value=3), False),
        (answer("a", value=" "), False),
        (answer(" a ", value="B"), True),
        (answer("o", "open", trace=None), False),
        (answer("o", "open", trace=7), False),
        (answer(None), True),
    ],
)
def test_validate_answer_rules(tmp_path: Path, entry: dict[str, Any], accepted: bool) -> None:
    path = write_json(tmp_path / "r.json", submission(entry))
    assert (main(["validate", str(path)]) == 0) is accepted


def test_validate_against_cases_as_the_official_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = write_json(
        tmp_path / "cases.json",
        {
            "cases": [
                {
                    "case_id": "a",
                    "task_type": "mcq",
                    "options": [{"label": "A", "text": "x"}, {"label": "B", "text": "y"}],
                },
                {"case_id": "s", "task_type": "mcq", "options": ["x", "y"]},
                {"case_id": "o", "task_type": "open"},
            ]
        },
    )
    good = submission(answer("a", value="B"), answer("s", value="Z"), answer("o", "open"))
    assert (
        main(["validate", str(write_json(tmp_path / "r.json", good)), "--cases", str(cases)]) == 0
    )
    assert "implied labels ['A', 'B']" in capsys.readouterr().err  # not checked by the official
    unstripped = submission(answer("a ", value="B"), answer("s"), answer("o", "open"))
    path = write_json(tmp_path / "r.json", unstripped)
    assert main(["validate", str(path), "--cases-json", str(cases)]) == 1
    wrong_label = submission(answer("a", value="C"), answer("s"), answer("o", "open"))
    path = write_json(tmp_path / "r.json", wrong_label)
    assert main(["validate", str(path), "--cases", str(cases)]) == 1
    assert "answer 'C' is not one of ['A', 'B']" in capsys.readouterr().err
    bad_cases = write_json(
        tmp_path / "bad.json", [{"case_id": "a", "task_type": "mcq", "options": None}]
    )
    path = write_json(tmp_path / "r.json", submission(answer("a")))
    assert main(["validate", str(path), "--cases", str(bad_cases)]) == 1


@pytest.mark.parametrize("confidence", ["Infinity", "NaN", "1.5", "-0.1", '"high"', "true"])
def test_validate_strict_refuses_a_confidence_that_is_no_probability(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], confidence: str
) -> None:
    """The official validator ignores ``confidence``; the documented field is a number
    from 0 to 1. Python's JSON reader takes Infinity and NaN: warned, refused by --strict."""
    entry = json.dumps(answer("a"))[:-1] + f', "confidence": {confidence}}}'
    path = tmp_path / "results.json"
    document = json.dumps(submission(answer("a"))).replace(json.dumps(answer("a")), entry)
    path.write_text(document, encoding="utf-8")
    assert main(["validate", str(path)]) == 0
    assert "is not a number from 0 to 1" in capsys.readouterr().err
    assert main(["validate", str(path), "--strict"]) == 1
    good = document.replace(f'"confidence": {confidence}', '"confidence": 0.73')
    path.write_text(good, encoding="utf-8")
    assert main(["validate", str(path), "--strict"]) == 0


def test_validate_names_an_unknown_answer_key_with_the_likely_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The official validator ignores other keys; a misspelt one ("task_typ") loses its
    field, so it is named, with the key it likely meant; --strict refuses."""
    entry = {"case_id": "a", "task_typ": "mcq", "answer": "A"}
    path = write_json(tmp_path / "results.json", submission(entry))
    assert main(["validate", str(path)]) == 1  # the task type is missing too
    err = capsys.readouterr().err
    assert "case 'a': unknown key 'task_typ' (did you mean 'task_type'?)" in err
    extra = write_json(tmp_path / "extra.json", submission({**answer("a"), "notes": "x"}))
    assert main(["validate", str(extra)]) == 0
    assert "unknown key 'notes'; the documented keys are" in capsys.readouterr().err
    assert main(["validate", str(extra), "--strict"]) == 1
