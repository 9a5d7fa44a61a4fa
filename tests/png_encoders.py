"""Other PNG encoders than medr2's, for the tests that show an image's identity does not depend on its encoding.

``ENCODERS`` maps a name to a function from uint8 pixels ((H, W) grey or (H, W, 3) RGB) to PNG bytes:
Pillow at other zlib levels (``optimize`` gives level 9's bytes), and :func:`zlib_png`, a PNG written here from the
specification with :mod:`zlib` (filter type 0 on every row, one IDAT chunk), which shares nothing with
Pillow's encoder but the zlib library. :func:`reencode_images` rewrites every PNG of a bench folder with one.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def zlib_png(arr: np.ndarray, level: int = 9) -> bytes:
    """A PNG of ``arr`` written with :mod:`zlib` alone (8-bit grey or RGB, no filter, no interlace)."""
    h, w = arr.shape[:2]
    color = 0 if arr.ndim == 2 else 2
    rows = np.ascontiguousarray(arr).reshape(h, -1)
    raw = b"".join(b"\x00" + rows[y].tobytes() for y in range(h))
    ihdr = struct.pack(">IIBBBBB", w, h, 8, color, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", zlib.compress(raw, level))
            + _chunk(b"IEND", b""))


def _pillow(level: int, optimize: bool = False) -> Callable[[np.ndarray], bytes]:
    def encode(arr: np.ndarray) -> bytes:
        buf = io.BytesIO()
        Image.fromarray(arr, mode="L" if arr.ndim == 2 else "RGB").save(buf, format="PNG", compress_level=level,
                                                                         optimize=optimize)
        return buf.getvalue()

    return encode


ENCODERS: dict[str, Callable[[np.ndarray], bytes]] = {
    "pillow-0": _pillow(0),
    "pillow-9": _pillow(9),
    "pillow-6": _pillow(6),
    "zlib-1": lambda arr: zlib_png(arr, 1),
    "zlib-9": zlib_png,
}


def reencode_images(root: Path, encoder: str) -> int:
    """Rewrite every PNG under ``root/images`` with ``ENCODERS[encoder]`` (same pixels, other bytes); returns how
    many files changed bytes."""
    from medr2.images import load_image

    changed = 0
    for path in sorted((root / "images").glob("*.png")):
        old = path.read_bytes()
        new = ENCODERS[encoder](load_image(path))
        if new != old:
            path.write_bytes(new)
            changed += 1
    return changed
