"""Golden tests: any change to a rendered variant image or variant text shows up here and must be
reviewed (then regenerate with ``.venv/bin/python tests/perturb_golden.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from perturb_golden import GOLDEN, compute_golden  # noqa: E402


def test_variant_images_and_texts_match_golden() -> None:
    expected = json.loads(GOLDEN.read_text("utf-8"))
    got = compute_golden()
    assert len(expected) > 100
    changed = sorted(k for k in expected.keys() | got.keys() if expected.get(k) != got.get(k))
    assert not changed, f"{len(changed)} rendered variant(s) changed, e.g. {changed[:8]}"
