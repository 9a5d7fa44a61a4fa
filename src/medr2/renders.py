"""Deferred renders: images a bench pins by hash but stores as a recipe, rendered on first use.

The visual variants V2, V3, V8, V9, V10, V11 and V12 (docs/variants.md) are pure functions of images the bench
stores (a case's image, another case's image, a mask) and of numbers the build fixed (a size to fit, a degradation and
its seed, a mirrored cue). A build with ``--renders deferred`` (the default) still renders each of them,
so its identity (hence every item id, seed and request hash) is what a full build gives, but it writes a
:class:`RenderSpec` to ``renders.parquet`` instead of the PNG (docs/bench-format.md "Deferred renders");
in a format-3 bench the identity is of the pixels (:data:`medr2.images.PIXELS`), so nothing is encoded.
Every reader of a bench image resolves it through :func:`image_path`: a stored file is returned as is; a
missing one with a spec is rendered, its identity (under the bench's rule) checked against the pinned one
(a mismatch, e.g. another numpy or Pillow resampling, or for a format 1/2 bench another zlib, is a clear
error naming both hashes), and cached in ``images/`` atomically, so concurrent readers are safe and each
image is rendered once.

The build renders through the same :func:`render` as a reader does, so the two cannot drift apart.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from medr2 import jsonsafe
from medr2.atomic import file_mode
from medr2.errors import BadInput
from medr2.images import bench_identity, load_image, resolve_inside
from medr2.registry import Registry

RENDERS_FILE = "renders.parquet"
SINK_PREFIX = ".renders."  # a build's workers append specs to hidden ``.renders.*.partial`` files
SINK_SUFFIX = ".partial"
ROW_GROUP = 4096  # specs per row group of renders.parquet (sorted by sha256; a spec lookup reads one)
GROUPS_KEPT = 8  # row groups a reader keeps decoded
MAX_DEPTH = 4  # a render whose source is itself a deferred render (none today), at most this deep
RENDER_MODES = ("deferred", "stored")  # ``medr2 build --renders``


@dataclass(frozen=True)
class RenderSpec:
    """How to make one image: ``op`` applied to the image at ``source`` with ``params``, then ``cue`` (a
    :class:`medr2.records.Cue` as JSON, drawn) shaped by the mask at ``mask`` (mirrored if ``mask_flip``)."""

    op: str
    source: str
    params: dict[str, Any] = field(default_factory=dict)
    cue: dict[str, Any] | None = None
    mask: str | None = None
    mask_flip: bool = False

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, *, file: str, record: str) -> RenderSpec:
        data = jsonsafe.loads(text, file=file, record=record, field="spec")
        if not isinstance(data, dict):
            raise BadInput("render spec must be an object", file=file, record=record, field="spec")
        kinds: dict[str, tuple[type, ...]] = {"op": (str,), "source": (str,), "params": (dict,),
                                              "cue": (dict, type(None)), "mask": (str, type(None)),
                                              "mask_flip": (bool,)}
        unknown = sorted(set(data) - set(kinds))
        if unknown:
            raise BadInput(f"unknown key {unknown[0]!r}", file=file, record=record, field="spec")
        for key, types in kinds.items():
            if key in ("op", "source") and key not in data:
                raise BadInput("missing", file=file, record=record, field=f"spec.{key}")
            if key in data and not isinstance(data[key], types):
                raise BadInput(f"wrong type {type(data[key]).__name__}", file=file, record=record, field=f"spec.{key}")
        return cls(**data)


class Loader(Protocol):
    """Where :func:`render` reads its inputs: an image (``mode`` as :func:`medr2.images.load_image`), and a
    mask as a boolean array of the given size (a mask of another size is a :class:`BadInput`)."""

    def load(self, rel: str, mode: str | None = None) -> np.ndarray: ...

    def mask(self, rel: str, width: int, height: int) -> np.ndarray: ...


RenderOp = Callable[[np.ndarray, dict[str, Any]], np.ndarray]
# what a render does to its source image; the name is stored in every spec, so an op's pixels never change
RENDER_OPS: Registry[RenderOp] = Registry("render op", field="spec.op")


def _fit(arr: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """V2/V3/V12: another image fitted to ``params["size"]`` = [width, height] (:func:`medr2.imaging.fit.fit_image`:
    letterboxed, its aspect ratio kept, black margins; unchanged where the size is its own)."""
    from medr2.imaging.fit import fit_image

    w, h = (int(v) for v in params["size"])
    return fit_image(arr, w, h)


def _resize(arr: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """The op of benches built before ``fit`` (no build writes it now; kept so that their deferred V2/V3/V12 images
    still render to their pinned bytes): another image stretched (bilinear) to ``params["size"]``."""
    from PIL import Image

    w, h = (int(v) for v in params["size"])
    img = Image.fromarray(arr, mode="L" if arr.ndim == 2 else "RGB")
    if img.size != (w, h):
        img = img.resize((w, h), Image.Resampling.BILINEAR)
    return np.asarray(img).copy()


def _degrade(arr: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """V8: :func:`medr2.imaging.degrade.degrade` of ``kind`` and ``severity``, its draws seeded by ``seed``."""
    from medr2.imaging.degrade import degrade

    return degrade(arr, str(params["kind"]), int(params["severity"]), np.random.default_rng(int(params["seed"])))


def _hflip(arr: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """V9: mirrored left-right."""
    return np.ascontiguousarray(arr[:, ::-1])


def _typographic(arr: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """V10: ``params["text"]`` burnt in (:func:`medr2.imaging.typographic.burn_text`) in its style, place, size."""
    from medr2.imaging.typographic import burn_text

    fill = params.get("fill")  # the text colour where it is not the style's (medr2.imaging.typographic.ink)
    if fill is not None:
        fill = [int(v) for v in fill]
        if len(fill) != 3 or not all(0 <= v <= 255 for v in fill):
            raise ValueError(f"fill must be three values 0..255, not {params['fill']!r}")
    return burn_text(arr, str(params["text"]), str(params["style"]), params["xy"], int(params["size"]), fill)


def _physics(arr: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """V11: :func:`medr2.imaging.physics.degrade_physics` of ``kind`` and ``severity``, seeded by ``seed``, as version
    ``v`` of the physics drew it (a spec without one: version 1, benches built before issue 40)."""
    from medr2.imaging.physics import degrade_physics

    return degrade_physics(arr, str(params["kind"]), int(params["severity"]),
                           np.random.default_rng(int(params["seed"])), version=int(params.get("v", 1)))


RENDER_OPS.register("fit", _fit)
RENDER_OPS.register("resize", _resize)
RENDER_OPS.register("typographic", _typographic)
RENDER_OPS.register("physics", _physics)
RENDER_OPS.register("degrade", _degrade)
RENDER_OPS.register("hflip", _hflip)


def render(spec: RenderSpec, loader: Loader) -> np.ndarray:
    """The pixels ``spec`` describes (the build and every reader call this one function)."""
    from medr2.imaging.draw import draw_cue
    from medr2.records import Cue

    op = RENDER_OPS.lookup(spec.op)
    try:
        arr = op(loader.load(spec.source, None), spec.params)
    except (KeyError, TypeError, ValueError) as e:
        raise BadInput(f"render {spec.op} refused its parameters: {type(e).__name__}: {e}", field="spec.params") from e
    if spec.cue is None:
        return arr
    try:
        cue = Cue.model_validate(spec.cue)
    except ValueError as e:
        raise BadInput(f"render spec cue is not a cue: {e}", field="spec.cue") from e
    h, w = arr.shape[:2]
    mask = loader.mask(spec.mask, w, h) if spec.mask else None
    if mask is not None and spec.mask_flip:
        mask = np.ascontiguousarray(mask[:, ::-1])
    return draw_cue(arr, cue, mask)


# --------------------------------------------------------------------------- writing (the build)
class RenderSink:
    """Appends ``(sha256, spec)`` lines to a hidden file of this process in the bench folder (one ``write``
    per spec; a forked or unpickled copy opens its own file). :func:`write_renders` gathers them."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._fd: int | None = None
        self._pid: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"root": self.root, "_fd": None, "_pid": None}

    def add(self, sha: str, spec_json: str) -> None:
        if self._pid != os.getpid() or self._fd is None:
            self._fd, _ = tempfile.mkstemp(dir=self.root, prefix=SINK_PREFIX, suffix=SINK_SUFFIX)
            self._pid = os.getpid()
        os.write(self._fd, (json.dumps([sha, spec_json], ensure_ascii=False) + "\n").encode())

    def close(self) -> None:
        if self._fd is not None and self._pid == os.getpid():
            os.close(self._fd)
        self._fd = self._pid = None


