"""A contact sheet: one question of one case across its visual variants, as a single PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from medr2.atomic import atomic_write_bytes
from medr2.bench.format import Bench
from medr2.errors import BadInput
from medr2.images import encode_png, load_image
from medr2.perturb.registry import visual_codes
from medr2.records import Item
from medr2.variant_id import variant_code

TILE = 256
CAPTION = 46


def _code(it: Item) -> str:
    return variant_code(it.variant)


def pick_parent(bench: Bench, case_id: str | None = None) -> tuple[Item, list[Item]]:
    """The clean item (of ``case_id`` if given) with the most visual variant codes, and those variants."""
    visual = visual_codes()
    by_parent: dict[str, list[Item]] = {}
    for it in bench.items:
        if it.parent_id and _code(it) in visual:
            by_parent.setdefault(it.parent_id, []).append(it)
    clean = {it.item_id: it for it in bench.items if it.variant == "clean"}
    best: tuple[int, int, str] | None = None
    for pos, (pid, vs) in enumerate(by_parent.items()):
        parent = clean.get(pid)
        if parent is None or (case_id and parent.case_id != case_id):
            continue
        score = (len({_code(v) for v in vs}), -pos, pid)
        if best is None or score[:2] > best[:2]:
            best = score
    if best is None:
        raise BadInput("no clean item with visual variants" + (f" for case {case_id}" if case_id else ""),
                       file=str(bench.root), field="--case")
    pid = best[2]
    variants = sorted(by_parent[pid], key=lambda v: (visual.index(_code(v)), v.variant))
    return clean[pid], variants


def _caption(it: Item) -> str:
    ans = it.answer_text if it.form == "mcq" and it.options else (it.answer or "box")
    note = {"V7": "coords in text"}.get(_code(it), "")
    return f"{it.variant}  ans: {ans[:18]}" + (f"\n{note}" if note else f"\n{it.meta.get('scoring', '')}")


def _tile(bench: Bench, it: Item, font: ImageFont.ImageFont | ImageFont.FreeTypeFont) -> Image.Image:
    canvas = Image.new("RGB", (TILE, TILE + CAPTION), (255, 255, 255))
    if it.image:
        arr = load_image(bench.path(it.image), mode="RGB")
        img = Image.fromarray(arr)
        img.thumbnail((TILE, TILE), Image.Resampling.LANCZOS)
        canvas.paste(img, ((TILE - img.width) // 2, (TILE - img.height) // 2))
    ImageDraw.Draw(canvas).multiline_text((4, TILE + 4), _caption(it), fill=(0, 0, 0), font=font, spacing=2)
    return canvas


def contact_sheet(bench: Bench, out: Path, case_id: str | None = None, columns: int = 5) -> tuple[Item, list[Item]]:
    """Write the sheet for the chosen item to ``out`` (deterministic PNG); returns (parent, variants)."""
    parent, variants = pick_parent(bench, case_id)
    font = ImageFont.load_default()
    tiles = [_tile(bench, it, font) for it in (parent, *variants)]
    rows = (len(tiles) + columns - 1) // columns
    header = 40
    sheet = Image.new("RGB", (columns * TILE, header + rows * (TILE + CAPTION)), (255, 255, 255))
    d = ImageDraw.Draw(sheet)
    d.text((6, 4), f"case {parent.case_id}  task {parent.task}", fill=(0, 0, 0), font=font)
    d.text((6, 20), parent.question[:150], fill=(0, 0, 0), font=font)
    for i, t in enumerate(tiles):
        sheet.paste(t, ((i % columns) * TILE, header + (i // columns) * (TILE + CAPTION)))
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out, encode_png(np.asarray(sheet)))
    return parent, variants
