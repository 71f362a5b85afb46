"""The shifts' physics: noise variance at each dose fraction and SNR on constant images, the
bias field's mean and smoothness, blur's frequency response, downsampling, JPEG quality,
determinism by seed, DICOM degraded before its window, and the refusal of unknown values."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from utils.dicom_fixtures import write_dicom

from inspect_medreason.core.dicom import dicom_as_png
from inspect_medreason.core.errors import TaskArgumentError
from inspect_medreason.core.shift import (
    MODEL_PARAMETERS,
    SHIFTS,
    modality_class,
    noise,
    parse_shift,
)
from inspect_medreason.core.shift.catalog import DOSE_FRACTIONS, PHOTONS_FULL_DOSE, RICIAN_SNR
from inspect_medreason.core.shift.degrade import (
    degrade_image,
    degrade_values,
    degraded_path,
    image_generator,
)
from inspect_medreason.core.shift.mr_artefacts import bias_field, motion_ghosting

SIZE = 512


def rng(seed: int = 0) -> np.random.Generator:
    return image_generator(seed, "case", 0, "digest")


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_quantum_noise_variance_follows_the_dose_fraction(severity: int) -> None:
    fraction = DOSE_FRACTIONS[severity]
    line_integral = np.full((SIZE, SIZE), 2.0)
    noisy = noise.poisson_transmission(line_integral, fraction, PHOTONS_FULL_DOSE, rng())
    expected = math.exp(2.0) / (fraction * PHOTONS_FULL_DOSE)  # 1 / (f N0 e^-p)
    assert noisy.var() == pytest.approx(expected, rel=0.06)
    # the logarithm's bias at few counts: E[-log(N / mean)] = 1 / (2 mean) to first order
    assert noisy.mean() == pytest.approx(2.0 + expected / 2, abs=0.003)
    counts = noise.poisson_counts(np.full((SIZE, SIZE), 400.0), fraction, rng(1))
    assert counts.mean() == pytest.approx(400.0, rel=0.01)
    assert counts.var() == pytest.approx(400.0 / fraction, rel=0.05)


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_a_constant_radiograph_gets_the_display_variance_of_its_dose(severity: int) -> None:
    parameters = MODEL_PARAMETERS["poisson_transmission"][severity]
    image = Image.fromarray(np.full((SIZE, SIZE), 128, dtype=np.uint8), mode="L")
    out = np.asarray(degrade_image(image, "poisson_transmission", parameters, rng()), float)
    top, fraction = parameters["max_line_integral"], parameters["dose_fraction"]
    p = top * 128 / 255
    sigma_display = math.sqrt(math.exp(p) / (fraction * PHOTONS_FULL_DOSE)) / top * 255
    # the 8-bit rounding adds 1/12 of a level squared
    assert out.var() == pytest.approx(sigma_display**2 + 1 / 12, rel=0.08)
    bias = (math.exp(p) / (fraction * PHOTONS_FULL_DOSE)) / 2 / top * 255  # the log's
    assert out.mean() == pytest.approx(128 + bias, abs=0.3)


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_rician_noise_has_the_snr_of_its_severity(severity: int) -> None:
    snr = RICIAN_SNR[severity]
    signal = np.full((SIZE, SIZE), 0.5)
    parameters = MODEL_PARAMETERS["rician"][severity]
    magnitude = degrade_values(signal, "rician", parameters, rng())
    sigma = 0.5 / snr
    # Gudbjartsson & Patz: E[M^2] = A^2 + 2 sigma^2, exactly
    assert float(np.mean(magnitude**2)) - 0.25 == pytest.approx(2 * sigma**2, rel=0.05)
    assert magnitude.min() >= 0.0
    # at these SNRs the magnitude's spread is close to sigma (Rician ~ Gaussian above SNR 3)
    assert magnitude.std() == pytest.approx(sigma, rel=0.05)


def test_the_bias_field_is_smooth_with_mean_one() -> None:
    for magnitude in (0.2, 0.4, 0.6):
        field = bias_field((256, 256), magnitude, 3, rng())
        assert field.mean() == pytest.approx(1.0, abs=1e-9)
        assert field.min() > 0
        assert field.std() > 0.01  # it does change the image
        # its logarithm is a cubic polynomial of the coordinates: nothing finer
        y, x = np.meshgrid(np.linspace(-1, 1, 256), np.linspace(-1, 1, 256), indexing="ij")
        basis = np.stack([(x**i * y**j).ravel() for i in range(4) for j in range(4 - i)], axis=1)
        log_field = np.log(field).ravel()
        fitted, *_ = np.linalg.lstsq(basis, log_field, rcond=None)
        assert np.abs(basis @ fitted - log_field).max() < 1e-9
        # smooth at the pixel scale: second differences a tiny fraction of the field
        for axis in (0, 1):
            assert np.abs(np.diff(field, n=2, axis=axis)).max() < 2e-3 * field.max()


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_blur_attenuates_each_frequency_as_a_gaussian(severity: int) -> None:
    sigma = MODEL_PARAMETERS["gaussian_blur"][severity]["sigma_pixels_at_512"]
    x = np.arange(SIZE)
    for cycles in (8, 32, 64):
        frequency = cycles / SIZE
        wave = np.tile(0.5 + 0.25 * np.sin(2 * np.pi * frequency * x), (64, 1))
        blurred = degrade_values(wave, "gaussian_blur", {"sigma_pixels_at_512": sigma}, rng())
        centre = slice(SIZE // 4, 3 * SIZE // 4)
        reference = np.sin(2 * np.pi * frequency * x[centre])
        amplitude = float(
            np.dot(blurred[32, centre] - 0.5, reference) / np.dot(reference, reference)
        )
        expected = 0.25 * math.exp(-2 * math.pi**2 * sigma**2 * frequency**2)
        assert amplitude == pytest.approx(expected, rel=0.03, abs=2e-4)


def test_downsampling_keeps_the_mean_and_removes_detail_finer_than_its_grid() -> None:
    x = np.arange(256)
    fine = np.tile(0.5 + 0.3 * np.sin(2 * np.pi * 64 / 256 * x), (256, 1))  # period 4 pixels
    for factor in (2, 4, 8):
        out = degrade_values(fine, "downsample", {"factor": factor}, rng())
        assert out.shape == fine.shape
        assert out.mean() == pytest.approx(fine.mean(), abs=0.01)
        if factor >= 4:
            assert out.std() < 0.1 * fine.std()


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_jpeg_is_pillows_round_trip_at_the_severitys_quality(severity: int) -> None:
    quality = MODEL_PARAMETERS["jpeg"][severity]["quality"]
    pixels = (np.random.default_rng(3).random((128, 128)) * 255).astype(np.uint8)
    image = Image.fromarray(pixels, mode="L")
    out = np.asarray(degrade_image(image, "jpeg", {"quality": quality}, rng()))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    assert np.array_equal(out, np.asarray(Image.open(io.BytesIO(buffer.getvalue()))))
    errors = [
        np.abs(
            np.asarray(degrade_image(image, "jpeg", {"quality": q}, rng()), float) - pixels
        ).mean()
        for q in (30, 15, 7)
    ]
    assert errors == sorted(errors) and errors[0] > 0


def test_motion_ghosting_moves_energy_into_ghosts_along_the_phase_axis() -> None:
    image = np.zeros((128, 128))
    image[48:80, 48:80] = 1.0
    ghosted = motion_ghosting(image, 8.0, 4, 0, rng())
    # a phase ramp moves energy, it adds none (Parseval)
    assert float((ghosted**2).sum()) == pytest.approx(float((image**2).sum()), rel=1e-9)
    outside = ghosted.copy()
    outside[40:88, :] = 0
    assert outside[:, 48:80].sum() > 10 * outside[:, :40].sum()  # ghosts in the object's columns


def test_a_shift_is_deterministic_by_seed_case_and_image(tmp_path: Path) -> None:
    source = tmp_path / "image.png"
    pixels = (np.random.default_rng(5).random((64, 64)) * 255).astype(np.uint8)
    Image.fromarray(pixels, mode="L").save(source)
    first = degraded_path(source, "rician", 2, 7, "case-1", 0)
    again = degraded_path(source, "rician", 2, 7, "case-1", 0)
    assert again == first
    content = first.read_bytes()
    first.unlink()  # made again from nothing: the same pixels
    assert degraded_path(source, "rician", 2, 7, "case-1", 0).read_bytes() == content
    others = [
        degraded_path(source, "rician", 2, 8, "case-1", 0),
        degraded_path(source, "rician", 2, 7, "case-2", 0),
        degraded_path(source, "rician", 2, 7, "case-1", 1),
        degraded_path(source, "rician", 3, 7, "case-1", 0),
    ]
    reference = np.asarray(Image.open(first))
    for other in others:
        assert not np.array_equal(np.asarray(Image.open(other)), reference)


def test_dicom_noise_is_added_in_hounsfield_units_before_the_window(tmp_path: Path) -> None:
    # air (-1000 HU), soft tissue (40 HU) and bone (400 HU) in thirds; window 40/400
    raw = np.full((256, 256), 1064, dtype=np.uint16)
    raw[:, :86] = 24
    raw[:, 172:] = 1424
    path = write_dicom(tmp_path / "ct.dcm", raw, window=(40, 400))
    import pydicom

    dataset = pydicom.dcmread(path)
    dataset.RescaleIntercept, dataset.RescaleSlope = -1024, 1
    dataset.save_as(path)
    png = dicom_as_png(path)
    severity = 1
    out = np.asarray(Image.open(degraded_path(png, "poisson_transmission", severity, 0, "c", 0)))
    fraction = DOSE_FRACTIONS[severity]
    p = 2.0 * (1 + 40 / 1000)
    sigma_hu = math.sqrt(math.exp(p) / (fraction * PHOTONS_FULL_DOSE)) * 1000 / 2.0
    tissue = out[:, 90:168].astype(float)
    assert tissue.std() == pytest.approx(sigma_hu * 255 / 400, rel=0.1)
    clean = np.asarray(Image.open(png))[:, 90:168].astype(float)
    assert clean.std() == 0 and tissue.mean() == pytest.approx(clean.mean(), abs=2)


def test_unknown_shift_names_and_severities_are_refused_with_the_valid_ones() -> None:
    with pytest.raises(TaskArgumentError) as refused:
        parse_shift("fog", 5, "x", "both")
    message = str(refused.value)
    assert all(name in message for name in SHIFTS)
    assert "valid: 0 (clean), 1, 2, 3" in message
    assert "shift_seed='x'" in message and "degraded, clean" in message
    with pytest.raises(TaskArgumentError, match="without a shift"):
        parse_shift(None, 2, 0)
    with pytest.raises(TaskArgumentError, match="a shift needs one"):
        parse_shift("blur", None, 0)
    assert not parse_shift("blur", 0, 0).active
    grid = parse_shift("noise,blur", "0,2", 1)  # -T values as a shell may pass them
    assert grid.grid and [(s.name, s.severity) for s in grid.specs] == [
        (None, 0),
        ("noise", 2),
        ("blur", 2),
    ]
    assert parse_shift("blur", "3", "11").record()["parameters"]["ct"] == {
        "model": "gaussian_blur",
        "sigma_pixels_at_512": 4.0,
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("X-Ray", "xray"),
        ("Chest radiograph", "xray"),
        ("CT", "ct"),
        ("MRI", "mr"),
        ("Pathology", "photo"),
        ("", "unknown"),
        ("Ultrasound", "unknown"),
        (None, "unknown"),
    ],
)
def test_the_modality_picks_the_noise_model(text: str | None, expected: str) -> None:
    assert modality_class(text) == expected
    model = SHIFTS["noise"][expected]
    assert model == {
        "xray": "poisson_transmission",
        "ct": "poisson_transmission",
        "mr": "rician",
    }.get(expected, "poisson_linear")
