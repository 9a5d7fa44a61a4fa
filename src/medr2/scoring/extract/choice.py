"""Single-choice (MCQ) and multi-select extraction: letters or option texts, never a guess.

The answer's statements (final statements, leading letters, sentences, whole-answer meanings, asserted mentions)
become :class:`~medr2.scoring.extract.statements.Candidate` readings decided by the one precedence policy of
:mod:`medr2.scoring.extract.statements`; the rules below say how one statement is read.

Rules (docs/metrics.md, "Reading answers"):
- an option's *text* wins over a letter-like prefix ("B-cell lymphoma" is the option with that text, "X-ray"
  the X-ray option, not a letter);
- a letter whose following text names a *different* option ("B. Pleural effusion" where B is Pneumothorax,
  "C. 3" where C is "2") is a conflict: unparsed with the reason, never resolved silently;
- "None of the above" (or "none of these options is correct") is the option of that meaning when there is
  one; when there is none it is unparsed (a single-choice answer), or the empty selection (multi-select).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from medr2.scoring.extract.common import Reading, clean_markdown, json_answer, normalize_words, strip_hedge
from medr2.scoring.extract.markers import LANGUAGES
from medr2.scoring.extract.statements import (
    FINAL,
    LEAD,
    MENTION,
    SENTENCE,
    WHOLE,
    Candidate,
    afterthought,
    asserted,
    clause,
    confidence_list,
    decide,
    final_statements,
    is_negated,
    normalise,
    unfinished,
)

AMBIGUOUS = "ambiguous"
# option texts repeat across items: their normalised words are computed once
_norm = functools.lru_cache(maxsize=16384)(normalize_words)


@dataclass(frozen=True)
class Conflict:
    """An answer that states two different options (a letter and another option's text)."""

    reason: str


_OPEN = "([（【「『"
_CLOSE = ")]）】」』"
_CJK = "\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af"  # kana, CJK ideographs, hangul (Japanese/Korean copulas follow)
_CJK_PUNCT = "。，、；：！）】"
_LETTER_AT = r"[(\[（【「『]?\s*([A-Z])\s*[)\]）】」』]?"
_END_AFTER_LETTER = rf"(?=$|[\s.,:;!()\]{_CJK_PUNCT}{_CJK}（【」』]|-|–)"
_AFTER_OK = frozenset(" .,:;!()]\n-–\t（【」』" + _CJK_PUNCT)
_LEAD_LETTER = re.compile(r"^\s*" + _LETTER_AT + _END_AFTER_LETTER)
_LEAD_LOWER = re.compile(r"^\s*(?:\(([a-z])\)|([a-z])\)|([a-z])\s*[.]?\s*$)")
def _conjunctions(words: Sequence[str]) -> str:
    """An alternation of conjunctions: Latin/Cyrillic words as whole words, CJK ones as they are."""
    return "|".join(rf"(?<![^\W\d_]){re.escape(w)}(?![^\W\d_])" if re.match(r"[a-zà-ÿа-я]", w) else re.escape(w)
                    for w in sorted(words, key=len, reverse=True))


# the conjunctions of every language of the table (medr2.scoring.extract.markers): "A and C" / "A oder C"
_AND = _conjunctions([w for lang in LANGUAGES for w in lang.ands])
_OR = _conjunctions([w for lang in LANGUAGES for w in lang.ors])
_MORE_LETTERS = re.compile(r"^\s*[)\]]?\s*(?:,|/|" + _OR + "|" + _AND + r"|&|、)\s*[(\[]?\s*[A-Z](?=$|[\s.,:;!?)\]])")
# "B is correct", "(B) fits best", "Bが正解", "la B es correcta": the verdicts of every table language
# (it starts at the letter, a fast scan; "Option B is correct" is found at its "B")
_LETTER_THEN_VERDICT = re.compile(
    r"(?<![A-Za-z])([A-Z])(?![A-Za-z])[)\]」]?(?:\s*\(([^)]{0,60})\))?\s*"
    r"(?i:" + "|".join(f.replace(" ", r"\s+") for lang in LANGUAGES for f in lang.verdicts) + ")"
)
_BARE_MENTION = re.compile(r"\(([A-Z])\)|(?<![\w(])([A-Z])\)|\b(?i:option|choice)\s+([A-Z])\b")
_SENTENCE_LETTER = re.compile(r"(?:^|[.!?:]\s+|\n\s*)[(\[]?([A-Z])[)\]]?\s*[.!]?\s*(?=\n|$)")
_TRAILING_LETTER = re.compile(r"^\s*[(\[（]\s*([A-Z])\s*[)\]）]")
_SEP_AFTER_LETTER = re.compile(r"^[\s.:)\]）】,，、=–—-]*[(（]?\s*")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")

# "none of the above" and its paraphrases, as an answer
_NONE_PHRASE = re.compile(
    r"(?i:\bnone\s+of\s+(?:the\s+(?:above|options|choices|answers|listed(?:\s+options)?|given\s+options)"
    r"|these(?:\s+options|\s+choices|\s+answers)?|them|those(?:\s+options)?)"
    r"|\bneither\s+of\s+(?:these|them|the\s+options)"
    r"|\bno\s+(?:option|choice|answer)\s+(?:is|fits|applies)"
    r"|\ball\s+(?:of\s+the\s+)?(?:options|choices)\s+are\s+(?:wrong|incorrect))"
    r"|以上都不是|以上皆非|都不是"
)
# an option whose text means "none of the above"
_NONE_OPTION = re.compile(r"^(?:none\s+of\s+(?:the\s+above|these|them|the\s+(?:options|choices|listed(?:\s+options)?))"
                          r"|all\s+of\s+the\s+above\s+are\s+(?:wrong|incorrect)|以上都不是|以上皆非)$")


# after "A", these words mean the letter was an answer ("A because ..."), not the article ("A mass ...")
_CONNECTIVE = re.compile(r"^ (?:because|since|as|given|based|due|which|with|from|for|and|or|but|is|was|would|seems"
                         r"|appears|fits|here|then|again)\b")
_ANY_LETTER = re.compile(r"(?<![\w'])[(\[]?([A-Z])[)\]]?(?![\w'])")


def _rejected_letters(text: str, n: int) -> set[int]:
    """Options rejected by letter anywhere in the text ("A is incorrect", "rule out C")."""
    out = set()
    for m in _ANY_LETTER.finditer(text):
        if _valid(m.group(1), n) and is_negated(text, m.start(), m.end()):
            out.add(ord(m.group(1)) - ord("A"))
    return out


def _valid(letter: str, n_options: int) -> bool:
    return 0 <= ord(letter) - ord("A") < n_options


def _letter(i: int) -> str:
    return chr(ord("A") + i)


def _none_option(options: Sequence[str]) -> int | None:
    found = [i for i, o in enumerate(options) if _NONE_OPTION.match(_norm(o))]
    return found[0] if len(found) == 1 else None


def _starts_with_words(text: str, prefix: str) -> bool:
    """Whether normalised ``text`` starts with the normalised words of ``prefix`` (whole words)."""
    if not prefix or not text.startswith(prefix):
        return False
    rest = text[len(prefix):]
    return rest == "" or rest[0] == " " or (rest[0] == "." and not rest[1:2].isdigit())


@functools.lru_cache(maxsize=4096)
def _option_patterns(options: tuple[str, ...]) -> tuple[tuple[int, re.Pattern[str]], ...]:
    """(index, pattern) of each option's words, longest options first (cached per option list)."""
    norm_opts = [(i, normalize_words(o)) for i, o in enumerate(options)]
    norm_opts = sorted(((i, o) for i, o in norm_opts if o), key=lambda io: -len(io[1]))
    return tuple((i, re.compile(r"(?<![\w-])" + r"[\s\W]+".join(re.escape(w) for w in opt.split()) + r"(?![\w-])"))
                 for i, opt in norm_opts)


def _option_spans(text: str, options: Sequence[str]) -> list[tuple[int, int, int]]:
    """Non-overlapping (start, end, option index) mentions of option texts, longest options first."""
    taken: list[tuple[int, int, int]] = []
    low = text.lower()
    for i, pat in _option_patterns(tuple(options)):
        for m in pat.finditer(low):
            if any(not (m.end() <= s or m.start() >= e) for s, e, _ in taken):
                continue
            taken.append((m.start(), m.end(), i))
    return sorted(taken)


def _first_option_span(seg: str, options: Sequence[str]) -> tuple[int, int, int] | None:
    spans = _option_spans(seg, options)
    if not spans or seg[: spans[0][0]].strip(" \t\"'([:（【").strip():
        return None
    return spans[0]


def _lead_option(seg: str, options: Sequence[str]) -> int | str | Conflict | None:
    """An option whose text starts the segment; AMBIGUOUS if another option follows with 'or'; a Conflict
    when a letter in brackets right after it names another option ("Pleural effusion (C)")."""
    spans = _option_spans(seg, options)
    first = _first_option_span(seg, options)
    if first is None:
        return None
    rest = seg[first[1]:]
    if any(re.match(r"^\W*\b(?:or|and)\b", rest[: s - first[1]]) for s, _, i in spans[1:] if i != first[2]):
        return AMBIGUOUS
    tl = _TRAILING_LETTER.match(rest)
    if tl and _valid(tl.group(1), len(options)) and ord(tl.group(1)) - ord("A") != first[2]:
        k = ord(tl.group(1)) - ord("A")
        return Conflict(f"the text names option {_letter(first[2])} ({options[first[2]]!r}) but the letter "
                        f"after it is {tl.group(1)} ({options[k]!r})")
    return first[2]


def _letter_conflict(k: int, rest: str, options: Sequence[str]) -> Conflict | None:
    """Whether the text right after letter ``k`` names another option ("B. Pleural effusion", "C. 3")."""
    if not options or k >= len(options):
        return None
    after = normalize_words(_SEP_AFTER_LETTER.sub("", rest, count=1))
    if not after:
        return None
    own = _norm(options[k])
    if _starts_with_words(after, own):
        return None
    others = [j for j, o in enumerate(options) if j != k and _starts_with_words(after, _norm(o))]
    letter = _letter(k)
    if others:
        j = max(others, key=lambda j: len(_norm(options[j])))
        return Conflict(f"letter {letter} is {options[k]!r} but the text after it is option {_letter(j)} "
                        f"({options[j]!r})")
    num = _NUMBER.match(after)
    if _NUMBER.fullmatch(own) and num and after[num.end(): num.end() + 1] in ("", " ") and num.group(0) != own:
        return Conflict(f"letter {letter} is {options[k]!r} but the text after it says {num.group(0)!r}")
    return None


def _none_answer(options: Sequence[str]) -> str | Conflict:
    k = _none_option(options)
    if k is not None:
        return _letter(k)
    return Conflict("the answer is 'none of the above', which is not an option")


def _lead_letter(segment: str, n_options: int, options: Sequence[str], *, by_text: bool = True
                 ) -> str | Conflict | None:
    """A letter (or option text) at the start of an answer segment; AMBIGUOUS for 'B or C'; a Conflict when
    the letter and the text after it name different options. ``by_text=False``: letters only."""
    seg = strip_hedge(segment)
    opts = options if by_text else ()
    if _NONE_PHRASE.match(seg.lstrip(" \t\"'([:")):
        return _none_answer(options)
    if re.match(r"^\s*(?i:not|neither)\b", seg) and not any(
        normalize_words(seg).startswith(_norm(o)) for o in opts if o
    ):
        return None
    m = _LEAD_LETTER.match(seg)
    if m and (seg[m.end(): m.end() + 1] in _AFTER_OK or not seg[m.end(): m.end() + 1]
              or re.match(rf"[{_CJK}]", seg[m.end(): m.end() + 1])):
        ch = m.group(1)
        after = seg[m.end():]
        # the text of an option that starts with a letter-like token ("B-cell lymphoma", "X-ray") wins
        first = _first_option_span(seg, opts) if opts else None
        if first is not None and first[0] <= m.start(1) < first[1]:
            got = _lead_option(seg, opts)
            return None if got is None else got if isinstance(got, Conflict | str) else _letter(got)
        # a hyphenated word ("C-reactive") is not a letter
        hyphen_word = bool(re.match(r"^[-–]\w", after)) and not m.group(0).rstrip().endswith(tuple(_CLOSE))
        if hyphen_word:
            own = _norm(options[ord(ch) - ord("A")]) if _valid(ch, len(options)) else ""
            if not _starts_with_words(normalize_words(after[1:]), own):
                return None
        # "A mass ..." is an article, not option A: a bare capital followed by a lower-case word.
        bare = not m.group(0).strip().startswith(tuple(_OPEN)) and not m.group(0).rstrip().endswith(tuple(_CLOSE))
        article = (ch in ("A", "I") and bare and re.match(r"^ [a-z]", after) and not _CONNECTIVE.match(after))
        if ch == "A" and bare and re.match(r"^ \w", after) and options:  # "A B-cell lymphoma is seen": the article
            words = normalize_words(after)
            article = article or any(_starts_with_words(words, _norm(o)) for o in options[1:])
        if not article:
            if is_negated(seg, m.start(1), m.end(1)):
                return None
            if _MORE_LETTERS.match(after):
                return AMBIGUOUS
            if not _valid(ch, n_options):
                return AMBIGUOUS
            conflict = _letter_conflict(ord(ch) - ord("A"), after, options)
            return conflict if conflict is not None else ch
    lm = _LEAD_LOWER.match(seg)
    if lm:
        ch = next(g for g in lm.groups() if g).upper()
        return ch if _valid(ch, n_options) else AMBIGUOUS
    if not opts:
        return None
    opt = _lead_option(seg, opts)
    if opt is None or isinstance(opt, Conflict | str):
        return opt
    return _letter(opt)


def _as_reading(got: str | Conflict) -> Reading:
    if isinstance(got, Conflict):
        return Reading(None, "conflict: " + got.reason)
    if got == AMBIGUOUS:
        return Reading(None, "ambiguous: more than one answer, or a letter that is not an option")
    return Reading(got)


def _json_choice(value: object, options: Sequence[str]) -> Reading:
    if isinstance(value, list):
        if len(value) != 1:
            return Reading(None, f"a JSON list of {len(value)} answers for a single-choice item")
        value = value[0]
    if not isinstance(value, str | int) or isinstance(value, bool):
        return Reading(None, "the JSON answer is not a letter or an option text")
    return read_mcq(str(value), options, json_ok=False)


# the framing around a noun phrase that states an answer in words ("It's a magnetic resonance image.")
_FRAME = re.compile(
    r"^(?i:(?:(?:it|this|that|the\s+(?:image|scan|study|modality|finding|diagnosis|lesion|abnormality|answer))"
    r"(?:\s+is|['’]s|\s+shows|\s+appears\s+to\s+be|\s+looks\s+like|\s+represents|\s+demonstrates)\s+)?"
    r"(?:(?:most\s+)?(?:likely|probably|consistent\s+with|clearly|definitely)\s+)?(?:an?\s+|the\s+)?)"
)
_HEAD = re.compile(r"(?i)\s+(?:image|images|scan|study|exam|examination|picture|film)$")
_NOT = re.compile(r"^(?i:not|no)\s+(?:an?\s+|the\s+)?")


# words a modifier-dropping reading never drops ("no pleural effusion" is not pleural effusion)
_KEEP = frozenset(("no", "not", "non", "without", "absent", "negative", "of", "with", "or", "and", "vs", "versus",
                   "history", "rule", "excluded", "exclude", "free", "neither", "nor",
                   # a clause, a hedge or a question is no modifier: "It might be MRI" is weighed, not stated
                   "it", "this", "that", "is", "are", "was", "be", "been", "might", "may", "could", "would", "should",
                   "can", "will", "likely", "unlikely", "possibly", "probably", "maybe", "perhaps", "seems", "appears",
                   "look", "looks", "shows", "show", "suggest", "suggests", "i", "we", "think", "believe",
                   "consider", "considering", "either", "whether", "if", "what", "which", "rather", "than"))


def _variants(phrase: str) -> list[str]:
    """The phrase, without a generic head noun ("… image"), and without up to three leading modifiers
    ("T2-weighted MR image" -> "MR"): the readings of a noun phrase, most specific first."""
    out = [phrase, _HEAD.sub("", phrase), _HEAD.sub(" imaging", phrase)]
    words = _HEAD.sub("", phrase).split()
    for k in range(1, min(3, len(words) - 1) + 1):
        if not _modifier(words[k - 1]):
            break
        out.append(" ".join(words[k:]))
    return list(dict.fromkeys(w for w in out if w))


_MODIFIERS = frozenset(("small", "large", "moderate", "mild", "severe", "acute", "chronic", "bilateral", "left",
                        "right", "enhanced", "weighted", "contrast", "plain", "conventional", "portable", "standard",
                        "frontal", "lateral", "axial", "coronal", "sagittal", "diffuse", "focal", "extensive"))


def _modifier(word: str) -> bool:
    """Whether a leading word may be dropped as a modifier: punctuation, a word with a digit or a hyphen
    ("T2-weighted", "3D"), a common clinical adjective, or a term of the vocabulary ("chest", "breast") —
    never a word of :data:`_KEEP` (a negation, a hedge, a clause)."""
    from medr2.vocab import concept_of

    w = word.lower().strip(",;:.")
    if w in _KEEP:
        return False
    return not w or any(ch.isdigit() or ch == "-" for ch in w) or w in _MODIFIERS or concept_of(w) is not None


def _phrase_option(phrase: str, options: Sequence[str]) -> int | None:
    """The one option ``phrase`` names: its text, a synonym, another spelling, or a sub-type (``medr2.vocab``)."""
    from medr2.vocab import option_for, vocabulary

    v = vocabulary()
    for p in _variants(phrase):
        if not p or v.concept_of(p) is None:  # a phrase the vocabulary does not know names no option by meaning
            continue
        k = option_for(p, options)
        if k is not None:
            return k
        subtype = [i for i, o in enumerate(options) if v.is_a(p, o)]
        if len(subtype) == 1:
            return subtype[0]
    return None


def _option_by_meaning(body: str, options: Sequence[str]) -> int | None:
    """The option the whole answer names in words (:func:`_phrase_option` after the framing is removed: "It's a
    magnetic resonance image." -> MRI, "a glioblastoma" -> Glioma); with two options, a whole answer that rejects
    one of them ("Not malignant.") names the other."""
    text = " ".join(body.strip().rstrip(".!").split())
    phrase = _FRAME.sub("", text, count=1)
    k = _phrase_option(phrase, options)
    if k is not None:
        return k
    neg = _NOT.match(phrase)
    if neg and len(options) == 2:
        k = _phrase_option(phrase[neg.end():], options)
        return None if k is None else 1 - k
    return None


def _candidate(rank: int, start: int, got: str | Conflict) -> Candidate:
    r = _as_reading(got)
    return Candidate(rank, start, r.value, r.reason)


# a list of options, one per line ("A) CT", "- B: 30 %"): the options restated or weighed, not a choice
_OPTION_LINE = re.compile(r"(?m)^\s*(?:[-*•]\s*)?[(\[]?([A-Z])[)\].:]\s+\S")
# "Option A: unlikely. Option B: likely.": options labelled one by one, in a line or a sentence each
_OPTION_LABEL = re.compile(r"(?:^|[.;\n]\s*)(?:[-*•]\s*)?(?i:option|choice)\s+[(\[]?([A-Z])[)\]]?\s*[:=–—-]\s*\S")


def _lists_options(body: str) -> bool:
    return confidence_list(body) or len({m.group(1) for m in _OPTION_LINE.finditer(body)}) >= 2 or len(
        {m.group(1) for m in _OPTION_LABEL.finditer(body)}) >= 2


def _final_candidates(body: str, n: int, options: Sequence[str]) -> list[Candidate]:
    """FINAL: what final-answer statements and commitments state, and verdicts ("B is correct")."""
    out: list[Candidate] = []
    for seg in final_statements(body):
        got = _lead_letter(seg.text, n, options)
        if got is not None:
            out.append(_candidate(FINAL, seg.start, got))
    for m in _LETTER_THEN_VERDICT.finditer(body):
        if body[clause(body, m.start(1), m.end())[1]: ][:1] == "?":  # "B is correct?" asks
            continue
        if not is_negated(body, m.start(1), m.end(1)):
            ch = m.group(1)
            if not _valid(ch, n):
                out.append(_candidate(FINAL, m.start(), AMBIGUOUS))
                continue
            conflict = _letter_conflict(ord(ch) - ord("A"), m.group(2), options) if m.group(2) else None
            out.append(_candidate(FINAL, m.start(), conflict if conflict is not None else ch))
    return out


def _whole_candidates(body: str, options: Sequence[str]) -> list[Candidate]:
    """WHOLE: the whole answer is one option's text, a synonym or sub-type of it, or 'none of the above'."""
    whole = normalize_words(body)
    for i, o in enumerate(options):
        if whole and whole == _norm(o):
            return [Candidate(WHOLE, 0, _letter(i))]
    by_meaning = _option_by_meaning(body, options)
    if by_meaning is not None:  # the whole answer is another spelling of one option ("hydrothorax")
        return [Candidate(WHOLE, 0, _letter(by_meaning))]
    none_said = [m for m in _NONE_PHRASE.finditer(body) if not is_negated(body, m.start(), m.end())]
    if none_said:
        k = _none_option(options)
        if k is None:
            return [Candidate(WHOLE, 0, None, "the answer is 'none of the above', which is not an option")]
        spans = [sp for sp in _option_spans(body, options) if sp[2] != k and not is_negated(body, sp[0], sp[1])]
        return [Candidate(WHOLE, 0, _letter(k))] if not spans else [
            Candidate(WHOLE, 0, None, "'none of the above' and another option")]
    return []


def _mention_candidates(body: str, options: Sequence[str]) -> list[Candidate]:
    """MENTION: the one option the prose asserts (not rejected, not asked about, not weighed); none when the
    answer was cut off mid-sentence or lists the options with confidences."""
    n = len(options)
    spans = _option_spans(body, options)
    for s, e, i in spans:  # "the spleen (C)" where C is another option
        tl = _TRAILING_LETTER.match(body[e:])
        if tl and _valid(tl.group(1), n) and ord(tl.group(1)) - ord("A") != i and not is_negated(body, s, e):
            k = ord(tl.group(1)) - ord("A")
            return [Candidate(MENTION, s, None, f"conflict: the text names option {_letter(i)} ({options[i]!r}) but "
                                                f"the letter after it is {tl.group(1)} ({options[k]!r})")]
    if unfinished(body) or confidence_list(body):
        return []
    rejected = _rejected_letters(body, n) | {i for s, e, i in spans if is_negated(body, s, e)}
    chosen = {i for s, e, i in spans if asserted(body, s, e)}
    for m in _BARE_MENTION.finditer(body):
        ch = next(g for g in m.groups() if g)
        if _valid(ch, n) and asserted(body, m.start(), m.end()):
            chosen.add(ord(ch) - ord("A"))
    chosen -= rejected
    if len(chosen) > 1:
        return [Candidate(MENTION, 0, None, "several options mentioned, none stated as the answer")]
    return [Candidate(MENTION, 0, _letter(i)) for i in chosen]


def _after_final(body: str, cands: list[Candidate], options: Sequence[str]) -> Reading:
    """Final statements decided, with what follows the last one: a correction commits to a new answer, a doubt
    that names another (not rejected) option withdraws the answer."""
    last = max(cands, key=lambda c: c.start)
    after = afterthought(body, last.start + 1)
    if after is not None and last.value is not None:
        got = _lead_letter(after.rest, len(options), options)
        if after.commits and got is not None:
            return decide([*cands, _candidate(FINAL, after.start, got)])
        others = {_letter(i) for s, e, i in _option_spans(after.rest, options) if not is_negated(after.rest, s, e)}
        others |= {m.group(1) for m in _ANY_LETTER.finditer(after.rest)
                   if _valid(m.group(1), len(options)) and not is_negated(after.rest, m.start(), m.end())
                   and not _article(after.rest, m)}
        if others - {last.value}:
            return Reading(None, f"answer withdrawn: {last.value} and then another option "
                                 f"({', '.join(sorted(others - {last.value}))}) after a doubt")
    return decide(cands)


def _article(text: str, m: re.Match[str]) -> bool:
    """Whether the capital ``m`` is the article "A"/"I" before a lower-case word, not a letter."""
    return m.group(1) in ("A", "I") and not m.group(0).startswith(tuple(_OPEN)) and bool(
        re.match(r" [a-z]", text[m.end(): m.end() + 2]))


def read_mcq(text: str, options: Sequence[str], *, json_ok: bool = True) -> Reading:
    """The chosen option letter (with the reason when it cannot be read): the answer's statements read as
    :class:`~medr2.scoring.extract.statements.Candidate` readings, decided by the one precedence policy
    (:func:`medr2.scoring.extract.statements.decide`)."""
    n = len(options)
    text = normalise(text)  # every entry point (read, EXTRACTORS, READERS, a judge's reply) reads markup alike
    if json_ok:
        found, value = json_answer(text)
        if found:
            return _json_choice(value, options)
    body = clean_markdown(text).strip()
    if not body:
        return Reading(None, "empty answer")
    cands = _final_candidates(body, n, options)
    if cands:
        return _after_final(body, cands, options)
    listing = _lists_options(body)
    asks = body[clause(body, 0, 1)[1]:][:1] == "?"  # "B is correct?" / "B?": the answer opens with a question
    lead = None if listing or asks else _lead_letter(body, n, options, by_text=False)
    if lead is not None:
        return decide([_candidate(LEAD, 0, lead)])
    if not listing:
        cands = [Candidate(SENTENCE, m.start(), m.group(1)) for m in _SENTENCE_LETTER.finditer(body)
                 if _valid(m.group(1), n)]
        if cands:
            return decide(cands)
    return decide(_whole_candidates(body, options) or _mention_candidates(body, options),
                  empty="no option stated")


def extract_mcq(text: str, options: Sequence[str]) -> str | None:
    """The chosen option letter, or None when no single answer can be read."""
    return read_mcq(text, options).value


# -- multi-select -------------------------------------------------------------------------------------

_LIST_SEP = r"(?:,|;|/|&|、|，|；|" + _AND + r"|\s)"  # conjunctions in lower case: "E" is a letter
_LETTER_LIST = re.compile(
    r"^\s*[(\[]?\s*([A-Z])(?:\s*[)\]])?((?:\s*" + _LIST_SEP + r"\s*(?:(?:" + _AND + r")\s*)?[(\[]?\s*[A-Z](?:\s*[)\]])?"
    r"(?=$|[\s.,;:/&)\]、，；。和及与]))*)"
)
_OR_ANYWHERE = re.compile(_OR)
_OR_MORE = re.compile(r"^\s*,?\s*(?:" + _OR + r")\s*[(\[]?\s*[A-Z]\b")
_RUN_OF_LETTERS = re.compile(r"^\s*([A-Z]{2,8})\s*[.。]?\s*$")
_NONE_SELECTED = re.compile(r"^\s*(?i:none\b(?!\s+of\b)|no\s+(?:option|finding|choice|abnormalit(?:y|ies))s?\b"
                            r"|nothing\b|none\s+of\s+(?:them|these|the\s+above|the\s+options)\b)|^\s*(?:无|都没有|以上都不是)")
# labels of the options *not* selected ("Absent: B, D"): removed before reading
_ABSENT = re.compile(r"(?im)(?:^|(?<=[.;]))\s*[-*•]?\s*(?:absent|not\s+present|not\s+seen|excluded|negative"
                     r"|not\s+selected|unselected|ruled\s+out)\s*(?:findings?|options?)?\s*[:：][^\n]*?"
                     r"(?=(?:\b(?:present|selected|positive)\s*(?:findings?|options?)?\s*[:：])|\n|$)")
_PRESENT = re.compile(r"(?i)\b(?:present|positive|seen|selected)\s*(?:findings?|options?)?\s*[:：]")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\[[xX ]\])\s*")


