"""Short free-text answers: open-ended questions such as an imported VQA-RAD or SLAKE "Which organ is
enlarged?" (text form, any task but a report). The verdict is exact match after SQuAD-style
normalisation (lower case; punctuation to spaces; the articles a/an/the dropped; whitespace collapsed),
so "The liver." matches "liver" but "left lung" never matches "right lung". Token F1 and token recall
(share of the reference's tokens in the answer) are kept per item as continuous measures."""

from __future__ import annotations

import functools
import re
from collections import Counter

_NON_WORD = re.compile(r"[^\w\s]")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")

SHORT_ANSWER_METRICS = ("exact", "token_f1", "token_recall")


def normalize_answer(text: str) -> str:
    """Lower case, punctuation to spaces, articles dropped, whitespace collapsed."""
    s = _NON_WORD.sub(" ", text.lower()).replace("_", " ")
    return " ".join(_ARTICLES.sub(" ", s).split())


@functools.lru_cache(maxsize=1 << 16)
def _metrics(hypothesis: str, reference: str) -> tuple[float, float, float]:
    hyp, ref = normalize_answer(hypothesis), normalize_answer(reference)
    exact = float(hyp == ref)
    h, r = hyp.split(), ref.split()
    common = sum((Counter(h) & Counter(r)).values())
    if not h or not r or not common:
        return exact, exact, exact  # both empty: 1 (exact); otherwise no overlap: 0
    precision, recall = common / len(h), common / len(r)
    return exact, 2 * precision * recall / (precision + recall), recall


def short_answer_metrics(hypothesis: str, reference: str) -> dict[str, float]:
    """``exact`` (0 or 1), ``token_f1`` and ``token_recall`` of one answer against its reference."""
    return dict(zip(SHORT_ANSWER_METRICS, _metrics(hypothesis, reference), strict=True))
