from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import reply_by_question, scripted_output, user_text, write_json
from inspect_ai import eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import ChatMessage, ChatMessageUser, ContentImage, ModelOutput, get_model
from inspect_ai.scorer import Score

from inspect_medreason.medreason.medreason import MEDREASON_TASK_VERSION, mcq

MCQ_REPLIES = {
    "(q1)": '{"reasoning_trace": "Dense bone, cross-section.", "answer": "A"}',
    "(q2)": "Looking at it, the plane is coronal.\nANSWER: $C$",
    "(q3)": "A fracture line is not visible.",
}


def run(task: Any, model: Any, **kwargs: Any) -> EvalLog:
    [log] = eval(task, model=model, display="none", log_dir=kwargs.pop("log_dir"), **kwargs)
    assert log.status == "success", log.error
    return log


def metric(log: EvalLog, name: str, scorer: str = "mcq_scorer") -> float:
    assert log.results is not None
    found = next(s for s in log.results.scores if s.name == scorer)
    return found.metrics[name].value


def value(score: Score) -> dict[str, float]:
    """An MCQ score's value: every number its metrics report, one key each."""
    assert isinstance(score.value, dict)
    return cast(dict[str, float], score.value)


def test_mcq_eval_scores_and_metrics(official_dataset: Path, tmp_path: Path) -> None:
    model = get_model("mockllm/model", custom_outputs=reply_by_question(MCQ_REPLIES))
    log = run(mcq(data=str(official_dataset)), model, log_dir=str(tmp_path / "logs"))
    assert log.eval.task_version == MEDREASON_TASK_VERSION
    assert log.samples is not None
    scores = {s.id: s.scores["mcq_scorer"] for s in log.samples if s.scores}
    assert set(scores) == {"q1", "q2", "q3"}  # the open case belongs to the other track
    q1, q2, q3 = scores["q1"], scores["q2"], scores["q3"]
    assert value(q1)["correct"] == 1.0 and q1.metadata is not None
    assert value(q1)["strict_correct"] == 1.0 and value(q1)["parsed"] == 1.0
    # q2: right after extraction, wrong under the official strict rule (raw reply is not "C")
    assert value(q2)["correct"] == 1.0 and q2.metadata is not None
    assert value(q2)["strict_correct"] == 0.0
    assert q2.metadata["extraction_method"] == "answer_statement"
    # no JSON answer field: the whole reply is what a submission would carry
    assert q2.metadata["answer_field"] is None
    assert q2.metadata["strict_answer"] == MCQ_REPLIES["(q2)"]
    # q3: no answer stated, counted wrong and unparsed, not guessed
    assert value(q3)["correct"] == 0.0 and value(q3)["parsed"] == 0.0
    assert q3.answer == "" and "no answer extracted" in (q3.explanation or "")

    assert metric(log, "accuracy") == pytest.approx(2 / 3)
    assert metric(log, "stderr") > 0
    assert metric(log, "strict_accuracy") == pytest.approx(1 / 3)
    assert metric(log, "unparsed") == pytest.approx(1 / 3)
    assert metric(log, "parsed_accuracy") == pytest.approx(1.0)
    assert metric(log, "accuracy by modality:CT") == 1.0
    assert metric(log, "accuracy by modality:X-ray") == 0.0
    assert metric(log, "accuracy by organ_system:Chest") == 0.5


