"""``dicom`` reader: a folder of DICOM files (single- or multi-frame) -> one Case per frame.

From the tags: modality (``Modality``, named via :data:`MODALITY_NAMES`), body region
(``BodyPartExamined``), plane (from ``ImageOrientationPatient``, per-frame or shared functional
groups for enhanced multi-frame; projection images use ``ViewPosition``), pixel spacing
(``PixelSpacing`` or ``ImagerPixelSpacing``), windowing (``WindowCenter``/``WindowWidth`` after the
modality LUT, else a VOI LUT, else min-max; ``MONOCHROME1`` inverted), patient id.

Masks: a DICOM SEG in the folder whose frames reference an image (by SOP Instance UID and frame)
gives one region per segment; a segment whose property category is anatomical becomes a structure,
otherwise a finding. An overlay plane (group 60xx) gives a region named by ``overlay_label``
(default: the overlay's label/description, else ``overlay region``), outlines filled, of kind
``overlay_kind`` (``finding`` default). Mapping keys: ``frames`` (``all`` default, or ``middle``),
``overlay_label``, ``overlay_kind``, plus the common ones; a label table keyed by the file path
(optional ``frame`` column) adds Case fields such as ``diagnosis`` or ``sequence``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.images import MAX_PIXELS, ImageStore, check_decoded
from medr2.imaging.orientation import display_ops, to_display
from medr2.records import Case, Finding, Structure
from medr2.sources.common import (
    TEXT,
    DataRoot,
    Key,
    labels_to_fields,
    load_label_table,
    make_case,
    open_root,
    region_from_mask,
    sample_indices,
)

SEG_SOP_CLASS = "1.2.840.10008.5.1.4.1.1.66.4"
MODALITY_NAMES: dict[str, str] = {
    "CT": "CT", "MR": "MRI", "CR": "X-ray", "DX": "X-ray", "RG": "X-ray", "DR": "X-ray", "US": "ultrasound",
    "MG": "mammography", "PT": "PET", "NM": "nuclear medicine", "XA": "angiography", "RF": "fluoroscopy",
    "ES": "endoscopy", "OP": "fundus photography", "OCT": "OCT", "SM": "microscopy", "XC": "photograph",
    "IO": "X-ray", "PX": "X-ray",
}
VIEW_NAMES: dict[str, str] = {"PA": "PA", "AP": "AP", "LL": "lateral", "RL": "lateral", "LAT": "lateral",
                              "LATERAL": "lateral", "CC": "CC", "MLO": "MLO"}
AXIS_PLANES = ("sagittal", "coronal", "axial")  # normal along patient x (L), y (P), z (S)
ANATOMY_CATEGORIES = ("anatomical structure", "body structure", "organ", "tissue", "spatial and relational concept")
FRAME_CHOICES = ("all", "middle")
MAX_TOTAL_PIXELS = 4 * MAX_PIXELS  # all frames of one file (pydicom decodes them together)


def _count(ds: Any, tag: Any, name: str, default: int | None = None) -> int:
    """A positive integer header value (Rows, Columns, NumberOfFrames, ...), else BadInput naming it."""
    v = ds.get(tag)
    v = getattr(v, "value", v)
    if v is None or (isinstance(v, str | bytes) and not v.strip()):
        if default is None:
            raise BadInput(f"{name} is missing", field=name)
        return default
    try:
        n = int(str(v.decode("ascii", "replace") if isinstance(v, bytes) else v).strip())
    except (TypeError, ValueError, OverflowError):
        raise BadInput(f"{name} is not an integer: {str(v)[:40]!r}", field=name) from None
    if n < 1:
        raise BadInput(f"{name} must be >= 1, got {n}", field=name)
    return n


DEFLATED_TS = "1.2.840.10008.1.2.1.99"  # Deflated Explicit VR Little Endian
HEADER_BYTES = 8 << 20  # inflated bytes read to find the header of a deflated file


def check_deflated(path: Path) -> None:
    """For a deflated DICOM (the whole dataset zlib-compressed, which pydicom inflates in one piece before
    reading even the header): inflate at most :data:`HEADER_BYTES` to read the header, refuse it with
    :func:`declared_pixels`, then stream the rest (constant memory) and refuse a file that inflates to
    more than its header declares. Any other transfer syntax: nothing to do."""
    import zlib

    import pydicom
    from pydicom.filereader import read_file_meta_info
    from pydicom.uid import ExplicitVRLittleEndian

    meta = read_file_meta_info(path)
    if str(meta.get("TransferSyntaxUID", "")) != DEFLATED_TS:
        return
    start = 132 + 12 + int(meta.get("FileMetaInformationGroupLength", 0))
    inflater = zlib.decompressobj(-15)
    head = bytearray()
    total = 0
    limit: int | None = None
    with path.open("rb") as f:
        f.seek(start)
        while chunk := f.read(1 << 20):
            data = chunk
            while data:
                out = inflater.decompress(data, 1 << 22)
                data = inflater.unconsumed_tail
                total += len(out)
                if len(head) < HEADER_BYTES:
                    head += out[: HEADER_BYTES - len(head)]
                elif limit is None:
                    limit = _inflated_limit(head, meta, ExplicitVRLittleEndian, pydicom)
                if limit is not None and total > limit:
                    raise BadInput(f"deflated data inflates to more than the {limit} bytes its header declares",
                                   field="PixelData")
                if not out and not data:
                    break
    if limit is None:
        _inflated_limit(head, meta, ExplicitVRLittleEndian, pydicom)


def _inflated_limit(head: bytes | bytearray, meta: Any, explicit_le: Any, pydicom: Any) -> int:
    """Read the header from the first inflated bytes (``declared_pixels`` refuses a bomb); return how many
    inflated bytes the file may hold: its declared pixel data plus :data:`HEADER_BYTES`."""
    import io

    from pydicom.filewriter import write_file_meta_info

    m = meta.copy()
    m.TransferSyntaxUID = explicit_le
    buf = io.BytesIO()
    buf.write(b"\0" * 128 + b"DICM")
    write_file_meta_info(buf, m, enforce_standard=False)  # type: ignore[arg-type]  # any binary file-like
    try:
        ds = pydicom.dcmread(io.BytesIO(buf.getvalue() + bytes(head)), stop_before_pixels=True)
    except Exception as e:  # the header does not even fit in HEADER_BYTES, or is corrupt
        raise BadInput(f"cannot read the deflated DICOM header: {e}", field="file") from e
    rows, cols, frames = declared_pixels(ds)
    samples = _count(ds, "SamplesPerPixel", "SamplesPerPixel", default=1)
    bits = _count(ds, "BitsAllocated", "BitsAllocated", default=16)
    return rows * cols * frames * samples * -(-bits // 8) + HEADER_BYTES


def declared_pixels(ds: Any, prefix: str = "") -> tuple[int, int, int]:
    """(rows, columns, frames) from the header, refused (BadInput naming the tag) when invalid or when they
    declare more pixels than :data:`~medr2.images.MAX_PIXELS` per frame (the image reader's decompression-
    bomb limit) or :data:`MAX_TOTAL_PIXELS` in all: checked before any pixel is decoded."""
    rows, cols = _count(ds, "Rows", prefix + "Rows"), _count(ds, "Columns", prefix + "Columns")
    frames = _count(ds, "NumberOfFrames", prefix + "NumberOfFrames", default=1)
    if rows * cols > MAX_PIXELS:
        raise BadInput(f"{cols}x{rows} pixels per frame exceeds the limit of {MAX_PIXELS} (decompression bomb "
                       "refused from the header)", field=prefix + "Rows")
    if rows * cols * frames > MAX_TOTAL_PIXELS:
        raise BadInput(f"{frames} frames of {cols}x{rows} pixels exceed the limit of {MAX_TOTAL_PIXELS} "
                       "(refused from the header)", field=prefix + "NumberOfFrames")
    samples = _count(ds, "SamplesPerPixel", prefix + "SamplesPerPixel", default=1)
    bits = _count(ds, "BitsAllocated", prefix + "BitsAllocated", default=16)
    check_decoded(cols, rows, channels=samples, bytes_per_sample=-(-bits // 8), frames=frames,
                  field=prefix + ("NumberOfFrames" if frames > 1 else "Rows"))
    return rows, cols, frames


def read_checked(path: Path) -> Any:
    """A DICOM dataset read through the image gate: a deflated file checked as it inflates
    (:func:`check_deflated`), the header read without pixels and checked (:func:`declared_pixels`), then the
    file read whole. The only way medr2 reads a DICOM whose pixels it will decode. BadInput naming the tag."""
    import pydicom

    check_deflated(path)
    try:
        declared_pixels(pydicom.dcmread(path, stop_before_pixels=True))
        return pydicom.dcmread(path)
    except BadInput:
        raise
    except Exception as e:  # pydicom raises many types on corrupt files
        raise BadInput(f"cannot read DICOM: {e}", field="file") from e


# a slice whose normal lies further than this from every patient axis is "oblique", not the nearest axis plane
# (a shoulder MR 35 degrees off sagittal): "sagittal" and "oblique" are never both true of one image
OBLIQUE_DEGREES = 20.0


# an axis plane within this of the slice is one a reader may name it by (a shoulder MR 35 degrees off sagittal and
# 55 off coronal is read as an "oblique coronal"): never a wrong option beside the slice's own plane
NEAR_PLANE_DEGREES = 60.0


def _slice_normal(iop: Any) -> np.ndarray | None:
    try:
        v = np.asarray([float(x) for x in iop], dtype=float)
    except (TypeError, ValueError):
        return None
    if v.shape != (6,) or not np.isfinite(v).all():
        return None
    normal = np.cross(v[:3], v[3:])
    length = float(np.linalg.norm(normal))
    return None if length < 1e-6 else np.abs(normal) / length


def planes_near(iop: Any) -> list[str]:
    """The axis planes a reader may name an oblique slice by: those whose normal lies within
    :data:`NEAR_PLANE_DEGREES` of the slice's, nearest first; none for a slice along an axis (its plane is that
    axis's, :func:`plane_from_orientation`) or without a readable tag. A source records them as
    ``meta["near_planes"]``; the tasks never offer one as a wrong plane (:func:`medr2.tasks.pools.case_compatible`)."""
    along = _slice_normal(iop)
    if along is None or float(along.max()) >= np.cos(np.radians(OBLIQUE_DEGREES)):
        return []
    near = [(float(along[i]), AXIS_PLANES[i]) for i in range(3) if along[i] >= np.cos(np.radians(NEAR_PLANE_DEGREES))]
    return [name for _, name in sorted(near, reverse=True)]


def plane_from_orientation(iop: Any) -> str | None:
    """Plane from ImageOrientationPatient (row and column direction cosines) via the slice normal: the axis plane
    the normal lies along, or "oblique" when it lies more than :data:`OBLIQUE_DEGREES` from every axis. The one
    reading of the tag, for the DICOM reader and the sample's DICOM backgrounds alike."""
    along = _slice_normal(iop)
    if along is None:
        return None
    if float(along.max()) < np.cos(np.radians(OBLIQUE_DEGREES)):
        return "oblique"
    return AXIS_PLANES[int(np.argmax(along))]


