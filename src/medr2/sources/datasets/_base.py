"""Shared parts of the dataset readers (:mod:`medr2.sources.datasets`): a table-driven source whose plan
is a list of self-contained records, required-column checks, image/DICOM decoding inside the data root,
box handling and multi-rater box fusion.

Every reader keeps the dataset's own layout and names; problems with the dataset as a whole (a missing
CSV, a missing column) raise :class:`~medr2.errors.BadInput` naming the file and field (exit 2), while a
bad row becomes a record the builder quarantines with its reason.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.images import ImageRef, ImageStore, load_image
from medr2.imaging.draw import iou
from medr2.records import Box, Case, Finding, Structure
from medr2.sources.common import DataRoot, Key, make_case, open_root, sample_indices

MAX_OVERHANG = 0.01  # a box may overhang the image by at most this share of its side (clipped, counted)


@dataclass(frozen=True)
class RecordSpec:
    """One planned case: its key (also the quarantine record), the file it comes from, and the data the
    reader needs to realize it (plain picklable values). ``error`` marks a record already known bad."""

    key: str
    file: str
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    error_field: str | None = None

    @property
    def name(self) -> str:
        return self.key


class DatasetSource:
    """Base of the dataset readers: ``records()`` lists every record (sorted, deterministic); ``plan``
    samples them; ``realize`` quarantines known-bad records and calls ``build``."""

    name = "dataset"
    title = "dataset"  # default ``source`` name recorded on cases
    default_license = "unspecified"
    default_access = "open"
    mapping_schema: Mapping[str, Key] = {}  # the reader's own medr2.json keys and their types

    def __init__(self, arg: str | None) -> None:
        dr = open_root(arg, self.name, schema=self.mapping_schema)
        mapping = {"source": self.title, "license": self.default_license, "access": self.default_access,
                   **dr.mapping}
        self.dr: DataRoot = dataclasses.replace(dr, mapping=mapping)
        self.user_keys = frozenset(dr.mapping)  # what the user's medr2.json set (the rest are defaults)

    def records(self) -> list[RecordSpec]:
        raise NotImplementedError

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        raise NotImplementedError

    def plan(self, seed: int, n: int | None) -> list[RecordSpec]:
        specs = self.records()
        return [specs[i] for i in sample_indices(len(specs), seed, n)]

    def realize(self, spec: RecordSpec, images: ImageStore) -> Case:
        if spec.error is not None:
            raise BadInput(spec.error, file=spec.file, record=spec.key, field=spec.error_field)
        return self.build(spec, images)

    # --- helpers for subclasses ------------------------------------------------------------------

    def option(self, key: str, default: Any) -> Any:
        return self.dr.mapping.get(key, default)

    def where(self) -> str | None:
        return str(self.dr.mapping_file) if self.dr.mapping_file else None

    def case(self, spec: RecordSpec, ref: ImageRef, fields: dict[str, Any], *,
             structures: Sequence[Structure] = (), findings: Sequence[Finding] = (),
             meta: Mapping[str, Any] | None = None) -> Case:
        return make_case(self.dr, key=spec.key, ref=ref, fields=fields, file=spec.file, structures=structures,
                         findings=findings, meta=meta)


# --- files and tables ---------------------------------------------------------------------------------


def find_file(dr: DataRoot, names: Iterable[str], *, what: str, required: bool = True) -> Path | None:
    """The first of ``names`` (paths relative to the root) that exists; BadInput naming the first if none."""
    names = list(names)
    for n in names:
        p = dr.path(n, field_name=what)
        if p.is_file():
            return p
    if required:
        raise BadInput(f"{what} not found (looked for {', '.join(names)})", file=str(dr.root / names[0]),
                       field=what)
    return None


def read_table(path: Path, required: Iterable[str]) -> list[dict[str, str]]:
    """CSV rows as dicts (values stripped; a short row padded with ""); a missing required column is a
    dataset-level error naming it. One pass, no pandas: the largest table here has 112,120 rows."""
    import csv

    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            reader = csv.reader(f)
            header = [h.strip() for h in next(reader, [])]
            for col in required:
                if col not in header:
                    raise BadInput(f"column {col!r} missing (columns: {', '.join(h for h in header if h)})",
                                   file=str(path), field=col)
            n = len(header)
            return [dict(zip(header, [v.strip() for v in row] + [""] * (n - len(row)), strict=False))
                    for row in reader if row]
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"cannot read CSV: {e}", file=str(path)) from e


def to_float(value: Any, *, file: str, record: str, field_name: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise BadInput(f"not a number: {value!r}", file=file, record=record, field=field_name) from None
    if not math.isfinite(v):
        raise BadInput(f"not a finite number: {value!r}", file=file, record=record, field=field_name)
    return v


def image_index(dr: DataRoot, suffixes: Sequence[str], under: Path | None = None) -> dict[str, str]:
    """File name -> path relative to the root, for every file with one of ``suffixes`` under ``under``
    (first in sorted order wins when a name repeats)."""
    base = under or dr.root
    out: dict[str, str] = {}
    if not base.is_dir():
        return out
    for p in sorted(base.rglob("*")):
        if p.suffix.lower() in suffixes and not p.name.startswith(".") and (p.is_file() or p.is_symlink()):
            out.setdefault(p.name, dr.rel(p))
    return out


# --- decoding -----------------------------------------------------------------------------------------


def decode_image(dr: DataRoot, rel: str, *, record: str, file: str, field_name: str = "image",
                 mode: str | None = None) -> np.ndarray:
    """An image file under the root (path confined to it), decoded; BadInput naming the record otherwise."""
    path = dr.path(rel, record=record, field_name=field_name)
    if not path.is_file():
        raise BadInput(f"image file not found: {rel}", file=file, record=record, field=field_name)
    try:
        return load_image(path, mode=mode)
    except BadInput as e:
        raise BadInput(e.reason, file=rel, record=record, field=field_name) from e


@dataclass(frozen=True)
class DicomImage:
    pixels: np.ndarray  # uint8 display image
    fields: dict[str, Any]  # modality, plane, pixel_spacing_mm from the tags
    meta: dict[str, Any]
    patient_id: str | None
    header: Any


def decode_dicom(dr: DataRoot, rel: str, *, record: str, file: str, field_name: str = "image") -> DicomImage:
    """A DICOM image decoded and windowed like the ``dicom`` reader does (modality LUT, window / VOI LUT /
    min-max, MONOCHROME1 inverted); modality, plane and pixel spacing from its tags."""
    from medr2.sources.dicom import MODALITY_NAMES, DicomSource, read_checked, window_to_uint8

    path = dr.path(rel, record=record, field_name=field_name)
    if not path.is_file():
        raise BadInput(f"DICOM file not found: {rel}", file=file, record=record, field=field_name)
    try:
        ds = read_checked(path)  # the image gate, from the header, before any pixel is decoded
    except BadInput as e:
        raise BadInput(e.reason, file=rel, record=record, field=e.field) from e
    try:
        px = np.asarray(ds.pixel_array)
    except Exception as e:  # pydicom raises many types on corrupt files
        raise BadInput(f"cannot decode DICOM: {e}", file=rel, record=record, field="PixelData") from e
    n_frames = int(ds.get("NumberOfFrames", 1) or 1)
    if n_frames > 1:
        px = px[0]
    if px.ndim == 3 and px.shape[-1] != 3 or px.ndim not in (2, 3):
        raise BadInput(f"unexpected pixel array shape {px.shape}", file=rel, record=record, field="PixelData")
    img, win = window_to_uint8(px, ds, 0)
    fields: dict[str, Any] = {}
    raw_mod = str(ds.get("Modality", "")).strip().upper()
    if raw_mod:
        fields["modality"] = MODALITY_NAMES.get(raw_mod, raw_mod)
    plane = DicomSource._plane(ds, 0)
    if plane:
        fields["plane"] = plane
    spacing = DicomSource._spacing(ds, 0)
    meta: dict[str, Any] = {"dicom_modality": raw_mod, **win}
    if spacing:
        fields["pixel_spacing_mm"] = (spacing[0] + spacing[1]) / 2
    pid = str(ds.get("PatientID", "") or "").strip()
    return DicomImage(img, fields, meta, pid or None, ds)


# --- boxes --------------------------------------------------------------------------------------------


def fit_box(box: Box, width: int, height: int, *, file: str, record: str, field_name: str) -> tuple[Box, bool]:
    """``box`` clipped to the image when it overhangs by at most ``MAX_OVERHANG`` of a side (returns
    whether it was clipped); a larger overhang or an empty box is the record's error."""
    x1, y1, x2, y2 = box
    if not (x2 > x1 and y2 > y1):
        raise BadInput(f"box {list(box)} has non-positive size", file=file, record=record, field=field_name)
    tol_x, tol_y = MAX_OVERHANG * width, MAX_OVERHANG * height
    if x1 < -tol_x or y1 < -tol_y or x2 > width + tol_x or y2 > height + tol_y:
        raise BadInput(f"box {list(box)} lies outside the {width}x{height} image", file=file, record=record,
                       field=field_name)
    c = (max(x1, 0.0), max(y1, 0.0), min(x2, float(width)), min(y2, float(height)))
    if not (c[2] > c[0] and c[3] > c[1]):
        raise BadInput(f"box {list(box)} lies outside the {width}x{height} image", file=file, record=record,
                       field=field_name)
    return c, c != tuple(box)


