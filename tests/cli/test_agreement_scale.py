"""medreason agreement as its input grows: the pair statistics on all resamples at once equal
the one-resample-at-a-time bootstrap, the written-out ICC equals pingouin's, and many logs or
a large reference finish in seconds or are refused saying how to narrow the input."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from inspect_ai.log import read_eval_log, write_eval_log
from utils.rated_logs import judged_log

from inspect_medreason.analysis.agreement import (
    MAX_RATERS,
    Estimate,
    _pair,
    icc_two_way,
    image_bootstrap_estimate,
    quadratic_kappa,
    spearman,
)
from inspect_medreason.cli import main
from inspect_medreason.core.intervals import clustered_mean_interval


def _same(ours: Estimate, expected: Estimate) -> None:
    for mine, theirs in (
        (ours.value, expected.value),
        (ours.interval.lower, expected.interval.lower),
        (ours.interval.upper, expected.interval.upper),
    ):
        assert (np.isnan(mine) and np.isnan(theirs)) or mine == pytest.approx(theirs, abs=1e-12)


def test_pair_statistics_on_all_resamples_equal_the_bootstrap_one_at_a_time() -> None:
    """Also when cases share images: each resample of the pair's table (kappa, Spearman) is
    the one-at-a-time resample that repeats each case as often as its image was drawn; the
    means (exact, within one, bias, MAE) are the clustered mean interval on their scale."""
    rng = np.random.default_rng(11)
    for attempt in range(8):
        size = int(rng.integers(2, 80))
        spread = int(rng.integers(1, 6))
        a = rng.integers(0, spread, size)
        b = np.where(rng.random(size) < rng.random(), a, rng.integers(0, 5, size))
        cases = [f"c{i}" for i in range(size)]
        by_rater = {
            "x": dict(zip(cases, a.tolist(), strict=True)),
            "y": dict(zip(cases, b.tolist(), strict=True)),
        }
        # every other attempt each case is on its own image; else images of 1-8 cases
        images = {
            c: c if attempt % 2 else f"image{int(rng.integers(0, 1 + size // 4))}" for c in cases
        }
        codes = [
            sorted(set(images.values()), key=list(images.values()).index).index(images[c])
            for c in cases
        ]
        pair = _pair("x", "y", cases, by_rater, images)

        def loop(
            statistic: Callable[[Any, Any], float],
            a: np.ndarray = a,
            b: np.ndarray = b,
            codes: list[int] = codes,
        ) -> Estimate:
            return image_bootstrap_estimate(lambda idx: statistic(a[idx], b[idx]), codes)

        _same(pair.kappa, loop(quadratic_kappa))
        _same(pair.spearman, loop(spearman))
        # the means have the interval every mean in the product has, counting images
        names = [images[c] for c in cases]
        for found, values, bottom, top in (
            (pair.exact, a == b, 0.0, 1.0),
            (pair.within_one, np.abs(a - b) <= 1, 0.0, 1.0),
            (pair.bias, b - a, -4.0, 4.0),
            (pair.mae, np.abs(b - a), 0.0, 4.0),
        ):
            expected = clustered_mean_interval(values.astype(float), names, top, bottom=bottom)
            _same(found, Estimate(float(np.mean(values)), expected))


def test_the_icc_equals_pingouins_icc_a1() -> None:
    import pandas as pd
    import pingouin

    rng = np.random.default_rng(5)
    for _ in range(60):
        cases, raters = int(rng.integers(2, 40)), int(rng.integers(2, 6))
        matrix = rng.integers(0, int(rng.integers(2, 6)), (cases, raters)).astype(float)
        if rng.random() < 0.3:  # raters that agree closely
            matrix = np.repeat(matrix[:, :1], raters, axis=1) + (rng.random((cases, raters)) < 0.1)
        ours = icc_two_way(matrix)
        if np.all(matrix == matrix.flat[0]):
            assert np.isnan(ours.value)
            continue
        long = pd.DataFrame(
            {
                "case": np.repeat(np.arange(cases), raters),
                "rater": np.tile(np.arange(raters), cases),
                "score": matrix.reshape(-1),
            }
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = pingouin.intraclass_corr(
                data=long, targets="case", raters="rater", ratings="score"
            ).set_index("Type")
        row = table.loc["ICC(A,1)" if "ICC(A,1)" in table.index else "ICC2"]
        expected = (float(row["ICC"]), *(float(v) for v in row["CI95"]))
        got = (ours.value, ours.interval.lower, ours.interval.upper)
        for mine, theirs in zip(got, expected, strict=True):
            assert (np.isnan(mine) and np.isnan(theirs)) or mine == pytest.approx(theirs)


def test_agreement_on_many_logs_and_a_large_reference_is_fast_or_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Scaled down from perf/bench_agreement.py (2,000 logs, a 100,000-row reference): 120
    logs are refused, in one line naming the bound and how to narrow the input, after
    reading only the logs that pass it; MAX_RATERS logs finish; a 20,000-row reference of
    which the log's 8 cases match finishes, its unmatched rows out of alpha."""
    source = judged_log(tmp_path, 8)
    log = read_eval_log(str(source))
    assert log.status == "success"
    many = tmp_path / "many"
    # each copy a judging of its own (agreement counts one judging held by several files once)
    judged = [score for sample in log.samples or [] for score in (sample.scores or {}).values()]
    explanations = [score.explanation for score in judged]
    for index in range(120):
        log.eval.eval_id, log.eval.task_id = f"e{index}", f"t{index}"
        for score, explanation in zip(judged, explanations, strict=True):
            score.explanation = f"{explanation} (judging {index})"
        write_eval_log(log, str(many / f"run_{index:04d}.eval"))
    start = time.perf_counter()
    assert main(["agreement", str(many), "--format", "json"]) == 1
    assert time.perf_counter() - start < 20
    err = capsys.readouterr().err
    assert f"{MAX_RATERS + 1} raters after" in err and f"at most {MAX_RATERS}" in err
    assert "Name fewer logs" in err

    bounded = tmp_path / "bounded"
    bounded.mkdir()
    for path in sorted(many.iterdir())[:MAX_RATERS]:
        (bounded / path.name).write_bytes(path.read_bytes())
    start = time.perf_counter()
    assert main(["agreement", str(bounded), "--format", "json"]) == 0
    assert time.perf_counter() - start < 30
    report = json.loads(capsys.readouterr().out)
    pairs = MAX_RATERS * (MAX_RATERS - 1) // 2
    assert [len(c["pairs"]) for c in report["components"]] == [pairs] * 4

    scores = tmp_path / "judge_scores.json"
    assert main(["judge-scores", str(source), "--output", str(scores)]) == 0
    rows = json.loads(scores.read_text(encoding="utf-8"))["scores"]
    assert len(rows) == 8
    rows += [
        {"case_id": f"other{n}", "gt_final": n % 5, "va_answer": 2, "rvf_trace": 4}
        for n in range(20_000)
    ]
    reference = tmp_path / "reference.json"
    reference.write_text(json.dumps({"scores": rows}), encoding="utf-8")
    capsys.readouterr()
    start = time.perf_counter()
    assert main(["agreement", str(source), "--reference", str(reference), "--format", "json"]) == 0
    assert time.perf_counter() - start < 20
    gt = json.loads(capsys.readouterr().out)["components"][0]
    assert gt["icc_cases"] == 8
    assert "20000 case(s) scored by one rater only" in " ".join(gt["notes"])
    assert sum(gt["distributions"]["reference"]) == 20_008
