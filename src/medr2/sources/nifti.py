"""``nifti`` reader: volumes (``.nii``/``.nii.gz``) with optional label volumes, sliced in three planes.

Each volume is reoriented to RAS+ (``nibabel.as_closest_canonical``) and cut into
``slices_per_plane`` slices per plane (``axial``, ``coronal``, ``sagittal`` — the plane is the ground
truth), evenly spaced over the labelled extent (or the middle 80 % without labels). Slices are shown
in radiological convention: patient's right on the image left, anterior (axial) or superior
(coronal, sagittal) at the top, anterior on the left in sagittal slices. Intensities are windowed to
the volume's ``window_percentiles`` (default 0.5-99.5).

Labels: ``labels_dir/<same file name>`` (default ``labels/``), same grid as the volume. Names come
from ``lut``: a FreeSurfer-style colour table (``value name R G B A`` lines) or a JSON object like the
``masks`` reader's ``labels.json`` (which may give a ``kind``); names listed in ``findings`` are
findings, the rest structures. ``min_area_px`` (default 16) drops tiny cross-sections. All slices
of a volume share its patient id (leakage-free splits). ``modality`` must come from ``defaults`` or
a label table keyed by the volume path.

Volumes are read lazily (:mod:`medr2.sources.nifti_volume`): planning reads headers, the label
extents chunk by chunk and the intensity window from a bounded sample; each case reads its own slice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Case, Finding, Structure
from medr2.sources.common import (
    TEXT,
    DataRoot,
    Key,
    labels_to_fields,
    load_label_table,
    make_case,
    mapping_int,
    mapping_list,
    open_root,
    read_json,
    region_from_mask,
    sample_indices,
)
from medr2.sources.masks import LabelName, parse_label_names
from medr2.sources.nifti_volume import isotropic, open_volume, read_checked
from medr2.textfile import read_text

PLANE_AXIS: dict[str, int] = {"sagittal": 0, "coronal": 1, "axial": 2}  # RAS+ axis fixed by each plane
MIN_SLICE_SIDE = 8  # a plane whose slices would be thinner than this (pixels) is not cut


def parse_lut(path: Path, findings: set[str]) -> dict[int, LabelName]:
    """A FreeSurfer-style colour LUT or a JSON label-name object -> value -> LabelName."""
    if path.suffix.lower() == ".json":
        names = parse_label_names(read_json(path), str(path))
        return {v: (LabelName(n.name, "finding", n.attributes) if n.name in findings else n) for v, n in names.items()}
    out: dict[int, LabelName] = {}
    try:
        lines = read_text(path, what="LUT").splitlines()
    except BadInput as e:
        raise BadInput(f"cannot read LUT: {e.reason}", file=str(path), field="lut") from e
    for no, line in enumerate(lines, 1):
        parts = line.split("#", 1)[0].split()
        if not parts:
            continue
        try:
            value = int(parts[0])
        except ValueError:
            raise BadInput(f"line {no}: the first column must be an integer label value", file=str(path),
                           field="lut") from None
        if len(parts) < 2:
            raise BadInput(f"line {no}: missing label name", file=str(path), field="lut")
        if value == 0:
            continue  # background ("Unknown" in FreeSurfer tables)
        name = parts[1]
        out[value] = LabelName(name, "finding" if name in findings else "organ", {})
    return out


def display(s: np.ndarray) -> np.ndarray:
    """A RAS-ordered 2-D slice in radiological display orientation."""
    return np.ascontiguousarray(s.T[::-1, ::-1])


def slice_positions(extent: tuple[int, int], k: int) -> list[int]:
    lo, hi = extent
    if k <= 0 or hi < lo:
        return []
    if k == 1:
        return [(lo + hi) // 2]
    pos = np.linspace(lo, hi, k + 2)[1:-1]  # inner points: avoid the first/last labelled slice
    return sorted({int(round(p)) for p in pos})


@dataclass(frozen=True)
class NiftiSpec:
    volume: str
    labels: str | None
    plane: str
    index: int
    row: dict[str, Any] | None
    error: str | None = None
    error_field: str | None = None
    window: tuple[float, float] = (0.0, 0.0)  # intensity window of the whole volume


class NiftiSource:
    name = "nifti"
    mapping_schema: dict[str, Key] = {
        "labels_dir": TEXT, "lut": TEXT, "findings": Key("text list"), "slices_per_plane": Key("integer", minimum=1),
        "planes": Key("text list", choices=tuple(PLANE_AXIS)), "min_area_px": Key("integer", minimum=0),
        "window_percentiles": Key("number list", minimum=0, maximum=100)}

    def __init__(self, arg: str | None) -> None:
        self.dr: DataRoot = open_root(arg, "nifti", schema=self.mapping_schema)
        m = self.dr.mapping
        where = str(self.dr.mapping_file) if self.dr.mapping_file else None
        self.labels_dir = str(m.get("labels_dir", "labels"))
        self.k = mapping_int(self.dr, "slices_per_plane", 3, minimum=1)
        self.planes = tuple(mapping_list(self.dr, "planes", ("axial", "coronal", "sagittal")))
        bad = [p for p in self.planes if p not in PLANE_AXIS]
        if bad:
            raise BadInput(f"unknown plane {bad[0]!r}; use axial, coronal, sagittal", file=where, field="planes")
        self.min_area = mapping_int(self.dr, "min_area_px", 16)
        self.pct = tuple(float(x) for x in mapping_list(self.dr, "window_percentiles", (0.5, 99.5), (int, float)))
        if len(self.pct) != 2 or not 0 <= self.pct[0] < self.pct[1] <= 100:
            raise BadInput("window_percentiles must be two numbers 0 <= low < high <= 100", file=where,
                           field="window_percentiles")
        findings = set(mapping_list(self.dr, "findings", ()))
        self.names: dict[int, LabelName] = {}
        if m.get("lut"):
            lut = self.dr.path(str(m["lut"]), field_name="lut")
            if not lut.is_file():
                raise BadInput("LUT file not found", file=str(lut), field="lut")
            self.names = parse_lut(lut, findings)

    def plan(self, seed: int, n: int | None) -> list[NiftiSpec]:
        table = load_label_table(self.dr, str(self.dr.mapping["labels"])) if self.dr.mapping.get("labels") else None
        lab_root = (self.dr.root / self.labels_dir).resolve()
        vols = sorted(p for p in self.dr.root.rglob("*")
                      if p.name.endswith((".nii", ".nii.gz")) and lab_root not in p.resolve().parents)
        specs: list[NiftiSpec] = []
        for p in vols:
            rel = self.dr.rel(p)
            lrel = f"{self.labels_dir}/{p.name}"
            has_labels = (self.dr.root / lrel).is_file()
            row = table.rows.get(rel) if table else None
            try:
                self.dr.path(rel, record=rel, field_name="volume")
                vol = open_volume(p, record=rel, field_name="volume")
                window = read_checked(lambda v=vol: v.window(self.pct), p, record=rel, field_name="volume")
                extents = None
                if has_labels:
                    lp = self.dr.path(lrel, record=rel, field_name="labels")
                    lab = open_volume(lp, record=rel, field_name="labels")
                    if lab.ras_shape != vol.ras_shape or not np.allclose(lab.affine, vol.affine, atol=1e-3):
                        raise BadInput(f"label volume grid {lab.ras_shape} differs from the volume grid "
                                       f"{vol.ras_shape}", file=lrel, record=rel, field="labels")
                    extents = read_checked(lab.nonzero_extents, lp, record=rel, field_name="labels")
            except BadInput as e:
                specs.append(NiftiSpec(rel, None, "-", 0, row, error=e.reason, error_field=e.field))
                continue
            before = len(specs)
            for plane in self.planes:
                ax = PLANE_AXIS[plane]
                if any(vol.ras_shape[a] < MIN_SLICE_SIDE for a in range(3) if a != ax):
                    continue  # a thin volume (e.g. one slice, 128x128x1) is cut only across its thin axis
                if extents is not None and extents[ax].any():
                    nz = np.flatnonzero(extents[ax])
                    extent = (int(nz.min()), int(nz.max()))
                else:
                    size = vol.ras_shape[ax]
                    lo = int(size * 0.1)
                    extent = (lo, max(lo, int(size * 0.9) - 1))  # a single slice: (0, 0)
                for idx in slice_positions(extent, self.k):
                    specs.append(NiftiSpec(rel, lrel if has_labels else None, plane, idx, row, window=window))
            if len(specs) == before:  # never dropped silently
                specs.append(NiftiSpec(rel, None, "-", 0, row, error=f"volume {vol.ras_shape} gives no slice of at "
                                       f"least {MIN_SLICE_SIDE} x {MIN_SLICE_SIDE} pixels in the planes "
                                       f"{list(self.planes)}", error_field="volume"))
        return [specs[i] for i in sample_indices(len(specs), seed, n)]

    def realize(self, spec: NiftiSpec, images: ImageStore) -> Case:
        key = f"{spec.volume}#{spec.plane}{spec.index}"
        if spec.error:
            raise BadInput(spec.error, file=spec.volume, record=spec.volume, field=spec.error_field or "volume")
        vp = self.dr.path(spec.volume, record=key, field_name="volume")
        vol = open_volume(vp, record=key, field_name="volume")
        zooms = vol.zooms
        lo, hi = spec.window
        in_plane = [zooms[a] for a in range(3) if a != PLANE_AXIS[spec.plane]]  # (cols axis, rows axis)
        spacing_rc = (in_plane[1], in_plane[0])
        shown = isotropic(display(read_checked(lambda: vol.slab(PLANE_AXIS[spec.plane], spec.index), vp, record=key,
                                               field_name="volume")), spacing_rc, labels=False)
        sl = shown.pixels.astype(np.float64)
        img = np.zeros(sl.shape, np.uint8) if hi <= lo else \
            np.clip(np.round((np.nan_to_num(sl, nan=lo) - lo) / (hi - lo) * 255), 0, 255).astype(np.uint8)
        ref = images.put_array(img)
        structures: list[Structure] = []
        findings: list[Finding] = []
        if spec.labels:
            lp = self.dr.path(spec.labels, record=key, field_name="labels")
            lab = open_volume(lp, record=key, field_name="labels")
            lsl = isotropic(np.rint(display(read_checked(lambda: lab.slab(PLANE_AXIS[spec.plane], spec.index), lp,
                                                         record=key, field_name="labels"))).astype(np.int64),
                            spacing_rc, labels=True).pixels
            for value in (int(v) for v in np.unique(lsl) if v != 0):
                region = lsl == value
                if region.sum() < self.min_area:
                    continue
                ln = self.names.get(value) or LabelName(f"label {value}", "organ", {})
                r = region_from_mask(images, region, ln.name, ln.kind, ln.attributes)
                if isinstance(r, Finding):
                    findings.append(r)
                elif isinstance(r, Structure):
                    structures.append(r)
        fields: dict[str, Any] = {"plane": spec.plane, "patient_id": spec.volume}
        fields.update(labels_to_fields(spec.row or {}, file=spec.volume, record=key))
        fields["plane"] = spec.plane  # the slicing plane is ground truth, never overridden
        fields["pixel_spacing_mm"] = shown.spacing_mm
        meta = {"volume": spec.volume, "slice_axis": PLANE_AXIS[spec.plane], "slice_index": spec.index,
                **shown.meta(), "display": "radiological", "window": [lo, hi]}
        return make_case(self.dr, key=key, ref=ref, fields=fields, file=spec.volume, structures=structures,
                         findings=findings, meta=meta)


def _factory(arg: str | None) -> NiftiSource:
    return NiftiSource(arg)
