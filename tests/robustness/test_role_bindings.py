"""A bad binding of the judge roles is refused before any model is called, in one line,
by every judged task, whichever way the eval is started: here Python's ``eval()``; the
task's set-up step reads the roles Inspect bound, so the command line's flags and their
environment forms are checked the same way (tests/robustness/test_user_errors.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import scripted_output
from inspect_ai import Task, eval
from inspect_ai.model import Model, ModelOutput, get_model
from utils.published_schemas import (
    cmb_clin_file,
    gemex_folder,
    med_cmr_release,
    path_vqa_snapshot,
    slake_snapshot,
    vqa_rad_parquet,
)

from inspect_medreason import (
    cmb_clin,
    gemex,
    judge_meta,
    med_cmr,
    medreason,
    medreason_vqa_rad,
    open_ended,
    path_vqa,
    slake,
)


class CountingModel:
    """A scripted model that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, *_: Any) -> ModelOutput:
        self.calls += 1
        return scripted_output('{"score": 3, "rationale": "ok"}')

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self, memoize=False)


# task builder, and whether its judges may be panels (then a panel given both ways is bad)
TASKS: dict[str, tuple[Callable[[Path], Task], bool]] = {
    "open_ended": (lambda _: open_ended(), True),
    "medreason": (lambda _: medreason(), True),
    "med_cmr": (lambda root: med_cmr(data=str(med_cmr_release(root / "cmr")), track="open"), True),
    "cmb_clin": (lambda root: cmb_clin(data=str(cmb_clin_file(root / "clin.json"))), False),
    "medreason_vqa_rad": (
        lambda root: medreason_vqa_rad(data=str(vqa_rad_parquet(root / "rad"))),
        False,
    ),
    "path_vqa": (lambda root: path_vqa(data=str(path_vqa_snapshot(root / "path"))), False),
    "slake": (lambda root: slake(data=str(slake_snapshot(root / "slake"))), False),
    "gemex": (lambda root: gemex(data=str(gemex_folder(root / "gemex"))), False),
    "judge_meta": (lambda _: judge_meta(), False),
}


@pytest.mark.parametrize("name", sorted(TASKS))
def test_a_bad_role_binding_stops_the_run_before_any_model_call(name: str, tmp_path: Path) -> None:
    build, panels = TASKS[name]
    tested, judges = CountingModel(), [CountingModel() for _ in range(4)]
    roles: dict[str, Any] = {
        "grader": [judges[0].model(), judges[1].model()],
        "vision_grader": judges[2].model(),
    }
    if panels:  # a list is a panel here: giving grader_2 as well is the mistake
        roles["grader_2"] = judges[3].model()
    [log] = eval(
        build(tmp_path),
        model=tested.model(),
        model_roles=roles,
        limit=2,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "error" and log.error is not None
    message = log.error.message
    expected = "give the panel one way" if panels else "is bound to 2 models"
    assert expected in message and "\n" not in message.strip(), message
    assert tested.calls == 0 and [judge.calls for judge in judges] == [0, 0, 0, 0]
