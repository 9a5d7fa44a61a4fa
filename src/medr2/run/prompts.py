"""Prompt rendering per evaluation mode (docs/running.md) and the request hash.

Everything a model sees is built here as a portable message list (``models.base.Message``):
the item's question with its options and a form-specific instruction, earlier chain steps as
earlier user/assistant turns, the item's own context turns (hints) as earlier turns, and the
asked item's images once, in the first user turn (never in ``blind``); an item of several images has them in
order, and its question starts with a line naming each one's role (:func:`image_roles_text`).
Boxes in prompts (gold answers, coordinate cues) are written in the adapter's box convention.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from medr2.errors import BadInput
from medr2.imaging.draw import wrong_box
from medr2.models.base import BoxConvention, GenSettings, Message, Part
from medr2.models.presets import (
    COORD_PHRASES,
    DEFAULT_BOX_INSTRUCTIONS,
    Preset,
    box_to_model,
    format_box,
    model_image_size,
)
from medr2.records import REPORT_TASKS, Box, ImageRef, Item, letter, letter_index, stable_hash

History = Literal["none", "gold", "own", "misleading"]

BLIND_NOTE = "No image is available; answer from the text alone."


@dataclass(frozen=True)
class ModeSpec:
    """How a mode renders: whether items form chains, whether the image is shown, and which
    answers earlier chain steps show (gold, the model's own, or one wrong)."""

    name: str
    chain: bool
    image: bool
    history: History
    instruction: str | None = None  # appended to the asked item's question (the reasoning mode)
    prompt_version: str | None = None  # version of ``instruction``; the snapshot test pins its wording


# The reasoning mode (issue 19): reason stage by stage (acquisition -> anatomy -> findings -> diagnosis, only as
# far as the question needs), then a final answer line; the rationale is audited by ``medr2.scoring.claims``.
REASONING_PROMPT_VERSION = "reasoning-v1"
REASONING_INSTRUCTION = (
    "Before answering, reason step by step about what this image shows, stage by stage and only as far as the "
    "question needs: 1) acquisition (modality, plane or view, sequence); 2) anatomy (body region, structures "
    "visible); 3) findings (present or absent, where, which side, how many, how large); 4) diagnosis. "
    "Then write your final answer on its own last line, starting with \"Final answer:\", in the format asked above."
)

MODES: dict[str, ModeSpec] = {m.name: m for m in (
    ModeSpec("independent", chain=False, image=True, history="none"),
    ModeSpec("chain-own", chain=True, image=True, history="own"),
    ModeSpec("chain-gold", chain=True, image=True, history="gold"),
    ModeSpec("chain-misleading", chain=True, image=True, history="misleading"),
    ModeSpec("blind", chain=False, image=False, history="none"),
    ModeSpec("reasoning", chain=False, image=True, history="none", instruction=REASONING_INSTRUCTION,
             prompt_version=REASONING_PROMPT_VERSION),
)}


def get_mode(name: str) -> ModeSpec:
    try:
        return MODES[name]
    except KeyError:
        raise BadInput(f"unknown mode {name!r}; known: {', '.join(MODES)}", field="--mode") from None


@dataclass(frozen=True)
class Turn:
    """An earlier chain step shown to the model: the item and the answer shown for it."""

    item: Item
    answer: str


# ---------------------------------------------------------------------------------------------
# question text per form


def _image_size(item: Item) -> tuple[int, int]:
    if item.image_width is None or item.image_height is None:
        raise BadInput("item needs image_width/image_height to express boxes", record=item.item_id,
                       field="image_width")
    return item.image_width, item.image_height


def _coord_phrase(item: Item, conv: BoxConvention) -> str:
    w, h = model_image_size(conv, *_image_size(item))
    return COORD_PHRASES[conv.space].format(w=round(w), h=round(h))


def _box_text(box: Box, item: Item, conv: BoxConvention) -> str:
    return format_box(box_to_model(box, *_image_size(item), conv), conv.space)


def _box_instruction(item: Item, conv: BoxConvention, preset: Preset | None) -> str:
    template = preset.instruction_for_box() if preset else DEFAULT_BOX_INSTRUCTIONS[conv.space]
    w, h = model_image_size(conv, *_image_size(item))
    return template.format(w=round(w), h=round(h))


REPORT_INSTRUCTION = "Write the findings and the impression of a radiology report for this image."
SHORT_ANSWER_INSTRUCTION = "Answer briefly, in a few words."
# Text-form tasks that ask for a report (``REPORT_TASKS``); every other text-form item (e.g. an imported
# open-ended VQA question such as "What modality is this?") gets the short-answer instruction.
TEXT_INSTRUCTIONS: dict[str, str] = dict.fromkeys(REPORT_TASKS, REPORT_INSTRUCTION)

FORM_INSTRUCTIONS: dict[str, Callable[[Item, BoxConvention, Preset | None], str]] = {
    "mcq": lambda it, c, p: "Answer with the letter of the correct option.",
    "yesno": lambda it, c, p: "Answer yes or no.",
    "multi": lambda it, c, p: "Select all correct options. Answer with their letters separated by commas.",
    "box": _box_instruction,
    "text": lambda it, c, p: TEXT_INSTRUCTIONS.get(it.task, SHORT_ANSWER_INSTRUCTION),
}


def options_block(options: Sequence[str]) -> str:
    return "\n".join(f"{letter(i)}. {opt}" for i, opt in enumerate(options))


def question_text(item: Item, conv: BoxConvention, preset: Preset | None = None) -> str:
    """The text of the user turn that asks ``item``: cue coordinates, question, options, instruction."""
    lines: list[str] = []
    if item.cue is not None and not item.cue.drawn:
        lines.append(f"The region of interest is {_box_text(item.cue.box, item, conv)} "
                     f"({_coord_phrase(item, conv)}).")
    lines.append(item.question)
    if item.options and item.form in ("mcq", "multi"):
        lines.append(options_block(item.options))
    lines.append(FORM_INSTRUCTIONS[item.form](item, conv, preset))
    return "\n".join(lines)


def _context_question(question: str, options: Sequence[str]) -> str:
    return f"{question}\n{options_block(options)}" if options else question


# ---------------------------------------------------------------------------------------------
# answers shown for earlier steps


def gold_answer(item: Item, conv: BoxConvention) -> str:
    """The correct answer of ``item`` written as a model would answer (chain-gold)."""
    return ANSWER_WRITERS[item.form](item, item.answer, item.answer_box, conv)


def _write_mcq(item: Item, answer: str, box: Box | None, conv: BoxConvention) -> str:
    return f"{answer}. {item.options[letter_index(answer)]}"


def _write_multi(item: Item, answer: str, box: Box | None, conv: BoxConvention) -> str:
    return ", ".join(s.strip() for s in answer.split(",") if s.strip())


def _write_box(item: Item, answer: str, box: Box | None, conv: BoxConvention) -> str:
    if box is None:
        raise BadInput("box item without answer_box", record=item.item_id, field="answer_box")
    return _box_text(box, item, conv)


ANSWER_WRITERS: dict[str, Callable[[Item, str, Box | None, BoxConvention], str]] = {
    "mcq": _write_mcq,
    "yesno": lambda it, a, b, c: a,
    "multi": _write_multi,
    "box": _write_box,
    "text": lambda it, a, b, c: a,
}


def _rng(item: Item) -> np.random.Generator:
    return np.random.default_rng(int(stable_hash(["wrong-answer", item.item_id]), 16))


def lure_letter(item: Item) -> str | None:
    """The item's lure as an option letter (a lure may be stored as a letter or as option text)."""
    if not item.lure or not item.options:
        return None
    lure = item.lure.strip()
    if len(lure) == 1 and 0 <= letter_index(lure) < len(item.options):
        return lure.upper()
    for i, opt in enumerate(item.options):
        if opt == lure:
            return letter(i)
    return None


def _wrong_mcq(item: Item, conv: BoxConvention) -> str:
    choice = lure_letter(item)
    if choice is None or choice == item.answer:
        wrong = [letter(i) for i in range(len(item.options)) if letter(i) != item.answer]
        if not wrong:
            raise BadInput("no wrong option to show", record=item.item_id, field="options")
        choice = wrong[int(_rng(item).integers(len(wrong)))]
    return _write_mcq(item, choice, None, conv)


def _wrong_multi(item: Item, conv: BoxConvention) -> str:
    if item.lure and item.lure != item.answer:
        return _write_multi(item, item.lure, None, conv)
    right = {s.strip() for s in item.answer.split(",") if s.strip()}
    letters = [letter(i) for i in range(len(item.options))]
    flip = letters[int(_rng(item).integers(len(letters)))]
    wrong = right ^ {flip}
    if not wrong:
        wrong = {next(x for x in letters if x != flip)}
    return ", ".join(sorted(wrong))


def _wrong_box(item: Item, conv: BoxConvention) -> str:
    if item.answer_box is None:
        raise BadInput("box item without answer_box", record=item.item_id, field="answer_box")
    # overlapping the truth by at most WRONG_BOX_MAX_IOU: it scores wrong (one rule for every wrong box shown)
    return _box_text(wrong_box(item.answer_box, *_image_size(item)), item, conv)


WRONG_WRITERS: dict[str, Callable[[Item, BoxConvention], str]] = {
    "mcq": _wrong_mcq,
    "yesno": lambda it, c: "no" if it.answer == "yes" else "yes",
    "multi": _wrong_multi,
    "box": _wrong_box,
    "text": lambda it, c: it.lure or "No abnormality is seen.",
}


def wrong_answer(item: Item, conv: BoxConvention) -> str:
    """A deterministic wrong answer for ``item`` (its lure where set), written as a model would."""
    return WRONG_WRITERS[item.form](item, conv)


# ---------------------------------------------------------------------------------------------
# messages


# ``medr2 eval --confidence verbal``: one instruction after the asked question (read by
# medr2.scoring.extract.confidence.read_confidence); a run that uses it records ``confidence: verbal``
VERBAL_CONFIDENCE_INSTRUCTION = ("After your answer, state how confident you are that it is correct as a "
                                 "percentage on its own line, e.g. 'Confidence: 70%'.")
# ``--confidence`` values (docs/metrics.md, "Calibration")
CONFIDENCE_OPTIONS = ("none", "logprobs", "verbal")


def render_messages(item: Item, *, mode: ModeSpec, history: Sequence[Turn], conv: BoxConvention,
                    preset: Preset | None = None, suffix: str | None = None) -> tuple[Message, ...]:
    """The full dialogue for asking ``item`` in ``mode``: system prompt, earlier chain steps
    (``history``), the item's own context turns, then the item's question (``suffix``: one more instruction
    after it, e.g. :data:`VERBAL_CONFIDENCE_INSTRUCTION`)."""
    msgs: list[Message] = []
    if preset is not None and preset.system:
        msgs.append(Message("system", (Part("text", text=preset.system),)))

    def user(text: str) -> Message:
        # the asked item's images once per dialogue, in the first user turn (chains are about one case)
        first = not msgs_have_user(msgs)
        parts: list[Part] = []
        if first and mode.image:
            parts.extend(image_parts(item))
            if len(parts) > 1:
                text = f"{image_roles_text(item.image_list())}\n{text}"
        if first and not mode.image:
            text = f"{BLIND_NOTE}\n{text}"
        parts.append(Part("text", text=text))
        return Message("user", tuple(parts))

    for turn in history:
        msgs.append(user(question_text(turn.item, conv, preset)))
        msgs.append(Message("assistant", (Part("text", text=turn.answer),)))
    for ctx in item.context:
        msgs.append(user(_context_question(ctx.question, ctx.options)))
        msgs.append(Message("assistant", (Part("text", text=ctx.answer),)))
    asked = question_text(item, conv, preset)
    asked = f"{asked}\n{mode.instruction}" if mode.instruction else asked
    msgs.append(user(f"{asked}\n{suffix}" if suffix else asked))
    return tuple(msgs)


def image_parts(item: Item) -> list[Part]:
    """The image parts of ``item``: every image of :meth:`~medr2.records.Item.image_list`, in order (an item whose
    image has no recorded size or hash: its one ``image``)."""
    refs = item.image_list()
    if refs:
        return [Part("image", image=r.path, image_sha256=r.sha256) for r in refs]
    return [Part("image", image=item.image, image_sha256=item.image_sha256)] if item.image is not None else []


def _days(n: int) -> str:
    return f"{n} day" if n == 1 else f"{n} days"


def image_role(ref: ImageRef) -> str:
    """What one image of several is, as the prompt (and the report, the viewer) names it: "prior study, 90 days
    before the current one", "lateral view of the current study", "current study (frontal)". The label is text
    of the data, written as it is."""
    if ref.role == "prior":
        what = f"prior study ({ref.label})" if ref.label else "prior study"
        if ref.interval_days is None:
            return f"{what}, interval to the current one not known"
        return f"{what}, {_days(ref.interval_days)} before the current one"
    if ref.role in ("view", "sequence"):
        return f"{ref.label} {ref.role} of the current study" if ref.label else (
            f"another {ref.role} of the current study")
    return f"current study ({ref.label})" if ref.label else "current study"


def image_roles_text(refs: Sequence[ImageRef]) -> str:
    """The line naming each image of a several-image prompt, in the order shown: "Image 1: prior study, 90 days
    before the current one. Image 2: current study." (a one-image prompt has none)."""
    return " ".join(f"Image {k}: {image_role(r)}." for k, r in enumerate(refs, start=1))


def msgs_have_user(msgs: Sequence[Message]) -> bool:
    return any(m.role == "user" for m in msgs)


def messages_json(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Portable JSON of a dialogue: text verbatim, images by path and content hash."""
    out: list[dict[str, Any]] = []
    for m in messages:
        parts = [{"type": "text", "text": p.text} if p.type == "text"
                 else {"type": "image", "image": p.image, "sha256": p.image_sha256} for p in m.parts]
        out.append({"role": m.role, "parts": parts})
    return out


def _hashable_messages(messages: Sequence[Message]) -> list[Any]:
    return [[m.role, [["text", p.text] if p.type == "text" else ["image", p.image_sha256] for p in m.parts]]
            for m in messages]


def settings_json(settings: GenSettings) -> dict[str, Any]:
    d = asdict(settings)
    d["extra"] = [list(kv) for kv in settings.extra]
    return d


@functools.lru_cache(maxsize=64)
def _settings_json_cached(settings: GenSettings) -> dict[str, Any]:
    """``settings_json`` once per settings object (read-only; ``asdict`` is the costliest step of hashing)."""
    return settings_json(settings)


def request_hash(model_key: str, settings: GenSettings, messages: Sequence[Message], *,
                 item_id: str, mode: str) -> str:
    """sha256 over the model key, generation settings, rendered messages (text verbatim, images by
    content hash) and the (item, mode) slot the answer fills."""
    try:
        settings_part = _settings_json_cached(settings)
    except TypeError:  # unhashable values in settings.extra
        settings_part = settings_json(settings)
    payload = {"model": model_key, "settings": settings_part, "messages": _hashable_messages(messages),
               "item": item_id, "mode": mode}
    data = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()
