"""medreason compare on real eval logs of scripted models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import edit_log_entry, scripted_output, user_text, write_json, write_png
from inspect_ai import eval
from inspect_ai.model import ChatMessage, ModelOutput, get_model

from inspect_medreason.cli import main
from inspect_medreason.core.intervals import CLUSTER_TEST
from inspect_medreason.medreason.medreason import mcq


def mcq_folder(folder: Path, count: int, prefix: str = "q") -> Path:
    """``count`` MCQ cases, two per image, answer A."""
    for index in range(0, count, 2):
        write_png(folder / "images" / f"{index}.png")
    cases = [
        {
            "case_id": f"{prefix}{i}",
            "task_type": "mcq",
            "question": f"Which? ({prefix}{i})",
            "image_path": f"images/{i - i % 2}.png",
            "options": ["yes", "no", "maybe"],
            "metadata": {"modality": "CT" if i % 4 < 2 else "MR"},
        }
        for i in range(count)
    ]
    write_json(folder / "cases.json", {"cases": cases})
    write_json(
        folder / "ground_truth.json",
        {"cases": [{"case_id": c["case_id"], "task_type": "mcq", "answer": "A"} for c in cases]},
    )
    return folder


def run(folder: Path, logs: Path, name: str, wrong: set[int]) -> Path:
    def respond(messages: list[ChatMessage], *_: object) -> ModelOutput:
        index = int(user_text(messages).split("(q")[1].split(")")[0])
        return scripted_output(
            json.dumps({"reasoning_trace": "x", "answer": "B" if index in wrong else "A"})
        )

    [log] = eval(
        mcq(data=str(folder)),
        model=get_model(f"mockllm/{name}", custom_outputs=respond),
        display="none",
        log_dir=str(logs / name),
    )
    assert log.status == "success", log.error
    return Path(log.location)


def compare_json(a: Path, b: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    capsys.readouterr()  # what the runs before printed (Inspect's banner) is not the report
    assert main(["compare", str(a), str(b), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_clear_difference_is_significant(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = mcq_folder(tmp_path / "data", 40)
    a = run(folder, tmp_path / "logs", "strong", wrong={0, 1})
    b = run(folder, tmp_path / "logs", "weak", wrong=set(range(0, 40, 2)) | {1})
    report = compare_json(a, b, capsys)
    assert report["shared_cases"] == 40 and report["warnings"] == []
    accuracy = report["metrics"]["MCQ Accuracy"]
    assert accuracy["difference"] == pytest.approx(-19 / 40)
    # 19 images (one case each) lost, none gained: the clustered sign-flip test, drawn
    # (2^19 flips are too many to enumerate), puts p at its floor of 1 / 10,000
    assert accuracy["test"] == CLUSTER_TEST and accuracy["p_value"] < 0.001
    assert accuracy["interval"]["upper"] < 0
    by_modality = {
        c["category"]: c["cases"]
        for c in report["categories"]["MCQ Accuracy"]
        if c["field"] == "modality"
    }
    assert by_modality == {"CT": 20, "MR": 20}


def test_a_small_difference_is_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = mcq_folder(tmp_path / "data", 40)
    a = run(folder, tmp_path / "logs", "first", wrong={0, 5, 9})
    b = run(folder, tmp_path / "logs", "second", wrong={0, 5, 12, 20})
    accuracy = compare_json(a, b, capsys)["metrics"]["MCQ Accuracy"]
    # discordant 1 vs 2: p = 2 * P(X <= 1 | 3, 1/2) = 1.0
    assert accuracy["p_value"] == pytest.approx(1.0)
    assert accuracy["interval"]["lower"] < 0 < accuracy["interval"]["upper"]
    assert accuracy["detectable"] > abs(accuracy["difference"])


def test_formats_plot_and_partial_overlap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = run(mcq_folder(tmp_path / "data", 20), tmp_path / "logs", "one", wrong={3})
    b = run(mcq_folder(tmp_path / "other", 10), tmp_path / "logs", "two", wrong={4})
    plot = tmp_path / "diff.png"
    assert main(["compare", str(a), str(b), "--plot", str(plot)]) == 0
    captured = capsys.readouterr()
    assert (
        "10 cases scored in both runs" in captured.out and "| MCQ Accuracy | 10 |" in captured.out
    )
    assert "different data files" in captured.err
    # the cases only one run scored are counted and named, not dropped without a word
    assert (
        "10 case(s) scored only in A ('q10', 'q11', 'q12', 'q13', 'q14' and 5 more)" in captured.err
    )
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["compare", str(a), str(b), "--format", "html"]) == 0
    assert "<table>" in capsys.readouterr().out


def test_no_shared_case_is_a_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = run(mcq_folder(tmp_path / "data", 4), tmp_path / "logs", "one", wrong=set())
    other = mcq_folder(tmp_path / "other", 4, prefix="q")
    cases = json.loads((other / "cases.json").read_text(encoding="utf-8"))
    for case in cases["cases"]:
        case["case_id"] = "x" + case["case_id"]
    write_json(other / "cases.json", cases)
    truth = json.loads((other / "ground_truth.json").read_text(encoding="utf-8"))
    for case in truth["cases"]:
        case["case_id"] = "x" + case["case_id"]
    write_json(other / "ground_truth.json", truth)
    b = run(other, tmp_path / "logs", "two", wrong=set())
    assert main(["compare", str(a), str(b)]) != 0
    assert "share no scored case" in capsys.readouterr().err
    assert main(["compare", str(a), str(tmp_path / "missing.eval")]) != 0
    assert "missing.eval: no such file or folder" in capsys.readouterr().err


def test_leaderboard_bootstrap_reports_rank_stability(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = mcq_folder(tmp_path / "data", 40)
    run(folder, tmp_path / "logs", "clear", wrong={0, 5})
    run(folder, tmp_path / "logs", "poor", wrong=set(range(0, 40, 2)))
    run(folder, tmp_path / "logs", "close", wrong={0, 3, 7})
    assert (
        main(["leaderboard", str(tmp_path / "logs"), "--format", "json", "--bootstrap", "300"]) == 0
    )
    rows = {row["model"]: row for row in json.loads(capsys.readouterr().out)["rows"]}
    clear, poor, close = (
        rows[f"mockllm/{m}"]["rank_stability"] for m in ("clear", "poor", "close")
    )
    # 19 cases separate poor from the others: it is last in every resample
    assert poor["position_shares"] == {"3": 1.0} and poor["position_interval"] == [3.0, 3.0]
    # clear and close differ on three cases, two in clear's favour: their order is not settled
    assert 0 < clear["position_shares"]["1"] < 1 and clear["position_interval"] == [1.0, 2.0]
    assert 0 < close["position_shares"]["1"] < clear["position_shares"]["1"]
    assert main(["leaderboard", str(tmp_path / "logs"), "--bootstrap", "50"]) == 0
    assert "position under resampling" in capsys.readouterr().out


def test_an_unreadable_sample_is_left_out_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-edited sample no longer makes the whole log unreadable: the comparison runs
    on the other cases and names the one left out, with its field."""
    folder = mcq_folder(tmp_path / "data", 6)
    a = run(folder, tmp_path / "logs", "one", wrong={1})
    b = run(folder, tmp_path / "logs", "two", wrong=set())
    edited = edit_log_entry(
        b,
        tmp_path / "edited.eval",
        "samples/q3_epoch_1.json",
        lambda sample: sample["scores"]["mcq_scorer"].update(answer=7),
    )
    report = compare_json(a, edited, capsys)
    assert report["shared_cases"] == 5
    assert any(
        "1 value(s) or sample(s) of B are left out: case 'q3' (epoch 1): its logged "
        "field 'scores.mcq_scorer.answer'" in warning
        for warning in report["warnings"]
    )
    assert report["metrics"]["MCQ Accuracy"]["difference"] == pytest.approx(1 / 5)
