"""Brain volumes sliced into axial, coronal and sagittal views (plane ground truth by slicing).

- nilearn's bundled MNI152 2009 T1 template with grey/white-matter maps and brain mask (BSD).
- Optional: Debian ``mricron-data`` Colin27 T1 (``ch2.nii.gz``) with the AAL atlas (116 named
  regions on the same grid); skipped, with the reason recorded, when the package is absent.

Display follows the radiological convention: axial and coronal views show the patient's right on
the image left; sagittal views face the image left (anterior on the left).
"""

from __future__ import annotations

import functools
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medr2.errors import BadInput
from medr2.sources.sample.background import (
    VIEW_CACHE,
    Background,
    BackgroundDef,
    StructMask,
    erode,
    register_background,
    resize_float,
    resize_mask,
    work_scale,
)
from medr2.vocab import anatomy_words

PLANES = ("axial", "coronal", "sagittal")
N_SLICES = 24  # candidate slices per plane (views)


@dataclass(frozen=True, eq=False)
class LabelMap:
    """Integer label volume and the structure name of each label value (one volume, not one per label)."""

    values: np.ndarray  # integer, same grid as the T1
    names: dict[int, str]  # label value -> structure name


@dataclass(frozen=True, eq=False)
class Volume:
    t1: np.ndarray  # float32 RAS+ (x, y, z), 1 mm
    brain: np.ndarray  # bool
    labels: tuple[LabelMap, ...]
    affine: np.ndarray
    file: str


def _canonical(img: object) -> tuple[np.ndarray, np.ndarray]:
    import nibabel as nib

    c = nib.as_closest_canonical(img)
    return np.asarray(c.get_fdata(dtype=np.float32)), c.affine


@functools.cache
def mni_volume() -> Volume:
    from nilearn import datasets

    t1, aff = _canonical(datasets.load_mni152_template(resolution=1))
    gm, _ = _canonical(datasets.load_mni152_gm_template(resolution=1))
    wm, _ = _canonical(datasets.load_mni152_wm_template(resolution=1))
    brain, _ = _canonical(datasets.load_mni152_brain_mask(resolution=1))
    import nilearn

    maps = (LabelMap((gm > 0.5).astype(np.uint8), {1: "grey matter"}),
            LabelMap((wm > 0.5).astype(np.uint8), {1: "white matter"}))
    return Volume(t1, brain > 0.5, maps, aff,
                  f"nilearn {nilearn.__version__}: MNI152 2009 T1 template (bundled)")


