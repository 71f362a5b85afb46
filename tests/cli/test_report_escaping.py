"""User text in the Markdown reports is escaped: a ``|`` in a model or rater name does not
split a table cell, a newline does not end a row, and HTML or a link in a name stays text.
The HTML reports escape it as HTML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import scripted_output, write_json, write_png
from inspect_ai import eval
from inspect_ai.model import get_model

from inspect_medreason.cli import main
from inspect_medreason.cli.markdown import markdown_row, markdown_text
from inspect_medreason.medreason.medreason import mcq

HOSTILE = "ali|ce <script>x</script> [a](http://e) *b* `c`\nd"


def cells(row: str) -> list[str]:
    """A Markdown table row's cells, split as GitHub's tables split them (an unescaped |)."""
    return re.split(r"(?<!\\)\|", row.strip().strip("|"))


def test_user_text_is_one_cell_and_no_markup() -> None:
    row = markdown_row([HOSTILE, "0.5 [0.1, 0.9]"])
    assert len(cells(row)) == 2 and "\n" not in row
    text = markdown_text(HOSTILE)
    assert "<" not in text and ">" not in text and "&lt;script&gt;" in text
    assert re.search(r"(?<!\\)\]\(", text) is None  # no link
    assert r"\*b\*" in text and r"\`c\`" in text
    assert markdown_text("0.5 [0.1, 0.9] -0.2 gpt-4.1 open_ended") == (
        "0.5 [0.1, 0.9] -0.2 gpt-4.1 open_ended"  # what the reports write passes unchanged
    )


def test_check_data_escapes_case_ids_and_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_png(tmp_path / "one.png")
    write_json(
        tmp_path / "cases.json",
        {
            "cases": [
                {
                    "case_id": f"c|{n}<b>",
                    "task_type": "mcq",
                    "question": "Which side?",
                    "image_path": "one.png",
                    "options": ["Left", "Right"],
                    "answer": "A",
                    "metadata": {"modality": "CT|MR <i>"},
                }
                for n in range(2)
            ]
        },
    )
    assert main(["check-data", str(tmp_path)]) == 0
    report = capsys.readouterr().out
    assert "<b>" not in report and "<i>" not in report
    modality_rows = [line for line in report.splitlines() if "CT" in line]
    assert modality_rows and all(len(cells(line)) == 2 for line in modality_rows)


def test_leaderboard_escapes_a_model_name_in_markdown_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], official_dataset: Path
) -> None:
    name = "mockllm/al|ce<img src=x>"
    [log] = eval(
        mcq(data=str(official_dataset)),
        model=get_model(name, custom_outputs=lambda *_: scripted_output("ANSWER: A")),
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success"
    assert main(["leaderboard", str(tmp_path / "logs")]) == 0
    markdown = capsys.readouterr().out
    header, _, *rows = [line for line in markdown.splitlines() if line.startswith("|")]
    assert rows and all(len(cells(row)) == len(cells(header)) for row in rows)
    assert "<img" not in markdown and "al\\|ce&lt;img src=x&gt;" in markdown
    assert main(["leaderboard", str(tmp_path / "logs"), "--format", "html"]) == 0
    page = capsys.readouterr().out
    assert "<img src=x>" not in page and "al|ce&lt;img src=x&gt;" in page
