"""Patient sex and age as every reader stores them in ``Case.meta`` and every slice reads them back.

Datasets spell these differently (NIH ChestX-ray14 ``M``/``F`` under ``Patient Gender`` or ``Patient Sex``;
DICOM ``PatientSex`` ``M``/``F``/``O`` and ``PatientAge`` ``058Y``; ISIC ``male``/``female`` and
``age_approx``): :func:`demographic_meta` is the one place a reader turns its raw values into
``meta["sex"]`` (``F``, ``M`` or ``other``) and ``meta["age"]`` (years, a float), and :func:`sex_of` /
:func:`age_of` read them back (also from benches built before the values were normalised). A value that
cannot be read is left out (a slice counts it as ``missing``), never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

SEX_VALUES = ("F", "M", "other")
_SEX = {"f": "F", "female": "F", "woman": "F", "w": "F", "m": "M", "male": "M", "man": "M",
        "o": "other", "other": "other", "x": "other", "intersex": "other"}
_AGE = re.compile(r"^\s*(\d{1,3}(?:\.\d+)?)\s*([YMWD]?)\s*$", re.IGNORECASE)
_AGE_UNIT_YEARS = {"": 1.0, "y": 1.0, "m": 1 / 12, "w": 7 / 365.25, "d": 1 / 365.25}
MAX_AGE = 130.0


def sex_of(value: Any) -> str | None:
    """``F``, ``M`` or ``other`` from a dataset's spelling; None when unknown or unreadable."""
    if value is None:
        return None
    return _SEX.get(str(value).strip().lower())


def age_of(value: Any) -> float | None:
    """Age in years from a number, ``"58"``, ``"58.5"`` or a DICOM age string (``058Y``, ``006M``, ``010W``,
    ``003D``); None when unknown, unreadable or outside 0-130."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        years = float(value)
    else:
        m = _AGE.match(str(value))
        if m is None:
            return None
        years = float(m.group(1)) * _AGE_UNIT_YEARS[m.group(2).lower()]
    return round(years, 4) if 0 <= years <= MAX_AGE else None


def demographic_meta(*, sex: Any = None, age: Any = None) -> dict[str, Any]:
    """The ``Case.meta`` entries of a patient's sex and age (only those that could be read)."""
    out: dict[str, Any] = {}
    if (s := sex_of(sex)) is not None:
        out["sex"] = s
    if (a := age_of(age)) is not None:
        out["age"] = a
    return out


def first_present(row: Mapping[str, Any], *columns: str) -> Any:
    """The first non-empty value among ``columns`` of a table row (a header spelled differently across
    releases of a dataset: NIH ChestX-ray14's ``Patient Gender`` / ``Patient Sex``)."""
    for c in columns:
        v = row.get(c)
        if v is not None and str(v).strip():
            return v
    return None
