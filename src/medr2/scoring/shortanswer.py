"""Short free-text answers: open-ended questions such as an imported VQA-RAD or SLAKE "Which organ is
enlarged?" (text form, any task but a report). The verdict is exact match after SQuAD-style
normalisation (lower case; punctuation to spaces; the articles a/an/the dropped; whitespace collapsed),
so "The liver." matches "liver" but "left lung" never matches "right lung". A text made of articles only
(a reference "A", e.g. a grade or a letter) keeps its words, so "A" never matches "The". Token F1 and token
recall (share of the reference's tokens in the answer) are kept per item as continuous measures. An answer
that could not be read scores 0 on all three (:data:`UNPARSED_METRICS`), never an exact match."""

from __future__ import annotations

import functools
import re
from collections import Counter

_NON_WORD = re.compile(r"[^\w\s]")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")

SHORT_ANSWER_METRICS = ("exact", "token_f1", "token_recall")
UNPARSED_METRICS: dict[str, float] = dict.fromkeys(SHORT_ANSWER_METRICS, 0.0)


def normalize_answer(text: str) -> str:
    """Lower case, punctuation to spaces, articles dropped (unless nothing else is left), whitespace collapsed."""
    s = _NON_WORD.sub(" ", text.lower()).replace("_", " ")
    words = _ARTICLES.sub(" ", s).split()
    return " ".join(words or s.split())


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


def short_answer_metrics(hypothesis: str | None, reference: str) -> dict[str, float]:
    """``exact`` (0 or 1), ``token_f1`` and ``token_recall`` of one answer against its reference; an answer
    that was not read (``None``) gets 0 on all three."""
    if hypothesis is None:
        return dict(UNPARSED_METRICS)
    return dict(zip(SHORT_ANSWER_METRICS, _metrics(hypothesis, reference), strict=True))
