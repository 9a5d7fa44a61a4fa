"""Slices of NIfTI volumes for the dataset readers (MSD, BraTS): a volume channel (3-D file, or one
channel of a 4-D file) read lazily through :class:`medr2.sources.nifti_volume.Volume`, sliced and shown
the way the ``nifti`` reader does (RAS+, radiological display, per-volume intensity window)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.images import ImageRef, ImageStore
from medr2.records import Finding, Structure
from medr2.sources.common import DataRoot, region_from_mask
from medr2.sources.nifti import PLANE_AXIS, display, slice_positions
from medr2.sources.nifti_volume import Volume, check_declared, isotropic, open_volume, read_checked

PLANES = ("axial", "coronal", "sagittal")


def open_channel(path: Path, channel: int | None, *, record: str, field_name: str) -> Volume:
    """A 3-D volume, or channel ``channel`` of a 4-D one (x, y, z, c) read through the same lazy proxy."""
    if channel is None:
        return open_volume(path, record=record, field_name=field_name)
    try:
        import nibabel as nib
        from nibabel.orientations import io_orientation

        img: Any = nib.load(str(path))  # a Nifti1Image (typed as the file-based base class)
        shape = tuple(int(s) for s in img.shape)
        if len(shape) != 4 or not 0 <= channel < shape[3]:
            raise ValueError(f"expected a 4-D volume with channel {channel}, got shape {shape}")
        check_declared(shape[:3])  # the image gate, from the header (a 4-D bomb was read unchecked before)
        ornt = io_orientation(img.affine)
        ras = tuple(int(a) for a in ornt[:, 0])
        flip = tuple(bool(f == -1) for f in ornt[:, 1])
        z = [float(v) for v in img.header.get_zooms()[:3]]
        zooms = [0.0, 0.0, 0.0]
        for k, a in enumerate(ras):
            zooms[a] = z[k]
        return Volume(str(path), img.dataobj, shape[:3], (channel,), ras, flip,  # type: ignore[arg-type]
                      (zooms[0], zooms[1], zooms[2]), np.asarray(img.affine))
    except Exception as e:  # nibabel raises several types for corrupt files
        raise BadInput(f"cannot read NIfTI: {e}", file=str(path), record=record, field=field_name) from e


@dataclass(frozen=True)
class SliceAt:
    plane: str
    index: int


@dataclass(frozen=True)
class LabelGrid:
    """What planning learns from a label volume: where to cut, and the grid every image must share."""

    slices: tuple[SliceAt, ...]
    shape: tuple[int, int, int]
    affine: np.ndarray
    values: tuple[int, ...] = ()  # the distinct non-zero label values of the volume


def label_slices(dr: DataRoot, labels: str, *, planes: Sequence[str], k: int, record: str,
                 known: Mapping[int, LabelRole] | None = None, convention: str = "") -> LabelGrid:
    """``k`` slices per plane over the labelled extent (the middle 80 % where a plane has no label),
    read once per label volume, chunk by chunk. With ``known`` (the label map of the release), a value
    outside it is refused here, once for the volume (:func:`check_label_values`), not once per slice."""
    lp = dr.path(labels, record=record, field_name="label")
    if not lp.is_file():
        raise BadInput(f"label volume not found: {labels}", file=labels, record=record, field="label")
    lab = open_volume(lp, record=record, field_name="label")
    extents, values = read_checked(lab.extents_and_values, lp, record=record, field_name="label")
    if known is not None:
        check_label_values(values, known, labels=labels, record=record, convention=convention)
    out: list[SliceAt] = []
    for plane in planes:
        ax = PLANE_AXIS[plane]
        if extents[ax].any():
            nz = np.flatnonzero(extents[ax])
            extent = (int(nz.min()), int(nz.max()))
        else:
            size = lab.ras_shape[ax]
            extent = (int(size * 0.1), int(size * 0.9) - 1)
        out += [SliceAt(plane, i) for i in slice_positions(extent, k)]
    return LabelGrid(tuple(out), lab.ras_shape, lab.affine, values)


def check_label_values(values: Sequence[int], known: Mapping[int, LabelRole], *, labels: str, record: str,
                       convention: str = "") -> None:
    """Every label value of a volume is in the release's label map, else one BadInput for the volume naming
    the values and the map (the reader turns it into one quarantined record; the build goes on)."""
    unknown = sorted(set(values) - set(known))
    if unknown:
        names = ", ".join(f"{v} {r.name}" for v, r in sorted(known.items()))
        raise BadInput(f"label value{'s' if len(unknown) > 1 else ''} {unknown} not in the label map"
                       f"{f' of {convention}' if convention else ''} ({names}); the volume is left out",
                       file=labels, record=record, field="label")


def check_grid(dr: DataRoot, image: str, channel: int | None, grid: LabelGrid, *, labels: str, record: str) -> None:
    """The image (its header only) exists and lies on the label grid; BadInput naming the record otherwise."""
    vp = dr.path(image, record=record, field_name="image")
    if not vp.is_file():
        raise BadInput(f"volume not found: {image}", file=image, record=record, field="image")
    vol = open_channel(vp, channel, record=record, field_name="image")
    if grid.shape != vol.ras_shape or not np.allclose(grid.affine, vol.affine, atol=1e-3):
        raise BadInput(f"label grid {grid.shape} differs from the image grid {vol.ras_shape}", file=labels,
                       record=record, field="label")


@functools.lru_cache(maxsize=16)
def _window(path: str, channel: int | None, mtime_ns: int, record: str) -> tuple[float, float]:
    vol = open_channel(Path(path), channel, record=record, field_name="image")
    return read_checked(lambda: vol.window((0.5, 99.5)), Path(path), record=record, field_name="image")


def volume_window(path: Path, channel: int | None, *, record: str) -> tuple[float, float]:
    """The 0.5-99.5 percentile intensity window of one volume channel, computed when a case of the volume
    is realized (not at planning) and cached per process for the volume's other slices."""
    return _window(str(path), channel, path.stat().st_mtime_ns, record.split("@", 1)[0])


