from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import scripted_output, user_text, write_json, write_png
from inspect_ai import eval
from inspect_ai.event import LoggerEvent
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ChatMessage, ChatMessageUser, ContentImage, ModelOutput, get_model

from inspect_medreason.core.intervals import case_cluster, clustered_standard_error
from inspect_medreason.core.loaders import sample_data_dir
from inspect_medreason.medreason.medreason import medreason, open_ended

GATE_CASES = [(rvf, va) for rvf in range(5) for va in (0, 2, 4)]


def case_key(text: str) -> str:
    match = re.search(r"\[(\w+)\]", text)
    assert match, text[:300]
    return match.group(1)


@pytest.fixture
def open_dataset(tmp_path: Path) -> Path:
    """Open cases whose ids script the judges; plus rule and failure cases."""
    write_png(tmp_path / "data" / "img.png", colour=200)
    ids = [f"r{rvf}v{va}" for rvf, va in GATE_CASES]
    ids += ["emptyanswer", "emptytrace", "badgt", "retrygt", "noref"]
    cases = [
        {
            "case_id": cid,
            "task_type": "open",
            "question": f"What is shown? [{cid}]",
            "image_path": "img.png",
            "metadata": {"modality": "CT" if i % 2 else "MR"},
        }
        for i, cid in enumerate(ids)
    ]
    truth = [
        {"case_id": cid, "task_type": "open", "answer": f"reference for {cid}"}
        for cid in ids
        if cid != "noref"
    ]
    write_json(tmp_path / "data" / "cases.json", {"cases": cases})
    write_json(tmp_path / "data" / "ground_truth.json", {"cases": truth})
    return tmp_path / "data"


def model_reply(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    key = case_key(user_text(messages))
    answer = "" if key == "emptyanswer" else f"answer {key}"
    trace = "" if key == "emptytrace" else f"I see a dense region. {key}"
    return scripted_output(json.dumps({"reasoning_trace": trace, "answer": answer}))


class ScriptedJudges:
    """Judges that score from the request's content and remember what they were sent."""

    def __init__(self) -> None:
        self.requests: dict[str, list[list[ChatMessage]]] = {"gt": [], "vision": []}

    def text_judge(self, messages: list[ChatMessage], *_: Any) -> ModelOutput:
        self.requests["gt"].append(messages)
        key = case_key(user_text(messages[:2]))
        if key == "badgt":
            return scripted_output("The answer looks right to me, maybe a three.")
        if key == "retrygt" and len(messages) == 2:
            return scripted_output('{"score": 7, "rationale": "out of range"}')
        return scripted_output('{"score": 3, "rationale": "Largely aligned."}')

    def vision_judge(self, messages: list[ChatMessage], *_: Any) -> ModelOutput:
        self.requests["vision"].append(messages)
        text = user_text(messages)
        key = case_key(text)
        match = re.match(r"r(\d)v(\d)", key)
        rvf, va = (int(match.group(1)), int(match.group(2))) if match else (3, 4)
        score = rvf if "<candidate_reasoning id-" in text else va
        return scripted_output(json.dumps({"score": score, "rationale": f"scripted {score}"}))


def run_open(task: Any, judges: ScriptedJudges, tmp_path: Path) -> EvalLog:
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=model_reply),
        model_roles={
            "grader": get_model("mockllm/model", custom_outputs=judges.text_judge, memoize=False),
            "vision_grader": get_model(
                "mockllm/model", custom_outputs=judges.vision_judge, memoize=False
            ),
        },
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return log


def scores_by_id(log: EvalLog, scorer: str = "open_ended_scorer") -> dict[str, Any]:
    assert log.samples is not None
    return {str(s.id): s.scores[scorer] for s in log.samples if s.scores}


def metric(log: EvalLog, component: str, statistic: str) -> float:
    """A component's statistic in the results, in Inspect's shape for a dictionary score: a
    score per component (``mean``, ``stderr``; ``unscored`` is its ``unscored_samples``),
    breakdowns (``va_final by modality:CT``) among the scorer's own metrics."""
    assert log.results is not None
    scores = {s.name: s for s in log.results.scores if s.scorer == "open_ended_scorer"}
    if " by " in component:
        return scores["open_ended_scorer"].metrics[component].value
    found = scores[component]
    if statistic == "unscored":
        return float(found.unscored_samples or 0)
    return found.metrics[statistic].value


