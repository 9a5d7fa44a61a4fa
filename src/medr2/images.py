"""Safe image decoding and the content-addressed image store of a bench.

Every image in ``BENCH/images/`` is named by its *identity*, the hash its bench's :class:`IdentityRule` gives
it, so identical images are stored once and any path can be checked against its recorded hash. A bench's
rule follows from its ``format_version`` (:func:`identity_of_version`), the one place that decides it:

- format 3 (:data:`PIXELS`): the sha256 of the decoded pixels (:func:`pixel_sha256`: a domain-separated
  header of mode, shape and dtype, then the raw bytes in C order), never of an encoding. Any lossless
  encoder, level or library may write the file; item ids, seeds and names are the same on every platform.
- formats 1 and 2 (:data:`PNG_BYTES`): the sha256 of the PNG bytes written with fixed Pillow settings, which
  depend on the zlib build. Benches of these versions are read and checked by this rule, never the other.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
from PIL import Image

from medr2.atomic import file_mode
from medr2.errors import BadInput

# Decompression-bomb guard: refuse images with more pixels than this (about 16k x 16k). The DICOM and
# NIfTI readers apply the same limit to what a header declares, before decoding any pixel.
MAX_PIXELS = 16384 * 16384
# The image gate also bounds the decoded bytes (width x height x channels x bytes per sample x frames): a
# 16-bit or RGBA image of MAX_PIXELS would be 0.5-1 GiB before any conversion copies it.
MAX_DECODED_BYTES = 256 << 20
MAX_PATH_CHARS = 4096  # longer relative paths are refused as such (the OS would refuse them anyway)
Image.MAX_IMAGE_PIXELS = MAX_PIXELS


def check_decoded(width: int, height: int, *, channels: int = 1, bytes_per_sample: int = 1, frames: int = 1,
                  file: str | None = None, record: str | None = None, field: str | None = None) -> None:
    """The image gate (docs/reliability.md): what a header declares, checked before any pixel is decoded, by
    every reader (Pillow images, label maps, DICOM, NIfTI slices). More than :data:`MAX_PIXELS` pixels per
    frame, or more than :data:`MAX_DECODED_BYTES` decoded bytes in all, is refused (BadInput)."""
    if width * height > MAX_PIXELS:
        raise BadInput(f"image of {width}x{height} pixels exceeds the limit of {MAX_PIXELS} pixels (decompression "
                       "bomb refused from the header)", file=file, record=record, field=field)
    total = width * height * channels * bytes_per_sample * frames
    if total > MAX_DECODED_BYTES:
        raise BadInput(f"image of {width}x{height} pixels x {channels} channel(s) x {bytes_per_sample} byte(s)"
                       + (f" x {frames} frames" if frames > 1 else "")
                       + f" would decode to {total:,} bytes, over the limit of {MAX_DECODED_BYTES:,} (refused from "
                       "the header)", file=file, record=record, field=field)


_SAMPLE_BYTES = {"I;16": 2, "I;16B": 2, "I;16L": 2, "I;16N": 2, "I": 4, "F": 4}


@contextmanager
def open_checked(src: Any, *, file: str | None = None, record: str | None = None,
                 field: str | None = None) -> Iterator[Image.Image]:
    """``Image.open`` passed through :func:`check_decoded` (from the header: nothing decoded yet). The only way
    medr2 opens an image file with Pillow."""
    with Image.open(src) as im:
        check_decoded(im.width, im.height, channels=len(im.getbands()), bytes_per_sample=_SAMPLE_BYTES.get(im.mode, 1),
                      file=file if file is not None else (str(src) if isinstance(src, str | Path) else None),
                      record=record, field=field)
        yield im


@dataclass(frozen=True)
class ImageRef:
    path: str  # relative to the bench root, e.g. "images/ab12....png"
    sha256: str
    width: int
    height: int


PNG_LEVEL_ENV = "MEDR2_PNG_LEVEL"  # zlib level (0-9) of the PNGs a format-3 bench writes (identity-free)
DEFAULT_PNG_LEVEL = 1  # the measured choice (docs/benchmarks.md, "Bench format 3"): fastest, files ~5% larger
V1_PNG_LEVEL = 3  # formats 1 and 2 name images by these bytes: their encoder settings never change


def png_level() -> int:
    """The zlib level of a format-3 bench's PNGs: :data:`DEFAULT_PNG_LEVEL`, or the ``MEDR2_PNG_LEVEL``
    environment variable (the identity does not depend on it; tests vary it to show so)."""
    text = os.environ.get(PNG_LEVEL_ENV)
    if text is None or text == "":
        return DEFAULT_PNG_LEVEL
    if not (text.isascii() and text.isdigit() and 0 <= int(text) <= 9):
        raise BadInput(f"must be a zlib level 0-9, got {text[:20]!r}", field=PNG_LEVEL_ENV)
    return int(text)


def _pixel_mode(arr: np.ndarray) -> str:
    if arr.dtype != np.uint8:
        raise ValueError(f"expected uint8 pixels, got {arr.dtype}")
    if arr.ndim == 2:
        return "L"
    if arr.ndim == 3 and arr.shape[2] == 3:
        return "RGB"
    raise ValueError(f"expected (H, W) or (H, W, 3) pixels, got shape {arr.shape}")


def encode_png(arr: np.ndarray, level: int | None = None) -> bytes:
    """Encode a uint8 grayscale (H, W) or RGB (H, W, 3) array as PNG bytes at zlib ``level`` (default
    :func:`png_level`); the same settings give the same bytes with the same zlib build."""
    img = Image.fromarray(arr, mode=_pixel_mode(arr))
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=png_level() if level is None else level, optimize=False)
    return buf.getvalue()


PIXEL_DOMAIN = "medr2-image-pixels"  # domain separation: no other medr2 hash starts with this header
PIXEL_HASH_VERSION = 1


def pixel_sha256(arr: np.ndarray) -> str:
    """The identity of an image in a format-3 bench: the sha256 of one header line (canonical JSON of the
    domain, this hash's version, the mode, the shape and the dtype) and then the pixels' bytes in C order
    (row by row, channels interleaved). uint8 pixels have no byte order; nothing of an encoding enters."""
    mode = _pixel_mode(arr)
    header = json.dumps({"domain": PIXEL_DOMAIN, "dtype": "uint8", "mode": mode, "shape": list(arr.shape),
                         "version": PIXEL_HASH_VERSION}, sort_keys=True, separators=(",", ":"))
    h = hashlib.sha256(header.encode("ascii") + b"\n")
    h.update(np.ascontiguousarray(arr).data)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class IdentityRule:
    """How a bench names and checks its images. ``versions``: the format versions written under it (without,
    with deferred renders). The one object every writer (:class:`ImageStore`), checker
    (:func:`verified_image_path`, the bench validator, ``medr2 info --check``) and renderer asks."""

    name: str
    versions: tuple[int, int]
    pixels: bool  # the identity is of the decoded pixels (else of the PNG bytes)
    # the format version of a bench under this rule with items of several images (issue 49), so that a release
    # that reads only one image per item refuses it rather than showing one image of each; None: not written
    several: int | None = None

    @property
    def read_versions(self) -> tuple[int, ...]:
        """Every format version a bench under this rule is written as."""
        return (*self.versions, *(() if self.several is None else (self.several,)))

    def format_version(self, *, renders: bool, several: bool = False) -> int:
        if several and self.several is not None:
            return self.several
        return self.versions[1] if renders else self.versions[0]

    def encode(self, arr: np.ndarray) -> bytes:
        """The bytes of a file showing ``arr`` (under the PNG-bytes rule: exactly the bytes it names)."""
        return encode_png(arr) if self.pixels else encode_png(arr, V1_PNG_LEVEL)

    def of_array(self, arr: np.ndarray, data: bytes | None = None) -> str:
        """The identity of ``arr`` (``data``: its bytes from :meth:`encode`, where already made)."""
        if self.pixels:
            return pixel_sha256(arr)
        return sha256_bytes(self.encode(arr) if data is None else data)

    def of_bytes(self, data: bytes, *, file: str) -> str:
        """The identity of the image file whose bytes are ``data`` (``file`` names it in errors). Under the
        pixel rule the file must be exactly its image (:func:`check_png_end`): adapters send the file's bytes,
        so bytes the pixels do not account for would reach a model unchecked."""
        if not self.pixels:
            return sha256_bytes(data)
        check_png_end(data, file)
        return pixel_sha256(decode_image(io.BytesIO(data), file))

    def of_file(self, path: Path | str) -> str:
        if not self.pixels:
            return sha256_file(path)
        return self.of_bytes(Path(path).read_bytes(), file=str(path))


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def check_png_end(data: bytes, file: str) -> None:
    """A PNG file ends with its IEND chunk: data after it (or a chunk running past the end of the file) is
    refused, as the file is then not only the image its recorded sha256 names. Other encodings are left to
    the decoder."""
    if not data.startswith(PNG_SIGNATURE):
        return
    pos = len(PNG_SIGNATURE)
    while pos + 8 <= len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind = data[pos + 4:pos + 8]
        pos += 12 + length  # length, type, data, crc
        if kind == b"IEND":
            if pos != len(data):
                raise BadInput(f"{len(data) - pos} byte(s) after the PNG's IEND chunk: not only the image its "
                               "recorded sha256 names", file=file, field="image_sha256")
            return
    raise BadInput("PNG without an IEND chunk within the file: not the image its recorded sha256 names",
                   file=file, field="image_sha256")


PNG_BYTES = IdentityRule("png-sha256", (1, 2), pixels=False)
PIXELS = IdentityRule("pixel-sha256", (3, 3), pixels=True, several=4)
IDENTITY_RULES = (PNG_BYTES, PIXELS)  # every rule a reader knows; the last one is what new benches are written by
CURRENT_IDENTITY = IDENTITY_RULES[-1]


def identity_of_version(version: object, *, file: str | None = None) -> IdentityRule:
    """The rule of a bench of ``format_version`` ``version`` (BadInput for a version no rule declares)."""
    for rule in IDENTITY_RULES:
        if version in rule.read_versions and type(version) is int:
            return rule
    raise BadInput(f"unsupported format_version {str(version)[:40]!r}", file=file, field="format_version")


def bench_identity(root: Path | str) -> IdentityRule:
    """The rule of the bench at ``root``, from its manifest (read once per manifest file version). A folder with
    no manifest is an image store, not a bench (yet): its images are named by the rule a store writes by,
    :data:`CURRENT_IDENTITY`."""
    path = Path(root).resolve() / "manifest.json"
    try:
        st = path.stat()
    except FileNotFoundError:
        return CURRENT_IDENTITY
    except OSError:  # unreadable: read_manifest names why
        return _bench_identity(str(path.parent), (-1, -1, -1))
    return _bench_identity(str(path.parent), (st.st_mtime_ns, st.st_size, st.st_ino))


@functools.lru_cache(maxsize=64)
def _bench_identity(root: str, _stamp: tuple[int, int, int]) -> IdentityRule:
    from medr2.bench.format import MANIFEST, read_manifest

    return identity_of_version(read_manifest(root).get("format_version"), file=str(Path(root) / MANIFEST))


class ImageStore:
    """Content-addressed PNG store under ``root/images``. Safe for many processes at once.

    With ``defer_renders`` (``medr2 build --renders deferred``), :meth:`put_render` records how to make an
    image (:mod:`medr2.renders`) instead of writing it, under the identity the image has (``identity``: the
    bench's rule; a new bench's is :data:`CURRENT_IDENTITY`, which needs no encoding for that)."""

    def __init__(self, root: Path, *, defer_renders: bool = False,
                 identity: IdentityRule = CURRENT_IDENTITY) -> None:
        self.root = Path(root)
        self.identity = identity
        self.dir = self.root / "images"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.defer_renders = defer_renders
        self._sink: Any = None  # medr2.renders.RenderSink, opened on the first deferred render

    def put_render(self, arr: np.ndarray, spec_json: str) -> ImageRef:
        """Store the image ``arr``, or, when deferring, only record ``spec_json`` (a
        :class:`medr2.renders.RenderSpec` that makes exactly ``arr``) under its identity (no encoding under
        the pixel rule)."""
        if not self.defer_renders:
            return self.put_array(arr)
        sha = self.identity.of_array(arr)
        if self._sink is None:
            from medr2.renders import RenderSink

            self._sink = RenderSink(self.root)
        self._sink.add(sha, spec_json)
        return ImageRef(f"images/{sha}.png", sha, arr.shape[1], arr.shape[0])

    def close_sink(self) -> None:
        """Close this process's spec file (before :func:`medr2.renders.write_renders` gathers them)."""
        if self._sink is not None:
            self._sink.close()

    def put_array(self, arr: np.ndarray) -> ImageRef:
        data = self.identity.encode(arr)
        return self._put(data, self.identity.of_array(arr, data), arr.shape[1], arr.shape[0])

    def put_png_bytes(self, data: bytes, width: int, height: int) -> ImageRef:
        """Store an encoded PNG as it is, under its identity (under the pixel rule: of the pixels it decodes to)."""
        return self._put(data, self.identity.of_bytes(data, file="<png bytes>"), width, height)

    def _put(self, data: bytes, sha: str, width: int, height: int) -> ImageRef:
        rel = f"images/{sha}.png"
        dest = self.root / rel
        if not dest.exists():
            fd, tmp = tempfile.mkstemp(dir=self.dir, suffix=".tmp")
            os.fchmod(fd, file_mode())  # what open() would give (mkstemp's 0600 would hide a shared bench)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, dest)  # atomic: a reader never sees a half-written image
        return ImageRef(rel, sha, width, height)

    def path(self, rel: str) -> Path:
        """The file of ``rel`` (inside the root), rendered first if the bench defers it."""
        from medr2.renders import image_path

        return image_path(self.root, rel)


class InsideRoot:
    """:func:`resolve_inside` for many paths under one root: the root is resolved once and paths are
    handled as strings (a bench's validation resolves one path per image reference)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).resolve()
        self._root = str(self.root)
        self._prefix = self._root.rstrip(os.sep) + os.sep
        self._dirs: dict[str, str] = {}  # a relative folder -> its real path (the few folders a bench's files are in)

    def resolve(self, rel: str) -> str:
        """The real path of ``rel`` under the root; refuse absolute paths, ``..`` and symlinks leading out."""
        if not isinstance(rel, str):
            raise BadInput(f"a path must be text, got {type(rel).__name__}")
        shown = rel if len(rel) <= 200 else rel[:200] + "..."
        if "\x00" in rel:
            raise BadInput("unusable path: it contains a NUL character", file=shown.replace("\x00", "\\x00"))
        if len(rel) > MAX_PATH_CHARS:
            raise BadInput(f"unusable path: {len(rel)} characters (at most {MAX_PATH_CHARS})", file=shown)
        if os.path.isabs(rel):
            raise BadInput("absolute path not allowed", file=shown)
        try:
            path = self._realpath(rel)
        except (OSError, ValueError) as e:
            raise BadInput(f"unusable path: {e}", file=shown) from None
        if path != self._root and not path.startswith(self._prefix):
            raise BadInput(f"path escapes the data root {self.root}", file=shown)
        return path


    def _realpath(self, rel: str) -> str:
        """``os.path.realpath`` of ``rel`` under the root, its folder resolved once: where the last part is a plain
        name and not a symlink (one ``lstat``), the real path is the folder's real path joined with it, as
        ``realpath`` would find it component by component (docs/benchmarks.md, "Eval's start-up")."""
        head, name = os.path.split(rel)
        if name in ("", ".", "..") or len(self._dirs) >= _DIRS_KEPT and head not in self._dirs:
            return os.path.realpath(os.path.join(self._root, rel))
        real_dir = self._dirs.get(head)
        if real_dir is None:
            real_dir = self._dirs[head] = os.path.realpath(os.path.join(self._root, head))
        path = os.path.join(real_dir, name)
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return os.path.realpath(path)
        except OSError:  # missing (realpath leaves a missing last part as it is) or unreadable: realpath decides
            return os.path.realpath(path)
        return path


_DIRS_KEPT = 1_024  # folders whose real path InsideRoot remembers


def resolve_inside(root: Path, rel: str) -> Path:
    """Resolve ``rel`` under ``root``; refuse absolute paths, ``..`` and symlinks leading out."""
    return Path(InsideRoot(root).resolve(rel))


def verified_image_path(root: Path, rel: str | None, sha256: str | None, *, check: bool = True) -> Path:
    """The path of a bench image referenced by a message part: inside ``root``, and (when ``check``)
    with the identity its recorded sha256 names, under the bench's rule (:func:`bench_identity`)."""
    from medr2.renders import image_path

    if not rel:
        raise BadInput("image part without a path", field="image")
    path = image_path(Path(root), rel, sha256)  # rendered first where the bench defers it (medr2.renders)
    if check and sha256:
        rule = bench_identity(root)
        if rule.of_file(path) != sha256:
            what = "pixels" if rule.pixels else "bytes"
            raise BadInput(f"image {what} do not match their recorded sha256 ({rule.name})", file=str(path),
                           field="image_sha256")
    return path


def window_finite(a: np.ndarray, file: str | None = None) -> np.ndarray:
    """Min-max window of a float/integer image to uint8 over its *finite* values: a NaN or infinite pixel
    does not set the window (one such pixel would otherwise make the whole image constant); NaN and -inf
    are shown black, +inf white. An image with no finite value is refused."""
    finite = np.isfinite(a)
    if not finite.any():
        raise BadInput("no finite pixel value (all NaN or infinite)", file=file)
    vals = a[finite]
    lo, hi = float(vals.min()), float(vals.max())
    if hi <= lo:
        out = np.zeros(a.shape, np.uint8)
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            out = np.clip(np.round((np.where(finite, a, lo) - lo) / (hi - lo) * 255), 0, 255).astype(np.uint8)
    out[np.isposinf(a)] = 255
    return out


def load_image(path: Path, *, mode: str | None = None) -> np.ndarray:
    """Decode an image file with Pillow, guarded against decompression bombs and truncation.

    Returns uint8 (H, W) for grayscale or (H, W, 3) for colour (``mode`` "L" or "RGB" forces one).
    16-bit images are rescaled to 8 bit; palette/CMYK/alpha are converted; EXIF orientation applied.
    """
    return decode_image(path, str(path), mode=mode)


def decode_image(source: Path | IO[bytes], file: str, *, mode: str | None = None) -> np.ndarray:
    """:func:`load_image` of a path or an open binary file (``file`` names it in errors)."""
    from PIL import ImageOps

    try:
        with open_checked(source, file=file) as opened:
            opened.load()
            im: Image.Image = ImageOps.exif_transpose(opened)
            if im.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
                im = Image.fromarray(window_finite(np.asarray(im, dtype=np.float64), file), mode="L")
            target = mode or ("L" if im.mode in ("L", "1", "LA") else "RGB")
            im = im.convert(target)
            return np.asarray(im).copy()
    except BadInput:
        raise
    except Image.DecompressionBombError as e:
        raise BadInput(f"decompression bomb refused: {e}", file=file) from e
    except (OSError, SyntaxError, ValueError) as e:
        raise BadInput(f"cannot decode image: {e}", file=file) from e
