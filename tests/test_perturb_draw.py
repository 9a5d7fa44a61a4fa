"""Cue drawing (medr2.imaging.draw): one style, drawn outside the region it marks, every kind."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from medr2.imaging.draw import (
    CUE_COLOR,
    box_mask,
    cue_color_mask,
    draw_cue,
    iou,
    line_width,
    make_cue,
    mask_bbox,
)


def _gray() -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (120, 160), dtype=np.uint8)


def test_box_outline_lies_just_outside_the_box() -> None:
    img = _gray()
    cue = make_cue("box", (30.0, 20.0, 90.0, 70.0), 160, 120, image=None)
    out = draw_cue(img, cue)
    assert out.shape == (120, 160, 3)
    painted = cue_color_mask(out)
    lw = line_width(160, 120)
    assert mask_bbox(painted) == (30.0 - lw, 20.0 - lw, 90.0 + lw, 70.0 + lw)
    assert painted[20 - lw:20, 30:90].all() and not painted[20:70, 30:90].any()
    # the rest of the image is the gray image replicated
    assert np.array_equal(out[~painted][:, 0], img[~painted]) and np.array_equal(out[~painted][:, 1], img[~painted])


def test_contour_mask_point_and_coords() -> None:
    img = _gray()
    yy, xx = np.mgrid[:120, :160]
    disc = (xx - 80) ** 2 + (yy - 60) ** 2 <= 20**2
    box = mask_bbox(disc)
    assert box is not None
    contour = cue_color_mask(draw_cue(img, make_cue("contour", box, 160, 120, image=None), disc))
    assert contour.any() and not (contour & disc).any() and iou(mask_bbox(contour) or box, box) > 0.8
    filled = draw_cue(img, make_cue("mask", box, 160, 120, image=None), disc)
    inside = filled[disc].astype(float)
    assert (np.abs(inside[:, 0] - inside[:, 2]) > 50).mean() > 0.5  # tinted towards the cue colour
    ring = cue_color_mask(filled)
    assert np.array_equal(filled[~disc & ~ring][:, 0], img[~disc & ~ring]) and not (ring & disc).any()
    point = cue_color_mask(draw_cue(img, make_cue("point", box, 160, 120, image=None)))
    pb = mask_bbox(point)
    assert pb is not None and abs((pb[0] + pb[2]) / 2 - 80) <= 1 and abs((pb[1] + pb[3]) / 2 - 60) <= 1
    coords = draw_cue(img, make_cue("coords", box, 160, 120, image=None, drawn=False))
    assert not cue_color_mask(coords).any()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 150), st.integers(0, 110), st.integers(1, 60), st.integers(1, 60),
       st.sampled_from(["box", "contour", "mask", "point"]))
def test_a_drawn_mark_never_covers_what_it_marks(x: int, y: int, bw: int, bh: int, kind: str) -> None:
    """Issue 40 kind 6 (a box line painted a 5-px focus over): for every kind, size and place, no pixel of the marked
    region (its mask, else its box) is painted in the cue colour, and the mark is drawn (some pixel painted)."""
    img = np.full((120, 160), 90, np.uint8)
    box = (float(x), float(y), float(min(160, x + bw)), float(min(120, y + bh)))
    yy, xx = np.mgrid[:120, :160]
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    ellipse = ((xx + 0.5 - cx) / max(0.5, (box[2] - box[0]) / 2)) ** 2 + \
        ((yy + 0.5 - cy) / max(0.5, (box[3] - box[1]) / 2)) ** 2 <= 1
    mask = ellipse if kind in ("contour", "mask") and ellipse.any() else None
    region = mask if mask is not None else box_mask(box, 160, 120)
    out = draw_cue(img, make_cue(kind, box, 160, 120, image=None), mask)
    painted = cue_color_mask(out)
    assert not (painted & region).any()
    assert painted.any() or region.all()


def test_one_style_for_every_cue() -> None:
    a = make_cue("box", (1.0, 1.0, 5.0, 5.0), 400, 300, image=None)
    b = make_cue("contour", (10.0, 10.0, 50.0, 50.0), 400, 300, image=None)
    assert a.style == b.style and a.style["color"] == list(CUE_COLOR)
    assert line_width(400, 300) == 2 and line_width(2000, 1800) == 9