def test_gate_and_components_end_to_end(open_dataset: Path, tmp_path: Path) -> None:
    judges = ScriptedJudges()
    log = run_open(open_ended(data=str(open_dataset)), judges, tmp_path)
    scores = scores_by_id(log)
    for rvf, va in GATE_CASES:
        value = scores[f"r{rvf}v{va}"].value
        expected = min(va, 1) if rvf <= 1 else min(va, 3) if rvf == 2 else va
        assert value["gt_final"] == 3 and value["va_answer"] == va and value["rvf_trace"] == rvf
        assert value["va_final"] == expected, (rvf, va)
    explanation = scores["r1v4"].explanation
    assert "va_final = 1" in explanation and "scripted 1" in explanation
    # Plain dicts in the score, no subclass Inspect's copies would treat differently.
    metadata = scores["r1v4"].metadata
    assert type(metadata) is dict and type(metadata["judges"]) is dict
    assert type(scores["r1v4"].value) is dict


def test_empty_fields_are_zero_by_rule_without_a_judge_call(
    open_dataset: Path, tmp_path: Path
) -> None:
    judges = ScriptedJudges()
    log = run_open(open_ended(data=str(open_dataset)), judges, tmp_path)
    scores = scores_by_id(log)
    empty_answer = scores["emptyanswer"]
    assert empty_answer.value["gt_final"] == 0 and empty_answer.value["va_answer"] == 0
    assert empty_answer.value["rvf_trace"] == 3  # the trace was still judged
    judged = empty_answer.metadata["judges"]
    assert judged["gt_final"]["by_rule"] and "empty final answer" in judged["gt_final"]["rationale"]
    empty_trace = scores["emptytrace"]
    assert empty_trace.value["rvf_trace"] == 0 and empty_trace.value["va_final"] == 1
    assert empty_trace.metadata["judges"]["rvf_trace"]["by_rule"]
    # No judge request was made for the fields that were empty.
    gt_keys = [case_key(user_text(m[:2])) for m in judges.requests["gt"]]
    assert "emptyanswer" not in gt_keys
    vision = [user_text(m) for m in judges.requests["vision"]]
    assert not any("[emptytrace]" in t and "<candidate_reasoning id-" in t for t in vision)
    assert not any("[emptyanswer]" in t and "<candidate_answer>" in t for t in vision)


def test_invalid_judge_output_is_retried_then_unscored(open_dataset: Path, tmp_path: Path) -> None:
    judges = ScriptedJudges()
    log = run_open(open_ended(data=str(open_dataset), judge_retries=2), judges, tmp_path)
    scores = scores_by_id(log)
    bad = scores["badgt"]
    assert math.isnan(bad.value["gt_final"])
    assert bad.value["va_answer"] == 4  # the other components are unaffected
    gt_meta = bad.metadata["judges"]["gt_final"]
    assert gt_meta["score"] is None and gt_meta["attempts"] == 3
    assert "no JSON object" in gt_meta["failure"] and len(gt_meta["raw_replies"]) == 3
    assert "UNSCORED" in bad.explanation
    retried = scores["retrygt"]
    assert retried.value["gt_final"] == 3
    assert retried.metadata["judges"]["gt_final"]["attempts"] == 2
    # The retry showed the judge its bad reply and asked again.
    retry_request = next(m for m in judges.requests["gt"] if len(m) == 4)
    assert "could not be used" in retry_request[-1].text
    noref = scores["noref"]
    assert math.isnan(noref.value["gt_final"])
    assert noref.metadata["judges"]["gt_final"]["failure"] == "no reference answer for this case"

    # Unscored components are counted (in the component's score) and excluded from the
    # means, never zeros; every case was scored by the scorer itself.
    assert log.results is not None
    assert [s.name for s in log.results.scores] == [
        "open_ended_scorer", "gt_final", "va_answer", "rvf_trace", "va_final"
    ]  # fmt: skip
    results = log.results.scores[0]
    assert results.scored_samples == len(scores) and results.unscored_samples == 0
    assert metric(log, "gt_final", "unscored") == 2
    assert metric(log, "va_answer", "unscored") == 0
    values = [s.value["gt_final"] for s in scores.values() if not math.isnan(s.value["gt_final"])]
    assert metric(log, "gt_final", "mean") == pytest.approx(sum(values) / len(values))
    finals = [s.value["va_final"] for s in scores.values()]
    assert metric(log, "va_final", "mean") == pytest.approx(sum(finals) / len(finals))
    # the standard error counts images (a package's metric is logged under its registered
    # name in a dictionary score): every case here is on one image, so there is no spread
    # between images to measure, where counting cases would claim one
    clusters = {case_cluster(s.metadata, s.id) for s in log.samples or []}
    assert len(clusters) == 1
    assert metric(log, "va_final", "inspect_medreason/stderr") == 0.0
    assert clustered_standard_error(finals, None) > 0
    on_ct = {str(s.id) for s in log.samples or [] if s.metadata["modality"] == "CT"}
    cases_on_ct = [s.value["va_final"] for case, s in scores.items() if case in on_ct]
    assert metric(log, "va_final by modality:CT", "mean") == pytest.approx(
        sum(cases_on_ct) / len(cases_on_ct)
    )


