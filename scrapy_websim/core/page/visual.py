"""Visual feature: 64-bit perceptual hash of the viewport screenshot.

:func:`phash_png` decodes the image bytes (a JPEG at a reduced DCT scale), hashes them with
``imagehash.phash`` (8x8 DCT hash) and returns a Python int; the decoded image is closed before
returning, so only 8 bytes outlive it.
Bit order: the hex string of ``imagehash`` read as one big-endian integer (row-major, first pixel
of the hash matrix is the most significant bit), so ``hex64(phash_png(x)) == str(imagehash.phash(img))``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, Union

__all__ = ["VisualParams", "decode_image", "phash_image", "phash_png"]


@dataclass(frozen=True)
class VisualParams:
    hash_size: int = 8  #: 8 -> 64-bit hash (the record field is 64 bits: do not change lightly)

    def validate(self) -> None:
        if self.hash_size != 8:
            raise ValueError(f"hash_size must be 8 (64-bit hash), got {self.hash_size}")


def decode_image(data: bytes, min_width: int = 256) -> Any:
    """``data`` (PNG, JPEG or any format Pillow reads) decoded once, for the pHash and the thumbnail.

    A JPEG is decoded at the smallest of its DCT scales (1/2, 1/4, 1/8) that keeps it at least
    ``min_width`` pixels wide (a 1280x800 screenshot becomes 320x200), a fraction of the work of
    decoding it whole. The caller closes the image. Raises ``ValueError`` for bytes that are not an
    image.
    """
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415  # only where screenshots are decoded

    try:
        img = Image.open(io.BytesIO(data))
        if img.width > min_width:
            img.draft("RGB", (min_width, max(1, img.height * min_width // img.width)))  # JPEG only
        img.load()
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"not a decodable image: {exc}") from exc
    return img


def phash_image(img: Any) -> int:
    """64-bit pHash of a decoded image (see the module docstring for the bit order)."""
    import imagehash  # noqa: PLC0415  # only where screenshots are hashed

    return int(str(imagehash.phash(img, hash_size=8)), 16)


def phash_png(data: Union[bytes, Any]) -> int:
    """64-bit pHash of an image given as bytes (PNG, JPEG, any format Pillow reads) or already
    decoded (:func:`decode_image`).

    Raises ``ValueError`` for bytes that are not an image.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        return phash_image(data)
    with decode_image(bytes(data)) as img:
        return phash_image(img)
