"""Tests leave the user's logs alone: Inspect's default log folder is a temporary one for
the whole session, and a test that writes a log outside its own temporary folders fails."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conftest import USER_LOG_DIRS, log_folder_entries
from inspect_ai import eval

from inspect_medreason import mcq


def test_an_eval_without_log_dir_lands_in_the_sessions_folder_not_the_users(
    session_log_dir: Path, tmp_path: Path
) -> None:
    assert Path(os.environ["INSPECT_LOG_DIR"]) == session_log_dir
    assert session_log_dir.resolve() not in USER_LOG_DIRS
    before = log_folder_entries(session_log_dir)
    [log] = eval(mcq(), model="mockllm/model", limit=1, display="none")
    assert log.status == "success"
    written = set(log_folder_entries(session_log_dir)) - set(before)
    assert len(written) == 1 and written.pop().endswith(".eval")
    # moved away, or the guard below rightly fails this test too
    for name in set(log_folder_entries(session_log_dir)) - set(before):
        shutil.move(session_log_dir / name, tmp_path / name)
    assert log_folder_entries(session_log_dir) == before


def test_the_guard_sees_a_log_written_or_rewritten(tmp_path: Path) -> None:
    assert log_folder_entries(tmp_path / "missing") == {}
    log = tmp_path / "sub" / "run.eval"
    log.parent.mkdir()
    log.write_bytes(b"x")
    first = log_folder_entries(tmp_path)
    assert set(first) == {"sub/run.eval"}
    os.utime(log, ns=(1, 1))
    assert log_folder_entries(tmp_path) != first
