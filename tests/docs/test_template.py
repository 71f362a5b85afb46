"""The folder a contributor copies to add a benchmark (templates/new_benchmark) is a working
benchmark: copied into a package, its task reads small files in a published layout and runs
end to end; with no data and no verified commit it asks for one instead of guessing."""

from __future__ import annotations

import importlib
import shutil
from pathlib import Path
from typing import Any

import datasets
import pytest
import yaml
from conftest import scripted_output, user_text
from inspect_ai import eval
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from PIL import Image

from inspect_medreason.core.loaders import DatasetError

TEMPLATE = Path(__file__).resolve().parents[2] / "templates" / "new_benchmark"


def test_the_template_runs_end_to_end_on_a_published_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(TEMPLATE, tmp_path / "packages" / "new_benchmark")
    monkeypatch.syspath_prepend(str(tmp_path / "packages"))
    module: Any = importlib.import_module("new_benchmark")
    snapshot = tmp_path / "data"
    (snapshot / "data").mkdir(parents=True)
    for split, answers in (("train", ["no"]), ("test", ["yes", "no", "liver"])):
        datasets.Dataset.from_dict({
            "image": [Image.new("L", (6, 6), 40 * i) for i in range(len(answers))],
            "question": [f"{split} question {i}?" for i in range(len(answers))],
            "answer": answers,
        }).cast_column("image", datasets.Image()).to_parquet(
            str(snapshot / "data" / f"{split}-00000-of-00001-0123abcd.parquet")
        )  # fmt: skip

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        assert "End your reply with a line" in text  # the template's prompt file was used
        return scripted_output(
            "Looking at it.\nANSWER: yes"
            if "question 0" in text
            else "I cannot tell.\nThe image is too small."
        )

    task = module.new_benchmark(data=str(snapshot))
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=respond),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    assert log.samples is not None and len(log.samples) == 3  # the test split only
    assert log.results is not None
    assert log.results.scores[0].metrics["accuracy"].value == pytest.approx(1 / 3)
    explanations = {s.scores["new_benchmark_scorer"].explanation for s in log.samples if s.scores}
    assert any(e and e.startswith("no answer:") for e in explanations)
    assert log.eval.metadata is not None and log.eval.metadata["split"] == "test"
    from inspect_evals.metadata import InternalEvalMetadata

    metadata = yaml.safe_load((TEMPLATE / "eval.yaml").read_text(encoding="utf-8"))
    InternalEvalMetadata.model_validate(metadata)  # inspect_evals' own model accepts it
    version = metadata["version"]
    assert log.eval.task_version == version
    with pytest.raises(DatasetError, match=r"pass -T revision=<commit id>"):
        module.new_benchmark()
