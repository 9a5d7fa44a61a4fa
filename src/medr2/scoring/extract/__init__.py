"""Answer extraction per form (registry ``EXTRACTORS``). An extractor returns the parsed answer in the
item's answer format, or None: an answer that cannot be read is *unparsed*, never guessed.

``read`` also says *why* an answer is unparsed (``Reading.reason``: a letter/text conflict, an ambiguous
list, 'none of the above' that is not an option, ...); forms with a reader in ``READERS`` give a reason,
any other registered extractor is wrapped (no reason). Registries: ``docs/extending.md``."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from medr2.records import ABSTAIN_OPTION
from medr2.registry import Registry
from medr2.scoring.extract.abstain import declines, find_decline
from medr2.scoring.extract.choice import extract_mcq, extract_multi, read_mcq, read_multi
from medr2.scoring.extract.common import Reading, strip_reasoning
from medr2.scoring.extract.statements import normalise
from medr2.scoring.extract.text import extract_text
from medr2.scoring.extract.yesno import extract_yesno, read_yesno

Extractor = Callable[[str, Sequence[str]], str | None]
Reader = Callable[[str, Sequence[str]], Reading]

# form -> extractor (adding one: docs/extending.md)
EXTRACTORS: Registry[Extractor] = Registry("answer form", field="form")
for _form, _fn in (("mcq", extract_mcq), ("yesno", extract_yesno), ("multi", extract_multi), ("text", extract_text)):
    EXTRACTORS.register(_form, _fn)
READERS: dict[str, Reader] = {
    "mcq": read_mcq,
    "yesno": read_yesno,
    "multi": read_multi,
}


def register_extractor(form: str, *, replace: bool = False) -> Callable[[Extractor], Extractor]:
    """Decorator: register ``fn(body, options) -> answer | None`` for items of ``form``; a built-in form is
    replaced only with ``replace=True`` (the new extractor then also replaces that form's reader)."""
    def deco(fn: Extractor) -> Extractor:
        EXTRACTORS.register(form, fn, replace=replace)
        READERS.pop(form, None)  # the new extractor replaces the built-in reader of that form
        return fn

    return deco


def read(form: str, raw: str | None, options: Sequence[str] = ()) -> Reading:
    """Parse ``raw`` for an item of ``form`` (reasoning blocks and end tokens removed first), with the reason
    when it cannot be read, or an abstention (``Reading.abstained``). Boxes: see ``medr2.scoring.boxes.read_box``.

    Abstentions (``medr2.scoring.extract.abstain``) are decided here for every form, so every entry point that
    reads an answer sees them: the clauses that decline are removed and the rest is read; a choice stated in the
    rest wins, else the answer is an abstention. A chosen option whose text declines is an abstention too."""
    if raw is None:
        return Reading(None, "no answer")
    body = normalise(strip_reasoning(raw))
    if not body:
        return Reading(None, "empty answer (nothing after the reasoning block)")
    decline = find_decline(body)
    if decline is None:
        return _declined_option(_read_form(form, body, options), options)
    if decline.rest:
        got = _declined_option(_read_form(form, decline.rest, options), options)
        if got.value is not None or got.abstained:
            return got
    return Reading(None, f"abstained: {decline.phrases[-1]!r}", abstained=True)


@functools.lru_cache(maxsize=4096)
def _option_declines(option: str) -> bool:
    """Whether an option's text declines (cached: option texts repeat across items)."""
    return declines(option)


def _declined_option(got: Reading, options: Sequence[str]) -> Reading:
    """A single-choice letter whose option text declines (``--abstain-option``) is an abstention."""
    v = got.value
    if v is not None and len(v) == 1 and 0 <= ord(v) - ord("A") < len(options) \
            and _option_declines(options[ord(v) - 65]):
        return Reading(None, f"abstained: chose option {v} ({options[ord(v) - 65]!r})", abstained=True)
    return got


def _read_form(form: str, body: str, options: Sequence[str]) -> Reading:
    if form == "box":
        from medr2.scoring.boxes import format_box, read_box

        got = read_box(body)
        return Reading(None if got.box is None else format_box(got.box), got.reason)
    reader = READERS.get(form)
    if reader is not None:
        return reader(body, options)
    try:
        fn = EXTRACTORS[form]
    except KeyError as e:
        raise KeyError(f"no extractor for form {form!r} (known: {sorted(EXTRACTORS)})") from e
    return Reading(fn(body, options))


def extract(form: str, raw: str | None, options: Sequence[str] = ()) -> str | None:
    """Parse ``raw`` for an item of ``form`` (reasoning blocks removed first); None = unparsed."""
    return read(form, raw, options).value


__all__ = ["ABSTAIN_OPTION", "EXTRACTORS", "READERS", "Reading", "extract", "extract_mcq", "extract_multi",
           "extract_text",
           "extract_yesno", "read", "register_extractor", "strip_reasoning"]
