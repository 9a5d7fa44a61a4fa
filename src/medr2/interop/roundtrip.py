"""The columns every exporter adds so that importing an export gives back the very same items.

``medr2_item`` holds the Item as canonical JSON; ``medr2_case`` its Case (mask paths removed, as
masks are not exported). Importers that find these columns restore the records exactly and check
that the embedded images have the recorded identity (medr2.images: of their pixels).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.interop.common import ImportBuilder
from medr2.records import Case, Item, canonical_json, regions_by_kind

ITEM_COL = "medr2_item"
CASE_COL = "medr2_case"
CASE_IMAGE_COL = "medr2_case_image"  # the case's own image, only where the item shows another one


def case_for_export(case: Case) -> str:
    d = case.model_dump(mode="json")
    for kind in ("structures", "findings"):
        for r in d[kind]:
            r["mask"] = None
    return canonical_json(d)


def item_for_export(item: Item) -> str:
    return canonical_json(item.model_dump(mode="json"))


def restore(b: ImportBuilder, row: dict[str, Any], image: bytes | None, *, file: str, record: str,
            case_image: bytes | None = None, images: Sequence[bytes | None] = ()) -> Item:
    """Restore one exported (item, case) row into the builder, checking the image hash and that every
    image path the records name is the bench path of an image embedded in the row (``images/<sha>.png``):
    a path edited to point anywhere else (``../../etc/hostname``) is refused here, at import time. ``images``:
    the embedded images of an item of several, in its order (``image`` may then be left out: the current one)."""
    col = ITEM_COL
    try:
        item = Item.model_validate(jsonsafe.loads(row[ITEM_COL], file=file, record=record, field=ITEM_COL))
        col = CASE_COL
        case = Case.model_validate(jsonsafe.loads(row[CASE_COL], file=file, record=record, field=CASE_COL)) \
            if row.get(CASE_COL) else None
    except BadInput as e:
        raise BadInput(f"invalid embedded record: {e.reason}", file=file, record=record, field=col) from e
    except (ValidationError, TypeError, ValueError) as e:
        raise BadInput(f"invalid embedded record: {str(e)[:500]}", file=file, record=record, field=col) from e
    _restore_images(b, item, images, file=file, record=record)
    if image is None and images:
        image = images[next(j for j, r in enumerate(item.images) if r.role == "current")]
    if item.image and image is None:
        raise BadInput("the item's image is not embedded", file=file, record=record, field="image")
    if image is not None:
        ref = b.images.put_array(_decode(image, file, record))
        if item.image is not None and ref.sha256 != item.image_sha256:
            raise BadInput(_mismatch("embedded image", image, item.image_sha256), file=file, record=record,
                           field="image")
        if item.image is not None and item.image != ref.path:
            raise BadInput(f"image path {_shown(item.image)} is not the path of the embedded image ({ref.path})",
                           file=file, record=record, field=f"{ITEM_COL}.image")
    if case is not None:
        if case_image is not None:
            ref = b.images.put_array(_decode(case_image, file, record))
            if ref.sha256 != case.image_sha256:
                raise BadInput(_mismatch("embedded case image", case_image, case.image_sha256), file=file,
                               record=record, field=CASE_IMAGE_COL)
            stored: str | None = ref.path
        else:  # the case shows the item's own image
            stored = item.image if image is not None else None
            if stored is not None and case.image_sha256 != item.image_sha256:
                raise BadInput("the case's recorded sha256 is not that of the embedded image", file=file,
                               record=record, field=f"{CASE_COL}.image_sha256")
        if case.image != stored:
            raise BadInput(f"case image path {_shown(case.image)} is not the path of an image embedded in the row",
                           file=file, record=record, field=f"{CASE_COL}.image")
        if item.case_id != case.case_id:
            raise BadInput(f"the item's case_id {item.case_id[:80]!r} is not the embedded case's {case.case_id[:80]!r}",
                           file=file, record=record, field=f"{ITEM_COL}.case_id")
        for kind, recs in regions_by_kind(case.structures, case.findings):
            for j, r in enumerate(recs):
                if r.mask is not None:  # exports carry no masks: a path here was put in by hand
                    raise BadInput("exported cases carry no masks", file=file, record=record,
                                   field=f"{CASE_COL}.{kind}[{j}].mask")
    elif item.case_id not in b.cases:
        raise BadInput("the item's case is neither embedded in the row nor imported before it", file=file,
                       record=record, field=CASE_COL)
    if case is not None and case.case_id not in b.cases:
        b.cases[case.case_id] = case
    if item.item_id in b.items:
        raise BadInput("duplicate item_id", file=file, record=record, field="item_id")
    b.items[item.item_id] = item
    return item


def _restore_images(b: ImportBuilder, item: Item, images: Sequence[bytes | None], *, file: str,
                    record: str) -> None:
    """The embedded images of an item of several (issue 49): as many as it shows, each of its recorded identity,
    each path the bench path of its embedded image; none for an item of one image."""
    if len(images) != (len(item.images) if len(item.images) > 1 else 0):
        raise BadInput(f"{len(images)} images embedded in the row's images, the item shows {len(item.images)}",
                       file=file, record=record, field="images")
    if len(images) and sum(r.role == "current" for r in item.images) != 1:
        raise BadInput("the item's images hold no single current image", file=file, record=record,
                       field=f"{ITEM_COL}.images")
    for j, (ref, data) in enumerate(zip(item.images, images, strict=True)):
        if data is None:
            raise BadInput("image not embedded", file=file, record=record, field=f"images[{j}]")
        stored = b.images.put_array(_decode(data, file, record))
        if stored.sha256 != ref.sha256:
            raise BadInput(_mismatch("embedded image", data, ref.sha256), file=file, record=record,
                           field=f"images[{j}]")
        if ref.path != stored.path:
            raise BadInput(f"image path {_shown(ref.path)} is not the path of the embedded image ({stored.path})",
                           file=file, record=record, field=f"{ITEM_COL}.images[{j}].path")


def _shown(path: str, n: int = 120) -> str:
    return repr(path if len(path) <= n else path[:n] + "...")


def _mismatch(what: str, data: bytes, recorded: str | None) -> str:
    """Why an embedded image does not have its recorded identity; an export of a format 1/2 bench (images
    named by their PNG bytes) is named as such, not checked by the other rule."""
    from medr2.images import CURRENT_IDENTITY, PNG_BYTES

    if recorded and PNG_BYTES.of_bytes(data, file=what) == recorded:
        return (f"{what} is recorded by the sha256 of its PNG bytes (an export of a format 1/2 bench); an import "
                f"keeps ids only under the bench's own rule ({CURRENT_IDENTITY.name}): export it from a format "
                f"{CURRENT_IDENTITY.versions[0]} bench, or import it without its medr2 columns")
    return f"{what} does not match the recorded sha256 ({CURRENT_IDENTITY.name})"


def _decode(data: bytes, file: str, record: str) -> Any:
    import io

    from medr2.images import decode_image

    try:
        return decode_image(io.BytesIO(data), file)
    except BadInput as e:
        raise BadInput(e.reason, file=file, record=record, field="image") from e
