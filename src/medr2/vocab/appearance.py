"""What a finding's name says of how it looks: the signal or colour its own words fix (issue 40, review 2026-12-07b).

A description pairs a finding with attributes ("hypointense fatty mass", "slate grey cotton-wool spots"); some of
its words fix what the attribute can be, whatever the image: fat is bright on a T1-weighted image and dark on CT,
a cyst is dark on T1 and on CT, a calcification is dense, cotton-wool spots are white, a pigmented lesion is dark.
:func:`contradicts` says whether a description says both (a self-contradictory description: no reader needs the
image to rule it out, so it is no distractor that tests reading it). Only the words listed here are known; any
other pairing is not contradictory (unknown is not a contradiction).

This module imports nothing of medr2 (it sits beside :mod:`medr2.vocab`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

# words of a finding's name -> per modality (lower case), the intensity words it rules out; "T1" entries hold on a
# T1-weighted image (or one whose sequence is not given), "MRI" on any MR image whose fat is not suppressed
_FAT = r"\b(fat|fatty|lipoma|lipomatous)\b"
_CYST = r"\b(cyst|cystic|cysts)\b"
_CALCIFIED = r"\b(calcified|calcification|calcifications|calcific)\b"
_INTENSITY_RULES: tuple[tuple[str, dict[str, frozenset[str]]], ...] = (
    (_FAT, {"mri": frozenset({"hypointense"}), "ct": frozenset({"hyperdense"}),
            "x-ray": frozenset({"radiopaque"})}),
    (_CYST, {"t1": frozenset({"hyperintense"}), "ct": frozenset({"hyperdense"}),
             "ultrasound": frozenset({"hyperechoic"})}),
    (_CALCIFIED, {"ct": frozenset({"hypodense"}), "x-ray": frozenset({"lucent"})}),
)
_FAT_SUPPRESSED = re.compile(r"fat[ -]?(sat|suppress)|stir|dixon water", re.IGNORECASE)
# colour words a finding's name rules out on a photograph
_WHITE = frozenset({"white", "pale", "yellow", "yellow-white", "cream", "pink"})  # light: no pigment, no blood
_DARK = frozenset({"dark red", "red", "brown", "slate grey", "grey", "black", "dark"})
_COLOUR_RULES: tuple[tuple[str, frozenset[str]], ...] = (
    (r"\bcotton[ -]wool\b|\bexudates?\b|\bdrusen\b", _DARK),
    (r"\bpigment(ed)?\b|\bmelanoma\b|\bna?evus\b|\bhaemorrhages?\b|\bhemorrhages?\b|\bblot\b", _WHITE),
)


def contradicts(label: str, intensity: str | None, modality: str | None, sequence: str | None = None) -> bool:
    """Whether a finding named ``label`` cannot have the intensity (or colour) ``intensity`` on an image of
    ``modality`` and ``sequence``: its own words fix the other ("hypointense fatty mass" on a T1-weighted MR
    image, "slate grey cotton-wool spots")."""
    if not intensity:
        return False
    name, value = label.lower(), intensity.lower().strip()
    mod, seq = (modality or "").lower(), (sequence or "").lower()
    for words, banned in _COLOUR_RULES:
        if re.search(words, name) and value in banned:
            return True
    for words, per in _INTENSITY_RULES:
        if not re.search(words, name):
            continue
        if value in per.get(mod, frozenset()):
            return not (mod == "mri" and _FAT_SUPPRESSED.search(seq))
        if mod == "mri" and value in per.get("t1", frozenset()) and (not seq or "t1" in seq):
            return True
    return False


# --------------------------------------------------------------------------- what a rendering shows (issue 40)
# A drawn lesion's appearance words are read from its rendering (review 2026-12-07c: "slate grey" keyed beside
# "brown" for a dark oval blended into the red fundus, "round" beside "oval" for a mass cut to a half-disc): its
# colour word is the nearest of :data:`COLOURS` to the colour its core is drawn in, by CIELAB ΔE2000, and a colour
# word within :data:`COLOUR_APART` of that colour is no wrong option; its shape word is one its mask admits
# (:func:`shape_words`), and a shape word the mask also admits is no wrong option.

# colour words and the sRGB colours (0-255) they name, the words a reader uses of a lesion in a colour photograph
# (references chosen for this vocabulary, near the ISCC-NBS centroids; "slate grey" the CSS colour)
COLOURS: dict[str, tuple[int, int, int]] = {
    "white": (242, 243, 244), "cream": (240, 234, 214), "yellow": (243, 195, 0), "orange": (240, 130, 40),
    "pink": (234, 147, 153), "red": (190, 40, 45), "dark red": (114, 30, 36), "brown": (120, 75, 45),
    "slate grey": (112, 128, 144), "grey": (132, 132, 130), "black": (30, 30, 30),
}
COLOUR_APART = 15.0  # ΔE2000 from the drawn colour beyond which a colour word is false of it (a wrong option) ...
COLOUR_MARGIN = 10.0  # ... and at least this farther from it than the keyed (nearest) word is
COLOUR_FITS = 20.0  # ΔE2000 within which the nearest colour word names the drawn colour (else no word keyed)


def _lab(rgb: Sequence[float]) -> Any:
    import numpy as np
    from skimage.color import rgb2lab

    return rgb2lab(np.asarray(rgb, dtype=np.float64).reshape(1, 1, 3) / 255.0)[0, 0]


def colour_distance(rgb: Sequence[float], word: str) -> float:
    """The CIELAB ΔE2000 between a drawn colour (sRGB, 0-255) and the colour word ``word`` (:data:`COLOURS`);
    infinite for a word that is no colour of the vocabulary."""
    from skimage.color import deltaE_ciede2000

    ref = COLOURS.get(word.lower().strip())
    return math.inf if ref is None else float(deltaE_ciede2000(_lab(rgb), _lab(ref)))


def nearest_colour(rgb: Sequence[float]) -> str | None:
    """The colour word nearest a drawn colour (sRGB, 0-255), where within :data:`COLOUR_FITS`; else None."""
    word = min(COLOURS, key=lambda w: colour_distance(rgb, w))
    return word if colour_distance(rgb, word) <= COLOUR_FITS else None


def colour_shown(rgb: Sequence[float], word: str) -> bool:
    """Whether the colour word ``word`` may be said of a drawn colour, so that it is no wrong option: within
    :data:`COLOUR_APART` of it, or within :data:`COLOUR_MARGIN` of the nearest word's distance (a word about as near
    as the keyed one names it as well). A word that is no colour of the vocabulary is not shown."""
    d = colour_distance(rgb, word)
    nearest = min(colour_distance(rgb, w) for w in COLOURS)
    return d < max(COLOUR_APART, nearest + COLOUR_MARGIN)


MIN_SHAPE_PX = 12.0  # a mask whose equivalent diameter is below this (pixels) shows no shape a reader can name
ELLIPSE_FIT = 0.92  # a mask overlapping the ellipse of its moments this much (IoU) and this convex reads as an
ELLIPSE_SOLID = 0.93  # ellipse: round or oval
ROUND_RATIO, OVAL_RATIO = 0.80, 0.85  # minor/major axis ratios: round at or above the first, oval at or below the
# second (between both words fit, and neither is a wrong option of the other)
LOBED_SOLID = (0.75, 0.95)  # solidity of a lobulated or irregular outline (not convex, not spiked)
SPIKED_SOLID = 0.80  # a spiculated outline is below this solidity


def shape_words(features: Mapping[str, float]) -> frozenset[str]:
    """The shape words a lesion mask admits, from its measured ``features`` (:data:`SHAPE_FEATURES`): round or oval
    for an outline that fits an ellipse (by its axis ratio), lobulated or irregular for one that is not convex,
    spiculated for a spiked one; none for a mask too small to show a shape, or a convex outline that is no ellipse
    (a mass cut to a half-disc is neither round nor oval)."""
    if features["diameter_px"] < MIN_SHAPE_PX:
        return frozenset()
    iou, solid, ratio = features["ellipse_iou"], features["solidity"], features["axis_ratio"]
    out: set[str] = set()
    if iou >= ELLIPSE_FIT and solid >= ELLIPSE_SOLID:
        if ratio >= ROUND_RATIO:
            out.add("round")
        if ratio <= OVAL_RATIO:
            out.add("oval")
    if iou < ELLIPSE_FIT and LOBED_SOLID[0] <= solid < LOBED_SOLID[1]:
        out |= {"lobulated", "irregular"}
    if solid < SPIKED_SOLID:
        out.add("spiculated")
    return frozenset(out)


SHAPE_FEATURES = ("diameter_px", "ellipse_iou", "solidity", "axis_ratio")


# a drawn edge at most this many pixels wide reads well-defined, at least ILL_DEFINED_PX ill-defined; between, the
# margin is not keyed (the fifth blind review, 2026-12-07e: "ill-defined" keyed of an edge that drops in 1-2 px)
WELL_DEFINED_PX = 2.5
ILL_DEFINED_PX = 4.0


def margin_words(edge_px: float, inner_edge_px: float | None = None) -> frozenset[str]:
    """The margin words a drawn edge admits, from its width at the outline (``edge_px``) and at its steepest contour
    inside (``inner_edge_px``): "well-defined" (sharp), "ill-defined" (soft); none between, nor where a crisp wall
    lies inside a soft outline (a rim in its halo: a reader could say either)."""
    inner = edge_px if inner_edge_px is None else inner_edge_px
    if edge_px <= WELL_DEFINED_PX:
        return frozenset({"well-defined"})
    if edge_px >= ILL_DEFINED_PX and inner > WELL_DEFINED_PX:
        return frozenset({"ill-defined"})
    return frozenset()


def measured_margin_words(m: Mapping[str, Any]) -> frozenset[str] | None:
    """:func:`margin_words` of a rendering's measurement (``edge_px``, ``inner_edge_px``), None where unmeasured."""
    edge, inner = m.get("edge_px"), m.get("inner_edge_px")
    if not isinstance(edge, int | float):
        return None
    return margin_words(float(edge), float(inner) if isinstance(inner, int | float) else None)


def margin_key(m: Mapping[str, Any], drawn: str | None) -> str | None:
    """The margin word keyed of a drawn lesion (``m`` its measurement): the drawn one where its edge admits it,
    else the one word the edge admits, else None (no margin is asked); the drawn word where nothing was measured."""
    words = measured_margin_words(m)
    if words is None:
        return drawn
    if drawn in words:
        return drawn
    return next(iter(words)) if len(words) == 1 else None


def shape_key(features: Mapping[str, float], drawn: str) -> str | None:
    """The shape word keyed of a drawn lesion: the drawn one where its mask admits it (:func:`shape_words`), else
    the one word the mask admits, else None (no shape is asked)."""
    words = shape_words(features)
    if drawn in words:
        return drawn
    return next(iter(words)) if len(words) == 1 else None
