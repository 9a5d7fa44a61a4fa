"""The one place exports turn items into chat turns; it uses the evaluation's own renderer
(:mod:`medr2.run.prompts`), so training data shows a model exactly what evaluation shows it.

A single item is rendered as in the ``independent`` mode; a chain as in ``chain-gold`` (earlier
steps with their correct answers). Targets are the correct answers written as ``chain-gold`` writes
them; DPO's rejected answer is the evaluation's wrong answer (the lure where the item has one).
Boxes are written in ``conv`` (default: pixels of the image shown).
"""

from __future__ import annotations

from collections.abc import Sequence

from medr2.models.base import BoxConvention, Message, Part
from medr2.records import Item
from medr2.run.prompts import MODES, Turn, gold_answer, render_messages, wrong_answer

PIXELS = BoxConvention()


def item_turns(item: Item, conv: BoxConvention = PIXELS) -> list[Message]:
    """The dialogue that asks ``item`` alone (its own context turns included), as evaluation renders it."""
    return list(render_messages(item, mode=MODES["independent"], history=(), conv=conv))


def chain_turns(chain: Sequence[Item], conv: BoxConvention = PIXELS) -> list[Message]:
    """A whole chain (step order) as one conversation ending with the last step's answer."""
    history = [Turn(it, gold_answer(it, conv)) for it in chain[:-1]]
    msgs = list(render_messages(chain[-1], mode=MODES["chain-gold"], history=history, conv=conv))
    return [*msgs, answer_turn(chain[-1], conv)]


def target(item: Item, conv: BoxConvention = PIXELS) -> str:
    return gold_answer(item, conv)


def answer_turn(item: Item, conv: BoxConvention = PIXELS) -> Message:
    return Message("assistant", (Part("text", text=target(item, conv)),))


def rejected(item: Item, conv: BoxConvention = PIXELS) -> str | None:
    """The wrong answer to prefer against, or None where none is defined (free text without a lure)."""
    if item.form == "text" and not item.lure:
        return None
    return wrong_answer(item, conv)
