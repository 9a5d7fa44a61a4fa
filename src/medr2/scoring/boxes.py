"""Boxes: parsing from model text, conversion from the adapter's convention to original pixels, IoU.

The box space is never guessed from magnitudes: it comes from ``medr2.models.base.BoxConvention``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from medr2.errors import BadInput
from medr2.models.base import BoxConvention
from medr2.models.presets import box_from_model, model_image_size
from medr2.records import Box
from medr2.scoring.extract.common import strip_reasoning
from medr2.scoring.extract.statements import answer_markers, normalise

_NUM = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
_N = _NUM + r"\s*(?:%|px)?"  # a number, optionally a percentage or "px"
_SEP = r"\s*[,;\s]\s*"
_FLAT = re.compile(r"[\[(]\s*" + _N + r"\s*,\s*" + _N + r"\s*,\s*" + _N + r"\s*,\s*" + _N + r"\s*[\])]")
_PT = r"[(\[]\s*" + _N + r"\s*,\s*" + _N + r"\s*[)\]]"
# a polygon: three or more points (its bounding box is the box)
_POLYGON = re.compile(r"(?:" + _PT.replace("(-?", "(?:-?") + r"\s*,?\s*){3,}")
_POINT = re.compile(_PT)
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # corners named in prose: "top-left corner at (x1, y1) ... bottom-right corner at (x2, y2)"
    ("xyxy", re.compile(r"(?i)(?:top|upper)[- ]left\b[^\d(\[]{0,40}?" + _PT + r"[^\d]{0,80}?(?:bottom|lower)[- ]right\b"
                        r"[^\d(\[]{0,40}?" + _PT)),
    # ranges in prose: "x from 120 to 200 and y from 80 to 150"
    ("xxyy", re.compile(r"(?i)\bx\s*(?:from|:|=|range|ranges\s+from|spans)?\s*" + _N + r"\s*(?:to|-|–|—)\s*" + _N
                        + r"[^\d]{1,24}?\by\s*(?:from|:|=|range|ranges\s+from|spans)?\s*" + _N
                        + r"\s*(?:to|-|–|—)\s*" + _N)),
    # centre and size in prose or keys: "center (x, y), size 40 x 30", {"cx": .., "cy": .., "w": .., "h": ..}
    ("cxcywh", re.compile(r"(?i)\bcent(?:er|re)(?:\s+point)?\s*(?:at|:|=|is)?\s*" + _PT + r"[^\d]{0,40}?"
                          r"(?:size|dimensions|width\s*(?:and|x|×)\s*height|w\s*x\s*h)\s*(?:of|:|=|is)?\s*\(?\s*"
                          + _N + r"\s*(?:x|×|by|,)\s*" + _N)),
    ("cxcywh", re.compile(r"(?i)\"?\b(?:cx|x_?c(?:enter)?|center_?x)\"?\s*[:=]\s*" + _N
                          + r"[^\d-]{1,12}?\"?\b(?:cy|y_?c(?:enter)?|center_?y)\"?\s*[:=]\s*" + _N
                          + r"[^\d-]{1,12}?\"?\b(?:w|width)\"?\s*[:=]\s*" + _N
                          + r"[^\d-]{1,12}?\"?\b(?:h|height)\"?\s*[:=]\s*" + _N)),
    # Qwen-style special tokens: <|box_start|>(x1,y1),(x2,y2)<|box_end|>
    ("xyxy", re.compile(r"<\|box_start\|>\s*\(?\s*" + _N + _SEP + _N + r"\s*\)?\s*[,;\s]?\s*\(?\s*" + _N + _SEP
                        + _N + r"\s*\)?\s*<\|box_end\|>")),
    # <box>...</box> with 4 numbers in any bracket layout
    ("xyxy", re.compile(r"<box>\s*[\[(]*\s*" + _N + r"\s*[\])]*" + _SEP + r"[\[(]*\s*" + _N + r"\s*[\])]*\s*[,;\s]"
                        r"\s*[\[(]*\s*" + _N + r"\s*[\])]*" + _SEP + r"[\[(]*\s*" + _N + r"\s*[\])]*\s*</box>")),
    # Gemini's native key: "box_2d": [ymin, xmin, ymax, xmax] (order from the convention, see ``_box_2d_order``)
    ("box_2d", re.compile(r"(?i)[\"']?\bbox_2d[\"']?\s*[:=]\s*" + _FLAT.pattern)),
    # two corner points: (x1, y1), (x2, y2) / (x1,y1) to (x2,y2)
    ("xyxy", re.compile(r"[(\[]\s*" + _N + r"\s*,\s*" + _N + r"\s*[)\]][^\d()\[\]<>]{0,24}?[(\[]\s*" + _N
                        + r"\s*,\s*" + _N + r"\s*[)\]]")),
    # a flat list or tuple of four numbers: [x1, y1, x2, y2]
    ("flat", _FLAT),
    # named coordinates: x1=.., y1=.., x2=.., y2=.. (also xmin/ymin/xmax/ymax)
    ("xyxy", re.compile(r"(?i)\"?(?:x1|xmin|x_min|left)\"?\s*[:=]\s*" + _N
                        + r"[^\d-]{1,12}?\"?(?:y1|ymin|y_min|top)\"?\s*[:=]\s*" + _N
                        + r"[^\d-]{1,12}?\"?(?:x2|xmax|x_max|right)\"?\s*[:=]\s*" + _N
                        + r"[^\d-]{1,12}?\"?(?:y2|ymax|y_max|bottom)\"?\s*[:=]\s*" + _N)),
    # named y-first: ymin=.., xmin=.., ymax=.., xmax=..
    ("yxyx", re.compile(r"(?i)\"?(?:y1|ymin|y_min|top)\"?\s*[:=]\s*" + _N
                        + r"[^\d-]{1,12}?\"?(?:x1|xmin|x_min|left)\"?\s*[:=]\s*" + _N
                        + r"[^\d-]{1,12}?\"?(?:y2|ymax|y_max|bottom)\"?\s*[:=]\s*" + _N
                        + r"[^\d-]{1,12}?\"?(?:x2|xmax|x_max|right)\"?\s*[:=]\s*" + _N)),
    # named width/height: {"x": .., "y": .., "width": .., "height": ..} (also left/top/w/h)
    ("xywh", re.compile(r"(?i)\"?\b(?:x|left|x_?min)\"?\s*[:=]\s*" + _N
                        + r"[^\d-]{1,12}?\"?\b(?:y|top|y_?min)\"?\s*[:=]\s*" + _N
                        + r"[^\d-]{1,12}?\"?\b(?:w|width)\"?\s*[:=]\s*" + _N
                        + r"[^\d-]{1,12}?\"?\b(?:h|height)\"?\s*[:=]\s*" + _N)),
)
# words one of which the prose patterns need (a pre-check; the other patterns are always tried)
_PATTERN_HINTS: dict[str, tuple[str, ...]] = {
    _PATTERNS[0][1].pattern: ("left",), _PATTERNS[2][1].pattern: ("cent",),
    _PATTERNS[3][1].pattern: ("cx", "cy", "center", "centre", "x_c", "xc")}
# an explicit label of the layout of the numbers that follow: "(x, y, width, height)", "[ymin, xmin, ymax, xmax]"
_XYWH_LABEL = re.compile(r"(?i)\(?\[?\s*x(?:_?min)?\s*,\s*y(?:_?min)?\s*,\s*(?:w|width)\s*,\s*(?:h|height)\s*\]?\)?"
                         r"|\bxywh\b")
_CXCY_LABEL = re.compile(r"(?i)\(?\[?\s*(?:cx|x_?c(?:enter)?|center_?x|x_center)\s*,\s*"
                         r"(?:cy|y_?c(?:enter)?|center_?y|y_center)"
                         r"\s*,\s*(?:w|width)\s*,\s*(?:h|height)\s*\]?\)?|\bcxcywh\b|\bcent(?:er|re)\s+and\s+size\b")
_YXYX_LABEL = re.compile(r"(?i)\(?\[?\s*y_?(?:min|1)\s*,\s*x_?(?:min|1)\s*,\s*y_?(?:max|2)\s*,\s*x_?(?:max|2)\s*\]?\)?")
_TABLE_NAMES = {"x1": 0, "xmin": 0, "x_min": 0, "left": 0, "y1": 1, "ymin": 1, "y_min": 1, "top": 1,
                "x2": 2, "xmax": 2, "x_max": 2, "right": 2, "y2": 3, "ymax": 3, "y_max": 3, "bottom": 3}
_TABLE_XYWH = {"x": 0, "y": 1, "w": 2, "width": 2, "h": 3, "height": 3}
_CELL_NUM = re.compile(r"^\s*" + _NUM + r"\s*(%|px)?\s*$")


@dataclass(frozen=True)
class BoxReading:
    """A box read from a response: xyxy in the adapter's space (in percent of the image when ``percent``;
    in ``space`` when the answer states its unit: 'unit' 0-1, 'thousand' 0-1000, 'pixel'), or None with the
    reason."""

    box: Box | None
    reason: str | None = None
    percent: bool = False
    space: str | None = None


# units an answer states for its box; a stated unit overrides the preset's default (``read_box_pixels``).
# A range ("0-1000", "0 to 1", "0-100 %") is specific; "normalized" / "relative" / "in pixels" are generic and
# give way to a range stated beside them ("normalized to 0-1000").
_STATED_RANGES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("thousand", re.compile(r"(?i)(?<![\d.])0\s*(?:-|–|to|\.\.)\s*1000\b|\bper\s*mille\b|‰|\b1000\s*[x×]\s*1000\s+"
                            r"(?:grid|scale|space)")),
    ("percent", re.compile(r"(?i)\bpercent(?:age)?s?\s+of\s+the\s+image|\bas\s+percentages\b|\bin\s+percent\b"
                           r"|(?<![\d.])0\s*(?:-|–|to)\s*100\s*%")),
    # "0-1", "0 to 1"; with a comma only as a closed pair "[0, 1]" / "(0, 1)" (a box's own numbers "[0, 1, 32, 32]"
    # state no unit)
    ("unit", re.compile(r"(?i)(?<![\d.])0(?:\.0)?\s*(?:-|–|to)\s*1(?:\.0)?(?![\d.])"
                        r"(?=\s*\]?\s*(?:\)|range|scale|,|\.|$|\s))"
                        r"|[\[(]\s*0(?:\.0)?\s*,\s*1(?:\.0)?\s*[\])]"
                        r"|\bfractions?\s+of\s+the\s+(?:image|width|height)")),
)
# a JSON or key=value unit: {"units": "normalized"}, coordinate_system=pixels
_UNIT_KEY = r"|[\"']?\b(?:units?|coord(?:inate)?(?:s|_system|_space)?|space|scale)[\"']?\s*[:=]\s*[\"']?"
_STATED_GENERIC: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("unit", re.compile(r"(?i)\bnormali[sz]ed\s+(?:coordinates|box|bounding\s+box)|\brelative\s+coordinates\b"
                        + _UNIT_KEY + r"(?:normali[sz]ed|relative|fractions?)\b")),
    ("pixel", re.compile(r"(?i)\bin\s+pixels?\b|\bpixel\s+coordinates\b|\bin\s+image\s+pixels\b|\d\s*px\b"
                         + _UNIT_KEY + r"(?:pixels?|px|absolute)\b")),
)


_SPACE_HINT = re.compile(r"(?i)0\s*(?:-|–|to|,|\.\.)\s*1|1000\s*[x×]|mille|‰|percent|fraction|normali|relative"
                         r"|pixel|px|absolute")


def stated_space(text: str) -> tuple[str | None, str | None]:
    """(the unit the answer states for its box, None) or (None, why) when it states two; (None, None): none."""
    if not _SPACE_HINT.search(text):
        return None, None
    for table in (_STATED_RANGES, _STATED_GENERIC):
        got = {space for space, pat in table if pat.search(text)}
        if len(got) == 1:
            return got.pop(), None
        if len(got) > 1:
            return None, f"the answer states its box in several units ({', '.join(sorted(got))})"
    return None, None


_Cand = tuple[int, int, Box, bool]  # start, end, xyxy box, percent


def _box_2d_order(conv: BoxConvention | None) -> str:
    """'yxyx' when the convention says its model writes ``box_2d`` y-first (Gemini), else 'xyxy'."""
    if conv is None:
        return "xyxy"
    return str(dict(conv.params).get("box_2d", "xyxy"))


def _numbers(m: re.Match[str]) -> tuple[tuple[float, float, float, float], bool | None]:
    """The four numbers of a match and whether they are percentages (None: mixed units)."""
    vals = tuple(float(v) for v in m.groups())
    n_pct = m.group(0).count("%")
    return (vals[0], vals[1], vals[2], vals[3]), (True if n_pct == 4 else False if n_pct == 0 else None)


def _to_xyxy(kind: str, v: tuple[float, float, float, float]) -> Box:
    if kind == "yxyx":
        return (v[1], v[0], v[3], v[2])
    if kind == "xywh":
        return (v[0], v[1], v[0] + v[2], v[1] + v[3])
    if kind == "cxcywh":
        return (v[0] - v[2] / 2, v[1] - v[3] / 2, v[0] + v[2] / 2, v[1] + v[3] / 2)
    if kind == "xxyy":
        return (v[0], v[2], v[1], v[3])
    return v


_LABELS = (("xywh", _XYWH_LABEL), ("yxyx", _YXYX_LABEL), ("cxcywh", _CXCY_LABEL))


def _label_near(text: str, start: int, end: int) -> str | None:
    """'xywh' / 'yxyx' / 'cxcywh' when an explicit layout label stands shortly before ``start`` (same or previous
    line) or right after ``end`` ("[10, 20, 30, 40] (x, y, width, height)"); the nearest label wins."""
    before = text[max(0, start - 120): start]
    after = text[end: end + 60].split("\n", 1)[0]
    labels = [(len(before) - m.end(), kind) for kind, pat in _LABELS for m in pat.finditer(before)]
    labels += [(m.start(), kind) for kind, pat in _LABELS for m in pat.finditer(after)
               if not re.search(r"[\d]", after[: m.start()])]
    return min(labels)[1] if labels else None


def _table_candidates(text: str) -> list[_Cand]:
    """Boxes in Markdown tables: columns x1 | y1 | x2 | y2 (or x | y | width | height), or rows 'x1 | 120'."""
    out: list[_Cand] = []
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    i = 0
    while i < len(lines):
        if not lines[i].strip().startswith("|"):
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip().startswith("|"):
            j += 1
        rows = [[c.strip().strip("*`").strip().lower() for c in ln.strip().strip("|").split("|")] for ln in lines[i:j]]
        rows = [r for r in rows if not all(re.fullmatch(r":?-{2,}:?", c) for c in r if c)]
        out += _table_boxes(rows, offsets[i], offsets[j])
        i = j
    return out


def _cell(c: str) -> tuple[float, bool] | None:
    m = _CELL_NUM.match(c)
    return (float(m.group(1)), m.group(2) == "%") if m else None


def _table_boxes(rows: list[list[str]], start: int, end: int) -> list[_Cand]:
    if not rows:
        return []
    out: list[_Cand] = []
    header = rows[0]
    for names, kind in ((_TABLE_NAMES, "xyxy"), (_TABLE_XYWH, "xywh")):
        cols = {names[c]: k for k, c in enumerate(header) if c in names}
        if len(cols) == 4:
            for r in rows[1:]:
                cells = [_cell(r[cols[q]]) if cols[q] < len(r) else None for q in range(4)]
                if all(c is not None for c in cells):
                    pct = {c[1] for c in cells}  # type: ignore[index]
                    if len(pct) == 1:
                        v = tuple(c[0] for c in cells)  # type: ignore[index]
                        out.append((start, end, _to_xyxy(kind, v), pct.pop()))  # type: ignore[arg-type]
            return out
    # vertical: one coordinate per row
    for names, kind in ((_TABLE_NAMES, "xyxy"), (_TABLE_XYWH, "xywh")):
        got: dict[int, tuple[float, bool]] = {}
        for r in rows:
            if len(r) >= 2 and r[0] in names and (c := _cell(r[1])) is not None:
                got[names[r[0]]] = c
        if len(got) == 4 and len({c[1] for c in got.values()}) == 1:
            v = tuple(got[q][0] for q in range(4))
            out.append((start, end, _to_xyxy(kind, v), got[0][1]))  # type: ignore[arg-type]
            return out
    return out


def _candidates(text: str, conv: BoxConvention | None = None) -> tuple[list[_Cand], str | None]:
    found: list[_Cand] = []
    reason = None
    order = _box_2d_order(conv)
    for m in _POLYGON.finditer(text) if text.count("(") + text.count("[") >= 3 else ():
        pts = [(float(p.group(1)), float(p.group(2)), p.group(0).count("%")) for p in _POINT.finditer(m.group(0))]
        n_pct = sum(p[2] for p in pts)
        if n_pct not in (0, 2 * len(pts)):
            reason = "a box mixing percentages and plain numbers"
            continue
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        found.append((m.start(), m.end(), (min(xs), min(ys), max(xs), max(ys)), n_pct > 0))
    low = text.lower()
    for kind, pat in _PATTERNS:
        hint = _PATTERN_HINTS.get(pat.pattern)
        if hint is not None and not any(h in low for h in hint):
            continue
        for m in pat.finditer(text):
            if any(s <= m.start() and m.end() <= e for s, e, _, _ in found):
                continue  # already inside a more specific match
            vals, pct = _numbers(m)
            if pct is None:
                reason = "a box mixing percentages and plain numbers"
                continue
            k = order if kind == "box_2d" else kind
            if kind == "flat":
                k = _label_near(text, m.start(), m.end()) or "xyxy"
            found.append((m.start(), m.end(), _to_xyxy(k, vals), pct))
    table = [c for c in _table_candidates(text) if not any(s <= c[0] < e for s, e, _, _ in found)]
    found += table
    return sorted(found), reason


def read_box(text: str, conv: BoxConvention | None = None) -> BoxReading:
    """The one box the response states (raw numbers, in the adapter's space), or None with the reason.

    Boxes after the last explicit answer marker win; several different boxes without one are
    ambiguous. Corner order is normalised; a zero-area or non-finite box is unparsed. ``conv`` gives the
    order of Gemini's ``box_2d`` key (param ``box_2d``: ``yxyx``)."""
    body = normalise(strip_reasoning(text))
    cands, reason = _candidates(body, conv)
    if not cands:
        return BoxReading(None, reason or "no box found")
    markers = [m.end() for m in answer_markers(body)] if len(cands) > 1 else []
    if markers:
        after = [c for c in cands if c[0] >= markers[-1]]
        if after:
            cands = after
    distinct = {(c[2], c[3]) for c in cands}
    if len(distinct) != 1:
        return BoxReading(None, f"{len(distinct)} different boxes and no single answer")
    (x1, y1, x2, y2), pct = distinct.pop()
    if not all(math.isfinite(v) for v in (x1, y1, x2, y2)):
        return BoxReading(None, "a box with non-finite numbers")
    box = (min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2))
    if box[2] - box[0] <= 0 or box[3] - box[1] <= 0:
        return BoxReading(None, "a box of zero area")
    space, why = stated_space(body) if not pct else (None, None)
    if why is not None:
        return BoxReading(None, why)
    if space == "percent":
        return BoxReading(box, None, True)
    return BoxReading(box, None, pct, space)