def _frame_group(ds: Any, frame: int, seq: str) -> Any:
    """An item of a functional-group sequence for ``frame`` (per-frame first, then shared)."""
    for groups, idx in (("PerFrameFunctionalGroupsSequence", frame), ("SharedFunctionalGroupsSequence", 0)):
        g = getattr(ds, groups, None)
        if g is not None and len(g) > idx and seq in g[idx] and len(g[idx][seq].value):
            return g[idx][seq].value[0]
    return None


def _frame_iop(ds: Any, frame: int) -> Any:
    """A frame's ImageOrientationPatient from its functional groups, else None (the file's own then applies)."""
    grp = _frame_group(ds, frame, "PlaneOrientationSequence")
    return grp.get("ImageOrientationPatient") if grp is not None else None


def _first(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v[0]) if hasattr(v, "__len__") and not isinstance(v, str) else float(v)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return f if np.isfinite(f) else None


def window_to_uint8(arr: np.ndarray, ds: Any, frame: int) -> tuple[np.ndarray, dict[str, Any]]:
    """Modality LUT, then window (linear, DICOM PS3.3 C.11.2.1.2) or VOI LUT or min-max, to uint8."""
    from pydicom.pixels import apply_modality_lut, apply_voi_lut

    info: dict[str, Any] = {}
    grp = _frame_group(ds, frame, "FrameVOILUTSequence")
    center = _first(grp.get("WindowCenter") if grp is not None else ds.get("WindowCenter"))
    width = _first(grp.get("WindowWidth") if grp is not None else ds.get("WindowWidth"))
    if arr.ndim == 3:  # colour: already display values
        a = arr.astype(np.float64)
        info["window"] = "none (colour)"
    elif center is not None and width is not None and width >= 1:
        a = apply_modality_lut(arr, ds).astype(np.float64) if "RescaleSlope" in ds or "ModalityLUTSequence" in ds \
            else arr.astype(np.float64)
        lo, hi = center - 0.5 - (width - 1) / 2, center - 0.5 + (width - 1) / 2
        a = np.clip((a - lo) / max(hi - lo, 1e-9), 0.0, 1.0) * 255.0
        info.update(window_center=center, window_width=width)
    elif "VOILUTSequence" in ds:
        a = apply_voi_lut(apply_modality_lut(arr, ds), ds).astype(np.float64)
        info["window"] = "VOI LUT"
    else:
        a = apply_modality_lut(arr, ds).astype(np.float64) if "RescaleSlope" in ds else arr.astype(np.float64)
        info["window"] = "min-max"
    if "window_center" not in info:
        finite = np.isfinite(a)
        if not finite.any():
            raise BadInput("no finite pixel value (all NaN or infinite)", field="PixelData")
        vals = a[finite]
        lo_hi = (float(vals.min()), float(vals.max()))
        a = np.zeros_like(a) if lo_hi[1] <= lo_hi[0] else (np.where(finite, a, lo_hi[0]) - lo_hi[0]) / (
            lo_hi[1] - lo_hi[0]) * 255.0  # non-finite pixels do not set the window (shown black)
    out = np.clip(np.round(np.nan_to_num(a, nan=0.0)), 0, 255).astype(np.uint8)
    if arr.ndim == 2 and str(ds.get("PhotometricInterpretation", "")) == "MONOCHROME1":
        out = 255 - out
        info["inverted"] = True
    return out, info


