"""The upstream reproductions and benches in perf/ run offline and report what they measure."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_perf_script(script: str, *args: str, timeout: int = 300) -> str:
    """Run ``perf/<script>`` with ``args``; its stdout, once it has exited 0."""
    run = subprocess.run([sys.executable, str(ROOT / "perf" / script), *args],
                         capture_output=True, text=True, check=False, timeout=timeout)  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_metrics_pass_reproduction_runs_and_reports_a_ratio() -> None:
    stdout = run_perf_script("repro_metrics_pass.py", "--samples", "20")
    passes = re.findall(r"(4-key dictionary|float) score: one metrics pass over 20 samples: "
                        r"(\d+\.\d{3}) s", stdout)  # fmt: skip
    assert [name for name, _ in passes] == ["4-key dictionary", "float"]
    assert re.search(r"^ratio: \d+\.\dx$", stdout, re.M)


def test_the_reply_parser_bench_runs_every_parser_and_reports_no_failure(tmp_path: Path) -> None:
    output = tmp_path / "parsers.json"
    stdout = run_perf_script("bench_parsers.py", "--size", "2000", "--output", str(output))
    assert re.search(r"^14 parsers x \d+ replies: 0 failure\(s\)$", stdout, re.M)
    result = json.loads(output.read_text(encoding="utf-8"))
    assert result["reply_chars"] == 2000 and len(result["parsers"]) == 14
    assert all(row["failures"] == [] and row["worst_reply"] for row in result["parsers"].values())


def test_the_system_prompt_reproduction_reports_every_variant(tmp_path: Path) -> None:
    output = tmp_path / "repro.json"
    run_perf_script("repro_system_prompt.py", "--samples", "12", "--repeats", "1", "--side",
                    "32", "--output", str(output), timeout=600)  # fmt: skip
    timings = json.loads(output.read_text(encoding="utf-8"))["timings"]
    assert timings["samples"] == 12 and timings["repeats"] == 1
    floor = timings["no_system"]["log_bytes_per_sample"]
    for variant in ("system_config", "system_solver"):
        # the system prompt is logged with every sample: a run without it writes less
        assert timings[variant]["log_bytes_per_sample"] > floor
        assert set(timings["ratio_vs_no_system"][variant]) == {
            "seconds", "cpu_seconds", "log_bytes_per_sample"}


def test_the_sample_metadata_reproduction_reports_every_variant(tmp_path: Path) -> None:
    output = tmp_path / "repro.json"
    run_perf_script("repro_sample_metadata.py", "--samples", "12", "--repeats", "1", "--side",
                    "32", "--output", str(output), timeout=600)  # fmt: skip
    timings = json.loads(output.read_text(encoding="utf-8"))["timings"]
    assert timings["samples"] == 12 and timings["repeats"] == 1
    floor = timings["no_metadata"]["log_bytes_per_sample"]
    for variant in ("six_keys", "six_numbers"):
        # the metadata is logged with every sample: a run without it writes less
        assert timings[variant]["log_bytes_per_sample"] > floor
        assert set(timings["ratio_vs_no_metadata"][variant]) == {
            "seconds", "cpu_seconds", "log_bytes_per_sample"}


def test_the_metadata_reproduction_carries_the_plugins_keys_and_nothing_else(
    tmp_path: Path,
) -> None:
    from inspect_ai import eval

    from inspect_medreason.medreason.medreason import mcq

    sys.path.insert(0, str(ROOT / "perf"))
    try:
        import repro_sample_metadata as repro
        from bench_mcq import make_dataset, scripted_model
    finally:
        sys.path.remove(str(ROOT / "perf"))
    make_dataset(tmp_path / "data", 2, 16)
    logged: dict[str, object] = {}
    for variant in ("no_metadata", "six_keys", "six_numbers"):
        [log] = eval(repro.task(tmp_path / "data", variant), model=scripted_model(),
                     display="none", log_dir=str(tmp_path / variant))  # fmt: skip
        assert log.status == "success"
        logged[variant] = (log.samples or [])[0].metadata
    [plugin_log] = eval(mcq(data=str(tmp_path / "data")), model=scripted_model(),
                        display="none", log_dir=str(tmp_path / "plugin"))  # fmt: skip
    assert plugin_log.status == "success"
    plugin_metadata = (plugin_log.samples or [])[0].metadata
    assert logged["no_metadata"] == {}
    assert logged["six_keys"] == plugin_metadata  # the same keys and values as the plugin's
    assert isinstance(logged["six_numbers"], dict)
    assert set(logged["six_numbers"]) == set(plugin_metadata)
    assert all(isinstance(value, int) for value in logged["six_numbers"].values())


def test_both_ways_of_sending_the_system_prompt_send_the_model_the_same_messages(
    tmp_path: Path,
) -> None:
    from inspect_ai import eval
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import resolve_sample_attachments

    sys.path.insert(0, str(ROOT / "perf"))
    try:
        import repro_system_prompt as repro
        from bench_mcq import make_dataset, scripted_model
    finally:
        sys.path.remove(str(ROOT / "perf"))
    make_dataset(tmp_path / "data", 2, 16)
    sent: dict[str, list[tuple[str, str]]] = {}
    for variant in ("system_config", "system_solver"):
        [log] = eval(repro.task(tmp_path / "data", variant), model=scripted_model(),
                     display="none", log_dir=str(tmp_path / variant))  # fmt: skip
        assert log.status == "success"
        [sample, *_] = log.samples or []
        sample = resolve_sample_attachments(sample)
        [event] = [event for event in sample.events if isinstance(event, ModelEvent)]
        sent[variant] = [(message.role, message.text) for message in event.input]
    assert sent["system_config"] == sent["system_solver"]
    assert sent["system_config"][0] == ("system", repro.SYSTEM)


def test_the_load_time_prompt_variant_sends_what_the_plugins_solver_sends(
    tmp_path: Path,
) -> None:
    """bench_mcq's design-before-the-solver variant is a fair comparison: the model is sent
    the same messages (system prompt, images, rendered user text) and the scores agree."""
    from inspect_ai import eval
    from inspect_ai.event import ModelEvent
    from inspect_ai.log import resolve_sample_attachments

    from inspect_medreason.medreason.medreason import mcq

    sys.path.insert(0, str(ROOT / "perf"))
    try:
        from bench_mcq import load_time_prompt_task, make_dataset, scripted_model
    finally:
        sys.path.remove(str(ROOT / "perf"))
    make_dataset(tmp_path / "data", 3, 16)
    sent: dict[str, list[list[tuple[str, str, int]]]] = {}
    scores: dict[str, list[object]] = {}
    for name, task in (("plugin", mcq(data=str(tmp_path / "data"))),
                       ("load_time", load_time_prompt_task(tmp_path / "data"))):  # fmt: skip
        [log] = eval(task, model=scripted_model(), display="none", log_dir=str(tmp_path / name))
        assert log.status == "success"
        sent[name], scores[name] = [], []
        for sample in log.samples or []:
            sample = resolve_sample_attachments(sample)
            [event] = [event for event in sample.events if isinstance(event, ModelEvent)]
            sent[name].append([
                (message.role, message.text, len(message.content) if isinstance(
                    message.content, list) else 0)
                for message in event.input
            ])  # fmt: skip
            scores[name].append(sample.scores["mcq_scorer"].value if sample.scores else None)
    assert sent["plugin"] == sent["load_time"]
    assert [roles for roles, *_ in sent["plugin"][0]] == ["system", "user"]
    assert "Options:" in sent["plugin"][0][1][1]  # the rendered prompt, not the bare question
    assert scores["plugin"] == scores["load_time"] and None not in scores["plugin"]


def test_the_plugin_code_bench_times_each_part_per_case(tmp_path: Path) -> None:
    output = tmp_path / "plugin_code.json"
    run_perf_script("bench_plugin_code.py", "--cases", "8", "--side", "16", "--repeats", "1",
                    "--output", str(output))  # fmt: skip
    result = json.loads(output.read_text(encoding="utf-8"))
    assert set(result["per_case_us"]) == {"load", "prompt", "score"}
    assert all(value > 0 for value in result["per_case_us"].values())
    assert result["total_per_case_us"] == round(sum(result["per_case_us"].values()), 2)
    # beside bare Inspect's per-case wall time from the committed MCQ results
    share = result["total_per_case_us"] / result["bare_inspect_per_case_us"]
    assert abs(result["share_of_bare_case"] - share) < 1e-3
