"""Contact sheets: one question of one case across its visual variants, or the look-alike pairs of a bench (the
variants with the role ``pairs``, V12), as a single PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from medr2.atomic import atomic_write_bytes
from medr2.bench.format import Bench
from medr2.errors import BadInput
from medr2.images import encode_png, load_image
from medr2.imaging.fit import fit_image
from medr2.perturb.registry import item_roles, visual_codes
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
    if isinstance(it.meta.get("similarity"), float):
        note = f"look-alike: {it.meta['similarity']:.3f}"
    return f"{it.variant}  ans: {ans[:18]}" + (f"\n{note}" if note else f"\n{it.meta.get('scoring', '')}")


def _tile(bench: Bench, it: Item, font: ImageFont.ImageFont | ImageFont.FreeTypeFont) -> Image.Image:
    canvas = Image.new("RGB", (TILE, TILE + CAPTION), (255, 255, 255))
    if it.image:
        arr = load_image(bench.path(it.image), mode="RGB")
        canvas.paste(Image.fromarray(fit_image(arr, TILE, TILE, fill=(255, 255, 255), resample="lanczos")), (0, 0))
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


def look_alike_pairs(bench: Bench, n: int) -> list[tuple[Item, Item]]:
    """The ``n`` most alike (clean parent, variant) pairs among the items with the role ``pairs`` (by their
    ``meta["similarity"]``, then item id), each two cases once (the first question asked of them)."""
    clean = {it.item_id: it for it in bench.items if it.variant == "clean"}
    kids = [it for it in bench.items if it.parent_id in clean and "pairs" in item_roles(it.variant, it.roles, it.meta)]
    kids.sort(key=lambda it: (-float(it.meta.get("similarity") or 0.0), it.item_id))
    out: list[tuple[Item, Item]] = []
    seen: set[frozenset[str]] = set()
    for it in kids:
        cases = frozenset({it.case_id, str(it.perturbation.get("other_case", it.item_id))})
        if cases not in seen:
            seen.add(cases)
            out.append((clean[str(it.parent_id)], it))
        if len(out) == n:
            break
    if not out:
        raise BadInput("no look-alike pairs (build with --variants V12)", file=str(bench.root), field="--pairs")
    return out


def pairs_sheet(bench: Bench, out: Path, n: int = 6, columns: int = 4) -> list[tuple[Item, Item]]:
    """Write the ``n`` most alike look-alike pairs to ``out`` (deterministic PNG), two pairs a row: each the clean
    item's image and answer, then the other case's image, its answer and the similarity; returns the pairs."""
    pairs = look_alike_pairs(bench, n)
    font = ImageFont.load_default()
    per_row = max(1, columns // 2)
    rows = (len(pairs) + per_row - 1) // per_row
    line = 16
    block = 2 * line + TILE + CAPTION
    sheet = Image.new("RGB", (per_row * 2 * TILE, rows * block), (255, 255, 255))
    d = ImageDraw.Draw(sheet)
    for i, (parent, kid) in enumerate(pairs):
        x, y = (i % per_row) * 2 * TILE, (i // per_row) * block
        d.text((x + 6, y + 2), f"{parent.case_id} / {kid.perturbation.get('other_case', '?')}  {parent.task}",
               fill=(0, 0, 0), font=font)
        d.text((x + 6, y + 2 + line), parent.question[:80], fill=(0, 0, 0), font=font)
        sheet.paste(_tile(bench, parent, font), (x, y + 2 * line))
        sheet.paste(_tile(bench, kid, font), (x + TILE, y + 2 * line))
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(out, encode_png(np.asarray(sheet)))
    return pairs
