"""Shared text handling for answer extraction: reasoning blocks, markdown, hedges, JSON answers (the statements an
answer is made of, and the precedence between them: ``medr2.scoring.extract.statements``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from medr2 import jsonsafe
from medr2.errors import BadInput

_REASONING_TAGS = r"think|thinking|reasoning|reflection|analysis"
_REASONING_BLOCK = re.compile(rf"<({_REASONING_TAGS})\b[^>]*>.*?</\1\s*>", re.S | re.I)
_REASONING_CLOSE = re.compile(rf"</(?:{_REASONING_TAGS})\s*>", re.I)
_REASONING_OPEN = re.compile(rf"<(?:{_REASONING_TAGS})\b[^>]*>", re.I)
_KIMI_BLOCK = re.compile(r"◁think▷.*?◁/think▷", re.S)
_MARKDOWN = re.compile(r"[*_`#$]+|\\boxed\{|\\text\{")
# end-of-turn / end-of-text tokens that servers sometimes leave in the content (Llama, Mistral/LLaVA, Qwen,
# Gemma, Phi, DeepSeek); they are never part of the answer
END_TOKENS = re.compile(r"</s>|<s>|<\|(?:im_end|im_start|eot_id|eom_id|end_of_text|endoftext|end|assistant)\|>"
                        r"|<(?:end|start)_of_turn>|<eos>|<bos>|<｜end▁of▁sentence｜>|<\|end▁of▁sentence\|>")


@dataclass(frozen=True)
class Reading:
    """What an extractor read: the answer (None = unparsed) and, when unparsed for a nameable cause, why.
    ``abstained``: the answer declines (``medr2.scoring.extract.abstain``); then ``value`` is None and ``reason``
    quotes the declining phrase."""

    value: str | None
    reason: str | None = None
    abstained: bool = False


def strip_end_tokens(text: str) -> str:
    return END_TOKENS.sub(" ", text)


def strip_reasoning(text: str) -> str:
    """Remove reasoning blocks (``<think>…</think>`` and the like); what remains is the answer part.

    A closing tag without its opening tag ends the reasoning (everything before it is dropped);
    an opening tag that is never closed starts unfinished reasoning (everything after it is dropped).
    """
    t = _KIMI_BLOCK.sub(" ", _REASONING_BLOCK.sub(" ", strip_end_tokens(text)))
    closes = list(_REASONING_CLOSE.finditer(t))
    if closes:
        t = t[closes[-1].end():]
    opened = _REASONING_OPEN.search(t)
    if opened:
        t = t[: opened.start()]
    return t.strip()


def clean_markdown(text: str) -> str:
    """Drop emphasis and code markers (``**B**`` → ``B``) and LaTeX ``\\boxed{}`` wrappers."""
    return _MARKDOWN.sub("", text).replace("}", " ")


def normalize_words(text: str) -> str:
    """Lower case, punctuation to spaces, single spaces (for option-text matching)."""
    return " ".join(re.sub(r"[^\w%+<>=.-]+", " ", text.lower()).replace(" .", " ").split()).strip(" .")


HEDGE = re.compile(
    r"^(?i:\s*(?:(?:most\s+)?likely|probably|definitely|clearly|certainly|therefore|thus|the\s+option|option|choice"
    r"|letter|answer)\b\s*[:,-]?\s*)+"
)


def strip_hedge(segment: str) -> str:
    return HEDGE.sub("", segment, count=1)


# JSON answers: {"answer": "B"}, ```json {"final_answer": ["A", "C"]} ```, {"answer": true}
_FENCE = re.compile(r"^\s*```[\w-]*\s*\n?(.*?)\n?\s*```\s*$", re.S)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
ANSWER_KEYS = ("answer", "final_answer", "finalanswer", "answers", "choice", "choices", "option", "options_selected",
               "selected", "selected_options", "selection", "prediction", "label", "result", "response", "output")


def json_answer(text: str) -> tuple[bool, Any]:
    """(found, value) of the answer field of a JSON object that is the whole response (fenced or not) or
    the one JSON object in it; found is False when there is none (then the text is read as prose)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    objs: list[Any] = []
    if body[:1] in ("{", "["):
        try:
            objs = [jsonsafe.loads(body, max_bytes=None)]
        except BadInput:
            objs = []
    if not objs:
        for m in _JSON_OBJECT.finditer(body):
            try:
                objs.append(jsonsafe.loads(m.group(0), max_bytes=None))
            except BadInput:
                continue
    values = []
    for obj in objs:
        if isinstance(obj, list) and len(obj) == 1 and isinstance(obj[0], dict):
            obj = obj[0]
        if not isinstance(obj, dict):
            if isinstance(obj, list) and body[:1] == "[" and all(isinstance(v, str) for v in obj):
                values.append(obj)  # a bare list of letters / option texts
            continue
        low = {str(k).strip().lower().replace(" ", "_"): v for k, v in obj.items()}
        for key in ANSWER_KEYS:
            if key in low:
                values.append(low[key])
                break
    if len(values) != 1:
        return False, None
    return True, values[0]
