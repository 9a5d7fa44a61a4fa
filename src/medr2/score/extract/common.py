"""Shared text handling for answer extraction: reasoning blocks, markdown, answer markers, negation."""

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
    ``abstained``: the answer declines (``medr2.score.extract.abstain``); then ``value`` is None and ``reason``
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


# Explicit answer statements: the answer follows the marker.
ANSWER_MARKER = re.compile(
    r"(?i:\b(?:(?:the|my|final|correct|best|right|most\s+likely)\s+)*"
    r"(?:answer|option|choice|selection|selected|diagnosis)s?\b(?:\s+(?:to\s+the\s+question|here))?"
    r"\s*(?:is|would\s+be|should\s+be|will\s+be|=|:|：|-|–|—)\s*(?:therefore\s+|thus\s+)?:?)"
    r"|(?i:\banswer\s*\(?[a-z]*\)?\s*:)"
    r"|(?i:\b(?:it|this)(?:\s+is|['’]s)\s+(?:therefore\s+|thus\s+|probably\s+|likely\s+)?(?=[(\[]?[A-Z]\b))"
    r"|(?i:\b(?:I(?:\s+would|\s+will|['’]d|['’]ll|['’]m\s+going\s+to|\s+am\s+going\s+to)?|let['’]s)\s+"
    r"(?:choose|select|pick|go\s+with|answer|opt\s+for|say)\b\s*:?)"
    r"|(?i:\bI['’]m\s+(?:going\s+with|choosing|picking|selecting)\b\s*:?)"
    r"|(?:最终)?答案\s*(?:应该|应|應)?\s*(?:是|为|為)?\s*[:：]?|(?:我)?(?:选择|选|選)\s*[:：]?"
)
# The options the text lists after the marker are not answers: "option A is ..." as a description
# is handled by requiring the marker words to be followed by is/:/=.

NEGATION_BEFORE = re.compile(
    r"(?i:(?:\bnot|n't|\bnor|\bno|\bneither|\brather\s+than|\binstead\s+of|\brule\s+out|\bruled\s+out|\bruling\s+out"
    r"|\bexclude|\bexcluding|\bexcept|\beliminate|\beliminating|\bagainst|\bunlike|\bnot\s+option"
    r"|\bwithout)\s+(?:(?:the|a|an|option|choice|answer|of)\s+)*[(\[]?)$"
)
NEGATION_AFTER = re.compile(
    r"^(?i:[)\]]?\s*(?:\([^)]{0,40}\)\s*)?(?:is|are|was|seems|would\s+be|appears|looks)\s+(?:also\s+|clearly\s+|definitely\s+)?"
    r"(?:not|incorrect|wrong|unlikely|less\s+likely|ruled\s+out|excluded|implausible|inconsistent|absent)"
    r"|[)\]]?\s*(?:can|could|should|must)\s+be\s+(?:ruled\s+out|excluded|eliminated|dismissed)"
    r"|[)\]]?\s*(?:doesn't|does\s+not|do\s+not|don't)\s+(?:fit|match|apply))"
)


def is_negated(text: str, start: int, end: int) -> bool:
    """Whether the mention ``text[start:end]`` is rejected ("not A", "A is incorrect", "rule out A")."""
    before = text[max(0, start - 40): start]
    after = text[end: end + 60]
    return bool(NEGATION_BEFORE.search(before) or NEGATION_AFTER.match(after))


@dataclass(frozen=True)
class Segment:
    """The text right after an explicit answer marker."""

    start: int
    text: str


def answer_segments(text: str) -> list[Segment]:
    """Segments following explicit answer markers, in order of appearance (to end of line)."""
    out: list[Segment] = []
    for m in ANSWER_MARKER.finditer(text):
        rest = text[m.end():]
        line = rest.split("\n", 1)[0]
        if not line.strip() and "\n" in rest:  # "Answer:\nB"
            nxt = rest.lstrip("\n").split("\n", 1)[0]
            line = nxt
        out.append(Segment(m.start(), line[:240]))
    return out


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
