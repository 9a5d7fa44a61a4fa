"""Data for the per-item browser: one row per scored (run, mode, item), with thumbnails as data URIs,
serialised as a JSON data island that is safe inside ``<script type="application/json">``.

Limits (documented in docs/report.md): at most ``max_items`` rows (default 1,000), the first in the
order of a stable hash of the item id, so every run and mode shows the same items; thumbnails at most
``THUMB_PX`` pixels on the long side (JPEG); each response cut to ``RESPONSE_CHARS`` characters (the
full text stays in the store).
"""

from __future__ import annotations

import base64
import heapq
import io
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.images import load_image
from medr2.records import Item
from medr2.reporting.inputs import OPTIONAL_SCORE_COLUMNS, SCORE_COLUMNS, RawResponse, RunData, claims_of, score_batches
from medr2.reporting.items import ReportItems, hash_ints, report_items, stable_id_hash

MAX_ITEMS = 1000
THUMB_PX = 256
JPEG_QUALITY = 82
RESPONSE_CHARS = 4000
DIALOGUE_CHARS = 1000  # each text part of the messages the model received (earlier turns can be long)
REPORT_SCORE_COLUMNS = (*SCORE_COLUMNS, *OPTIONAL_SCORE_COLUMNS)

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")


def script_safe_json(obj: Any) -> str:
    """JSON for a ``<script type="application/json">`` island: ``< > &`` and U+2028/2029 as ``\\uXXXX``,
    so no text inside can close the element or open a comment."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    return _JSON_ESCAPE_RE.sub(lambda m: _JSON_ESCAPES[m.group()], text)


def clean_text(text: str | None, limit: int | None = None) -> str:
    """Model text made displayable: lone surrogates replaced, control characters shown as control
    pictures (U+2400 block), cut to ``limit`` characters with a note saying how much was left out."""
    if text is None:
        return ""
    text = text.encode("utf-8", "replace").decode("utf-8")
    text = _CONTROL.sub(lambda m: chr(0x2421) if m.group() == "\x7f" else chr(0x2400 + ord(m.group())), text)
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}\n… [cut: {len(text) - limit:,} more characters]"
    return text


@dataclass
class Thumbnails:
    """Thumbnails as data URIs, each image encoded once."""

    max_px: int = THUMB_PX
    uris: list[str] = field(default_factory=list)
    sizes: list[tuple[int, int]] = field(default_factory=list)  # original (width, height)
    _index: dict[Path, int] = field(default_factory=dict)

    def add(self, path: Path) -> int:
        if path not in self._index:
            self._index[path] = len(self.uris)
            uri, size = thumbnail_uri(path, self.max_px)
            self.uris.append(uri)
            self.sizes.append(size)
        return self._index[path]


def thumbnail_uri(path: Path, max_px: int) -> tuple[str, tuple[int, int]]:
    from PIL import Image

    arr = load_image(path)
    h, w = arr.shape[:2]
    im = Image.fromarray(arr)
    scale = min(1.0, max_px / max(w, h))
    if scale < 1.0:
        im = im.resize((max(1, round(w * scale)), max(1, round(h * scale))), Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    im.save(buf, format="JPEG", quality=JPEG_QUALITY, optimize=False, progressive=False)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii"), (w, h)


def _box(b: Any) -> list[float] | None:
    return [float(v) for v in b] if b is not None else None


def _image_part(part: dict[str, Any], thumbs: Thumbnails, bench_root: Path) -> dict[str, Any]:
    from medr2.renders import image_path

    path = part.get("image")
    try:
        img = thumbs.add(image_path(bench_root, str(path))) if isinstance(path, str) and path else -1
    except (OSError, ValueError, BadInput):
        img = -1
    return {"t": "image", "img": img, "sha": clean_text(str(part.get("sha256") or ""))[:16]}


def dialogue(request: list[Any] | None, thumbs: Thumbnails, bench_root: Path) -> list[dict[str, Any]] | None:
    """The stored rendered messages as the browser shows them: ``[{"role", "parts": [{"t": "text", "x"} |
    {"t": "image", "img": thumbnail index or -1, "sha"}]}]``; None when the run stored no request."""
    if not request:
        return None
    out = []
    for m in request:
        if not isinstance(m, dict):
            continue
        parts = []
        for part in m.get("parts") or []:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "image":
                parts.append(_image_part(part, thumbs, bench_root))
            else:
                parts.append({"t": "text", "x": clean_text(str(part.get("text") or ""), DIALOGUE_CHARS)})
        out.append({"role": clean_text(str(m.get("role") or "?")), "parts": parts})
    return out


def _model_saw_image(mode: str, msgs: list[dict[str, Any]] | None, it: Item) -> bool:
    """Whether the model received an image: from the stored messages, else from the mode (blind: never)."""
    if msgs is not None:
        return any(p["t"] == "image" for m in msgs for p in m["parts"])
    from medr2.run.prompts import MODES

    spec = MODES.get(mode)
    return it.image is not None and (spec.image if spec is not None else True)


CLAIM_MARKS = {"supported": "✓", "contradicted": "✗", "unverifiable": "?"}  # shown after each marked span


def marked_text(text: str | None, claims: list[dict[str, Any]], limit: int = RESPONSE_CHARS) -> list[dict[str, Any]]:
    """``text`` cut into segments for the card: plain ``{"x"}`` and claim spans ``{"x", "c": verdict, "k": kind,
    "val": value, "by": decided_by, "n": note, "d": denied}``, in order, spans as stored in ``claims.parquet``
    (offsets into ``text``; a claim overlapping an earlier one, or past the ``limit`` cut, is not marked; the
    card's claim list still shows it). :func:`clean_text` keeps offsets (one character for one)."""
    full = clean_text(text)
    shown = full[:limit]
    segs: list[dict[str, Any]] = []
    pos = 0
    for c in sorted(claims, key=lambda c: (c["start"], c["end"])):
        a, b = int(c["start"]), int(c["end"])
        if a < pos or b > len(shown) or b <= a:
            continue
        if a > pos:
            segs.append({"x": shown[pos:a]})
        segs.append({"x": shown[a:b], "c": c["verdict"], "k": c["kind"], "val": clean_text(c["value"]),
                     "by": c["decided_by"], "n": clean_text(c["note"]), "d": bool(c["denied"])})
        pos = b
    if pos < len(shown):
        segs.append({"x": shown[pos:]})
    if len(full) > limit:
        segs.append({"x": f"\n… [cut: {len(full) - limit:,} more characters]"})
    return segs


def _claims_view(resp: Any, claims: list[dict[str, Any]] | None) -> dict[str, Any] | None:
    """The card's rationale audit: the response and the server's reasoning text with their claims marked, and
    every claim listed (``{"src", "x", "c", "k", "val", "by", "n", "d"}``); None for a row without claims."""
    if not claims:
        return None
    by_source: dict[str, list[dict[str, Any]]] = {}
    for c in claims:
        by_source.setdefault(str(c["source"]), []).append(c)
    view: dict[str, Any] = {
        "content": marked_text(resp.raw if resp else None, by_source.get("content", [])),
        "reasoning": marked_text(resp.reasoning, by_source["reasoning"]) if resp and resp.reasoning
        and "reasoning" in by_source else None,
        "list": [{"src": c["source"], "x": clean_text(c["text"]), "c": c["verdict"], "k": c["kind"],
                  "val": clean_text(c["value"]), "by": c["decided_by"], "n": clean_text(c["note"]),
                  "d": bool(c["denied"])} for c in sorted(claims, key=lambda c: (c["source"], c["start"], c["end"]))],
    }
    counts = {v: sum(c["verdict"] == v for c in claims) for v in CLAIM_MARKS}
    view["counts"] = counts
    return view


def _several(it: Item, thumbs: Thumbnails, bench_root: Path) -> dict[str, Any]:
    """An item of several images (issue 49): ``more``, each image in the order shown with what it is ("Image 1:
    prior study, 90 days before the current one") and whether it is the current one (drawn with the boxes);
    nothing for an item of one image (its row is as it always was)."""
    refs = it.image_list()
    if len(refs) < 2:
        return {}
    from medr2.renders import image_path
    from medr2.run.prompts import image_role

    return {"more": [{"img": thumbs.add(image_path(bench_root, r.path, r.sha256, record=it.item_id)),
                      "cap": clean_text(f"Image {k}: {image_role(r)}"), "cur": r.role == "current"}
                     for k, r in enumerate(refs, start=1)]}


def _row(run_idx: int, run: RunData, s: dict[str, Any], it: Item, thumbs: Thumbnails,
         bench_root: Path, claims: list[dict[str, Any]] | None) -> dict[str, Any]:
    resp = run.responses.get((s["item_id"], s["mode"]))
    img = -1
    width, height = it.image_width, it.image_height
    if it.image is not None:
        from medr2.renders import image_path

        img = thumbs.add(image_path(bench_root, it.image, it.image_sha256, record=it.item_id))
        width, height = width or thumbs.sizes[img][0], height or thumbs.sizes[img][1]
    msgs = dialogue(resp.request if resp else None, thumbs, bench_root)
    cue = None
    if it.cue is not None:
        cue = {"box": _box(it.cue.box), "kind": it.cue.kind, "drawn": it.cue.drawn}
    return {
        "r": run_idx, "m": s["mode"], "id": s["item_id"], "t": it.task, "s": int(it.stage),
        "v": it.variant, "vd": s.get("verdict") or "", "f": it.form,
        "q": clean_text(it.question), "o": [clean_text(o) for o in it.options],
        "a": clean_text(it.answer), "ab": _box(it.answer_box),
        "ctx": [{"q": clean_text(c.question), "a": clean_text(c.answer), "ok": c.correct} for c in it.context],
        "p": clean_text(s.get("parsed")), "iou": s.get("iou"),
        "x": clean_text(resp.raw if resp else None, RESPONSE_CHARS),
        "xs": resp.status if resp else "missing", "xe": clean_text(resp.error if resp else None, RESPONSE_CHARS),
        "lure": clean_text(it.lure) if it.lure else None,
        "img": img, "w": width, "h": height, "cue": cue,
        "saw": _model_saw_image(str(s["mode"]), msgs, it), "msgs": msgs,
        "cl": _claims_view(resp, claims),
        **_confidence_fields(_confidence_view(run, resp, s)),
        **_several(it, thumbs, bench_root),
    }


def _confidence_fields(found: tuple[float, str] | None) -> dict[str, Any]:
    """A card's confidence: ``cf`` as shown ("0.83 (logprobs)"), ``cv`` the value the confidence filter compares;
    nothing where the answer has none."""
    if found is None:
        return {}
    value, source = found
    return {"cf": f"{value:.2f} ({source})", "cv": round(value, 4)}


def _confidence_view(run: RunData, resp: RawResponse | None, s: dict[str, Any]) -> tuple[float, str] | None:
    """The confidence in the answer given and its source (0.83, "logprobs"), where the run has one: stored per
    answer, or stated in it (``--confidence verbal``); None otherwise (nothing is shown)."""
    if resp is None or resp.status != "ok":
        return None
    if resp.confidence is not None:
        from medr2.scoring.calibration import row_confidence

        value = row_confidence(s.get("parsed"), resp.confidence.get("probs"))
        return None if value is None else (value, str(resp.confidence.get("source")))
    from medr2.run.manifest import eval_option

    if eval_option(run.manifest, "confidence") == "verbal" and resp.raw:
        from medr2.scoring.extract.common import strip_reasoning
        from medr2.scoring.extract.confidence import read_confidence

        stated = read_confidence(strip_reasoning(resp.raw))
        return None if stated is None else (stated, "verbal")
    return None


def is_visual_variant(variant: str | None) -> bool:
    """An image variant (V1 blank, V2 another case's image, ...): its card shows the clean item beside it."""
    return bool(variant) and str(variant).startswith("V")


def _clean_answers(runs: list[RunData], wanted: set[tuple[int, str, str]]
                   ) -> dict[tuple[int, str, str], dict[str, Any]]:
    """The score rows of (run, clean parent id, mode) in ``wanted``: one pass over each run's scores that has any."""
    out: dict[tuple[int, str, str], dict[str, Any]] = {}
    for ri, run in enumerate(runs):
        ids = {i for r, i, _ in wanted if r == ri}
        if not ids:
            continue
        for cols in score_batches(run.scores, REPORT_SCORE_COLUMNS):
            for j, item_id in enumerate(cols["item_id"]):
                key = (ri, str(item_id), str(cols["mode"][j]))
                if item_id in ids and key in wanted:
                    out[key] = {n: cols[n][j] for n in cols}
    return out


def _clean_view(ri: int, mode: str, it: Item, parents: Mapping[str, Item], answers: Mapping[Any, dict[str, Any]],
                thumbs: Thumbnails, bench_root: Path) -> dict[str, Any] | None:
    """For an image variant's card: the clean item's image and answer, and what the model answered on it."""
    if not is_visual_variant(it.variant) or not it.parent_id:
        return None
    parent = parents.get(it.parent_id)
    if parent is None:
        return {"missing": "the clean item is not in the bench"}
    img = -1
    if parent.image is not None:
        from medr2.renders import image_path

        img = thumbs.add(image_path(bench_root, parent.image, parent.image_sha256, record=parent.item_id))
    s = answers.get((ri, parent.item_id, mode))
    return {"id": parent.item_id, "img": img, "a": clean_text(parent.answer), "ab": _box(parent.answer_box),
            "p": clean_text(s.get("parsed")) if s else None, "vd": (s.get("verdict") or "") if s else None}


Candidate = tuple[str, int, str, int, dict[str, Any]]  # (id hash, run, mode, row, score row)


def _select(runs: list[RunData], items: ReportItems, max_items: int, excluded: frozenset[str],
            ) -> tuple[list[Candidate], int, int]:
    """The first ``max_items`` scored rows whose item is held, in (id hash, run, mode, row) order, read batch by
    batch (only the rows kept so far are held); with the count of rows held and of rows not (``excluded``
    ids count as not held)."""
    best: list[Candidate] = []
    total = missing = 0
    for ri, run in enumerate(runs):
        k = 0
        for cols in score_batches(run.scores, REPORT_SCORE_COLUMNS):
            ids = cols["item_id"]
            hex_hashes = [stable_id_hash(str(i)) for i in ids]
            held = items.present(ids, hash_ints(hex_hashes))
            names = list(cols)
            batch: list[Candidate] = []
            for j, (h, ok) in enumerate(zip(hex_hashes, held, strict=True)):
                if not ok or ids[j] in excluded:
                    missing += 1
                    continue
                total += 1
                if max_items and (len(best) < max_items or h <= best[-1][0]):  # else it cannot be among the first
                    batch.append((h, ri, str(cols["mode"][j]), k + j, {}))
            k += len(ids)
            if batch:
                best = heapq.nsmallest(max_items, [*best, *batch], key=lambda c: c[:4])
                for c in best:  # the score rows of the candidates kept from this batch
                    if not c[4] and c[1] == ri and c[3] >= k - len(ids):
                        j = c[3] - (k - len(ids))
                        c[4].update({n: cols[n][j] for n in names})
    return best, total, missing


def browser_data(runs: list[RunData], items: Mapping[str, Item], *, max_items: int = MAX_ITEMS,
                 thumb_px: int = THUMB_PX, progress: Any = None, first: tuple[str, str] | None = None,
                 ) -> dict[str, Any]:
    """The browser's data island. Rows whose item is not in the bench are counted in ``missing_items``.
    ``first``: (run label, mode) whose cards come first (the report's answer: its best model, not whichever run
    sorts first), and among them the image variants, whose cards show the clean item beside the variant.

    The score rows are read batch by batch and only the items shown are fetched (``items`` may be a
    :class:`~medr2.reporting.items.BenchItems` reading the bench by columns)."""
    source = report_items(items)
    excluded: frozenset[str] = frozenset()
    # the first ``max_items`` rows in stable-hash order of the item id: the same items in every run and mode
    while True:
        selected, total, missing = _select(runs, source, max_items, excluded)
        shown = source.fetch({c[4]["item_id"] for c in selected})
        absent = {c[4]["item_id"] for c in selected} - set(shown)
        if not absent:  # an id held by hash only (a 64-bit collision): counted as missing, the next row taken
            break
        excluded |= absent
    lead = next((i for i, r in enumerate(runs) if first and r.label == first[0]), None)

    def order(c: Candidate) -> tuple[Any, ...]:
        it = shown[c[4]["item_id"]]
        favoured = c[1] == lead and c[2] == (first[1] if first else None)
        return (not favoured, c[1], c[2], not (favoured and is_visual_variant(it.variant)), it.stage, it.task, c[0])

    selected.sort(key=order)
    thumbs = Thumbnails(max_px=thumb_px)
    visual = [(c[1], str(c[2]), shown[c[4]["item_id"]]) for c in selected]
    want = {it.parent_id for _, _, it in visual if is_visual_variant(it.variant) and it.parent_id}
    parents: dict[str, Item] = {i: shown[i] for i in want if i in shown}
    if want - set(parents):  # the clean items beside the image variants shown, fetched only if not shown already
        parents |= source.fetch(want - set(parents))
    answers = _clean_answers(runs, {(ri, it.parent_id, m) for ri, m, it in visual
                                    if is_visual_variant(it.variant) and it.parent_id})
    if progress is not None:
        progress.step("item browser (thumbnails)", len(selected))
    claims = [claims_of(r.claims, [(c[4]["item_id"], c[4]["mode"]) for c in selected if c[1] == ri])
              for ri, r in enumerate(runs)]  # of the rows shown only, one pass per run
    rows = []
    for _, ri, _, _, s in selected:
        root = runs[ri].bench_root
        assert root is not None
        row = _row(ri, runs[ri], s, shown[s["item_id"]], thumbs, root, claims[ri].get((s["item_id"], s["mode"])))
        row["clean"] = _clean_view(ri, str(s["mode"]), shown[s["item_id"]], parents, answers, thumbs, root)
        rows.append(row)
        if progress is not None:
            progress.advance()
    return {
        "runs": [{"label": r.label, "model": r.model_key} for r in runs],
        "rows": rows,
        "images": thumbs.uris,
        "total": total,
        "shown": len(rows),
        "missing_items": missing,
        "limits": {"max_items": max_items, "thumb_px": thumb_px, "response_chars": RESPONSE_CHARS,
                   "dialogue_chars": DIALOGUE_CHARS},
    }
