"""The standard display orientation of a DICOM image, read from the file's own tags (issue 40).

A DICOM stores its rows and columns in whatever direction the device wrote them; the file says which
(``ImageOrientationPatient``: the patient directions of a row and a column, in the LPS frame;
``PatientOrientation``: the same as letters, for a projection radiograph). A radiologist reads the image in the
standard display: the patient's right on the viewer's left in an axial or coronal slice and a frontal radiograph,
the head up in a coronal or sagittal slice and a radiograph, anterior on the left of a sagittal slice, anterior at
the top of an axial slice. :func:`display_ops` reads the transform that brings the stored pixels there (a
transpose, a left-right and an up-down mirror) and :func:`to_display` applies it; every DICOM read (the ``dicom``
reader, the readers of public DICOM datasets, the sample's DICOM backgrounds) passes its pixels, and every mask
drawn on the stored grid (an overlay, a SEG frame), through both. A file that says nothing of its orientation,
or says something no convention fixes (a lateral or mammographic projection, a row along the body's axis of an
oblique slice), is shown as stored: unknown is not guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

TRANSPOSE, FLIP_LR, FLIP_UD = "transpose", "flip_lr", "flip_ud"
# the direction (LPS axis, sign) a row and a column of the standard display run, per plane (its normal's axis)
_STANDARD: dict[int, tuple[tuple[int, int], tuple[int, int]]] = {
    2: ((0, 1), (1, 1)),    # axial: rows toward the patient's left (+x), columns toward posterior (+y)
    1: ((0, 1), (2, -1)),   # coronal: rows toward the patient's left, columns toward the feet (-z)
    0: ((1, 1), (2, -1)),   # sagittal: rows toward posterior (anterior on the left), columns toward the feet
}
# PatientOrientation letters (DICOM C.7.6.1.1.1) of a projection radiograph's standard display: rows toward the
# patient's left, columns toward the feet
_OPPOSITE = {"L": "R", "R": "L", "H": "F", "F": "H", "A": "P", "P": "A"}


def _floats(values: Any, n: int) -> list[float] | None:
    try:
        out = [float(v) for v in values]
    except (TypeError, ValueError):
        return None
    return out if len(out) == n and all(np.isfinite(out)) else None


def ops_from_iop(iop: Sequence[Any] | None) -> tuple[str, ...]:
    """The transform (ops in order) from the stored grid to the standard display for ``ImageOrientationPatient``
    (row and column direction cosines); () where it is missing, malformed or its row and column do not lie along
    the plane's display axes."""
    v = _floats(iop, 6) if iop is not None else None
    if v is None:
        return ()
    r, c = np.array(v[:3]), np.array(v[3:])
    normal = np.abs(np.cross(r, c))
    if not normal.any():
        return ()
    (row_axis, row_sign), (col_axis, col_sign) = _STANDARD[int(np.argmax(normal))]
    ops: list[str] = []
    if int(np.argmax(np.abs(r))) == col_axis and int(np.argmax(np.abs(c))) == row_axis:
        ops.append(TRANSPOSE)
        r, c = c, r
    if int(np.argmax(np.abs(r))) != row_axis or int(np.argmax(np.abs(c))) != col_axis:
        return ()
    if np.sign(r[row_axis]) != row_sign:
        ops.append(FLIP_LR)
    if np.sign(c[col_axis]) != col_sign:
        ops.append(FLIP_UD)
    return tuple(ops)


def ops_from_patient_orientation(po: Sequence[Any] | str | None) -> tuple[str, ...]:
    """The transform for ``PatientOrientation`` (the patient direction of a row and of a column, e.g. ``L\\F``) of
    a frontal projection (a row along left-right, a column along head-feet, either way round); () for any other
    (a lateral or mammographic projection has no left-right row) or a missing or malformed value."""
    if po is None:
        return ()
    parts = po.split("\\") if isinstance(po, str) else [str(p) for p in po]
    if len(parts) != 2 or not all(parts):
        return ()
    row, col = (p.strip().upper()[:1] for p in parts)
    ops: list[str] = []
    if row in "HF" and col in "LR":
        ops.append(TRANSPOSE)
        row, col = col, row
    if row not in ("L", "R") or col not in ("H", "F"):
        return ()
    if row == "R":
        ops.append(FLIP_LR)
    if col == "H":
        ops.append(FLIP_UD)
    return tuple(ops)


def display_ops(ds: Any, iop: Sequence[Any] | None = None) -> tuple[str, ...]:
    """The transform from a DICOM's stored pixels to the standard display, from its own tags: ``iop`` (a frame's
    ``ImageOrientationPatient`` from its functional groups) or the file's ``ImageOrientationPatient``, else its
    ``PatientOrientation``; () where neither says (shown as stored)."""
    iop = iop if iop is not None else ds.get("ImageOrientationPatient")
    if iop is not None:
        return ops_from_iop(iop)
    po = ds.get("PatientOrientation")
    return ops_from_patient_orientation(getattr(po, "value", po))


def to_display(arr: np.ndarray, ops: Sequence[str]) -> np.ndarray:
    """``arr`` (rows x columns [x channels]) with ``ops`` applied in order (a contiguous copy where any applies)."""
    out = arr
    for op in ops:
        if op == TRANSPOSE:
            out = np.swapaxes(out, 0, 1)
        elif op == FLIP_LR:
            out = out[:, ::-1]
        elif op == FLIP_UD:
            out = out[::-1]
        else:
            raise ValueError(f"unknown display op {op!r}")
    return np.ascontiguousarray(out) if ops else arr


def box_to_display(box: Sequence[float], ops: Sequence[str], width: int,
                   height: int) -> tuple[float, float, float, float]:
    """A box ``(x1, y1, x2, y2)`` drawn on the stored grid (``width`` x ``height``; a label table's box on the
    file's pixels) in the standard display, through the same ``ops`` as the pixels."""
    x1, y1, x2, y2 = (float(v) for v in box)
    w, h = float(width), float(height)
    for op in ops:
        if op == TRANSPOSE:
            x1, y1, x2, y2, w, h = y1, x1, y2, x2, h, w
        elif op == FLIP_LR:
            x1, x2 = w - x2, w - x1
        elif op == FLIP_UD:
            y1, y2 = h - y2, h - y1
        else:
            raise ValueError(f"unknown display op {op!r}")
    return (x1, y1, x2, y2)
