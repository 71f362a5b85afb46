"""Reading logged samples for the command line: the direct read of an .eval zip gives
exactly what Inspect's readers give, and any log it does not recognise goes to them."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import edit_log_entry, scripted_output, user_text
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from inspect_ai.scorer import Score, includes
from inspect_ai.solver import generate

import inspect_medreason.analysis.logs as log_reading
from inspect_medreason.analysis.export import _judge_row, export_results, judge_scores_from_logs
from inspect_medreason.analysis.logs import (
    LoggedSample,
    UnreadableSample,
    absent_samples,
    header_sample_keys,
    log_header,
    logged_samples,
)
from inspect_medreason.cli import main
from inspect_medreason.medreason.medreason import mcq


def _reply(messages: list[ChatMessage], *_: Any) -> ModelOutput:
    text = user_text(messages)
    if "fail" in text:
        raise RuntimeError("the provider refused this case")
    if "empty" in text:
        # no completion text: Inspect fills it from the first choice's message
        output = scripted_output("from the choice")
        output.completion = ""
        return output
    return scripted_output(f"reply to {text}")


def _run(tmp_path: Path, ids: list[int | str], epochs: int = 2) -> EvalLog:
    task = Task(
        dataset=[
            Sample(
                id=sample_id,
                input=f"case {sample_id}",
                target=f"case {sample_id}",
                metadata={"task_type": "mcq", "n": i},
            )
            for i, sample_id in enumerate(ids)
        ],
        solver=generate(),
        scorer=includes(),
        epochs=epochs,
    )
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=_reply),
        display="none",
        log_dir=str(tmp_path / "logs"),
        fail_on_error=False,
    )
    assert log.status == "success", log.error
    return log


def _mcq_log(data: Path, tmp_path: Path) -> Path:
    [log] = eval(
        mcq(data=str(data)),
        model=get_model("mockllm/model", custom_outputs=lambda *_: scripted_output("ANSWER: A")),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return Path(log.location)


def _inspect_read(path: Path, header: EvalLog) -> list[LoggedSample]:
    keys = header_sample_keys(header)
    return [_readable(s) for s in log_reading._inspect_samples(path, keys)]


def _readable(sample: Any) -> LoggedSample:
    if isinstance(sample, UnreadableSample):
        raise AssertionError(sample.describe())
    return sample if isinstance(sample, LoggedSample) else LoggedSample.from_eval_sample(sample)


def _no_inspect_reader(*_: Any) -> Iterator[Any]:
    raise AssertionError("the direct reader should have read this log")


def test_direct_read_equals_inspect_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Integer and string ids (with spaces and dots), two epochs, scores, a failed sample
    and a reply whose completion Inspect fills from its choice: the same records, in the
    dataset's order."""
    ids: list[int | str] = [3, "b case", "fail.1", 1, "empty"]
    log = _run(tmp_path, ids)
    path = Path(log.location)
    header = read_eval_log(str(path), header_only=True)
    expected = _inspect_read(path, header)
    with monkeypatch.context() as patch:
        patch.setattr(log_reading, "_inspect_samples", _no_inspect_reader)
        direct = [_readable(sample) for sample in logged_samples(path, header)]
    assert direct == expected
    assert [(s.id, s.epoch) for s in direct] == [(i, e) for i in ids for e in (1, 2)]
    failed = [s for s in direct if s.id == "fail.1"]
    assert failed and all("refused" in (s.error or "") for s in failed)
    assert {s.completion for s in direct if s.id == "empty"} == {"from the choice"}
    assert direct[0].metadata == {"task_type": "mcq", "n": 0}
    assert direct[0].scores["includes"].value == "C" and not failed[0].scores


def test_a_json_log_is_read_by_inspect(tmp_path: Path) -> None:
    log = _run(tmp_path, ["a", "b"], epochs=1)
    json_log = tmp_path / "log.json"
    write_eval_log(log, str(json_log), format="json")
    header = read_eval_log(str(json_log), header_only=True)
    assert log_reading._zip_entries(json_log, header_sample_keys(header)) is None
    assert [s.id for s in logged_samples(json_log, header)] == ["a", "b"]


