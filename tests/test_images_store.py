"""An image's identity, under each rule a bench may follow, and the image store that names files by it.

The identity is hashed into item ids, into the seeds of seeded renders (V4 fill, V6 decoy place, V8 kind and
noise) and into the request hashes of a run. Format 3 benches (:data:`medr2.images.PIXELS`) name an image by
its decoded pixels, so any encoder, level or zlib build gives the same ids; formats 1 and 2
(:data:`medr2.images.PNG_BYTES`) name it by its PNG bytes, whose encoder settings are therefore frozen.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra.numpy import arrays

from medr2 import BadInput
from medr2.images import (
    PIXELS,
    PNG_BYTES,
    PNG_LEVEL_ENV,
    ImageStore,
    encode_png,
    load_image,
    pixel_sha256,
    png_level,
    sha256_bytes,
)
from medr2.sources.sample.source import put_mask

sys.path.insert(0, str(Path(__file__).parent))
from perturb_fixtures import build_fixture  # noqa: E402
from png_encoders import ENCODERS  # noqa: E402


def _pictures() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, x = np.mgrid[0:48, 0:64]
    grey = ((x * 3 + y * 5) % 256).astype(np.uint8)
    rgb = np.stack([grey, grey[::-1], (x * y % 256).astype(np.uint8)], -1)
    mask = ((x - 32) ** 2 + (y - 24) ** 2) < 200
    return grey, rgb, mask


def _shapes() -> st.SearchStrategy[tuple[int, ...]]:
    hw = st.tuples(st.integers(1, 12), st.integers(1, 12))
    return st.one_of(hw, hw.map(lambda s: (*s, 3)))


pixels = _shapes().flatmap(lambda shape: arrays(np.uint8, shape))


def _documented(arr: np.ndarray) -> str:
    """The pixel identity as docs/bench-format.md defines it, computed here without medr2."""
    header = {"domain": "medr2-image-pixels", "dtype": "uint8", "mode": "L" if arr.ndim == 2 else "RGB",
              "shape": list(arr.shape), "version": 1}
    line = json.dumps(header, sort_keys=True, separators=(",", ":")).encode() + b"\n"
    return hashlib.sha256(line + arr.tobytes(order="C")).hexdigest()


def test_png_bytes_rule_is_pinned(tmp_path: Path) -> None:
    """If this fails, the encoder (Pillow, its zlib, or the settings) now writes other bytes for the same pixels
    under the rule of format 1/2 benches: their deferred images no longer render to the pinned bytes on this
    machine. Formats 1 and 2 freeze these settings; do not update the hashes."""
    grey, rgb, mask = _pictures()
    assert PNG_BYTES.of_array(grey) == "1d568a1079430b2c3a7502c98f632ad7e9a77eb4beb97be0927b9c3b2854092b"
    assert PNG_BYTES.of_array(rgb) == "8970d01052abf2efc3e0817085102f99380aa1df26b589797c0100b732311259"
    assert put_mask(ImageStore(tmp_path, identity=PNG_BYTES), mask).sha256 == (
        "3c2a400c8bc2cdafd6089bd7400b68dee534476094417afbe6dc386bf81d98db")


def test_pixel_identity_is_pinned(tmp_path: Path) -> None:
    """The format 3 identity of fixed pixels; a 1-bit mask PNG is named by the 0/255 grey pixels it decodes to."""
    grey, rgb, mask = _pictures()
    assert PIXELS.of_array(grey) == "7ae27783a3aec11489b1f8497ff2e3ea05971b7fff81b4e183d0a8bb1b57620d"
    assert PIXELS.of_array(rgb) == "948ce936a0885a5294a3574cc120fdcbeab2e54873a34b3abf502bc88eea1cdb"
    ref = put_mask(ImageStore(tmp_path), mask)
    assert ref.sha256 == pixel_sha256(np.where(mask, 255, 0).astype(np.uint8)) == (
        "1f65399aae858c56a6b05c9f24fbf635035b2fed7535330ff682e17f9ef27288")


@given(pixels)
def test_pixel_identity_is_the_documented_hash(arr: np.ndarray) -> None:
    assert pixel_sha256(arr) == _documented(arr) == PIXELS.of_array(arr, b"any bytes: not used")


@given(pixels, st.sampled_from(sorted(ENCODERS)))
def test_pixel_identity_does_not_depend_on_the_encoder(arr: np.ndarray, encoder: str) -> None:
    """Every encoder's file decodes to the same pixels, hence the same identity; the PNG-bytes rule differs."""
    data = ENCODERS[encoder](arr)
    assert PIXELS.of_bytes(data, file=encoder) == pixel_sha256(arr)
    assert PNG_BYTES.of_bytes(data, file=encoder) == sha256_bytes(data)


@given(pixels, pixels)
def test_other_pixels_other_identity(a: np.ndarray, b: np.ndarray) -> None:
    """Mode and shape are hashed: the same bytes as another shape or as RGB are another image."""
    same = a.shape == b.shape and bool(np.array_equal(a, b))
    assert (pixel_sha256(a) == pixel_sha256(b)) == same
    flat = a.reshape(1, -1)
    assert pixel_sha256(flat) != pixel_sha256(a) or flat.shape == a.shape


@given(pixels, st.integers(0, 9))
def test_store_level_changes_bytes_not_names(arr: np.ndarray, level: int) -> None:
    """``MEDR2_PNG_LEVEL`` changes what a format 3 store writes, never the name."""
    import os
    import tempfile

    old = os.environ.get(PNG_LEVEL_ENV)
    try:
        os.environ[PNG_LEVEL_ENV] = str(level)
        assert png_level() == level
        with tempfile.TemporaryDirectory() as d:
            ref = ImageStore(Path(d)).put_array(arr)
            assert ref.sha256 == pixel_sha256(arr) and ref.path == f"images/{ref.sha256}.png"
            assert (Path(d) / ref.path).read_bytes() == encode_png(arr, level)
    finally:
        if old is None:
            os.environ.pop(PNG_LEVEL_ENV, None)
        else:
            os.environ[PNG_LEVEL_ENV] = old


@pytest.mark.parametrize("bad", ["10", "-1", "x", "３"])
def test_bad_png_level_is_named(bad: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PNG_LEVEL_ENV, bad)
    with pytest.raises(BadInput) as e:
        png_level()
    assert e.value.field == PNG_LEVEL_ENV


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The perturbation fixture with every variant rendered into its store."""
    from medr2.perturb.engine import generate_variants

    root = tmp_path_factory.mktemp("store")
    fx = build_fixture(root)
    items, _ = generate_variants(root, fx.cases, fx.items, "all", 0, fx.images, workers=1)
    assert any(it.variant.startswith("V8-") for it in items)
    return root


def test_each_picture_is_stored_once_under_its_pixel_identity(rendered: Path) -> None:
    """Every file is named by the identity of the pixels it decodes to, so no two files hold the same pixels."""
    files = sorted((rendered / "images").glob("*.png"))
    assert len(files) > 50
    for path in files:
        assert path.name == f"{pixel_sha256(load_image(path))}.png"
