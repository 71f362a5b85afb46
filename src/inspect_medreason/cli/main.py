"""The ``medreason`` command: challenge I/O around Inspect eval logs."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from inspect_medreason.cli import official
from inspect_medreason.cli.challenge import (
    ChallengeError,
    case_specs,
    export_results,
    judge_scores_from_logs,
    log_files,
    submission_problems,
    write_results,
)
from inspect_medreason.cli.log_reading import MAX_ENTRY_BYTES
from inspect_medreason.core.files import (
    OutputPathError,
    OutputSet,
    cannot_write,
    check_writable_folder,
    claim_output,
    fill_folder_atomically,
    ignore_interruptions,
    interruptions_raise,
    output_path,
    pending_outputs,
    remedy,
    resolve_output,
    signal_name,
    signal_number,
    written,
)
from inspect_medreason.core.loaders import DatasetError, sample_data_dir
from inspect_medreason.core.user_files import (
    MAX_CALIBRATION_BYTES,
    MAX_DATA_BYTES,
    MAX_JSON_LOG_BYTES,
    MAX_RATINGS_BYTES,
    describe_limit,
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# End the help of every option that reads a file: the limits of core.user_files (a regular
# file, never a FIFO or a device, of at most this size), stated in docs/medreason_command.md.
DATA_FILE = f"; a regular file of at most {describe_limit(MAX_DATA_BYTES)}"
RATINGS_FILE = f"; each a regular file of at most {describe_limit(MAX_RATINGS_BYTES)}"
CALIBRATION_FILE = f"; a regular file of at most {describe_limit(MAX_CALIBRATION_BYTES)}"

# Ends the help of every output option: the rule docs/medreason_command.md states.
TOGETHER = (
    "; checked before any work, and written together with the command's other outputs at "
    "the end: all or none"
)


def _print_problems(title: str, problems: list[str]) -> None:
    print(f"{title} ({len(problems)}):", file=sys.stderr)
    for problem in problems:
        print(f"  - {problem}", file=sys.stderr)


def _print_notes(notes: list[str]) -> None:
    for note in notes:
        print(f"note: {note}", file=sys.stderr)


def cmd_export(args: argparse.Namespace) -> int:
    outputs = OutputSet(args.force, [*args.logs, args.cases])
    output = outputs.add(args.output)
    zip_path = outputs.add(args.zip) if args.zip else None
    skipped: list[str] = []
    logs = log_files(args.logs, skipped)
    report = export_results(logs, args.name, args.model)
    report.notes[:0] = skipped
    cases = case_specs(Path(args.cases)) if args.cases else None
    problems = report.problems + submission_problems(
        report.submission.model_dump(exclude_none=True), cases
    )
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if problems and not args.force:
        _print_problems(
            f"refusing to write {args.output}: the submission would be invalid", problems
        )
        return EXIT_FAILED
    if problems:
        _print_problems("writing an INVALID submission because of --force", problems)
    _print_notes(write_results(report.submission, outputs, output, zip_path))
    counts = {t: sum(a.task_type == t for a in report.submission.answers) for t in ("mcq", "open")}
    print(
        f"wrote {args.output} ({len(report.submission.answers)} answers: {counts['mcq']} mcq, "
        f"{counts['open']} open)" + (f" and {args.zip}" if args.zip else "")
    )
    return EXIT_OK


def cmd_judge_scores(args: argparse.Namespace) -> int:
    outputs = OutputSet(args.force, args.logs)
    output = outputs.add(args.output)
    skipped: list[str] = []
    document, left_out, notes = judge_scores_from_logs(
        log_files(args.logs, skipped), args.model, args.scorer
    )
    for note in [*skipped, *notes]:
        print(f"note: {note}", file=sys.stderr)
    _print_notes(outputs.write({output: json.dumps(document, indent=2) + "\n"}))
    print(f"wrote {args.output} ({len(document['scores'])} open cases)")
    if left_out:
        _print_problems("left out (not written as zeros)", left_out)
    return EXIT_OK


def _print_warnings(warnings: list[str], strict: bool) -> None:
    if not warnings:
        return
    title = (
        "refused because of --strict"
        if strict
        else "warnings (accepted as the official script accepts them; --strict refuses)"
    )
    print(f"{title} ({len(warnings)}):", file=sys.stderr)
    for warning in warnings:
        print(f"  - {warning}", file=sys.stderr)


def cmd_score(args: argparse.Namespace) -> int:
    outputs = OutputSet(args.force, [args.predictions, args.ground_truth, args.judge_scores])
    if args.output:
        outputs.add(args.output)
    outcome = official.ScoreOutcome()
    predictions = official.read_json(Path(args.predictions), "predictions", outcome)
    truth = official.read_json(Path(args.ground_truth), "ground truth", outcome)
    judged = (
        official.read_json(Path(args.judge_scores), "judge scores", outcome)
        if args.judge_scores
        else None
    )
    if outcome.problems:
        raise ChallengeError(outcome.problems)
    scored = official.score_like_official(predictions, truth, judged)
    text = official.metrics_text(scored.result, args.pretty, scored) if scored.result else None
    _print_warnings(scored.warnings, args.strict)
    if scored.refused(args.strict) or text is None:
        raise ChallengeError(scored.problems or ["refused: see the warnings above"])
    if args.output:
        _print_notes(outputs.write({Path(args.output): text + "\n"}))
        result = scored.result or {}
        print(
            json.dumps(
                {"metrics": result["metrics"], "counts": result["counts"]}, ensure_ascii=False
            )
        )
        print(f"wrote {args.output} ({result['counts']['num_cases']} cases)", file=sys.stderr)
    else:
        print(text)
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    verdict = official.Verdict()
    document = official.read_submission(Path(args.submission), verdict)
    cases = official.read_json(Path(args.cases), "cases", verdict) if args.cases else None
    count = 0
    if not verdict.problems:
        count = official.validate_like_official(document, cases, verdict)
    _print_warnings(verdict.warnings, args.strict)
    if verdict.refused(args.strict):
        _print_problems(f"{args.submission} is NOT a valid submission", verdict.problems)
        return EXIT_FAILED
    scope = (
        "against the cases file"
        if cases is not None
        else "(no --cases: labels and completeness not checked)"
    )
    print(f"{args.submission} is valid {scope}: {count} answers")
    return EXIT_OK


def _check_outputs(args: argparse.Namespace, inputs: list[str | None]) -> OutputSet:
    """Refuse a bad output path before reading anything: a refusal writes nothing."""
    outputs = OutputSet(args.force, inputs)
    for target in (args.output, args.plot):
        if target:
            outputs.add(target)
    return outputs


def _emit(
    args: argparse.Namespace, outputs: OutputSet, output: str, plot_png: Callable[[], bytes]
) -> None:
    """The report to --output or stdout and the plot to --plot, together: the plot is
    rendered before anything is written, and the files are written both or neither."""
    files: dict[Path, bytes | str] = {}
    if args.plot:
        files[Path(args.plot)] = plot_png()
    if args.output:
        files[Path(args.output)] = output
    _print_notes(outputs.write(files))
    if not args.output:
        print(output, end="" if output.endswith("\n") else "\n")
    for target in (args.output, args.plot):
        if target:
            print(f"wrote {target}", file=sys.stderr)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from inspect_medreason.cli.leaderboard import (
        collect_rows,
        plot_png,
        rank_rows,
        rank_stability,
        render,
    )

    outputs = _check_outputs(args, [*args.logs, args.calibration])
    skipped: list[str] = []
    board = collect_rows(
        log_files(args.logs, skipped),
        args.label_arg,
        args.include_partial,
        scorer=args.scorer,
        reducer=args.reducer,
    )
    board.notes[:0] = skipped
    for note in board.notes:
        print(f"note: {note}", file=sys.stderr)
    if not board.rows:
        raise ChallengeError(["no successful, complete eval log with MedReason metrics found"])
    board.rows = rank_rows(board.rows)
    if args.calibration:
        from inspect_medreason.cli.calibration import add_calibrated_means, read_calibration

        calibration = read_calibration(Path(args.calibration))
        # calibration reads each case's first judging: a re-judging's row is not calibrated
        rejudged = [row for row in board.rows if row.scores]
        add_calibrated_means([row for row in board.rows if not row.scores], calibration)
        board.notes.extend(
            f"{row.model}: not calibrated, its numbers are a re-judging's "
            f"({', '.join(sorted(set(row.scores.values())))})"
            for row in rejudged
        )
        board.notes.append(
            f"(calibrated) columns: the judges' scores mapped to {calibration.rater_count} "
            f"rater(s)' ratings by {args.calibration}; ranks use the raw metrics"
        )
    if args.bootstrap:
        stability_notes = rank_stability(board.rows, args.bootstrap)
        for note in stability_notes:
            print(f"note: {note}", file=sys.stderr)
        board.notes += stability_notes
    output = render(board, args.format, breakdown=args.breakdown)
    _emit(args, outputs, output, lambda: plot_png(board.rows))
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from inspect_medreason.cli.comparison import compare_runs, plot_png, read_run, render

    outputs = _check_outputs(args, [args.log_a, args.log_b, args.calibration])
    runs = read_run(Path(args.log_a)), read_run(Path(args.log_b))
    if args.calibration:
        from inspect_medreason.cli.calibration import add_calibrated_cases, read_calibration

        calibration = read_calibration(Path(args.calibration))
        for run in runs:
            add_calibrated_cases(run, calibration)
    comparison = compare_runs(*runs)
    for warning in comparison.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    output = render(comparison, args.format)
    _emit(args, outputs, output, lambda: plot_png(comparison))
    return EXIT_OK


def cmd_shift(args: argparse.Namespace) -> int:
    from inspect_medreason.cli.shift import build_report, plot_png, render

    outputs = _check_outputs(args, args.logs)
    report = build_report(args.logs)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    _emit(args, outputs, render(report, args.format), lambda: plot_png(report))
    return EXIT_OK


def cmd_agreement(args: argparse.Namespace) -> int:
    from inspect_medreason.cli.agreement import agreement, plot_png, read_ratings, render
    from inspect_medreason.cli.ratings_file import read_rating_round

    outputs = _check_outputs(args, [*args.logs, args.reference, *args.ratings])
    if args.reference and args.ratings:
        raise ChallengeError(
            [
                "--reference and --ratings key cases differently (case ids, a page's blinded "
                "ids): give one of them"
            ]
        )
    skipped: list[str] = []
    logs = log_files(args.logs, skipped)
    # with the logs: a rated case that is not on the page is named with its file's problems
    people = read_rating_round([Path(p) for p in args.ratings], logs) if args.ratings else None
    ratings, notes = read_ratings(logs, Path(args.reference) if args.reference else None, people)
    notes[:0] = skipped
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    if not any(len(raters) >= 2 for raters in ratings.values()):
        raise ChallengeError(
            [
                "fewer than two raters: give a log judged by a panel (--model-role grader_2=...), "
                "several logs judging the same cases, or --reference scores"
            ]
        )
    results = agreement(ratings)
    output = render(results, notes, args.format)
    _emit(args, outputs, output, lambda: plot_png(results))
    return EXIT_OK


def cmd_rate(args: argparse.Namespace) -> int:
    from inspect_medreason.cli.rating_page import build_page

    if not args.serve and not args.output:
        raise ChallengeError(["give --output PAGE.html (a page to send), or --serve"])
    if args.serve and not args.store:
        raise ChallengeError(["--serve writes every rating to a SQLite file: give --store FILE"])
    served_only = [f"--{n.replace('_', '-')}" for n in ("raters", "allow_host") if getattr(args, n)]
    if served_only and not args.serve:
        raise ChallengeError([f"{' and '.join(served_only)}: only with --serve (a served round)"])
    outputs = OutputSet(args.force, [*args.logs, args.data])
    output = outputs.add(args.output) if args.output else None
    skipped: list[str] = []
    logs = log_files(args.logs, skipped)
    page = build_page(
        logs,
        args.cases,
        args.seed,
        Path(args.data) if args.data else None,
        args.max_image_px or None,
    )
    for note in skipped + page.notes:
        print(f"note: {note}", file=sys.stderr)
    for warning in page.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if output is not None:
        _print_notes(outputs.write({output: page.html}))
        print(
            f"wrote {output} (page {page.page_id}: {page.cases} cases, "
            f"{len(page.html.encode('utf-8')) / 1e6:.1f} MB)"
        )
    for stratum, count in page.strata.items():
        print(f"  {count:4d}  {stratum}")
    if args.serve:
        from inspect_medreason.cli.rating_server import serve_round

        serve_round(page, Path(args.store), Path(args.data) if args.data else None, args)
    return EXIT_OK


def cmd_calibrate(args: argparse.Namespace) -> int:
    from inspect_medreason.cli.calibration import calibrate, render_report
    from inspect_medreason.cli.ratings_file import read_rating_round

    outputs = OutputSet(args.force, [*args.logs, *args.ratings])
    output = outputs.add(args.output)
    if args.report:
        outputs.add(args.report)
    skipped: list[str] = []
    logs = log_files(args.logs, skipped)
    people = read_rating_round([Path(p) for p in args.ratings], logs)
    document, results, notes = calibrate(logs, people, args.folds, args.seed)
    for note in skipped + notes:
        print(f"note: {note}", file=sys.stderr)
    report = render_report(document, results, args.format)
    files: dict[Path, bytes | str] = {output: json.dumps(document, indent=2) + "\n"}
    if args.report:
        files[Path(args.report)] = report
    _print_notes(outputs.write(files))
    if args.report:
        print(f"wrote {args.report}", file=sys.stderr)
    else:
        print(report, end="")
    print(f"wrote {output} ({people.page_id}: {len(people.scores)} rater(s))", file=sys.stderr)
    return EXIT_OK


def cmd_check_data(args: argparse.Namespace) -> int:
    from inspect_medreason.cli.audit import audit_data, render

    outputs = OutputSet(args.force, [args.data])
    if args.output:
        outputs.add(args.output)
    report = audit_data(args.data, min_side=args.min_side)
    text = render(report, args.format)
    if args.output:
        _print_notes(outputs.write({Path(args.output): text}))
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    print(
        f"check-data: {report.cases} cases; answer leakage in {len(report.leakage)}, "
        f"{len(report.conflicts)} conflicting and {len(report.duplicates)} duplicate question "
        f"group(s), {len(report.images)} image problem(s)",
        file=sys.stderr,
    )
    return EXIT_FAILED if args.strict and report.leakage else EXIT_OK


def _copy_demo_data(staging: Path) -> None:
    """The shipped demo data (not its code) into ``staging``, file by file: unlike
    ``shutil.copytree``, which gathers failures into one ``shutil.Error`` without their
    errno, the first failure (a full disk) is raised as itself, to be named as such."""
    source = sample_data_dir()
    for item in sorted(source.rglob("*")):
        relative = item.relative_to(source)
        if "__pycache__" in relative.parts or item.suffix == ".py":
            continue
        if item.is_dir():
            (staging / relative).mkdir(exist_ok=True)
        else:
            shutil.copy2(item, staging / relative)


def cmd_sample_data(args: argparse.Namespace) -> int:
    target = output_path(args.directory.rstrip("/") or args.directory)
    resolve_output(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ChallengeError([f"{target} exists and is not an empty folder; choose a new folder"])
    check_writable_folder(target)
    # Copied beside the target and renamed into place: an interrupted or failed copy (a full
    # disk) leaves nothing, neither the copy nor the folders made for it.
    claim_output(target)
    try:
        fill_folder_atomically(target, _copy_demo_data)
    except OSError as error:
        raise cannot_write(target, error) from error
    written(target)
    count = len(json.loads((target / "cases.json").read_text(encoding="utf-8"))["cases"])
    print(
        f"wrote the demo dataset ({count} cases) to {target}: cases.json, ground_truth.json, images/"
    )
    print(
        f"try: inspect eval inspect_medreason/mcq --model medreason/pipeline-check -T data={target}"
    )
    return EXIT_OK


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1 or value > 100_000:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number from 1 to 100000")
    return value


def _non_negative_int(text: str) -> int:
    """An image size for ``rate --max-image-px``: 0 (off) or 64 to 65535 pixels."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value != 0 and not 64 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r}: give 0 (as logged) or 64 to 65535 pixels")
    return value


