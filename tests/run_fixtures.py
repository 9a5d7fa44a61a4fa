"""A small bench with every form, chains, variants, cues, context turns and splits, written with
the real bench writer (for the run/model tests)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from medr2 import Bench, Case, Item
from medr2.bench import load_bench, write_bench
from medr2.images import ImageStore
from medr2.records import ContextTurn, Cue, item_content_id
from medr2.run.runner import Progress

W, H = 64, 48
MODALITIES = ["CT", "MRI", "X-ray", "Ultrasound"]
DIAGNOSES = ["pneumonia", "normal", "nodule", "effusion"]


def _image(store: ImageStore, seed: int) -> Any:
    rng = np.random.default_rng(seed)
    return store.put_array(rng.integers(0, 255, (H, W), dtype=np.uint8))


def _item(**kw: Any) -> Item:
    base: dict[str, Any] = {"chance": 0.25, "template_id": "t0", "source": "test", "license": "CC0",
                            "image_width": W, "image_height": H}
    base.update(kw)
    base["item_id"] = item_content_id(base)
    return Item(**base)


def make_items(store: ImageStore, n_cases: int) -> tuple[list[Case], list[Item]]:
    cases: list[Case] = []
    items: list[Item] = []
    for c in range(n_cases):
        ref = _image(store, c)
        split = "train" if c % 2 == 0 else "test"
        cid = f"case{c}"
        modality = MODALITIES[c % 4]
        diagnosis = DIAGNOSES[(c // 2) % 4]
        cases.append(Case(case_id=cid, image=ref.path, image_sha256=ref.sha256, width=W, height=H,
                          modality=modality, source="test", license="CC0", patient_id=f"p{c}", split=split,
                          diagnosis=diagnosis, meta={"findings_complete": True}))  # its labels are all the case has
        img = {"case_id": cid, "image": ref.path, "image_sha256": ref.sha256, "split": split}
        chain = f"chain-{cid}"
        answer_letter = "ABCD"[c % 4]
        options = [""] * 4
        others = [m for m in MODALITIES if m != modality]
        for i, let in enumerate("ABCD"):
            options[i] = modality if let == answer_letter else others.pop(0)
        s1 = _item(**img, chain_id=chain, step=1, stage=1, task="s1.modality", form="mcq",
                   question="What is the imaging modality?", options=options, answer=answer_letter)
        box = (8.0 + c % 20, 6.0, 30.0 + c % 20, 26.0)
        s2 = _item(**img, chain_id=chain, step=2, stage=3, task="s3.lesion_box", form="box", chance=0.0,
                   question="Locate the lesion.", options=[], answer="", answer_box=box)
        s3 = _item(**img, chain_id=chain, step=3, stage=3, task="s3.abnormal", form="yesno", chance=0.5,
                   question="Is there an abnormality?", options=[], answer="yes" if c % 3 else "no",
                   pair_id=f"pair-{cid}")
        dx_opts = list(DIAGNOSES)
        s4 = _item(**img, chain_id=chain, step=4, stage=4, task="s4.diagnosis", form="mcq",
                   question="What is the most likely diagnosis?", options=dx_opts,
                   answer="ABCD"[dx_opts.index(diagnosis)])
        multi = _item(**img, stage=4, task="s4.multilabel", form="multi", chance=1 / 15,
                      question="Select all findings present.", options=["mass", "fluid", "air", "fracture"],
                      answer="A,C" if c % 2 else "B")
        report = _item(**img, stage=4, task="s4.report", form="text", chance=0.0,
                       question="Write the report.", options=[], answer=f"Findings: case {c % 2}. Impression: ok.")
        items += [s1, s2, s3, s4, multi, report]
        # variants: a degraded image of the whole chain step 1 and 4; a misleading premise with a lure;
        # a coordinates-only cue; a hint given as an earlier context turn
        noisy = _image(store, 1000 + c)
        nimg = dict(img, image=noisy.path, image_sha256=noisy.sha256)
        for parent in (s1, s4):
            items.append(_item(**{**parent.model_dump(exclude={"item_id"}), **nimg, "variant": "V8-noise-2",
                                  "parent_id": parent.item_id, "seed": 7}))
        wrong = "ABCD"[(dx_opts.index(diagnosis) + 1) % 4]
        items.append(_item(**{**s4.model_dump(exclude={"item_id"}), "variant": "T3", "parent_id": s4.item_id,
                              "question": f"Given the {dx_opts['ABCD'.index(wrong)]} seen here, what is the most "
                                          "likely diagnosis?", "lure": wrong, "chain_id": None, "step": None}))
        items.append(_item(**{**s1.model_dump(exclude={"item_id"}), "variant": "V7", "parent_id": s1.item_id,
                              "chain_id": None, "step": None, "cue": Cue(kind="coords", box=box, drawn=False),
                              "question": "What is the imaging modality of the marked region?"}))
        items.append(_item(**{**s4.model_dump(exclude={"item_id"}), "variant": "T2", "parent_id": s4.item_id,
                              "chain_id": None, "step": None,
                              "context": [ContextTurn(question="What is the imaging modality?", options=options,
                                                      answer=f"{answer_letter}. {modality}")]}))
    return cases, items


def make_bench(root: Path, n_cases: int = 4) -> Bench:
    store = ImageStore(root)
    cases, items = make_items(store, n_cases)
    write_bench(root, cases, items, {"name": "run-test"})
    return load_bench(root)


class InterruptAfter(Progress):
    """Ctrl-C after ``n`` answers were stored (the runner stops cleanly and marks the invocation)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.seen = 0

    def advance(self, n: int = 1, *, error: bool = False, retries: int = 0, skipped: bool = False) -> None:
        self.seen += n
        if self.seen == self.n:
            raise KeyboardInterrupt


def stored_count(db: Path) -> int:
    """Rows in a run store's ``predictions`` table, read-only, while another process may be writing it (0 while
    the store does not exist yet or is locked)."""
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM predictions").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def rewrite_items(root: Path, rows: list[dict[str, Any]], schema: Any = None,
                  row_group_size: int | None = None) -> None:
    """Write ``rows`` as the bench's items table (``schema``: the file's own unless given) and fix the manifest's
    checksums, as a bench written by a buggy tool would be."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from medr2.bench.format import ITEMS_FILE

    path = root / ITEMS_FILE
    schema = schema if schema is not None else pq.read_schema(path)
    write_items_table(root, pa.Table.from_pylist(rows, schema=schema), row_group_size=row_group_size)


def write_items_table(root: Path, table: Any, row_group_size: int | None = None) -> None:
    """Write ``table`` as the bench's items table and fix the manifest's checksums (the record of the writer's
    checks is left as it was: it names the old table)."""
    import json

    import pyarrow.parquet as pq

    from medr2.bench.format import ITEMS_FILE, bench_checksum
    from medr2.images import sha256_file

    path = root / ITEMS_FILE
    pq.write_table(table, path, row_group_size=row_group_size)
    m = json.loads((root / "manifest.json").read_text())
    m["checksums"][ITEMS_FILE] = sha256_file(path)
    m["checksums"]["bench"] = bench_checksum(m["checksums"][ITEMS_FILE], m["checksums"]["cases.parquet"])
    (root / "manifest.json").write_text(json.dumps(m))