def parse_box(text: str) -> Box | None:
    """The one box the response states (raw numbers: the adapter's space, or percentages), or None."""
    return read_box(text).box


# a box may exceed its space by this fraction of the side (rounding, 0-1000 vs 0-999) before it is out of it
SPACE_TOLERANCE = 0.01


def space_size(conv: BoxConvention, width: int, height: int) -> tuple[float, float]:
    """Width and height of the declared box space of a ``width`` x ``height`` bench image."""
    return model_image_size(conv, width, height)


def outside_space(box: Box, conv: BoxConvention, width: int, height: int) -> str | None:
    """Why a box in the adapter's space lies outside that space (None when inside, within the tolerance)."""
    sw, sh = space_size(conv, width, height)
    tx, ty = SPACE_TOLERANCE * sw, SPACE_TOLERANCE * sh
    x1, y1, x2, y2 = box
    if x1 < -tx or y1 < -ty or x2 > sw + tx or y2 > sh + ty:
        def fmt(v: float) -> str:
            return f"{v:g}"
        space = {"unit": "0-1", "thousand": "0-1000"}.get(conv.space, f"{fmt(sw)}x{fmt(sh)} pixel")
        return f"box [{', '.join(fmt(v) for v in box)}] is outside the declared {space} space"
    return None


