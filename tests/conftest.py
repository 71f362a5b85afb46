"""Shared fixtures: tiny real PNG files, case files in every layout, scripted models."""

from __future__ import annotations

import functools
import json
import os
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import tiktoken
from inspect_ai import eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    ContentImage,
    ModelOutput,
    ModelUsage,
    get_model,
)
from PIL import Image

SHARED_OFFICIAL = Path(__file__).resolve().parents[2] / "shared/reference/medreason-official"


# The folders an eval with no log_dir writes to: the user's INSPECT_LOG_DIR, else ./logs (the
# quick start's folder). Read before the session points Inspect elsewhere.
USER_LOG_DIRS = tuple(
    Path(folder).resolve()
    for folder in dict.fromkeys(filter(None, (os.environ.get("INSPECT_LOG_DIR"), "logs")))
)


def log_folder_entries(folder: Path) -> dict[str, int]:
    """A folder's files and their modification times (none for a missing folder): enough
    to see a log written or rewritten there."""
    if not folder.is_dir():
        return {}
    return {
        str(path.relative_to(folder)): path.stat().st_mtime_ns
        for path in folder.rglob("*")
        if path.is_file()
    }


@pytest.fixture(scope="session", autouse=True)
def session_log_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Inspect's default log folder for the whole session is a temporary one, so an eval
    that forgets ``log_dir`` (and every subprocess, which inherits the environment) never
    writes into the user's logs."""
    folder = tmp_path_factory.mktemp("inspect_default_logs")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_LOG_DIR", str(folder))
        yield folder


