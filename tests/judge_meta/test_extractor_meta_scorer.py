"""extractor_meta_scorer on its own: a probe the extractor reads as known scores 1, one it
misreads 0, and one it cannot answer is unscored with the reason (never a zero)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from conftest import scripted_output, user_text
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset
from inspect_ai.model import ChatMessage, ModelOutput, get_model

from inspect_medreason.judge_meta.extractor_meta import (
    build_extractor_probes,
    extractor_meta_scorer,
    extractor_probes,
)


def test_extractor_meta_scorer_scores_reads_and_leaves_a_failure_unscored(tmp_path: Path) -> None:
    right, wrong, failing = [p for p in extractor_probes() if p["reading"]][:3]
    assert len({right["id"], wrong["id"], failing["id"]}) == 3

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        if right["reply"] in text:
            return scripted_output(json.dumps({"chosen_option": right["reading"]}))
        if wrong["reply"] in text:
            other = next(label for label, _ in wrong["options"] if label != wrong["reading"])
            return scripted_output(json.dumps({"chosen_option": other}))
        return scripted_output("I will not answer in JSON.")

    chosen = {right["id"], wrong["id"], failing["id"]}
    dataset = MemoryDataset([s for s in build_extractor_probes() if s.id in chosen])
    [log] = eval(
        Task(dataset=dataset, solver=[], scorer=extractor_meta_scorer(), model="none/none"),
        model_roles={"extractor": get_model("mockllm/model", custom_outputs=respond)},
        display="none",
        log_dir=str(tmp_path),
    )
    assert log.status == "success", log.error
    assert log.samples is not None
    scores = {s.id: s.scores["extractor_meta_scorer"] for s in log.samples if s.scores}
    assert scores[right["id"]].value == 1.0
    assert scores[wrong["id"]].value == 0.0
    unscored = scores[failing["id"]]
    assert isinstance(unscored.value, float) and math.isnan(unscored.value)
    assert str(unscored.reason).startswith("the extractor failed")
