"""An answer as statements: the structure every form's reader works on, and the one precedence policy.

Reading an answer is two steps (docs/metrics.md, "Statements and the one precedence policy"):

1. **Normalise and tokenise** (:func:`normalise`, :func:`final_statements`, :func:`clause`): full-width forms are
   folded to ASCII by Unicode NFKC (``Ｂ``, ``：``, ``（``), answer markup becomes a final-answer statement
   (``<answer>B</answer>``, ``\\boxed{B}``, ``[ANSWER] B``), tool calls that are not the answer are removed (a
   zoom-in box is not the answer box), and the text is cut into **final-answer statements** (a marker of
   :data:`medr2.scoring.extract.markers.LANGUAGES` and what follows it), **commitments**, **rejections** (whose scope
   is their clause), **weighings** (an option in a question, a per-option confidence list, an unfinished clause)
   and plain **mentions**.
2. **Decide** (:func:`decide`): each form's reader turns statements into :class:`Candidate` readings with a rank,
   and one policy picks the answer:

   * a higher rank wins: ``FINAL`` (an explicit final-answer statement or commitment) > ``LEAD`` (the answer opens
     with a bare letter / yes / no) > ``SENTENCE`` (a letter or yes/no standing as a sentence of its own) >
     ``WHOLE`` (the whole answer is an option's text, a synonym or a sub-type of exactly one option) > ``MENTION``
     (one option asserted in prose, never in a question, a weighing or an unfinished clause);
   * among ``FINAL`` statements **the last wins**, and when an earlier one named another answer the reading notes
     the change (``Reading.reason``: ``"answer changed: A -> B"``);
   * in the lower ranks every candidate of the winning rank must agree, else the answer is unparsed with the
     reason; an unreadable final statement (a conflict, 'B or C') makes the answer unparsed, never a guess;
   * no candidate at all: unparsed ("no commitment"), never a guess;
   * after the last final statement, a correction commits to what follows it and a doubt that names another
     answer withdraws it (:func:`afterthought`).

Yes/no answers without a final statement keep a stricter form of the lower ranks: every yes/no the answer states
(leading, as a sentence, opening a sentence, anywhere before punctuation) must agree ("Yes and no" is unparsed).
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.scoring.extract.common import Reading
from medr2.scoring.extract.markers import LANGUAGES

# -- 1. normalisation --------------------------------------------------------------------------------------

# full-width ASCII (U+FF01-U+FF5E) and the ideographic space, folded by NFKC ("Ｂ" -> "B", "：" -> ":")
_FOLD = {c: unicodedata.normalize("NFKC", chr(c)) for c in (*range(0xFF01, 0xFF5F), 0x3000)}
_WIDE = re.compile("[\uff01-\uff5e\u3000]")
_ANSWER_TAGS = r"answer|final_answer|final-answer|finalanswer|final|choice|option|selection|solution|result|output"
_ANSWER_TAG = re.compile(rf"<({_ANSWER_TAGS})\b[^>]*>(.*?)</\1\s*>", re.S | re.I)
# GLM-4.1V/4.5V wrap the final answer in <|begin_of_box|>…<|end_of_box|>
_GLM_BOX = re.compile(r"<\|begin_of_box\|>(.*?)<\|end_of_box\|>", re.S)
_BRACKET_NAME = r"(?:ANSWER|FINAL ANSWER|FINAL_ANSWER)"
_BRACKET_TAG = re.compile(rf"\[{_BRACKET_NAME}\]\s*(.*?)\s*(?:\[/{_BRACKET_NAME}\]|$)", re.S | re.I | re.M)
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_TEXT_CMD = re.compile(r"\\(?:text|textbf|mathrm|mathbf)\s*\{([^{}]*)\}")
_TOOL_BLOCK = re.compile(r"<(tool_call|function_call|tool_use|function)\b[^>]*>(.*?)</\1\s*>|<\|tool_call\|>(.*?)"
                         r"(?:<\|/tool_call\|>|$)|\[TOOL_CALLS\]\s*(\[.*?\]|\{.*?\})\s*(?:\n|$)", re.S | re.I)
_TOOL_NAME_KEYS = ("name", "function", "tool", "tool_name")
_TOOL_ARG_KEYS = ("arguments", "parameters", "args", "input")
_ANSWER_TOOL = re.compile(r"(?i)answer|submit|final|respond")
_ANSWER_ARG_KEYS = ("answer", "final_answer", "choice", "option", "selection", "selected", "label")


def fold_width(text: str) -> str:
    """Full-width forms folded to ASCII (Unicode NFKC of that block only: other characters are left alone)."""
    return text.translate(_FOLD) if _WIDE.search(text) else text


def _json_objects(text: str) -> list[tuple[int, int]]:
    """Spans of balanced top-level ``{...}`` in ``text`` (strings respected)."""
    out: list[tuple[int, int]] = []
    depth, start, in_str, esc = 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            esc = not esc and ch == "\\"
            if ch == '"' and not esc:
                in_str = False
            continue
        if ch == '"' and depth:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                out.append((start, i + 1))
    return out


def _tool_answer(obj: object) -> str | None:
    """For a tool-call object: the answer it submits ("" when it is a tool call without one; None when the
    object is not a tool call)."""
    if not isinstance(obj, dict):
        return None
    low = {str(k).lower(): v for k, v in obj.items()}
    fn = low.get("function") if isinstance(low.get("function"), dict) else None
    if fn is not None:
        low = {**low, **{str(k).lower(): v for k, v in fn.items()}}
    if not any(k in low for k in _TOOL_NAME_KEYS) or not any(k in low for k in _TOOL_ARG_KEYS):
        return None
    args: object = next(low[k] for k in _TOOL_ARG_KEYS if k in low)
    if isinstance(args, str):
        try:
            args = jsonsafe.loads(args, max_bytes=None)
        except BadInput:
            return ""
    if isinstance(args, dict):
        for k, v in args.items():
            if str(k).lower() in _ANSWER_ARG_KEYS and isinstance(v, str | list | bool):
                return v if isinstance(v, str) else ", ".join(map(str, v)) if isinstance(v, list) else str(v).lower()
    name = next((low[k] for k in _TOOL_NAME_KEYS if isinstance(low.get(k), str)), "")
    if _ANSWER_TOOL.search(name) and isinstance(args, dict) and args:  # submit_answer({"bbox": [...]})
        return json.dumps(args)
    return ""


def _replace_tool_calls(text: str) -> str:
    """Tool calls out of the answer: one that submits an answer becomes a final-answer statement, any other
    (zoom in, crop, search) is removed — its box or query is not the answer."""
    if "{" not in text and "<" not in text and "[TOOL" not in text:
        return text

    def block(m: re.Match[str]) -> str:
        inner = next((g for g in (m.group(2), m.group(3), m.group(4)) if g is not None), "")
        answers = [a for s, e in _json_objects(inner) if (a := _obj_answer(inner[s:e]))]
        return "".join(f"\nFinal answer: {a}\n" for a in answers) or " "

    text = _TOOL_BLOCK.sub(block, text)
    if '"' not in text:
        return text
    out, pos = [], 0
    for s, e in _json_objects(text):
        a = _obj_answer(text[s:e])
        if a is None:
            continue
        out.append(text[pos:s])
        out.append(f"\nFinal answer: {a}\n" if a else " ")
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _obj_answer(raw: str) -> str | None:
    try:
        obj = jsonsafe.loads(raw, max_bytes=None)
    except BadInput:
        return None
    return _tool_answer(obj)


_LAST_NORMAL = [""]


def normalise(text: str) -> str:
    """Full-width forms folded; answer markup (``<answer>``, ``\\boxed{}``, ``[ANSWER]``, GLM's
    ``<|begin_of_box|>``) turned into final-answer statements; tool calls that are not the answer removed."""
    if text is _LAST_NORMAL[0]:  # already the output of this function (read() and then the form's reader)
        return text
    t = _replace_tool_calls(fold_width(text))
    if "<" in t:
        t = _GLM_BOX.sub(lambda m: f"\nFinal answer: {m.group(1).strip()}\n", t)
        t = _ANSWER_TAG.sub(lambda m: f"\nFinal answer: {m.group(2).strip()}\n", t)
    if "\\" in t:
        t = _BOXED.sub(lambda m: "\nFinal answer: " + _TEXT_CMD.sub(r"\1", m.group(1)).strip() + "\n", t)
        t = _TEXT_CMD.sub(r"\1", t)
    if "[" in t:
        t = _BRACKET_TAG.sub(lambda m: f"\nFinal answer: {m.group(1).strip()}\n", t)
    t = t.strip()
    _LAST_NORMAL[0] = t  # normalise is idempotent: its last output is known to be normal
    return t


# -- 1b. the markers, compiled from the one table -----------------------------------------------------------

def _frag(f: str) -> str:
    return f.replace(" ", r"\s+")


def _alt(frags: Sequence[str]) -> str:
    return "(?:" + "|".join(_frag(f) for f in frags) + ")"


def _marker_pattern(codes: frozenset[str]) -> str:
    """One alternation of the languages' markers and commitments, each language in a named group (``lang_xx``:
    ``Match.lastgroup`` says which language stated the answer)."""
    parts = []
    for lang in LANGUAGES:
        if lang.code in codes:
            mine = [rf"{_alt(lang.nouns)}\s*{_alt(lang.copulas)}\s*:?", *(_frag(c) for c in lang.commits)]
            parts.append(f"(?P<lang_{lang.code}>" + "|".join(mine) + ")")
    return "(?i:" + "|".join(parts) + ")"


@functools.lru_cache(maxsize=128)
def _markers_of(codes: frozenset[str]) -> re.Pattern[str]:
    return re.compile(_marker_pattern(codes))


# every language's final-answer markers and commitments in one pattern
ANSWER_MARKER = _markers_of(frozenset(lang.code for lang in LANGUAGES))


_ALWAYS = frozenset(lang.code for lang in LANGUAGES if not lang.triggers)
_TRIGGERS = tuple((t, lang.code) for lang in LANGUAGES for t in lang.triggers)
_ASCII_TRIGGERS = tuple((t, code) for t, code in _TRIGGERS if t.isascii())


def answer_markers(text: str) -> Iterator[re.Match[str]]:
    """The final-answer markers and commitments of ``text``, in order: the pattern of the languages whose
    ``triggers`` occur in it (the same matches as :data:`ANSWER_MARKER`, faster)."""
    low = text.lower()
    pairs = _ASCII_TRIGGERS if low.isascii() else _TRIGGERS
    return _markers_of(_ALWAYS | frozenset([code for t, code in pairs if t in low])).finditer(text)


def _word_start(f: str) -> str:
    return (r"(?<![\w'])" if re.match(r"\w", f) else "") + _frag(f)


_REJECT_BEFORE = re.compile(
    r"(?i:(?:" + "|".join(_word_start(f) for lang in LANGUAGES for f in lang.reject_before)
    + r"|\bnot\s+option)\s*(?:(?:the|a|an|option|choice|answer|of|la|le|l['’]|die|das|der|opción|option)\s+)*"
    r"[(\[「]?)$"
)
# a cheap pre-check: the first word (or CJK characters) of some rejection occurs in the window
_REJECT_HINT = re.compile("(?i:" + "|".join(sorted({re.split(r"[ (\\\[?*+|]", f)[0] for lang in LANGUAGES
                                                   for f in (*lang.reject_before, "not option")} - {""}, key=len,
                                                  reverse=True)) + ")")
_REJECT_AFTER_BODY = (r"(?i:[)\]」]?\s*(?:\([^)]{0,40}\)\s*)?(?:"
                      + "|".join(_frag(f) for lang in LANGUAGES for f in lang.reject_after) + "))")
_REJECT_AFTER = re.compile("^" + _REJECT_AFTER_BODY)
_REJECTED_HEAD = re.compile(_REJECT_AFTER_BODY + r"\s*$")
# clause boundaries: the scope of a negation or a rejection
_CLAUSE_BREAK = re.compile(r"[.!?;\n。！？；]|\b(?:but|however|whereas|while)\b|但是|不过|但", re.I)


def clause(text: str, start: int, end: int) -> tuple[int, int]:
    """The clause holding ``text[start:end]`` (between the clause boundaries before and after it)."""
    left = 0
    for b in _CLAUSE_BREAK.finditer(text, max(0, start - 80), start):
        if not (text[b.start()] == "." and b.end() < len(text) and text[b.end():b.end() + 1].isdigit()):
            left = b.end()
    after = _CLAUSE_BREAK.search(text, end)
    return left, after.start() if after else len(text)


def is_negated(text: str, start: int, end: int) -> bool:
    """Whether the mention ``text[start:end]`` is rejected within its own clause ("not A", "A is incorrect",
    "rule out A", "B ist falsch"): a negation in another line or sentence does not reach it."""
    left, right = clause(text, start, end)
    before = text[max(left, start - 40): start]
    after = text[end: min(right + 1, end + 60)]
    return bool((_REJECT_HINT.search(before) and _REJECT_BEFORE.search(before)) or _REJECT_AFTER.match(after))


# -- 1c. statements -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Segment:
    """A final-answer statement: where its marker starts, the text right after the marker, and the language of
    the marker (a code of ``LANGUAGES``; "" for a bare rejection-and-contrast line)."""

    start: int
    text: str
    lang: str = ""


_NEG_WORDS = "(?i:" + "|".join(_word_start(f) for lang in LANGUAGES for f in lang.reject_before) + ")"
_NEG_OPEN = re.compile(r"^\s*" + _NEG_WORDS)
_NEG_LINE = re.compile(r"(?m)^[ \t]*" + _NEG_WORDS)
_LATIN_END = r"(?![^\W\d_])"  # a word ends here (Latin or Cyrillic); CJK contrasts need no boundary


def _contrast(f: str) -> str:
    latin = re.match(r"[^\W\d_]", f) is not None and not re.match(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]", f)
    return (r"(?<![^\W\d_])" + _frag(f) + _LATIN_END) if latin else _frag(f)


_CONTRAST_HINT = re.compile("(?i:" + "|".join(sorted({re.split(r"[(\\\[?*+|]", f)[0].strip() for lang in LANGUAGES
                                                     for f in lang.contrasts} - {""}, key=len, reverse=True)) + ")")
_CONTRAST = re.compile(r"(?i:[,;、]?\s*(?:" + "|".join(_contrast(f) for lang in LANGUAGES for f in lang.contrasts)
                       + r")\s*,?\s*)")


def _after_contrast(content: str) -> str:
    """What a final statement states: after a contrast when what precedes it is rejected ("not A but C",
    "nicht A, sondern C", "AではなくC"), else the whole content."""
    if not _CONTRAST_HINT.search(content):
        return content
    neg = _NEG_OPEN.match(content)
    m = _CONTRAST.search(content, neg.end() if neg else 0)
    if m is None or m.start() > 80:
        return content
    head = content[: m.start()]
    if neg is not None or _REJECT_AFTER.match(content[m.start():].lstrip(",;、 ")) or _REJECTED_HEAD.search(head):
        return content[m.end():]
    return content


def final_statements(text: str) -> list[Segment]:
    """The final-answer statements and commitments of ``text``, in order (each to the end of its line; a marker
    that ends its line takes the next line: "Answer:\\nB")."""
    out: list[Segment] = []
    for neg in _NEG_LINE.finditer(text):  # "Not A, but C." / "不是A，而是C。": a rejection and a contrast commit too
        line = text[neg.start():].split("\n", 1)[0]
        if (after := _after_contrast(line)) is not line:
            out.append(Segment(neg.start(), after))
    for m in answer_markers(text):
        rest = text[m.end():]
        line = rest.split("\n", 1)[0]
        if not line.strip() and "\n" in rest:
            line = rest.lstrip("\n").split("\n", 1)[0]
        out.append(Segment(m.start(), _after_contrast(line[:240]), (m.lastgroup or "")[5:]))
    return sorted(out, key=lambda seg: seg.start)


# "A: 55 %", "B (30%)", "- C: p=0.15": a per-option confidence list weighs the options, it chooses none
_CONFIDENCE_ENTRY = re.compile(r"(?<![\w])[(\[]?([A-Z])[)\]]?\s*(?:[:=–—-]\s*|\(\s*)(?:p\s*=\s*)?"
                               r"\d{1,3}(?:[.,]\d+)?\s*%|(?<![\w])[(\[]?([A-Z])[)\]]?\s*[:=–—-]\s*(?:p\s*=\s*)?0?\.\d+\b")
_DECIMAL = re.compile(r"[:=–—-]\s*(?:p\s*=\s*)?0?\.\d")
# an option weighed, not asserted: "maybe B", "considering B", "what about B", "B or C", "B vs C"
_WEIGH_BEFORE = re.compile(r"(?i)\b(?:maybe|perhaps|possibly|might\s+be|could\s+be|consider(?:ing)?|whether"
                           r"|what\s+about|looking\s+at|if|either|between)\b[^.;:!?]{0,30}$|(?:\bor|\bvs\.?|\bversus)\s*[(\[]?\s*$")
_WEIGH_AFTER = re.compile(r"(?i)^[^.;!?]{0,12}?(?:\bor\b|\bvs\b\.?|\bversus\b)|^\s*[)\]]?\s*\?")
# the answer was cut off mid-sentence: it ends on a comma, a dash or a word that cannot end a sentence
_UNFINISHED = re.compile(r"(?i)(?:[,:;–—-]|\b(?:the|a|an|of|with|and|or|but|to|is|are|in|which|that|for|as|because"
                         r"|since|on|at|by|from|than|whether|be|this|its|their))\s*$")


def confidence_list(text: str) -> bool:
    """Whether ``text`` lists options with confidences ("A: 55 %, B: 30 %"): a weighing, no choice."""
    if "%" not in text and not _DECIMAL.search(text):
        return False
    return _CONFIDENCE_ENTRY.search(text) is not None


def unfinished(text: str) -> bool:
    """Whether the answer was cut off mid-sentence (then no option mentioned in it is a commitment)."""
    return _UNFINISHED.search(text[-24:]) is not None


def asserted(text: str, start: int, end: int) -> bool:
    """Whether the mention ``text[start:end]`` is *asserted* by its clause: not rejected, not in a question
    ("B?"), not weighed ("maybe B", "B or C", "considering B")."""
    if is_negated(text, start, end):
        return False
    left, right = clause(text, start, end)
    if text[right: right + 1] == "?":
        return False
    return not (_WEIGH_BEFORE.search(text[left:start]) or _WEIGH_AFTER.search(text[end:right + 1]))


def _words(frags: Sequence[str]) -> str:
    return "(?i:" + "|".join(_contrast(f) for f in sorted(frags, key=len, reverse=True)) + ")"


_CORRECTION = re.compile(_words([f for lang in LANGUAGES for f in lang.corrections]))
_DOUBT = re.compile(_words([f for lang in LANGUAGES for f in lang.doubts]))
# the literal start of every correction and doubt (lower case), for the pre-check
_AFTER_WORDS = tuple(sorted({re.split(r"[(\\\[?*+|]", f)[0].strip().lower() for lang in LANGUAGES
                             for f in (*lang.corrections, *lang.doubts)} - {""}))


@dataclass(frozen=True)
class Afterthought:
    """What follows the last final statement: a correction (``commits``: the text after it states the new answer)
    or a doubt (the text after it may name another option, withdrawing the answer)."""

    start: int
    rest: str
    commits: bool


def afterthought(text: str, start: int) -> Afterthought | None:
    """The last correction or doubt in ``text`` after ``start`` (None when there is none)."""
    low = text[start:].lower()
    if not any(w in low for w in _AFTER_WORDS):  # a cheap pre-check (most answers hold none of the words)
        return None
    last: tuple[int, int, bool] | None = None
    for pat, commits in ((_CORRECTION, True), (_DOUBT, False)):
        for m in pat.finditer(text, start):
            if last is None or m.start() > last[0]:
                last = (m.start(), m.end(), commits)
    if last is None:
        return None
    return Afterthought(last[0], text[last[1]:].lstrip(" ,.:;!—–-"), last[2])


# -- 2. the one precedence policy ---------------------------------------------------------------------------

FINAL, LEAD, SENTENCE, WHOLE, MENTION = 5, 4, 3, 2, 1
_RANK_NAMES = {FINAL: "final-answer statements", LEAD: "leading answers", SENTENCE: "answers standing as sentences",
               WHOLE: "whole-answer readings", MENTION: "options mentioned"}


@dataclass(frozen=True)
class Candidate:
    """One statement's reading: its rank, where it starts, and its answer (``value``) or why it is unreadable
    (``value`` None, ``reason`` set: a conflict, 'B or C')."""

    rank: int
    start: int
    value: str | None
    reason: str | None = None


def decide(cands: Sequence[Candidate], *, empty: str = "no commitment: no answer stated") -> Reading:
    """The answer the candidates commit to, by the policy of this module's docstring."""
    if not cands:
        return Reading(None, empty)
    top = max(c.rank for c in cands)
    mine = sorted((c for c in cands if c.rank == top), key=lambda c: c.start)
    if top == FINAL:
        last = mine[-1]
        if last.value is None:
            return Reading(None, last.reason)
        earlier = [c.value for c in mine[:-1] if c.value is not None and c.value != last.value]
        if earlier:
            return Reading(last.value, f"answer changed: {earlier[-1]} -> {last.value} (the last final statement wins)")
        return Reading(last.value)
    bad = [c for c in mine if c.value is None]
    if bad:
        return Reading(None, bad[-1].reason)
    values = {c.value for c in mine}
    if len(values) == 1:
        return Reading(values.pop())
    return Reading(None, f"several {_RANK_NAMES[top]} ({', '.join(sorted(v for v in values if v is not None))}) "
                         "and no final statement")
