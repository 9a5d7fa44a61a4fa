"""Closed questions answered by the model's likelihood of each allowed answer (``hf:PATH`` with ``choice=loglik``).

The usual way a harness asks a language model a multiple-choice question without parsing free text
(lm-evaluation-harness's ``multiple_choice`` output type): every allowed answer is appended to the prompt as
the assistant's turn, written by the model's chat template exactly as a training target is, and the answer
whose tokens (up to the end of the turn) have the highest summed log-probability is the model's answer. The
text returned is that answer, so the scorer reads it as every other answer; the log-likelihood of each
candidate is kept in the prediction's notes, so the choice can be checked.

Which questions: multiple-choice items (one candidate per option, written in ``choice_style``) and yes/no
items (``yes``, ``no``). Every other form (select-all, boxes, free text) is generated as usual.

Styles (``CHOICE_STYLES``), matching the fine-tuning answer styles (``medr2.train.render``): ``text`` writes
the option's text ("X-ray", as ``option-text`` targets), ``letter`` its letter ("B", as ``letter-only``),
``letter-text`` both ("B. X-ray", as ``letter``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from medr2.records import Item, letter

CHOICE_MODES = ("generate", "loglik")

CHOICE_STYLES: dict[str, Callable[[Item, int], str]] = {
    "text": lambda item, i: item.options[i],
    "letter": lambda item, i: letter(i),
    "letter-text": lambda item, i: f"{letter(i)}. {item.options[i]}",
}

YES_NO = ("yes", "no")


def candidates(item: Any, style: str) -> tuple[str, ...] | None:
    """The answers a model may give to ``item``, written in ``style``, or None where the answer is generated."""
    if not isinstance(item, Item):
        return None
    if item.form == "mcq" and item.options:
        write = CHOICE_STYLES[style]
        return tuple(write(item, i) for i in range(len(item.options)))
    if item.form == "yesno":
        return YES_NO
    return None


def choice_note(cands: tuple[str, ...], scores: list[float]) -> str:
    """The prediction note that records every candidate's summed log-probability (in candidate order)."""
    return "choice by log-likelihood: " + "; ".join(f"{c!r} {s:.4f}" for c, s in zip(cands, scores, strict=True))
