"""Boxes: parsing from model text, conversion from the adapter's convention to original pixels, IoU.

The box space is never guessed from magnitudes: it comes from ``medr2.models.base.BoxConvention``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from medr2.errors import BadInput
from medr2.models.base import BoxConvention
from medr2.models.presets import box_from_model
from medr2.records import Box
from medr2.score.extract.common import ANSWER_MARKER, strip_reasoning

_NUM = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_SEP = r"\s*[,;\s]\s*"
_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Qwen-style special tokens: <|box_start|>(x1,y1),(x2,y2)<|box_end|>
    re.compile(r"<\|box_start\|>\s*\(?\s*" + _NUM + _SEP + _NUM + r"\s*\)?\s*[,;\s]?\s*\(?\s*" + _NUM + _SEP + _NUM
               + r"\s*\)?\s*<\|box_end\|>"),
    # <box>...</box> with 4 numbers in any bracket layout
    re.compile(r"<box>\s*[\[(]*\s*" + _NUM + r"\s*[\])]*" + _SEP + r"[\[(]*\s*" + _NUM + r"\s*[\])]*\s*[,;\s]\s*"
               r"[\[(]*\s*" + _NUM + r"\s*[\])]*" + _SEP + r"[\[(]*\s*" + _NUM + r"\s*[\])]*\s*</box>"),
    # two corner points: (x1, y1), (x2, y2) / (x1,y1) to (x2,y2)
    re.compile(r"[(\[]\s*" + _NUM + r"\s*,\s*" + _NUM + r"\s*[)\]][^\d()\[\]<>]{0,24}?[(\[]\s*" + _NUM + r"\s*,\s*"
               + _NUM + r"\s*[)\]]"),
    # a flat list or tuple of four numbers: [x1, y1, x2, y2]
    re.compile(r"[\[(]\s*" + _NUM + r"\s*,\s*" + _NUM + r"\s*,\s*" + _NUM + r"\s*,\s*" + _NUM + r"\s*[\])]"),
    # named coordinates: x1=.., y1=.., x2=.., y2=.. (also xmin/ymin/xmax/ymax)
    re.compile(r"(?i)\"?(?:x1|xmin|x_min|left)\"?\s*[:=]\s*" + _NUM
               + r"[^\d-]{1,12}?\"?(?:y1|ymin|y_min|top)\"?\s*[:=]\s*" + _NUM
               + r"[^\d-]{1,12}?\"?(?:x2|xmax|x_max|right)\"?\s*[:=]\s*" + _NUM
               + r"[^\d-]{1,12}?\"?(?:y2|ymax|y_max|bottom)\"?\s*[:=]\s*" + _NUM),
)


def _candidates(text: str) -> list[tuple[int, int, Box]]:
    found: list[tuple[int, int, Box]] = []
    for pat in _PATTERNS:
        for m in pat.finditer(text):
            if any(s <= m.start() and m.end() <= e for s, e, _ in found):
                continue  # already inside a more specific match
            vals = tuple(float(v) for v in m.groups())
            found.append((m.start(), m.end(), (vals[0], vals[1], vals[2], vals[3])))
    return sorted(found)


def parse_box(text: str) -> Box | None:
    """The one box the response states (raw numbers, in the adapter's space), or None.

    Boxes after the last explicit answer marker win; several different boxes without one are
    ambiguous (None). Corner order is normalised; a zero-area or non-finite box is None.
    """
    body = strip_reasoning(text)
    cands = _candidates(body)
    if not cands:
        return None
    markers = [m.end() for m in ANSWER_MARKER.finditer(body)]
    if markers:
        after = [c for c in cands if c[0] >= markers[-1]]
        if after:
            cands = after
    distinct = {c[2] for c in cands}
    if len(distinct) != 1:
        return None
    x1, y1, x2, y2 = distinct.pop()
    if not all(math.isfinite(v) for v in (x1, y1, x2, y2)):
        return None
    box = (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
    if box[2] - box[0] <= 0 or box[3] - box[1] <= 0:
        return None
    return box


def convention_from_json(data: Mapping[str, Any] | None) -> BoxConvention:
    """Rebuild a BoxConvention from its JSON form in a run manifest (``space``/``resize``/``params``)."""
    if not data:
        return BoxConvention()
    params = data.get("params") or ()
    params = tuple(sorted(params.items())) if isinstance(params, Mapping) else tuple((str(k), v) for k, v in params)
    return BoxConvention(space=data.get("space", "pixel"), resize=data.get("resize", "none"), params=params)


def to_original_pixels(box: Box, conv: BoxConvention, width: int, height: int) -> Box:
    """Convert a parsed box from the adapter's space to pixel xyxy of the image shown, clipped to it.

    The mapping is the one the adapters declare (``medr2.models.presets.box_from_model``)."""
    if conv.space not in ("pixel", "unit", "thousand"):
        raise BadInput(f"unknown box space {conv.space!r}", field="box_convention.space")
    x1, y1, x2, y2 = box_from_model(box, width, height, conv)
    x1, x2 = sorted((x1, x2))
    y1, y2 = sorted((y1, y2))
    return (min(max(x1, 0.0), width), min(max(y1, 0.0), height), min(max(x2, 0.0), width), min(max(y2, 0.0), height))


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two xyxy boxes (continuous coordinates); 0 when the union is empty."""
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    area_a = max(0.0, a[2] - a[0]) * max(0.0, a[3] - a[1])
    area_b = max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])
    union = area_a + area_b - inter
    return inter / union if union > 0 else 0.0


def format_box(box: Box) -> str:
    return json.dumps([round(v, 2) for v in box])
