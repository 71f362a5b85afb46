"""The shift report's statistics, checked by simulation: datasets whose cases share images,
answered by the image-sensitive reference model's own rule (a case is answered right when
the measured clarity of its image reaches the clarity its question needs) on images degraded
by the project's own shifts. The interval of the change covers the true change 93-97% of
the time and the test raises a false alarm at most 6% of the time at 5%; the figures are in
docs/shift.md. Also: what cannot be estimated says why."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from inspect_medreason.core import strict_json
from inspect_medreason.core.image_quality import clarity, measure
from inspect_medreason.core.intervals import (
    CLUSTER_TEST,
    NO_DISCORDANCE,
    clustered_paired_change,
)
from inspect_medreason.core.offline_model import CLEAR_FROM, CLEAR_SPAN
from inspect_medreason.core.shift.catalog import MODEL_PARAMETERS
from inspect_medreason.core.shift.degrade import degrade_image

POOL = 240  # distinct images
IMAGES = 40  # images per dataset
DATASETS = 500
NOISE_DRAWS = 6


def synthetic_image(rng: np.random.Generator) -> Image.Image:
    """A 96-pixel picture with structure at a random scale, edges and its own noise."""
    field = ndimage.gaussian_filter(rng.random((96, 96)), rng.uniform(1.0, 6.0))
    field = (field - field.min()) / max(float(np.ptp(field)), 1e-9)
    for _ in range(rng.integers(1, 4)):
        top, left = rng.integers(0, 70, 2)
        field[top : top + rng.integers(8, 26), left : left + rng.integers(8, 26)] += 0.4
    field += rng.normal(0.0, rng.uniform(0.0, 0.02), field.shape)
    return Image.fromarray((np.clip(field / 1.4, 0, 1) * 255).astype(np.uint8), mode="L")


def seen(image: Image.Image, model: str, severity: int, draw: int) -> float:
    shifted = degrade_image(
        image, model, MODEL_PARAMETERS[model][severity], np.random.default_rng(draw)
    )
    return clarity(measure(shifted))


@dataclass
class Pool:
    """The reference model's clarity of each image (rows), clean and shifted."""

    clean: np.ndarray  # image -> clarity
    downsample: np.ndarray  # image -> clarity under downsample 2
    noise: dict[int, np.ndarray]  # severity -> image x draw -> clarity under shot noise


@pytest.fixture(scope="module")
def pool() -> Pool:
    rng = np.random.default_rng(52)
    images = [synthetic_image(rng) for _ in range(POOL)]
    return Pool(
        np.array([clarity(measure(image)) for image in images]),
        np.array([seen(image, "downsample", 2, 0) for image in images]),
        {
            severity: np.array(
                [
                    [seen(image, "poisson_linear", severity, d) for d in range(NOISE_DRAWS)]
                    for image in images
                ]
            )
            for severity in (2, 3)
        },
    )


def right_share(clarities: np.ndarray) -> np.ndarray:
    """The share of questions answered right at each clarity (needed clarity is uniform)."""
    return np.clip((clarities - CLEAR_FROM) / CLEAR_SPAN, 0.0, 1.0)


# scenario -> (a true null, few cases change): the null is one shift run twice with two
# seeds (no change on average, but each image's noise moves its clarity, and all of its
# cases with it); a shift that takes as much clarity from half the images as it gives the
# others (each image's downsample-2 change, negated on a coin flip: many cases change, and
# all the cases of an image together); then a small drop, and a large deterministic and a large random one,
# against the clean images.
SCENARIOS = {
    "noise 3 twice, two seeds": (True, True),
    "downsample 2 or its inverse, per image": (True, False),
    "noise 2": (False, True),
    "downsample 2": (False, False),
    "noise 3": (False, False),
}


def true_change(pool: Pool, scenario: str) -> float:
    """The change over the whole pool (cluster sizes are drawn apart from the images)."""
    clean = right_share(pool.clean)
    if scenario.startswith("downsample 2 or"):  # zero but where a clarity leaves 0.2-0.7
        step = pool.downsample - pool.clean
        both = right_share(pool.clean + step) + right_share(pool.clean - step)
        return float(np.mean(both / 2 - clean))
    if SCENARIOS[scenario][0]:
        return 0.0
    if scenario == "downsample 2":
        return float(np.mean(right_share(pool.downsample) - clean))
    severity = int(scenario.split()[1])
    return float(np.mean(right_share(pool.noise[severity]) - clean[:, None]))