def test_judges_see_what_they_should(open_dataset: Path, tmp_path: Path) -> None:
    judges = ScriptedJudges()
    log = run_open(open_ended(data=str(open_dataset)), judges, tmp_path)
    for messages in judges.requests["gt"]:
        user = messages[1]
        # no image part at all: plain text
        assert isinstance(user, ChatMessageUser) and isinstance(user.content, str)
        assert "reference for" in user.text
    for messages in judges.requests["vision"]:
        user = messages[1]
        assert isinstance(user, ChatMessageUser) and not isinstance(user.content, str)
        images = [c.image for c in user.content if isinstance(c, ContentImage)]
        assert len(images) == 1 and images[0].startswith("data:image/png;base64,")
        assert "reference for" not in user.text
    metadata = log.eval.metadata or {}
    assert metadata["judges"]["settings"]["temperature"] == 0.0
    assert metadata["judges"]["settings"]["seed"] == 42
    assert set(metadata["judges"]["templates"]) >= {"judge_gt_system", "judge_rvf_user"}
    assert metadata["judges"]["roles"] == {
        "gt_final": "grader",
        "va_answer": "vision_grader",
        "rvf_trace": "vision_grader",
    }


def test_blind_control_still_shows_judges_the_image(open_dataset: Path, tmp_path: Path) -> None:
    judges = ScriptedJudges()
    run_open(open_ended(data=str(open_dataset), images=False), judges, tmp_path)
    assert judges.requests["vision"]
    for messages in judges.requests["vision"]:
        assert any(isinstance(c, ContentImage) for c in messages[1].content)