def test_official_containers_readings_are_reported_beside_the_careful_one(
    official_dataset: Path, tmp_path: Path
) -> None:
    """q3 ("A fracture line is not visible.") states no option: the careful reader leaves it
    unanswered, both official containers submit A (the article), wrong either way; q1 and
    q2 are read alike by all three. So each official accuracy is 2/3 and each differs once."""
    model = get_model("mockllm/model", custom_outputs=reply_by_question(MCQ_REPLIES))
    log = run(mcq(data=str(official_dataset)), model, log_dir=str(tmp_path / "logs"))
    assert log.samples is not None
    scores = {s.id: s.scores["mcq_scorer"] for s in log.samples if s.scores}
    q2, q3 = scores["q2"].metadata or {}, scores["q3"].metadata or {}
    q2_value, q3_value = value(scores["q2"]), value(scores["q3"])
    assert q2["official_template_answer"] == "C" and q2["official_baseline_answer"] == "C"
    assert q2_value["official_template_differs"] == 0.0
    assert q2_value["official_template_correct"] == 1.0
    assert q3["official_template_answer"] == "A" and q3["official_baseline_answer"] == "A"
    assert q3_value["official_template_differs"] == 1.0
    assert q3_value["official_template_correct"] == 0.0
    for reader in ("template", "baseline"):
        assert metric(log, f"official_{reader}_accuracy") == pytest.approx(2 / 3)
        assert metric(log, f"official_{reader}_differs") == 1.0
    assert metric(log, "accuracy") == pytest.approx(2 / 3)


def test_a_reading_only_a_less_proven_rule_makes_is_unread_and_shown() -> None:
    """Each score names the rule and its trust; a label only a less-proven rule reads (a
    last sentence ending on a bracketed label) is unread, counted wrong, and kept as the
    tentative label."""
    from inspect_medreason.medreason.scorer import score_mcq_reply

    metadata = {"task_type": "mcq", "has_reference": True}
    choices = ["Axial", "Sagittal"]
    tentative = score_mcq_reply(
        "The first view matches, as shown in picture (A).", metadata, "A", choices
    )
    assert value(tentative)["parsed"] == 0.0 and value(tentative)["correct"] == 0.0
    assert tentative.metadata is not None
    assert tentative.metadata["extraction_method"] == "less_proven"
    assert tentative.metadata["extraction_rule"] == "final_sentence"
    assert tentative.metadata["extraction_trust"] == "less-proven"
    assert tentative.metadata["tentative_label"] == "A"
    proven = score_mcq_reply("ANSWER: A", metadata, "A", choices)
    assert value(proven)["correct"] == 1.0 and proven.metadata is not None
    assert proven.metadata["extraction_rule"] == "answer_statement"
    assert proven.metadata["extraction_trust"] == "proven"
    assert proven.metadata["tentative_label"] is None


def test_an_official_container_that_guesses_right_is_counted_right(tmp_path: Path) -> None:
    """The official numbers include the containers' guesses: a reply that states nothing is
    wrong here but right for the baseline when the reference is the first option."""
    from inspect_medreason.medreason.scorer import score_mcq_reply

    metadata = {"task_type": "mcq", "has_reference": True}
    score = score_mcq_reply("I cannot tell.", metadata, "A", ["Axial", "Sagittal"])
    assert value(score)["correct"] == 0.0 and score.metadata is not None
    assert value(score)["official_baseline_correct"] == 1.0
    assert score.metadata["official_template_answer"] == "I cannot tell."
    assert value(score)["official_template_correct"] == 0.0
    assert "no answer extracted" in (score.explanation or "")


def test_a_thinking_models_reasoning_content_is_never_its_answer(
    official_dataset: Path, tmp_path: Path
) -> None:
    """Inspect keeps reasoning content (ContentReasoning) out of the completion, and a
    ``<think>`` block in the text is set aside: q1's trace says A, its answer C (wrong);
    q2's only statement is inside an unclosed ``<think>``: no answer, and the reason."""
    from inspect_ai.model import ContentReasoning, ContentText, ModelUsage

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        if "(q1)" in text:
            content: Any = [ContentReasoning(reasoning="ANSWER: A"), ContentText(text="ANSWER: C")]
        elif "(q2)" in text:
            content = "<think>The plane is coronal, so ANSWER: C"
        else:
            content = "<think>Cortex intact.</think>\nANSWER: B"
        output = ModelOutput.from_content(model="mockllm", content=content)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    log = run(
        mcq(data=str(official_dataset)),
        get_model("mockllm/model", custom_outputs=respond),
        log_dir=str(tmp_path / "logs"),
    )
    assert log.samples is not None
    scores = {s.id: s.scores["mcq_scorer"] for s in log.samples if s.scores}
    assert scores["q1"].answer == "C" and value(scores["q1"])["correct"] == 0.0
    assert scores["q2"].answer == "" and "never closes" in (scores["q2"].explanation or "")
    assert scores["q3"].answer == "B" and value(scores["q3"])["correct"] == 1.0


