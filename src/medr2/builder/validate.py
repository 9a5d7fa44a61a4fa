"""Checks a realized Case before it enters a bench; any problem is a BadInput naming the field."""

from __future__ import annotations

import math
from pathlib import Path

from PIL import Image

from medr2.errors import BadInput
from medr2.images import IdentityRule, open_checked, resolve_inside
from medr2.records import Case, check_box, regions_by_kind
from medr2.tasks import vocab

LATERALITY = ("left", "right", "bilateral", "midline")
_CHOICES: dict[str, tuple[str, ...]] = {
    "quality": vocab.QUALITY,
    "artefact": vocab.ARTEFACTS,
    "malignancy": vocab.MALIGNANCY,
}


def _bad(case: Case, field: str, reason: str, file: str | None = None) -> BadInput:
    return BadInput(reason, file=file or case.image, record=case.case_id, field=field)


def validate_case(case: Case, root: Path, identity: IdentityRule) -> None:
    """Image present with its recorded identity (under ``identity``, the rule it was stored by) and size,
    boxes inside the image, known labels."""
    try:
        path = resolve_inside(root, case.image)
    except BadInput as e:
        raise _bad(case, "image", e.reason) from e
    if not path.is_file():
        raise _bad(case, "image", "image file is missing")
    if identity.of_file(path) != case.image_sha256:
        raise _bad(case, "image_sha256", f"image does not match the recorded sha256 ({identity.name})")
    try:
        with open_checked(path) as im:
            size = im.size
            im.verify()
    except BadInput as e:
        raise _bad(case, "image", e.reason) from e
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise _bad(case, "image", f"cannot decode image: {e}") from e
    if size != (case.width, case.height):
        raise _bad(case, "width", f"recorded size {case.width}x{case.height} but image is {size[0]}x{size[1]}")
    for key, allowed in _CHOICES.items():
        value = getattr(case, key)
        if value is not None and vocab.norm(value) not in {vocab.norm(a) for a in allowed}:
            raise _bad(case, key, f"unknown label {value!r}; expected one of {', '.join(allowed)}")
    if case.pixel_spacing_mm is not None and not (math.isfinite(case.pixel_spacing_mm) and case.pixel_spacing_mm > 0):
        raise _bad(case, "pixel_spacing_mm", "must be a positive number")
    for kind, records in regions_by_kind(case.structures, case.findings):
        for j, r in enumerate(records):
            where = f"{kind}[{j}]"
            name = getattr(r, "name", None) or getattr(r, "label", None)
            if not name or not str(name).strip():
                raise _bad(case, f"{where}.{'name' if kind == 'structures' else 'label'}", "empty label")
            try:
                check_box(r.box, case.width, case.height)
            except ValueError as e:
                raise _bad(case, f"{where}.box", str(e)) from e
            if r.mask:
                try:
                    mpath = resolve_inside(root, r.mask)
                except BadInput as e:
                    raise _bad(case, f"{where}.mask", e.reason, file=r.mask) from e
                if not mpath.is_file():
                    raise _bad(case, f"{where}.mask", "mask file is missing", file=r.mask)
    for j, f in enumerate(case.findings):
        size_mm = f.attributes.get("size_mm")
        if size_mm is not None and not (isinstance(size_mm, int | float) and math.isfinite(size_mm) and size_mm > 0):
            raise _bad(case, f"findings[{j}].attributes.size_mm", f"size_mm must be a positive number, got {size_mm!r}")
        lat = f.attributes.get("laterality")
        if lat is not None and str(lat).lower() not in LATERALITY:
            raise _bad(case, f"findings[{j}].attributes.laterality",
                       f"unknown laterality {lat!r}; expected one of {', '.join(LATERALITY)}")
