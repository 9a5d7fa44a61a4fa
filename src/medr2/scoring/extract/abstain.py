"""Abstentions: answers that decline ("cannot be determined from the image", "the image is blank", "not
visible in this image", "无法确定") are their own outcome, never unparsed and never a choice.

The recogniser is a small grammar, built from its parts so that tests can generate the phrasings from the same
parts (``tests/test_score_abstain.py``):

* a **modal** of inability (``cannot``, ``is impossible to``, ``I am unable to``, ...) followed by a **verb of
  determining** (``determine``, ``tell``, ``assess``, ``be answered``, ...), optionally after a subject and
  before a reason ("The diagnosis cannot be determined from this image");
* a statement that the **image** is blank, missing or unreadable ("The image is completely blank", "No image
  was provided", "I cannot see any image");
* a statement that the evidence is **not visible in the image** ("The lesion is not visible in this image");
* an admission of **not knowing** ("I'm not sure", "I don't know", "insufficient information to ...");
* the Chinese forms of these (无法确定, 不能判断, 图像是空白的, 图像中看不到, 不确定, 不知道).

Precedence (docs/metrics.md, "Abstentions"): the clauses that decline are removed and the rest of the answer
is read by the form's reader; **a choice stated outside the declining clauses wins** ("It is hard to be sure
from this image, but the answer is B" is B; "No, the nodule is not visible in this image" is no); when the rest
states no answer, the answer is an abstention. An option whose own text declines (the eval-time option
:data:`medr2.records.ABSTAIN_OPTION`) is an abstention when chosen.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# -- the grammar's parts (English) ------------------------------------------------------------------------
SUBJECTS = ("it", "this", "that", "the answer", "the diagnosis", "the finding", "the findings", "the abnormality",
            "the modality", "the correct option", "the correct answer", "the question", "this question", "I", "we")
MODALS = ("cannot", "can't", "can not", "could not", "couldn't", "is not possible to", "isn't possible to",
          "is impossible to", "it is impossible to", "it is not possible to", "am unable to", "are unable to",
          "is unable to", "unable to", "am not able to", "not able to", "there is no way to")
VERBS = ("determine", "tell", "assess", "evaluate", "answer", "say", "identify", "judge", "conclude", "confirm",
         "establish", "ascertain", "interpret", "decide", "know", "make out", "answer this question",
         "provide an answer", "give an answer", "make a diagnosis", "comment")
PASSIVE_VERBS = ("determined", "assessed", "evaluated", "answered", "identified", "judged", "concluded", "confirmed",
                 "established", "ascertained", "interpreted", "told", "said", "decided", "made out")
REASONS = ("from the image", "from this image", "from the provided image", "from the given image",
           "based on the image", "based on the image provided", "based on this image", "because the image is blank",
           "without a visible image", "with the information given", "from the information provided",
           "as the image is empty", "without more information", "with certainty")
IMAGE_STATES = ("blank", "empty", "black", "all black", "all white", "uniform", "featureless", "unavailable",
                "missing", "not provided", "not available", "not visible", "unreadable", "not loaded", "corrupted",
                "not shown", "a blank image", "an empty image")
NOT_VISIBLE = ("not visible", "not shown", "not depicted", "not discernible", "not identifiable", "not evident",
               "not assessable", "not seen")
IMAGE_NOUNS = ("image", "picture", "scan", "film", "radiograph", "photo")
UNSURE = ("I'm not sure", "I am not sure", "I'm not certain", "I am not certain", "not sure", "I don't know",
          "I do not know", "unsure", "insufficient information", "insufficient evidence", "not enough information")
# Chinese: a modal of inability + a verb of determining; image states
ZH_MODALS = ("无法", "不能", "不可能", "没法")
ZH_VERBS = ("确定", "判断", "评估", "回答", "识别", "看出", "看清", "判定", "诊断", "确认")
ZH_STATES = ("图像是空白的", "图像为空白", "图像空白", "图片是空白的", "图像缺失", "没有图像", "没有提供图像",
             "图像中看不到", "图像中不可见", "看不到图像", "不确定", "不知道")


def _alt(words: Sequence[str]) -> str:
    """A regex alternation of ``words`` (longest first; spaces match any whitespace, apostrophes both kinds)."""
    parts = sorted(set(words), key=len, reverse=True)
    return "(?:" + "|".join(re.escape(w).replace(r"\ ", r"\s+").replace("'", "['’]") for w in parts) + ")"


_ADVERB = r"(?:(?:completely|entirely|totally|essentially|simply|really|reliably|clearly|definitively|accurately)\s+)?"
_DECLINE = re.compile(
    r"(?i:"
    rf"(?<![\w'])(?:{_alt(MODALS)})\s+{_ADVERB}(?:be\s+{_ADVERB}{_alt(PASSIVE_VERBS)}|{_alt(VERBS)})\b"
    rf"|\b(?:indeterminate|undeterminable|not\s+determinable)\b"
    rf"|\b(?:the|this|that)\s+{_alt(IMAGE_NOUNS)}\s+(?:provided\s+|shown\s+|given\s+)?(?:is|appears|seems|looks)\s+"
    rf"(?:to\s+be\s+)?{_ADVERB}{_alt(IMAGE_STATES)}\b"
    rf"|\bno\s+{_alt(IMAGE_NOUNS)}\s+(?:was\s+|is\s+|has\s+been\s+)?(?:provided|shown|attached|available|visible|given)\b"
    rf"|\bthere\s+is\s+no\s+{_alt(IMAGE_NOUNS)}\b"
    rf"|\bI\s+(?:cannot|can['’]t|do\s+not|don['’]t)\s+see\s+(?:an|any|the)\s+{_alt(IMAGE_NOUNS)}\b"
    rf"|\b(?:is|are)\s+{_alt(NOT_VISIBLE)}\s+(?:in|on)\s+(?:this|the)\s+(?:provided\s+|given\s+)?{_alt(IMAGE_NOUNS)}\b"
    rf"|(?<![\w'])(?:{_alt(UNSURE)})(?![\w'])"
    r")"
    rf"|{_alt(ZH_MODALS)}(?:从(?:图像|图片)中?)?{_alt(ZH_VERBS)}|{_alt(ZH_STATES)}"
)
# clause boundaries: sentence ends, semicolons, commas and contrastive conjunctions
_CLAUSE_END = re.compile(r"[.!?;\n。！？；，,]|\b(?:but|however|although|though|yet)\b|但是|不过|但", re.I)


@dataclass(frozen=True)
class Decline:
    """Where an answer declines: the declining phrases, and the answer with their clauses removed."""

    phrases: tuple[str, ...]
    rest: str


def _clause(text: str, start: int, end: int) -> tuple[int, int]:
    """The clause around ``text[start:end]`` (between the boundaries before and after it)."""
    left = 0
    for b in _CLAUSE_END.finditer(text, 0, start):
        left = b.end()
    after = _CLAUSE_END.search(text, end)
    return left, after.start() if after else len(text)


# every declining phrase contains one of these (lower-cased) words: an answer holding none of them is not read by
# the grammar at all (most answers: "B", "Yes.", a box), a plain substring test per word
_TRIGGERS = ("can", "could", "unable", "able", "possible", "way", "determin", "sure", "certain", "know",
             "insufficient", "enough", "image", "picture", "scan", "film", "radiograph", "photo",
             *sorted({w[:2] for w in (*ZH_MODALS, *ZH_STATES)}))


def find_decline(text: str) -> Decline | None:
    """The declining phrases of ``text`` and the rest of it (None when it does not decline)."""
    low = text.lower()
    if not any(t in low for t in _TRIGGERS):
        return None
    hits = list(_DECLINE.finditer(text))
    if not hits:
        return None
    spans = sorted(_clause(text, m.start(), m.end()) for m in hits)
    kept: list[str] = []
    pos = 0
    for a, b in spans:
        if a > pos:
            kept.append(text[pos:a])
        pos = max(pos, b)
    kept.append(text[pos:])
    rest = " ".join(k.strip(" \t,，;；") for k in kept if k.strip(" \t.,，;；。!?！？\n"))
    return Decline(tuple(m.group(0) for m in hits), rest.strip())


def declines(text: str) -> bool:
    """Whether ``text`` as a whole declines (an option text such as ``medr2.records.ABSTAIN_OPTION``)."""
    got = find_decline(text)
    return got is not None and not got.rest
