"""medreason rate: the page (self-contained, blinded, stratified, deterministic) and the
ratings files (format, validation, merging, mapping back to the logs)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json
from utils.rated_logs import (
    SECRET_RATIONALE,
    builtin_rubric_sha256,
    custom_judge_prompts,
    judged_log,
    page_cases,
    ratings_document,
)

from inspect_medreason.analysis.errors import AnalysisError
from inspect_medreason.analysis.logs import log_header
from inspect_medreason.cli import main
from inspect_medreason.core.prompts import load_template
from inspect_medreason.rating.cases import (
    RATED_COMPONENTS,
    collect_candidates,
    log_rubric,
    stratified_sample,
)
from inspect_medreason.rating.page import Blinding, build_rating_page, words_of
from inspect_medreason.rating.ratings_file import map_round_to_logs, read_rating_round

# one worker runs the module: its module-scoped fixture is built once, not on each
pytestmark = pytest.mark.xdist_group("test_rating")


@pytest.fixture(scope="module")
def two_logs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two models' judged runs of the same 12 cases."""
    root = tmp_path_factory.mktemp("rated")
    return [
        judged_log(root, 12, model="mockllm/alpha-secret-7b"),
        judged_log(root, 12, model="mockllm/beta-secret-13b"),
    ]


def page_json(html: str) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="page-data">(.*?)</script>', html, re.DOTALL
    )
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def write_page(logs: list[Path], output: Path, *extra: str) -> tuple[str, str]:
    code = main(["rate", *map(str, logs), "--output", str(output), *extra])
    assert code == 0
    html = output.read_text(encoding="utf-8")
    return html, page_json(html)["page_id"]


def test_the_page_is_self_contained_and_blinded(two_logs: list[Path], tmp_path: Path) -> None:
    html, _ = write_page(two_logs, tmp_path / "page.html", "--cases", "10")
    data = page_json(html)
    # nothing fetched from anywhere: no URL but data URIs, and a policy forbidding requests
    assert not re.search(r"(src|href)\s*=\s*[\"'](?!data:)", html.replace("href = URL", ""))
    assert "default-src 'none'" in html
    assert "http://" not in html and "https://" not in html
    # never the model, the judges' words, a score key or where the case came from
    for secret in ("alpha-secret", "beta-secret", "mockllm", SECRET_RATIONALE, ".eval"):
        assert secret.lower() not in html.lower(), secret
    for case in data["cases"]:
        assert set(case) == {
            "case",
            "question",
            "context",
            "reference",
            "answer",
            "trace",
            "images",
        }
        assert case["images"] and all(
            i.startswith("data:image/png;base64,") for i in case["images"]
        )
        assert "[model]" in case["answer"] and "[model]" in case["trace"]
        assert not re.search(r"\[c\d+\]", case["case"])  # the id tells nothing of the sample
    serialised = json.dumps(data)
    for forbidden in ("gt_final", "va_answer", "rvf_trace", "judges", "eval_id", 'score"'):
        assert forbidden not in serialised, forbidden
    assert len(data["cases"]) == 10 and len({c["case"] for c in data["cases"]}) == 10


def test_the_rubric_is_the_judges_own_prompt_files(two_logs: list[Path]) -> None:
    found = log_rubric(log_header(two_logs[0]))
    shown = found.components
    assert found.sha256 == builtin_rubric_sha256()
    for key, template in (
        ("gt", "judge_gt_system"),
        ("va", "judge_va_system"),
        ("rvf", "judge_rvf_system"),
    ):
        text = load_template(template).text
        assert [a[0] for a in shown[key]["anchors"]] == [4, 3, 2, 1, 0]
        for _, anchor in shown[key]["anchors"]:
            assert anchor in text
        assert shown[key]["uncertainty"].startswith("Uncertainty:")
        assert shown[key]["sha256"] == load_template(template).sha256
        assert "source" not in shown[key]  # never a path to a template file