def mricron_dir() -> Path | None:
    """The mricron-data templates folder (``dpkg -L`` or the usual path), or None."""
    usual = Path("/usr/share/mricron/templates")
    if (usual / "aal.nii.gz").is_file():
        return usual
    try:
        out = subprocess.run(["dpkg", "-L", "mricron-data"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        if line.endswith("/aal.nii.gz"):
            return Path(line).parent
    return None


@functools.cache
def mricron_available() -> str | None:
    d = mricron_dir()
    if d is None:
        return None
    need = ("ch2.nii.gz", "ch2bet.nii.gz", "aal.nii.gz", "aal.nii.txt")
    return str(d) if all((d / n).is_file() for n in need) else None


def aal_names(path: Path) -> dict[int, str]:
    names = {}
    for line in path.read_text("utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].isdigit():
            names[int(parts[0])] = parts[1]
    return names


def aal_display_name(raw: str) -> str:
    """The words a radiologist signs for an AAL label (:func:`medr2.vocab.anatomy_words`, the vocabulary's table
    of the atlas's spellings): ``Frontal_Sup_L`` -> ``left superior frontal gyrus``; ``Vermis_1_2`` ->
    ``vermian lobules I and II`` (no side: the vermis is midline)."""
    parts = raw.split("_")
    side = {"L": "left", "R": "right"}.get(parts[-1])
    words = [p.lower() for p in (parts[:-1] if side else parts)]
    return anatomy_words(" ".join(([side] if side else []) + words))


@functools.cache
def colin_volume() -> Volume:
    import nibabel as nib

    d = mricron_available()
    if d is None:
        raise BadInput("mricron-data is not installed (apt-get install mricron-data)", file="aal.nii.gz",
                       field="background")
    root = Path(d)
    try:
        t1, aff = _canonical(nib.load(str(root / "ch2.nii.gz")))
        bet, _ = _canonical(nib.load(str(root / "ch2bet.nii.gz")))
        aal, _ = _canonical(nib.load(str(root / "aal.nii.gz")))
    except Exception as e:
        raise BadInput(f"cannot read mricron templates: {e}", file=str(root), field="background") from e
    names = aal_names(root / "aal.nii.txt")
    lab = np.rint(aal).astype(np.int32)
    present = set(np.unique(lab).tolist())
    labels = LabelMap(lab, {i: aal_display_name(names[i]) for i in sorted(names) if i in present})
    return Volume(t1, bet > 0, (labels,), aff, str(root / "ch2.nii.gz"))


def _slice(vol: np.ndarray, plane: str, index: int) -> np.ndarray:
    """A 2-D display slice of a RAS+ volume (radiological convention, superior/anterior up)."""
    if plane == "axial":  # rows: anterior at top; columns: patient right on image left
        return vol[:, :, index].T[::-1, ::-1]
    if plane == "coronal":  # rows: superior at top; columns: patient right on image left
        return vol[:, index, :].T[::-1, ::-1]
    return vol[index, :, :].T[::-1, ::-1]  # sagittal: superior up, anterior on the image left


def slice_indices(brain: np.ndarray, plane: str) -> list[int]:
    axis = {"sagittal": 0, "coronal": 1, "axial": 2}[plane]
    other = tuple(a for a in range(3) if a != axis)
    area = brain.sum(axis=other)
    ok = np.nonzero(area > 0.45 * area.max())[0]
    return [int(i) for i in np.linspace(ok.min(), ok.max(), N_SLICES).round()]


def brain_view(vol: Volume, key: str, plane: str, view: int, *, source: str, license: str,
               patient_id: str, max_structures: int) -> Background:
    index = slice_indices(vol.brain, plane)[view]
    t1 = _slice(vol.t1, plane, index)
    brain2d = _slice(vol.brain, plane, index)
    lo, hi = np.percentile(t1[brain2d], [0.5, 99.5]) if brain2d.any() else (t1.min(), t1.max())
    img = np.clip((t1 - 0.0) / max(float(hi), 1e-6), 0, 1).astype(np.float32)
    s = work_scale(*img.shape)
    img = resize_float(img, s)
    brain = resize_mask(brain2d, img.shape)
    structs = [StructMask("brain", brain, "organ", "template brain mask")]
    areas = []
    for lmap in vol.labels:
        lab2d = _slice(lmap.values, plane, index)
        counts = np.bincount(lab2d.ravel(), minlength=max(lmap.names) + 1) if lmap.names else np.zeros(0, int)
        for value, name in lmap.names.items():
            n = int(counts[value]) if value < len(counts) else 0
            if n >= 30:
                areas.append((n, name, lab2d == value))
    areas.sort(key=lambda t: (-t[0], t[1]))
    for _a, name, m2 in areas[:max_structures]:
        structs.append(StructMask(name, resize_mask(m2, img.shape), "organ", "atlas / tissue map > 0.5"))
    # mm coordinate of the slice (RAS): for sagittal views the hemisphere is known from x
    ijk = [0, 0, 0]
    ijk[{"sagittal": 0, "coronal": 1, "axial": 2}[plane]] = index
    coord = (vol.affine @ np.array([*ijk, 1.0]))[:3]
    meta = {"slice_index": index, "slice_mm": round(float(coord[{"sagittal": 0, "coronal": 1, "axial": 2}[plane]]), 1),
            "display": "radiological (image left = patient right)" if plane != "sagittal" else "anterior left",
            "window": [0.0, round(float(hi), 3)], "lo": round(float(lo), 3)}
    lat, side = "radiological", None
    if plane == "sagittal":
        x = float(coord[0])
        lat, side = "hemisphere", ("right" if x > 3 else "left" if x < -3 else "midline")
    return Background(
        key=key, file=vol.file, images={"default": img}, modality="MRI", body_region="head", plane=plane,
        sequence="T1-weighted", spacing_mm=1.0 / s, structures=tuple(structs), host=erode(brain, 8),
        host_name="brain", lesion_family="brain", laterality=lat, fixed_side=side, source=source,
        license=license, patient_id=patient_id, status="normal", lateralising=plane == "sagittal",
        meta={**meta, "findings_complete": True},  # a normal template brain; a sagittal slice shows the face
    )


def _mni_def(plane: str) -> BackgroundDef:
    @functools.lru_cache(maxsize=VIEW_CACHE)
    def load(view: int) -> Background:
        return brain_view(mni_volume(), f"mni152-{plane}", plane, view, source="sample/nilearn-mni152",
                          license="BSD-3-Clause (nilearn); MNI ICBM152 2009 template terms (free use, cite Fonov 2011)",
                          patient_id="mni152-2009-template", max_structures=2)

    return BackgroundDef(key=f"mni152-{plane}", views=lambda: N_SLICES, load=load, weight=1.5, priors=True)


def _colin_def(plane: str) -> BackgroundDef:
    @functools.lru_cache(maxsize=VIEW_CACHE)
    def load(view: int) -> Background:
        return brain_view(colin_volume(), f"colin27-{plane}", plane, view, source="sample/mricron-colin27-aal",
                          license="BSD-3-Clause (Debian mricron-data); Colin27 (Holmes 1998) and AAL "
                                  "(Tzourio-Mazoyer 2002) upstream terms; not redistributed",
                          patient_id="colin27", max_structures=5)

    return BackgroundDef(
        key=f"colin27-{plane}", views=lambda: N_SLICES if mricron_available() else 0, load=load, weight=1.0,
        unavailable_reason=lambda: None if mricron_available() else "mricron-data not installed", priors=True,
    )


for _plane in PLANES:
    register_background(_mni_def(_plane))
    register_background(_colin_def(_plane))
