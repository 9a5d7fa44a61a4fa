"""Negation, hedging and hypothetical context of clinical text (issue 39): the one set of NegEx/ConText-style
trigger rules and their scopes, read by the claim checker (:mod:`medr2.scoring.claims`: a model's rationale) and by
the readers (:func:`stated_absent`: the findings a radiology report negates become ``Case.absent``).

The method is NegEx's (Chapman et al. 2001) with ConText's modifiers (Harkema et al. 2009), written as rules of our
own over the clinical vocabulary (:mod:`medr2.vocab`):

* a mention's **scope** is its clause (:func:`clauses`): a sentence end, ``;``, a Chinese comma, "but",
  "however", "although", "with", "without", ", and" or a plan ("recommend ...") end it (ConText's termination
  terms); a weak hedge after a relative clause or an appended alternative (:data:`HEDGE_BREAK`) no longer governs it;
* **negated** (:func:`negated`): a pre-negation trigger (:data:`NEG_BEFORE`: "no", "without", "absence of",
  "negative for", "ruled out", "未见", "无", a checklist box left unticked "- [ ] X", ...) before the mention in
  its clause, its scope ending at a conclusion drawn from it (", so ..."), or a post-negation trigger
  (:data:`NEG_AFTER`: "is not seen", "absent", ": none", "不明显", ...) after it;
* **uncertain** (:func:`uncertain`): a weak hedge in the scope ("possible", "may", "or", "可能") of a mention that
  is not negated, or "cannot be excluded" (:data:`CANNOT_EXCLUDE`) whether negated or not: neither asserted nor
  denied; a strong hedge ("likely", "consistent with", "考虑": :data:`STRONG_HEDGE`) still asserts;
* **hypothetical** (:data:`NOT_ABOUT_IMAGE`, :data:`PLANNED`): a condition ("if", "would"), history, a question,
  a textbook statement or a plan is not said of this image.

:func:`mentions` reads every finding/diagnosis concept of the vocabulary a text names with these three flags.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

from medr2 import vocab as clinical

__all__ = ["CANNOT_EXCLUDE", "CLAUSE_BREAK", "GENERIC", "HEDGE_BREAK", "NEG_AFTER", "NEG_BEFORE", "NEG_SCOPE",
           "NOT_ABOUT_IMAGE", "PLAN", "PLANNED", "STRONG_HEDGE", "WEAK_HEDGE", "Mention", "clauses", "found",
           "hedge_scope", "mentions", "negated", "no_break", "stated_absent", "uncertain"]

Span = tuple[int, int]

# --------------------------------------------------------------------------- triggers
# a plan or recommendation ("recommend CT follow-up", "建议CT随访"): what should be done next, not what the image
# shows; a clause of its own, and nothing in it is said of the image
PLAN = (r"\brecommend\w*|\badvis\w*|\bsuggest\w* (?:a |an )?(?:follow|further|repeat|short[- ]interval|biopsy)|"
         r"\bfollow[- ]?up (?:with|in|by)\b|\bshould be (?:followed|evaluated|correlated)\b|\bclinical correlation\b|"
         r"建议|随访|复查|进一步检查")
# a hedge adverb that opens a "with" clause hedges that clause ("a nodule, possibly with lymphadenopathy"): the split
# falls before the adverb, not between it and "with"
_HEDGE_LEADS = "possibly|perhaps|maybe|probably|likely|potentially"
_HEDGE_LEAD = ")(?<!".join(f"{w} " for w in _HEDGE_LEADS.split("|"))
CLAUSE_BREAK = re.compile(r"(?<=[.!?;。！？；\n])|(?=,? but\b)|(?=,? however\b)|(?=,? whereas\b)|(?=,? although\b)"
                    r"|(?=，但)|(?=但是)|(?<!follow-up )(?<!follow up )(?<!" + _HEDGE_LEAD + r")(?=\bwith\b)"
                    r"|(?<!" + _HEDGE_LEAD + r")(?=\bwithout\b)|(?=\b(?:" + _HEDGE_LEADS + r")\s+with(?:out)?\b)"
                    r"|(?=，)|(?=, and\b)"
                    r"|(?=,?\s*(?:I )?(?:" + PLAN + "))")
PLANNED = re.compile(PLAN, re.IGNORECASE)
# a negation's scope ends at a conclusion drawn from it ("it doesn't branch, so a nodule") and at a clause with a
# subject of its own joined by "and" ("the hemidiaphragm is not visible and the opacity sits at the base": "no X
# and the Y" coordinates no two negated things)
NEG_SCOPE = r"(?:(?!,?\s*\b(?:so|thus|hence|therefore)\b|\band\s+(?:the|this|these|those|its|there)\b)[^.;:：])*$"
NEG_BEFORE = re.compile(
    r"(?:\bno\b(?!\s*[,!:])|\bnot\b|\bnor\b|\bneither\b|\bwithout\b|\babsence of\b|\bnegative for\b|"
    r"\bfree of\b|\bruled? out\b|\bexclud\w*\b|\bunlikely\b|\bless likely\b|\brather than\b|\binstead of\b|"
    r"\bargues? against\b|\bnot consistent with\b|\bnever\b|\bisn'?t\b|\baren'?t\b|\bdoesn'?t\b|\bdon'?t\b|"
    r"\bcannot see\b|\bnone\b"
    # a checklist box left unticked ("- [ ] Mass", "☐ 出血"): the item is not there
    r"|^[ \t]*(?:[-*+][ \t]+)?(?:\[[ \t]\]|☐))" + NEG_SCOPE + r"|\babsent\s+$"
    # the alternative a judgement is preferred over: "meningioma over glioma", "考虑脑膜瘤而非胶质瘤"
    r"|\b(?:favou?r\w*|prefer\w*|\w+oma|\w+itis|\w+osis)\b[^.;:：]{0,60}\bover\s+(?:an?\s+)?$"
    r"|(?:未见|未发现|未显示|没有|无明显|无(?!回声)|不伴|排除|不支持|不是|而非|而不是)[^，,。；;:：]{0,4}$",
    re.IGNORECASE)
NEG_AFTER = re.compile(
    r"^[^.;,]{0,40}?(?:\bis not\b|\bare not\b|\bnot (?:seen|visible|identified|present|evident|demonstrated|"
    r"appreciated)\b|\bis absent\b|\bare absent\b|\babsent\b|\b(?:is|are|was) (?:ruled|excluded)\b|\bunlikely\b|"
    r"\bless likely\b|\bruled out\b|\bexcluded\b|\bnegative\b|\bresolved\b)"
    r"|^\s*[:：]\s*(?:none|no|nil|absent|negative|无)\s*(?:$|[.;,，。；\n])"
    r"|^[^，,。；;]{0,3}(?:不明显|消失|可排除|不考虑)", re.IGNORECASE)
WEAK_HEDGE = re.compile(
    r"\bpossibl[ey]\b|\bmay\b|\bmight\b|\bcould\b|\bperhaps\b|\bmaybe\b|"
    r"\bcannot (?:be )?(?:exclude|rule[ds]? out|ruled out)|"
    r"can'?t (?:exclude|rule out)|\bdifferential\b|\bvs\.?\b|\bversus\b|\bquestionable\b|\bequivocal\b|"
    r"\buncertain\b|\bnot sure\b|\bunclear\b|\bor\b|\beither\b|\bconsider(?:ed|ing)?\b|\bpotential\w*\b|"
    r"可能|不除外|待排|鉴别|或", re.IGNORECASE)
CANNOT_EXCLUDE = re.compile(r"\bcannot (?:be )?(?:exclude|rule|ruled)|can'?t (?:exclude|rule)|"
                             r"\bnot (?:be )?excluded\b|\bnot ruled out\b|不除外|不能排除|待排", re.IGNORECASE)
STRONG_HEDGE = re.compile(r"\blikely\b|\bprobabl[ey]\b|\bsuggest\w*\b|\bconsistent with\b|\bsuspicious\b|"
                           r"\bcompatible with\b|\bfavou?r\w*\b|考虑|提示|疑似|符合", re.IGNORECASE)
NOT_ABOUT_IMAGE = re.compile(
    r"\bquestion\b|\basks?\b|\basking\b|\bwhether\b|\boptions?\b|\bchoices?\b|^\s*[-*]?\s*\(?[A-F][.):]\s|"
    r"\blet me\b|\blet's\b|\bI (?:need|should|will|'ll|must|want)\b|\b(?:I|we|you)['’]d\b|\bneed to\b|"
    r"\blook(?:ing)? for\b|"
    r"\bcheck(?:ing)? (?:for|whether|if)\b|\bassess(?:ing)? (?:for|whether)\b|\bevaluat\w* for\b|"
    r"\btypical\w*\b|\busual\w*\b|\bclassic\w*\b|\boften\b|\bcommon\w*\b|\btends? to\b|\bcharacteri[sz]\w*\b|"
    r"\bin general\b|\bgenerally\b|\bwould\b|\bif\b|\bknown for\b|\bhistory\b|\bprimary\b|\bfrom a\b|"
    r"\bdefinition\b|\bmeans\b|\brefers? to\b|\bis defined\b|\bcan (?:cause|present|appear|show|be)\b|"
    r"\bwhich (?:is|are) (?:seen|found)\b|\?|？|吗|问题|选项|是否|通常|一般|典型", re.IGNORECASE)


# --------------------------------------------------------------------------- scopes
def _option_dot(text: str, pos: int) -> bool:
    """Whether the break at ``pos`` follows an option letter ("A. pneumonia B. normal"), not a sentence."""
    return pos >= 2 and text[pos - 1] in ".)" and text[pos - 2] in "ABCDEF" and (pos < 3 or not text[pos - 3].isalnum())


_APPROX_DOT = re.compile(r"(?<![A-Za-z])(?:approx|ca)\.$", re.IGNORECASE)  # "approx. 3 cm": no sentence end


def no_break(text: str, pos: int) -> bool:
    """Whether the break at ``pos`` is no break: after an option letter, the point of a decimal ("1.4 cm"), or
    "approx." / "ca." before a number."""
    decimal = 2 <= pos < len(text) and text[pos - 1] == "." and text[pos - 2].isdigit() and text[pos].isdigit()
    return _option_dot(text, pos) or decimal or _APPROX_DOT.search(text, max(0, pos - 8), pos) is not None


def clauses(text: str) -> list[tuple[int, int]]:
    bounds = [0, *sorted({m.start() for m in CLAUSE_BREAK.finditer(text) if not no_break(text, m.start())}),
              len(text)]
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


@functools.lru_cache(maxsize=1 << 14)  # the same clauses and sentences recur (stock phrases, repeated texts)
def found(pattern: re.Pattern[str], text: str) -> bool:
    """Whether ``pattern`` occurs in ``text`` (memoised: a pure function of the two)."""
    return pattern.search(text) is not None


# where a weak hedge after a mention stops governing it: a relative clause or an appended hedged alternative
# ("nodules, which could suggest MS", "a solid lesion, possibly a metastasis", "X, suggesting Y") says something
# new of the mention; the mention itself stays asserted, and what follows the break stays hedged
HEDGE_BREAK = re.compile(r"(?:,\s*|\s+)which\b|,\s*(?=(?:possibly|perhaps|maybe|potentially|conceivably)\s+\w)|"
                          r",\s*(?:suggest\w*|raising|so|hence|thus|therefore)\b", re.IGNORECASE)


def hedge_scope(text: str, span: tuple[int, int], e: int) -> int:
    """End of the part of ``span`` whose hedge words govern the mention ending at ``e``: the span's end, or the
    first hedge break after the mention (:data:`HEDGE_BREAK`)."""
    m = HEDGE_BREAK.search(text, e, span[1])
    return m.start() if m is not None else span[1]


# how far a trigger reaches within the clause: before the mention (NegEx's window of a few words, in characters
# here) and after it
_BEFORE_CHARS = 160
_AFTER_CHARS = 80


def negated(text: str, clause: Span, s: int, e: int) -> bool:
    """Whether the mention ``text[s:e]`` of the clause ``clause`` is negated: a pre-negation trigger before it
    (:data:`NEG_BEFORE`) or a post-negation trigger after it (:data:`NEG_AFTER`), within the clause."""
    before, after = text[max(clause[0], s - _BEFORE_CHARS):s], text[e:min(clause[1], e + _AFTER_CHARS)]
    return found(NEG_BEFORE, before) or found(NEG_AFTER, after)


def uncertain(scope_text: str, denied: bool) -> bool:
    """Whether a mention is neither asserted nor denied: a weak hedge in its scope (``scope_text``: the clause up to
    :func:`hedge_scope`) and not negated ("no effusion or pneumothorax" denies both), or "cannot be excluded"."""
    return (found(WEAK_HEDGE, scope_text) and not denied) or found(CANNOT_EXCLUDE, scope_text)


# --------------------------------------------------------------------------- mentions of the vocabulary
# finding/diagnosis concepts too general to be said of an image on their own ("lesion", "other disease", a
# label that names an absence): no mention
GENERIC = frozenset({"pathology:lesion", "pathology:tumour", "pathology:nucleus", "pathology:other lesion",
                     "pathology:other disease", "pathology:malignant", "pathology:benign",
                     "pathology:support devices", "pathology:not normal, no lung opacity"})
_PATHOLOGY = ("finding", "diagnosis")
_SIDE = re.compile(r"(?<![A-Za-z])(?:left|right|bilateral\w*|unilateral\w*)(?![A-Za-z])|左|右|双", re.IGNORECASE)


@dataclass(frozen=True)
class Mention:
    """A finding/diagnosis concept named in a text: its preferred ``concept`` label, the span, the clause it is read
    in, and how it is said: ``negated``, ``hedged`` (uncertain: neither asserted nor denied) or ``hypothetical``
    (not said of this image)."""

    concept: str
    start: int
    end: int
    clause: Span
    negated: bool
    hedged: bool
    hypothetical: bool

    @property
    def affirmed(self) -> bool:
        return not (self.negated or self.hedged or self.hypothetical)

    @property
    def denied(self) -> bool:
        """Said absent of this image: negated, neither uncertain nor hypothetical."""
        return self.negated and not (self.hedged or self.hypothetical)


def _term_ok(term: str) -> bool:
    """A spelling safe to look for in free text: no short acronym (``ED``, ``MS``: ordinary words too)."""
    bare = term.strip()
    return bool(bare) and not (len(bare) <= 3 and (bare.isupper() or not bare.isalpha()) and bare.isascii())


def _term_pattern(term: str) -> str:
    """A spelling as a pattern: its words joined by spaces or hyphens (the ASCII word edges and the plural ending are
    the whole alternation's: :func:`_finding_terms`)."""
    return r"[\s-]+".join(re.escape(w) for w in re.split(r"[\s_\-]+", term.strip()) if w)


@functools.lru_cache(maxsize=4)
def _finding_terms(generation: tuple[object, ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    """One pattern of every spelling of every finding/diagnosis concept (longest first) and spelling key ->
    concept label, for a vocabulary generation (a user file or plugin adds spellings at once). The ASCII spellings
    share one word-edge check before the alternation (tried at word starts only) and one plural ending after it."""
    labels: dict[str, str] = {}
    for c in clinical.vocabulary():
        if c.kind in _PATHOLOGY and c.id not in GENERIC:
            for t in c.terms:
                if _term_ok(t):
                    labels.setdefault(clinical.normalise(t), c.label)
    ordered = sorted(labels, key=len, reverse=True)
    ascii_ = "|".join(_term_pattern(t) for t in ordered if t.isascii())
    other = "|".join(re.escape(t) for t in ordered if not t.isascii())
    parts = ([rf"(?<![A-Za-z0-9])(?:{ascii_})(?:e?s)?(?![A-Za-z0-9])"] if ascii_ else []) + ([other] if other else [])
    return re.compile("|".join(parts) or r"(?!)", re.IGNORECASE), labels


def _concept_at(matched: str, labels: dict[str, str]) -> str | None:
    key = clinical.normalise(matched)
    for cut in ("", "s", "es"):
        if key.endswith(cut) and (got := labels.get(key[:len(key) - len(cut)])) is not None:
            return got
    return None


def _blank(text: str, clause: Span, s: int, e: int) -> str:
    """``text[clause]`` with the mention ``text[s:e]`` replaced by spaces (its own words frame nothing)."""
    return text[clause[0]:s] + " " * (e - s) + text[e:clause[1]]


def mentions(text: str) -> list[Mention]:
    """Every finding/diagnosis concept of the vocabulary ``text`` names (the longest spelling at a place), each
    read in its clause: negated, uncertain, hypothetical."""
    pattern, labels = _finding_terms(clinical.generation())
    spans = clauses(text)
    starts = [a for a, _ in spans]
    out: list[Mention] = []
    for m in pattern.finditer(text):
        concept = _concept_at(m.group(0), labels)
        if concept is not None:
            s, e = m.span()
            out.append(_read(text, concept, spans[bisect.bisect_right(starts, s) - 1], s, e))
    return out


def _read(text: str, concept: str, clause: Span, s: int, e: int) -> Mention:
    """The mention ``text[s:e]`` of ``concept`` read in ``clause``."""
    denied = negated(text, clause, s, e)
    framed = _blank(text, clause, s, e)
    hedged = uncertain(text[clause[0]:hedge_scope(text, clause, e)], denied)
    return Mention(concept, s, e, clause, denied, hedged, found(NOT_ABOUT_IMAGE, framed) or found(PLANNED, framed))


# a degree or kind word before a negated mention limits what is denied: "no large effusion" (a small one may be
# there), "no acute fracture" (an old one may be), "no new nodule"
_QUALIFIED = re.compile(r"(?<![A-Za-z])(?:large|significant|sizeable|sizable|substantial|gross|definite|definitive|"
                        r"obvious|overt|acute|new|displaced|major|moderate|severe|massive)\W+(?:[A-Za-z]+\W+){0,2}$",
                        re.IGNORECASE)


def _partial(text: str, m: Mention) -> bool:
    """Whether a negation of ``m`` denies only part of it: its clause names a side ("no left effusion" says nothing
    of the right) or a degree or kind word qualifies it (:data:`_QUALIFIED`)."""
    return (_SIDE.search(_blank(text, m.clause, m.start, m.end)) is not None
            or _QUALIFIED.search(text, max(m.clause[0], m.start - 40), m.start) is not None)


def stated_absent(text: str) -> list[str]:
    """The finding/diagnosis concepts ``text`` (a radiology report) states absent, in order of mention: denied
    (:attr:`Mention.denied`) wholly (not of one side or one degree only: :func:`_partial`), where no other
    mention of the same concept, a sub-type or a parent of it is anything but wholly denied ("no effusion on the
    left; small right effusion" states nothing absent)."""
    found_ = mentions(text)
    kept = [m for m in found_ if not m.denied or _partial(text, m)]
    out: list[str] = []
    for m in found_:
        if m.denied and not _partial(text, m) and m.concept not in out and not any(
                clinical.related(m.concept, k.concept) in ("same", "child", "parent") for k in kept):
            out.append(m.concept)
    return out