def _rewrite(source: Path, target: Path, change: dict[str, str | None]) -> None:
    """Copy an .eval zip, renaming (or dropping, for None) the entries named in change."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            name = change.get(info.filename, info.filename)
            if name is not None:
                new.writestr(name, old.read(info.filename), compress_type=zipfile.ZIP_DEFLATED)


def test_entries_named_otherwise_go_to_inspect(tmp_path: Path) -> None:
    """A sample entry the header does not name (another naming scheme) must not be
    skipped silently: the whole log is left to Inspect's reader."""
    log = _run(tmp_path, ["a", "b"], epochs=1)
    renamed = tmp_path / "renamed.eval"
    _rewrite(Path(log.location), renamed, {"samples/b_epoch_1.json": "samples/b-1.json"})
    header = read_eval_log(str(renamed), header_only=True)
    assert log_reading._zip_entries(renamed, header_sample_keys(header)) is None


def test_an_entry_holding_another_sample_is_refused(official_dataset: Path, tmp_path: Path) -> None:
    swapped = tmp_path / "swapped.eval"
    _rewrite(
        _mcq_log(official_dataset, tmp_path),
        swapped,
        {
            "samples/q1_epoch_1.json": "samples/q2_epoch_1.json",
            "samples/q2_epoch_1.json": "samples/q1_epoch_1.json",
        },
    )
    header = read_eval_log(str(swapped), header_only=True)
    with pytest.raises(ValueError, match="holds sample"):
        list(logged_samples(swapped, header))
    report = export_results([swapped])
    assert report.submission.answers == []
    assert any("cannot be read" in problem for problem in report.problems)


@pytest.mark.parametrize("edit", ["dropped", "renamed"])
def test_a_finished_run_missing_a_sample_is_refused_not_shrunk(
    official_dataset: Path, tmp_path: Path, edit: str
) -> None:
    """A successful run writes every case its header lists: a file without one of them is
    damaged or edited, and export and judge-scores say which case, instead of writing one
    answer fewer."""
    log = read_eval_log(str(_mcq_log(official_dataset, tmp_path)))
    assert log.status == "success" and log.samples is not None
    if edit == "dropped":
        log.samples = [sample for sample in log.samples if sample.id != "q2"]
    else:  # an id changed by hand: the header's q2 is gone, an unknown id appears
        log.samples[1].id = "q2-edited"
    edited = tmp_path / f"{edit}.eval"
    write_eval_log(log, str(edited))
    header = read_eval_log(str(edited), header_only=True)
    assert header.status == "success"
    read = {(sample.id, sample.epoch) for sample in logged_samples(edited, header)}
    assert absent_samples(header, read) == [("q2", 1)]
    report = export_results([edited])
    assert [answer.case_id for answer in report.submission.answers] == ["q1", "q3"]
    assert any(
        "case 'q2' (epoch 1): the log's header lists it but the file holds no sample" in problem
        for problem in report.problems
    ), report.problems
    out = tmp_path / "results.json"
    assert main(["export", str(edited), "--output", str(out)]) == 1 and not out.exists()
    _, left_out, _ = judge_scores_from_logs([edited])
    assert any("case 'q2' (epoch 1)" in note for note in left_out)
    # an unfinished run's absent cases are expected: its status already says so
    header.status = "error"
    assert absent_samples(header, read) == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("options", "garbage"),
        ("options", [{"label": 1}, None]),
        ("label_map", ["A"]),
        ("option_labels", ["A"]),
        ("option_labels", "ABC"),
        ("option_labels", [1, 2, 3]),
    ],
)
def test_an_edited_sample_is_named_with_its_field(
    official_dataset: Path, tmp_path: Path, field: str, value: Any
) -> None:
    log = read_eval_log(str(_mcq_log(official_dataset, tmp_path)))
    assert log.samples is not None
    log.samples[1].metadata[field] = value
    edited = tmp_path / "edited.eval"
    write_eval_log(log, str(edited))
    report = export_results([edited])
    assert [answer.case_id for answer in report.submission.answers] == ["q1", "q3"]
    assert (
        len(report.problems) == 1
        and f"case 'q2': its logged field 'metadata.{field}'" in report.problems[0]
    )


