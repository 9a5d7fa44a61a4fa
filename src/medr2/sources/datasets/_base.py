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
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.images import ImageRef, ImageStore, load_image
from medr2.imaging.draw import iou
from medr2.records import Box, Case, Companion, Finding, Structure
from medr2.sources.common import DataRoot, Key, case_id_for, make_case, open_root, sample_indices
from medr2.textfile import open_text
from medr2.vocab import clean_label, key as clinical_key

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
    image: str | None = None  # the image (or study) this record describes; records sharing it are one case

    @property
    def name(self) -> str:
        return self.key


class DatasetSource:
    """Base of the dataset readers: ``records()`` lists every record (sorted, deterministic); ``plan``
    merges the records that describe one image (:func:`merge_records`) and samples them; ``realize``
    quarantines known-bad records, calls ``build`` (once per describing record) and merges the cases
    (:func:`merge_cases`). ``report()`` says which split rule was used and what was counted on the way
    (``build.source_report`` in the manifest, shown by ``medr2 info``)."""

    name = "dataset"
    title = "dataset"  # default ``source`` name recorded on cases
    default_license = "unspecified"
    default_access = "open"
    mapping_schema: Mapping[str, Key] = {}  # the reader's own medr2.json keys and their types
    # how the split is drawn when the reader reads no published split (the builder's rule)
    split_rule = "none published: cases sharing a patient share a split, drawn by a hash of the patient"
    published_split = "published: the split the dataset's files give"  # a reader names its files
    # facts that hold for every image of the dataset (its documentation says so); a record's own value wins
    constant_fields: Mapping[str, Any] = {}

    def __init__(self, arg: str | None) -> None:
        dr = open_root(arg, self.name, schema=self.mapping_schema)
        mapping = {"source": self.title, "license": self.default_license, "access": self.default_access,
                   **dr.mapping}
        self.dr: DataRoot = dataclasses.replace(dr, mapping=mapping)
        self.user_keys = frozenset(dr.mapping)  # what the user's medr2.json set (the rest are defaults)
        self.notes: Counter[str] = Counter()  # counted on the way (records() adds; plan() adds merges)
        self.split_rules: Counter[str] = Counter()  # planned records per split rule

    def records(self) -> list[RecordSpec]:
        raise NotImplementedError

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        raise NotImplementedError

    def plan(self, seed: int, n: int | None) -> list[RecordSpec]:
        self.notes.clear()
        self.split_rules.clear()
        specs, merged = merge_records(self.records())
        if merged:
            self.notes["images described by several records (merged into one case)"] += merged
        split_conflicts = sum(1 for s in specs
                              if len({p.data.get("split") for p in s.data.get(PARTS, [])} - {None}) > 1)
        if split_conflicts:
            self.notes["merged images whose records give different splits (the most held-out kept)"] += split_conflicts
        for s in specs:
            if s.error is None:
                self.split_rules[self.split_rule_of(s)] += 1
        return [specs[i] for i in sample_indices(len(specs), seed, n)]

    def split_rule_of(self, spec: RecordSpec) -> str:
        """The split rule of one planned record: ``data["split_rule"]`` if the reader names one, the
        reader's ``published_split`` when the record carries a split, else the builder's rule."""
        parts = spec.data.get(PARTS) or [spec]
        rules = sorted({p.data.get("split_rule") or (self.published_split if p.data.get("split") else
                                                     self.split_rule) for p in parts})
        return "; ".join(rules)

    def report(self) -> dict[str, Any]:
        """What ``medr2 info`` shows of this reader: the split rule(s) used (planned records per rule) and
        the counted notes (records merged, terms left out, ...)."""
        return {"reader": self.name, "split_rules": dict(sorted(self.split_rules.items())),
                "notes": dict(sorted(self.notes.items()))}

    def realize(self, spec: RecordSpec, images: ImageStore) -> Case:
        if spec.error is not None:
            raise BadInput(spec.error, file=spec.file, record=spec.key, field=spec.error_field)
        parts = spec.data.get(PARTS)
        if parts:
            return merge_cases(self.dr, spec, [self.build(p, images) for p in parts])
        return self.build(spec, images)

    # --- helpers for subclasses ------------------------------------------------------------------

    def option(self, key: str, default: Any) -> Any:
        return self.dr.mapping.get(key, default)

    def where(self) -> str | None:
        return str(self.dr.mapping_file) if self.dr.mapping_file else None

    def companion(self, key: str, role: str, label: str | None = None,
                  interval_days: int | None = None) -> Companion:
        """A link to another image of the patient (issue 49) by the record key of its own case (the case id this
        reader gives that record: :func:`medr2.sources.common.case_id_for`)."""
        return Companion(case_id=case_id_for(self.dr.source, key), role=role,  # type: ignore[arg-type]
                         label=label, interval_days=interval_days)

    def case(self, spec: RecordSpec, ref: ImageRef, fields: dict[str, Any], *,
             structures: Sequence[Structure] = (), findings: Sequence[Finding] = (),
             meta: Mapping[str, Any] | None = None) -> Case:
        fields = {**self.constant_fields, **fields}
        return make_case(self.dr, key=spec.key, ref=ref, fields=fields, file=spec.file, structures=structures,
                         findings=findings, meta=meta)


