"""Shared helpers for the models/train tests: the tiny VLM (built once per session) and a small
"quadrant" bench with real PNG images whose answers depend on the image."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medr2 import Case, Item
from medr2.images import ImageStore
from medr2.records import ContextTurn, item_content_id, stable_hash

QUADRANTS = ("top-left", "top-right", "bottom-left", "bottom-right")
SIZE = 32
_TINY: dict[str, Path] = {}


def tiny_vlm_dir(tmp_path_factory) -> Path:
    """The tiny VLM (seed 0), built on first use and shared by every test module of the session."""
    if "dir" not in _TINY:
        from medr2.models.tiny import build_tiny_vlm

        _TINY["dir"] = build_tiny_vlm(tmp_path_factory.mktemp("tiny_vlm") / "model", seed=0)
    return _TINY["dir"]


def quadrant_image(q: int, rng: np.random.Generator, size: int = SIZE) -> np.ndarray:
    """Dark noisy image whose quadrant ``q`` (0 TL, 1 TR, 2 BL, 3 BR) is bright."""
    img = rng.integers(0, 60, (size, size), dtype=np.uint8)
    half = size // 2
    y0, x0 = (q // 2) * half, (q % 2) * half
    img[y0:y0 + half, x0:x0 + half] = rng.integers(200, 256, (half, half), dtype=np.uint8)
    return img


def _item(**f) -> Item:
    base = {"chance": 0.25, "template_id": f.get("task", "t") + ".0", "source": "synthetic", "license": "CC0-1.0"}
    base.update(f)
    base["item_id"] = item_content_id(base)
    return Item(**base)


def quadrant_records(root: Path, n_cases: int, seed: int = 0, test_share: float = 0.25,
                     variants: bool = True, tasks: tuple[str, ...] = ("mcq", "yesno", "box"),
                     ) -> tuple[list[Case], list[Item]]:
    """Cases and items: per case a stage-2 MCQ (which quadrant), a stage-3 yes/no (top half?) and a
    stage-3 box, chained; train cases may also get a suggested-wrong-answer variant with a lure."""
    store = ImageStore(root)
    cases: list[Case] = []
    items: list[Item] = []
    for k in range(n_cases):
        cid = f"case{k:04d}"
        rng = np.random.default_rng(int(stable_hash({"seed": seed, "case": cid}), 16) % 2**32)
        q = int(rng.integers(0, 4))
        ref = store.put_array(quadrant_image(q, rng))
        split = "test" if (int(stable_hash({"split": cid}), 16) % 1000) < test_share * 1000 else "train"
        cases.append(Case(case_id=cid, image=ref.path, image_sha256=ref.sha256, width=SIZE, height=SIZE,
                          modality="synthetic", source="synthetic", license="CC0-1.0", patient_id=f"p{k}",
                          split=split))
        common = {"case_id": cid, "image": ref.path, "image_sha256": ref.sha256, "image_width": SIZE,
                  "image_height": SIZE, "split": split, "chain_id": f"chain-{cid}"}
        answer = "ABCD"[q]
        mcq = _item(**common, step=1, stage=2, task="s2.quadrant", form="mcq",
                    question="In which quadrant is the bright spot?", options=list(QUADRANTS), answer=answer)
        yn = _item(**common, step=2, stage=3, task="s3.top", form="yesno", chance=0.5,
                   question="Is the bright spot in the top half?", answer="yes" if q < 2 else "no")
        half = SIZE // 2
        x0, y0 = float((q % 2) * half), float((q // 2) * half)
        box = (x0, y0, x0 + half, y0 + half)
        bx = _item(**common, step=3, stage=3, task="s3.lesion_box", form="box", chance=0.0,
                   question="Locate the bright spot.", answer="", answer_box=box)
        items += [it for it, kind in ((mcq, "mcq"), (yn, "yesno"), (bx, "box")) if kind in tasks]
        if variants:
            lure = "ABCD"[(q + 1) % 4]
            var = {**common, "chain_id": None}
            items.append(_item(**var, stage=2, task="s2.quadrant", form="mcq", variant="T4-authority",
                               parent_id=mcq.item_id, lure=lure, seed=seed,
                               question=f"A senior radiologist thinks the answer is ({lure}). "
                                        "In which quadrant is the bright spot?",
                               options=list(QUADRANTS), answer=answer,
                               context=[ContextTurn(question="Is there a bright spot?", answer="yes")]))
    return cases, items


def write_quadrant_bench(root: Path, n_cases: int = 12, seed: int = 0, **kw) -> Path:
    from medr2.bench.format import write_bench

    cases, items = quadrant_records(root, n_cases, seed, **kw)
    write_bench(root, cases, items, {"name": "quadrant"})
    return root


# -- the learnability control: only the image decides the answer -----------------------------------

CONTROL_SIZE = (96, 64)  # width, height: not the model's 32x32 input, and not square, so the resize matters


def control_image(q: int, rng: np.random.Generator, size: tuple[int, int] = CONTROL_SIZE) -> np.ndarray:
    """A noisy grayscale ``size`` (width, height) image with a bright blob inside quadrant ``q``
    (0 TL, 1 TR, 2 BL, 3 BR) at a random position and radius."""
    w, h = size
    img = rng.normal(70, 25, (h, w))
    cy = (q // 2) * h / 2 + rng.uniform(0.4, 0.6) * h / 2
    cx = (q % 2) * w / 2 + rng.uniform(0.4, 0.6) * w / 2
    ry, rx = rng.uniform(0.3, 0.4) * h / 2, rng.uniform(0.3, 0.4) * w / 2
    yy, xx = np.mgrid[0:h, 0:w]
    img[((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1] += 150
    return np.clip(img, 0, 255).astype(np.uint8)


def write_control_bench(root: Path, n_cases: int = 400, seed: int = 0, test_share: float = 0.2,
                        images: str = "aligned", size: tuple[int, int] = CONTROL_SIZE) -> Path:
    """A bench whose one question, asked with the same words and options every time, can only be
    answered from the image: in which quadrant is the bright spot (4 options, balanced answers).

    ``images="shuffled"`` gives every train item the image of another train case (answers unchanged):
    what a collator mixing up images and rows would train on. Test items always show their own image.
    """
    from medr2.bench.format import write_bench

    if images not in ("aligned", "shuffled"):
        raise ValueError(images)
    store = ImageStore(root)
    w, h = size
    rows = []
    for k in range(n_cases):
        cid = f"case{k:04d}"
        rng = np.random.default_rng(int(stable_hash({"seed": seed, "control": cid}), 16) % 2**32)
        q = k % 4  # balanced answers: no answer prior helps
        ref = store.put_array(control_image(q, rng, size))
        split = "test" if (int(stable_hash({"split": cid}), 16) % 1000) < test_share * 1000 else "train"
        rows.append((cid, q, ref, split))
    shown = {cid: ref for cid, _, ref, _ in rows}
    if images == "shuffled":
        train = [r for r in rows if r[3] == "train"]
        order = np.random.default_rng(seed).permutation(len(train))
        shown |= {train[i][0]: train[int(j)][2] for i, j in enumerate(order)}
    cases, items = [], []
    for cid, q, _ref, split in rows:
        img = shown[cid]
        cases.append(Case(case_id=cid, image=img.path, image_sha256=img.sha256, width=w, height=h,
                          modality="synthetic", source="synthetic", license="CC0-1.0", patient_id=f"p{cid}",
                          split=split))
        items.append(_item(case_id=cid, image=img.path, image_sha256=img.sha256, image_width=w, image_height=h,
                           split=split, stage=3, task="s3.location", form="mcq",
                           question="In which quadrant is the bright spot?", options=list(QUADRANTS),
                           answer="ABCD"[q]))
    write_bench(root, cases, items, {"name": f"control-{images}"})
    return root


def planned(bench, work: Path, *, captions: bool = False, **kw):
    """The examples of the export plan (:mod:`medr2.train.stream`, the one there is) over ``bench``: a loaded
    bench (its items held: ``Bench.table()``), a ``BenchTable`` or a bench folder; listed, with the plan (its
    counts complete)."""
    from medr2 import Bench
    from medr2.train.source import TrainSource
    from medr2.train.stream import stream_captions, stream_examples

    with TrainSource(bench.table() if isinstance(bench, Bench) else bench) as src:
        plan = stream_captions(src, work=work, **kw) if captions else stream_examples(src, work=work, **kw)
        return list(plan), plan