def sink_files(root: Path) -> list[Path]:
    return sorted(Path(root).glob(f"{SINK_PREFIX}*{SINK_SUFFIX}"))


def _sink_lines(files: list[Path], prefix: str) -> Iterator[tuple[str, str]]:
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith(f'["{prefix}'):
                    sha, spec = jsonsafe.loads(line, file=str(path))
                    yield sha, spec


def write_renders(root: Path) -> dict[str, Any] | None:
    """Gather the build's spec files into ``renders.parquet`` (one row per sha256, sorted; where two specs
    make the same bytes the first in text order is kept, so the file does not depend on the workers) and
    remove them. Returns the manifest's ``renders`` entry, or ``None`` when nothing was deferred. Reads the
    spec files once per leading hex digit, so at most 1/16 of the specs are held at a time."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from medr2.bench.format import _WRITE_OPTS
    from medr2.images import sha256_file

    root = Path(root)
    files = sink_files(root)
    if not files:
        return None
    schema = pa.schema([("sha256", pa.string()), ("spec", pa.string())])
    tmp = root / f".{RENDERS_FILE}.partial"
    n = 0
    with pq.ParquetWriter(str(tmp), schema, **{**_WRITE_OPTS, "write_statistics": ["sha256"]}) as w:
        rows: list[tuple[str, str]] = []
        for digit in "0123456789abcdef":
            best: dict[str, str] = {}
            for sha, spec in _sink_lines(files, digit):
                if sha not in best or spec < best[sha]:
                    best[sha] = spec
            rows.extend(sorted(best.items()))
            while len(rows) >= ROW_GROUP:
                chunk, rows = rows[:ROW_GROUP], rows[ROW_GROUP:]
                w.write_table(pa.table({"sha256": [r[0] for r in chunk], "spec": [r[1] for r in chunk]}, schema=schema))
                n += len(chunk)
        if rows or n == 0:
            w.write_table(pa.table({"sha256": [r[0] for r in rows], "spec": [r[1] for r in rows]}, schema=schema))
            n += len(rows)
    os.replace(tmp, root / RENDERS_FILE)
    for path in files:
        path.unlink()
    return {"file": RENDERS_FILE, "n": n, "sha256": sha256_file(root / RENDERS_FILE)}


# --------------------------------------------------------------------------- reading
class RenderIndex:
    """The specs of ``renders.parquet`` by sha256. The sha256 column is held as one sorted array of 32-byte
    values (32 B per deferred image: 23 MB for 720,000), so "is this image deferred?" costs no read; a spec
    is read with its row group, the last :data:`GROUPS_KEPT` of which are kept."""

    def __init__(self, root: Path) -> None:
        import pyarrow.parquet as pq

        self.path = Path(root) / RENDERS_FILE
        self._file: pq.ParquetFile | None = None
        self._shas = np.zeros(0, dtype="S32")
        self._starts: list[int] = []  # first row of each row group
        self._groups: OrderedDict[int, list[str]] = OrderedDict()
        self._lock = threading.Lock()
        if not self.path.is_file():
            return
        try:
            self._file = pq.ParquetFile(str(self.path))
            meta = self._file.metadata
            row = 0
            for i in range(meta.num_row_groups):
                self._starts.append(row)
                row += meta.row_group(i).num_rows
            column = self._file.read(columns=["sha256"]).column(0).to_pylist()
            self._shas = np.array([bytes.fromhex(h) for h in column], dtype="S32")
        except (OSError, ValueError, TypeError) as e:  # pyarrow's errors are OSError / ValueError subclasses
            raise BadInput(f"cannot read parquet: {e}", file=str(self.path)) from e
        if len(self._shas) > 1 and not bool(np.all(self._shas[1:] > self._shas[:-1])):
            raise BadInput("sha256 column not sorted and unique (not written by medr2)", file=str(self.path),
                           field="sha256")

    def __bool__(self) -> bool:
        return self._file is not None

    def __len__(self) -> int:
        return len(self._shas)

    def _row(self, sha: str) -> int | None:
        # numpy "S32" drops trailing NUL bytes on read (a sha256 ending in 00 reads back shorter) on both sides
        # of every comparison alike, and for values of one length that is one-to-one: compare as stored
        if len(sha) != 64 or not len(self._shas):
            return None
        try:
            key = np.array([bytes.fromhex(sha)], dtype="S32")
        except ValueError:
            return None
        i = int(np.searchsorted(self._shas, key[0]))
        return i if i < len(self._shas) and self._shas[i] == key[0] else None

    def __contains__(self, sha: str) -> bool:
        return self._row(sha) is not None

    def spec_json(self, sha: str) -> str | None:
        row = self._row(sha)
        if row is None or self._file is None:
            return None
        g = bisect_right(self._starts, row) - 1
        with self._lock:
            group = self._groups.get(g)
            if group is None:
                group = self._file.read_row_group(g, columns=["spec"]).column(0).to_pylist()
                self._groups[g] = group
                while len(self._groups) > GROUPS_KEPT:
                    self._groups.popitem(last=False)
            else:
                self._groups.move_to_end(g)
        return group[row - self._starts[g]]

    def spec(self, sha: str) -> RenderSpec | None:
        text = self.spec_json(sha)
        return None if text is None else RenderSpec.from_json(text, file=str(self.path), record=sha)


_INDEXES: dict[tuple[str, int], RenderIndex] = {}
_INDEX_LOCK = threading.Lock()


def render_index(root: Path | str) -> RenderIndex:
    """The :class:`RenderIndex` of the bench at ``root`` (one per bench and file version in a process)."""
    path = Path(root).resolve() / RENDERS_FILE
    try:
        version = path.stat().st_mtime_ns
    except OSError:
        version = -1
    key = (str(path), version)
    with _INDEX_LOCK:
        index = _INDEXES.get(key)
        if index is None:
            index = _INDEXES[key] = RenderIndex(path.parent)
            if len(_INDEXES) > 16:
                _INDEXES.pop(next(iter(_INDEXES)))
    return index


def is_deferred(root: Path | str, rel: str) -> bool:
    """Whether the bench has a render spec for the image at ``rel`` (named by its sha256)."""
    return Path(rel).stem in render_index(root)


class _FileLoader:
    """:class:`Loader` over the bench's files, resolving (and so rendering) each through :func:`image_path`."""

    def __init__(self, root: Path, record: str | None, depth: int) -> None:
        self.root, self.record, self.depth = root, record, depth

    def load(self, rel: str, mode: str | None = None) -> np.ndarray:
        return load_image(image_path(self.root, rel, None, record=self.record, _depth=self.depth + 1), mode=mode)

    def mask(self, rel: str, width: int, height: int) -> np.ndarray:
        m = self.load(rel, "L") > 127
        if m.shape != (height, width):
            raise BadInput(f"mask is {m.shape[1]}x{m.shape[0]}, image is {width}x{height}", file=rel,
                           record=self.record, field="mask")
        return m