def link_sequences(specs: Sequence[RecordSpec], group: Callable[[RecordSpec], Hashable | None],
                   label: Callable[[RecordSpec], str]) -> None:
    """Set ``data["sequences"]`` of every good record to the (key, sequence name) of the other records of its
    ``group`` (one slice of one study: its other sequences, issue 49); a reader's ``build`` links them as
    companions. A record whose group is None links none."""
    groups: dict[Hashable, list[RecordSpec]] = {}
    for s in specs:
        if s.error is None and (g := group(s)) is not None:
            groups.setdefault(g, []).append(s)
    for members in groups.values():
        for s in members:
            s.data["sequences"] = [(o.key, label(o)) for o in members if o is not s]


def sequence_companions(source: DatasetSource, spec: RecordSpec) -> list[Companion]:
    """The companions :func:`link_sequences` recorded for ``spec`` (role ``sequence``, label the sequence name)."""
    return [source.companion(key, "sequence", name) for key, name in spec.data.get("sequences", [])]


# --- one image described by several records -----------------------------------------------------------

PARTS = "_parts"  # RecordSpec.data key of a merged record: the records it merges, in order
_HELD_OUT = {"train": 0, "val": 1, "test": 2}
# Case fields a merge never compares (identity, pixels, regions, meta: merged or kept as they are)
_NOT_COMPARED = {"case_id", "image", "image_sha256", "width", "height", "findings", "structures", "meta", "split",
                 "synthetic_fields", "absent"}


def merge_records(specs: Sequence[RecordSpec]) -> tuple[list[RecordSpec], int]:
    """Records that name the same ``image`` become one record (key = the image, ``data[PARTS]`` = the
    records in order); known-bad records and records without an image stay as they are. Returns the
    records (sorted by key as before, the merged one at its first part's place) and how many merged."""
    groups: dict[str, list[RecordSpec]] = {}
    for s in specs:
        if s.image is not None and s.error is None:
            groups.setdefault(s.image, []).append(s)
    out: list[RecordSpec] = []
    done: set[str] = set()
    merged = 0
    for s in specs:
        if s.image is None or s.error is not None:
            out.append(s)
        elif len(groups[s.image]) == 1:
            out.append(dataclasses.replace(s, key=s.image))  # one case per image, named by it either way
        elif s.image not in done:
            done.add(s.image)
            merged += 1
            parts = groups[s.image]
            out.append(RecordSpec(s.image, parts[0].file, {PARTS: parts}, image=s.image))
    return out, merged


def merge_cases(dr: DataRoot, spec: RecordSpec, cases: Sequence[Case]) -> Case:
    """One case from the cases the records of one image gave: every finding (an identical label + box
    once), the most held-out split (the builder then keeps the patient's cases together), a field the
    records disagree on left unset and reported in ``meta.merge_conflicts``; ``meta.findings_complete``
    only when every record's list was complete; ``absent`` every label a record states absent that no record
    labels present. A field only some records set is taken from them. Different
pixels or patients: the record's error."""
    first = cases[0]
    files = [p.file for p in spec.data[PARTS]]
    if any(c.image_sha256 != first.image_sha256 for c in cases):
        raise BadInput("the records describing this image point at different pixels", file=files[0],
                       record=spec.key, field="image")
    case_id = case_id_for(dr.source, spec.key)
    patients = sorted({c.patient_id for c in cases if not c.meta.get("patient_id_inferred")})
    if len(patients) > 1:
        raise BadInput(f"the records describing this image name different patients {patients}", file=files[0],
                       record=spec.key, field="patient_id")
    findings: list[Finding] = []
    seen: set[tuple[str, Any]] = set()
    for c in cases:
        for f in c.findings:
            if (f.label, f.box) not in seen:
                seen.add((f.label, f.box))
                findings.append(f)
    structures = list({(s.name, s.box): s for c in cases for s in c.structures}.values())
    update: dict[str, Any] = {}
    conflicts: dict[str, list[Any]] = {}
    for name in type(first).model_fields:
        if name in _NOT_COMPARED or name == "patient_id":
            continue
        default = type(first).model_fields[name].get_default(call_default_factory=True)
        values = [v for c in cases if (v := getattr(c, name)) is not None and v != default]  # what records say
        distinct = [v for i, v in enumerate(values) if v not in values[:i]]
        if len(distinct) > 1:
            conflicts[name] = distinct
        update[name] = distinct[0] if len(distinct) == 1 else default
    splits: list[str] = [c.split for c in cases if c.split]
    if len(set(splits)) > 1:
        conflicts["split"] = sorted(set(splits), key=_HELD_OUT.__getitem__)
    meta: dict[str, Any] = {}
    for c in cases:
        meta.update(c.meta)
    meta.pop("patient_id_inferred", None)
    if not patients:  # no record names a patient: the image is its own, as for a single record
        meta["patient_id_inferred"] = True
    meta.update({"file": spec.key, "described_by": [p.key for p in spec.data[PARTS]]})
    if any("findings_complete" in c.meta for c in cases):
        meta["findings_complete"] = all(c.meta.get("findings_complete", True) for c in cases)
    if conflicts:
        meta["merge_conflicts"] = conflicts
    # every label a record states absent, unless another record labels it present
    present = {clinical_key(f.label) for f in findings}
    absent = [a for a in dict.fromkeys(a for c in cases for a in c.absent) if clinical_key(a) not in present]
    update.update({"case_id": case_id, "patient_id": patients[0] if patients else case_id, "findings": findings,
                   "structures": structures, "meta": meta, "absent": absent,
                   "split": max(splits, key=_HELD_OUT.__getitem__) if splits else None})
    return Case.model_validate({**first.model_dump(), **update})


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


