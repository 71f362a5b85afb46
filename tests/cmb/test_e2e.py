"""CMB end to end on mockllm; its adapters, solvers and scorer one by one."""

from __future__ import annotations

from pathlib import Path

from conftest import scripted_output
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, get_model
from utils.published_schemas import CMB_CLIN_CASE, cmb_clin_file, cmb_exam_file, exam_row

from inspect_medreason.cmb.cmb import cmb_clin, cmb_exam
from inspect_medreason.cmb.dataset import clin_record_to_sample, exam_record_to_sample
from inspect_medreason.cmb.scorer import cmb_exam_scorer
from inspect_medreason.cmb.solver import clinical_conversation, cmb_exam_prompt
from inspect_medreason.core.loaders import Problem


def test_cmb_exam_runs_end_to_end_on_mockllm(tmp_path: Path) -> None:
    [log] = eval(
        cmb_exam(data=str(cmb_exam_file(tmp_path / "exam.json"))),
        model="mockllm/model",
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert log.results is not None
    assert log.results.scores[0].metrics["accuracy"].value == 0.0  # no answer is not right


def test_cmb_clin_runs_end_to_end_on_mockllm(tmp_path: Path) -> None:
    [log] = eval(
        cmb_clin(data=str(cmb_clin_file(tmp_path / "clin.json"))),
        model="mockllm/model",
        model_roles={"grader": "mockllm/model"},
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples[0].metadata["answers"]) == 2


def test_exam_record_to_sample_carries_the_question_and_choices() -> None:
    sample = exam_record_to_sample(
        exam_row(1, "医师考试", "口腔执业医师", "AC", multi=True), 0, "x"
    )
    assert not isinstance(sample, Problem)
    assert sample.input == "第1题：此男孩可能患" and sample.target == "AC"
    assert sample.choices is not None and len(sample.choices) == 5
    bad = exam_record_to_sample(exam_row(2, "医师考试", "口腔执业医师", "Z"), 1, "x")
    assert isinstance(bad, Problem) and bad.field == "answer"


def test_clin_record_to_sample_keeps_every_question_and_reference() -> None:
    sample, key = clin_record_to_sample(CMB_CLIN_CASE, 0, "x")
    assert isinstance(sample, Sample) and key == "answer"
    assert sample.metadata is not None and sample.metadata["questions"] == [
        "简述诊断。",
        "简述治疗原则。",
    ]
    assert sample.metadata["solutions"] == ["嵌顿性腹股沟斜疝。", "紧急手术。"]
    # The README's spelling is read too, and said to be the one found.
    renamed = {
        **CMB_CLIN_CASE,
        "QA_pairs": [
            {"question": p["question"], "solution": p["answer"]} for p in CMB_CLIN_CASE["QA_pairs"]
        ],
    }
    sample, key = clin_record_to_sample(renamed, 0, "x")
    assert isinstance(sample, Sample) and key == "solution"
    assert sample.metadata is not None and sample.metadata["solutions"][0] == "嵌顿性腹股沟斜疝。"
    empty, _ = clin_record_to_sample(
        {**CMB_CLIN_CASE, "QA_pairs": [{"question": "简述诊断。", "answer": " "}]}, 0, "x"
    )
    assert isinstance(empty, list) and [p.field for p in empty] == ["QA_pairs[0].answer"]


def test_cmb_exam_prompt_renders_the_upstream_template_with_fewshot_turns(tmp_path: Path) -> None:
    validation = cmb_exam_file(tmp_path / "val.json")
    sample = exam_record_to_sample(exam_row(9, "医师考试", "口腔执业医师", "D"), 0, "x")
    assert isinstance(sample, Sample)
    seen: list[list[object]] = []

    def respond(messages: list[object], *_: object) -> object:
        seen.append(list(messages))
        return scripted_output("答案是D")

    task = Task(
        dataset=MemoryDataset([sample]),
        solver=cmb_exam_prompt(prompt="answer_only", fewshot=1, fewshot_data=str(validation)),
        scorer=cmb_exam_scorer(),
    )
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=respond),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    [messages] = seen
    assert [type(m) for m in messages] == [ChatMessageUser, ChatMessageAssistant, ChatMessageUser]
    assert "直接输出答案选项" in str(messages[-1].text) and "D. 原发性肺结核" in messages[-1].text  # type: ignore[attr-defined]
    assert log.results is not None and log.results.scores[0].metrics["accuracy"].value == 1.0


def test_clinical_conversation_asks_each_question_after_the_case(tmp_path: Path) -> None:
    sample, _ = clin_record_to_sample(CMB_CLIN_CASE, 0, "x")
    assert isinstance(sample, Sample)
    replies = iter(["诊断：斜疝。", "治疗：手术。"])
    outputs = get_model("mockllm/model", custom_outputs=[scripted_output(r) for r in replies])
    [log] = eval(
        Task(dataset=MemoryDataset([sample]), solver=clinical_conversation()),
        model=outputs,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    messages = log.samples[0].messages
    assert "病人,男,49岁" in messages[0].text and "简述诊断。" in messages[0].text
    assert [m.text for m in messages[1:]] == ["诊断：斜疝。", "简述治疗原则。", "治疗：手术。"]