def test_prompt_carries_images_options_context_and_is_logged(
    official_dataset: Path, tmp_path: Path
) -> None:
    seen: dict[str, list[ChatMessage]] = {}

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        key = next(k for k in MCQ_REPLIES if k in text)
        seen[key] = messages
        return scripted_output(MCQ_REPLIES[key])

    log = run(
        mcq(data=str(official_dataset)),
        get_model("mockllm/model", custom_outputs=respond),
        log_dir=str(tmp_path / "logs"),
    )
    system, user = seen["(q2)"]
    assert system.role == "system" and "JSON" in system.text
    assert isinstance(user, ChatMessageUser) and not isinstance(user.content, str)
    assert sum(isinstance(c, ContentImage) for c in user.content) == 2
    assert "A. Axial\nB. Sagittal\nC. Coronal" in user.text
    assert '"reasoning_trace"' in user.text and '"answer"' in user.text
    assert "Context: Trauma patient." in user_text(seen["(q3)"])
    metadata = log.eval.metadata or {}
    assert metadata["task_version"] == MEDREASON_TASK_VERSION
    assert set(metadata["prompts"]) == {"mcq_system", "mcq_user"}
    assert metadata["extraction"]["mode"] == "robust-v11"
    assert "answer_statement" in metadata["extraction"]["proven_rules"]
    assert metadata["data"]["cases_sha256"] and metadata["data"]["ground_truth_sha256"]


def test_blind_control_withholds_images(official_dataset: Path, tmp_path: Path) -> None:
    requests: list[list[ChatMessage]] = []

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        requests.append(messages)
        return scripted_output('{"reasoning_trace": "", "answer": "A"}')

    run(
        mcq(data=str(official_dataset), images=False),
        get_model("mockllm/model", custom_outputs=respond),
        log_dir=str(tmp_path / "logs"),
    )
    assert len(requests) == 3
    for messages in requests:
        user = messages[-1]
        # no image part at all: plain text, which text-only models' servers accept
        assert isinstance(user.content, str)
        assert "withheld" in user.text


def test_shuffled_choices_map_back(official_dataset: Path, tmp_path: Path) -> None:
    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        wanted = {"(q1)": "CT", "(q2)": "Coronal", "(q3)": "No"}
        key = next(k for k in wanted if k in text)
        label = next(
            line.split(".")[0]
            for line in text.splitlines()
            if line[:2] in {"A.", "B.", "C."} and line[3:] == wanted[key]
        )
        return scripted_output(f'{{"reasoning_trace": "x", "answer": "{label}"}}')

    log = run(
        # -T values arrive as YAML scalars or strings; the task must coerce them.
        mcq(data=str(official_dataset), shuffle_choices="true", seed=7),
        get_model("mockllm/model", custom_outputs=respond),
        log_dir=str(tmp_path / "logs"),
    )
    assert metric(log, "accuracy") == 1.0
    assert log.samples is not None
    originals = {
        s.id: s.scores["mcq_scorer"].metadata["original_label"]
        for s in log.samples
        if s.scores and s.scores["mcq_scorer"].metadata
    }
    assert originals == {"q1": "A", "q2": "C", "q3": "B"}
    assert (log.eval.metadata or {})["shuffle_seed"] == 7


def test_unlabeled_cases_are_unscored(official_dataset: Path, tmp_path: Path) -> None:
    (official_dataset / "ground_truth.json").unlink()
    log = run(
        mcq(data=str(official_dataset)),
        get_model("mockllm/model", custom_outputs=reply_by_question(MCQ_REPLIES)),
        log_dir=str(tmp_path / "logs"),
    )
    assert log.samples is not None
    for sample in log.samples:
        assert sample.scores is not None
        score = sample.scores["mcq_scorer"]
        assert isinstance(score.value, float) and math.isnan(score.value)
        assert score.answer in {"A", "C", ""}
        assert score.metadata is not None and score.metadata["extraction_method"]
    assert math.isnan(metric(log, "accuracy"))


