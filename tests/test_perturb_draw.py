"""Cue drawing (medr2.imaging.draw): one style, drawn inside the region, every kind."""

from __future__ import annotations

import numpy as np

from medr2.imaging.draw import CUE_COLOR, cue_color_mask, draw_cue, iou, line_width, make_cue, mask_bbox


def _gray() -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(0, 256, (120, 160), dtype=np.uint8)


def test_box_outline_lies_inside_the_box() -> None:
    img = _gray()
    cue = make_cue("box", (30.0, 20.0, 90.0, 70.0), 160, 120, image=None)
    out = draw_cue(img, cue)
    assert out.shape == (120, 160, 3)
    painted = cue_color_mask(out)
    assert mask_bbox(painted) == (30.0, 20.0, 90.0, 70.0)
    lw = line_width(160, 120)
    assert painted[20:20 + lw, 30:90].all() and not painted[20 + lw:70 - lw, 30 + lw:90 - lw].any()
    # the rest of the image is the gray image replicated
    assert np.array_equal(out[~painted][:, 0], img[~painted]) and np.array_equal(out[~painted][:, 1], img[~painted])


def test_contour_mask_point_and_coords() -> None:
    img = _gray()
    yy, xx = np.mgrid[:120, :160]
    disc = (xx - 80) ** 2 + (yy - 60) ** 2 <= 20**2
    box = mask_bbox(disc)
    assert box is not None
    contour = cue_color_mask(draw_cue(img, make_cue("contour", box, 160, 120, image=None), disc))
    assert contour.any() and not (contour & ~disc).any() and iou(mask_bbox(contour) or box, box) > 0.95
    filled = draw_cue(img, make_cue("mask", box, 160, 120, image=None), disc)
    inside = filled[disc & ~contour].astype(float)
    assert (np.abs(inside[:, 0] - inside[:, 2]) > 50).mean() > 0.5  # tinted towards the cue colour
    assert np.array_equal(filled[~disc][:, 0], img[~disc])
    point = cue_color_mask(draw_cue(img, make_cue("point", box, 160, 120, image=None)))
    pb = mask_bbox(point)
    assert pb is not None and abs((pb[0] + pb[2]) / 2 - 80) <= 1 and abs((pb[1] + pb[3]) / 2 - 60) <= 1
    coords = draw_cue(img, make_cue("coords", box, 160, 120, image=None, drawn=False))
    assert not cue_color_mask(coords).any()


def test_one_style_for_every_cue() -> None:
    a = make_cue("box", (1.0, 1.0, 5.0, 5.0), 400, 300, image=None)
    b = make_cue("contour", (10.0, 10.0, 50.0, 50.0), 400, 300, image=None)
    assert a.style == b.style and a.style["color"] == list(CUE_COLOR)
    assert line_width(400, 300) == 2 and line_width(2000, 1800) == 9
