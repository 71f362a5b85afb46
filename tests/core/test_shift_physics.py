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
from inspect_medreason.core.shift.catalog import (
    DOSE_FRACTIONS,
    PHOTONS_PER_REFERENCE_PIXEL,
    RICIAN_SNR,
)
from inspect_medreason.core.shift.degrade import (
    degrade_image,
    degrade_values,
    degraded_path,
    image_generator,
)
from inspect_medreason.core.shift.display import luminance
from inspect_medreason.core.shift.mr_artefacts import (
    bias_field,
    motion_ghosting,
    undersampling_mask,
)
from inspect_medreason.core.shift.stain import hed_to_rgb, rgb_to_hed

SIZE = 512


def rng(seed: int = 0) -> np.random.Generator:
    return image_generator(seed, "case", 0, "digest")


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_quantum_noise_variance_follows_the_dose_fraction(severity: int) -> None:
    fraction = DOSE_FRACTIONS[severity]
    line_integral = np.full((SIZE, SIZE), 2.0)
    noisy = noise.poisson_transmission(line_integral, fraction, PHOTONS_PER_REFERENCE_PIXEL, rng())
    expected = math.exp(2.0) / (fraction * PHOTONS_PER_REFERENCE_PIXEL)  # 1 / (f N0 e^-p)
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
    sigma_display = math.sqrt(math.exp(p) / (fraction * PHOTONS_PER_REFERENCE_PIXEL)) / top * 255
    # the 8-bit rounding adds 1/12 of a level squared
    assert out.var() == pytest.approx(sigma_display**2 + 1 / 12, rel=0.08)
    bias = (math.exp(p) / (fraction * PHOTONS_PER_REFERENCE_PIXEL)) / 2 / top * 255  # the log's
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


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_the_bias_field_spans_its_nonuniformity_and_is_smooth(severity: int) -> None:
    nonuniformity = MODEL_PARAMETERS["bias_field"][severity]["nonuniformity"]
    for seed in range(3):
        field = bias_field((128, 128), nonuniformity, 3, rng(seed))
        # peak to peak exactly the non-uniformity: 1 - u/2 to 1 + u/2, both reached
        assert field.min() == pytest.approx(1 - nonuniformity / 2, abs=1e-9)
        assert field.max() == pytest.approx(1 + nonuniformity / 2, abs=1e-9)
        # its logarithm is a cubic polynomial of the coordinates: nothing finer
        y, x = np.meshgrid(np.linspace(-1, 1, 128), np.linspace(-1, 1, 128), indexing="ij")
        basis = np.stack([(x**i * y**j).ravel() for i in range(4) for j in range(4 - i)], axis=1)
        log_field = np.log(field).ravel()
        fitted, *_ = np.linalg.lstsq(basis, log_field, rcond=None)
        assert np.abs(basis @ fitted - log_field).max() < 1e-9
        # smooth at the pixel scale: second differences a tiny fraction of the field
        for axis in (0, 1):
            assert np.abs(np.diff(field, n=2, axis=axis)).max() < 8e-3 * field.max()


def test_the_bias_field_never_burns_out_a_bright_radiograph() -> None:
    # a chest film's values: most of it between 0.3 and 0.85 of full scale
    pixels = (np.random.default_rng(2).uniform(0.3, 0.85, (256, 256)) * 255).round()
    image = Image.fromarray(pixels.astype(np.uint8), mode="L")
    parameters = MODEL_PARAMETERS["bias_field"][3]
    for seed in range(5):
        out = np.asarray(degrade_image(image, "bias_field", parameters, rng(seed)), float)
        # no pixel brightened by more than half the non-uniformity (plus rounding) ...
        assert (out <= pixels * (1 + parameters["nonuniformity"] / 2) + 0.5).all()
        # ... so only the brightest tones can reach white (was half the film at severity 3)
        assert (out == 255).mean() < 0.05


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_blur_attenuates_each_frequency_as_a_gaussian(severity: int) -> None:
    sigma = MODEL_PARAMETERS["gaussian_blur"][severity]["sigma_pixels_at_512"]
    x = np.arange(SIZE)
    for cycles in (8, 32, 64):
        frequency = cycles / SIZE
        wave = np.tile(0.5 + 0.25 * np.sin(2 * np.pi * frequency * x), (64, 1))
        parameters = MODEL_PARAMETERS["gaussian_blur"][severity]
        blurred = degrade_values(wave, "gaussian_blur", parameters, rng())
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
    ghosted = motion_ghosting(image, 8.0, 4, rng())
    # a phase ramp moves energy, it adds none (Parseval)
    assert float((ghosted**2).sum()) == pytest.approx(float((image**2).sum()), rel=1e-9)
    outside = ghosted.copy()
    outside[40:88, :] = 0
    assert outside[:, 48:80].sum() > 10 * outside[:, :40].sum()  # ghosts in the object's columns


