"""No benchmark folder is an unfinished copy of templates/new_benchmark (issue 62): its
placeholders (title "one line", arXiv 0000.00000, `owner/dataset`, the README's prompts)
pass the linters and the task's own tests, so this check names each one left, with its
file, line and what to write. Proven on the template itself (every placeholder found) and
on a finished copy (none found)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from utils.template_marks import PLACEHOLDERS, unfinished

import inspect_medreason

FAMILIES = sorted(
    path.parent for path in Path(inspect_medreason.__file__).parent.glob("*/eval.yaml")
)
TEMPLATE = Path(__file__).resolve().parents[1] / "templates" / "new_benchmark"


@pytest.mark.parametrize("family", FAMILIES, ids=lambda path: path.name)
def test_no_family_holds_a_placeholder_of_the_template(family: Path) -> None:
    problems = unfinished(family)
    # every problem printed in full (a contributor reads this list to finish the copy)
    assert not problems, "an unfinished copy of the template:\n" + "\n".join(problems)


def test_an_unfinished_copy_is_flagged_for_every_placeholder(tmp_path: Path) -> None:
    copy = tmp_path / "new_benchmark"
    shutil.copytree(TEMPLATE, copy)
    found = unfinished(copy)
    for placeholder in PLACEHOLDERS:
        assert any(placeholder.fix in problem for problem in found), placeholder
    assert any("floating one; pin it" in problem for problem in found)
    assert any(problem.startswith("eval.yaml:1: ") for problem in found)  # file and line
    assert any(
        problem.startswith("dataset.py:") and "owner/dataset" in problem for problem in found
    )


def test_a_finished_copy_is_not_flagged(tmp_path: Path) -> None:
    copy = tmp_path / "liver_vqa"
    shutil.copytree(TEMPLATE, copy)
    replacements = {
        "NEW_BENCHMARK: one line": "LiverVQA: questions on liver CT",
        "NEW_BENCHMARK": "LiverVQA",
        "new_benchmark": "liver_vqa",
        "0000.00000": "2401.01234",
        "owner/dataset": "someone/liver-vqa",
        "your GitHub name": "liver-dev",
        "What it measures, how it is scored": "Liver CT questions, exact match scored",
        "One paragraph: what it measures": "LiverVQA asks about liver CT",
        "The published layout, with where each fact comes from": "The hub copy's layout",
        "replace with state: pinned and the verified commit id once it is checked": "checked",
    }
    for path in copy.rglob("*"):
        if path.is_file() and path.suffix in {".py", ".md", ".yaml", ".txt"}:
            text = path.read_text(encoding="utf-8")
            for old, new in replacements.items():
                text = text.replace(old, new)
            path.write_text(text, encoding="utf-8")
    assert unfinished(copy) == []
