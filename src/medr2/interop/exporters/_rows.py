"""Flat rows for exporters: one per item, images as bytes, the dialogue medr2 would send, plus the
round-trip columns."""

from __future__ import annotations

import json
from typing import Any

from medr2.bench.format import Bench
from medr2.interop.roundtrip import CASE_COL, CASE_IMAGE_COL, ITEM_COL, case_for_export, item_for_export
from medr2.records import STAGES, Item

NO_SPLIT = "all"  # HF / TSV split name for items without a split


def split_name(item: Item) -> str:
    return item.split or NO_SPLIT


def answer_text(item: Item) -> str:
    if item.form == "box" and item.answer_box is not None:
        return "[" + ", ".join(f"{v:g}" for v in item.answer_box) + "]"
    return item.answer


def turns(item: Item) -> str:
    """The independent-mode dialogue medr2 sends for ``item`` (its context turns, cue coordinates, question,
    options and instruction; boxes in pixels of the exported image), as JSON ``[{"role", "text"}]``; the
    image (every image of ``images``, in order) belongs to the first user turn."""
    from medr2.models.base import BoxConvention
    from medr2.run.prompts import get_mode, render_messages

    msgs = render_messages(item, mode=get_mode("independent"), history=(), conv=BoxConvention())
    return json.dumps([{"role": m.role, "text": "".join(p.text or "" for p in m.parts if p.type == "text")}
                       for m in msgs], ensure_ascii=False)


def image_columns(bench: Bench, item: Item) -> dict[str, Any]:
    """An item of several images (issue 49): ``images``, the bytes of each in the order shown (the current study,
    also in ``image``, among them), and ``image_roles``, what each is ("prior study, 90 days before the current
    one"); both empty for an item of one image."""
    from medr2.run.prompts import image_role

    refs = item.image_list()
    if len(refs) < 2:
        return {"images": [], "image_roles": []}
    return {"images": [bench.path(r.path).read_bytes() for r in refs], "image_roles": [image_role(r) for r in refs]}


def row(bench: Bench, item: Item) -> dict[str, Any]:
    image = bench.path(item.image).read_bytes() if item.image else None
    case = bench.case(item.case_id)
    case_image = bench.path(case.image).read_bytes() if case.image != item.image else None
    return {
        "item_id": item.item_id, "case_id": item.case_id, "stage": item.stage,
        "stage_name": STAGES.get(item.stage, "imported (outside the four stages)"), "task": item.task,
        "form": item.form, "question": item.question, "options": list(item.options), "answer": answer_text(item),
        "chance": item.chance, "pair_id": item.pair_id, "chain_id": item.chain_id, "step": item.step,
        "variant": item.variant, "parent_id": item.parent_id, "split": item.split, "source": item.source,
        "license": item.license, "access": item.access, "image": image, **image_columns(bench, item),
        "turns": turns(item),
        ITEM_COL: item_for_export(item), CASE_COL: case_for_export(case), CASE_IMAGE_COL: case_image,
    }