def test_the_page_shows_the_rubric_the_judges_were_given(tmp_path: Path) -> None:
    """Under -T judge_prompts=DIR the raters read the judges' anchors, not the built-in
    ones, and the page records that rubric's digest and never the folder's path."""
    prompts = custom_judge_prompts(tmp_path / "my-prompts", "CUSTOM-ANCHOR-FOUR perfect.")
    log = judged_log(tmp_path / "custom", 4, judge_prompts=prompts)
    html, _ = write_page([log], tmp_path / "page.html", "--cases", "4")
    data = page_json(html)
    assert data["rubric"]["gt"]["anchors"][0] == [4, "CUSTOM-ANCHOR-FOUR perfect."]
    assert data["rubric_sha256"] == log_rubric(log_header(log)).sha256 != builtin_rubric_sha256()
    assert "my-prompts" not in html and str(tmp_path) not in html
    # a page over logs of different rubrics is refused, naming both
    builtin = judged_log(tmp_path / "builtin", 4)
    with pytest.raises(AnalysisError) as caught:
        build_rating_page([log, builtin], 8, 0)
    text = "\n".join(caught.value.problems)
    assert "different rubrics" in text and str(log) in text and str(builtin) in text


def test_ratings_of_another_rubric_are_refused_against_these_judges(tmp_path: Path) -> None:
    """Ratings made on a page of the built-in rubric are not compared with judges given
    other templates (the same cases, the same page id), naming both digests."""
    prompts = custom_judge_prompts(tmp_path / "p", "CUSTOM top anchor.")
    log = judged_log(tmp_path / "custom", 4, judge_prompts=prompts)
    html, page_id = write_page([log], tmp_path / "page.html", "--cases", "4")
    cases = page_cases([log], page_id)
    theirs = page_json(html)["rubric_sha256"]
    good = write_json(
        tmp_path / "good.json", ratings_document(page_id, "alice", cases, rubric_sha256=theirs)
    )
    mapping, _ = map_round_to_logs(read_rating_round([good], [log]), [log])
    assert len(mapping) == 4
    other = write_json(tmp_path / "other.json", ratings_document(page_id, "bob", cases))
    with pytest.raises(AnalysisError) as caught:
        map_round_to_logs(read_rating_round([other]), [log])
    [problem] = caught.value.problems
    assert builtin_rubric_sha256()[:12] in problem and theirs[:12] in problem
    assert str(other) in problem and str(log) in problem
    for command in ("agreement", "calibrate"):
        code = main(
            [command, str(log), "--ratings", str(other), "--output", str(tmp_path / "o.json")]
        )
        assert code == 1 and not (tmp_path / "o.json").exists()


def test_the_sample_is_stratified_deterministic_and_order_free(two_logs: list[Path]) -> None:
    candidates, _ = collect_candidates(two_logs)
    assert len(candidates) == 24
    first = stratified_sample(candidates, 12, seed=5)
    again = stratified_sample(list(reversed(candidates)), 12, seed=5)
    assert [c.ref for c in first] == [c.ref for c in again]
    assert [c.ref for c in stratified_sample(candidates, 12, seed=6)] != [c.ref for c in first]
    # two models, three modalities, two tasks: 12 strata of 2; 12 cases take one from each
    strata = Counter((c.model, *c.stratum) for c in first)
    assert len(strata) == 12 and set(strata.values()) == {1}
    per_model = Counter(c.model for c in stratified_sample(candidates, 7, seed=1))
    assert sorted(per_model.values()) == [3, 4]
    # all of them when more are asked for than there are
    assert len(stratified_sample(candidates, 100, seed=1)) == 24


def test_the_same_seed_writes_the_same_page(two_logs: list[Path], tmp_path: Path) -> None:
    one, page_one = write_page(two_logs, tmp_path / "a.html", "--cases", "6", "--seed", "3")
    two, page_two = write_page(
        list(reversed(two_logs)), tmp_path / "b.html", "--cases", "6", "--seed", "3"
    )
    assert one == two and page_one == page_two
    _, other = write_page(two_logs, tmp_path / "c.html", "--cases", "6", "--seed", "4")
    assert other != page_one


def test_images_come_from_the_data_folder_when_the_log_holds_none(tmp_path: Path) -> None:
    log = judged_log(tmp_path, 3, log_images=False)
    # the log names no data folder (none holds a local path): the user names it
    html, _ = write_page(
        [log], tmp_path / "page.html", "--cases", "3", "--data", str(tmp_path / "data")
    )
    assert all(c["images"] for c in page_json(html)["cases"])
    # a data folder that does not hold them is a message naming the case
    (tmp_path / "empty").mkdir()
    code = main(
        ["rate", str(log), "--output", str(tmp_path / "p2.html"), "--data", str(tmp_path / "empty")]
    )
    assert code == 1 and not (tmp_path / "p2.html").exists()


