"""One fitting rule (issue 40, kind 6: V3 stretched a 128 x 512 bone scan to 512 x 512 and still scored it exact):
every place that shows an image in a frame of another shape letterboxes it through
:func:`medr2.imaging.fit.fit_image`, its aspect ratio kept. The resampling calls of the package are found by
reading its source, so a new one that stretches an image cannot slip in beside the rule."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from hypothesis import assume, given, settings, strategies as st

import medr2
from medr2.imaging.fit import fit_geometry, fit_image
from medr2.renders import RENDER_OPS

SRC = Path(medr2.__file__).resolve().parent
RESAMPLING_CALLS = frozenset({"resize", "zoom", "rescale", "thumbnail", "fit", "contain", "pad"})

# (module, function) -> why its resampling is no fit to another shape; everything else goes through fit_image
NOT_A_FIT: dict[tuple[str, str], str] = {
    ("imaging/fit.py", "fit_image"): "the fitting rule itself (resamples the letterboxed canvas, of the target's "
                                     "aspect)",
    ("imaging/degrade.py", "_downsample"): "a degradation: shrunk by one factor and restored to its own size",
    ("imaging/physics.py", "_project"): "the CT projection domain: one scale on both axes, restored by _fbp",
    ("imaging/physics.py", "_fbp"): "the reconstruction resized back to the image's own size",
    ("imaging/physics.py", "_mr_bias"): "a smooth bias field interpolated from a coarse grid (no image)",
    ("imaging/similarity.py", "look_alike"): "calls similarity.thumbnail, which fits through fit_image",
    ("perturb/lookalike.py", "_thumb"): "calls similarity.thumbnail, which fits through fit_image",
    ("renders.py", "_resize"): "the render op of benches built before 'fit' (no build writes it: "
                               "test_no_build_writes_the_stretching_op)",
    ("reporting/browser.py", "thumbnail_uri"): "shrinks by one scale on both axes, no frame",
    ("sources/sample/background.py", "resize_float"): "one scale on both axes",
    ("sources/sample/background.py", "resize_mask"): "a mask to the size of its own image",
    ("sources/sample/lesions.py", "cavity"): "np.pad: a mask padded with zeros for a closing and cropped back, no "
                                             "resampling",
    ("imaging/sites.py", "depth"): "np.pad: a mask padded by one pixel for its distance transform and cropped back, "
                                   "no resampling",
}


def _resampling_calls() -> set[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("models/"):  # the model processors' resize rules are arithmetic on sizes, no pixels
            continue
        for fn in ast.walk(ast.parse(path.read_text("utf-8"))):
            if not isinstance(fn, ast.FunctionDef):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                    if name in RESAMPLING_CALLS:
                        found.add((rel, fn.name))
    return found


def test_every_resampling_call_fits_through_the_one_rule() -> None:
    """Each resampling call of the package is the fitting rule or a resampling that keeps the aspect ratio (listed
    with its reason); the list holds no stale entry."""
    found = _resampling_calls()
    assert ("imaging/fit.py", "fit_image") in found
    assert found <= set(NOT_A_FIT), sorted(found - set(NOT_A_FIT))
    assert set(NOT_A_FIT) <= found, sorted(set(NOT_A_FIT) - found)


def test_no_build_writes_the_stretching_op() -> None:
    """V2, V3 and V12 render with ``fit``; ``resize`` stays only to read older benches."""
    assert "fit" in RENDER_OPS.names()
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text("utf-8")
        assert 'RenderSpec("resize"' not in text, path


@settings(max_examples=300, deadline=None)
@given(st.integers(16, 200), st.integers(16, 200), st.integers(8, 256), st.integers(8, 256), st.booleans())
def test_fit_keeps_the_aspect_ratio(w: int, h: int, tw: int, th: int, rgb: bool) -> None:
    """The fitted image has the target size, its content keeps the source's aspect ratio (to the rounding of a
    whole-pixel margin) and sits centred; the margins carry the fill."""
    g = fit_geometry(w, h, tw, th)
    assume(min(w, h) >= 16 and g.scale * min(w, h) >= 2)  # content under two pixels may fall between samples
    # the margins are whole pixels of the source: the centre moves by up to one, and the padded side's scale by half
    # a pixel of it (at most 1/32 of the side for a side of 16 or more pixels)
    tol = 2 + g.scale + max(tw, th) / 32
    shape = (h, w, 3) if rgb else (h, w)
    src = np.full(shape, 200, np.uint8)
    out = fit_image(src, tw, th, resample="nearest")
    assert out.shape[:2] == (th, tw) and out.dtype == np.uint8
    content = out if out.ndim == 2 else out[..., 0]
    ys, xs = np.nonzero(content > 100)
    assert abs(g.scale * w - (xs.max() - xs.min() + 1)) <= tol and abs(g.scale * h - (ys.max() - ys.min() + 1)) <= tol
    assert abs((xs.min() + xs.max() + 1) / 2 - tw / 2) <= tol and abs((ys.min() + ys.max() + 1) / 2 - th / 2) <= tol
    assert (content == 0).sum() + (content == 200).sum() == content.size  # nearest: the image or the fill


def test_a_tall_scan_is_letterboxed_not_stretched() -> None:
    """The review's case: a 128 x 512 whole-body scan shown in a 512 x 512 frame keeps its 128 columns."""
    scan = np.zeros((512, 128), np.uint8)
    scan[:, 32:96] = 255  # a body down the middle of the scan
    out = fit_image(scan, 512, 512)
    assert np.array_equal(out[:, 192:320], scan)
    assert not out[:, :192].any() and not out[:, 320:].any()
    assert np.array_equal(fit_image(scan, 128, 512), scan)
