from __future__ import annotations

import json
import math
import os
import zipfile
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import scripted_output, user_text, write_json, write_jsonl
from inspect_ai import eval
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from utils.published_schemas import (
    MED_CMR_MCQ,
    MED_CMR_MCQ_FILE,
    MED_CMR_OPEN,
    MED_CMR_OPEN_FILE,
    med_cmr_release,
    med_cmr_zip,
)

from inspect_medreason.core.archives import unpack_archive
from inspect_medreason.core.loaders import DatasetError, load_cases
from inspect_medreason.med_cmr.med_cmr import med_cmr
from inspect_medreason.med_cmr.scorer import parse_med_cmr_reply, weighted_score
from inspect_medreason.medreason.medreason import medreason


def model_reply(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    text = user_text(messages)
    if "Options:" in text or "A) " in text or "A. " in text:
        return scripted_output('{"reasoning_trace": "Looked.", "answer": "A"}')
    return scripted_output(
        '{"reasoning_trace": "A lucency at the apex.", "answer": "Left pneumothorax"}'
    )


class Judge:
    """A scripted judge that records every request it is sent."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[list[ChatMessage]] = []

    def __call__(self, messages: list[ChatMessage], *_: Any) -> ModelOutput:
        self.requests.append(messages)
        return scripted_output(self.reply)


def run(task: Any, roles: dict[str, Judge], tmp_path: Path) -> EvalLog:
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=model_reply),
        model_roles={
            role: get_model("mockllm/model", custom_outputs=judge, memoize=False)
            for role, judge in roles.items()
        },
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return log


def test_release_layout_loads_as_published(tmp_path: Path) -> None:
    loaded = load_cases(med_cmr_release(tmp_path / "release"))  # the unzipped folder
    by_id = {case.case_id: case for case in loaded.cases}
    assert sorted(by_id) == ["0", "1", "2", "3"]  # index as a string
    first = by_id["0"]
    assert first.task_type == "mcq" and first.labels == ["A", "B", "C", "D", "E"]
    assert first.options[0].text == "Right upper lobe"  # "A) " prefix stripped
    assert by_id["1"].options[1].text == "Meningioma"  # no prefix kept as is
    assert first.metadata.organ_system == "Respiratory System" and first.metadata.task
    assert first.metadata.subtype == "Localization" and first.metadata.modality == "CT"
    assert by_id["2"].task_type == "open" and by_id["2"].reference_reasoning
    [sent] = loaded.prepared_images["3"]  # image_paths
    assert Path(str(sent.source)).name == "ct_1.png"
    assert loaded.resolved_images["3"] == [sent.path]
    assert {p.name for p in loaded.record_files} == {MED_CMR_MCQ_FILE, MED_CMR_OPEN_FILE}
    # the records name their images from the release's root, which is the image folder
    assert loaded.data_dir == tmp_path / "release"
    assert loaded.unknown_keys == {}


@pytest.mark.parametrize("layout", ["array", "cases", "jsonl"])
def test_one_file_in_each_container(tmp_path: Path, layout: str) -> None:
    med_cmr_release(tmp_path)
    records = MED_CMR_MCQ + MED_CMR_OPEN
    # one file beside dataset/, where the records' image paths start
    if layout == "jsonl":
        path = write_jsonl(tmp_path / "all.jsonl", records)
    else:
        path = write_json(
            tmp_path / "all.json", records if layout == "array" else {"cases": records}
        )
    assert [c.case_id for c in load_cases(path).cases] == ["0", "1", "2", "3"]


def test_duplicate_index_and_case_id_over_index(tmp_path: Path) -> None:
    med_cmr_release(tmp_path)
    folder = tmp_path / "dataset"
    write_json(folder / MED_CMR_OPEN_FILE, [{**MED_CMR_OPEN[0], "index": "1"}])  # "1" == 1
    with pytest.raises(DatasetError) as error:
        load_cases(tmp_path)
    assert {(p.case_id, p.field) for p in error.value.problems} == {("1", "case_id")}
    assert all(p.file.endswith((MED_CMR_MCQ_FILE, MED_CMR_OPEN_FILE)) for p in error.value.problems)
    write_json(folder / MED_CMR_OPEN_FILE, [{**MED_CMR_OPEN[0], "case_id": "train_7"}])
    loaded = load_cases(tmp_path)
    assert [c.case_id for c in loaded.cases] == ["0", "1", "train_7"]
    assert loaded.cases[2].metadata.model_extra == {"index": 2}  # kept, not the id


def test_med_cmr_task_with_the_challenge_scoring(tmp_path: Path) -> None:
    grader, vision = (
        Judge('{"score": 3, "rationale": "ok"}'),
        Judge('{"score": 4, "rationale": "ok"}'),
    )
    log = run(
        med_cmr(data=str(med_cmr_release(tmp_path / "release"))),
        {"grader": grader, "vision_grader": vision},
        tmp_path,
    )
    assert log.results is not None
    metrics = {(s.name, k): m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["mcq_scorer", "accuracy"] == 0.5  # case 0 is A, case 1 is B
    assert metrics["gt_final", "mean"] == 3.0
    assert metrics["va_final", "mean"] == 4.0
    assert len(grader.requests) == 2 and len(vision.requests) == 4
    origin = (log.eval.metadata or {})["data_origin"]
    assert origin["kind"] == "local" and "Apache-2.0" in origin["licence"]
    assert set((log.eval.metadata or {})["data"]["record_files"]) == {
        f"dataset/{MED_CMR_MCQ_FILE}",
        f"dataset/{MED_CMR_OPEN_FILE}",
    }


def test_med_cmr_four_criterion_scoring(tmp_path: Path) -> None:
    vision = Judge(
        json.dumps(
            {
                "consistency": 5,
                "coherence": 10,
                "visual_accuracy": 8,
                "ground_truth_correctness": 6,
                "rationale": "fine",
            }
        )
    )
    task = med_cmr(data=str(med_cmr_release(tmp_path / "r")), track="open", open_scoring="med_cmr")
    log = run(task, {"vision_grader": vision}, tmp_path)
    assert log.results is not None
    metrics = {(s.name, k): m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert {s.scorer for s in log.results.scores} == {"med_cmr_scorer"}
    # (1*5 + 1*10 + 4*8 + 4*6) / (10 * 10) * 100
    assert metrics["med_cmr_score", "mean"] == pytest.approx(71.0)
    assert metrics["med_cmr_score", "grouped_task:Causal Reasoning"] == pytest.approx(71.0)
    assert metrics["visual_accuracy", "mean"] == 8
    assert metrics["med_cmr_unscored", "mean"] == 0
    # the judge saw the image, the reference and the candidate, never the reference reasoning
    for messages in vision.requests:
        text = user_text(messages)
        assert "Left pneumothorax" in text and "LEAKMARK" not in text
        parts = messages[-1].content
        assert not isinstance(parts, str)
        assert any(getattr(part, "image", "").startswith("data:") for part in parts)
    judges = (log.eval.metadata or {})["judges"]
    assert judges["open_scoring"] == "med_cmr" and judges["roles"] == {
        "med_cmr_score": "vision_grader"
    }


def test_an_unreadable_med_cmr_verdict_is_unscored_not_zero(tmp_path: Path) -> None:
    vision = Judge('{"consistency": 5, "coherence": 11, "visual_accuracy": 8}')
    task = med_cmr(
        data=str(med_cmr_release(tmp_path / "r")),
        track="open",
        open_scoring="med_cmr",
        judge_retries=1,
    )
    log = run(task, {"vision_grader": vision}, tmp_path)
    assert log.samples is not None
    for sample in log.samples:
        score = (sample.scores or {})["med_cmr_scorer"]
        value = cast(dict[str, float], score.value)
        assert math.isnan(value["med_cmr_score"]) and value["med_cmr_unscored"] == 1.0
        assert "coherence 11 is outside 0-10" in str(score.metadata["judges"])  # type: ignore[index]
    assert len(vision.requests) == 4  # two cases, one retry each


def test_med_cmr_reply_parser() -> None:
    verdict, problem = parse_med_cmr_reply(
        'Here: {"consistency": "7", "coherence": 7.0, "visual_accuracy": 10, '
        '"ground_truth_correctness": 0, "rationale": "x"}'
    )
    assert verdict is not None and problem == ""
    assert weighted_score(verdict.parts) == pytest.approx(54.0)
    for bad, why in [
        ('{"consistency": 7}', "missing"),
        ("no json", "no JSON"),
        (
            '{"consistency": 7.5, "coherence": 1, "visual_accuracy": 1, '
            '"ground_truth_correctness": 1}',
            "not an integer",
        ),
    ]:
        verdict, problem = parse_med_cmr_reply(bad)
        assert verdict is None and why in problem


def test_med_cmr_scoring_refuses_challenge_judge_prompts(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="judge_prompts"):
        med_cmr(
            data=str(med_cmr_release(tmp_path)), open_scoring="med_cmr", judge_prompts=str(tmp_path)
        )
    with pytest.raises(ValueError, match="open_scoring"):
        med_cmr(data=str(med_cmr_release(tmp_path)), open_scoring="paper")


def test_the_release_archive_is_read_and_unpacked_once(tmp_path: Path) -> None:
    archive = med_cmr_zip(tmp_path / "dataset.zip")
    log = run(med_cmr(data=str(archive), track="mcq"), {}, tmp_path)
    assert log.samples is not None and len(log.samples) == 2
    origin = (log.eval.metadata or {})["data_origin"]
    assert origin["kind"] == "local archive" and len(origin["sha256"]) == 64
    assert unpack_archive(archive, "med_cmr") == unpack_archive(archive, "med_cmr")


def test_a_hostile_archive_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "dataset.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("dataset/mcq.json", "[]")
        bundle.writestr("../../escape.json", "[]")
    with pytest.raises(DatasetError, match="outside the folder"):
        med_cmr(data=str(archive))
    assert not (tmp_path.parent / "escape.json").exists()
    (tmp_path / "broken.zip").write_bytes(b"PK not really")
    with pytest.raises(DatasetError, match="not a readable zip"):
        med_cmr(data=str(tmp_path / "broken.zip"))


def test_the_hub_path_downloads_the_archive_at_a_resolved_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = med_cmr_zip(tmp_path / "dataset.zip")
    calls: list[tuple[str, str, str, str]] = []

    def fake_download(repo_id: str, filename: str, repo_type: str, revision: str) -> str:
        calls.append((repo_id, filename, repo_type, revision))
        return str(archive)

    import huggingface_hub

    import inspect_medreason.core.hub as hub

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    monkeypatch.setattr(hub, "resolve_revision", lambda repo, requested: "c0ffee" * 6 + "abcd")
    # No hub id or commit is assumed: the task asks for both before anything is fetched.
    for hub_id, revision in ((None, None), (None, "v1"), ("owner/Med-CMR", None)):
        with pytest.raises(DatasetError, match="pass -T hub_id=<owner/name> and -T revision="):
            med_cmr(track="mcq", hub_id=hub_id, revision=revision)
    assert calls == []
    task = med_cmr(track="mcq", hub_id="owner/Med-CMR", revision="v1")
    assert calls == [("owner/Med-CMR", "dataset.zip", "dataset", "c0ffee" * 6 + "abcd")]
    origin = (task.metadata or {})["data_origin"]
    assert origin["revision_requested"] == "v1" and origin["revision"].startswith("c0ffee")

    def offline(*_: object, **__: object) -> str:
        raise OSError("no network")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", offline)
    with pytest.raises(DatasetError, match="pass -T data=PATH"):
        med_cmr(hub_id="owner/Med-CMR", revision="v1")


def test_reference_reasoning_never_reaches_a_prompt(tmp_path: Path) -> None:
    """The release's visual_description holds the answer in some cases: neither the model
    nor any judge may see it, in any track or scoring."""
    data = str(med_cmr_release(tmp_path / "r"))
    judges = {
        "grader": Judge('{"score": 2, "rationale": "x"}'),
        "vision_grader": Judge('{"score": 2, "rationale": "x"}'),
    }
    for task in (medreason(data=data), med_cmr(data=data)):
        log = run(task, judges, tmp_path)
        assert log.samples is not None
        for sample in log.samples:
            assert sample.metadata.get("reference_reasoning")  # kept for the record only
            for event in sample.events:
                if event.event == "model":
                    assert "LEAKMARK" not in json.dumps(event.model_dump(mode="json")["input"])


def test_record_to_sample_on_a_release_record(tmp_path: Path) -> None:
    """A Med-CMR record becomes a sample as a MedReason case does (the shared adapter)."""
    from inspect_medreason.medreason.dataset import record_to_sample

    loaded = load_cases(med_cmr_release(tmp_path))
    case = next(c for c in loaded.cases if c.case_id == "0")
    sample = record_to_sample(case, loaded.resolved_images["0"])
    assert sample.id == "0" and sample.target == "A"
    assert sample.choices == [
        "Right upper lobe",
        "Left lower lobe",
        "Right middle lobe",
        "Lingula",
        "Left upper lobe",
    ]
    meta = sample.metadata or {}
    assert meta["task"] == "Spatial Understanding" and meta["organ_system"] == "Respiratory System"
    assert "LEAKMARK" not in json.dumps([m.model_dump(mode="json") for m in sample.input])  # type: ignore[union-attr]


def test_records_without_task_still_get_their_breakdowns(tmp_path: Path) -> None:
    """Med-CMR's score is broken down by task: a release (or a user's file) whose records
    name no task must group them as 'unknown', not stop the run's metrics."""
    med_cmr_release(tmp_path)
    write_json(
        tmp_path / "dataset" / MED_CMR_OPEN_FILE,
        [{k: v for k, v in record.items() if k != "task"} for record in MED_CMR_OPEN],
    )
    vision = Judge(
        json.dumps(
            {
                "consistency": 5,
                "coherence": 5,
                "visual_accuracy": 5,
                "ground_truth_correctness": 5,
                "rationale": "x",
            }
        )
    )
    log = run(
        med_cmr(data=str(tmp_path), track="open", open_scoring="med_cmr"),
        {"vision_grader": vision},
        tmp_path,
    )
    assert log.results is not None
    metrics = {(s.name, k): m.value for s in log.results.scores for k, m in s.metrics.items()}
    assert metrics["med_cmr_score", "grouped_task:unknown"] == pytest.approx(50.0)


