"""Yes/no extraction: whole words only ('No' in 'Nodule' or 'Normal' is not an answer)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from medr2.scoring.extract.common import Reading, clean_markdown, json_answer, strip_hedge
from medr2.scoring.extract.markers import LANGUAGES
from medr2.scoring.extract.statements import FINAL, Candidate, afterthought, decide, final_statements, normalise

# "No" is an answer only when punctuation or a new clause follows ("No abnormality" is a noun phrase).
_WORD = re.compile(
    r"^\s*[\"'(\[]?\s*(yes|true|false|no(?=\s*(?:[,.!;:)\]\"'–—。，-]|$)|\s+(?:it|there|the|this|that|I|we|they)\b))"
    r"\b(?![-'])(?!\s*\?)",  # "Yes?" asks, it does not answer
    re.I,
)
_ANYWHERE = re.compile(r"\b(yes|no)\b(?=\s*(?:[,.!;:)\]\"'–—-]|$))", re.I)
# "..., so no." / "...; therefore, yes." at the end of the answer: a conclusion
_CONCLUSION = re.compile(r"[,;:–—-]\s*(?i:so|therefore|thus|hence|which\s+means)\s*,?\s*(?i:the\s+answer\s+is\s+)?"
                         r"(yes|no)\s*[.!]?\s*$", re.I)
# "Probably not." / "Most likely not, ..." (a hedge word is required: "Not sure" is no answer)
_HEDGED_NOT = re.compile(r"^\s*(?i:(?:most\s+)?(?:probably|likely|unlikely|definitely|certainly|absolutely|clearly)"
                         r"|almost\s+certainly)\s+not\b\s*(?:[.!,;]|$)")
# every other language's yes/no words (medr2.scoring.extract.markers): read where a punctuation mark or the end follows
_EN = ("yes", "no", "true", "false")  # read by _WORD above (with its rule for "No" as a determiner)
_YES = [w for lang in LANGUAGES for w in lang.yes if w not in _EN]
_NO = [w for lang in LANGUAGES for w in lang.no if w not in _EN]
_END = r"(?=\s*(?:[。，,.!！；;：:、)\]」\"'–—-]|$))"
_OTHER = re.compile(r"^\s*[\"'(\[「]?\s*(?i:(" + "|".join(sorted(_YES, key=len, reverse=True)) + ")|("
                    + "|".join(sorted(_NO, key=len, reverse=True)) + "))" + _END)
# a yes/no standing as a sentence of its own ("... effusion.\nYes." / "是的。")
_SENTENCE = re.compile(r"(?:^|[.!?;。]\s*|\n\s*)[\"'(\[「]?(?i:(?:definitely|certainly|clearly|probably)\s+)?"
                       r"(?i:(yes|true|" + "|".join(_YES) + ")|(no|false|" + "|".join(_NO)
                       + r"))[\"')\]」]?\s*[.!。]?\s*(?=\n|$)")
# a yes/no opening a sentence and followed by a comma: "There is no mass. Yes, there is an effusion."
_SENTENCE_OPEN = re.compile(r"(?:[.!?;:。]\s*|\n\s*)[\"'(\[]?(?i:(yes|true|" + "|".join(_YES) + ")|(no|false|"
                            + "|".join(_NO) + r"))\s*[,，、]\s*")
_MAP = {"yes": "yes", "no": "no", "true": "yes", "false": "no"}


def _word(segment: str) -> str | None:
    seg = strip_hedge(segment)
    m = _WORD.match(seg)
    if m:
        return _MAP[m.group(1).lower()]
    z = _OTHER.match(seg)
    if z:
        return "yes" if z.group(1) else "no"
    if _HEDGED_NOT.match(segment):
        return "no"
    return None


def _json_yesno(value: object, options: Sequence[str]) -> Reading:
    if isinstance(value, bool):
        return Reading("yes" if value else "no")
    if isinstance(value, str):
        return read_yesno(value, options, json_ok=False)
    return Reading(None, "the JSON answer is not yes/no")


def _after_final(body: str, explicit: list[Candidate]) -> Reading:
    """Final statements decided, with what follows the last one (``statements.afterthought``): a correction
    followed by yes/no commits to it, a doubt followed by the other word withdraws the answer."""
    last = max(explicit, key=lambda c: c.start)
    after = afterthought(body, last.start + 1)
    if after is not None and last.value is not None:
        w = _word(after.rest)
        if after.commits and w is not None:
            return decide([*explicit, Candidate(FINAL, after.start, w)])
        said = {w} if w is not None else set()
        said |= {_MAP[m.group(1).lower()] for m in _ANYWHERE.finditer(after.rest)}
        if said - {last.value}:
            return Reading(None, f"answer withdrawn: {last.value} and then {(said - {last.value}).pop()} after a doubt")
    return decide(explicit)


def read_yesno(text: str, options: Sequence[str] = (), *, json_ok: bool = True) -> Reading:
    """'yes' or 'no' (with the reason when the text does not state one answer)."""
    text = normalise(text)  # every entry point reads markup alike
    if json_ok:
        found, value = json_answer(text)
        if found:
            return _json_yesno(value, options)
    body = clean_markdown(text).strip()
    if not body:
        return Reading(None, "empty answer")
    explicit = [Candidate(FINAL, seg.start, w) for seg in final_statements(body) if (w := _word(seg.text)) is not None]
    if not explicit and options:
        from medr2.scoring.extract.choice import read_mcq

        letter = read_mcq(body, options)
        if letter.value is not None:
            return Reading(_word(options[ord(letter.value) - ord("A")]))
        if letter.reason and letter.reason.startswith("conflict"):
            return letter
    if explicit:
        return _after_final(body, explicit)
    concl = _CONCLUSION.search(body)
    if concl:
        before = body[: concl.start()]
        earlier = {m.group(1).lower() for m in _ANYWHERE.finditer(before)} | ({w} if (w := _word(before)) else set())
        if earlier - {concl.group(1).lower()}:
            return Reading(None, "both yes and no stated")
        return Reading(concl.group(1).lower())
    lead = _word(body)
    stated = {lead} if lead is not None else set()
    stated |= {"yes" if m.group(1) else "no" for m in _SENTENCE.finditer(body)}
    stated |= {"yes" if m.group(1) else "no" for m in _SENTENCE_OPEN.finditer(body)}
    if not stated:
        return Reading(None, "no yes/no stated")
    # any other answer-like yes/no in the text ("Yes and no", "No, but actually yes") makes it ambiguous
    anywhere = {w.lower() for w in _ANYWHERE.findall(body)}
    if len(stated) == 1 and anywhere <= stated:
        return Reading(stated.pop())
    return Reading(None, "both yes and no stated")


def extract_yesno(text: str, options: Sequence[str] = ()) -> str | None:
    """'yes' or 'no', or None when the text does not state one answer."""
    return read_yesno(text, options).value
