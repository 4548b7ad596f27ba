"""The screenshot is decoded once (a JPEG at a reduced DCT scale) for both the pHash and the thumbnail."""

import io

import pytest

from scrapy_websim.core.page.visual import decode_image, phash_image, phash_png
from scrapy_websim.result.report.thumbs import make_thumbnail


def _page_like(fmt: str, **save) -> bytes:
    """A 1280x800 'page': header bar, text-like lines, a picture block (what pHash sees on real pages)."""
    from PIL import Image, ImageDraw

    im = Image.new("RGB", (1280, 800), "white")
    draw = ImageDraw.Draw(im)
    draw.rectangle([0, 0, 1280, 70], fill="#1d3557")
    for i, y in enumerate(range(120, 760, 22)):
        draw.rectangle([80, y, 80 + 300 + (i * 97) % 500, y + 9], fill="#333")
    draw.rectangle([900, 150, 1200, 450], fill="#e63946")
    buf = io.BytesIO()
    im.save(buf, fmt, **save)
    return buf.getvalue()


def test_jpeg_decoded_small_and_phash_agrees_with_png():
    png, jpeg = _page_like("PNG"), _page_like("JPEG", quality=80)
    with decode_image(jpeg) as img:
        assert img.size == (320, 200)  # 1/4 DCT scale, not a full decode
        small = phash_image(img)
    with decode_image(jpeg, 640) as img:
        assert img.size == (640, 400)
    with decode_image(png) as img:
        assert img.size == (1280, 800)  # PNG has no reduced decode
    assert bin(small ^ phash_png(png)).count("1") <= 2
    assert phash_png(jpeg) == small


def test_thumbnail_from_the_decoded_image_matches_the_bytes():
    from PIL import Image

    jpeg = _page_like("JPEG", quality=80)
    with decode_image(jpeg, 320) as img:
        from_image = make_thumbnail(img, 320, "jpeg", 70)
        assert img.size == (320, 200)  # left open and unchanged for the caller
    with Image.open(io.BytesIO(from_image)) as a, Image.open(io.BytesIO(make_thumbnail(jpeg, 320, "jpeg", 70))) as b:
        assert a.size == b.size == (320, 200)


def test_not_an_image():
    with pytest.raises(ValueError):
        decode_image(b"<html>")
    with pytest.raises(ValueError):
        phash_png(b"\x89PNG broken")
