"""``medreason check-data`` on a data folder whose name is not UTF-8: a message naming the
path and what to do, a non-zero exit, no traceback."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from utils.published_schemas import med_cmr_release

from inspect_medreason.cli import main
from inspect_medreason.core.loaders import sample_data_dir


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses names that are not UTF-8")
@pytest.mark.parametrize("layout", ["challenge", "med_cmr"])
def test_a_data_folder_name_that_is_not_utf8_is_a_message(
    tmp_path: Path, layout: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A Latin-1 name, as an old archive tool leaves it: byte 0xE9 is no UTF-8 text.
    folder = Path(os.fsdecode(bytes(tmp_path) + b"/donn\xe9es"))
    if layout == "challenge":
        shutil.copytree(sample_data_dir(), folder, ignore=shutil.ignore_patterns("*.py"))
    else:
        med_cmr_release(folder)
    # as a shell passes it: the raw bytes in argv, decoded by Python with surrogateescape
    assert main(["check-data", str(folder)]) == 1
    error = capsys.readouterr().err
    assert "Traceback" not in error
    [line] = [line for line in error.splitlines() if "not UTF-8" in line]
    assert "donn\\xe9es" in line and "rename the folder" in line
