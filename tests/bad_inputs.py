"""Generators of bad (and awkward but valid) input files, written at test time (no binary junk in git).

Each generator writes one file and returns its path. ``BAD_IMAGES`` must be quarantined by every
reader that decodes images; ``ODD_IMAGES`` are valid and must be read correctly.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image


def _png_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def _jpeg_bytes(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="JPEG", quality=90)
    return buf.getvalue()


def pattern(h: int = 40, w: int = 48, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 255, (h, w), dtype=np.uint8)


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def zero_byte(path: Path) -> Path:
    return _write(path, b"")


def truncated_png(path: Path) -> Path:
    data = _png_bytes(pattern())
    return _write(path, data[: len(data) // 2])


def truncated_jpeg(path: Path) -> Path:
    data = _jpeg_bytes(np.stack([pattern()] * 3, axis=-1))
    return _write(path, data[: len(data) // 2])


def text_as_image(path: Path) -> Path:
    return _write(path, b"this is a text file, not an image\n" * 4)


def html_as_image(path: Path) -> Path:
    return _write(path, b"<html><script>alert(1)</script></html>")


def _chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def bomb_png(path: Path, side: int = 100_000) -> Path:
    """A tiny PNG that declares ``side`` x ``side`` pixels (10 gigapixels): a decompression bomb."""
    ihdr = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    idat = zlib.compress(b"\0" * 1024, 9)
    return _write(path, b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b""))


BAD_IMAGES: dict[str, Callable[[Path], Path]] = {
    "zero-byte.png": zero_byte,
    "truncated.png": truncated_png,
    "truncated.jpg": truncated_jpeg,
    "text.png": text_as_image,
    "html.jpg": html_as_image,
    "bomb.png": bomb_png,
}


# --- valid but awkward images: (writer, expected (width, height) after decoding) ------------------


def png16(path: Path) -> Path:
    arr = (np.arange(40 * 48, dtype=np.uint16).reshape(40, 48) * 30).astype(np.uint16)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(arr).save(path)
    return path


def palette_png(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.stack([pattern()] * 3, axis=-1)).convert("P", palette=Image.Palette.ADAPTIVE).save(path)
    return path


def cmyk_jpeg(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.stack([pattern()] * 3, axis=-1)).convert("CMYK").save(path, format="JPEG")
    return path


def exif_rotated_jpeg(path: Path) -> Path:
    """40 rows x 48 columns stored, EXIF orientation 6 (rotate 90): displayed 40 wide, 48 high."""
    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.fromarray(np.stack([pattern()] * 3, axis=-1))
    exif = Image.Exif()
    exif[0x0112] = 6
    im.save(path, format="JPEG", exif=exif.tobytes())
    return path


ODD_IMAGES: dict[str, tuple[Callable[[Path], Path], tuple[int, int]]] = {
    "sixteen-bit.png": (png16, (48, 40)),
    "palette.png": (palette_png, (48, 40)),
    "cmyk.jpg": (cmyk_jpeg, (48, 40)),
    "exif-rotated.jpg": (exif_rotated_jpeg, (40, 48)),
}


# --- other formats ---------------------------------------------------------------------------------


def truncated_copy(src: Path, dest: Path, keep: float = 0.5) -> Path:
    data = src.read_bytes()
    return _write(dest, data[: int(len(data) * keep)])


def latin1_csv(path: Path, text: str) -> Path:
    return _write(path, text.encode("latin-1"))


def utf16_csv(path: Path, text: str) -> Path:
    return _write(path, text.encode("utf-16"))


# --- bad cells for importers (images embedded in records) -------------------------------------------


def png_bytes(arr: np.ndarray | None = None) -> bytes:
    return _png_bytes(pattern() if arr is None else arr)


def truncated_png_bytes() -> bytes:
    data = _png_bytes(pattern())
    return data[: len(data) // 2]


def b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


BAD_B64_CELLS: dict[str, str] = {
    "not-base64": "!!not*base64!!",
    "truncated-png": b64(truncated_png_bytes()),
    "text-bytes": b64(b"this is not an image"),
}
