"""The image store keeps each picture once, and the PNG bytes of a picture are fixed.

The bytes matter beyond disk: an image's name is the sha256 of its bytes, and that name is hashed into
the item ids and into the seeds of the seeded renders (V4 fill, V6 decoy place, V8 kind and noise), and
the request hashes of a run hash the image sha256. A different encoder (zlib level, filter, library) on
the same pixels therefore changes item ids and the pixels of seeded variants of a rebuilt bench
(measured in docs/benchmarks.md, "Image bytes"); it is a bench-format decision, not a tuning knob.
"""

from __future__ import annotations

import hashlib
import io
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from medr2.images import ImageStore, encode_png, load_image, sha256_bytes
from medr2.sources.sample.source import put_mask

sys.path.insert(0, str(Path(__file__).parent))
from perturb_fixtures import build_fixture  # noqa: E402


def _pictures() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, x = np.mgrid[0:48, 0:64]
    grey = ((x * 3 + y * 5) % 256).astype(np.uint8)
    rgb = np.stack([grey, grey[::-1], (x * y % 256).astype(np.uint8)], -1)
    mask = ((x - 32) ** 2 + (y - 24) ** 2) < 200
    return grey, rgb, mask


def test_png_bytes_of_fixed_pixels_are_pinned(tmp_path: Path) -> None:
    """If this fails, the encoder (Pillow, its zlib, or the settings) now writes other bytes for the same
    pixels: every rebuilt bench gets other item ids and other seeded variant pixels (see the module
    docstring). Decide that as a bench-format change (docs/bench-format.md), do not just update the hashes."""
    grey, rgb, mask = _pictures()
    assert sha256_bytes(encode_png(grey)) == "1d568a1079430b2c3a7502c98f632ad7e9a77eb4beb97be0927b9c3b2854092b"
    assert sha256_bytes(encode_png(rgb)) == "8970d01052abf2efc3e0817085102f99380aa1df26b589797c0100b732311259"
    assert put_mask(ImageStore(tmp_path), mask).sha256 == (
        "3c2a400c8bc2cdafd6089bd7400b68dee534476094417afbe6dc386bf81d98db")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The perturbation fixture with every variant rendered into its store."""
    from medr2.perturb.engine import generate_variants

    root = tmp_path_factory.mktemp("store")
    fx = build_fixture(root)
    items, _ = generate_variants(root, fx.cases, fx.items, "all", 0, fx.images, workers=1)
    assert any(it.variant.startswith("V8-") for it in items)
    return root


def test_each_picture_is_stored_once_under_the_hash_of_its_bytes(rendered: Path) -> None:
    """Every file is named by the sha256 of its bytes; re-encoding its decoded pixels gives the same bytes
    (so the same pixels can never be stored under two names); no two files decode to the same pixels."""
    files = sorted((rendered / "images").glob("*.png"))
    assert len(files) > 50
    by_pixels: dict[str, str] = {}
    for path in files:
        data = path.read_bytes()
        assert path.name == f"{sha256_bytes(data)}.png"
        with Image.open(io.BytesIO(data)) as im:
            mode = im.mode
        if mode == "1":
            again = put_mask(ImageStore(rendered), load_image(path, mode="L") > 127).path
            assert again == f"images/{path.name}"
        else:
            assert mode in ("L", "RGB"), (path.name, mode)
            assert encode_png(load_image(path)) == data, path.name
        arr = load_image(path)
        key = hashlib.sha256(f"{mode}{arr.shape}".encode() + arr.tobytes()).hexdigest()
        assert key not in by_pixels, f"{path.name} and {by_pixels[key]} hold the same pixels"
        by_pixels[key] = path.name
