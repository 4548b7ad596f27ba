"""Small screenshot thumbnails for the report, made from the screenshot the crawl already took.

One file per page, named after a hash of the page's ``url`` field (the line as given), so a
thumbnail written during the crawl is found again by the report whatever id the page ends with
(discovered pages are renumbered at the end). Files go straight to disk: nothing
is kept in memory, and disk use is bounded by width and quality (docs/report.md gives the bytes per page).
"""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any, Dict, Optional

from scrapy_websim.core.fingerprints import blake2b64
from scrapy_websim.core.types import hex64
from scrapy_websim.result.safefile import write_bytes

#: File name extension of each format.
EXTENSIONS = {"webp": ".webp", "jpeg": ".jpg"}
FORMATS = tuple(EXTENSIONS)


def thumbnail_stem(url: str) -> str:
    """The file name (without extension) of ``url``'s thumbnail: 16 hex digits of BLAKE2b."""
    return hex64(blake2b64(url))


def make_thumbnail(image: Any, width: int = 320, fmt: str = "webp", quality: int = 60) -> bytes:
    """``image`` (PNG or any format Pillow reads, as bytes, or a decoded PIL image such as the
    recorder's :func:`~scrapy_websim.core.page.visual.decode_image`, left open) scaled to ``width``
    pixels wide, encoded as ``fmt``.

    Raises ``ValueError`` for bytes that are not an image.
    """
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415  # start-up time: websim report makes none

    if fmt not in EXTENSIONS:
        raise ValueError(f"thumbnail format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    out = io.BytesIO()
    try:
        with (Image.open(io.BytesIO(image)) if isinstance(image, bytes) else contextlib.nullcontext(image)) as img:
            img.draft("RGB", (width, width))  # JPEG input: decode at reduced size (no-op once loaded)
            img.load()
            small = img
            if img.width > width:
                height = max(1, round(img.height * width / img.width))
                # reducing_gap: a cheap integer downscale first, then a good filter on the small image
                small = img.resize((width, height), Image.Resampling.BICUBIC, reducing_gap=2.0)
            if small.mode != "RGB":  # after the resize: fewer pixels to convert
                small = small.convert("RGB")
            if fmt == "webp":
                small.save(out, "WEBP", quality=quality, method=2)  # method 2: faster than 4, barely larger
            else:
                small.save(out, "JPEG", quality=quality, optimize=True)
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"not a decodable image: {exc}") from exc
    return out.getvalue()


def save_thumbnail(directory: str, url: str, image: Any, width: int = 320, fmt: str = "webp",
                   quality: int = 60) -> str:
    """Write ``url``'s thumbnail into ``directory``; returns its path."""
    data = make_thumbnail(image, width, fmt, quality)
    path = os.path.join(directory, thumbnail_stem(url) + EXTENSIONS[fmt])
    write_bytes(path, data)  # a report written meanwhile never sees half a file, a failed write leaves none
    return path


def list_thumbnails(directory: Optional[str]) -> Dict[str, str]:
    """``{stem: file name}`` of the thumbnails in ``directory`` (empty when there is none)."""
    found: Dict[str, str] = {}
    if not directory or not os.path.isdir(directory):
        return found
    with os.scandir(directory) as entries:
        for entry in entries:
            stem, ext = os.path.splitext(entry.name)
            if ext in (".webp", ".jpg") and len(stem) == 16 and entry.is_file():
                found[stem] = entry.name
    return found