@dataclass(frozen=True)
class SegRef:
    file: str
    frame: int  # index of the frame in the SEG
    label: str
    kind: str


@dataclass(frozen=True)
class DicomSpec:
    rel: str
    frame: int
    n_frames: int
    segs: tuple[SegRef, ...] = ()
    row: dict[str, Any] | None = None
    error: str | None = None
    error_field: str | None = None


def _is_dicom(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            head = f.read(132)
        return len(head) == 132 and head[128:132] == b"DICM"
    except OSError:
        return False


def _segment_kind(seg_item: Any) -> str:
    cat = seg_item.get("SegmentedPropertyCategoryCodeSequence")
    meaning = str(cat[0].get("CodeMeaning", "")).strip().lower() if cat else ""
    return "organ" if meaning in ANATOMY_CATEGORIES else "finding"


class DicomSource:
    name = "dicom"
    mapping_schema: dict[str, Key] = {
        "frames": Key("text", choices=FRAME_CHOICES), "overlay_label": TEXT,
        "overlay_kind": Key("text", choices=("finding", "organ", "region", "landmark"))}

    def __init__(self, arg: str | None) -> None:
        self.dr: DataRoot = open_root(arg, "dicom", schema=self.mapping_schema)
        m = self.dr.mapping
        self.frames = str(m.get("frames", "all"))
        where = str(self.dr.mapping_file) if self.dr.mapping_file else None
        if self.frames not in FRAME_CHOICES:
            raise BadInput(f"frames must be one of {FRAME_CHOICES}", file=where, field="frames")
        self.overlay_label = m.get("overlay_label")
        self.overlay_kind = str(m.get("overlay_kind", "finding"))
        if self.overlay_kind not in ("finding", "organ", "region", "landmark"):
            raise BadInput("overlay_kind must be finding, organ, region or landmark", file=where, field="overlay_kind")

    def plan(self, seed: int, n: int | None) -> list[DicomSpec]:
        import pydicom

        table = load_label_table(self.dr, str(self.dr.mapping["labels"])) if self.dr.mapping.get("labels") else None
        files = sorted(p for p in self.dr.root.rglob("*") if p.is_file() and not p.name.startswith("."))
        headers: list[tuple[str, Any]] = []
        bad: list[DicomSpec] = []
        for p in files:
            rel = self.dr.rel(p)
            if p.name == "medr2.json" or (table and Path(table.file) == p.resolve()):
                continue
            if not _is_dicom(p):
                if p.suffix.lower() in (".dcm", ".dicom", ".ima"):
                    bad.append(DicomSpec(rel, 0, 1, error="not a DICOM file (no DICM preamble)"))
                continue
            try:
                self.dr.path(rel, record=rel)
                check_deflated(p)  # before pydicom inflates a deflated file whole
                ds = pydicom.dcmread(p, stop_before_pixels=True)
                ds.walk(lambda _ds, _elem: None)  # convert every value now: a corrupt one fails here, for this file
            except BadInput as e:
                bad.append(DicomSpec(rel, 0, 1, error=e.reason, error_field=e.field))
                continue
            except Exception as e:  # pydicom raises many types on corrupt headers
                bad.append(DicomSpec(rel, 0, 1, error=f"cannot read DICOM header: {e}"))
                continue
            headers.append((rel, ds))
        seg_index: dict[tuple[str, int], list[SegRef]] = defaultdict(list)
        specs: list[DicomSpec] = []
        for rel, ds in headers:
            if str(ds.get("SOPClassUID", "")) == SEG_SOP_CLASS:
                try:
                    self._index_seg(rel, ds, seg_index)
                except Exception as e:  # bad segment numbers or references: this SEG is quarantined
                    bad.append(DicomSpec(rel, 0, 1, error=f"cannot index the SEG: {str(e)[:300]}",
                                         error_field="SegmentSequence"))
        for rel, ds in headers:
            if str(ds.get("SOPClassUID", "")) == SEG_SOP_CLASS:
                continue
            if "Rows" not in ds or "Columns" not in ds:
                bad.append(DicomSpec(rel, 0, 1, error=f"not an image (SOP class {ds.get('SOPClassUID', '?')})"))
                continue
            try:
                _, _, nf = declared_pixels(ds)
            except BadInput as e:
                bad.append(DicomSpec(rel, 0, 1, error=e.reason, error_field=e.field))
                continue
            frames = range(nf) if self.frames == "all" else [nf // 2]
            uid = str(ds.get("SOPInstanceUID", ""))
            for fr in frames:
                segs = tuple(seg_index.get((uid, fr), []))
                row = None
                if table:
                    row = table.rows.get(f"{rel}#{fr}") or table.rows.get(rel)
                specs.append(DicomSpec(rel, fr, nf, segs, row))
        specs += bad
        return [specs[i] for i in sample_indices(len(specs), seed, n)]

    @staticmethod
    def _index_seg(rel: str, ds: Any, index: dict[tuple[str, int], list[SegRef]]) -> None:
        segments = {int(s.SegmentNumber): s for s in ds.get("SegmentSequence", [])}
        for i, fg in enumerate(ds.get("PerFrameFunctionalGroupsSequence", [])):
            try:
                seg_no = int(fg.SegmentIdentificationSequence[0].ReferencedSegmentNumber)
                src = fg.DerivationImageSequence[0].SourceImageSequence[0]
            except (AttributeError, IndexError, KeyError):
                continue
            ref_uid = str(src.ReferencedSOPInstanceUID)
            ref_frame = int(src.get("ReferencedFrameNumber", 1) or 1) - 1
            seg = segments.get(seg_no)
            label = str(seg.get("SegmentLabel", f"segment {seg_no}")) if seg is not None else f"segment {seg_no}"
            kind = _segment_kind(seg) if seg is not None else "finding"
            index[(ref_uid, ref_frame)].append(SegRef(rel, i, label, kind))

    def realize(self, spec: DicomSpec, images: ImageStore) -> Case:
        key = spec.rel if spec.n_frames == 1 else f"{spec.rel}#{spec.frame}"
        try:
            return self._realize(spec, images, key)
        except BadInput:
            raise
        except Exception as e:  # pydicom converts element values lazily: a corrupt value raises where it is read
            raise BadInput(f"corrupt DICOM element: {str(e)[:300]}", file=spec.rel, record=key, field="file") from e

    def _realize(self, spec: DicomSpec, images: ImageStore, key: str) -> Case:

        if spec.error:
            raise BadInput(spec.error, file=spec.rel, record=key, field=spec.error_field or "file")
        path = self.dr.path(spec.rel, record=key, field_name="file")
        try:
            ds = read_checked(path)  # the file may differ from what was planned: checked again before decoding
        except BadInput as e:
            raise BadInput(e.reason, file=spec.rel, record=key, field=e.field) from e
        try:
            pixels = ds.pixel_array
            arr = pixels[spec.frame] if spec.n_frames > 1 else pixels
        except Exception as e:
            raise BadInput(f"cannot decode pixel data: {e}", file=spec.rel, record=key, field="PixelData") from e
        if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[-1] != 3):
            raise BadInput(f"unexpected pixel array shape {pixels.shape}", file=spec.rel, record=key,
                           field="PixelData")
        try:
            img, win = window_to_uint8(np.asarray(arr), ds, spec.frame)
        except BadInput as e:
            raise BadInput(e.reason, file=spec.rel, record=key, field=e.field) from e
        except Exception as e:  # pydicom's LUT functions on inconsistent headers
            raise BadInput(f"cannot window the pixel data: {e}", file=spec.rel, record=key, field="PixelData") from e
        stored = img.shape[:2]  # masks of SEG frames and overlays lie on the stored grid
        ops = display_ops(ds, _frame_iop(ds, spec.frame))
        img = to_display(img, ops)  # the standard display the file's own tags say (issue 40)
        ref = images.put_array(img)
        fields: dict[str, Any] = {}
        raw_mod = str(ds.get("Modality", "")).strip().upper()
        if raw_mod:
            fields["modality"] = MODALITY_NAMES.get(raw_mod, raw_mod)
        body = str(ds.get("BodyPartExamined", "")).strip()
        if body:
            fields["body_region"] = body.lower()
        plane = self._plane(ds, spec.frame)
        if plane:
            fields["plane"] = plane
        spacing = self._spacing(ds, spec.frame)
        meta: dict[str, Any] = {"dicom_modality": raw_mod, "frame": spec.frame, "n_frames": spec.n_frames, **win}
        near = planes_near(self._iop(ds, spec.frame))
        if near:
            meta["near_planes"] = near
        if ops:
            meta["display_ops"] = list(ops)
        if spacing:
            fields["pixel_spacing_mm"] = (spacing[0] + spacing[1]) / 2
            meta["pixel_spacing_rc_mm"] = list(spacing)
        pid = str(ds.get("PatientID", "")).strip()
        if pid:
            fields["patient_id"] = pid
        if str(ds.get("SeriesDescription", "")).strip():
            meta["series_description"] = str(ds.SeriesDescription).strip()
        fields.update(labels_to_fields(spec.row or {}, file=spec.rel, record=key))
        structures: list[Structure] = []
        findings: list[Finding] = []
        try:
            overlays = self._overlay_regions(ds, images, stored, key, ops)
        except BadInput as e:
            raise BadInput(e.reason, file=e.file or spec.rel, record=key, field=e.field) from e
        for r in [*self._seg_regions(spec, images, stored, key, ops), *overlays]:
            (findings if isinstance(r, Finding) else structures).append(r)  # type: ignore[arg-type]
        return make_case(self.dr, key=key, ref=ref, fields=fields, file=spec.rel, structures=structures,
                         findings=findings, meta=meta)

    @staticmethod
    def _iop(ds: Any, frame: int) -> Any:
        grp = _frame_group(ds, frame, "PlaneOrientationSequence")
        return grp.get("ImageOrientationPatient") if grp is not None else ds.get("ImageOrientationPatient")

    @staticmethod
    def _plane(ds: Any, frame: int) -> str | None:
        iop = DicomSource._iop(ds, frame)
        plane = plane_from_orientation(iop) if iop is not None else None
        if plane is None:
            view = str(ds.get("ViewPosition", "")).strip().upper()
            plane = VIEW_NAMES.get(view)
        return plane

    @staticmethod
    def _spacing(ds: Any, frame: int) -> tuple[float, float] | None:
        grp = _frame_group(ds, frame, "PixelMeasuresSequence")
        ps = grp.get("PixelSpacing") if grp is not None else None
        ps = ps or ds.get("PixelSpacing") or ds.get("ImagerPixelSpacing")
        try:
            r, c = float(ps[0]), float(ps[1])
        except (TypeError, ValueError, IndexError):
            return None
        return (r, c) if r > 0 and c > 0 else None

    def _seg_regions(self, spec: DicomSpec, images: ImageStore, shape: tuple[int, int],
                     key: str, ops: tuple[str, ...] = ()) -> list[Structure | Finding]:

        out: list[Structure | Finding] = []
        cache: dict[str, np.ndarray] = {}
        for s in spec.segs:
            if s.file not in cache:
                try:
                    seg_path = self.dr.path(s.file, record=key, field_name="segmentation")
                    seg_ds = read_checked(seg_path)
                    px = seg_ds.pixel_array
                except BadInput as e:
                    raise BadInput(e.reason, file=s.file, record=key, field=f"segmentation.{e.field}") from e
                except Exception as e:
                    raise BadInput(f"cannot decode SEG: {e}", file=s.file, record=key, field="segmentation") from e
                cache[s.file] = px if px.ndim == 3 else px[None]
            frame = cache[s.file][s.frame]
            if frame.shape != shape:
                raise BadInput(f"SEG frame is {frame.shape}, image is {shape}", file=s.file, record=key,
                               field="segmentation")
            r = region_from_mask(images, to_display(frame > 0, ops), s.label, s.kind)
            if r is not None:
                out.append(r)
        return out

    def _overlay_regions(self, ds: Any, images: ImageStore, shape: tuple[int, int],
                         key: str, ops: tuple[str, ...] = ()) -> list[Structure | Finding]:
        from scipy.ndimage import binary_fill_holes

        out: list[Structure | Finding] = []
        for group in range(0x6000, 0x6020, 2):
            if (group, 0x3000) not in ds:
                continue
            try:
                orows = _count(ds, (group, 0x0010), f"({group:04X},0010) OverlayRows")
                ocols = _count(ds, (group, 0x0011), f"({group:04X},0011) OverlayColumns")
                oframes = _count(ds, (group, 0x0015), f"({group:04X},0015) NumberOfFramesInOverlay", default=1)
            except BadInput as e:
                raise BadInput(e.reason, record=key, field=e.field) from e
            if orows * ocols > MAX_PIXELS or orows * ocols * oframes > MAX_TOTAL_PIXELS:
                raise BadInput(f"overlay of {oframes} x {ocols}x{orows} pixels exceeds the limit (refused from the "
                               "header)", record=key, field=f"({group:04X},0010) OverlayRows")
            try:
                ov = np.asarray(ds.overlay_array(group), dtype=bool)
            except Exception as e:
                raise BadInput(f"cannot decode overlay: {e}", record=key, field=f"({group:04X},3000)") from e
            if ov.ndim == 3:
                ov = ov[0]
            if ov.ndim != 2:
                raise BadInput(f"overlay has shape {ov.shape}", record=key, field=f"({group:04X},3000)")
            rows, cols = ov.shape
            oy, ox = _overlay_origin(ds.get((group, 0x0050)), key, group)
            full = np.zeros(shape, dtype=bool)
            y0, x0 = max(oy, 0), max(ox, 0)
            y1, x1 = min(oy + rows, shape[0]), min(ox + cols, shape[1])
            if y1 > y0 and x1 > x0:
                full[y0:y1, x0:x1] = ov[y0 - oy:y1 - oy, x0 - ox:x1 - ox]
            full = binary_fill_holes(full)
            label = self.overlay_label
            if not label:
                for el in (0x1500, 0x0022):  # OverlayLabel, OverlayDescription
                    v = ds.get((group, el))
                    if v is not None and str(v.value).strip():
                        label = str(v.value).strip()
                        break
            r = region_from_mask(images, to_display(full, ops), str(label or "overlay region"), self.overlay_kind)
            if r is not None:
                out.append(r)
        return out


def _overlay_origin(origin: Any, key: str, group: int) -> tuple[int, int]:
    """(row, column) of the overlay's first pixel, 0-based; OverlayOrigin must hold two integers."""
    if origin is None:
        return 0, 0
    v = origin.value
    try:
        if isinstance(v, str | bytes) or len(v) != 2:
            raise ValueError
        return int(v[0]) - 1, int(v[1]) - 1
    except (TypeError, ValueError, OverflowError):
        raise BadInput(f"OverlayOrigin must be two integers (row, column), got {str(v)[:40]!r}", record=key,
                       field=f"({group:04X},0050) OverlayOrigin") from None


def _factory(arg: str | None) -> DicomSource:
    return DicomSource(arg)
