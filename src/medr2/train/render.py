"""The one place exports turn items into chat turns; it uses the evaluation's own renderer
(:mod:`medr2.run.prompts`), so training data shows a model exactly what evaluation shows it.

A single item is rendered as in the ``independent`` mode; a chain as in ``chain-gold`` (earlier
steps with their correct answers). Targets are the correct answers written as ``chain-gold`` writes
them; DPO's rejected answer is the evaluation's wrong answer (the lure where the item has one).
Boxes are written in ``conv`` (default: pixels of the image shown).

Answer styles (``ANSWER_STYLES``): ``letter`` writes a multiple-choice answer as evaluation's
``chain-gold`` does ("B. X-ray"); ``option-text`` writes only the option's text ("X-ray"), which the
scorer reads as that option; ``letter-only`` writes the letter alone ("B"), what the evaluation's prompt
asks for ("Answer with the option's letter"), so an answer whose letter and text name different options
cannot be learned. A model trained with ``option-text`` answers by what it names, not by a letter it has
to look up in the prompt; every other form is written the same in every style.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from medr2.models.base import BoxConvention, Message, Part
from medr2.records import Item, letter_index
from medr2.run.prompts import MODES, Turn, gold_answer, render_messages, wrong_answer

PIXELS = BoxConvention()


def item_turns(item: Item, conv: BoxConvention = PIXELS) -> list[Message]:
    """The dialogue that asks ``item`` alone (its own context turns included), as evaluation renders it."""
    return list(render_messages(item, mode=MODES["independent"], history=(), conv=conv))


def _option_text(item: Item, answer: str) -> str:
    """A ``letter``-style MCQ answer ("B" or "B. X-ray") as its option's text."""
    return item.options[letter_index(answer.split(".", 1)[0].strip())]


def _letter_style(item: Item, conv: BoxConvention) -> str:
    return gold_answer(item, conv)


def _option_text_style(item: Item, conv: BoxConvention) -> str:
    return _option_text(item, item.answer) if item.form == "mcq" else gold_answer(item, conv)


def _letter_only_style(item: Item, conv: BoxConvention) -> str:
    return _letter_only(gold_answer(item, conv)) if item.form == "mcq" else gold_answer(item, conv)


def _letter_only(answer: str) -> str:
    """A ``letter``-style MCQ answer ("B. X-ray") as its letter alone ("B")."""
    return answer.split(".", 1)[0].strip()


ANSWER_STYLES: dict[str, Callable[[Item, BoxConvention], str]] = {
    "letter": _letter_style,
    "option-text": _option_text_style,
    "letter-only": _letter_only_style,
}


def check_style(style: str) -> str:
    if style not in ANSWER_STYLES:
        raise ValueError(f"unknown answer style {style!r} (known: {', '.join(ANSWER_STYLES)})")
    return style


def chain_turns(chain: Sequence[Item], conv: BoxConvention = PIXELS, style: str = "letter") -> list[Message]:
    """A whole chain (step order) as one conversation ending with the last step's answer."""
    history = [Turn(it, target(it, conv, style)) for it in chain[:-1]]
    msgs = list(render_messages(chain[-1], mode=MODES["chain-gold"], history=history, conv=conv))
    return [*msgs, answer_turn(chain[-1], conv, style)]


def target(item: Item, conv: BoxConvention = PIXELS, style: str = "letter") -> str:
    return ANSWER_STYLES[check_style(style)](item, conv)


def answer_turn(item: Item, conv: BoxConvention = PIXELS, style: str = "letter") -> Message:
    return Message("assistant", (Part("text", text=target(item, conv, style)),))


def rejected(item: Item, conv: BoxConvention = PIXELS, style: str = "letter") -> str | None:
    """The wrong answer to prefer against, or None where none is defined (free text without a lure)."""
    if item.form == "text" and not item.lure:
        return None
    wrong = wrong_answer(item, conv)
    if item.form != "mcq" or check_style(style) == "letter":
        return wrong
    return _option_text(item, wrong) if style == "option-text" else _letter_only(wrong)