def test_a_corrupt_entry_is_reported_not_read(official_dataset: Path, tmp_path: Path) -> None:
    """A changed byte in a sample's entry fails the zip's checksum: the export reports
    the log, never a half-read or altered sample."""
    broken = tmp_path / "broken.eval"
    with (
        zipfile.ZipFile(_mcq_log(official_dataset, tmp_path)) as old,
        zipfile.ZipFile(broken, "w") as new,
    ):
        for info in old.infolist():
            # stored uncompressed, so the reply's text can be found and changed below
            new.writestr(info.filename, old.read(info.filename), compress_type=zipfile.ZIP_STORED)
    raw = bytearray(broken.read_bytes())
    at = raw.find(b"ANSWER: A")
    assert at > 0
    raw[at + 8] = ord("B")
    broken.write_bytes(bytes(raw))
    header = read_eval_log(str(broken), header_only=True)
    with pytest.raises(zipfile.BadZipFile):
        list(logged_samples(broken, header))
    report = export_results([broken])
    assert report.submission.answers == []
    assert any("cannot be read (BadZipFile: Bad CRC-32" in problem for problem in report.problems)
    document, left_out, _ = judge_scores_from_logs([broken])
    assert document == {"scores": []}
    assert any("cannot be read (BadZipFile: Bad CRC-32" in note for note in left_out)


def test_an_oversized_entry_is_refused_before_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _run(tmp_path, ["q1"], epochs=1)
    header = read_eval_log(log.location, header_only=True)
    monkeypatch.setattr(log_reading, "MAX_ENTRY_BYTES", 100)
    with pytest.raises(ValueError, match=r"declares .* bytes; refused"):
        list(logged_samples(Path(log.location), header))


def test_header_read_alone_equals_inspects_header(tmp_path: Path) -> None:
    """The header without the per-sample reductions, otherwise what Inspect reads; a log
    without header.json (a run still going) and a damaged one are Inspect's to read."""
    log = _run(tmp_path, [1, "b"], epochs=2)
    path = Path(log.location)
    inspect_header = read_eval_log(str(path), header_only=True)
    assert inspect_header.reductions  # what the direct read leaves out
    ours = log_header(path)
    assert ours.reductions is None and ours.location == str(path)
    assert ours.model_dump(exclude={"reductions"}) == inspect_header.model_dump(
        exclude={"reductions"}
    )
    journal_only = tmp_path / "running.eval"
    _rewrite(path, journal_only, {"header.json": None})
    assert log_header(journal_only) == read_eval_log(str(journal_only), header_only=True)
    assert log_header(journal_only).status == "started"
    damaged = tmp_path / "damaged.eval"
    with zipfile.ZipFile(path) as old, zipfile.ZipFile(damaged, "w") as new:
        for info in old.infolist():
            data = b"{not json" if info.filename == "header.json" else old.read(info.filename)
            new.writestr(info.filename, data)
    with pytest.raises(ValueError):  # Inspect's own error, not a silently empty header
        log_header(damaged)


def test_no_medreason_log_is_a_refusal(tmp_path: Path) -> None:
    """Unreadable files, a zip that is not a log and a log of another task: export refuses
    to write an empty submission (without --force) and judge-scores writes nothing."""
    (tmp_path / "junk.eval").write_text("junk", encoding="utf-8")
    with zipfile.ZipFile(tmp_path / "zip.eval", "w") as archive:
        archive.writestr("samples/x_epoch_1.json", "{}")
    _run(tmp_path / "other", ["a"], epochs=1)
    out, scores = tmp_path / "results.json", tmp_path / "judge_scores.json"
    assert main(["export", str(tmp_path), "--output", str(out)]) == 1 and not out.exists()
    assert main(["judge-scores", str(tmp_path), "--output", str(scores)]) == 1
    assert not scores.exists()
    report = export_results([tmp_path / "junk.eval"])
    assert any("nothing to export" in problem for problem in report.problems)