def test_ratings_files_merge_and_map_back_to_their_samples(
    two_logs: list[Path], tmp_path: Path
) -> None:
    _, page_id = write_page(two_logs, tmp_path / "page.html", "--cases", "8")
    shown = {c["case"] for c in page_json((tmp_path / "page.html").read_text("utf-8"))["cases"]}
    cases = {c: n for c, n in page_cases(two_logs, page_id).items() if c in shown}
    assert len(cases) == 8
    a = write_json(tmp_path / "a.json", ratings_document(page_id, "alice", cases))
    document = ratings_document(page_id, "bob", cases)
    document["ratings"][0] = {"case": document["ratings"][0]["case"], "skipped": "blurred"}
    b = write_json(tmp_path / "b.json", document)
    rated = read_rating_round([a, b])
    assert set(rated.scores) == {"alice", "bob"}
    assert len(rated.scores["alice"]) == 8 and len(rated.scores["bob"]) == 7
    assert list(rated.skipped["bob"].values()) == ["blurred"]
    mapping, _ = map_round_to_logs(rated, two_logs)
    for case, candidate in mapping.items():
        assert int(str(candidate.sample_id).lstrip("c")) == cases[case]


def problems_of(paths: list[Path]) -> list[str]:
    with pytest.raises(AnalysisError) as caught:
        read_rating_round(paths)
    return caught.value.problems


