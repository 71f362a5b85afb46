"""Build ``vqa/data/vqa_rad_answer_types.json``: the official VQA-RAD release's CLOSED/OPEN
label of every question, keyed so that the hub copy's rows (which dropped the label) join.

The hub copy (flaviagiammarino/vqa-rad) was made by its ``scripts/processing.py`` from the
release's ``VQA_RAD Dataset Public.json``: rows split by ``phrase_type`` (``test_*``: test),
duplicate image-question-answer triplets dropped, question and answer lower-cased with runs
of spaces made one, " ?" made "?", and stripped, and each image file copied unchanged. So a
hub row is found by the SHA-256 of its image's bytes and its question under that same
normalisation (``hub_question``), which is what this table holds. VQA-RAD is CC0 1.0.

Usage: python scripts/build_vqa_rad_answer_types.py RELEASE_FOLDER --repository OWNER/NAME
--commit SHA --path 'input/VQA_RAD Dataset Public.json'
(RELEASE_FOLDER holds ``VQA_RAD Dataset Public.json`` and ``VQA_RAD Image Folder/``.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path

from inspect_medreason.core.strict_json import dumps
from inspect_medreason.vqa.dataset import RELEASE_ANSWER_TYPES, hub_question


def build(folder: Path, repository: str, commit: str, path: str) -> dict[str, object]:
    release_file = folder / "VQA_RAD Dataset Public.json"
    raw = release_file.read_bytes()
    rows = json.loads(raw)
    images = {
        name: hashlib.sha256((folder / "VQA_RAD Image Folder" / name).read_bytes()).hexdigest()
        for name in sorted({str(row["image_name"]) for row in rows})
    }
    questions = [
        [
            row["qid"],
            row["phrase_type"],
            row["image_name"],
            hub_question(row["question"]),
            # two rows say "CLOSED " (a trailing space): the same label
            str(row["answer_type"]).strip().upper(),
        ]
        for row in rows
    ]
    return {
        "about": (
            "The official VQA-RAD release's answer_type (CLOSED/OPEN) for each question, "
            "joined to a copy without it (the hub's) by the SHA-256 of the image file and "
            "the question as the hub normalises it; built by "
            "scripts/build_vqa_rad_answer_types.py"
        ),
        "licence": "CC0 1.0 (VQA-RAD, Lau et al. 2018, https://osf.io/89kps/)",
        "source": {
            "file": release_file.name,
            "repository": repository,
            "commit": commit,
            "path": path,
            "sha256": hashlib.sha256(raw).hexdigest(),
            "rows": len(rows),
            "images": len(images),
        },
        "columns": ["qid", "phrase_type", "image_name", "hub_question", "answer_type"],
        "images": images,
        "questions": questions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--repository", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--path", required=True)
    parser.add_argument("--output", type=Path, default=RELEASE_ANSWER_TYPES)
    args = parser.parse_args()
    table = build(args.folder, args.repository, args.commit, args.path)
    questions = table.pop("questions")
    assert isinstance(questions, list)
    # one question a line: a reviewable diff when the table is rebuilt
    head = dumps(table, indent=1)[:-2]
    body = ",\n".join("  " + dumps(question, ensure_ascii=False) for question in questions)
    args.output.write_text(f'{head},\n "questions": [\n{body}\n ]\n}}\n', encoding="utf-8")


if __name__ == "__main__":
    main()
