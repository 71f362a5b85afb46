"""One confinement rule for every command that reads case images from files (the log holds
none): ``medreason rate`` and re-scoring read them from the folder the user names (said
before use; a log names none, and an old log's recorded folder is used alike), each file
checked against the digest recorded at load; never from a folder or a file a sample names. Each test edits a log as an attacker
would, or swaps an image after the run."""

from __future__ import annotations

import base64
import hashlib
import re
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import edit_log_entry, write_png
from inspect_ai.log import read_eval_log
from utils.rated_logs import judged_log

from inspect_medreason.cli import main
from inspect_medreason.core.image_confinement import DIGESTS_KEY
from inspect_medreason.core.images import ImagePathError
from inspect_medreason.medreason.image_folder import NAMED, ImageFolder

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("test_image_confinement")


@pytest.fixture(scope="module")
def unlogged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A judged run of 3 cases written with --no-log-images: rate must read files; beside
    its data folder, an image no case names (``outside.png``), which tests only read."""
    root = tmp_path_factory.mktemp("confined")
    write_png(root / "outside.png", colour=7)
    return judged_log(root, 3, log_images=False)


def embedded_images(page: Path) -> list[bytes]:
    html = page.read_text(encoding="utf-8")
    return [
        base64.b64decode(encoded)
        for encoded in re.findall(r"data:image/[a-z]+;base64,([A-Za-z0-9+/=]+)", html)
    ]


def edit_samples(log: Path, target: Path, edit: Any) -> Path:
    """Every sample entry of the .eval edited by ``edit(metadata)``."""
    import zipfile

    with zipfile.ZipFile(log) as bundle:
        entries = [n for n in bundle.namelist() if n.startswith("samples/")]
    current = log
    for number, entry in enumerate(entries):
        step = target.with_name(f"{target.stem}.{number}.eval")
        edit_log_entry(current, step, entry, lambda sample: edit(sample["metadata"]))
        current = step
    shutil.copy(current, target)
    return target


def rate(
    log: Path, output: Path, capsys: pytest.CaptureFixture[str], *extra: str
) -> tuple[int, str]:
    code = main(["rate", str(log), "--output", str(output), "--cases", "3", *extra])
    return code, capsys.readouterr().err


def test_the_named_folder_is_said_before_use_and_its_files_checked(
    unlogged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = unlogged.parent.parent / "data"
    # the log names no folder: without --data nothing is read, and the message says so
    code, err = rate(unlogged, tmp_path / "page.html", capsys)
    assert code == 1 and not (tmp_path / "page.html").exists()
    assert "name the data folder with --data" in err
    code, err = rate(unlogged, tmp_path / "page.html", capsys, "--data", str(data))
    assert code == 0, err
    assert f"case images not held in the logs are read from {data} (named with --data)" in err
    shown = embedded_images(tmp_path / "page.html")
    assert len(shown) == 3 and all(image.startswith(b"\x89PNG") for image in shown)
    recorded = read_eval_log(str(unlogged)).samples
    assert recorded and all(
        s.metadata[DIGESTS_KEY] == [hashlib.sha256((data / p).read_bytes()).hexdigest()]
        for s in recorded
        for p in s.metadata["image_paths"]
    )


@pytest.mark.parametrize(
    "edit",
    [
        # the edit: the sample's folder is "/" and its image a system file
        {"data_dir": "/", "image_paths": ["etc/hostname"]},
        # the same with an image, that would show (the folder above the run's data)
        {"data_dir": "OUTSIDE", "image_paths": ["outside.png"]},
        # the sample's folder left alone, its path climbing out of the run's folder
        {"image_paths": ["../../../../../../../etc/hostname"]},
        # an image outside the data folder, its digest edited to match
        {"image_paths": ["../outside.png"], "digest": "outside"},
        # the digests removed, so that nothing can be checked
        {"image_paths": ["../outside.png"], "digest": None},
    ],
)
def test_an_edited_log_never_puts_an_outside_file_on_the_page(
    unlogged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: dict[str, Any]
) -> None:
    outside = unlogged.parent.parent / "outside.png"
    outside_digest = hashlib.sha256(outside.read_bytes()).hexdigest()

    def hostile(metadata: dict[str, Any]) -> None:
        for key in ("data_dir", "image_paths"):
            if key in edit:
                metadata[key] = edit[key]
        if metadata.get("data_dir") == "OUTSIDE":
            metadata["data_dir"] = str(outside.parent)
        if "digest" in edit:
            if edit["digest"] is None:
                metadata.pop(DIGESTS_KEY, None)
            else:
                metadata[DIGESTS_KEY] = [outside_digest]

    log = edit_samples(unlogged, tmp_path / "edited.eval", hostile)
    page = tmp_path / "page.html"
    code, err = rate(log, page, capsys, "--data", str(unlogged.parent.parent / "data"))
    assert code == 1 and not page.exists()
    assert "a rater must see the images the judges saw" in err
    assert err.count("its image cannot be shown") == 3  # every case named
    assert not list(tmp_path.glob("page*"))


def test_an_image_swapped_after_the_run_is_refused_and_data_names_the_right_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = judged_log(tmp_path, 3, log_images=False)
    data = tmp_path / "data"
    keep = tmp_path / "kept"
    shutil.copytree(data, keep)
    swapped = data / "images" / "i1.png"
    write_png(swapped, colour=3)  # another image under the same name
    code, err = rate(log, tmp_path / "page.html", capsys, "--data", str(data))
    assert code == 1 and not (tmp_path / "page.html").exists()
    assert "is not the file the run loaded (its SHA-256 differs" in err
    swapped.unlink()  # a symbolic link out of the folder: refused before it is read
    swapped.symlink_to(write_png(tmp_path / "elsewhere.png", colour=3))
    code, err = rate(log, tmp_path / "page.html", capsys, "--data", str(data))
    assert code == 1 and not (tmp_path / "page.html").exists()
    assert "images/i1.png" in err and "a rater must see the images the judges saw" in err
    code, err = rate(log, tmp_path / "page.html", capsys, "--data", str(keep))
    assert code == 0, err
    assert f"read from {keep} (named with --data)" in err
    assert len(embedded_images(tmp_path / "page.html")) == 3


def test_rescoring_checks_each_file_against_its_digest(tmp_path: Path) -> None:
    image = write_png(tmp_path / "one.png", colour=90)
    digest = hashlib.sha256(image.read_bytes()).hexdigest()
    folder = ImageFolder(str(tmp_path), NAMED)

    def state(**metadata: Any) -> Any:
        return SimpleNamespace(metadata={"image_paths": ["one.png"], **metadata})

    # the file to send is the one checked: the bytes read once, kept under their digest
    [sent] = folder.files(state(**{DIGESTS_KEY: [digest]}))
    assert sent.read_bytes() == image.read_bytes() and digest in sent.name
    with pytest.raises(ImagePathError, match="no digest"):
        folder.files(state())
    write_png(image, colour=91)  # the file changed since the run loaded it
    with pytest.raises(ImagePathError, match="not the file the run loaded"):
        folder.files(state(**{DIGESTS_KEY: [digest]}))


def test_an_old_log_gives_the_folder_its_run_recorded(
    unlogged: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A log written before logs named no local path recorded its data folder in its
    header (``data.data_dir``) and each sample's: rate still reads it with no --data, each
    file checked by digest; a sample recording another folder is refused."""
    data = unlogged.parent.parent / "data"

    def old_header(header: dict[str, Any]) -> None:
        header["eval"]["metadata"]["data"]["data_dir"] = str(data)

    old = edit_log_entry(unlogged, tmp_path / "header.eval", "header.json", old_header)
    old = edit_samples(old, tmp_path / "old.eval", lambda m: m.update(data_dir=str(data)))
    code, err = rate(old, tmp_path / "page.html", capsys)
    assert code == 0, err
    assert f"read from {data} (the folder the run recorded in {old})" in err
    assert len(embedded_images(tmp_path / "page.html")) == 3
    elsewhere = edit_samples(
        old, tmp_path / "elsewhere.eval", lambda m: m.update(data_dir=str(tmp_path))
    )
    code, err = rate(elsewhere, tmp_path / "other.html", capsys)
    assert code == 1 and err.count("its image cannot be shown") == 3
    assert f"records the data folder {str(tmp_path)!r}" in err
