"""lmms-eval task utilities for a medr2 export (copied verbatim as ``utils.py`` into the task folder).

Self-contained (no medr2 import) so it runs inside an lmms-eval installation. Scoring follows medr2's
rule-based extraction in simplified form: MCQ letter, yes/no, set of letters, box IoU >= 0.5, or a
normalised exact match for text.
"""

import re


def medr2_doc_to_visual(doc):
    img = doc.get("image")
    if img is None:
        return []
    return [img.convert("RGB")]


def medr2_doc_to_text(doc, lmms_eval_specific_kwargs=None):
    kw = lmms_eval_specific_kwargs or {}
    lines = [doc["question"]]
    for i, opt in enumerate(doc.get("options") or []):
        lines.append(f"{chr(65 + i)}. {opt}")
    hint = {
        "mcq": "Answer with the option's letter.",
        "yesno": "Answer yes or no.",
        "multi": "Answer with all correct letters, separated by commas.",
        "box": "Answer with the box as [x1, y1, x2, y2] in pixels.",
        "text": "",
    }.get(doc.get("form"), "")
    return kw.get("pre_prompt", "") + "\n".join(lines) + ("\n" + hint if hint else "") + kw.get("post_prompt", "")


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

    def norm(s):
        return " ".join(re.sub(r"[^a-z0-9 ]", " ", s.lower()).split())

    return 1.0 if norm(resp) == norm(ans) else 0.0


def medr2_process_results(doc, results):
    score = medr2_score(doc, results[0] if results else "")
    return {"accuracy": {"task": doc["task"], "stage": doc["stage"], "score": score}}


def medr2_aggregate(results):
    """Macro accuracy: mean over stages of the mean over each stage's tasks (as medr2 reports it)."""
    per_task = {}
    for r in results:
        per_task.setdefault((r["stage"], r["task"]), []).append(r["score"])
    per_stage = {}
    for (stage, _), scores in per_task.items():
        per_stage.setdefault(stage, []).append(sum(scores) / len(scores))
    if not per_stage:
        return 0.0
    return sum(sum(v) / len(v) for v in per_stage.values()) / len(per_stage)