def test_a_bad_ratings_file_is_every_problem_named(tmp_path: Path) -> None:
    good = ratings_document("p1", "alice", {"ca": 1, "cb": 2})
    bad = {
        **good,
        "colour": "blue",
        "ratings": [
            {"case": "ca", "gt": 5, "va": 2.5, "rvf": True},
            {"case": "ca", "gt": 1, "va": 1, "rvf": 1},
            {"case": "cb", "gt": 1, "va": 1, "rvf": 1, "comment": "x"},
            {"case": "cc", "skipped": ""},
            {"case": "cd", "skipped": "no image", "gt": 2},
            {"case": "ce", "gt": 1, "va": 1, "rvf": 1, "rated_at": "yesterday"},
            "not an object",
        ],
    }
    problems = problems_of([write_json(tmp_path / "bad.json", bad)])
    text = "\n".join(problems)
    assert "unknown key(s) 'colour'" in text
    assert "case ca: gt=5, va=2.5, rvf=true" in text
    assert "case ca: rated twice (ratings 1 and 2)" in text
    assert "case cb: unknown key(s) 'comment'" in text
    assert 'case cc: skipped is ""' in text
    assert "case cd: skipped, yet scored gt" in text
    assert 'case ce: rated_at is "yesterday"' in text
    assert "rating 7: not an object" in text
    assert all(str(tmp_path / "bad.json") in p for p in problems)


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"{not json", "not a readable JSON file"),
        (b"[1, 2]", "not a ratings file"),
        (b'{"format": "medreason-calibration"}', "not a ratings file saved by"),
        (b"[" * 100_000, "nested too deeply"),
        (b"\xff\xfe", "not a readable JSON file"),
    ],
)
def test_what_is_not_a_ratings_file_is_a_message(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    path = tmp_path / "r.json"
    path.write_bytes(content)
    assert any(expected in p for p in problems_of([path]))


def test_files_of_different_pages_or_one_rater_twice_are_refused(tmp_path: Path) -> None:
    a = write_json(tmp_path / "a.json", ratings_document("p1", "alice", {"ca": 1}))
    b = write_json(tmp_path / "b.json", ratings_document("p2", "bob", {"ca": 1}))
    c = write_json(tmp_path / "c.json", ratings_document("p1", " alice ", {"cb": 1}))
    d = write_json(tmp_path / "d.json", ratings_document("p1", "ALICE", {"cd": 1}))
    assert any("different pages" in p and "p2" in p for p in problems_of([a, b]))
    assert any("rater 'alice' again" in p for p in problems_of([a, c]))
    # names are compared trimmed and case-folded: one person, two spellings
    assert any("rater 'ALICE' again" in p and "as 'alice'" in p for p in problems_of([a, d]))
    version = write_json(
        tmp_path / "v.json", {**ratings_document("p1", "x", {"ca": 1}), "version": 3}
    )
    assert any("version 3; this medreason reads versions 1, 2" in p for p in problems_of([version]))


def test_ratings_of_another_page_do_not_map_to_these_logs(
    two_logs: list[Path], tmp_path: Path
) -> None:
    a = write_json(tmp_path / "a.json", ratings_document("0123456789abcdef", "alice", {"cfake": 1}))
    with pytest.raises(AnalysisError) as caught:
        map_round_to_logs(read_rating_round([a]), two_logs)
    [problem] = caught.value.problems
    assert problem.startswith(f"{a}: none of its 1 case(s) is a case of page 0123456789abcdef")
    assert "give the logs the page was made from" in problem


def test_a_case_not_on_the_page_is_named_with_its_file_and_other_problems(
    two_logs: list[Path], tmp_path: Path
) -> None:
    """One edited entry in a file whose other cases are the page's: named by file and case,
    with the right hint, in the same message as the file's other problems."""
    _, page_id = write_page(two_logs, tmp_path / "page.html", "--cases", "4")
    shown = {c["case"] for c in page_json((tmp_path / "page.html").read_text("utf-8"))["cases"]}
    cases = {c: n for c, n in page_cases(two_logs, page_id).items() if c in shown}
    document = ratings_document(page_id, "alice", cases)
    document["ratings"].append({"case": "cedited", "gt": 1, "va": 1, "rvf": 1})
    document["ratings"][0]["gt"] = 2.0
    path = write_json(tmp_path / "r.json", document)
    with pytest.raises(AnalysisError) as caught:
        read_rating_round([path], two_logs)
    text = "\n".join(caught.value.problems)
    assert f"{path}: case cedited: not a case of page {page_id} in these logs" in text
    assert "though the file's other cases are" in text and "remove the entry" in text
    assert "gt=2.0" in text and "an integer 0-4 (4, not 4.0" in text
    # the same through the command line, one message
    code = main(["agreement", *map(str, two_logs), "--ratings", str(path)])
    assert code == 1


def test_a_ratings_file_saved_on_windows_and_its_fields_types(tmp_path: Path) -> None:
    document = ratings_document("p1", "alice", {"ca": 1})
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(document).encode("utf-8"))
    assert set(read_rating_round([bom]).scores) == {"alice"}
    for field, value, expected in (
        ("version", True, "version true; this medreason reads versions 1, 2"),
        ("saved_at", "last tuesday", 'saved_at is "last tuesday", not an ISO 8601 time'),
        ("rubric_sha256", None, "rubric_sha256 is null"),
        ("page_cases", 0, "page_cases is 0"),
    ):
        path = write_json(tmp_path / f"{field}.json", {**document, field: value})
        assert any(expected in p for p in problems_of([path])), field


def test_rated_components_are_the_logs_three() -> None:
    assert list(RATED_COMPONENTS.values()) == ["gt_final", "va_answer", "rvf_trace"]


def test_names_are_blanked_in_the_reply_in_any_spelling_and_by_family() -> None:
    blinding = Blinding(("mockllm/o1", "mockllm/claude-3-5-sonnet-20241022"))
    reply = (
        "As o1 by OpenAI, and unlike Claude, I (GPT 4o / ChatGPT / gpt4o / o1-mini) see a "
        "density. Claude-3.5-Sonnet would agree; so would claude 3.5 sonnet."
    )
    blanked = blinding.blank(reply, set())
    for name in ("o1", "OpenAI", "Claude", "GPT", "ChatGPT", "gpt4o", "Sonnet", "3.5"):
        assert name.lower() not in blanked.lower(), (name, blanked)
    assert "see a density" in blanked and blanked.count("[model]") == 9
    # an ordinary word is never blanked: the stop list, or a word of the case itself
    assert Blinding(("mockllm/model", "hf/acme/chest")).blank("A chest model.", set()) == (
        "A chest model."
    )
    density = Blinding(("mockllm/density",))
    assert density.blank("A density.", set()) == "A [model]."
    assert density.blank("A density.", words_of("Is there a density?")) == "A density."