def test_a_colour_image_is_ghosted_with_one_set_of_k_space_lines() -> None:
    # channels proportional to one another: the same lines and phases keep them so
    shape = np.zeros((128, 128))
    shape[40:90, 30:100] = 1.0
    colour = np.stack([0.9 * shape, 0.45 * shape, 0.2 * shape], axis=-1)
    for seed in range(4):
        ghosted = degrade_values(
            colour, "motion_ghosting", MODEL_PARAMETERS["motion_ghosting"][3], rng(seed)
        )
        assert not np.allclose(ghosted, colour)
        lit = ghosted[..., 1] > 1e-6
        assert np.allclose(ghosted[..., 0][lit] / ghosted[..., 1][lit], 2.0, rtol=1e-6)
        assert np.allclose(ghosted[..., 2][lit] / ghosted[..., 1][lit], 0.2 / 0.45, rtol=1e-6)


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


def ct_dicom(path: Path, raw: np.ndarray, window: tuple[float, float]) -> Path:
    """A CT DICOM whose stored values are HU + 1024 (its rescale tags say so)."""
    return write_dicom(path, raw, window=window, rescale=(1.0, -1024.0))


def test_ct_noise_is_the_same_in_air_tissue_and_bone_in_hounsfield_units(tmp_path: Path) -> None:
    # air-like lung (-800 HU), soft tissue (40 HU) and bone (800 HU) in thirds; the noise
    # used to grow with each pixel's HU (air 7, bone 53-262 at severity 3)
    raw = np.full((512, 512), 1064, dtype=np.uint16)
    raw[:, :170] = 224
    raw[:, 342:] = 1824
    # the picture is shown over the clean image's own range: two thin strips at -1024 and
    # +1400 HU keep the three regions' noise off its ends
    raw[:, 0], raw[:, -1] = 0, 2424
    png = dicom_as_png(ct_dicom(tmp_path / "ct.dcm", raw, (0, 3000)))
    severity = 3
    out = np.asarray(Image.open(degraded_path(png, "ct_quantum", severity, 0, "c", 0)), float)
    sigma_hu = noise.ct_noise_sigma_hu(DOSE_FRACTIONS[severity], PHOTONS_PER_REFERENCE_PIXEL, 2.0)
    # the spread of a pixel behind 2 line integrals of water at 3% of the dose
    assert sigma_hu == pytest.approx(
        math.sqrt(math.exp(2.0) / (0.03 * PHOTONS_PER_REFERENCE_PIXEL)) * 1000 / 2.0
    )
    clean = np.asarray(Image.open(png), float)
    thirds = (slice(4, 166), slice(174, 338), slice(346, 508))
    levels_per_hu = 255 / 2424
    expected = math.sqrt((sigma_hu * levels_per_hu) ** 2 + 1 / 12)  # and the 8-bit rounding
    for cols in thirds:
        assert out[:, cols].std() == pytest.approx(expected, rel=0.06)
    for cols in thirds:  # no bias (the clean picture is rounded; the noisy mean is not)
        assert out[:, cols].mean() == pytest.approx(clean[:, cols].mean(), abs=0.6)


