"""Structured answers (``medr2 eval --structured-answers``, issue 42): the server constrains the answer field.

Off by default: constraining the decoder can change a model's accuracy, so a run that used it records which
mechanism in its manifest and identity (``structured_answers``) and the report marks it.

How the answer is constrained is a registry entry (:data:`STRUCTURED_MODES`), one per server mechanism; a
preset declares the one its servers support (``Preset.structured``), ``--model-option structured=NAME``
picks another. Each entry declares the request-body fields for one item (``fields``) and who supports it:

- ``json_schema``: OpenAI-style ``response_format`` with a JSON schema (OpenAI, vLLM, SGLang, Ollama): the
  answer is ``{"answer": ...}`` whose field is an enum of the option letters, of ``yes``/``no``, a list of
  letters (select-all) or four numbers (a box);
- ``vllm-choice``: vLLM guided choice (``structured_outputs.choice``): the answer is the option letter or
  yes/no itself; select-all and boxes as vLLM's ``structured_outputs.json`` with the same schema;
- ``vllm-guided``: the same for vLLM releases before 0.12 (``guided_choice`` / ``guided_json``);
- ``sglang-regex``: SGLang's ``regex`` sampling parameter for single choices; select-all and boxes as
  ``json_schema``.

Free-text items (reports, short answers) are never constrained. The stored raw answer is kept as the server
sent it; scoring reads the structured field: a closed answer that is one of the allowed values is taken as it is
(:func:`structured_choice`), any other field (a box, a value outside the constraint) is read by the ordinary
answer reader (:func:`structured_answer` gives it the field's text), and an answer with no field (a server that
ignored the constraint) is read as free text.
``hf:`` models use the log-likelihood choice (``choice=loglik``, :mod:`medr2.models.choice`) instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.records import letter
from medr2.registry import Registry

ANSWER_FIELD = "answer"
CONSTRAINED_FORMS = frozenset({"mcq", "yesno", "multi", "box"})
YES_NO = ("yes", "no")
# the mechanism recorded for hf: models (the log-likelihood choice of medr2.models.choice)
LOGLIK = "loglik"


def _allowed(item: Any) -> list[str]:
    """The values a single-choice answer may take: the option letters, or yes/no."""
    if item.form == "yesno":
        return list(YES_NO)
    return [letter(i) for i in range(len(item.options or ()))]


def answer_schema(item: Any) -> dict[str, Any] | None:
    """The JSON schema of ``{"answer": ...}`` for ``item``'s form, or None where the answer is free text."""
    form = getattr(item, "form", None)
    if form in ("mcq", "yesno"):
        value: dict[str, Any] = {"type": "string", "enum": _allowed(item)}
    elif form == "multi":
        # no uniqueItems: not every server's grammar compiler takes it (a repeated letter is read by the reader)
        value = {"type": "array", "items": {"type": "string", "enum": _allowed(item)}, "minItems": 1}
    elif form == "box":
        value = {"type": "array", "items": {"type": "number"}, "minItems": 4, "maxItems": 4}
    else:
        return None
    return {"type": "object", "properties": {ANSWER_FIELD: value}, "required": [ANSWER_FIELD],
            "additionalProperties": False}


def _response_format(item: Any) -> dict[str, Any]:
    schema = answer_schema(item)
    if schema is None:
        return {}
    return {"response_format": {"type": "json_schema",
                                "json_schema": {"name": "answer", "schema": schema, "strict": True}}}


def _vllm_choice(item: Any) -> dict[str, Any]:
    if getattr(item, "form", None) in ("mcq", "yesno"):
        return {"structured_outputs": {"choice": _allowed(item)}}
    schema = answer_schema(item)
    return {} if schema is None else {"structured_outputs": {"json": schema}}


def _vllm_guided(item: Any) -> dict[str, Any]:
    if getattr(item, "form", None) in ("mcq", "yesno"):
        return {"guided_choice": _allowed(item)}
    schema = answer_schema(item)
    return {} if schema is None else {"guided_json": schema}


def _sglang_regex(item: Any) -> dict[str, Any]:
    if getattr(item, "form", None) in ("mcq", "yesno"):
        return {"regex": "(" + "|".join(re.escape(a) for a in _allowed(item)) + ")"}
    return _response_format(item)


@dataclass(frozen=True)
class StructuredMode:
    """One server mechanism that constrains the answer: ``fields(item)`` gives the request-body fields for
    one item (empty where its form is free text); ``servers`` says who supports it (shown in messages/docs)."""

    name: str
    servers: str
    fields: Callable[[Any], dict[str, Any]]
    # the forms whose constrained answer is the bare value (``B``, ``yes``: guided choice, regex); every other
    # constrained form answers ``{"answer": ...}`` (:func:`follows` checks an answer against this)
    bare_forms: frozenset[str] = frozenset()


STRUCTURED_MODES: Registry[StructuredMode] = Registry("structured answer mode",
                                                      field="--model-option structured")


def register_structured(mode: StructuredMode) -> StructuredMode:
    return STRUCTURED_MODES.register(mode.name, mode)


register_structured(StructuredMode("json_schema", "OpenAI, vLLM, SGLang, Ollama (response_format json_schema)",
                                   _response_format))
