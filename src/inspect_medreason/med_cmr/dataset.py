"""Where the Med-CMR release is read from: a local copy (its JSON/JSONL records, the folder
of the unzipped ``dataset.zip``, or the zip itself) or the archive on the Hugging Face hub.

The release is one ``dataset.zip`` (records in the released layout — ``index``, ``question``,
``image_path``, ``answer``, ``visual_description``, ``task``, ``subtype``, ``"question type"``,
``modality``, ``"organ system"`` and options ``A``-``E`` — plus the images), not a table
``datasets`` can read: the hub path downloads that file at a resolved commit with
``huggingface_hub`` (the library ``datasets`` itself downloads with) and unpacks it into the
cache. Each record becomes a sample exactly as a MedReason case does
(``inspect_medreason.medreason.dataset.record_to_sample``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_medreason.core.archives import unpack_archive
from inspect_medreason.core.files import file_sha256
from inspect_medreason.core.loaders import DatasetError, Problem, refuse_non_utf8_path
from inspect_medreason.core.log_paths import path_for_log

# The paper's project page is github.com/LsmnBmnc/Med-CMR; the hub dataset holding the
# release could not be checked against the hub's own record from here (one public manifest
# names aaassddaadf/Med-CMR at a9b2d6e610c6c5dcf4f3e5aa89c7ec9fd7a05b73: see the README). So
# the task names none: the user gives -T hub_id= and -T revision=, or the local release.
MED_CMR_HUB_ID: str | None = None
MED_CMR_ARCHIVE = "dataset.zip"
# As the dataset card states it; the challenge's own data built on it is CC BY-NC 4.0.
MED_CMR_LICENCE = "Apache-2.0 (as the dataset card declares)"


def _problem(source: str, message: str) -> DatasetError:
    return DatasetError([Problem(source, "-", "data", message)])


def download_release(hub_id: str | None, revision: str | None) -> tuple[Path, dict[str, Any]]:
    """The release archive from the hub at a resolved commit, and the record of it."""
    from huggingface_hub import hf_hub_download

    from inspect_medreason.core.hub import resolve_revision

    if not hub_id or not revision:
        raise _problem(
            hub_id or "Med-CMR",
            (
                "no hub dataset id and commit of the Med-CMR release could be verified when this task "
                "was written, so the task does not pick them: pass -T hub_id=<owner/name> and "
                "-T revision=<commit id> (the ids the project page github.com/LsmnBmnc/Med-CMR links "
                "to), or download the release and pass -T data=PATH (the unzipped folder, the zip, "
                "or its JSON/JSONL records)"
            ),
        )
    try:
        pinned = resolve_revision(hub_id, revision)
        archive = hf_hub_download(hub_id, MED_CMR_ARCHIVE, repo_type="dataset", revision=pinned)
    except DatasetError:
        raise
    except Exception as error:  # the hub's many failure types all need the same advice
        raise _problem(
            hub_id,
            (
                f"could not download {MED_CMR_ARCHIVE} from the Hugging Face dataset {hub_id} "
                f"({type(error).__name__}: {str(error)[:200]}). Download the release yourself and "
                f"pass -T data=PATH (the unzipped folder, the zip, or its JSON/JSONL records)"
            ),
        ) from error
    origin = {
        "kind": "huggingface",
        "path": hub_id,
        "file": MED_CMR_ARCHIVE,
        "revision_requested": revision,
        "revision": pinned,
    }
    return Path(archive), origin


def locate_release(
    data: str | None, hub_id: str | None = MED_CMR_HUB_ID, revision: str | None = None
) -> tuple[Path, dict[str, Any]]:
    """The file or folder the loader reads, and where it came from (for the eval log)."""
    if data is not None and str(data).strip():
        path = Path(data).expanduser()
        refuse_non_utf8_path(path)
        if not path.exists():
            raise _problem(str(path), "no such file or folder")
        if path.is_file() and path.suffix.lower() == ".zip":
            return unpack_archive(path, "med_cmr"), {
                "kind": "local archive",
                "path": path_for_log(path),
                "sha256": file_sha256(path),
            }
        return path, {"kind": "local", "path": path_for_log(path)}
    archive, origin = download_release(hub_id, revision)
    return unpack_archive(archive, "med_cmr"), origin
