"""SLAKE's per-image annotations: ``imgs/xmlabN/detection.json`` (organ boxes) and ``mask.png`` (the
semantic mask), decoded to organ names with the dataset's ``mask.txt`` (its "ID mapping dictionary for
masks", at the dataset root).

``detection.json`` is a list of one-key objects ``{"<organ>": [x, y, w, h]}`` in pixels of ``source.jpg``.
The syntax of ``mask.txt`` is read as either a dictionary (JSON or Python literal) or one pair per line
(``value name`` or ``name value``, separated by ``:``, ``=``, ``,``, a tab or spaces), in either
direction; a ``mask.txt`` that is none of these is refused (quarantined), and the masks then stay
undecoded: no organ name is ever guessed for a mask value.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import numpy as np

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.images import ImageStore, resolve_inside
from medr2.records import Structure, check_box
from medr2.sources.common import load_label_map, mask_box, put_mask
from medr2.textfile import read_text

MASK_TXT = "mask.txt"
_PAIR = re.compile(r"^\s*(.+?)\s*(?:[:=,\t]|\s)\s*(.+?)\s*$")


def _pairs_to_map(pairs: list[tuple[Any, Any]]) -> dict[int, str] | None:
    out: dict[int, str] = {}
    for a, b in pairs:
        for value, name in ((a, b), (b, a)):
            v, n = str(value).strip().strip("'\""), str(name).strip().strip("'\"")
            if re.fullmatch(r"\d+", v) and n and not re.fullmatch(r"\d+", n):
                out[int(v)] = n
                break
        else:
            return None
    return out or None


def parse_mask_txt(text: str, file: str) -> dict[int, str]:
    """mask value -> organ name, from the text of SLAKE's ``mask.txt``."""
    body = text.strip()
    for loads in (jsonsafe.loads, ast.literal_eval):
        try:
            data = loads(body)
        except (BadInput, ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(data, dict) and (m := _pairs_to_map(list(data.items()))):
            return m
    lines = [ln for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    pairs: list[tuple[Any, Any]] = [(pm.group(1), pm.group(2)) for ln in lines if (pm := _PAIR.match(ln))]
    if len(pairs) == len(lines) and (m2 := _pairs_to_map(pairs)):
        return m2
    raise BadInput("unrecognised mask.txt: expected a dictionary or one 'value name' pair per line; the masks "
                   "stay undecoded", file=file, record=MASK_TXT, field=MASK_TXT)


def load_mask_names(root: Path) -> dict[int, str] | None:
    p = root / MASK_TXT
    if not p.is_file() and not p.is_symlink():
        return None
    try:
        real = resolve_inside(root, MASK_TXT)  # a symlink leading out of the dataset folder is refused
    except BadInput as e:
        raise BadInput(e.reason, file=str(p), record=MASK_TXT, field=MASK_TXT) from e
    if not real.is_file():
        raise BadInput("not a file", file=str(p), record=MASK_TXT, field=MASK_TXT)
    try:
        text = read_text(real, what=MASK_TXT)
    except BadInput as e:
        raise BadInput(e.reason, file=str(p), field=MASK_TXT) from e
    return parse_mask_txt(text, str(p))


def detection_boxes(det: Path, w: int, h: int, record: str) -> list[Structure]:
    """The organ boxes of ``detection.json`` (``[{"Liver": [x, y, w, h]}, ...]``) as Structures."""
    try:
        raw: Any = jsonsafe.load_file(det, record=record, field="detection")
    except BadInput as e:
        raise BadInput(f"cannot read detection.json: {e.reason}", file=str(det), record=record,
                       field="detection") from e
    entries = raw if isinstance(raw, list) else [raw]
    out = []
    for j, ent in enumerate(entries):
        if not isinstance(ent, dict):
            raise BadInput("detection entries must be objects", file=str(det), record=record, field=f"[{j}]")
        for name, box in ent.items():
            try:
                if not isinstance(box, list):
                    raise TypeError("expected [x, y, w, h]")
                x, y, bw, bh = (float(v) for v in box)
                xyxy = (max(x, 0.0), max(y, 0.0), min(x + bw, float(w)), min(y + bh, float(h)))
                check_box(xyxy, w, h)
            except (TypeError, ValueError, OverflowError) as e:
                raise BadInput(f"bad box {str(box)[:80]}: {e}", file=str(det), record=record,
                               field=f"[{j}].{name}") from e
            out.append(Structure(name=str(name), box=xyxy, area_px=(xyxy[2] - xyxy[0]) * (xyxy[3] - xyxy[1])))
    return out


def read_mask(path: Path, w: int, h: int, record: str) -> np.ndarray:
    """``mask.png`` as raw values (single channel; a grey RGB(A) file is read from its first channel)."""
    arr = load_label_map(path, record=record, grey_rgb=True)
    if arr.shape != (h, w):
        raise BadInput(f"mask is {arr.shape[1]}x{arr.shape[0]}, image is {w}x{h}", file=str(path), record=record,
                       field="mask")
    return arr


def mask_structures(images: ImageStore, mask: np.ndarray, names: dict[int, str]) -> list[Structure]:
    """One Structure (mask + box + area) per named value present in the mask."""
    out = []
    for v in sorted(int(x) for x in np.unique(mask) if x != 0):
        if v not in names:
            continue
        m = mask == v
        box = mask_box(m)
        if box is not None:
            out.append(Structure(name=names[v], box=box, mask=put_mask(images, m).path, area_px=float(m.sum())))
    return out


def merge(boxes: list[Structure], masks: list[Structure]) -> list[Structure]:
    """Detection boxes, with the mask of the same organ attached where that organ has exactly one box;
    mask-only organs added."""
    by_name: dict[str, list[int]] = {}
    for i, s in enumerate(boxes):
        by_name.setdefault(s.name.lower(), []).append(i)
    out = list(boxes)
    for m in masks:
        idx = by_name.get(m.name.lower(), [])
        if len(idx) == 1:
            out[idx[0]] = out[idx[0]].model_copy(update={"mask": m.mask, "area_px": m.area_px})
        elif not idx:
            out.append(m)
    return out


def evidence(structures: list[Structure], *texts: str) -> list[dict[str, Any]]:
    """The structures a question or answer names (whole words, case-insensitive), as ``{name, box}``."""
    hay = " ".join(texts).lower()
    return [{"name": s.name, "box": list(s.box)} for s in structures
            if re.search(rf"(?<![a-z]){re.escape(s.name.lower())}(?![a-z])", hay)]