def _letter_list(segment: str, n: int, options: Sequence[str] = ()) -> list[str] | None | str:
    seg = strip_hedge(segment)
    if _NONE_SELECTED.match(seg):
        k = _none_option(options) if options else None
        return [_letter(k)] if k is not None and _NONE_PHRASE.match(seg.strip()) else []
    run = _RUN_OF_LETTERS.match(seg)
    if run and not any(normalize_words(seg) == _norm(o) for o in options):
        letters = list(run.group(1))
        if len(set(letters)) == len(letters) and all(_valid(c, n) for c in letters):
            return letters
        return None
    m = _LETTER_LIST.match(seg)
    if not m:
        return None
    letters = [m.group(1), *re.findall(r"[A-Z]", m.group(2))]
    after = seg[m.end(): m.end() + 1]
    if after and after not in " .,;:!?)\n。，；":
        return None
    if len(letters) == 1 and letters[0] in ("A", "I") and re.match(r"^ [a-z]", seg[m.end():]):
        return None  # an article
    if options:
        first = _first_option_span(seg, options)
        if first is not None and first[0] <= m.start(1) < first[1]:
            return None  # an option text that starts like a letter ("B-cell lymphoma")
    if _OR_MORE.match(seg[m.end():]):
        return AMBIGUOUS  # "A, C or D": one of several, not a selection
    if any(not _valid(c, n) for c in letters):
        return AMBIGUOUS
    if len(letters) == 1 and options:
        conflict = _letter_conflict(ord(letters[0]) - ord("A"), seg[m.end():], options)
        if conflict is not None:
            return AMBIGUOUS
    return letters