def _add_report_arguments(
    parser: argparse.ArgumentParser, formats: list[str], output: str, plot: str
) -> None:
    parser.add_argument("--format", choices=formats, default=formats[0])
    parser.add_argument("--output", help=output + TOGETHER)
    parser.add_argument("--plot", help=plot + TOGETHER)
    parser.add_argument("--force", action="store_true", help="overwrite output files")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="medreason",
        description="MedReason 2026 challenge workflow around Inspect eval logs. Every file "
        "it reads must be a regular file (a FIFO or a device is refused): an eval log named "
        f"or found in a folder (a .json log at most {describe_limit(MAX_JSON_LOG_BYTES)}, "
        f"each entry of a .eval log at most {describe_limit(MAX_ENTRY_BYTES)}); the limit of "
        "every other file is in its option's help.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    export = commands.add_parser(
        "export",
        help="write the official results.json (and zip) from eval logs",
        description="Write the official results.json v1.0 from logs of the mcq, open_ended or "
        "medreason tasks (several logs are merged). Refuses to write an invalid file unless "
        "--force.",
    )
    export.add_argument("logs", nargs="+", metavar="LOG", help="eval log files or folders")
    export.add_argument("--output", required=True, help="results.json to write" + TOGETHER)
    export.add_argument(
        "--zip", help="also write a submission zip holding only results.json" + TOGETHER
    )
    export.add_argument("--name", help="submission name (default: the model names)")
    export.add_argument(
        "--model", help="the model whose runs to export, when the logs hold several's"
    )
    export.add_argument(
        "--cases", help="validate completeness and labels against this cases.json" + DATA_FILE
    )
    export.add_argument(
        "--force", action="store_true", help="write even if invalid; overwrite files"
    )
    export.set_defaults(handler=cmd_export)

    judge = commands.add_parser(
        "judge-scores",
        help="write the official judge_scores.json from judged logs",
        description="Write {'scores': [{case_id, gt_final, va_answer, rvf_trace}]} for every "
        "open case whose three components were scored; unscored ones are reported and left "
        "out, never written as zeros.",
    )
    judge.add_argument("logs", nargs="+", metavar="LOG")
    judge.add_argument("--output", required=True, help="judge_scores.json to write" + TOGETHER)
    judge.add_argument(
        "--model", help="the model whose judged runs to write, when the logs hold several's"
    )
    judge.add_argument(
        "--scorer",
        metavar="NAME",
        help="of a log judged several times (inspect score --action append), the score to "
        "write (open_ended_scorer, open_ended_scorer1, ...); refused without it",
    )
    judge.add_argument("--force", action="store_true", help="overwrite the output file")
    judge.set_defaults(handler=cmd_judge_scores)

    score = commands.add_parser(
        "score",
        help="score like the official scoring.py",
        description="The official scoring.py, decision for decision and byte for byte: MCQ "
        "exact match on answer.strip(), the VA gate on judge scores, statistics.mean (null "
        "for an absent track). Refuses what it refuses (missing, extra, duplicate or "
        "mismatched cases, a blank answer or open reasoning_trace, a judge row without a "
        "score) and lists every problem. Values it accepts outside the rubric (NaN, 7, "
        "'3', rows for unknown cases) are accepted with a warning; --strict refuses them.",
    )
    score.add_argument(
        "--predictions", required=True, help="results.json (or a bare list)" + DATA_FILE
    )
    score.add_argument("--ground-truth", required=True, help="ground_truth.json" + DATA_FILE)
    score.add_argument(
        "--judge-scores", help="judge_scores.json (needed when there are open cases)" + DATA_FILE
    )
    score.add_argument(
        "--output", help="write the metrics JSON here (prints only the metrics)" + TOGETHER
    )
    score.add_argument(
        "--pretty", action="store_true", help="indent the JSON, as the official --pretty"
    )
    score.add_argument("--strict", action="store_true", help="refuse values outside the rubric")
    score.add_argument("--force", action="store_true", help="overwrite the output file")
    score.set_defaults(handler=cmd_score)

    validate = commands.add_parser(
        "validate",
        help="check a submission (.json or .zip) as validate_submission.py does",
        description="Refuse exactly what the official validate_submission.py refuses, listing "
        "every problem; warn (exit 0) where the official documentation is stricter than its "
        "validator (extra zip members, a missing version); --strict refuses those too.",
    )
    validate.add_argument("submission", help="results.json or a submission .zip" + DATA_FILE)
    validate.add_argument(
        "--cases",
        "--cases-json",
        dest="cases",
        help="the cases.json it answers (checks labels and completeness)" + DATA_FILE,
    )
    validate.add_argument("--strict", action="store_true", help="refuse on warnings too")
    validate.set_defaults(handler=cmd_validate)

    board = commands.add_parser(
        "leaderboard",
        help="rank models from eval logs as the challenge does",
        description="One row per model: MCQ Accuracy, Open-ended GT, Open-ended VA, the rank on "
        "each (ties share the average rank), the mean rank and the overall position.",
    )
    board.add_argument("logs", nargs="+", metavar="LOG_OR_DIR")
    _add_report_arguments(
        board,
        ["md", "csv", "json", "html"],
        "write the table here instead of printing it",
        "write a PNG with the three metrics side by side per model",
    )
    board.add_argument(
        "--breakdown", action="store_true", help="add per-category results (in the same format)"
    )
    board.add_argument(
        "--include-partial",
        action="store_true",
        help="show runs over part of the cases (--limit, --sample-id, unfinished) as their own "
        "unranked rows instead of leaving them out",
    )
    board.add_argument(
        "--label-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="keep runs apart by this task argument, e.g. --label-arg images (repeatable)",
    )
    board.add_argument(
        "--scorer",
        metavar="NAME",
        help="of a log judged several times (inspect score --action append), only this score "
        "(open_ended_scorer, open_ended_scorer1, ...); by default a row for each",
    )
    board.add_argument(
        "--reducer",
        metavar="NAME",
        help="of a run reduced several ways over its epochs (--epochs-reducer mean,max), only "
        "this reducer's numbers; by default a row for each",
    )
    board.add_argument(
        "--bootstrap",
        type=_positive_int,
        default=0,
        metavar="N",
        help="resample the cases N times and report how often each model holds each overall "
        "position, and its 95%% range of positions (reads every log's samples)",
    )
    board.add_argument(
        "--calibration",
        metavar="FILE",
        help="add the judge metrics calibrated to people's ratings (a 'medreason calibrate' "
        "file) beside the raw ones, labelled (calibrated), with intervals" + CALIBRATION_FILE,
    )
    board.set_defaults(handler=cmd_leaderboard)

    compare = commands.add_parser(
        "compare",
        help="is run B really better than run A? a paired comparison of two logs",
        description="On the cases both logs scored: each metric's difference (B - A) with a "
        "paired bootstrap 95% interval, McNemar's exact test (MCQ) or the Wilcoxon signed-rank "
        "test (judge components), the smallest detectable difference, and the differences per "
        "modality and organ system.",
    )
    compare.add_argument("log_a", metavar="LOG_A", help="the reference run (A)")
    compare.add_argument("log_b", metavar="LOG_B", help="the run compared with it (B)")
    compare.add_argument(
        "--calibration",
        metavar="FILE",
        help="also compare the judge metrics calibrated to people's ratings (a 'medreason "
        "calibrate' file), labelled (calibrated), beside the raw ones" + CALIBRATION_FILE,
    )
    _add_report_arguments(
        compare,
        ["md", "json", "html"],
        "write the report here instead of printing it",
        "write a PNG of the differences with their intervals",
    )
    compare.set_defaults(handler=cmd_compare)

    shift = commands.add_parser(
        "shift",
        help="how much each model loses under image-quality shifts, against its clean run",
        description="Pairs each shifted run (-T shift=... -T severity=1..3) with the clean run "
        "of the same model and task on the same cases (refusing, by name, runs that cannot be "
        "paired) and reports per metric and modality the change with a paired bootstrap 95% "
        "interval, answer consistency and how often replies call the image poor "
        "(docs/shift.md).",
    )
    shift.add_argument("logs", nargs="+", metavar="LOGS", help="eval logs or folders of them")
    _add_report_arguments(
        shift,
        ["md", "json", "html"],
        "write the report here instead of printing it",
        "write a PNG of each metric against severity, one panel per shift and metric",
    )
    shift.set_defaults(handler=cmd_shift)

    agree = commands.add_parser(
        "agreement",
        help="how far the judges agree with each other, with reference scores and with "
        "people's ratings",
        description="Per component: weighted kappa, exact and within-one agreement, Spearman, "
        "mean absolute error, ICC(2,1), bias and confusion for each pair of raters (judges, a "
        "--reference, and with --ratings each person as rater:<name>: judges against each "
        "person, people with each other); Krippendorff's alpha and ICC for all and for the "
        "people alone; score distributions; 95% bootstrap intervals over cases.",
    )
    agree.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="judged open-ended logs")
    agree.add_argument(
        "--reference", help="reference scores in the judge_scores.json format" + DATA_FILE
    )
    agree.add_argument(
        "--ratings",
        nargs="+",
        default=[],
        metavar="FILE",
        help="people's ratings saved from a 'medreason rate' page (one file per rater), or "
        "the --store of a served round, of these logs: each person becomes a rater, "
        "rater:<name>" + RATINGS_FILE,
    )
    _add_report_arguments(
        agree,
        ["md", "json", "html"],
        "write the report here instead of printing it",
        "write a PNG of confusion heat maps and distributions",
    )
    agree.set_defaults(handler=cmd_agreement)

    rate = commands.add_parser(
        "rate",
        help="write a rating page: clinicians score a blinded sample of judged cases",
        description="Write one self-contained HTML page (works offline, from a file) showing "
        "a stratified sample of judged open-ended cases one at a time (images, question, "
        "reference, the model's answer and reasoning trace, the rubric's 0-4 anchors), blinded "
        "to the judges' scores and the model. Raters save their ratings as a JSON file; "
        "with --serve the page is served to a team and every rating goes to a SQLite store "
        "as it is given. 'agreement --ratings' and 'calibrate' read either with the same logs.",
    )
    rate.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="judged open-ended logs")
    rate.add_argument("--output", help="the .html page to write" + TOGETHER)
    rate.add_argument(
        "--serve",
        action="store_true",
        help="serve the page to a team (until Ctrl-C), writing every rating to --store as it "
        "is given; restart with the same logs, --cases, --seed and --store to go on",
    )
    rate.add_argument("--store", help="the SQLite file of a served round's ratings")
    rate.add_argument(
        "--host", default="127.0.0.1", help="the address to serve on (127.0.0.1: this machine)"
    )
    rate.add_argument("--port", type=int, default=8765, help="the port to serve on (8765)")
    rate.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a name raters reach the server by (its DNS name, a proxy's, NAME:PORT for one "
        "port only); requests naming any other host are refused (repeatable)",
    )
    rate.add_argument(
        "--raters",
        metavar="NAME,NAME|@FILE",
        help="one link per rater, whose token rates under that name only (else one link "
        "for all, and raters type their names); @FILE reads the names from a file, one a line",
    )
    rate.add_argument("--cases", type=_positive_int, default=60, help="cases on the page (60)")
    rate.add_argument(
        "--seed", type=int, default=0, help="the sample's seed: same seed, same page (0)"
    )
    rate.add_argument(
        "--data",
        help="the data folder to read images from when a log holds none (a blind-control run, "
        "--no-log-images); default: the folder the run recorded",
    )
    rate.add_argument(
        "--max-image-px",
        type=_non_negative_int,
        default=1024,
        metavar="PX",
        help="scale images larger than PX pixels on their long side down to it for the page "
        "(the logs keep the originals; the page's key says so); 0: as logged (1024)",
    )
    rate.add_argument("--force", action="store_true", help="overwrite the output file")
    rate.set_defaults(handler=cmd_rate)

    calibrate = commands.add_parser(
        "calibrate",
        help="fit a monotone map from judge scores to people's ratings (isotonic regression)",
        description="Per component (GT, VA, RVF, VA_final), on the cases people rated on a "
        "'medreason rate' page, fit the judge score -> the people's mean rating by isotonic "
        "regression; report cross-validated MAE, Spearman and weighted kappa before and after "
        "with 95% intervals; write a calibration file for 'leaderboard' and 'compare "
        "--calibration'. Refuses fewer than 30 rated cases per component.",
    )
    calibrate.add_argument("logs", nargs="+", metavar="LOG_OR_DIR", help="the page's logs")
    calibrate.add_argument(
        "--ratings",
        nargs="+",
        required=True,
        metavar="FILE",
        help="one ratings file per rater, or the --store of a served round" + RATINGS_FILE,
    )
    calibrate.add_argument(
        "--output", required=True, help="the calibration file (.json)" + TOGETHER
    )
    calibrate.add_argument("--format", choices=["md", "json"], default="md")
    calibrate.add_argument(
        "--report", help="write the report here instead of printing it" + TOGETHER
    )
    calibrate.add_argument(
        "--folds", type=_positive_int, default=5, help="cross-validation folds (5)"
    )
    calibrate.add_argument("--seed", type=int, default=0, help="the folds' seed (0)")
    calibrate.add_argument("--force", action="store_true", help="overwrite output files")
    calibrate.set_defaults(handler=cmd_calibrate)

    check = commands.add_parser(
        "check-data",
        help="audit a data set: answer leakage, conflicts, duplicates, balance, images",
        description="Before training or evaluating on DATA (a cases file, a folder or an unzipped "
        "release): reference reasoning that contains the answer, the same image and question "
        "with conflicting answers, duplicate questions, MCQ answer-label balance, cases per "
        "modality and organ system, images that are missing, undecodable or tiny.",
    )
    check.add_argument("data", metavar="DATA")
    check.add_argument("--format", choices=["md", "json"], default="md")
    check.add_argument("--output", help="write the report here instead of printing it" + TOGETHER)
    check.add_argument("--force", action="store_true", help="overwrite the output file")
    check.add_argument(
        "--strict", action="store_true", help="exit 1 when any case leaks its answer"
    )
    check.add_argument(
        "--min-side",
        type=_positive_int,
        default=32,
        help="images smaller than this many pixels on a side are tiny (32)",
    )
    check.set_defaults(handler=cmd_check_data)

    sample = commands.add_parser(
        "sample-data",
        help="write the shipped demo dataset to a folder",
        description="Copy the demo dataset (cases.json, ground_truth.json, images/) to a new "
        "or empty folder, to see the format and start from it.",
    )
    sample.add_argument(
        "directory",
        help="the new or empty folder to write; checked before copying, and removed again "
        "with any folder made for it if the copy fails",
    )
    sample.set_defaults(handler=cmd_sample_data)
    return parser


