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


# --- DICOM and NIfTI that are bad as a whole or bombs (hostile headers) -----------------------------


def deflated_dicom_bomb(path: Path, side: int = 20_000) -> Path:
    """A deflated DICOM (Deflated Explicit VR Little Endian) of well under 1 MB holding ``side`` x ``side``
    16-bit pixels (800 MB inflated for 20,000): a decompression bomb that is not an image file. The zero
    pixels are deflated once in full-flushed blocks (each block the same bytes), so writing it is fast."""
    from pydicom.dataset import Dataset, FileMetaDataset
    from pydicom.filebase import DicomBytesIO
    from pydicom.filewriter import write_dataset, write_file_meta_info
    from pydicom.uid import DeflatedExplicitVRLittleEndian, generate_uid

    ds = Dataset()
    ds.SOPClassUID, ds.SOPInstanceUID, ds.Modality = "1.2.840.10008.5.1.4.1.1.2", generate_uid(), "CT"
    ds.Rows = ds.Columns = side
    ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, "MONOCHROME2"
    ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 0
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID = ds.SOPClassUID, ds.SOPInstanceUID
    meta.TransferSyntaxUID = DeflatedExplicitVRLittleEndian
    head = DicomBytesIO()
    head.is_little_endian, head.is_implicit_VR = True, False
    write_file_meta_info(head, meta)
    body = DicomBytesIO()
    body.is_little_endian, body.is_implicit_VR = True, False
    write_dataset(body, ds)
    n = side * side * 2
    block = 1 << 22
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    pixel_header = b"\xe0\x7f\x10\x00OW\x00\x00" + struct.pack("<I", n)  # (7FE0,0010) OW, n bytes
    out = [b"\0" * 128 + b"DICM" + head.getvalue(), c.compress(body.getvalue() + pixel_header),
           c.flush(zlib.Z_FULL_FLUSH)]
    zeros = c.compress(bytes(block)) + c.flush(zlib.Z_FULL_FLUSH)  # the same bytes for every all-zero block
    out += [zeros] * (n // block)
    out += [c.compress(bytes(n % block)), c.flush()]
    return _write(path, b"".join(out))


def dicom_tag_bytes(path: Path, old: bytes, new: bytes) -> Path:
    """Replace the raw bytes of one element value (same length): values pydicom refuses to write ("ab" as IS)."""
    data = path.read_bytes()
    assert data.count(old) == 1 and len(old) == len(new), old
    return _write(path, data.replace(old, new))


def nifti_bomb(path: Path, shape: tuple[int, ...] = (18_000, 18_000, 3)) -> Path:
    """A NIfTI whose header declares ``shape`` voxels (972 M for the default) with almost no data behind it."""
    import nibabel as nib

    img = nib.Nifti1Image(np.zeros((2, 2, 2), np.uint8), np.eye(4))
    hdr = img.header
    hdr.set_data_shape(shape)
    data = hdr.binaryblock + b"\0" * 4 + b"\0" * 4096  # header, extension flag, a few voxels
    return _write(path, data)
