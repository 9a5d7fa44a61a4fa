"""lmms-eval task utilities for a medr2 export (copied verbatim as ``utils.py`` into the task folder).

Self-contained (no medr2 import) so it runs inside an lmms-eval installation. Each doc carries
``turns``: the dialogue medr2 sends for the item (context turns, cue coordinates, question, options,
instruction). Chat models get it as messages (``medr2_doc_to_messages``), simple models as one text
(``medr2_doc_to_text``: earlier turns written out before the question). Scoring follows medr2's
rule-based extraction in simplified form: MCQ letter, yes/no, set of letters, box IoU >= 0.5 (pixels of
the image sent), or medr2's normalised exact match for a short text answer (lower case, punctuation to
spaces, articles dropped).

Metrics: ``accuracy`` is medr2's headline number: clean items only, yes/no twins sharing a ``pair_id``
count as one unit (right only if both are right), per-task accuracy averaged per stage (report tasks left
out: medr2 scores reports with ROUGE/BLEU/METEOR) and the stages averaged. ``item_accuracy`` is the plain
mean over every doc (all variants).
"""

import json
import math
import re

REPORT_TASKS = {"s4.report"}  # medr2.records.REPORT_TASKS


def medr2_doc_to_visual(doc):
    several = doc.get("images") or []  # an item of several images: every one, in the order shown
    if several:
        return [im.convert("RGB") for im in several]
    img = doc.get("image")
    if img is None:
        return []
    return [img.convert("RGB")]


def _turns(doc):
    return json.loads(doc["turns"])


def medr2_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = lmms_eval_specific_kwargs or {}
    turns = _turns(doc)
    lines = []
    for t in turns[:-1]:
        lines.append(t["text"] if t["role"] != "assistant" else "Answer: " + t["text"])
    lines.append(turns[-1]["text"])
    return kw.get("pre_prompt", "") + "\n".join(lines) + kw.get("post_prompt", "")


def medr2_doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    kw = lmms_eval_specific_kwargs or {}
    turns = _turns(doc)
    visuals = medr2_doc_to_visual(doc)
    last_user = max(i for i, t in enumerate(turns) if t["role"] == "user")
    messages, image_given = [], False
    for i, t in enumerate(turns):
        text = t["text"]
        if i == last_user:
            text = kw.get("pre_prompt", "") + text + kw.get("post_prompt", "")
        content = []
        if t["role"] == "user" and not image_given:
            content += [{"type": "image", "url": v} for v in visuals]
            image_given = True
        content.append({"type": "text", "text": text})
        messages.append({"role": t["role"], "content": content})
    return messages


def _letters(text, n):
    valid = {chr(65 + i) for i in range(n)}
    return [c for c in re.findall(r"\b([A-Z])\b", text.upper()) if c in valid]


def _iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def medr2_score(doc, response):
    form, ans, resp = doc.get("form"), str(doc["answer"]), str(response).strip()
    if form == "mcq":
        found = _letters(resp, len(doc.get("options") or []))
        return 1.0 if found and found[0] == ans.upper() else 0.0
    if form == "multi":
        return 1.0 if sorted(set(_letters(resp, len(doc.get("options") or [])))) == sorted(ans.split(",")) else 0.0
    if form == "yesno":
        m = re.search(r"\b(yes|no)\b", resp.lower())
        return 1.0 if m and m.group(1) == ans.lower() else 0.0
    if form == "box":
        nums = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", resp)[:4]]
        ref = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", ans)[:4]]
        return 1.0 if len(nums) == 4 and len(ref) == 4 and _iou(nums, ref) >= 0.5 else 0.0

    def norm(s):  # medr2.scoring.shortanswer.normalize_answer
        s = re.sub(r"[^\w\s]", " ", s.lower()).replace("_", " ")
        return " ".join(re.sub(r"\b(?:a|an|the)\b", " ", s).split() or s.split())  # only articles: kept

    return 1.0 if norm(resp) == norm(ans) else 0.0


def medr2_process_results(doc, results):
    score = medr2_score(doc, results[0] if results else "")
    rec = {"item_id": doc["item_id"], "task": doc["task"], "stage": doc["stage"], "form": doc["form"],
           "variant": doc["variant"], "pair_id": doc["pair_id"], "score": score}
    return {"accuracy": rec, "item_accuracy": score}


def medr2_aggregate(results):
    """medr2's accuracy: clean items, yes/no pairs as units, macro over tasks within a stage, then stages."""
    units = {}
    for r in results:
        if r["variant"] != "clean":
            continue
        key = ("pair", r["pair_id"]) if r["form"] == "yesno" and r["pair_id"] else ("item", r["item_id"])
        u = units.setdefault(key, {"stage": r["stage"], "task": r["task"], "form": r["form"], "ok": True})
        u["ok"] = u["ok"] and r["score"] == 1.0
    per_task = {}
    for u in units.values():
        if u["task"] not in REPORT_TASKS:
            per_task.setdefault((u["stage"], u["task"]), []).append(1.0 if u["ok"] else 0.0)
    per_stage = {}
    for (stage, _), scores in per_task.items():
        per_stage.setdefault(stage, []).append(sum(scores) / len(scores))
    if not per_stage:
        return math.nan
    return sum(sum(v) / len(v) for v in per_stage.values()) / len(per_stage)
