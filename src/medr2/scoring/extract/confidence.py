"""Verbalised confidence: what an answer says about its own certainty ("Confidence: 80%", "confidence 0.8",
"I'm fairly sure", "信心：80%"), read by the same structured reader as the answer (``medr2 eval --confidence
verbal`` asks for it: ``medr2.run.prompts.VERBAL_CONFIDENCE_INSTRUCTION``). A number wins over words; the last
statement wins.

Words map to fixed probabilities (:data:`VERBAL_WORDS`, from the usual verbal-probability scales): a word is
read only where no number is given, and only as the answer's own certainty ("I am fairly sure"), never inside
the medical content ("likely pneumonia" states a diagnosis, not the model's confidence).
"""

from __future__ import annotations

import re

_NUMBER = re.compile(
    r"(?i:\bconfidence(?:\s+level)?\s*(?:[:=：]|is|of)?\s*(?:about|around|~|approximately)?\s*)"
    r"(\d{1,3}(?:\.\d+)?)\s*(%|percent|/\s*100|/\s*10\b)?"
    r"|(?:信心|置信度|把握)\s*[:：]?\s*(\d{1,3}(?:\.\d+)?)\s*(%|％)?"
)
# the answer's own certainty in words -> probability (highest first where phrases overlap)
VERBAL_WORDS: dict[str, float] = {
    "completely sure": 0.99, "absolutely sure": 0.99, "absolutely certain": 0.99, "certain": 0.95,
    "very confident": 0.9, "very sure": 0.9, "highly confident": 0.9, "confident": 0.8, "quite sure": 0.8,
    "fairly sure": 0.7, "fairly confident": 0.7, "reasonably sure": 0.7, "reasonably confident": 0.7,
    "somewhat sure": 0.6, "somewhat confident": 0.6, "moderately confident": 0.6,
    "not very sure": 0.35, "not very confident": 0.35, "not sure": 0.3, "not confident": 0.3, "unsure": 0.3,
    "not at all sure": 0.1, "just guessing": 0.2, "a guess": 0.2,
}
_WORDS = re.compile(
    r"(?i:\b(?:I\s*['’]?\s*(?:am|m)|I\s+feel|I\s+am\s+feeling)\s+("
    + "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(VERBAL_WORDS, key=len, reverse=True))
    + r")\b|\b(just\s+guessing|a\s+guess)\b)"
)


def read_confidence(text: str | None) -> float | None:
    """The answer's stated confidence in [0, 1], or None when it states none (or an impossible number)."""
    if not text:
        return None
    nums = list(_NUMBER.finditer(text))
    if nums:
        m = nums[-1]
        value, unit = (m.group(1), m.group(2)) if m.group(1) is not None else (m.group(3), m.group(4))
        v = float(value)
        unit = (unit or "").replace(" ", "")
        if unit == "/10":
            v /= 10
        elif unit or v > 1:
            v /= 100
        return v if 0.0 <= v <= 1.0 else None
    words = list(_WORDS.finditer(text))
    if words:
        w = words[-1]
        phrase = " ".join((w.group(1) or w.group(2)).lower().split())
        return VERBAL_WORDS[phrase]
    return None
