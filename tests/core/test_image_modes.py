"""Every image mode Pillow opens is sent in a form providers accept, converted once and
recorded; JPEG/PNG already in an accepted mode are sent as they were read; multi-frame
images are decoded whole and reduced to their first frame; damaged ones are refused."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from inspect_medreason.core.images import (
    MAX_FRAMES,
    ImagePathError,
    ImageStore,
    convert_for_providers,
)


def encoded(image: Image.Image, image_format: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=image_format, **options)
    return buffer.getvalue()


def noise(mode: str, size: tuple[int, int] = (24, 16), seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    bands = {"L": 1, "RGB": 3, "RGBA": 4, "CMYK": 4, "LA": 2}[mode]
    shape = (size[1], size[0]) if bands == 1 else (size[1], size[0], bands)
    values = rng.integers(0, 256, shape, dtype=np.uint8)
    if mode == "CMYK":
        return Image.frombytes("CMYK", size, values.tobytes())
    if mode == "LA":
        return Image.frombytes("LA", size, values.tobytes())
    return Image.fromarray(values, mode=mode)


def animated(frames: int, image_format: str = "GIF") -> bytes:
    images = [noise("RGB", seed=i).convert("P") for i in range(frames)]
    return encoded(images[0], image_format, save_all=True, append_images=images[1:])


def sent_image(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


@pytest.mark.parametrize(
    ("mode", "image_format"),
    [("L", "JPEG"), ("RGB", "JPEG"), ("L", "PNG"), ("RGB", "PNG"), ("RGBA", "PNG"), ("LA", "PNG")],
)
def test_accepted_jpeg_and_png_are_sent_as_read(mode: str, image_format: str) -> None:
    data = encoded(noise(mode), image_format)
    sent, suffix, conversion = convert_for_providers(data, "x")
    assert sent == data  # the original bytes, not a re-encoding
    assert conversion is None
    assert suffix == {"JPEG": ".jpg", "PNG": ".png"}[image_format]


def test_palette_png_is_sent_as_read() -> None:
    data = encoded(noise("RGB").convert("P"), "PNG")
    assert sent_image(data).mode == "P"
    assert convert_for_providers(data, "x")[0] == data


def test_cmyk_jpeg_becomes_an_rgb_png_with_the_same_pixels() -> None:
    original = noise("CMYK")
    data = encoded(original, "JPEG", quality=100)
    sent, suffix, conversion = convert_for_providers(data, "scan.jpg")
    image = sent_image(sent)
    assert (image.format, image.mode, suffix) == ("PNG", "RGB", ".png")
    assert conversion is not None and "CMYK" in conversion and "RGB" in conversion
    # The decoded JPEG's colours, converted as Pillow converts them, nothing else.
    expected = np.asarray(sent_image(data).convert("RGB"))
    assert np.array_equal(np.asarray(image), expected)


def test_16_bit_greyscale_png_is_stretched_to_8_bit_not_clipped() -> None:
    values = (np.arange(32 * 16).reshape(16, 32) * 7 + 1000).astype(np.uint16)
    data = encoded(Image.fromarray(values), "PNG")
    assert sent_image(data).mode in {"I;16", "I"}
    sent, _, conversion = convert_for_providers(data, "x")
    image = np.asarray(sent_image(sent))
    assert sent_image(sent).mode == "L"
    # Pillow's own convert("L") would clip every value (all above 255) to one grey.
    assert image.min() == 0 and image.max() == 255
    assert len(np.unique(image)) > 200
    assert conversion is not None and "[1000, 4577]" in conversion


def test_16_bit_rgb_png_is_made_8_bit() -> None:
    # Pillow reads a 16-bit RGB PNG as 8-bit RGB: the file's own bit depth says it is not.
    import zlib

    width, height = 4, 2
    raw = b"".join(b"\x00" + bytes(range(width * 6)) for _ in range(height))

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body).to_bytes(4, "big")
        return len(body).to_bytes(4, "big") + kind + body + crc

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([16, 2, 0, 0, 0])
    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )
    sent, suffix, conversion = convert_for_providers(data, "x")
    assert sent != data and suffix == ".png" and conversion is not None
    assert sent[24] == 8  # the bit depth of what is sent


def test_multi_frame_gif_and_tiff_send_their_first_frame() -> None:
    for image_format in ("GIF", "TIFF"):
        data = animated(3, image_format)
        assert sent_image(data).n_frames == 3  # type: ignore[attr-defined]
        sent, suffix, conversion = convert_for_providers(data, "x")
        image = sent_image(sent)
        assert getattr(image, "n_frames", 1) == 1 and suffix == ".png"
        assert conversion is not None and "first of 3 frames" in conversion
        first = sent_image(data)
        first.seek(0)
        assert np.array_equal(np.asarray(image.convert("RGB")), np.asarray(first.convert("RGB")))


def test_single_frame_gif_and_webp_and_bmp_become_png() -> None:
    for image_format in ("GIF", "WEBP", "BMP", "TIFF"):
        sent, suffix, conversion = convert_for_providers(encoded(noise("RGB"), image_format), "x")
        assert sent_image(sent).format == "PNG" and suffix == ".png"
        assert conversion is not None and image_format in conversion


def test_truncated_animated_gif_is_refused_whatever_frame_is_damaged() -> None:
    data = animated(4)
    # Cut inside the last frame: frame 0 still decodes on its own.
    truncated = data[: len(data) - 60]
    first = Image.open(io.BytesIO(truncated))
    first.load()  # frame 0 alone passes: the old check
    with pytest.raises(ImagePathError, match=r"scan\.gif"):
        convert_for_providers(truncated, "scan.gif")


def test_too_many_frames_are_refused() -> None:
    data = animated(MAX_FRAMES + 1)
    with pytest.raises(ImagePathError, match=f"{MAX_FRAMES + 1:,} frames"):
        convert_for_providers(data, "many.gif")


def test_not_an_image_is_refused() -> None:
    with pytest.raises(ImagePathError, match=r"notes\.txt is not a decodable image"):
        convert_for_providers(b"just some text", "notes.txt")


def test_store_keeps_the_sent_bytes_by_their_digest_and_converts_once(tmp_path: Path) -> None:
    cmyk = encoded(noise("CMYK"), "JPEG")
    rgb = encoded(noise("RGB"), "JPEG")
    with ImageStore() as store:
        converted = store.prepare(cmyk, "a.jpg")
        kept = store.prepare(rgb, "b.jpg")
    assert kept.path.read_bytes() == rgb and kept.conversion is None
    assert kept.sha256 == hashlib.sha256(rgb).hexdigest() == kept.source_sha256
    assert hashlib.sha256(converted.path.read_bytes()).hexdigest() == converted.sha256
    assert converted.source_sha256 == hashlib.sha256(cmyk).hexdigest()
    assert converted.path.name == f"{converted.sha256}.png"
    # A later load finds the conversion without decoding again, and the same record.
    with ImageStore() as store:
        again = store.prepare(cmyk, "a.jpg")
    assert again == converted


def test_store_redoes_an_edited_cache_file() -> None:
    cmyk = encoded(noise("CMYK", seed=3), "JPEG")
    with ImageStore() as store:
        first = store.prepare(cmyk, "a.jpg")
    first.path.write_bytes(b"edited")
    with ImageStore() as store:
        again = store.prepare(cmyk, "a.jpg")
    assert hashlib.sha256(again.path.read_bytes()).hexdigest() == again.sha256 == first.sha256


def test_store_names_each_file_with_the_same_broken_bytes() -> None:
    with ImageStore() as store:
        with pytest.raises(ImagePathError, match=r"one\.png"):
            store.prepare(b"broken", "one.png")
        with pytest.raises(ImagePathError, match=r"two\.png"):
            store.prepare(b"broken", "two.png")
