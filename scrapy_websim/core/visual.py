"""Visual feature: 64-bit perceptual hash of the viewport screenshot (SPEC section 3, "Visual").

:func:`phash_png` decodes the PNG bytes, hashes them with ``imagehash.phash`` (8x8 DCT hash) and
returns a Python int; the decoded image is closed before returning, so only 8 bytes outlive it.
Bit order: the hex string of ``imagehash`` read as one big-endian integer (row-major, first pixel
of the hash matrix is the most significant bit), so ``hex64(phash_png(x)) == str(imagehash.phash(img))``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

__all__ = ["VisualParams", "phash_png"]


@dataclass(frozen=True)
class VisualParams:
    hash_size: int = 8  #: 8 -> 64-bit hash (the record field is 64 bits: do not change lightly)

    def validate(self) -> None:
        if self.hash_size != 8:
            raise ValueError(f"hash_size must be 8 (64-bit hash), got {self.hash_size}")


def phash_png(data: bytes) -> int:
    """64-bit pHash of an image given as bytes (PNG, or any format Pillow reads).

    Raises ``ValueError`` for bytes that are not an image.
    """
    import imagehash
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            img.draft("L", (256, 256))  # JPEG only: decode at reduced size; no-op for PNG
            value = imagehash.phash(img, hash_size=8)
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"not a decodable image: {exc}") from exc
    return int(str(value), 16)