@dataclass(frozen=True)
class FusedBox:
    box: Box
    raters: tuple[str, ...]


def fuse_rater_boxes(boxes: Sequence[tuple[str, Box]], n_raters: int, *, iou_min: float = 0.5,
                     min_votes: int | None = None) -> tuple[list[FusedBox], list[FusedBox]]:
    """Fuse the boxes several raters drew for ONE class on one image.

    Rule (stated in the docs): boxes are taken in a fixed order (x1, y1, x2, y2, rater); each joins the
    cluster whose fused box overlaps it most with IoU >= ``iou_min`` among clusters that hold no box of the
    same rater yet, else it starts a cluster. A cluster's fused box is the coordinate-wise mean of its
    boxes (weighted box fusion with equal weights). Clusters drawn by at least ``min_votes`` raters
    (default: a strict majority of ``n_raters``) are kept; the others are returned separately (dropped).
    """
    need = min_votes if min_votes is not None else n_raters // 2 + 1
    clusters: list[list[tuple[str, Box]]] = []
    for rater, box in sorted(boxes, key=lambda rb: (*rb[1], rb[0])):
        best, best_iou = None, iou_min
        for c in clusters:
            if any(r == rater for r, _ in c):
                continue
            v = iou(_mean_box(c), box)
            if v >= best_iou:
                best, best_iou = c, v
        if best is None:
            clusters.append([(rater, box)])
        else:
            best.append((rater, box))
    kept: list[FusedBox] = []
    dropped: list[FusedBox] = []
    for c in clusters:
        fb = FusedBox(_mean_box(c), tuple(sorted(r for r, _ in c)))
        (kept if len(fb.raters) >= need else dropped).append(fb)
    return kept, dropped


def _mean_box(c: Sequence[tuple[str, Box]]) -> Box:
    a = np.asarray([b for _, b in c], dtype=float).mean(axis=0)
    return (float(a[0]), float(a[1]), float(a[2]), float(a[3]))


def label_text(raw: str) -> str:
    """A dataset label as medr2 shows it: underscores to spaces, lower case (``Pleural_Thickening`` ->
    ``pleural thickening``)."""
    return " ".join(raw.replace("_", " ").split()).lower()


# chest X-ray findings that are not a countable, measurable lesion (an enlarged organ, a diffuse or
# regional process): marked ``attributes["focal"] = False`` so lesion counts and sizes leave them out
NON_FOCAL_CXR = frozenset({
    "aortic enlargement", "atelectasis", "cardiomegaly", "consolidation", "edema", "effusion", "emphysema",
    "enlarged pa", "fibrosis", "ild", "infiltration", "lung opacity", "mediastinal shift", "pleural effusion",
    "pleural thickening", "pneumonia", "pneumothorax",
})


def focal_attrs(label: str) -> dict[str, bool]:
    return {"focal": False} if label in NON_FOCAL_CXR else {}
