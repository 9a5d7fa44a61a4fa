"""Box parsing, conversion from the adapter's convention, and IoU (against a direct pixel count)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from medr2 import BoxConvention
from medr2.imaging.draw import iou
from medr2.models.presets import box_to_model
from medr2.scoring.boxes import convention_from_json, parse_box, to_original_pixels

coord = st.integers(0, 60)


@st.composite
def int_boxes(draw: st.DrawFn) -> tuple[float, float, float, float]:
    x1, x2 = sorted(draw(st.lists(coord, min_size=2, max_size=2, unique=True)))
    y1, y2 = sorted(draw(st.lists(coord, min_size=2, max_size=2, unique=True)))
    return (float(x1), float(y1), float(x2), float(y2))


def _raster_iou(a: tuple, b: tuple) -> float:
    """IoU by counting unit pixels on a grid (a direct computation independent of the formula)."""
    grid = np.zeros((2, 64, 64), dtype=bool)
    for k, (x1, y1, x2, y2) in enumerate((a, b)):
        grid[k, int(y1):int(y2), int(x1):int(x2)] = True
    inter = np.logical_and(grid[0], grid[1]).sum()
    union = np.logical_or(grid[0], grid[1]).sum()
    return inter / union


@settings(max_examples=300, deadline=None)
@given(int_boxes(), int_boxes())
def test_iou_equals_pixel_count(a: tuple, b: tuple) -> None:
    assert iou(a, b) == pytest.approx(_raster_iou(a, b), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(int_boxes(), int_boxes())
def test_iou_properties(a: tuple, b: tuple) -> None:
    v = iou(a, b)
    assert 0.0 <= v <= 1.0
    assert v == pytest.approx(iou(b, a))
    assert iou(a, a) == pytest.approx(1.0)


FORMATS = [
    "[{0}, {1}, {2}, {3}]", "({0}, {1}, {2}, {3})", "<|box_start|>({0},{1}),({2},{3})<|box_end|>",
    "<box>{0},{1},{2},{3}</box>", "<box>({0},{1}),({2},{3})</box>", '{{"bbox_2d": [{0}, {1}, {2}, {3}]}}',
    '[{{"bbox_2d": [{0}, {1}, {2}, {3}], "label": "lesion"}}]', '{{"x1": {0}, "y1": {1}, "x2": {2}, "y2": {3}}}',
    "The lesion is at [{0}, {1}, {2}, {3}].", "<think>[1, 1, 2, 2]</think>Answer: [{0}, {1}, {2}, {3}]",
    "from ({0}, {1}) to ({2}, {3})",
]


@settings(max_examples=300, deadline=None)
@given(int_boxes(), st.sampled_from(FORMATS))
def test_parse_box_formats(box: tuple, fmt: str) -> None:
    from medr2.scoring.extract import strip_reasoning

    text = fmt.format(*(int(v) for v in box))
    assert parse_box(strip_reasoning(text)) == box


def test_unparseable_boxes() -> None:
    for text in ["", "no box", "[1, 2, 3]", "[5, 5, 5, 9]", "[1,1,5,5] or [10,10,20,20]", "x=3"]:
        assert parse_box(text) is None


CONVENTIONS = [
    BoxConvention("pixel"),
    BoxConvention("unit"),
    BoxConvention("thousand"),
    BoxConvention("pixel", "qwen2-vl", (("max_pixels", 200 * 28 * 28), ("min_pixels", 4 * 28 * 28))),
    BoxConvention("pixel", "fixed", (("height", 336), ("width", 336))),
]


@settings(max_examples=200, deadline=None)
@given(int_boxes(), st.sampled_from(CONVENTIONS), st.integers(61, 900), st.integers(61, 900))
def test_conversion_inverts_the_adapters_mapping(box: tuple, conv: BoxConvention, w: int, h: int) -> None:
    model_box = box_to_model(box, w, h, conv)
    back = to_original_pixels(model_box, conv, w, h)
    assert back == pytest.approx(box, abs=1e-6)


def test_conversion_examples() -> None:
    # 0-1000 space on a 640x480 image
    assert to_original_pixels((100, 200, 300, 400), BoxConvention("thousand"), 640, 480) == (64.0, 96.0, 192.0, 192.0)
    # a box beyond the image is clipped to it
    assert to_original_pixels((-0.1, 0.5, 1.2, 0.9), BoxConvention("unit"), 100, 50) == (0.0, 25.0, 100.0, 45.0)
    conv = convention_from_json({"space": "pixel", "resize": "fixed", "params": {"width": 200, "height": 100}})
    assert to_original_pixels((20, 10, 100, 50), conv, 400, 400) == (40.0, 40.0, 200.0, 200.0)