def image_path(root: Path | str, rel: str, sha: str | None = None, *, record: str | None = None,
               _depth: int = 0) -> Path:
    """The file of the bench image at ``rel`` (inside ``root``), rendered and cached first if the bench
    defers it. ``sha``: the sha256 the record pins (default: the content-addressed name). ``record`` names
    the item or case in errors. Does not re-hash a file that is already there (callers that verify do so)."""
    root = Path(root)
    path = resolve_inside(root, rel)
    if path.is_file():
        return path
    name = Path(rel).stem
    spec_json = render_index(root).spec_json(name)
    if spec_json is None:
        raise BadInput(f"referenced image {rel} is missing", file=str(root / rel), record=record, field="image")
    pinned = sha or name
    renders = str(root / RENDERS_FILE)
    if pinned != name:
        raise BadInput(f"image {rel} is pinned to sha256 {pinned}, but its name is {name}", file=renders,
                       record=record, field="image_sha256")
    if _depth > MAX_DEPTH:
        raise BadInput(f"render of {rel} needs renders more than {MAX_DEPTH} deep (a cycle?)", file=renders,
                       record=record, field="spec.source")
    spec = RenderSpec.from_json(spec_json, file=renders, record=name)
    rule = bench_identity(root)
    try:
        arr = render(spec, _FileLoader(root, record, _depth))
    except BadInput as e:
        if e.file:
            raise
        raise BadInput(f"render of {rel}: {e.reason}", file=renders, record=record or name, field=e.field) from e
    data = rule.encode(arr)
    got = rule.of_array(arr, data)
    if got != pinned:
        why = "computes other pixels" if rule.pixels else "encodes or computes other bytes"
        raise BadInput(f"rendered image {rel} has {rule.name} {got}, the bench pins {pinned} (render spec changed, "
                       f"or this Pillow/zlib/numpy {why} than the build's)", file=renders,
                       record=record or name, field="image_sha256")
    try:
        _publish(path, data)
    except OSError as e:  # e.g. a read-only copy of the bench: materialise it where it can be written
        raise BadInput(f"cannot cache the rendered image {rel} in images/ ({e.strerror or e}); run "
                       "`medr2 materialise BENCH` on a writable copy of the bench", file=str(path), record=record,
                       field="image") from e
    return path


def _publish(path: Path, data: bytes) -> None:
    """Write ``data`` at ``path`` atomically; concurrent writers of the same image write the same bytes."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def materialise(root: Path | str, *, progress: Callable[[int], None] | None = None) -> int:
    """Render every deferred image of the bench that is not in ``images/`` yet; returns how many."""
    import pyarrow.parquet as pq

    root = Path(root)
    if not (root / RENDERS_FILE).is_file():
        return 0
    n = 0
    with pq.ParquetFile(str(root / RENDERS_FILE)) as f:
        for i in range(f.num_row_groups):
            for sha in f.read_row_group(i, columns=["sha256"]).column(0).to_pylist():
                rel = f"images/{sha}.png"
                if not (root / rel).is_file():
                    image_path(root, rel, sha)
                    n += 1
                    if progress is not None:
                        progress(n)
    return n