_SINGLE = frozenset({"mcq", "yesno"})
register_structured(StructuredMode("vllm-choice", "vLLM >= 0.10 (structured_outputs choice / json)", _vllm_choice,
                                   _SINGLE))
register_structured(StructuredMode("vllm-guided", "vLLM < 0.12 (guided_choice / guided_json; removed in 0.12)",
                                   _vllm_guided, _SINGLE))
register_structured(StructuredMode("sglang-regex", "SGLang (regex sampling parameter; json_schema for the rest)",
                                   _sglang_regex, _SINGLE))


def get_structured(name: str) -> StructuredMode:
    return STRUCTURED_MODES.lookup(name)


def request_fields(mode: str | None, item: Any) -> dict[str, Any]:
    """The body fields constraining ``item``'s answer under ``mode`` (none without a mode or an item)."""
    if mode is None or item is None or getattr(item, "form", None) not in CONSTRAINED_FORMS:
        return {}
    return get_structured(mode).fields(item)


def follows(mode: str | None, item: Any, raw: str | None) -> bool | None:
    """Whether ``raw`` has the shape ``mode``'s constraint gives ``item``'s answer (the bare allowed value, or
    ``{"answer": ...}`` with an allowed value, a non-empty list of allowed letters, four numbers); None where
    nothing was constrained (no mode, the log-likelihood choice, a free-text form). A server that ignores the
    constraint (``transformers serve`` drops ``response_format``) answers free text: False."""
    form = getattr(item, "form", None)
    if mode is None or mode == LOGLIK or form not in CONSTRAINED_FORMS:
        return None
    text = (raw or "").strip()
    if form in get_structured(mode).bare_forms:
        return text in _allowed(item)
    value = _field(text)
    if form in ("mcq", "yesno"):
        return isinstance(value, str) and value in _allowed(item)
    if not isinstance(value, list) or not value:
        return False
    if form == "multi":
        return all(isinstance(v, str) and v in _allowed(item) for v in value)
    return len(value) == 4 and all(_number(v) for v in value)


def unfollowed_note(mode: str, item: Any, raw: str | None, finish_reason: str | None) -> str:
    """The note stored with an answer that does not have its constraint's shape (:func:`follows`): cut off, where it
    stopped at the token limit and begins as the constraint's shape does; else not followed."""
    bare = item.form in get_structured(mode).bare_forms
    shape = "one of " + ", ".join(_allowed(item)) if bare else 'a JSON object {"answer": ...} with an allowed value'
    text = (raw or "").strip()
    begun = any(a.startswith(text) for a in _allowed(item)) if bare else text.startswith("{")
    if finish_reason == "length" and begun:
        return (f"structured answer ({mode}) cut off by the token limit before it was complete (not {shape}); "
                "read as free text")
    return (f"structured answer ({mode}) not followed: the answer is not {shape}, so the server did not apply the "
            "constraint (transformers serve ignores response_format; use a server that supports it, see "
            "docs/serving.md); read as free text")


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _field(raw: str) -> Any:
    """The ``answer`` field of a JSON object answer, or None."""
    text = raw.strip()
    if not text.startswith("{"):
        return None
    try:
        data = jsonsafe.loads(text)
    except BadInput:
        return None
    return data.get(ANSWER_FIELD) if isinstance(data, dict) else None


def structured_choice(form: str, raw: str, options: Any = ()) -> str | None:
    """The closed answer a constrained server gave, in the scorer's format (``B``, ``yes``, ``A,C``), where the
    answer is one of the values its constraint allows: the answer object's field (``json_schema``) or the bare
    value (guided choice, regex). Read by structure, not by the free-text reader (an option whose text is a
    letter cannot make it ambiguous); None for anything else (the reader then reads the answer)."""
    if form not in ("mcq", "yesno", "multi"):
        return None
    allowed = set(_allowed(_Asked(form, tuple(options or ()))))
    value = _field(raw)
    if value is None and form != "multi":
        value = raw.strip()  # guided choice: the answer is the value itself
    if form == "multi":
        if isinstance(value, list) and value and all(isinstance(v, str) and v in allowed for v in value) \
                and len(set(value)) == len(value):
            return ",".join(sorted(value))
        return None
    return value if isinstance(value, str) and value in allowed else None


@dataclass(frozen=True)
class _Asked:
    form: str
    options: tuple[str, ...]


def structured_answer(form: str, raw: str) -> str | None:
    """The text of the structured answer field in ``raw`` for the reader (a letter, yes/no, ``A, C``, or
    ``[x1, y1, x2, y2]``), or None where ``raw`` holds no such field (a guided-choice answer is the bare value
    already; a server that ignored the schema wrote free text): the reader then reads ``raw`` itself."""
    if form not in CONSTRAINED_FORMS:
        return None
    value = _field(raw)
    if form in ("mcq", "yesno"):
        return value.strip() if isinstance(value, str) and value.strip() else None
    if not isinstance(value, list) or not value:
        return None
    if form == "multi":
        return ", ".join(v.strip() for v in value) if all(isinstance(v, str) and v.strip() for v in value) else None
    if len(value) == 4 and all(_number(v) for v in value):  # box
        return "[" + ", ".join(repr(v) for v in value) + "]"
    return None