@dataclass(frozen=True)
class LabelRole:
    name: str
    kind: str  # "finding" or a structure kind
    attributes: Mapping[str, Any] | None = None


def render_slice(dr: DataRoot, images: ImageStore, *, image: str, channel: int | None, labels: str | None,
                 plane: str, index: int, roles: Mapping[int, LabelRole],
                 record: str, min_area: int = 16) -> tuple[ImageRef, list[Structure], list[Finding], dict[str, Any]]:
    """The windowed slice in the store, the regions of its label slice (named by ``roles``; a value not
    in ``roles`` is the record's error) and the in-plane spacing; an anisotropic slice is resampled to
    square pixels (:func:`~medr2.sources.nifti_volume.isotropic`)."""
    vp = dr.path(image, record=record, field_name="image")
    vol = open_channel(vp, channel, record=record, field_name="image")
    ax = PLANE_AXIS[plane]
    lo, hi = volume_window(vp, channel, record=record)
    in_plane = [vol.zooms[a] for a in range(3) if a != ax]  # (columns axis, rows axis) before display
    spacing_rc = (in_plane[1], in_plane[0])
    shown = isotropic(display(read_checked(lambda: vol.slab(ax, index), vp, record=record, field_name="image")),
                      spacing_rc, labels=False)
    sl = shown.pixels.astype(np.float64)
    img = np.zeros(sl.shape, np.uint8) if hi <= lo else \
        np.clip(np.round((np.nan_to_num(sl, nan=lo) - lo) / (hi - lo) * 255), 0, 255).astype(np.uint8)
    ref = images.put_array(img)
    structures: list[Structure] = []
    findings: list[Finding] = []
    if labels:
        lp = dr.path(labels, record=record, field_name="label")
        lab = open_volume(lp, record=record, field_name="label")
        lsl = isotropic(np.rint(display(read_checked(lambda: lab.slab(ax, index), lp, record=record,
                                                     field_name="label"))).astype(np.int64),
                        spacing_rc, labels=True).pixels
        for value in (int(v) for v in np.unique(lsl) if v != 0):
            if value not in roles:
                raise BadInput(f"label value {value} is not one of {sorted(roles)}", file=labels, record=record,
                               field="label")
            region = lsl == value
            if region.sum() < min_area:
                continue
            role = roles[value]
            r = region_from_mask(images, region, role.name, role.kind, role.attributes)
            if isinstance(r, Finding):
                findings.append(r)
            elif isinstance(r, Structure):
                structures.append(r)
    meta = {"volume": image, "channel": channel, "slice_axis": ax, "slice_index": index, **shown.meta(),
            "display": "radiological", "window": [lo, hi]}
    return ref, structures, findings, {"pixel_spacing_mm": shown.spacing_mm, "meta": meta}