def test_a_damaged_archive_member_is_a_message_not_a_traceback(tmp_path: Path) -> None:
    archive = med_cmr_zip(tmp_path / "dataset.zip")
    import zipfile

    with zipfile.ZipFile(archive) as bundle:
        [member] = [m for m in bundle.infolist() if m.filename == f"dataset/{MED_CMR_MCQ_FILE}"]
    raw = bytearray(archive.read_bytes())
    start = member.header_offset
    # spoil the member's compressed bytes (after its local header, name and extra field)
    name_length = int.from_bytes(raw[start + 26 : start + 28], "little")
    body = start + 30 + name_length + int.from_bytes(raw[start + 28 : start + 30], "little")
    raw[body : body + 16] = b"\xff" * 16
    archive.write_bytes(bytes(raw))
    with pytest.raises(DatasetError) as refused:
        med_cmr(data=str(archive))
    [problem] = refused.value.problems
    # one line naming the archive, the damaged member and what to do
    assert problem.file == str(archive) and "\n" not in problem.message
    assert f"member 'dataset/{MED_CMR_MCQ_FILE}' is damaged" in problem.message
    assert problem.message.endswith("download the archive again")
    # the interrupted unpack left nothing in the cache
    unpacked = Path(os.environ["INSPECT_MEDREASON_CACHE_DIR"]) / "med_cmr"
    assert not unpacked.exists() or not any(unpacked.iterdir())