def test_missing_judge_role_stops_with_the_flag_named(open_dataset: Path, tmp_path: Path) -> None:
    [log] = eval(
        open_ended(data=str(open_dataset)),
        model=get_model("mockllm/model", custom_outputs=model_reply),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    # The run must fail, not judge quietly with the model under test.
    assert log.status == "error"
    assert log.error is not None and "--model-role grader=" in log.error.message


def test_self_judging_only_when_asked(open_dataset: Path, tmp_path: Path) -> None:
    def everything(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        if '"score"' in messages[0].text:
            return scripted_output('{"score": 2, "rationale": "self"}')
        return model_reply(messages)

    [log] = eval(
        open_ended(data=str(open_dataset), allow_self_judging=True),
        model=get_model("mockllm/model", custom_outputs=everything),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert metric(log, "rvf_trace", "mean") == pytest.approx(
        (2 * 19) / 20  # every judged trace gets 2; "emptytrace" is 0 by rule
    )


def test_mixed_task_reports_all_three_metrics(official_dataset: Path, tmp_path: Path) -> None:
    judges = ScriptedJudges()
    calls = {"n": 0}

    def model(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        if "Options:" in text:
            return scripted_output('{"reasoning_trace": "x", "answer": "A"}')
        calls["n"] += 1
        return scripted_output('{"reasoning_trace": "A dense nodule. [o1]", "answer": "nodule"}')

    def text_judge(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        judges.requests["gt"].append(messages)
        return scripted_output('{"score": 4, "rationale": "aligned"}')

    def vision_judge(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        judges.requests["vision"].append(messages)
        return scripted_output('{"score": 2, "rationale": "partly"}')

    [log] = eval(
        medreason(data=str(official_dataset)),
        model=get_model("mockllm/model", custom_outputs=model),
        model_roles={
            "grader": get_model("mockllm/model", custom_outputs=text_judge, memoize=False),
            "vision_grader": get_model("mockllm/model", custom_outputs=vision_judge, memoize=False),
        },
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert log.results is not None
    [mcq_results] = [s for s in log.results.scores if s.name == "mcq_scorer"]
    assert mcq_results.metrics["accuracy"].value == pytest.approx(1 / 3)  # q1 only is A
    assert metric(log, "gt_final", "mean") == 4.0
    assert metric(log, "va_final", "mean") == 2.0  # VA 2 with RVF 2: capped at 3, stays 2
    # Only the one open case reached the judges: one GT call, two vision calls.
    assert len(judges.requests["gt"]) == 1 and len(judges.requests["vision"]) == 2
    mcq_scores = scores_by_id(log, "mcq_scorer")
    assert math.isnan(mcq_scores["o1"].value)
    open_scores = scores_by_id(log, "open_ended_scorer")
    assert math.isnan(open_scores["q1"].value)


def rejudge_with_pipeline_check(log_file: Path, env: dict[str, str]) -> None:
    """``inspect score`` with the open-ended scorer and the offline judges, as the README
    shows: the log holds no image and names no folder, so the demo's data folder is named."""
    score_run = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "score",
            str(log_file),
            "--scorer",
            "inspect_medreason/open_ended_scorer",
            "-S",
            f"data_dir={sample_data_dir()}",
            "--model-role",
            "grader=medreason/pipeline-check",
            "--model-role",
            "vision_grader=medreason/pipeline-check",
            "--overwrite",
            "--display",
            "plain",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert score_run.returncode == 0, score_run.stderr[-2000:]


def test_no_score_then_inspect_score_rejudges(tmp_path: Path) -> None:
    """The README's re-judging flow, through the CLI, offline; the log has no images, so the
    judges must read them from the case files."""
    env = {**os.environ, "NO_COLOR": "1"}
    logs = tmp_path / "logs"
    generate_run = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            "inspect_medreason/open_ended",
            "--model",
            "medreason/pipeline-check",
            "--no-score",
            "--no-log-images",
            "--log-dir",
            str(logs),
            "--display",
            "plain",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert generate_run.returncode == 0, generate_run.stderr[-2000:]
    [log_file] = list(logs.glob("*.eval"))
    unscored = read_eval_log(str(log_file))
    assert unscored.status == "success"
    assert unscored.results is None or not unscored.results.scores
    rejudge_with_pipeline_check(log_file, env)
    rescored = read_eval_log(str(log_file))
    assert rescored.status == "success" and rescored.results is not None
    assert metric(rescored, "gt_final", "mean") == 2.0  # the pipeline-check judge's fixed score


def test_the_three_judge_calls_of_a_case_overlap(open_dataset: Path, tmp_path: Path) -> None:
    import anyio

    in_flight = {"now": 0, "max": 0}

    async def slow_judge(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        in_flight["now"] += 1
        in_flight["max"] = max(in_flight["max"], in_flight["now"])
        await anyio.sleep(0.05)
        in_flight["now"] -= 1
        return scripted_output('{"score": 3, "rationale": "r"}')

    [log] = eval(
        open_ended(data=str(open_dataset)),
        model=get_model("mockllm/model", custom_outputs=model_reply),
        model_roles={
            "grader": get_model("mockllm/model", custom_outputs=slow_judge, memoize=False),
            "vision_grader": get_model("mockllm/model", custom_outputs=slow_judge, memoize=False),
        },
        max_samples=1,  # one case at a time: any overlap is within a case
        limit=2,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert in_flight["max"] == 3


def test_a_failing_judge_call_is_unscored_with_its_error(
    open_dataset: Path, tmp_path: Path
) -> None:
    def broken_judge(*_: Any) -> ModelOutput:
        raise RuntimeError("content rejected by the provider")

    [log] = eval(
        open_ended(data=str(open_dataset), judge_retries=0),
        model=get_model("mockllm/model", custom_outputs=model_reply),
        model_roles={
            "grader": get_model("mockllm/model", custom_outputs=broken_judge, memoize=False),
            "vision_grader": get_model(
                "mockllm/model", custom_outputs=ScriptedJudges().vision_judge, memoize=False
            ),
        },
        limit=1,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    score = log.samples[0].scores["open_ended_scorer"]  # type: ignore[index]
    values: dict[str, float] = score.value  # type: ignore[assignment]
    assert math.isnan(values["gt_final"])
    assert not math.isnan(values["va_answer"])  # the other judges still scored
    failure = score.metadata["judges"]["gt_final"]["failure"]  # type: ignore[index]
    assert "judge call failed" in failure and "content rejected" in failure


def test_rescoring_an_edited_log_never_sends_outside_files(tmp_path: Path) -> None:
    """Re-scoring resolves each image again under the run's data folder: a log edited to
    point at another file leaves the vision components unscored, and nothing is sent."""
    from inspect_ai.log import write_eval_log

    env = {**os.environ, "NO_COLOR": "1"}
    logs = tmp_path / "logs"
    (tmp_path / "secret.png").write_bytes(
        (sample_data_dir() / "images" / "fundus_retina.png").read_bytes()
    )
    generate_run = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            "inspect_medreason/open_ended",
            "--model",
            "medreason/pipeline-check",
            "--no-score",
            "--no-log-images",
            "--limit",
            "2",
            "--log-dir",
            str(logs),
            "--display",
            "plain",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert generate_run.returncode == 0, generate_run.stderr[-2000:]
    [log_file] = list(logs.glob("*.eval"))
    log = read_eval_log(str(log_file))
    assert log.status == "success" and log.samples is not None
    edited, kept = log.samples
    assert edited.metadata is not None and kept.metadata is not None
    edited.metadata["image_paths"] = ["../../secret.png"]
    # a folder written into a sample is ignored: paths are resolved under the named one
    kept.metadata["data_dir"] = str(tmp_path)
    write_eval_log(log, str(log_file))
    rejudge_with_pipeline_check(log_file, env)
    rescored = read_eval_log(str(log_file))
    assert rescored.status == "success" and rescored.samples is not None
    first, second = (s.scores["open_ended_scorer"] for s in rescored.samples)  # type: ignore[index]
    assert isinstance(first.value, dict) and isinstance(second.value, dict)
    assert math.isnan(first.value["va_answer"]) and math.isnan(first.value["rvf_trace"])
    assert first.value["gt_final"] == 2.0  # the text judge needs no image
    failure = first.metadata["judges"]["va_answer"]["failure"]  # type: ignore[index]
    assert "case image refused" in failure and "outside the data folder" in failure
    assert second.value["va_answer"] == 2.0 and second.value["rvf_trace"] == 2.0


def test_a_judge_of_the_tested_models_lineage_is_warned_once_in_the_log(
    open_dataset: Path, tmp_path: Path
) -> None:
    """Judges bound to the model under test: one warning per judge (not per case), naming
    both models, in the log's messages; a judge of another line gets none."""
    log = run_open(open_ended(data=str(open_dataset)), ScriptedJudges(), tmp_path)
    assert log.samples is not None
    warnings = [
        event.message.message
        for sample in log.samples
        for event in sample.events
        if isinstance(event, LoggerEvent) and "judge lineage" in event.message.message
    ]
    assert len(warnings) == 2, warnings  # grader and vision_grader, once each
    assert all("mockllm/model is the same model as the model under test" in w for w in warnings)
    assert any("the grader judge" in w for w in warnings)
    assert any("the vision_grader judge" in w for w in warnings)
    # Every judged case records it too.
    judged = [s for s in scores_by_id(log).values() if s.metadata and s.metadata.get("judges")]
    assert judged and all(
        score.metadata["judge_lineage"]
        == [
            "grader mockllm/model is the same model",
            "vision_grader mockllm/model is the same model",
        ]
        for score in judged
        if score.metadata["judge_models"].get("gt_final")
        and score.metadata["judge_models"].get("va_answer")
    )

    judges = ScriptedJudges()
    [other] = eval(
        open_ended(data=str(open_dataset)),
        model=get_model("mockllm/tested", custom_outputs=model_reply),
        model_roles={
            "grader": get_model("mockllm/model", custom_outputs=judges.text_judge, memoize=False),
            "vision_grader": get_model(
                "mockllm/model", custom_outputs=judges.vision_judge, memoize=False
            ),
        },
        display="none",
        log_dir=str(tmp_path / "other"),
    )
    assert other.status == "success", other.error
    assert other.samples is not None
    assert not any(
        isinstance(event, LoggerEvent) and "judge lineage" in event.message.message
        for sample in other.samples
        for event in sample.events
    )
    assert all("judge_lineage" not in score.metadata for score in scores_by_id(other).values())