def read_box_pixels(raw: str, conv: BoxConvention, width: int, height: int,
                    reading: BoxReading | None = None) -> tuple[Box | None, str | None]:
    """(pixel xyxy box of the bench image, None) or (None, reason): read, check against the declared space
    (a box outside it is unparsed, not clipped), convert. ``reading``: an earlier ``read_box`` of ``raw``."""
    got = reading if reading is not None else read_box(raw, conv)
    if got.box is None:
        return None, got.reason
    box = got.box
    if got.space is not None and got.space != conv.space:  # the unit the answer states overrides the preset's
        conv = BoxConvention(got.space, conv.resize, conv.params)  # type: ignore[arg-type]
    if got.percent:
        if any(v < -100 * SPACE_TOLERANCE or v > 100 * (1 + SPACE_TOLERANCE) for v in box):
            return None, f"box [{', '.join(f'{v:g}%' for v in box)}] is outside 0-100%"
        sw, sh = space_size(conv, width, height)
        box = (box[0] / 100 * sw, box[1] / 100 * sh, box[2] / 100 * sw, box[3] / 100 * sh)
    why = outside_space(box, conv, width, height)
    if why is not None:
        return None, why
    return to_original_pixels(box, conv, width, height), None


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


def format_box(box: Box) -> str:
    return json.dumps([round(v, 2) for v in box])