def test_the_question_and_reference_are_never_altered_and_a_named_family_is_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model named like an ordinary word: the raters read the question, reference and
    reply the judges read; a reply that still names a family (Qwen, for a model of another
    family) is a warning on stderr and in the page's key, never on the page itself."""
    log = judged_log(
        tmp_path,
        3,
        model="mockllm/chest",
        reply=("The chest shows a density; as Qwen I am sure.", "A chest nodule."),
    )
    capsys.readouterr()
    html, _ = write_page([log], tmp_path / "page.html", "--cases", "3")
    err = capsys.readouterr().err
    for case in page_json(html)["cases"]:
        assert case["answer"] == "A chest nodule."
        assert case["trace"] == "The chest shows a density; as Qwen I am sure."
        assert re.fullmatch(r"What does the image show\? \[c\d\d\]", case["question"])
        assert case["reference"] == "a nodule"
    assert "warning: 3 case(s) on the page still name a model family" in err
    key = html[: html.index("<head>")]
    assert "still name a model family" in key and "best-effort" in key
    body = html[html.index("<body>") :]
    assert "still name" not in body


def test_large_images_are_scaled_down_for_the_page_and_a_large_page_is_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import base64
    import io

    import numpy as np
    from PIL import Image
    from utils.rated_logs import write_cases

    from inspect_medreason.rating import page as rating_page

    data = write_cases(tmp_path / "data", 2)
    noise = np.random.default_rng(0).integers(0, 255, (1000, 1500), dtype=np.uint8)
    for number in range(2):
        Image.fromarray(noise).save(data / f"images/i{number}.png")
    log = judged_log(tmp_path, 2)

    def sizes(html: str) -> list[tuple[int, int]]:
        found = []
        for case in page_json(html)["cases"]:
            for uri in case["images"]:
                raw = base64.b64decode(uri.partition(",")[2])
                with Image.open(io.BytesIO(raw)) as image:
                    found.append(image.size)
        return found

    capsys.readouterr()
    html, _ = write_page([log], tmp_path / "small.html")
    assert sizes(html) == [(1024, 683)] * 2
    assert "2 image(s) scaled down to 1024 px" in html[: html.index("<head>")]
    assert "warning" not in capsys.readouterr().err
    original, _ = write_page([log], tmp_path / "full.html", "--max-image-px", "0")
    assert sizes(original) == [(1500, 1000)] * 2
    assert "scaled down" not in original and len(original) > 2 * len(html)
    monkeypatch.setattr(rating_page, "LARGE_PAGE_BYTES", len(html) // 2)
    write_page([log], tmp_path / "warned.html")
    assert "warning: the page is" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["rate", str(log), "--output", str(tmp_path / "x.html"), "--max-image-px", "9"])
    assert "give 0 (as logged) or 64 to 65535 pixels" in capsys.readouterr().err


def test_a_partly_rated_case_is_kept_with_what_it_has_and_qualified(tmp_path: Path) -> None:
    """Version 2: a component may be left out (a partly rated case), marked cannot_assess
    with a reason, commented on; time on the case is kept. Each is read, never dropped."""
    document = ratings_document("p1", "alice", {"ca": 1})
    document["version"] = 2
    document["ratings"] = [
        {"case": "ca", "gt": 3, "rated_at": "2026-12-01T10:00:00Z"},
        {
            "case": "cb",
            "gt": 2,
            "va": 1,
            "cannot_assess": {"rvf": "no reasoning given"},
            "comments": {"va": "borderline"},
            "seconds": 42.5,
        },
    ]
    rated = read_rating_round([write_json(tmp_path / "v2.json", document)])
    assert rated.scores["alice"] == {"ca": {"gt": 3}, "cb": {"gt": 2, "va": 1}}
    assert rated.cannot_assess["alice"] == {"cb": {"rvf": "no reasoning given"}}
    assert rated.comments["alice"] == {"cb": {"va": "borderline"}}
    assert rated.seconds["alice"] == {"cb": 42.5}
    assert rated.partial("alice") == {"ca"}  # cb is complete: RVF cannot be assessed


