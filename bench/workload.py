"""The client-benchmark workload: a bench of N items, each with its own distinct PNG.

Images are written through ``medr2.images.ImageStore`` and the bench through
``medr2.bench.format.write_bench``, so ``medr2 eval`` reads it like any other bench.

    .venv/bin/python bench/workload.py --out /tmp/medr2-client-bench --n 1000 [--size 256]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from medr2.bench.format import load_bench, write_bench
from medr2.images import ImageStore
from medr2.records import Case, Item, item_content_id

MODALITIES = ["CT", "MRI", "X-ray", "Ultrasound"]


def _image(n: int, size: int, seed: int) -> np.ndarray:
    """A smooth gradient plus noise (a PNG of realistic size for ``size``), distinct per ``n``."""
    rng = np.random.default_rng([seed, n])
    yy, xx = np.mgrid[0:size, 0:size]
    base = (xx * (n % 7 + 1) + yy * (n % 5 + 1)) % 256
    return np.clip(base + rng.normal(0, 24, (size, size)), 0, 255).astype(np.uint8)


def make_workload(out: Path, n: int = 1000, size: int = 256, seed: int = 0) -> Path:
    """Write (or reuse, when it already holds ``n`` items) the bench at ``out``."""
    if (out / "manifest.json").exists():
        b = load_bench(out, validate=False)
        if len(b.items) == n:
            return out
        raise SystemExit(f"{out} holds another bench ({len(b.items)} items); pick another --out")
    store = ImageStore(out)
    cases: list[Case] = []
    items: list[Item] = []
    for i in range(n):
        ref = store.put_array(_image(i, size, seed))
        modality = MODALITIES[i % 4]
        cid = f"case{i:05d}"
        cases.append(Case(case_id=cid, image=ref.path, image_sha256=ref.sha256, width=size, height=size,
                          modality=modality, source="bench", license="CC0", patient_id=f"p{i}", split="test"))
        fields = {"case_id": cid, "stage": 1, "task": "s1.modality", "form": "mcq",
                  "question": f"What is the imaging modality of image {i}?", "options": MODALITIES,
                  "answer": "ABCD"[i % 4], "chance": 0.25, "image": ref.path, "image_sha256": ref.sha256,
                  "image_width": size, "image_height": size, "template_id": "t0", "split": "test",
                  "source": "bench", "license": "CC0"}
        items.append(Item(item_id=item_content_id(fields), **fields))
    write_bench(out, cases, items, {"name": "client-bench", "seed": seed})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=Path("/tmp/medr2-client-bench"))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    root = make_workload(a.out, a.n, a.size, a.seed)
    pngs = list((root / "images").glob("*.png"))
    print(f"{root}: {a.n} items, {len(pngs)} images, mean PNG {sum(p.stat().st_size for p in pngs) / len(pngs):,.0f} B")


if __name__ == "__main__":
    main()