def test_unscored_reasons_survive_a_hostile_judges_record() -> None:
    """An edited log may hold anything where the judges' records should be: the case is
    left out with an unknown reason, never a traceback."""
    for judges in (
        "garbage",
        {"gt_final": "not a record"},
        None,
        {"gt_final": {"failure": "timeout"}},
    ):
        sample = LoggedSample(
            id="c1",
            epoch=1,
            scores={
                "open_ended_scorer": Score(
                    value={"gt_final": float("nan"), "va_answer": 3.0, "rvf_trace": 3.0},
                    metadata={"judges": judges},
                )
            },
        )
        row, why = _judge_row("c1", sample, Path("log.eval"))
        assert row is None and why.startswith("c1: unscored gt_final")
        assert ("timeout" in why) == (judges == {"gt_final": {"failure": "timeout"}})


@pytest.mark.parametrize("value", [True, 7.0, -1, 4.5, 3.5])
def test_a_score_no_judge_gives_is_never_written(value: float) -> None:
    sample = LoggedSample(
        id="c1",
        epoch=1,
        scores={
            "open_ended_scorer": Score(
                value={"gt_final": value, "va_answer": 3.0, "rvf_trace": 3.0}
            )
        },
    )
    row, why = _judge_row("c1", sample, Path("log.eval"))
    if value == 3.5:  # within 0-4 (a panel's mean can be fractional): written as it is
        assert row is not None and row["gt_final"] == 3.5 and why == ""
        return
    reason = "is not a number" if value is True else "is outside its scale 0-4"
    assert row is None and why == (
        f"log.eval: case 'c1': gt_final={value!r} {reason}: left out (an edited or foreign file?)"
    )


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda d: d["scores"]["mcq_scorer"].update(answer=-1), "scores.mcq_scorer.answer"),
        (lambda d: d["scores"].update(mcq_scorer="correct"), "scores.mcq_scorer"),
        (lambda d: d.update(scores=["C"]), "scores"),
        (lambda d: d.update(metadata=5), "metadata"),
        (lambda d: d.update(output="ANSWER: B"), "output"),
        (lambda d: d["output"].update(choices=7), "output.choices"),
        (lambda d: d.update(error={"message": None}), "error.message"),
        (b"{not json", "(entry)"),
        (b'"a string"', "(entry)"),
        (b'{"id": "q2", "epoch": 1, "metadata": ' + DEEP.encode() + b"}", "(entry)"),
    ],
)
def test_a_sample_with_an_unreadable_field_is_named_and_the_others_read(
    official_dataset: Path, tmp_path: Path, edit: Any, field: str
) -> None:
    """An edited sample entry (a wrong type, a value that is not JSON, nesting past the
    parser's limit) no longer takes the whole log down: the readers name the case and the
    field, and read every other sample. Export refuses the log (a case would be missing)."""
    edited = edit_log_entry(
        _mcq_log(official_dataset, tmp_path),
        tmp_path / "edited.eval",
        "samples/q2_epoch_1.json",
        edit,
    )
    header = log_header(edited)
    samples = list(logged_samples(edited, header))
    assert [(s.id, type(s).__name__) for s in samples] == [
        ("q1", "LoggedSample"),
        ("q2", "UnreadableSample"),
        ("q3", "LoggedSample"),
    ]
    unreadable = samples[1]
    assert isinstance(unreadable, UnreadableSample) and unreadable.field == field
    named = f"case 'q2' (epoch 1): its logged field {field!r} cannot be read"
    report = export_results([edited])
    assert [answer.case_id for answer in report.submission.answers] == ["q1", "q3"]
    assert report.problems == [f"{edited}: {unreadable.describe()}"] and named in report.problems[0]
    assert len(report.problems[0]) < 400  # bounded, whatever the entry holds
    out = tmp_path / "results.json"
    assert main(["export", str(edited), "--output", str(out)]) == 1 and not out.exists()
    _, left_out, _ = judge_scores_from_logs([edited])
    assert left_out == [f"{edited}: {unreadable.describe()}"]


