"""Every DICOM image is shown in the standard display its own tags say (issue 40, kind 4: images shown mirrored or
upside down before any flip). For every orientation a file may declare (``ImageOrientationPatient`` of an axial,
coronal and sagittal slice with rows and columns either way and either order; ``PatientOrientation`` of a frontal
projection), a file is written with pydicom whose stored pixels are the standard view as that orientation stores
it, and each DICOM read path (the ``dicom`` reader with its SEG masks, the public readers' ``decode_dicom``, the
sample's backgrounds) must show the standard view. The stored pixels are computed here from the geometry (where each
stored pixel lies in the patient), not from the module under test.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from medr2.images import load_image
from medr2.sources.base import get_source
from tests.interop_fixtures import CR_IMAGE, MR_IMAGE, realize_all, write_dicom_image, write_dicom_seg

# LPS patient axes of the DICOM letters: L(eft) +x, P(osterior) +y, H(ead) +z
AXES = {"L": (0, 1), "R": (0, -1), "P": (1, 1), "A": (1, -1), "H": (2, 1), "F": (2, -1)}
# the standard display (the radiologist's convention): the patient direction a row and a column run in
STANDARD = {"axial": ("L", "P"), "coronal": ("L", "F"), "sagittal": ("P", "F")}
PAIRS = {"axial": ("LR", "AP"), "coronal": ("LR", "HF"), "sagittal": ("AP", "HF")}
H, W = 12, 17  # not square: a transposed file is stored 17 x 12


def _vec(letter: str) -> np.ndarray:
    v = np.zeros(3)
    axis, sign = AXES[letter]
    v[axis] = sign
    return v


def standard_view() -> np.ndarray:
    """An image with no symmetry: distinct levels, a marker in the top-left corner (the patient's right)."""
    img = (np.add.outer(np.arange(H) // 3 * 4, np.arange(W) // 5) * 150 + 100).astype(np.uint16)  # 16 blocks
    img[1:4, 1:3] = 3000
    return img


def stored(view: np.ndarray, plane: str, row: str, col: str) -> np.ndarray:
    """The pixels a file whose rows run toward ``row`` and columns toward ``col`` stores for ``view``: the stored
    pixel (i, j) lies at ``i * col + j * row`` in the patient, which the standard display shows at the pixel whose
    position along its own row and column directions it is (shifted to start at 0)."""
    sr, sc = (_vec(d) for d in STANDARD[plane])
    r, c = _vec(row), _vec(col)
    n_rows = H if abs(c) @ abs(sc) else W
    n_cols = W if abs(r) @ abs(sr) else H
    i, j = np.arange(n_rows)[:, None], np.arange(n_cols)[None, :]
    x = i * (c @ sr) + j * (r @ sr)
    y = i * (c @ sc) + j * (r @ sc)
    return view[(y - y.min()).astype(int), (x - x.min()).astype(int)]


def _orientations() -> list[tuple[str, str, str]]:
    out = []
    for plane, (a, b) in PAIRS.items():
        for ra, cb in itertools.product(a, b):
            out += [(plane, ra, cb), (plane, cb, ra)]  # rows along either axis
    return out


ORIENTATIONS = _orientations()  # 8 per plane: 24, the standard one of each plane among them


def _ranks(a: np.ndarray) -> np.ndarray:
    """The image as ranks of its levels (windowing to 8 bits keeps their order)."""
    gray = a if a.ndim == 2 else a[..., 0]
    return np.unique(gray, return_inverse=True)[1].reshape(gray.shape)


def _iop(row: str, col: str) -> list[float]:
    return [float(v) for v in (*_vec(row), *_vec(col))]


@pytest.mark.parametrize(("plane", "row", "col"), ORIENTATIONS)
def test_dicom_reader_shows_the_standard_view(tmp_path: Path, plane: str, row: str, col: str) -> None:
    """The ``dicom`` reader: the image, and a SEG mask drawn on the stored grid, in the standard display."""
    view = standard_view()
    px = stored(view, plane, row, col)
    d = tmp_path / "dcm"
    uid = write_dicom_image(d / "img.dcm", px, sop_class=MR_IMAGE, Modality="MR", PatientID="P",
                            ImageOrientationPatient=_iop(row, col), PixelSpacing=[1.0, 1.0])
    marker = stored((view == 3000).astype(np.uint16), plane, row, col) > 0
    write_dicom_seg(d / "seg.dcm", uid, marker, "marker", "Morphologically Altered Structure")
    cases, errors = realize_all(get_source(f"dicom:{d}"), tmp_path / "b")
    assert not errors and len(cases) == 1
    shown = load_image(tmp_path / "b" / cases[0].image)
    assert np.array_equal(_ranks(shown), _ranks(view)), (plane, row, col)
    (finding,) = cases[0].findings
    assert finding.box == (1.0, 1.0, 3.0, 4.0)  # the marker, where the standard view shows it


@pytest.mark.parametrize(("row", "col"), [(r, c) for r, c in itertools.product("LR", "HF")] +
                         [(c, r) for r, c in itertools.product("LR", "HF")])
def test_patient_orientation_of_a_radiograph(tmp_path: Path, row: str, col: str) -> None:
    """A projection radiograph says its orientation with ``PatientOrientation`` (``R\\F``: rows toward the
    patient's right, a mirrored frontal view); the public readers' decoder shows the standard view, and maps a label
    table's box drawn on the stored pixels with it."""
    from medr2.sources.common import DataRoot
    from medr2.sources.datasets._base import decode_dicom

    view = standard_view()
    px = stored(view, "coronal", row, col)
    write_dicom_image(tmp_path / "cr.dcm", px, sop_class=CR_IMAGE, Modality="CR", PatientID="P",
                      ViewPosition="PA", PatientOrientation=[row, col], ImagerPixelSpacing=[0.2, 0.2])
    dcm = decode_dicom(DataRoot(tmp_path, {}, None), "cr.dcm", record="cr", file="cr.dcm")
    assert np.array_equal(_ranks(dcm.pixels), _ranks(view)), (row, col)
    ys, xs = np.nonzero(stored((view == 3000).astype(np.uint16), "coronal", row, col))
    box = (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))
    assert dcm.box(box) == (1.0, 1.0, 3.0, 4.0)


@pytest.mark.parametrize(("plane", "row", "col"), ORIENTATIONS)
def test_sample_backgrounds_read_the_standard_view(tmp_path: Path, plane: str, row: str, col: str) -> None:
    """The sample's DICOM backgrounds read their pixels (values, overlays) through the same rule."""
    import pydicom

    from medr2.sources.sample.bg_dicom import modality_values

    view = standard_view()
    write_dicom_image(tmp_path / "bg.dcm", stored(view, plane, row, col), sop_class=MR_IMAGE, Modality="MR",
                      PatientID="P", ImageOrientationPatient=_iop(row, col))
    vals = modality_values(pydicom.dcmread(tmp_path / "bg.dcm"))
    assert np.array_equal(_ranks(vals), _ranks(view)), (plane, row, col)


def test_unknown_orientation_is_shown_as_stored(tmp_path: Path) -> None:
    """A file that says nothing of its orientation, or a projection no convention fixes (a lateral view: rows
    toward anterior), is shown as stored: nothing is guessed."""
    from medr2.imaging.orientation import ops_from_iop, ops_from_patient_orientation

    assert ops_from_patient_orientation(["A", "F"]) == () and ops_from_patient_orientation("") == ()
    assert ops_from_patient_orientation(None) == () and ops_from_iop(None) == () and ops_from_iop([0] * 6) == ()
    px = standard_view()[::-1]
    write_dicom_image(tmp_path / "d" / "x.dcm", px, sop_class=CR_IMAGE, Modality="CR", PatientID="P")
    cases, _ = realize_all(get_source(f"dicom:{tmp_path / 'd'}"), tmp_path / "b")
    assert np.array_equal(_ranks(load_image(tmp_path / "b" / cases[0].image)), _ranks(px))


def test_bundled_backgrounds_declare_their_orientation() -> None:
    """The two bundled backgrounds stored in a non-standard orientation say so in their own tags: ``RG3_UNCR.dcm``
    (cr-tibia) mirrored (``PatientOrientation`` R\\F), ``explicit_VR-UN.dcm`` (ct-abdomen) upside down
    (``ImageOrientationPatient`` 1\\0\\0\\0\\-1\\0); the others are standard."""
    import pydicom

    from medr2.imaging.orientation import FLIP_LR, FLIP_UD, display_ops
    from medr2.sources.sample.bg_dicom import dicom_test_file

    want = {"RG3_UNCR.dcm": (FLIP_LR,), "explicit_VR-UN.dcm": (FLIP_UD,), "RG1_UNCR.dcm": (), "MR2_UNCR.dcm": (),
            "693_UNCR.dcm": (), "MR-SIEMENS-DICOM-WithOverlays.dcm": (), "US1_UNCR.dcm": (), "JPEG2000_UNC.dcm": ()}
    found = 0
    for name, ops in want.items():
        p = dicom_test_file(name)
        if p is None:
            continue
        assert display_ops(pydicom.dcmread(p, stop_before_pixels=True)) == ops, name
        found += 1
    if not found:
        pytest.skip("pydicom-data is not installed")
