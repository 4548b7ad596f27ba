import io

import imagehash
import pytest
from PIL import Image, ImageDraw

from scrapy_websim.core.fingerprints import hamming
from scrapy_websim.core.page.visual import VisualParams, phash_png


def _png(draw_fn, size=(1280, 800)):
    img = Image.new("RGB", size, "white")
    draw_fn(ImageDraw.Draw(img))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def _layout(d, banner="navy"):
    d.rectangle([0, 0, 1280, 90], fill=banner)
    for y in range(150, 750, 40):
        d.rectangle([100, y, 900, y + 18], fill="gray")
    d.rectangle([950, 150, 1200, 700], fill="lightblue")


def test_pinned_and_matches_imagehash():
    data = _png(_layout)
    value = phash_png(data)
    assert value == 0xBE41415B417F413F
    assert format(value, "016x") == str(imagehash.phash(Image.open(io.BytesIO(data))))


def test_near_and_far():
    a = phash_png(_png(_layout))
    b = phash_png(_png(lambda d: (_layout(d), d.text((120, 160), "12:03:44", fill="black"))))
    c = phash_png(_png(lambda d: d.ellipse([100, 100, 1100, 700], fill="black")))
    assert hamming(a, b) <= 4
    assert hamming(a, c) >= 20


def test_not_an_image():
    with pytest.raises(ValueError):
        phash_png(b"not a png")
    with pytest.raises(ValueError, match="hash_size"):
        VisualParams(hash_size=16).validate()