def test_a_json_log_with_an_invalid_sample_is_refused_whole_with_its_fields(
    tmp_path: Path,
) -> None:
    """Inspect validates a .json log whole, so no sample of it can be read on its own: the
    log is refused, naming each invalid field, and no sample is blamed for another's."""
    log = _run(tmp_path, ["a", "b", "c"], epochs=1)
    json_log = tmp_path / "log.json"
    write_eval_log(log, str(json_log), format="json")
    document = json.loads(json_log.read_text(encoding="utf-8"))
    document["samples"][1]["metadata"] = 5
    json_log.write_text(json.dumps(document), encoding="utf-8")
    header = log_header(json_log)
    with pytest.raises(ValueError, match=r"samples\.1\.metadata"):
        list(logged_samples(json_log, header))


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("extraction",), -1, "eval.metadata.extraction"),
        (("data", "cases_sha256"), ["x"], "eval.metadata.data.cases_sha256"),
        (("prompts", "mcq_user"), "edited", "eval.metadata.prompts.mcq_user"),
        (("shuffle_seed",), {"a": 1}, "eval.metadata.shuffle_seed"),
    ],
)
def test_an_edited_run_record_is_refused_naming_its_field(
    official_dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    path: tuple[str, ...],
    value: Any,
    field: str,
) -> None:
    """The header's record of a run's choices decides which runs combine: a field of the
    wrong type leaves the log out (leaderboard, export) or refuses it (compare), naming the
    field, instead of a traceback."""
    log = _mcq_log(official_dataset, tmp_path)

    def edit(header: dict[str, Any]) -> None:
        record = header["eval"]["metadata"]
        for key in path[:-1]:
            record = record[key]
        record[path[-1]] = value

    edited = edit_log_entry(log, tmp_path / "edited.eval", "header.json", edit)
    assert main(["leaderboard", str(edited), "--format", "json"]) == 1
    assert (
        f"edited.eval: skipped, its run record cannot be read: {field}:" in capsys.readouterr().err
    )
    out = tmp_path / "results.json"
    assert main(["export", str(edited), "--output", str(out)]) == 1 and not out.exists()
    assert f"its run record cannot be read: {field}:" in capsys.readouterr().err
    assert main(["compare", str(log), str(edited)]) == 1
    assert f"its run record cannot be read: {field}:" in capsys.readouterr().err


def test_an_mcq_sample_without_options_is_named(official_dataset: Path, tmp_path: Path) -> None:
    log = read_eval_log(str(_mcq_log(official_dataset, tmp_path)))
    assert log.samples is not None
    log.samples[1].choices = None
    edited = tmp_path / "edited.eval"
    write_eval_log(log, str(edited))
    report = export_results([edited])
    assert [answer.case_id for answer in report.submission.answers] == ["q1", "q3"]
    assert report.problems == [
        f"{edited}: case 'q2': its logged field 'choices' is empty: the "
        "case's options are missing (an edited or foreign log?); re-run the case"
    ]


def test_a_log_from_before_option_labels_exports_the_same(
    official_dataset: Path, tmp_path: Path
) -> None:
    """Logs written before 2026-11-23 carry each MCQ sample's options in metadata (and the
    image cluster beside the image paths): they read as they always did."""
    path = _mcq_log(official_dataset, tmp_path)
    log = read_eval_log(str(path))
    assert log.samples is not None
    for sample in log.samples:
        labels = sample.metadata.get("option_labels") or "ABCDEFGH"
        sample.metadata["options"] = [
            {"label": label, "text": text}
            for label, text in zip(labels, sample.choices or [], strict=False)
        ]
        sample.metadata["image_cluster"] = "|".join(sample.metadata.get("image_paths", []))
        sample.choices = None
    old = tmp_path / "old.eval"
    write_eval_log(log, str(old))
    assert export_results([old]).submission == export_results([path]).submission
    assert export_results([old]).problems == []