SPLIT_WORDS = {"training": "train", "train": "train", "validation": "val", "val": "val", "valid": "val",
               "test": "test", "testing": "test"}


def split_from_path(rel: str) -> str | None:
    """The split a release publishes in a file or folder name (``ISIC2018_Task1_Validation_GroundTruth``,
    ``annotations_test.csv``, ``train/``): the split word among the name's ``_`` / ``-`` / ``.`` / ``/``
    separated parts, the last path part that has one deciding; None when no part names a split."""
    import re

    for part in reversed(rel.replace("\\", "/").split("/")):
        words = {SPLIT_WORDS[w] for w in re.split(r"[_\-. ]+", part.lower()) if w in SPLIT_WORDS}
        if len(words) == 1:
            return words.pop()
    return None


def read_table(path: Path, required: Iterable[str]) -> list[dict[str, str]]:
    """CSV rows as dicts (values stripped; a short row padded with ""); a missing required column is a
    dataset-level error naming it. One pass, no pandas: the largest table here has 112,120 rows."""
    import csv

    try:
        with open_text(path) as f:
            reader = csv.reader(f)
            header = [h.strip() for h in next(reader, [])]
            for col in required:
                if col not in header:
                    raise BadInput(f"column {col!r} missing (columns: {', '.join(h for h in header if h)})",
                                   file=str(path), field=col)
            n = len(header)
            return [dict(zip(header, [v.strip() for v in row] + [""] * (n - len(row)), strict=False))
                    for row in reader if row]
    except csv.Error as e:
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
    pixels: np.ndarray  # uint8 display image, in the standard display orientation its tags say
    fields: dict[str, Any]  # modality, plane, pixel_spacing_mm from the tags
    meta: dict[str, Any]
    patient_id: str | None
    header: Any
    ops: tuple[str, ...] = ()  # stored grid -> display (medr2.imaging.orientation.display_ops)
    stored: tuple[int, int] = (0, 0)  # (width, height) of the stored grid

    def box(self, box: Sequence[float]) -> tuple[float, float, float, float]:
        """A box given on the file's stored pixels (a label table's) in the displayed image."""
        from medr2.imaging.orientation import box_to_display

        x1, y1, x2, y2 = box_to_display(box, self.ops, *self.stored)
        return x1, y1, x2, y2


def decode_dicom(dr: DataRoot, rel: str, *, record: str, file: str, field_name: str = "image") -> DicomImage:
    """A DICOM image decoded and windowed like the ``dicom`` reader does (modality LUT, window / VOI LUT /
    min-max, MONOCHROME1 inverted); modality, plane and pixel spacing from its tags."""
    from medr2.imaging.orientation import display_ops, to_display
    from medr2.sources.dicom import MODALITY_NAMES, DicomSource, _frame_iop, read_checked, window_to_uint8

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
    stored = (int(img.shape[1]), int(img.shape[0]))
    ops = display_ops(ds, _frame_iop(ds, 0))
    img = to_display(img, ops)  # the standard display its own tags say (issue 40)
    if ops:
        win = {**win, "display_ops": list(ops)}
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
    return DicomImage(img, fields, meta, pid or None, ds, ops, stored)


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
    ``pleural thickening``), cleaned as every label is (:func:`medr2.vocab.clean_label`), so the tables of a
    reader (e.g. :data:`NON_FOCAL_CXR`) see the label that the bench will hold."""
    return clean_label(raw.replace("_", " ")).lower()


# chest X-ray findings that are not a countable, measurable lesion (an enlarged organ, a diffuse or
# regional process): marked ``attributes["focal"] = False`` so lesion counts and sizes leave them out
NON_FOCAL_CXR = frozenset({
    "aortic enlargement", "atelectasis", "cardiomegaly", "consolidation", "edema", "effusion", "emphysema",
    "enlarged pa", "fibrosis", "ild", "infiltration", "lung opacity", "mediastinal shift", "pleural effusion",
    "pleural thickening", "pneumonia", "pneumothorax",
})


def focal_attrs(label: str) -> dict[str, bool]:
    return {"focal": False} if label in NON_FOCAL_CXR else {}
