"""A signal that lands during the renames into place is held until they are done and then
raised, and the outputs are put back: never one output replaced and the other not, never a
temporary file or backup left. In-process: the signal is sent from inside the first rename,
so it lands exactly there."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from inspect_medreason.core import files
from inspect_medreason.core.files import Interrupted, OutputSet, interruptions_raise


def test_a_signal_during_the_renames_is_held_and_every_output_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a.json", tmp_path / "b.zip"
    first.write_text("old a")
    second.write_text("old b")
    real_replace = os.replace
    renamed: list[Any] = []

    def replace_then_signal(source: Any, target: Any) -> None:
        if not renamed:
            os.kill(os.getpid(), signal.SIGTERM)  # lands between the two renames
        renamed.append(target)
        real_replace(source, target)

    monkeypatch.setattr(files.os, "replace", replace_then_signal)
    with interruptions_raise():
        outputs = OutputSet(force=True)
        outputs.add(first)
        outputs.add(second)
        with pytest.raises(Interrupted):
            outputs.write({first: "new a", second: "new b"})
        assert files.pending_outputs() == [first, second]  # what the message names
    assert len(renamed) >= 2  # both renames ran before the signal was raised
    assert first.read_text() == "old a" and second.read_text() == "old b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.zip"]
    assert signal.getsignal(signal.SIGTERM) is not files._raise_for  # handlers put back
