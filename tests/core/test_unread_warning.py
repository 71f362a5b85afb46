"""Issue 59 item 5: a run that leaves over 5% of its replies unread says so, loudly at its end
and in its log (``unread_warning``, the unread forms), and names the remedy."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from conftest import reply_by_question
from inspect_ai import eval
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import get_model

from inspect_medreason.core.unread_warning import UNREAD_WARNING, unread_warning_message
from inspect_medreason.medreason.medreason import mcq


def run(official_dataset: Path, tmp_path: Path, replies: dict[str, str]) -> EvalLog:
    model = get_model("mockllm/model", custom_outputs=reply_by_question(replies))
    [log] = eval(
        mcq(data=str(official_dataset)), model=model, display="none", log_dir=str(tmp_path)
    )
    assert log.status == "success", log.error
    return read_eval_log(str(log.location))  # what the log on disk records


def metrics(log: EvalLog) -> dict[str, float]:
    assert log.results is not None
    [score] = [s for s in log.results.scores if s.name == "mcq_scorer"]
    return {name: m.value for name, m in score.metrics.items()}


def test_a_run_with_many_unread_replies_warns_with_forms_and_remedy(
    official_dataset: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    replies = {
        "(q1)": "ANSWER: A",
        "(q2)": "The answer is A or C.",
        "(q3)": "A fracture line is not visible.",
    }
    with caplog.at_level(logging.WARNING, logger="inspect_medreason.core.unread_warning"):
        log = run(official_dataset, tmp_path, replies)
    recorded = metrics(log)
    assert recorded[UNREAD_WARNING] == 1.0
    assert recorded["unread by form:ambiguous"] == 1.0
    assert recorded["unread by form:unparsed"] == 1.0
    warnings = [r.getMessage() for r in caplog.records if "have no answer" in r.getMessage()]
    assert len(warnings) == 1, warnings  # once, at the end, not at every progress update
    [warning] = warnings
    assert "66.7%" in warning and "(2 of 3)" in warning
    assert "several options given as the answer" in warning
    assert "--model-role extractor=" in warning
    assert unread_warning_message(log) == warning


def test_a_run_that_reads_every_reply_does_not_warn(
    official_dataset: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    replies = {"(q1)": "ANSWER: A", "(q2)": "ANSWER: C", "(q3)": "ANSWER: B"}
    with caplog.at_level(logging.WARNING, logger="inspect_medreason.core.unread_warning"):
        log = run(official_dataset, tmp_path, replies)
    recorded = metrics(log)
    assert recorded[UNREAD_WARNING] == 0.0
    assert not [name for name in recorded if name.startswith("unread by form:")]
    assert not [r for r in caplog.records if "have no answer" in r.getMessage()]
    assert unread_warning_message(log) is None
