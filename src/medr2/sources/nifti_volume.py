"""A NIfTI volume read lazily through nibabel's array proxy (``dataobj``): only the header is read on
opening, and every read touches at most :data:`CHUNK_VOXELS` voxels at a time (slabs along the file's
slowest axis), so large volumes never load whole.

Indices are in RAS+ space, as if the volume had been reoriented with ``nibabel.as_closest_canonical``:
``slab(axis, i)`` equals ``np.take(canonical_data, i, axis)`` without building the canonical array.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput

CHUNK_VOXELS = 1 << 20  # voxels read per proxy access
WINDOW_SAMPLE_VOXELS = 1 << 19  # at most about this many voxels feed the intensity-window percentiles


@dataclass(frozen=True)
class Volume:
    path: str
    proxy: Any  # nibabel ArrayProxy
    shape: tuple[int, int, int]  # array (file) shape
    extra: tuple[int, ...]  # trailing singleton index for x*y*z*1 files
    ras_axis: tuple[int, int, int]  # array axis k -> RAS axis
    flip: tuple[bool, bool, bool]  # array axis k runs against its RAS axis
    zooms: tuple[float, float, float]  # voxel size along RAS axes
    affine: np.ndarray

    @property
    def ras_shape(self) -> tuple[int, int, int]:
        out = [0, 0, 0]
        for k, a in enumerate(self.ras_axis):
            out[a] = self.shape[k]
        return (out[0], out[1], out[2])

    def _read(self, index: tuple[Any, ...]) -> np.ndarray:
        return np.asanyarray(self.proxy[index + self.extra])

    def chunks(self) -> Iterator[tuple[int, np.ndarray]]:
        """(first index, block) along the last array axis, ``CHUNK_VOXELS`` at a time."""
        per = max(1, CHUNK_VOXELS // max(1, self.shape[0] * self.shape[1]))
        for k0 in range(0, self.shape[2], per):
            yield k0, self._read((slice(None), slice(None), slice(k0, min(k0 + per, self.shape[2]))))

    def slab(self, axis: int, index: int) -> np.ndarray:
        """The 2-D slice at RAS ``index`` along RAS ``axis``, its two axes in RAS order."""
        k = self.ras_axis.index(axis)
        j = self.shape[k] - 1 - index if self.flip[k] else index
        if k == 2:
            data = self._read((slice(None), slice(None), j))
        else:  # gather the slice chunk by chunk along the slowest axis (never the whole file at once)
            cut: list[Any] = [slice(None), slice(None)]
            cut[k] = j
            data = np.concatenate([block[tuple(cut)].copy() for _, block in self.chunks()], axis=-1)  # free each chunk
        rest = [kk for kk in range(3) if kk != k]  # array axes left, in array order
        order = sorted(range(2), key=lambda i: self.ras_axis[rest[i]])
        data = data.transpose(order)
        for pos, i in enumerate(order):
            if self.flip[rest[i]]:
                data = np.flip(data, axis=pos)
        return np.ascontiguousarray(data)

    def nonzero_extents(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per RAS axis, which indices hold any non-zero voxel (read chunk by chunk)."""
        return self.extents_and_values(values=False)[0]

    def extents_and_values(self, *, values: bool = True) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray],
                                                                 tuple[int, ...]]:
        """``nonzero_extents`` and the distinct non-zero finite values (rounded to integers: a label volume),
        in one pass chunk by chunk."""
        proj = [np.zeros(n, bool) for n in self.shape]
        seen: set[int] = set()
        for k0, block in self.chunks():
            nz = block != 0
            proj[0] |= nz.any(axis=(1, 2))
            proj[1] |= nz.any(axis=(0, 2))
            proj[2][k0:k0 + nz.shape[2]] = nz.any(axis=(0, 1))
            if values and nz.any():
                v = block[nz]
                seen.update(int(x) for x in np.unique(np.rint(v[np.isfinite(v)] if v.dtype.kind == "f" else v)))
        out: list[np.ndarray] = [np.zeros(0, bool)] * 3
        for k, p in enumerate(proj):
            out[self.ras_axis[k]] = p[::-1] if self.flip[k] else p
        return (out[0], out[1], out[2]), tuple(sorted(seen - {0}))

    def window(self, percentiles: tuple[float, ...]) -> tuple[float, float]:
        """Intensity percentiles over the finite voxels: exact for volumes up to ``WINDOW_SAMPLE_VOXELS``,
        else over every n-th slab along the slowest axis (the same slabs every time)."""
        step = max(1, -(-int(np.prod(self.shape)) // WINDOW_SAMPLE_VOXELS))
        picked = []
        per = max(1, CHUNK_VOXELS // max(1, self.shape[0] * self.shape[1]))
        for k0 in range(0, self.shape[2], per * step):
            k1 = min(k0 + per * step, self.shape[2])
            block = self._read((slice(None), slice(None), slice(k0, k1, step)))
            v = block.ravel()
            picked.append(v[np.isfinite(v)] if np.issubdtype(v.dtype, np.floating) else v)
        values = np.concatenate(picked)
        lo, hi = (float(x) for x in np.percentile(values, percentiles))
        return lo, hi


ISOTROPY_TOLERANCE = 1.01  # in-plane spacings within 1 % of each other are shown on the voxel grid


@dataclass(frozen=True)
class ShownSlice:
    """A displayed slice on an isotropic pixel grid: the pixels, their spacing (mm, both axes) and the
    voxel spacing it was resampled from (rows, columns)."""

    pixels: np.ndarray
    spacing_rc_mm: tuple[float, float]  # of the pixels shown: equal up to the rounding of the pixel counts
    voxel_spacing_rc_mm: tuple[float, float]
    voxel_shape: tuple[int, int]

    @property
    def spacing_mm(self) -> float:
        return float(np.mean(self.spacing_rc_mm))

    @property
    def resampled(self) -> bool:
        return tuple(self.pixels.shape[:2]) != self.voxel_shape

    def meta(self) -> dict[str, Any]:
        """What a case records of it: the pixel spacing shown, and the voxel grid it came from."""
        out: dict[str, Any] = {"pixel_spacing_rc_mm": list(self.spacing_rc_mm),
                               "voxel_spacing_rc_mm": list(self.voxel_spacing_rc_mm)}
        if self.resampled:
            out["resampled_from_shape"] = list(self.voxel_shape)
        return out


def isotropic(a: np.ndarray, spacing_rc: tuple[float, float], *, labels: bool) -> ShownSlice:
    """A displayed 2-D slice resampled to square pixels of the finer in-plane spacing (an anisotropic
    volume's coronal / sagittal slice, e.g. MSD prostate 0.6 x 3.6 mm, would otherwise be squashed 6x and
    its sizes in mm wrong along one axis). Pixel centres stay on the same physical extent; ``labels``:
    nearest neighbour (label values kept), else linear. Spacings within :data:`ISOTROPY_TOLERANCE`: as is.
    The same rule for every volume reader (``nifti``, ``msd``, ``brats``)."""
    sr, sc = (float(v) for v in spacing_rc)
    if not (sr > 0 and sc > 0) or max(sr, sc) / min(sr, sc) <= ISOTROPY_TOLERANCE:
        return ShownSlice(a, (sr, sc), (sr, sc), (a.shape[0], a.shape[1]))
    from medr2.images import MAX_PIXELS

    t = min(sr, sc)
    n_r, n_c = a.shape[0] * sr / t, a.shape[1] * sc / t
    if n_r * n_c > MAX_PIXELS:  # never more pixels than the image limit: a coarser square grid
        t *= float(np.sqrt(n_r * n_c / MAX_PIXELS))
    out = a
    for axis, s in ((0, sr), (1, sc)):
        n_in = out.shape[axis]
        n_out = max(1, int(round(n_in * s / t)))
        if n_out != n_in:
            out = _resample_axis(out, axis, n_out, labels)
    spacing = (sr * a.shape[0] / out.shape[0], sc * a.shape[1] / out.shape[1])
    return ShownSlice(out, spacing, (sr, sc), (a.shape[0], a.shape[1]))


def _resample_axis(a: np.ndarray, axis: int, n_out: int, nearest: bool) -> np.ndarray:
    n_in = a.shape[axis]
    x = (np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5  # output pixel centres in input pixel coordinates
    if nearest:
        return np.take(a, np.clip(np.rint(x), 0, n_in - 1).astype(np.int64), axis=axis)
    x = np.clip(x, 0, n_in - 1)
    i0 = np.floor(x).astype(np.int64)
    i1 = np.minimum(i0 + 1, n_in - 1)
    w = (x - i0).reshape([-1 if k == axis else 1 for k in range(a.ndim)])
    af = a.astype(np.float64)
    return np.take(af, i0, axis=axis) * (1 - w) + np.take(af, i1, axis=axis) * w


class TooLarge(ValueError):
    """A header declaring more voxels than the pixel limit allows (refused before any voxel is read)."""


def check_declared(shape: tuple[int, ...]) -> None:
    """Refuse, from the header, a volume any of whose slices (or the chunk read along its slowest axis)
    would have more pixels than :data:`~medr2.images.MAX_PIXELS`, the image reader's bomb limit."""
    from medr2.errors import BadInput
    from medr2.images import MAX_PIXELS, check_decoded

    x, y, z = (int(s) for s in shape)
    if min(x, y, z) < 1:
        raise TooLarge(f"the header declares an empty volume {shape}")
    worst = max(x * y, x * z, y * z)
    if worst > MAX_PIXELS:
        raise TooLarge(f"the header declares {x} x {y} x {z} voxels: a slice of {worst} pixels exceeds the limit "
                       f"of {MAX_PIXELS} (decompression bomb refused from the header)")
    a, b = sorted((x, y, z))[1:]  # the largest slice, through the image gate (decoded as float64 voxels)
    try:
        check_decoded(a, b, bytes_per_sample=8)
    except BadInput as e:
        raise TooLarge(f"the header declares {x} x {y} x {z} voxels: {e.reason}") from None


@functools.lru_cache(maxsize=8)
def _open(path: str, mtime_ns: int) -> Volume:
    import nibabel as nib
    from nibabel.orientations import io_orientation

    img: Any = nib.load(path)  # a Nifti1Image (typed as the file-based base class)
    shape = tuple(int(s) for s in img.shape)
    if len(shape) == 4 and shape[3] == 1:
        extra: tuple[int, ...] = (0,)
    elif len(shape) == 3:
        extra = ()
    else:
        raise ValueError(f"expected a 3-D volume, got shape {shape}")
    check_declared(shape[:3])
    ornt = io_orientation(img.affine)
    ras_axis = tuple(int(a) for a in ornt[:, 0])
    flip = tuple(bool(f == -1) for f in ornt[:, 1])
    z = [float(v) for v in img.header.get_zooms()[:3]]
    check_spacing(z)
    zooms = [0.0, 0.0, 0.0]
    for k, a in enumerate(ras_axis):
        zooms[a] = z[k]
    return Volume(path, img.dataobj, shape[:3], extra, ras_axis, flip,  # type: ignore[arg-type]
                  (zooms[0], zooms[1], zooms[2]), np.asarray(img.affine))


MAX_ANISOTROPY = 1000.0  # voxel sides differing more than this are a damaged header (real volumes: up to ~20)


def check_spacing(zooms: list[float]) -> None:
    """The header's voxel sizes (``pixdim``) as every volume reader takes them: each finite (0 or less: not
    recorded, shown on the voxel grid), and the recorded ones within :data:`MAX_ANISOTROPY` of each other. A damaged
    header otherwise makes :func:`isotropic` resample a slice to billions of pixels or to NaN of them."""
    if not all(np.isfinite(zooms)):
        raise ValueError(f"voxel sizes (pixdim) {zooms} are not finite numbers")
    given = [v for v in zooms if v > 0]
    if given and max(given) / min(given) > MAX_ANISOTROPY:
        raise ValueError(f"voxel sizes (pixdim) {zooms} differ more than {MAX_ANISOTROPY:g}-fold: a damaged header")


def open_volume(path: Path, *, record: str, field_name: str) -> Volume:
    """The volume's header and proxy (no voxel data read)."""
    try:
        return _open(str(path), path.stat().st_mtime_ns)
    except Exception as e:  # nibabel raises several types for corrupt files
        raise BadInput(f"cannot read NIfTI: {e}", file=str(path), record=record, field=field_name) from e


def read_checked(fn: Any, path: Path, *, record: str, field_name: str) -> Any:
    """Run a voxel read, turning decoding failures (truncated, corrupt data) into BadInput."""
    try:
        return fn()
    except BadInput:
        raise
    except Exception as e:  # zlib / EOF / value errors from a damaged file
        raise BadInput(f"cannot read NIfTI data: {e}", file=str(path), record=record, field=field_name) from e