def simulate(
    pool: Pool, scenario: str, truth: float, rng: np.random.Generator
) -> tuple[bool, float | None]:
    """One dataset: whether the change's interval covers the truth, and its p-value."""
    chosen = rng.choice(POOL, IMAGES, replace=False)
    sizes = np.where(rng.random(IMAGES) < 0.6, 1, rng.integers(2, 9, IMAGES))
    if rng.random() < 0.2:  # now and then one image carries many cases
        sizes[0] = 30
    draw = rng.integers(0, NOISE_DRAWS, IMAGES)
    if scenario.startswith("downsample 2 or"):
        sign = rng.choice([-1.0, 1.0], IMAGES)
        first = pool.clean[chosen]
        second = first + sign * (pool.downsample[chosen] - first)
    elif SCENARIOS[scenario][0]:
        other = (draw + rng.integers(1, NOISE_DRAWS, IMAGES)) % NOISE_DRAWS
        first, second = pool.noise[3][chosen, draw], pool.noise[3][chosen, other]
    elif scenario == "downsample 2":
        first, second = pool.clean[chosen], pool.downsample[chosen]
    else:
        first = pool.clean[chosen]
        second = pool.noise[int(scenario.split()[1])][chosen, draw]
    clusters = np.repeat(np.arange(IMAGES), sizes)
    needed = CLEAR_FROM + CLEAR_SPAN * rng.random(len(clusters))
    a = (first[clusters] >= needed).astype(float)
    b = (second[clusters] >= needed).astype(float)
    result = clustered_paired_change(a, b, [str(c) for c in clusters], binary=True)
    return result.interval.lower <= truth <= result.interval.upper, result.p_value


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_the_interval_covers_and_the_test_holds_its_level_on_shared_images(
    pool: Pool, scenario: str
) -> None:
    rng = np.random.default_rng(list(SCENARIOS).index(scenario))
    truth = true_change(pool, scenario)
    outcomes = [simulate(pool, scenario, truth, rng) for _ in range(DATASETS)]
    coverage = float(np.mean([covered for covered, _ in outcomes]))
    rejected = float(np.mean([p is not None and p < 0.05 for _, p in outcomes]))
    print(f"{scenario}: change {truth:+.4f}, coverage {coverage:.3f}, p < 0.05 in {rejected:.3f}")
    null, rare = SCENARIOS[scenario]
    if null:
        assert rejected <= 0.06, rejected  # the false-alarm rate at 5%
    if rare:
        # a few percent of cases change, or fewer: the interval of so rare a change cannot be
        # exact, and its pseudo-counts err on the safe side (docs/shift.md gives the figures)
        assert coverage >= 0.93, (scenario, coverage)
    else:
        assert 0.93 <= coverage <= 0.97, (scenario, coverage)


def test_forty_cases_on_one_image_have_no_interval_and_say_why() -> None:
    result = clustered_paired_change([1.0] * 40, [1.0] * 20 + [0.0] * 20, ["one"] * 40, True)
    assert result.difference == -0.5 and result.p_value is None
    assert math.isnan(result.interval.lower) and math.isnan(result.interval.upper)
    assert "one cluster" in result.note and "40 cases" in result.note
    written = json.loads(strict_json.dumps({"lower": result.interval.lower, "note": result.note}))
    assert written["lower"] is None and "one cluster" in written["note"]


def test_no_case_changed_gives_a_named_reason_and_never_a_zero_width_interval() -> None:
    clusters = [f"image{i // 3}" for i in range(60)]
    same = [1.0, 0.0, 1.0] * 20
    result = clustered_paired_change(same, same, clusters, binary=True)
    assert result.difference == 0.0 and result.p_value == 1.0 and result.test == CLUSTER_TEST
    assert result.interval.lower < 0.0 < result.interval.upper  # Bonett-Price: never [0, 0]
    assert NO_DISCORDANCE in result.note
    scale = clustered_paired_change([3.0] * 60, [3.0] * 60, clusters, binary=False)
    assert math.isnan(scale.interval.lower) and NO_DISCORDANCE in scale.note


def test_the_test_counts_images_not_cases() -> None:
    """Ten cases on each of three images all lost: McNemar on 30 independent pairs would
    give p = 2 / 2^30; three images can at best give 2 / 2^3 = 0.25."""
    clusters = [f"image{i // 10}" for i in range(30)]
    result = clustered_paired_change([1.0] * 30, [0.0] * 30, clusters, binary=True)
    assert result.p_value == pytest.approx(0.25)
    twelve = [f"image{i}" for i in range(12)]
    alone = clustered_paired_change([1.0] * 12, [0.0] * 12, twelve, binary=True)
    assert alone.p_value == pytest.approx(2 / 2**12)  # exact: every sign flip enumerated
