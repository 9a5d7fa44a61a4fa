"""A model's probability of each answer it could give (``medr2.records.Confidence``), from what the backend
returns (docs/metrics.md, "Calibration"):

* ``logprobs``: an OpenAI-compatible server's ``logprobs.content`` (``logprobs: true, top_logprobs: K``; vLLM,
  SGLang, ``transformers serve``). The answer token is the first generated token that is one of the answers
  (an option letter, ``yes``/``no``; spaces, brackets and ``*`` around it ignored); the probability of each
  answer is the sum of ``exp(logprob)`` of the alternatives at that position that are that answer, normalised
  over the answers (answers outside the top K get 0);
* ``loglik``: a local model's summed log-likelihood of each candidate answer (``hf:`` with ``choice=loglik``),
  turned into probabilities by a softmax over the candidates;
* ``prior``: a baseline's frequencies (``baseline:prior``), normalised over the answers shown.

Labels are option letters (``A``, ``B``, ...) for single-choice items and ``yes``/``no`` for yes/no items;
other forms get no confidence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from medr2.records import Confidence, letter

_TOKEN_STRIP = re.compile(r"^[\s(\[*_\"']+|[\s)\].:,*_\"']+$")


def labels_of(item: Any) -> tuple[str, ...]:
    """The answers an item can be given, as confidence labels (empty: the form has no confidence)."""
    form = getattr(item, "form", None)
    if form == "mcq" and getattr(item, "options", None):
        return tuple(letter(i) for i in range(len(item.options)))
    if form == "yesno":
        return ("yes", "no")
    return ()


def _label(token: str, labels: Sequence[str]) -> str | None:
    t = _TOKEN_STRIP.sub("", token)
    if not t:
        return None
    if t in labels:
        return t
    low = t.lower()
    return low if low in labels and low in ("yes", "no") else None


def normalised(weights: Mapping[str, float], source: str) -> Confidence | None:
    """A :class:`Confidence` of ``weights`` normalised to sum 1 (None when they sum to 0 or are not finite)."""
    total = math.fsum(weights.values())
    if not (total > 0 and math.isfinite(total)):
        return None
    return Confidence(source=source, probs={k: v / total for k, v in weights.items()})  # type: ignore[arg-type]


def from_token_logprobs(content: Any, labels: Sequence[str]) -> Confidence | None:
    """The ``logprobs`` confidence of an OpenAI ``choices[0].logprobs.content`` list (see the module doc)."""
    if not labels or not isinstance(content, list):
        return None
    for pos in content:
        if not isinstance(pos, dict) or not isinstance(pos.get("token"), str):
            continue
        chosen = _label(pos["token"], labels)
        if chosen is None:
            continue
        weights = dict.fromkeys(labels, 0.0)
        seen: set[str] = set()
        top = pos.get("top_logprobs")
        alts: list[Any] = top if isinstance(top, list) else []
        for alt in [pos, *alts]:
            if not isinstance(alt, dict):
                continue
            tok, lp = alt.get("token"), alt.get("logprob")
            if not isinstance(tok, str) or tok in seen or not isinstance(lp, (int, float)) or isinstance(lp, bool):
                continue
            seen.add(tok)
            lab = _label(tok, labels)
            if lab is not None and math.isfinite(lp):
                weights[lab] += math.exp(lp)
        return normalised(weights, "logprobs")
    return None


def from_loglik(scores: Sequence[float], labels: Sequence[str]) -> Confidence | None:
    """Softmax of the candidates' summed log-likelihoods (candidate ``i`` is label ``i``)."""
    if not labels or len(scores) != len(labels) or not all(math.isfinite(s) for s in scores):
        return None
    top = max(scores)
    return normalised({lab: math.exp(s - top) for lab, s in zip(labels, scores, strict=True)}, "loglik")


_LOGLIK_NOTE = re.compile(r"'((?:[^'\\]|\\.)*)'\s+(-?(?:\d+(?:\.\d*)?|inf)|nan)")


def from_loglik_note(note: str, form: str) -> Confidence | None:
    """The ``loglik`` confidence of a stored choice note (``medr2.models.choice.choice_note``, candidates in
    option order, yes/no as ``yes``, ``no``) of an item of ``form``: runs stored before the confidence column
    (scores rounded to 4 decimals)."""
    if not note.startswith("choice by log-likelihood: "):
        return None
    scores = [float(m.group(2)) for m in _LOGLIK_NOTE.finditer(note)]
    labels = ("yes", "no") if form == "yesno" else tuple(letter(i) for i in range(len(scores))) if form == "mcq" \
        else ()
    return from_loglik(scores, labels)