def test_dose_is_set_per_unit_area_so_any_matrix_shows_the_same_noise() -> None:
    # a 1024-px film seen at 512 px (2 x 2 averaged) has the 512-px film's noise: the same
    # dose per mm^2 (per pixel, the 1024-px one used to get a quarter of the noise)
    parameters = MODEL_PARAMETERS["poisson_transmission"][2]
    small = degrade_values(np.full((512, 512), 0.5), "poisson_transmission", parameters, rng(1))
    large = degrade_values(np.full((1024, 1024), 0.5), "poisson_transmission", parameters, rng(2))
    seen = large.reshape(512, 2, 512, 2).mean(axis=(1, 3))
    assert seen.var() == pytest.approx(small.var(), rel=0.08)
    assert large.var() == pytest.approx(4 * small.var(), rel=0.08)  # 1/4 the photons a pixel
    # below the reference matrix a pixel keeps the reference pixel's dose: a model sees a
    # small image enlarged, nothing averages its noise away
    tiny = degrade_values(np.full((128, 128), 0.5), "poisson_transmission", parameters, rng(5))
    assert tiny.var() == pytest.approx(small.var(), rel=0.1)
    linear = MODEL_PARAMETERS["poisson_linear"][2]
    photo_small = degrade_values(np.full((512, 512), 0.5), "poisson_linear", linear, rng(3))
    photo_large = degrade_values(np.full((1024, 1024), 0.5), "poisson_linear", linear, rng(4))
    assert photo_large.reshape(512, 2, 512, 2).mean(axis=(1, 3)).var() == pytest.approx(
        photo_small.var(), rel=0.08
    )


def test_ct_picture_noise_does_not_depend_on_the_pixel_value() -> None:
    # a CT PNG (no HU): the same spread on black, grey and white-ish pixels
    parameters = MODEL_PARAMETERS["ct_quantum"][2]
    values = np.concatenate([np.full((512, 170), v) for v in (0.1, 0.5, 0.9)], axis=1)
    out = degrade_values(values, "ct_quantum", parameters, rng())
    sigma = noise.ct_noise_sigma_hu(0.15, PHOTONS_PER_REFERENCE_PIXEL, 2.0) / 400
    for third in range(3):
        assert out[:, third * 170 : (third + 1) * 170].std() == pytest.approx(sigma, rel=0.04)


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
    assert not parse_shift(None, 0, 0).active
    grid = parse_shift("noise,blur", "0,2", 1)  # -T values as a shell may pass them
    assert grid.grid and [(s.name, s.severity) for s in grid.specs] == [
        (None, 0),
        ("noise", 2),
        ("blur", 2),
    ]
    record = parse_shift("blur", "3", "11").record()
    assert record["parameters"]["ct"] == {
        "model": "gaussian_blur",
        "sigma_pixels_at_512": 4.0,
        "min_sigma_pixels": 1.6,
    }
    assert record["applies_to"] == ["any"]
    assert parse_shift("speckle", 1, 0).record()["applies_to"] == ["ultrasound"]


def test_a_shift_named_without_a_severity_is_refused_not_run_clean() -> None:
    # the tasks' default severity is 0: `-T shift=noise` alone used to run the clean images
    for severity in (0, "0", [0]):
        with pytest.raises(TaskArgumentError, match="needs a severity"):
            parse_shift("noise", severity, 0)


def test_low_dose_is_merged_into_noise_and_says_so() -> None:
    with pytest.raises(TaskArgumentError, match="merged into 'noise'"):
        parse_shift("low_dose", 2, 0)
    assert "low_dose" not in SHIFTS


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
        "ct": "ct_quantum",
        "mr": "rician",
    }.get(expected, "poisson_linear")


def fundus_like(size: int = 128) -> np.ndarray:
    """A reddish photograph, bright at the disc and darker outwards, with texture."""
    texture = np.random.default_rng(7).uniform(0.9, 1.0, (size, size))
    y, x = np.mgrid[:size, :size] / size - 0.5
    level = np.clip(1.0 - 1.2 * np.hypot(x, y), 0.2, 1.0) * texture
    return np.stack([level, 0.55 * level, 0.25 * level], axis=-1)


@pytest.mark.parametrize("model", ["gamma", "window"])
@pytest.mark.parametrize("severity", [1, 2, 3])
def test_window_and_gamma_change_a_colour_picture_through_its_luminance(
    model: str, severity: int
) -> None:
    photo = fundus_like()
    out = degrade_values(photo, model, MODEL_PARAMETERS[model][severity], rng())
    assert not np.allclose(out, photo)
    # hue and saturation kept: where no channel clipped, the channels keep their ratios
    # (a channel-by-channel window turned this photograph pure red)
    kept = (out.max(axis=-1) < 1.0) & (out[..., 1] > 1e-3)
    assert kept.mean() > 0.02
    # and nowhere redder: a clipped pixel only goes towards white
    lit = out[..., 1] > 1e-3
    assert (out[..., 0][lit] / out[..., 1][lit] <= 1 / 0.55 + 1e-9).all()
    assert np.allclose(out[..., 0][kept] / out[..., 1][kept], 1 / 0.55, rtol=1e-9)
    assert np.allclose(out[..., 2][kept] / out[..., 1][kept], 0.25 / 0.55, rtol=1e-9)
    # the luminance is the grey curve's
    grey = degrade_values(luminance(photo), model, MODEL_PARAMETERS[model][severity], rng())
    assert np.allclose(luminance(out)[kept], grey[kept], atol=1e-9)


