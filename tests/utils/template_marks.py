"""What a copy of templates/new_benchmark still holds of the template (issue 62): each
placeholder a contributor must replace, found in a benchmark folder, named with its file and
what to write instead. tests/test_benchmarks_finished.py runs it on every family."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass(frozen=True)
class Placeholder:
    files: str  # a glob inside the benchmark folder
    pattern: str  # a regular expression, case-insensitive
    fix: str


PLACEHOLDERS = (
    Placeholder(
        "eval.yaml", r"^title:.*\bone line\b", "title: the benchmark's name and a real line"
    ),
    Placeholder("eval.yaml", r"\b0000\.00000\b", "arxiv: the paper's own arXiv link"),
    Placeholder(
        "eval.yaml", r"What it measures, how it is scored", "description: the benchmark's own"
    ),
    Placeholder("eval.yaml", r"your GitHub name", "contributors: your GitHub name"),
    Placeholder("*", r"\bowner/dataset\b", "the dataset's hub id (eval.yaml and dataset.py)"),
    # the template's name, and its folder's and task's (new_benchmark)
    Placeholder("*", r"\bNEW_BENCHMARK\b", "the benchmark's name (and its task's)"),
    Placeholder("README.md", r"^One paragraph: what it measures", "the README's opening paragraph"),
    Placeholder(
        "README.md",
        r"^The published layout, with where each fact comes from",
        "the Data section: the real schema and where it was found",
    ),
)


def unfinished(folder: Path) -> list[str]:
    """Every placeholder of the template the folder still holds: file, line and the fix."""
    found: list[str] = []
    files = sorted(path for path in folder.rglob("*") if path.is_file() and path.suffix in {
        ".py", ".md", ".yaml", ".txt"
    })  # fmt: skip
    for placeholder in PLACEHOLDERS:
        pattern = re.compile(placeholder.pattern, re.IGNORECASE | re.MULTILINE)
        for path in files:
            if not path.relative_to(folder).match(placeholder.files):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for match in pattern.finditer(text):
                line = text.count("\n", 0, match.start()) + 1
                found.append(
                    f"{path.relative_to(folder)}:{line}: {match.group(0)!r} is the "
                    f"template's; write {placeholder.fix}"
                )
    metadata = folder / "eval.yaml"
    if metadata.is_file():
        record = yaml.safe_load(metadata.read_text(encoding="utf-8")) or {}
        for asset in record.get("external_assets") or []:
            if asset.get("state") == "floating" and "replace with" in str(asset.get("comment")):
                found.append(
                    f"eval.yaml: the asset {asset.get('source')!r} is still the template's "
                    "floating one; pin it (state: pinned and the verified commit)"
                )
    return found