def _option_set(segment: str, options: Sequence[str]) -> list[str] | None | str:
    spans = [(s, e, i) for s, e, i in _option_spans(segment, options) if not is_negated(segment, s, e)]
    if not spans:
        return None
    for (_, e, _), (s, _, _) in zip(spans, spans[1:], strict=False):
        if _OR_ANYWHERE.search(segment[e:s]):
            return AMBIGUOUS
    return [_letter(i) for _, _, i in spans]


def _line_item(line: str, n: int, options: Sequence[str]) -> list[str] | None | str:
    """One line of a one-option-per-line answer: a letter (optionally with its text) or an option text."""
    item = _BULLET.sub("", clean_markdown(line)).strip().rstrip(".;,")
    if not item:
        return None
    got = _lead_letter(item, n, options)
    if isinstance(got, Conflict):
        return AMBIGUOUS
    if got is None or got == AMBIGUOUS:  # not a one-option line ("A, C" is a list: read as a whole)
        return None
    k = ord(got) - ord("A")
    rest = normalize_words(item)
    if rest == _norm(options[k]) or len(item) == 1 or re.match(r"^[(\[]?[A-Z][)\].:]?(?:\s|$)", item):
        return [got]
    return None


def _lines_block(body: str, n: int, options: Sequence[str]) -> list[str] | None | str:
    """A block of lines that each name one option (after a marker line or as the whole answer)."""
    lines = body.split("\n")
    start = 0
    for i, line in enumerate(lines):
        low = clean_markdown(line).strip()
        if re.search(r"[:：]\s*$", low):
            start = i + 1  # "Answer:" / "Selected findings:" on its own line: the items follow
    block: list[str] = []
    for line in lines[start:]:
        if not line.strip():
            if block:
                break
            continue
        block.append(line)
    if len(block) < 2:
        return None
    picked: list[str] = []
    for line in block:
        got = _line_item(line, n, options)
        if got is None:
            return None
        if got == AMBIGUOUS:
            return AMBIGUOUS
        picked += list(got)
    return picked