def textured(size: int, colour: bool = False, seed: int = 0) -> Image.Image:
    """A CT-like picture: smooth anatomy with structure at several scales, mid-grey."""
    generator = np.random.default_rng(seed)
    from scipy import ndimage

    field = ndimage.gaussian_filter(generator.normal(size=(size, size)), size / 16)
    field = (field - field.min()) / (np.ptp(field) or 1.0)
    edges = (np.add.outer(np.arange(size), np.arange(size)) // max(size // 8, 1)) % 2
    grey = 0.25 + 0.35 * field + 0.15 * edges
    if not colour:
        return Image.fromarray((grey * 255).round().astype(np.uint8), mode="L")
    rgb = np.stack([grey * 0.95, grey * 0.6, grey * 0.8], axis=-1)
    return Image.fromarray((rgb * 255).round().astype(np.uint8), mode="RGB")


@pytest.mark.parametrize("model", sorted(MODEL_PARAMETERS))
@pytest.mark.parametrize("size", [32, 128, 640])
def test_each_severity_changes_every_image_size(model: str, size: int) -> None:
    # blur at severity 1 used to leave a 128-px CT unchanged (sigma 0.25 px)
    image = textured(size, colour=model == "hed_jitter")
    clean = np.asarray(image, float)
    errors = []
    for severity in (1, 2, 3):
        out = degrade_image(image, model, MODEL_PARAMETERS[model][severity], rng(severity))
        changed = np.asarray(out, float)
        assert changed.shape == clean.shape
        assert not np.array_equal(changed, clean), (model, size, severity)
        errors.append(float(np.abs(changed - clean).mean()))
    if model not in ("kspace_spike", "hed_jitter", "bias_field"):  # random directions
        assert errors[0] < errors[2], (model, size, errors)


def test_undersampling_keeps_the_centre_and_a_fraction_of_the_lines() -> None:
    parameters = MODEL_PARAMETERS["kspace_undersampling"]
    for severity in (1, 2, 3):
        acceleration = parameters[severity]["acceleration"]
        centre = parameters[severity]["centre_fraction"]
        kept = [undersampling_mask(320, acceleration, centre, rng(seed)) for seed in range(200)]
        # fastMRI's mask: the centre lines always, 1 / acceleration of all lines on average
        offsets = np.abs(np.fft.fftfreq(320) * 320)
        assert all(mask[offsets < 320 * centre / 2 - 1].all() for mask in kept)
        assert np.mean([mask.mean() for mask in kept]) == pytest.approx(1 / acceleration, rel=0.03)
    image = np.asarray(textured(128), float) / 255
    out = degrade_values(image, "kspace_undersampling", parameters[2], rng())
    # zero-filled: what is left of the spectrum is the image's on the kept lines
    assert out.mean() == pytest.approx(image.mean(), rel=0.05)
    assert ((out - image) ** 2).mean() > 1e-4


def test_gibbs_truncation_rings_at_an_edge_by_the_gibbs_overshoot() -> None:
    # a bright band: truncating its spectrum overshoots each edge by ~9% of the step
    image = np.full((64, 256), 0.3)
    image[:, 64:192] = 0.7
    for severity in (1, 2, 3):
        kept = MODEL_PARAMETERS["gibbs_truncation"][severity]["kept_fraction"]
        out = degrade_values(image, "gibbs_truncation", {"kept_fraction": kept}, rng())
        overshoot, undershoot = (out[32].max() - 0.7) / 0.4, (0.3 - out[32].min()) / 0.4
        # the continuous Gibbs overshoot is 8.95% of the step; whole pixels sample a little
        # below its peak (6.8% when it rings every 2 pixels, 8.8% every 5)
        assert 0.06 < overshoot < 0.0895 and undershoot == pytest.approx(overshoot, rel=1e-6)
        spectrum = np.abs(np.fft.fft(out[32]))
        assert spectrum[np.abs(np.fft.fftfreq(256)) > kept / 2].max() < 1e-9 * spectrum[0]


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_a_k_space_spike_adds_stripes_of_its_intensity(severity: int) -> None:
    ratio = MODEL_PARAMETERS["kspace_spike"][severity]["intensity_of_peak"]
    out = degrade_values(
        np.full((128, 128), 0.5), "kspace_spike", MODEL_PARAMETERS["kspace_spike"][severity], rng()
    )
    # one point of ratio x the spectrum's peak (the DC, 0.5 N): a wave of 0.5 ratio
    # whose magnitude swings between 0.5 (1 - ratio) and 0.5 (1 + ratio)
    assert out.max() == pytest.approx(0.5 * (1 + ratio), rel=1e-3)
    assert out.min() == pytest.approx(0.5 * (1 - ratio), rel=1e-3)


@pytest.mark.parametrize("severity", [1, 2, 3])
def test_speckle_is_multiplicative_noise_of_its_sigma(severity: int) -> None:
    sigma = MODEL_PARAMETERS["speckle"][severity]["sigma"]
    for level in (0.2, 0.6):
        out = degrade_values(np.full((256, 256), level), "speckle", {"sigma": sigma}, rng())
        assert out.mean() == pytest.approx(level, rel=0.01)
        assert out.std() == pytest.approx(level * sigma, rel=0.03)  # grows with the echo


def test_stain_jitter_scales_and_shifts_each_stain_density() -> None:
    photo = np.asarray(textured(64, colour=True), float) / 255
    hed = rgb_to_hed(photo)
    # deconvolution round trip (scikit-image's rgb2hed / hed2rgb)
    assert np.allclose(hed_to_rgb(hed), photo, atol=1e-6)
    for severity in (1, 2, 3):
        sigma = MODEL_PARAMETERS["hed_jitter"][severity]["scale_sigma"]
        generator = rng(severity)
        out = degrade_values(
            photo, "hed_jitter", MODEL_PARAMETERS["hed_jitter"][severity], generator
        )
        draw = rng(severity)
        alpha, beta = draw.uniform(1 - sigma, 1 + sigma, 3), draw.uniform(-sigma, sigma, 3)
        # the offset is a share of each stain's own density spread in the picture (issue 63)
        spread = np.percentile(np.abs(hed.reshape(-1, 3)), 99.0, axis=0)
        assert np.allclose(out, hed_to_rgb(hed * alpha + beta * spread), atol=1e-9)
        assert not np.allclose(out, photo, atol=1 / 255)
    with pytest.raises(ValueError, match="colour"):
        degrade_values(np.full((8, 8), 0.5), "hed_jitter", MODEL_PARAMETERS["hed_jitter"][1], rng())


@pytest.mark.parametrize(
    "model", ["brightness_up", "brightness_down", "contrast_up", "contrast_down"]
)
@pytest.mark.parametrize("colour", [False, True])
def test_brightness_and_contrast_are_pillows_image_enhance(model: str, colour: bool) -> None:
    from PIL import ImageEnhance

    image = textured(96, colour=colour)
    enhancer = ImageEnhance.Brightness if model.startswith("brightness") else ImageEnhance.Contrast
    spreads = []
    for severity in (1, 2, 3):
        factor = MODEL_PARAMETERS[model][severity]["factor"]
        ours = np.asarray(degrade_image(image, model, {"factor": factor}, rng()), float)
        pillow = np.asarray(enhancer(image).enhance(factor), float)
        assert np.abs(ours - pillow).max() <= 1.0  # Pillow rounds each step to 8 bits
        spreads.append((ours.mean(), ours.std()))
    means, stds = zip(*spreads, strict=True)
    direction = {"brightness_up": means, "contrast_up": stds}.get(model)
    if direction is not None:
        assert list(direction) == sorted(direction)
    else:
        measured = means if model == "brightness_down" else stds
        assert list(measured) == sorted(measured, reverse=True)


def test_every_shift_is_in_the_docs_table_with_where_it_applies() -> None:
    from inspect_medreason.core.shift import APPLIES_TO

    assert set(APPLIES_TO) == set(SHIFTS)
    docs = (Path(__file__).parents[2] / "docs" / "shift.md").read_text(encoding="utf-8")
    rows = [line for line in docs.splitlines() if line.startswith("| `")]
    for name in SHIFTS:
        assert any(f"`{name}`" in row.split("|")[1] for row in rows), name