def test_bad_input_stops_before_any_sample(tmp_path: Path) -> None:
    # The task function itself refuses, so no eval (and no model call) can start.
    write_json(tmp_path / "cases.json", [{"case_id": "x", "task_type": "mcq", "question": "Q"}])
    with pytest.raises(ValueError, match=r"case 'x': options"):
        mcq(data=str(tmp_path))


def test_registry_name_resolves_from_installed_package(tmp_path: Path) -> None:
    model = get_model("mockllm/model", custom_outputs=lambda *_: scripted_output("ANSWER: A"))
    [log] = eval(
        "inspect_medreason/mcq",
        model=model,
        limit=2,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success" and log.eval.task == "inspect_medreason/mcq"


def test_offline_quick_start_command_runs_without_network(tmp_path: Path) -> None:
    """The README's first command: the CLI, the shipped data and the built-in offline model."""
    env = {
        **os.environ,
        "INSPECT_LOG_DIR": str(tmp_path / "logs"),
        "HF_HUB_OFFLINE": "1",
        "OPENAI_API_KEY": "",
        "NO_COLOR": "1",
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            "inspect_medreason/mcq",
            "--model",
            "medreason/pipeline-check",
            "--display",
            "plain",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    [log_file] = list((tmp_path / "logs").glob("*.eval"))
    log = read_eval_log(str(log_file))
    assert log.status == "success"
    assert log.samples is not None and len(log.samples) == 18
    # The pipeline check always picks the first option, and every reply must parse.
    assert metric(log, "unparsed") == 0.0
    first_option_right = sum(1 for s in log.samples if s.target == "A") / len(log.samples)
    assert metric(log, "accuracy") == pytest.approx(first_option_right)


ALL_TASKS = (
    "mcq",
    "open_ended",
    "medreason",
    "medreason_vqa_rad",
    "slake",
    "path_vqa",
    "medxpertqa_mm",
    "gemex",
    "cmb_exam",
    "cmb_clin",
)


def test_every_task_is_registered_under_the_plugin_name() -> None:
    from inspect_ai._util.registry import registry_lookup

    for name in ALL_TASKS:
        assert registry_lookup("task", f"inspect_medreason/{name}") is not None, name


def test_blind_text_only_case_gets_no_notice() -> None:
    """A text-only case run blind is told nothing is withheld: it had nothing to withhold."""
    from inspect_medreason.core.schema import Case
    from inspect_medreason.medreason.dataset import record_to_sample

    case = Case(case_id="t", task_type="open", question="Q")
    assert "images_withheld" not in (record_to_sample(case, [], show_images=False).metadata or {})
    imaged = Case(case_id="i", task_type="open", question="Q", image_paths=["a.png"])
    withheld = record_to_sample(imaged, [Path("a.png")], show_images=False).metadata or {}
    assert withheld["images_withheld"] is True


def test_sample_metadata_repeats_nothing_the_sample_carries(tmp_path: Path) -> None:
    """The case id is the sample id, an MCQ reference is the target, the option texts are
    the choices and the image cluster is the image paths: none is repeated in metadata
    (Inspect copies, summarises and logs every key three times per sample); the case's own
    option labels are kept only when they are not A, B, C...; an open case keeps the
    reference and the image folder its judges need."""
    from inspect_medreason.core.schema import Case, sample_options
    from inspect_medreason.medreason.dataset import record_to_sample

    options = [{"label": "A", "text": "CT"}, {"label": "B", "text": "MR"}]
    closed = Case(
        case_id="m1",
        task_type="mcq",
        question="Which?",
        options=options,  # type: ignore[arg-type]
        answer="B",
        image_paths=["a.png"],
    )
    sample = record_to_sample(closed, [tmp_path / "a.png"])
    metadata = sample.metadata or {}
    assert sample.id == "m1" and sample.target == "B" and sample.choices == ["CT", "MR"]
    assert metadata["task_type"] == "mcq" and metadata["image_paths"] == ["a.png"]
    for key in (
        "case_id",
        "reference_answer",
        "has_reference",
        "images_withheld",
        "data_dir",
        "options",
        "option_labels",
        "image_cluster",
    ):
        assert key not in metadata, key
    assert sample_options(metadata, sample.choices) == [("A", "CT"), ("B", "MR")]
    own = Case(
        case_id="m2",
        task_type="mcq",
        question="Which?",
        answer="ii",
        options=[{"label": "i", "text": "CT"}, {"label": "ii", "text": "MR"}],  # type: ignore[list-item]
    )
    sample = record_to_sample(own, [])
    assert (sample.metadata or {})["option_labels"] == ["i", "ii"] and sample.target == "ii"
    assert sample_options(sample.metadata or {}, sample.choices or []) == [
        ("i", "CT"),
        ("ii", "MR"),
    ]
    opened = Case(
        case_id="o1",
        task_type="open",
        question="What?",
        answer=" A nodule. ",
        image_paths=["a.png"],
    )
    metadata = record_to_sample(opened, [tmp_path / "a.png"]).metadata or {}
    # no data folder: a log names no local path (the scorer is told it apart)
    assert metadata["reference_answer"] == " A nodule. " and "data_dir" not in metadata
    assert "options" not in metadata and "case_id" not in metadata


def test_every_metric_is_the_mean_over_epochs(official_dataset: Path, tmp_path: Path) -> None:
    """Three epochs, worked out by hand. Replies per case, epoch by epoch:
    q1 (reference A, options A-D): ``{"answer": "A"}``, ``ANSWER: A``, ``I am not sure.``;
    q2 (reference C): ``ANSWER: B``, ``{"answer": "C"}``, ``{"answer": "C"}``;
    q3 (reference B): ``{"answer": "B"}`` in every epoch.
    (correct, strict, parsed) per epoch: q1 (1,1,1) (1,0,1) (0,0,0); q2 (0,0,1) (1,1,1)
    (1,1,1); q3 (1,1,1) three times. Means over epochs: correct 2/3, 2/3, 1; strict 1/3,
    2/3, 1; parsed 2/3, 1, 1. So accuracy 7/9, strict_accuracy 2/3, unparsed 1/9 and
    parsed_accuracy (correct replies over replies read) 7/8.
    The official containers: on q1's silent reply the template submits the reply itself
    (wrong) and the baseline its first option, A (right); both differ from "no answer".
    So template accuracy (2/3 + 2/3 + 1) / 3 = 7/9, baseline (1 + 2/3 + 1) / 3 = 8/9, and
    each differs on 1 case in one epoch of three: 1/3 a run."""
    replies = {
        "(q1)": ['{"reasoning_trace": "r", "answer": "A"}', "ANSWER: A", "I am not sure."],
        "(q2)": ["ANSWER: B", *['{"reasoning_trace": "r", "answer": "C"}'] * 2],
        "(q3)": ['{"reasoning_trace": "r", "answer": "B"}'] * 3,
    }
    served: dict[str, int] = {}

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        case = next(key for key in replies if key in text)
        served[case] = served.get(case, 0) + 1
        return scripted_output(replies[case][served[case] - 1])

    [log] = eval(
        mcq(data=str(official_dataset)),
        model=get_model("mockllm/model", custom_outputs=respond),
        epochs=3,
        max_samples=1,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert served == {"(q1)": 3, "(q2)": 3, "(q3)": 3}
    assert metric(log, "accuracy") == pytest.approx(7 / 9)
    assert metric(log, "strict_accuracy") == pytest.approx(2 / 3)
    assert metric(log, "unparsed") == pytest.approx(1 / 9)
    assert metric(log, "parsed_accuracy") == pytest.approx(7 / 8)
    assert metric(log, "official_template_accuracy") == pytest.approx(7 / 9)
    assert metric(log, "official_baseline_accuracy") == pytest.approx(8 / 9)
    assert metric(log, "official_template_differs") == pytest.approx(1 / 3)
    assert metric(log, "official_baseline_differs") == pytest.approx(1 / 3)
