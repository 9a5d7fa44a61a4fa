"""Golden hashes of what a model is shown for a few variants of the perturbation fixture: the
decoded pixels of rendered variant images and the text of variant questions (question, options,
context, answer, lure). Regenerate after a reviewed change with
``.venv/bin/python tests/perturb_golden.py`` (writes ``tests/data/perturb_golden.json``)."""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

from medr2 import Item
from medr2.images import load_image
from medr2.perturb.engine import generate_variants
from medr2.records import canonical_json, jsonable

sys.path.insert(0, str(Path(__file__).parent))
from perturb_fixtures import build_fixture  # noqa: E402

GOLDEN = Path(__file__).parent / "data" / "perturb_golden.json"
CASES = ("fundus_a", "ct_a")
TASKS = ("s1.modality", "s3.abnormal", "s3.finding_type", "s3.lesion_box", "s4.diagnosis", "s2.cued_structure")
IMAGE_VARIANTS = ("V1", "V2", "V3", "V4", "V5", "V6", "V9")
TEXT_VARIANTS = ("T1", "T2", "T3", "T4-plain", "T4-authority", "T5", "T6", "T7", "T8", "V7")


def _pixels(root: Path, it: Item) -> str:
    assert it.image is not None
    arr = load_image(root / it.image)
    return hashlib.sha256(f"{arr.shape}".encode() + arr.tobytes()).hexdigest()


def _text(it: Item) -> str:
    shown = {"question": it.question, "options": it.options, "context": jsonable(it.context), "answer": it.answer,
             "lure": it.lure, "answer_box": jsonable(it.answer_box), "cue": jsonable(it.cue)}
    return hashlib.sha256(canonical_json(shown).encode()).hexdigest()


def compute_golden() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fx = build_fixture(root)
        items, _ = generate_variants(root, fx.cases, fx.items, "all", 0, fx.images, workers=1)
        parents = {it.item_id: it for it in fx.items}
        out: dict[str, str] = {}
        for it in items:
            p = parents[it.parent_id or ""]
            if it.case_id not in CASES or p.task not in TASKS:
                continue
            key = f"{it.case_id}|{p.task}|{p.item_id}|{it.variant}"
            assert f"text|{key}" not in out, key
            if it.variant in IMAGE_VARIANTS or it.variant.startswith("V8-"):
                out[f"image|{key}"] = _pixels(root, it)
            if it.variant in TEXT_VARIANTS or it.variant in IMAGE_VARIANTS:
                out[f"text|{key}"] = _text(it)
        return dict(sorted(out.items()))


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(compute_golden(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")
