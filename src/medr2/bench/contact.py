"""Contact sheets: a bench's images in a grid with structure boxes, finding boxes and a caption.

Structure boxes are drawn in cyan, finding boxes in red (synthetic) or yellow (real), so a
reader sees at a glance where the ground truth lies and what is synthetic.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from medr2.atomic import atomic_write_bytes
from medr2.errors import BadInput
from medr2.images import load_image
from medr2.records import Case, Item
from medr2.variant_id import VariantId

STRUCTURE_COLOR = (0, 220, 255)
SYNTHETIC_FINDING_COLOR = (255, 40, 40)
REAL_FINDING_COLOR = (255, 220, 0)
TILE = 256
BACKGROUND = (20, 20, 20)  # the tile's margins and caption band
CAPTION_H = 46


def _font() -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    return ImageFont.load_default()


def caption_lines(case: Case) -> list[str]:
    synthetic = any(f.synthetic for f in case.findings)
    lines = [case.case_id, f"{case.modality} {case.plane or ''} {case.body_region or ''}".strip()]
    dx = case.diagnosis or "-"
    lines.append(dx + (" [synthetic lesion]" if synthetic else ""))
    if case.artefact and case.artefact != "none":
        lines[-1] += f" | {case.artefact} {case.artefact_severity}"
    if case.flipped:
        lines[-1] += " | flipped"
    return lines


def draw_case(img: np.ndarray, case: Case, *, tile: int = TILE, title: str | None = None,
              boxes: bool = True) -> Image.Image:
    """One tile: the image fitted into ``tile`` x ``tile`` (:func:`medr2.imaging.fit.fit_image`, its aspect kept)
    with boxes and a caption below."""
    from medr2.imaging.fit import fit_geometry, fit_image

    rgb = np.asarray(Image.fromarray(img).convert("RGB"))
    out = Image.new("RGB", (tile, tile + CAPTION_H), BACKGROUND)
    out.paste(Image.fromarray(fit_image(rgb, tile, tile, fill=BACKGROUND)), (0, 0))
    d = ImageDraw.Draw(out)
    if boxes:
        fit = fit_geometry(rgb.shape[1], rgb.shape[0], tile, tile)
        sx, sy = rgb.shape[1] / case.width, rgb.shape[0] / case.height  # the case's pixels in the image's
        for s in case.structures:
            x1, y1, x2, y2 = fit.box((s.box[0] * sx, s.box[1] * sy, s.box[2] * sx, s.box[3] * sy))
            d.rectangle([x1, y1, x2 - 1, y2 - 1], outline=STRUCTURE_COLOR)
        for f in case.findings:
            x1, y1, x2, y2 = fit.box((f.box[0] * sx, f.box[1] * sy, f.box[2] * sx, f.box[3] * sy))
            color = SYNTHETIC_FINDING_COLOR if f.synthetic else REAL_FINDING_COLOR
            d.rectangle([x1, y1, x2 - 1, y2 - 1], outline=color, width=2)
    lines = caption_lines(case)
    if title:
        lines = [title] + lines[1:]
    for i, line in enumerate(lines[:3]):
        d.text((3, tile + 2 + 14 * i), line[:46], fill=(235, 235, 235), font=_font())
    return out


def grid(tiles: Sequence[Image.Image], cols: int | None = None) -> Image.Image:
    if not tiles:
        raise BadInput("nothing to draw", field="cases")
    cols = cols or min(6, len(tiles))
    rows = (len(tiles) + cols - 1) // cols
    tw, th = tiles[0].size
    sheet = Image.new("RGB", (cols * tw, rows * th), (0, 0, 0))
    for i, t in enumerate(tiles):
        sheet.paste(t, ((i % cols) * tw, (i // cols) * th))
    return sheet


def _save_png(im: Image.Image, out_png: Path | str) -> Path:
    """``im`` as a PNG at ``out_png``, written atomically (a killed command leaves no torn file there)."""
    out = Path(out_png)
    out.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    im.save(buf, format="PNG")
    atomic_write_bytes(out, buf.getvalue())
    return out


def cases_sheet(cases: Sequence[Case], resolve: Callable[[str], Path], out_png: Path | str,
                cols: int | None = None) -> Path:
    """Draw ``cases`` (image paths resolved with ``resolve``) into one PNG."""
    tiles = [draw_case(load_image(resolve(c.image)), c) for c in cases]
    return _save_png(grid(tiles, cols), out_png)


def _spread(cases: Sequence[Case], n: int) -> list[Case]:
    """Up to ``n`` cases spread over the bench (deterministic), one per background first."""
    if len(cases) <= n:
        return list(cases)
    seen: dict[str, Case] = {}
    for c in cases:
        key = str(c.meta.get("background_key", c.source))
        seen.setdefault(key, c)
    chosen = list(seen.values())[:n]
    ids = {c.case_id for c in chosen}
    rest = [c for c in cases if c.case_id not in ids]
    step = max(1, len(rest) // max(1, n - len(chosen)))
    chosen += rest[::step][: n - len(chosen)]
    order = {c.case_id: i for i, c in enumerate(cases)}
    return sorted(chosen, key=lambda c: order[c.case_id])


def contact_sheet(bench_root: Path | str, out_png: Path | str, n: int = 24, case_id: str | None = None) -> Path:
    """A contact sheet of a built bench: ``n`` cases, or one case across its visual variants."""
    from medr2.bench.format import load_bench

    bench = load_bench(bench_root, validate=False)
    if case_id is not None:
        return variant_sheet(bench.case(case_id), bench.items, bench.path, out_png)
    if not bench.cases:
        raise BadInput("the bench has no cases", file=str(bench_root))
    return cases_sheet(_spread(bench.cases, n), bench.path, out_png)


def variant_sheet(case: Case, items: Sequence[Item], resolve: Callable[[str], Path], out_png: Path | str) -> Path:
    """One case: its clean image, then one tile per distinct image among its visual (V*) variants."""
    tiles = [draw_case(load_image(resolve(case.image)), case, title=f"{case.case_id} clean")]
    seen = {case.image_sha256}
    for it in sorted(items, key=lambda i: (i.variant, i.item_id)):
        if it.case_id != case.case_id or VariantId.lenient(it.variant).family != "V" or it.image is None:
            continue
        key = it.image_sha256 or it.image
        if key in seen:
            continue
        seen.add(key)
        img = load_image(resolve(it.image))
        # boxes refer to the clean geometry; draw them only where the variant keeps it: not on another case's
        # image (every cross-case variant records ``other_case``: V2, V3, V12), a blanked (V1) or a mirrored (V9) one
        moved = "other_case" in it.perturbation or VariantId.lenient(it.variant).code in ("V1", "V9")
        same_geom = img.shape[1] == case.width and img.shape[0] == case.height and not moved
        tiles.append(draw_case(img, case, title=f"{it.variant}", boxes=same_geom))
    return _save_png(grid(tiles), out_png)