# The outputs that are printed to standard output when not given: for them ``-`` is standard
# output. Every other output (a zip, a PNG, a file the command must write) refuses ``-``.
STDOUT_OUTPUTS = {
    ("score", "output"),
    ("leaderboard", "output"),
    ("compare", "output"),
    ("agreement", "output"),
    ("check-data", "output"),
    ("calibrate", "report"),
}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for command, option in STDOUT_OUTPUTS:
        if args.command == command and getattr(args, option, None) == "-":
            setattr(args, option, None)
    try:
        with interruptions_raise():
            try:
                return int(args.handler(args))
            except KeyboardInterrupt as interruption:
                ignore_interruptions()  # a second Ctrl-C does not cut the message short
                return _interrupted(args.command, interruption)
    except OutputPathError as error:  # already one line naming the path and what to do
        print(f"medreason {args.command}: {error}", file=sys.stderr)
        return EXIT_FAILED
    except (ChallengeError, DatasetError) as error:
        print(f"medreason {args.command}: error:\n{error}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as error:
        # A failure of the file system (or the network under it) that no reader turned into
        # its own message: still one line, naming the path when the error carries one. Any
        # other exception is a bug and keeps its traceback.
        print(f"medreason {args.command}: {_describe_os_error(error)}", file=sys.stderr)
        return EXIT_FAILED


def _interrupted(command: str, interruption: KeyboardInterrupt) -> int:
    """Ctrl-C, SIGTERM, SIGHUP: every write's clean-up has run; one line, no traceback."""
    unwritten = pending_outputs()
    what = (
        f"not written: {', '.join(map(str, unwritten))} (any previous version is as it was, "
        "and no temporary file is left)"
        if unwritten
        else "nothing was being written"
    )
    print(
        f"medreason {command}: interrupted by {signal_name(interruption)}; {what}",
        file=sys.stderr,
    )
    return 128 + signal_number(interruption)


def _describe_os_error(error: OSError) -> str:
    reason = error.strerror or str(error) or type(error).__name__
    paths = " -> ".join(str(p) for p in (error.filename, error.filename2) if p is not None)
    if paths:
        return f"cannot use {paths}: {reason}; {remedy(error)}"
    return f"{reason}; check the files and folders given and run again"