def test_a_bad_qualified_rating_is_every_problem_named(tmp_path: Path) -> None:
    document = ratings_document("p1", "alice", {"ca": 1})
    document["version"] = 2
    document["ratings"] = [
        {"case": "ca", "gt": 3, "cannot_assess": {"gt": "unclear", "xx": "why"}},
        {"case": "cb", "cannot_assess": {"va": "  "}, "comments": "not an object"},
        {"case": "cc", "gt": 1, "seconds": -4},
        {"case": "cd", "rated_at": "2026-12-01T10:00:00Z"},
        {"case": "ce", "skipped": "no image", "cannot_assess": {"va": "x"}},
    ]
    text = "\n".join(problems_of([write_json(tmp_path / "bad.json", document)]))
    assert "case ca: cannot_assess: unknown component 'xx'" in text
    assert "case ca: gt both scored and marked cannot_assess" in text
    assert "case cb: cannot_assess.va is empty" in text
    assert 'case cb: comments is "not an object"' in text
    assert "case cc: seconds is -4" in text
    assert "case cd: no component scored nor marked cannot_assess" in text
    assert "case ce: skipped, yet marked cannot_assess" in text


def test_a_broken_character_or_a_control_in_a_ratings_file_is_named(tmp_path: Path) -> None:
    """What the server refuses, a file may not hold either: a lone surrogate (JSON's
    ``\\ud800``) or a control character in a name, a reason or a comment is a problem named
    with its place, never a crash when the text is printed or written."""
    document = ratings_document("p1", "al\x00ice", {"ca": 1})
    document["version"] = 2
    document["ratings"] = [
        {"case": "ca", "gt": 3, "comments": {"gt": "half \ud800 a character"}},
        {"case": "cb", "skipped": "bell\x07"},
        {"case": "cc", "va": 2, "cannot_assess": {"gt": "x" * 2001}},
    ]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document), encoding="ascii")  # the surrogate escaped, as JSON has it
    text = "\n".join(problems_of([bad]))
    assert "rater is" in text and "U+0000" in text
    assert "case ca: comments.gt is" in text and "U+D800" in text
    assert "case cb: skipped is" in text and "U+0007" in text
    assert "case cc: cannot_assess.gt is" in text and "more than 2000" in text
    text.encode("utf-8")  # printable: the surrogate is shown escaped


def test_rate_says_what_a_served_round_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "missing.eval"
    assert main(["rate", str(log)]) != 0
    assert "give --output PAGE.html (a page to send), or --serve" in capsys.readouterr().err
    assert main(["rate", str(log), "--serve"]) != 0
    assert "give --store FILE" in capsys.readouterr().err


def test_the_demo_reaches_calibrate_with_three_epochs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/rating.md's demo path: the demo's 10 open cases judged over 3 epochs are 30
    rateable cases (a case id is per epoch), enough for calibrate's minimum of 30."""
    import random

    from inspect_ai import eval as inspect_eval

    from inspect_medreason.analysis.calibration import MIN_CASES

    [log] = inspect_eval(
        "inspect_medreason/open_ended",
        model="medreason/pipeline-check",
        model_roles={
            "grader": "medreason/pipeline-check",
            "vision_grader": "medreason/pipeline-check",
        },
        epochs=3,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success"
    html, page_id = write_page([Path(log.location)], tmp_path / "page.html", "--cases", "30")
    cases = page_json(html)["cases"]
    assert len(cases) == MIN_CASES
    rng = random.Random(0)
    document = ratings_document("x", "demo", {})
    document.update(
        page_id=page_id,
        page_cases=len(cases),
        ratings=[
            {"case": c["case"], **{k: rng.randint(0, 4) for k in RATED_COMPONENTS}} for c in cases
        ],
    )
    ratings = write_json(tmp_path / "demo-ratings.json", document)
    out = tmp_path / "calibration.json"
    capsys.readouterr()
    code = main(["calibrate", log.location, "--ratings", str(ratings), "--output", str(out)])
    assert code == 0, capsys.readouterr().err

    def refuse(constant: str) -> None:
        raise AssertionError(f"calibration.json holds a bare {constant}: not JSON")

    # strict JSON: the stand-in judge scores every case 2, so its agreement with the people
    # (a kappa, a correlation) is undefined, and is written as null, never as NaN
    text = out.read_text(encoding="utf-8")
    document = json.loads(text, parse_constant=refuse)
    assert document["components"]["gt_final"]["cases"] == MIN_CASES
    assert "null" in text
