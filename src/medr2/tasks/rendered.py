"""What a drawn lesion's rendering shows of its attributes: the one gate of the attribute words a question keys or
offers (issue 40, review 2026-12-07c, defect kind 3: "slate grey" keyed beside "brown" for a dark oval blended into
the red fundus, "round" beside "oval" for a mass cut to a half-disc, a size bin that depends on whether the halo
round a dark core is part of the mass).

A source that draws its lesions measures each one on the image the model gets and records the measurement on the
finding (``Finding.attributes["rendered"]``: the sample's :func:`medr2.sources.sample.lesions.rendering`), and writes
its appearance words from it (:func:`medr2.vocab.appearance.shape_key`, :func:`~medr2.vocab.appearance.
nearest_colour`). Every entry point that keys or offers a shape, colour or size of a finding goes through this
module: ``s3.attribute`` and ``s3.cue_description`` (their wrong options, through
:meth:`medr2.tasks.pools.LabelPools.distractors` ``refuse=``), T1's attribute twins (:mod:`medr2.perturb.text`),
and the contract clauses (:mod:`medr2.tasks.contract`) ``appearance_shown`` (a case's keyed words are its
measurement's) and ``size_bounded`` (``s3.size``: a bin its core and outer extent share). The sample's report is
composed from the same measured words. A finding without a measurement (a reader's label, a source that
does not draw) is not judged here: its words are its reader's.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from medr2.records import Finding
from medr2.vocab import appearance

SIZE_EDGES_MM = (5.0, 10.0, 20.0, 30.0, 50.0)  # the edges of vocab.SIZE_LABELS (the size bins of s3.size)

# why a word is not offered or an item not asked, as counted (item meta ``rendered_dropped``, skip reasons)
COLOUR_NEAR = (f"colour word within ΔE2000 {appearance.COLOUR_APART:g} of the lesion's drawn colour or "
               f"{appearance.COLOUR_MARGIN:g} of the keyed word's distance")
SHAPE_ADMITTED = "shape word the lesion's mask also admits"
MARGIN_ADMITTED = "margin word the lesion's drawn edge also admits"
MARGIN_WORDS = ("well-defined", "ill-defined")


def measurement(f: Finding) -> Mapping[str, Any] | None:
    """The finding's rendering as its source measured it (``attributes["rendered"]``), or None (not drawn)."""
    m = f.attributes.get("rendered")
    return m if isinstance(m, Mapping) else None


def _colour(m: Mapping[str, Any]) -> list[float] | None:
    rgb = m.get("rgb")
    return [float(v) for v in rgb] if isinstance(rgb, list | tuple) and len(rgb) == 3 else None


def is_colour(word: str) -> bool:
    """Whether ``word`` is a colour word of the vocabulary (:data:`medr2.vocab.appearance.COLOURS`)."""
    return word.lower().strip() in appearance.COLOURS


def shows(f: Finding, key: str, value: str) -> bool | None:
    """Whether the finding's rendering shows attribute ``key`` = ``value``: a colour word within
    :data:`~medr2.vocab.appearance.COLOUR_APART` of its drawn colour, a shape word its mask admits, a margin word
    its drawn edge does not rule out (:func:`medr2.vocab.appearance.margin_words`); None where the finding carries
    no measurement or the attribute is not one measured (a grey-scale intensity)."""
    m = measurement(f)
    if m is None:
        return None
    if key == "intensity" and is_colour(value) and (rgb := _colour(m)) is not None:
        return appearance.colour_shown(rgb, value)
    if key == "shape" and all(isinstance(m.get(k), int | float) for k in appearance.SHAPE_FEATURES):
        return value in appearance.shape_words({k: float(m[k]) for k in appearance.SHAPE_FEATURES})
    if key == "margin" and value in MARGIN_WORDS and (words := appearance.measured_margin_words(m)) is not None:
        # a margin word the edge does not rule out: both are shown of an edge between the two readings
        return value in words or not words
    return None


def drop_reason(f: Finding, key: str, value: str) -> str | None:
    """Why ``value`` is no wrong option for attribute ``key`` of ``f`` (the rendering shows it too:
    :data:`COLOUR_NEAR`, :data:`SHAPE_ADMITTED`), else None."""
    if shows(f, key, value) is not True:
        return None
    return COLOUR_NEAR if key == "intensity" else MARGIN_ADMITTED if key == "margin" else SHAPE_ADMITTED


def key_shown(f: Finding, key: str) -> bool:
    """Whether the finding's keyed word for ``key`` is the one its rendering shows: a colour word the nearest to its
    drawn colour, a shape word its mask admits; true where nothing is measured."""
    value = f.attributes.get(key)
    if not isinstance(value, str) or not value:
        return True
    m = measurement(f)
    if key == "intensity" and m is not None and is_colour(value) and (rgb := _colour(m)) is not None:
        return appearance.nearest_colour(rgb) == value
    if key == "margin" and m is not None and value in MARGIN_WORDS and \
            (words := appearance.measured_margin_words(m)) is not None:
        return value in words
    return shows(f, key, value) is not False


def _bin(mm: float) -> int:
    return sum(1 for e in SIZE_EDGES_MM if mm > e)


def size_reason(f: Finding) -> str | None:
    """Why the finding's size bin is not asked, where it depends on where its boundary is drawn (its measured core
    and outer extent, ``rendered.core_mm`` and ``rendered.outer_mm``, in other bins than its keyed ``size_mm``:
    :data:`medr2.tasks.contract.SIZE_BOUNDARY`); None where they agree or nothing is measured."""
    m = measurement(f)
    size = f.attributes.get("size_mm")
    if m is None or not isinstance(size, int | float):
        return None
    sizes = [float(size)] + [float(m[k]) for k in ("core_mm", "outer_mm") if isinstance(m.get(k), int | float)]
    return "size bin depends on the boundary" if len({_bin(s) for s in sizes}) > 1 else None


def traced(f: Finding) -> dict[str, Any]:
    """The measurement an item records of the finding it keys (item meta ``rendered``), empty where none."""
    m = measurement(f)
    return dict(m) if m is not None else {}