def _json_multi(value: object, options: Sequence[str]) -> Reading:
    n = len(options)
    if isinstance(value, str):
        return read_multi(value, options, json_ok=False)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return Reading(None, "the JSON answer is not a list of letters or option texts")
    out = []
    for v in value:
        r = read_mcq(v, options, json_ok=False)
        if r.value is None or not _valid(r.value, n):
            return Reading(None, f"JSON list entry {v!r} is not an option")
        out.append(r.value)
    return Reading(",".join(sorted(set(out))))


def read_multi(text: str, options: Sequence[str], *, json_ok: bool = True) -> Reading:
    """The selected letters, sorted and joined by ',' ('' for an explicit 'none'), with a reason if unread."""
    n = len(options)
    text = normalise(text)
    if json_ok:
        found, value = json_answer(text)
        if found:
            return _json_multi(value, options)
    body = clean_markdown(text).strip()
    if not body:
        return Reading(None, "empty answer")
    has_absent = bool(_ABSENT.search(body))
    body = _ABSENT.sub("\n", body).strip()
    if has_absent:
        body = _PRESENT.sub("Selected:", body)
    found_: list[str] | None | str = _lines_block(body, n, options)
    segs = final_statements(body)
    if found_ is None:
        for seg in reversed(segs):
            found_ = _letter_list(seg.text, n, options)
            if found_ is None:
                found_ = _option_set(seg.text, options)
            if found_ is not None:
                break
    if found_ is None:
        found_ = _letter_list(body, n, options)
    if found_ is None and not segs:
        found_ = _option_set(body, options)
    if found_ is None and _NONE_PHRASE.search(body) and not _option_spans(body, options):
        k = _none_option(options)
        found_ = [_letter(k)] if k is not None else []
    if found_ is None:
        return Reading(None, "no selection stated")
    if found_ == AMBIGUOUS:
        return Reading(None, "ambiguous: alternatives ('or'), a conflict, or a letter that is not an option")
    return Reading(",".join(sorted(set(found_))))


def extract_multi(text: str, options: Sequence[str]) -> str | None:
    """The selected letters, sorted and joined by ',' ('' for an explicit 'none'); None if unreadable."""
    return read_multi(text, options).value