@pytest.fixture(scope="session", autouse=True)
def inspect_banner_printed(session_log_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Inspect prints a banner (its version and this plugin's hook) to stdout on a process's
    first eval. One eval here, before any test, so that no test's captured output depends
    on whether it was the first on its worker to run one."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tiktoken, "get_encoding", lambda name: _byte_level_encoding())
        [log] = inspect_eval(
            Task(dataset=[Sample(input="ready?")]),
            model="mockllm/model",
            display="none",
            log_dir=str(tmp_path_factory.mktemp("banner_logs")),
        )
    assert log.status == "success", log.error


@pytest.fixture(autouse=True)
def no_log_outside_tmp(session_log_dir: Path) -> Iterator[None]:
    """Fail the test that writes a log into the user's folders, or into the session's
    default one (which only an eval without ``log_dir`` reaches): a test passes
    ``log_dir=tmp_path`` (or ``--log-dir``) to every eval it runs."""
    watched = (session_log_dir, *USER_LOG_DIRS)
    before = {folder: log_folder_entries(folder) for folder in watched}
    yield
    written = [
        f"{folder / name}"
        for folder in watched
        for name, mtime in log_folder_entries(folder).items()
        if before[folder].get(name) != mtime
    ]
    if written:
        pytest.fail(
            "the test wrote outside its temporary folders: "
            + ", ".join(sorted(written)[:5])
            + " (pass log_dir=tmp_path to eval(), --log-dir to inspect)"
        )


@pytest.fixture(autouse=True)
def isolated_inspect_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Judge replies are cached by default; keep each test's cache its own (and off the
    user's), so that a test sees every request it causes."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path_factory.mktemp("inspect_cache")))
    # and the plugin's own (converted DICOM, the record of images already decoded)
    monkeypatch.setenv(
        "INSPECT_MEDREASON_CACHE_DIR", str(tmp_path_factory.mktemp("medreason_cache"))
    )


def write_png(path: Path, size: tuple[int, int] = (8, 8), colour: int = 128) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("L", size, colour).save(path)
    return path


@functools.cache
def _byte_level_encoding() -> tiktoken.Encoding:
    return tiktoken.Encoding(
        name="offline_bytes",
        pat_str=r"\S+|\s+",
        mergeable_ranks={bytes([i]): i for i in range(256)},
        special_tokens={},
    )


@pytest.fixture(autouse=True)
def offline_tokenizer(monkeypatch: pytest.MonkeyPatch) -> None:
    """mockllm without scripted usage estimates tokens with tiktoken's o200k_base, which is
    downloaded on first use; the tests run offline, so a byte-level encoding stands in (it
    only changes the token counts mockllm reports)."""
    monkeypatch.setattr(tiktoken, "get_encoding", lambda name: _byte_level_encoding())


def write_json(path: Path, value: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    """One JSON object per line, as the hub's JSONL files hold them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def scripted_output(text: str) -> ModelOutput:
    """A reply with usage set, so mockllm never reaches for a tokenizer download."""
    output = ModelOutput.from_content(model="mockllm", content=text)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def sent_image_files(sample: Sample) -> list[Path]:
    """The image files a sample sends: its input's images (a log names none of them; it
    records their digests)."""
    turns = sample.input if isinstance(sample.input, list) else []
    return [
        Path(part.image)
        for turn in turns
        if not isinstance(turn.content, str)
        for part in turn.content
        if isinstance(part, ContentImage)
    ]


def user_text(messages: list[ChatMessage]) -> str:
    return "\n".join(m.text for m in messages if isinstance(m, ChatMessageUser))


def reply_by_question(replies: dict[str, str]) -> Callable[..., ModelOutput]:
    """A mockllm callable answering from the request's content (the question it contains)."""

    def respond(messages: list[ChatMessage], *_: Any) -> ModelOutput:
        text = user_text(messages)
        for question, reply in replies.items():
            if question in text:
                return scripted_output(reply)
        raise AssertionError(f"unexpected request: {text[:200]}")

    return respond


def run_with_grader(task: Any, respond: Any, tmp_path: Path, grade: Any = None) -> EvalLog:
    """Evaluate ``task`` with a scripted model and, when given, a scripted ``grader`` role."""
    roles = (
        {"grader": get_model("mockllm/model", custom_outputs=grade, memoize=False)}
        if grade
        else None
    )
    [log] = eval(
        task,
        model=get_model("mockllm/model", custom_outputs=respond),
        model_roles=roles,
        display="none",
        log_dir=str(tmp_path / "logs"),
    )
    assert log.status == "success", log.error
    return log


@pytest.fixture
def official_dataset(tmp_path: Path) -> Path:
    """Three MCQ cases and one open case in the official layout, with ground truth beside."""
    for name in ("a.png", "b.png", "c.png"):
        write_png(tmp_path / "images" / name)
    write_json(
        tmp_path / "cases.json",
        {
            "cases": [
                {
                    "case_id": "q1",
                    "task_type": "mcq",
                    "question": "Which modality is this? (q1)",
                    "image_path": "images/a.png",
                    "options": [
                        {"label": "A", "text": "CT"},
                        {"label": "B", "text": "MRI"},
                        {"label": "C", "text": "Ultrasound"},
                    ],
                    "metadata": {"modality": "CT", "organ system": "Chest"},
                },
                {
                    "case_id": "q2",
                    "task_type": "closed-ended",
                    "question": "Which plane? (q2)",
                    "image_paths": ["images/b.png", "images/c.png"],
                    "options": ["Axial", "Sagittal", "Coronal"],
                    "metadata": {"modality": "MR", "organ_system": "Brain"},
                },
                {
                    "case_id": "q3",
                    "task_type": "multiple_choice",
                    "question": "Is there a fracture? (q3)",
                    "image_path": "images/c.png",
                    "context": "Trauma patient.",
                    "options": ["Yes", "No"],
                    "metadata": {"modality": "X-ray", "organ_system": "Chest"},
                },
                {
                    "case_id": "o1",
                    "task_type": "open_ended",
                    "question": "Describe the finding. (o1)",
                    "image_path": "images/a.png",
                },
            ]
        },
    )
    write_json(
        tmp_path / "ground_truth.json",
        {
            "cases": [
                {"case_id": "q1", "task_type": "mcq", "answer": "A"},
                {"case_id": "q2", "task_type": "mcq", "answer": "C"},
                {"case_id": "q3", "task_type": "mcq", "answer": "B"},
                {"case_id": "o1", "task_type": "open", "answer": "A small nodule."},
            ]
        },
    )
    return tmp_path


def edit_log_entry(
    source: Path, target: Path, entry: str, edit: Callable[[Any], Any] | bytes
) -> Path:
    """Copy an .eval zip with one entry changed, as a hand edit would: ``edit`` changes the
    entry's parsed JSON in place, or bytes replace the entry whole."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            data = old.read(info.filename)
            if info.filename == entry:
                if isinstance(edit, bytes):
                    data = edit
                else:
                    document = json.loads(data)
                    edit(document)
                    data = json.dumps(document).encode()
            new.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED)
    return target


# Tests that take many seconds each (whole commands in subprocesses, benchmarks, a hub that
# does not answer): marked slow, so `python -m pytest -m "not slow"` is the quick loop;
# .ci/run runs them too. Matched on the start of the test's node id; CONTRIBUTING.md lists
# them.
SLOW_TESTS = {
    "tests/docs/test_readme_commands.py": "runs every command the documents show",
    "tests/docs/test_recipe.py": "follows the add-a-benchmark recipe, then every check, in a copy",
    "tests/cli/test_run_attempts.py": "runs interrupted, resumed and eval-set runs",
    "tests/test_layout.py::test_any_module_of_the_libraries_can_be_imported_first": (
        "six fresh interpreters, each importing the libraries in another order"
    ),
    "tests/analysis/test_agreement_coverage.py": "simulates 1,600 data sets of shared images",
    "tests/analysis/test_calibration_coverage.py": "simulates 4,800 fit tables on shared images",
    "tests/analysis/test_rank_stability_coverage.py": "simulates 800 leaderboards of shared images",
    "tests/docs/test_analysis_example.py": (
        "the README's quick start and docs/analysis.md's runs, then its example"
    ),
    "tests/test_register_entries.py::test_the_script_writes": "runs the script",
    "tests/cli/test_strict_json_outputs.py": "two judged runs, then every JSON-writing command",
    "tests/cli/test_leaderboard_hostile_logs.py": "a judged run, then leaderboard on crafted logs",
    "tests/perf/test_benchmarks.py": "runs each benchmark at a small size",
    "tests/robustness/test_user_errors.py::test_an_unreachable_hub_asks_for_a_local_copy": (
        "waits for a hub that does not answer"
    ),
    "tests/robustness/test_user_errors.py::test_the_medreason_command_survives_a_real_log_folder": (
        "a real eval, then every subcommand in a subprocess"
    ),
    "tests/medreason/test_open_ended.py::test_rescoring_an_edited_log_never_sends_outside_files": (
        "an eval, then inspect score in a subprocess"
    ),
    "tests/medreason/test_mcq.py::test_offline_quick_start_command_runs_without_network": (
        "the quick start's command in a subprocess"
    ),
    "tests/cli/test_cli.py::test_console_script_help_for_every_subcommand": (
        "one subprocess per subcommand"
    ),
    "tests/rating/test_rating_browser.py": "starts headless Chromium and rates a page in it",
    "tests/rating/test_rating.py::test_the_demo_reaches_calibrate_with_three_epochs": (
        "the demo's open cases judged over 3 epochs, then rate and calibrate"
    ),
    "tests/robustness/test_judge_bounds.py::test_a_hanging_judge_is_cut_at_the_runs_attempt_timeout": (
        "waits for judges that hang until the run's timeout"
    ),
    "tests/medreason/test_rescoring_folder.py::test_rescoring_reads_images_only_from_the_named_folder": (
        "an eval, then inspect score three times, in subprocesses"
    ),
    "tests/test_log_paths.py::test_no_log_names_a_local_folder": (
        "every task family run once on its published layout, each log scanned whole"
    ),
    "tests/cli/test_agreement_scale.py::test_agreement_on_many_logs_and_a_large_reference_is_fast_or_refused": (
        "writes 120 logs and times agreement on them and on a 20,000-row reference"
    ),
    "tests/cli/test_outputs.py::test_agreement_and_calibrate_write_together_too": (
        "agreement's bootstraps and calibrate's cross-validation, ten times each"
    ),
    "tests/cli/test_rejudging.py::test_each_judging_is_its_own_row_with_its_own_judges": (
        "an eval, then inspect score twice, in subprocesses"
    ),
    "tests/vqa/test_inspect_evals_crosscheck.py": (
        "451 questions scored by our medreason_vqa_rad and by inspect_evals' scorer"
    ),
    "tests/cli/test_signals.py": "signals commands held mid-write, each in a subprocess",
    "tests/cli/test_metric_shapes.py": (
        "four judged evals, then every log-reading subcommand on them in two metric shapes"
    ),
    "tests/medreason/test_open_ended.py::test_no_score_then_inspect_score_rejudges": (
        "inspect eval --no-score, then inspect score, in subprocesses"
    ),
    "tests/robustness/test_user_errors.py::test_inspects_options_work_alike_as_flags_and_environment": (
        "four inspect eval runs in subprocesses"
    ),
    "tests/robustness/test_batch_judges.py": "waits for batches of a local batch API stand-in",
    "tests/robustness/test_fault_injection.py::test_judge_failure_error_makes_the_sample_an_error_that_eval_retry_reruns": (
        "two evals and an eval-retry against the fault-injecting judge server"
    ),
    "tests/robustness/test_user_errors.py::test_task_mistakes_print_one_message": (
        "one inspect eval subprocess per mistake"
    ),
    "tests/core/test_errors.py::test_importing_the_plugin_installs_no_process_wide_hook": (
        "imports the plugin in a fresh subprocess"
    ),
    "tests/cli/test_calibration.py::test_the_calibrated_interval_covers_the_peoples_mean_at_its_level": (
        "100 simulated rounds, each a calibrated bootstrap"
    ),
    "tests/robustness/test_malformed_fields.py::test_json_nested_100000_deep_is_refused_by_every_loader_without_a_crash": (
        "every loader given JSON nested 100,000 deep, in a subprocess"
    ),
    "tests/judge_meta/test_judge_meta.py::test_a_judge_that_always_says_four_resists_no_injection": (
        "the judge meta-evaluation's 110 probes, judged twice"
    ),
    "tests/judge_meta/test_judge_meta.py::test_an_inconsistent_judge_is_caught": (
        "the judge meta-evaluation's 110 probes, judged twice"
    ),
    "tests/cli/test_check_data.py::test_check_data_refuses_unreadable_data_with_a_message": (
        "medreason check-data in a subprocess"
    ),
    "tests/cli/test_atomic_writes.py::test_a_kill_mid_write_leaves_the_old_file_intact": (
        "a subprocess killed mid-write"
    ),
    "tests/cli/test_outputs.py::test_a_file_size_limit_is_a_message_and_leaves_the_old_file": (
        "a command in a subprocess under a file-size limit"
    ),
    "tests/perf/test_report.py::test_the_perf_readme_tables_match_the_committed_results": (
        "the report script in a subprocess"
    ),
    "tests/docs/test_test_order.py": "pytest itself in subprocesses, shuffled and replayed",
    "tests/cli/test_shift_report.py::test_open_ended_answers_are_compared_and_the_plot_names_each_line": (
        "an open-ended run judged clean and shifted, then the report and its plot"
    ),
    "tests/cli/test_shift_report.py::test_the_other_image_families_are_reported": (
        "three image families, each run clean and blurred"
    ),
    "tests/core/test_image_sensitive_model.py::test_a_shift_run_with_it_shows_a_drop_the_report_finds": (
        "the reference model's clean and shifted runs, then the report"
    ),
    "tests/robustness/test_http_judges.py::test_judge_max_connections_sizes_the_judges_pool_apart_from_the_eval": (
        "judges over HTTP held at their pool size, timed"
    ),
    "tests/robustness/test_fault_injection.py::test_faulty_judges_and_hostile_replies_never_error_a_sample": (
        "24 cases judged by a server that hangs, errs and echoes"
    ),
    "tests/core/test_reference_judge_demo.py": "a clean and a blurred judged open-ended run, then shift and compare",
    "tests/docs/test_shift_doc.py": "docs/shift.md's probe: a shift grid of evals, then the report",
    "tests/core/test_interval_coverage.py": (
        "2,000 simulated datasets per scenario, each an interval (and a sign-flip test)"
    ),
    "tests/core/test_shift_statistics.py::test_the_interval_covers_and_the_test_holds_its_level_on_shared_images": (
        "500 simulated datasets per scenario, each an interval and a sign-flip test"
    ),
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        node = item.nodeid
        if any(node == slow or node.startswith(slow) for slow in SLOW_TESTS):
            item.add_marker(pytest.mark.slow)


def _order_line(config: pytest.Config) -> str:
    """How this run ordered the tests, and the command that replays that order."""
    if not config.pluginmanager.has_plugin("randomly"):
        return "test order: as written (pytest-randomly is not active)"
    seed = config.getoption("randomly_seed")
    return (
        f"test order: shuffled by pytest-randomly, seed {seed}; replay it with "
        f"--randomly-seed={seed} (CONTRIBUTING.md, 'Test order')"
    )


def pytest_sessionstart(session: pytest.Session) -> None:
    # pytest -q hides the report header, where pytest-randomly prints its seed; a run that
    # hangs or is killed still shows it here, at the start
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not hasattr(session.config, "workerinput"):
        reporter.write_line(_order_line(session.config))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    # and again at the end, beside the failures it may replay
    terminalreporter.write_line(_order_line(config))
