"""The claim checker's clause readers: the attribute, laterality, count, size, descriptor, severity, site and field
claims a sentence makes of a mention (:mod:`medr2.scoring.claims`)."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from medr2 import vocab as clinical
from medr2.scoring.claims.lexicon import (
    _CM,
    _COMPARED,
    _COUNT_WORDS,
    _LATERALITY,
    _MULTIPLE,
    _NUMBER_WORDS,
    _PATHOLOGY_KINDS,
    _SIDE_WORDS,
    _SIZE,
    _THRESHOLD,
    _WORD,
    SEVERITY,
    _compile,
    _fold,
    _matches,
    _Term,
    relation,
)
from medr2.scoring.claims.truth import Claim, ClaimVerdict, Truth
from medr2.scoring.claims.verdicts import _decide, _finding_sites, _region
from medr2.tasks import vocab
from medr2.vocab.context import (
    NOT_ABOUT_IMAGE as _NOT_ABOUT_IMAGE,
    found as _found,
    negated as _negated,
    uncertain as _uncertain,
)


def _near(text: str, lo: int, hi: int, patterns: Mapping[str, Sequence[str]]) -> list[tuple[int, int, str]]:
    out = []
    for value, ps in patterns.items():
        for p in ps:
            for m in _compile(p).finditer(text, lo, hi):
                out.append((m.start(), m.end(), value))
    return out


def _attribute_claims(text: str, s: int, e: int, clause: tuple[int, int], sentence: tuple[int, int], value: str,
                      truth: Truth, source: str, owned: Sequence[tuple[int, int]],
                      generic: bool = False, alone: bool = False, lead: tuple[int, int] | None = None,
                      taken: Mapping[int, bool] | None = None) -> list[Claim]:
    """Laterality, count, size and descriptors (margin, shape, intensity, content, enhancement) said of a finding
    the case has (a generic "lesion": of any of its findings; the case's diagnosis: of all of them, what they
    are). ``owned``: spans of the other mentions of the sentence that take a side word of their own (anatomy,
    another decided finding); ``alone``: no other pathology is named in the sentence; ``lead``: the part of the
    sentence before the clause where no pathology is named before this one; ``taken``: side words another mention
    takes (:func:`_laterality_claims`)."""
    matching = list(truth.findings) if generic else [f for f in truth.findings if _matches(value, str(f["label"]))]
    if not matching and truth.diagnosis and not vocab.is_normal(truth.diagnosis) and _matches(value, truth.diagnosis):
        matching = list(truth.findings)  # "左侧脑膜瘤" of a meningioma case: the diagnosis is what its findings are
    if not matching:
        return []
    out: list[Claim] = []
    out.extend(_laterality_claims(text, s, e, clause, matching, source, owned, lead, truth.findings_complete, taken))
    out.extend(_count_claims(text, s, e, clause, matching, source, generic, truth.findings_complete))
    # sizes and descriptors: anywhere near in the sentence (a Chinese comma ends a clause, not the description), or
    # anywhere in it where it names no other pathology ("the nodule measures 4 cm, and its margins look smooth")
    lo, hi = sentence if alone else (max(sentence[0], s - 60), min(sentence[1], e + 60))
    out.extend(_size_claims(text, lo, hi, matching, source))
    out.extend(_descriptor_claims(text, lo, hi, matching, source))
    out.extend(_share_claims(text, lo, hi, value, truth, source))
    return out


# a share of the organ a finding takes ("肺组织压缩约80%", "about 30% collapse") states its grade roughly: the grade
# whose upper bound it does not exceed (decided like a size word: only two grades or more from the truth)
_SHARE = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)\s*(?:%|％|percent\b|per cent\b)", re.IGNORECASE)
_SHARE_GRADES = ((5.0, "minimal"), (20.0, "mild"), (40.0, "moderate"), (100.0, "severe"))
# a percentage that is the writer's confidence or a probability, not a share of the organ ("80% sure")
_NOT_A_SHARE = re.compile(r"confiden|\bsure\b|certain|likel|probab|chance|odds|信心|把握|可能|概率", re.IGNORECASE)


def _share_claims(text: str, lo: int, hi: int, label: str, truth: Truth, source: str) -> list[Claim]:
    """Severity stated as a share (:data:`_SHARE`) said of a finding that carries a severity."""
    if not truth.severity or not clinical.carries(label, SEVERITY):
        return []
    true_grade = truth.severity.strip().lower()
    out = []
    for m in _SHARE.finditer(text, lo, hi):
        if _THRESHOLD.search(text[max(0, m.start() - 16):m.start()]) or float(m.group(1)) > 100 or \
                _NOT_A_SHARE.search(text, max(lo, m.start() - 30), min(hi, m.end() + 30)):
            continue
        grade = next(g for top, g in _SHARE_GRADES if float(m.group(1)) <= top)
        rel = clinical.compare_values(grade, true_grade)
        if rel == "unrelated" or (rel == "excludes" and _grade_steps(grade, true_grade) < 2):
            continue
        out.append(Claim("severity", grade, m.group(0), m.start(), m.end(), source, False, False,
                         "supported" if rel == "same" else "contradicted"))
    return out


# a side of the image, not of the patient ("the viewer's right", "the left of the image", "图像左侧"), and the
# radiological convention that maps one onto the other ("the patient's left is on the viewer's right", "the left
# of the image is the patient's right"): a side word inside one says nothing of where the finding lies
_SIDE_WORD = r"(?:left|right)"
_IMAGE_SIDE = (rf"(?:the\s+)?(?:viewer|reader|observer|image|screen|film|monitor|display)'?s\s+{_SIDE_WORD}|"
               rf"(?:the\s+)?{_SIDE_WORD}(?:[\s-]+(?:hand\s+)?side)?\s+of\s+(?:the\s+)?"
               rf"(?:image|screen|film|monitor|display|picture|viewer)\b|\bimage\s+{_SIDE_WORD}|"
               rf"(?:图像|影像|画面|屏幕|图片)(?:的)?[左右](?:侧|边)?")
_PATIENT_SIDE = rf"(?:the\s+)?patient'?s\s+{_SIDE_WORD}|(?:患者|病人)(?:的)?[左右](?:侧|边)?"
_IMAGE_SIDES = re.compile(
    rf"(?:{_PATIENT_SIDE})\s*(?:is|are|appears?|lies|(?:is\s+)?(?:displayed|shown))?\s*(?:on\s+|at\s+|在|为|是)?"
    rf"(?:{_IMAGE_SIDE})|(?:{_IMAGE_SIDE})\s*(?:is|=|represents|corresponds\s+to|为|是|即)\s*(?:{_PATIENT_SIDE})|"
    rf"{_IMAGE_SIDE}", re.IGNORECASE)


def _patient_sides(text: str, sides: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The side words of ``sides`` said of the patient: those inside an image side or a convention
    (:data:`_IMAGE_SIDES`) left out."""
    if not sides:
        return []
    lo, hi = min(a for a, _, _ in sides), max(b for _, b, _ in sides)
    spans = [m.span() for m in _IMAGE_SIDES.finditer(text, max(0, lo - 40), min(len(text), hi + 40))]
    return [t for t in sides if not any(a <= t[0] and t[1] <= b for a, b in spans)]


# the side a comparison is made against ("whiter than the left", "右>左"; :func:`_compared_sides`)
_COMPARED_SIDE = re.compile(r"(?:\bthan\s+(?:(?:on|in|at)\s+)?(?:the\s+)?|[>＞<＜]\s*|"
                            r"多于|大于|重于|甚于|少于|小于|轻于|较)$", re.IGNORECASE)


def _laterality_claims(text: str, s: int, e: int, clause: tuple[int, int], matching: Sequence[Mapping[str, Any]],
                       source: str, owned: Sequence[tuple[int, int]], lead: tuple[int, int] | None = None,
                       complete: bool = True, taken: Mapping[int, bool] | None = None) -> list[Claim]:
    """Every side word of the clause said of the finding: the one nearest to the mention, and each other one
    that no other mention takes (a side word belongs to the next mention after it within a few words: "right"
    in "the right lung is clear" is the lung's, unless that anatomy leads straight into this finding, "right
    lung nodule"). Where the clause has none, the side words of ``lead`` (the sentence before it, naming no
    other pathology) that no mention takes: "左侧基底节区高密度影，考虑脑出血". "Bilateral" of a one-sided finding
    is decided only on a complete finding list (``complete``): elsewhere the other side may hold one unlabelled.
    ``taken``: starts of the side words said of a mention right before them (:func:`_sides_said_after`) -> whether
    that is another mention (never this finding's side, nearest or not) or this one (always its side)."""
    taken = taken or {}
    truth_sides = {str(f["attributes"].get("laterality") or "").lower() for f in matching} - {""}
    sides = _patient_sides(text, _near(text, clause[0], clause[1], _LATERALITY))
    nearest: tuple[int, int, str] | None = None
    if not sides and lead is not None:
        sides = _patient_sides(text, _near(text, lead[0], lead[1], _LATERALITY))
    elif sides:
        nearest = min(sides, key=lambda t: min(abs(t[0] - e), abs(t[1] - s)))
    if not truth_sides or not sides:
        return []
    compared = _compared_sides(text, sides)
    out = []
    for ss, se, side in sorted(set(sides)):
        mine = taken.get(ss)  # said right after this mention (False) or after another one (True)
        if mine or compared.get((ss, se)) == "" or mine is None and (ss, se, side) != nearest and _side_owned(
                text, se, s, owned):
            continue
        side = compared.get((ss, se), side)
        ok = side in truth_sides
        if side == "bilateral" and not ok and not complete:
            out.append(Claim("laterality", side, text[ss:se], ss, se, source, False, False, "unverifiable",
                             "absence not stated"))
            continue
        out.append(Claim("laterality", side, text[ss:se], ss, se, source, False, False,
                         "supported" if ok else "contradicted", "" if ok else "wrong_side"))
    return out


def _compared_sides(text: str, sides: Sequence[tuple[int, int, str]]) -> dict[tuple[int, int], str]:
    """The side words of a comparison of the two sides (:data:`_COMPARED_SIDE`): "the right base is whiter than the
    left", "右>左" state both sides, so each of the pair is said as ``bilateral``; the side compared against with
    no other side before it ("larger than on the left") is no side of the finding (``""``). A pair that grades a
    "bilateral" said before it ("bilateral effusions, left greater than right", "双侧积液，右>左") says which side
    is the larger: that side word is said as its own side, the other is no side (``""``): the "bilateral" is the
    claim of both sides."""
    out: dict[tuple[int, int], str] = {}
    for a, b, side in sides:
        if _COMPARED_SIDE.search(text, max(0, a - 16), a) is None:
            continue
        other = [t for t in sides if t[1] <= a and a - t[1] <= 60 and t[2] not in (side, "bilateral")]
        if not other:
            out[(a, b)] = ""
            continue
        first = max(other)
        if any(t[2] == "bilateral" and t[1] <= first[0] for t in sides):
            less = _LESSER.search(text, first[1], a) is not None
            out[first[:2]], out[(a, b)] = ("", side) if less else (first[2], "")
        else:
            out[first[:2]] = out[(a, b)] = "bilateral"
    return out


_LESSER = re.compile(r"\b(?:less|smaller|fewer|milder|lower)\b|[<＜]|少于|小于|轻于", re.IGNORECASE)

# a side said of a mention after it, as where it lies: "a pleural effusion on the right" (any pathology, decided or
# not), "the heart is on the left" (anatomy, with a verb)
_SAID_AFTER = {True: re.compile(r"[ \t]+(?:(?:is|are|was|were|lies|lie|sits|sit|seen|located|situated)[ \t]+)?"
                                r"(?:on|in|at|to)[ \t]+the[ \t]+(?=(?:left|right)\b)", re.IGNORECASE),
               False: re.compile(r"[ \t]+(?:is|are|was|were|lies|lie|sits|sit)[ \t]+(?:on|in|to)[ \t]+the[ \t]+"
                                 r"(?=(?:left|right)\b)", re.IGNORECASE)}


def _sides_said_after(text: str, mentions: Sequence[tuple[int, int, _Term]]) -> dict[int, tuple[int, int]]:
    """Start of each side word said of the mention right before it (:data:`_SAID_AFTER`) -> that mention's span:
    the side is that mention's, not a side of another finding of the sentence."""
    out: dict[int, tuple[int, int]] = {}
    for a, b, t in mentions:
        pathology = t.kind in _PATHOLOGY_KINDS
        if pathology or t.kind in ("organ", "body_region"):
            m = _SAID_AFTER[pathology].match(text, b)
            if m is not None:
                out.setdefault(m.end(), (a, b))
    return out


def _side_owned(text: str, side_end: int, s: int, owned: Sequence[tuple[int, int]]) -> bool:
    """Whether the side word ending at ``side_end`` belongs to another mention: the first owned mention that
    starts within 24 characters after it, unless it runs straight (words only) into this finding at ``s``."""
    for a, b in sorted(owned):
        if a < side_end <= b:
            return True  # inside it: "the right lung is clear"
        if side_end <= a <= side_end + 24 and re.fullmatch(r"[\s\w-]*", text[side_end:a]):
            return not (b <= s and re.fullmatch(r"[\s\w-]{0,12}", text[b:s]) is not None)
    return False


def _count_claims(text: str, s: int, e: int, clause: tuple[int, int], matching: Sequence[Mapping[str, Any]],
                  source: str, generic: bool, complete: bool = False) -> list[Claim]:
    """A count said before the mention ("two nodules", "三个结节") or as its field's value ("Nodules: three",
    "| Nodules | 3 |"); compared only where the truth states one: a count attribute, or several instances."""
    if generic:
        return []
    n_true = _true_count(matching, complete)
    b0 = max(clause[0], s - 30)
    before = text[b0:s].lower()
    gap = (r"(?:\s+(?:small|tiny|large|left|right|upper|lower|lobe|lung|pulmonary|[a-z]+ly|"
           r"\d+(?:\.\d+)?(?:\s*[x×]\s*\d+(?:\.\d+)?)?[\s-]*(?:mm|cm)))*\s*$")  # "a single 8 mm nodule"
    cm = re.search(r"(?<![a-z])(a single|single|solitary|one|two|three|four|five|[2-5]|一个|单发|两个|三个)" + gap,
                   before)
    field = _COUNT_FIELD.match(text, e)
    if cm is None and field is not None:
        a, word = field.start(1), field.group(1).lower()
    elif cm is not None:
        a, word = b0 + cm.start(1), cm.group(1)
    else:
        multi = re.search(r"(" + "|".join(_MULTIPLE) + r")" + gap, before)
        if multi is None:
            return []
        a = b0 + multi.start(1)
        return [Claim("count", "multiple", multi.group(1), a, a + len(multi.group(1)), source, False, False,
                      *_count_verdict(n_true, n_true is not None and n_true >= 2))]
    if word in _COUNT_WORDS:
        n = _COUNT_WORDS[word]
        if n == 1 and _ENUMERATED.search(text, e, min(len(text), e + 120)):
            return []  # "one nodule in the upper lobe; the other in the lower lobe": the first of several
        return [Claim("count", str(n), text[a:a + len(word)], a, a + len(word), source, False, False,
                      *_count_verdict(n_true, n == n_true))]
    return [Claim("count", "multiple", text[a:a + len(word)], a, a + len(word), source, False, False,
                  *_count_verdict(n_true, n_true is not None and n_true >= 2))]


# "one" that opens an enumeration, not a count: another of the same follows ("one ...; the other ...", "一个…另一个")
_ENUMERATED = re.compile(r"\b(?:the other|another|the second|a second|the rest|(?:a|the) third)\b|[,;]\s*one\b"
                         r"|另一|其余", re.IGNORECASE)


def _true_count(matching: Sequence[Mapping[str, Any]], complete: bool = False) -> int | None:
    """The count the truth states of these findings: a count attribute, or several instances; one instance of a
    countable finding (``@ count`` in the vocabulary: a nodule, a mass, a fracture) on a complete finding list
    (``meta.findings_complete``: every one is listed, so one listed is one); else None."""
    stated = [f["attributes"].get("count") for f in matching if f["attributes"].get("count")]
    if stated:
        return int(stated[0])
    if len(matching) >= 2:
        return len(matching)
    v = clinical.vocabulary()
    if complete and len(matching) == 1 and v.carries(str(matching[0]["label"]), "count"):
        return 1
    return None


def _size_claims(text: str, lo: int, hi: int, matching: Sequence[Mapping[str, Any]], source: str) -> list[Claim]:
    sizes = [float(f["attributes"]["size_mm"]) for f in matching if f["attributes"].get("size_mm")]
    out: list[Claim] = []
    for m in _SIZE.finditer(text, lo, hi) if sizes else ():
        if _THRESHOLD.search(text[max(0, m.start() - 16):m.start()]):
            continue
        k = 10.0 if m.group(3).lower().startswith(_CM) else 1.0
        said = max(_number(m.group(1)), _number(m.group(2) or "0")) * k
        best = min(sizes, key=lambda x: abs(x - said))
        d = abs(best - said)
        verdict: ClaimVerdict = ("supported" if d <= max(2.0, 0.25 * best) else
                                 "contradicted" if d > max(3.0, 0.4 * best) else "unverifiable")
        out.append(Claim("size", f"{said:g} mm", m.group(0), m.start(), m.end(), source, False, False, verdict))
    return out


def _number(word: str) -> float:
    """A number said in digits or spelled out (:data:`_NUMBER_WORDS`)."""
    return float(_NUMBER_WORDS.get(word.lower(), 0)) or float(word)


def _descriptor_claims(text: str, lo: int, hi: int, matching: Sequence[Mapping[str, Any]],
                       source: str) -> list[Claim]:
    """Margin, shape, intensity, content, enhancement words compared with the finding's stated values and the
    values its concept always carries (:func:`medr2.vocab.compare_values`: one concept supported, two values of
    one attribute contradicted, anything else not a claim)."""
    truth_vals = [str(v) for f in matching for k, v in f["attributes"].items()
                  if v and k not in _NOT_DESCRIPTORS and isinstance(v, str)]
    truth_vals += [c.label for f in matching for c in clinical.implied(str(f["label"])) if c.kind == "attribute"]
    if not truth_vals:
        return []
    values, _, _ = _descriptors(clinical.generation())
    out = []
    for m in values.finditer(text, lo, hi):
        if re.search(r"\b(?:not|non|no)[\s-]*$", text[max(0, m.start() - 5):m.start()]):
            continue
        c = clinical.concept_of(m.group(0), ("attribute",))
        if c is None:
            continue
        rels = {clinical.compare_values(c.label, t) for t in truth_vals}
        if "same" in rels or "excludes" in rels:
            out.append(Claim("attribute", f"{_attribute_name(c)}={c.label}", m.group(0), m.start(), m.end(), source,
                             False, False, "supported" if "same" in rels else "contradicted"))
    return out


_COPULA = re.compile(r"\s*(?:is|are|was|appears?|looks?|seems?)(?: (?:quite|very|rather|relatively))?\s*",
                     re.IGNORECASE)
_NOT_DESCRIPTORS = frozenset({"laterality", "size_mm", "size", "count", "location", "grade", "severity"})
_COUNT_FIELD = re.compile(r"\s*\**\s*[:：|=(]\s*\**\s*(a single|single|solitary|one|two|three|four|five|[1-5]|"
                          r"multiple|several|numerous)\b", re.IGNORECASE)


def _attribute_name(c: clinical.Concept) -> str:
    """The attribute a value belongs to: its topmost is-a ancestor ("intensity" for "anechoic")."""
    v = clinical.vocabulary()
    while c.is_a and (parent := v.get(c.is_a[0])) is not None:
        c = parent
    return c.label


def _term_alternation(terms: Iterable[str]) -> str:
    """One pattern for many vocabulary spellings, longest first; ASCII ones at word edges, hyphen or space
    between words."""
    alts = []
    for t in sorted(set(terms), key=lambda t: (-len(t), t)):
        if t.isascii():
            words = [re.escape(w) for w in re.split(r"[\s_\-]+", t.strip()) if w]
            alts.append(r"(?<![A-Za-z0-9-])" + r"[\s-]+".join(words) + r"(?![A-Za-z0-9])")
        else:
            alts.append(re.escape(t))
    return "|".join(alts) or r"(?!x)x"


@functools.lru_cache(maxsize=4)
def _descriptors(generation: tuple[object, ...]) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Per vocabulary generation: every spelling of a descriptor value (an attribute concept under an attribute,
    severity grades aside); the grade words read anywhere in a clause (a grade's name, its non-English
    spellings); the size words that state a grade only said of a finding that carries a severity ("small",
    "large")."""
    v = clinical.vocabulary()
    grade_ids = v.descendants(SEVERITY)
    values: list[str] = []
    grades: list[str] = []
    size_words: list[str] = []
    for c in v:
        if c.kind != "attribute" or not c.is_a:
            continue
        if c.id in grade_ids:  # a grade (directly under severity) or a size word (under a grade)
            (grades if c.label in vocab.SEVERITY_ORDER else size_words).extend(c.terms)
        elif not v.descendants(c.label):
            values.extend(c.terms)
    return (re.compile(_term_alternation(values), re.IGNORECASE), re.compile(_term_alternation(grades), re.IGNORECASE),
            re.compile(_term_alternation(size_words), re.IGNORECASE))


def _grade_of(c: clinical.Concept) -> str:
    """The grade a severity word names: itself, or the grade a size word is a sub-type of ("large": severe)."""
    v = clinical.vocabulary()
    return next((g.label for i in c.is_a if (g := v.get(i)) is not None and g.label in vocab.SEVERITY_ORDER),
                c.label)


def _grade_steps(grade: str, true_grade: str) -> int:
    """How many grades of :data:`medr2.tasks.vocab.SEVERITY_ORDER` lie between two grades."""
    order = vocab.SEVERITY_ORDER
    return abs(order.index(grade) - order.index(true_grade)) if grade in order and true_grade in order else 0


def _count_verdict(n_true: int | None, agrees: bool) -> tuple[ClaimVerdict, str]:
    if n_true is None:
        return "unverifiable", "count not stated"
    return ("supported", "") if agrees else ("contradicted", "")


def _severity_claims(text: str, clause: tuple[int, int], truth: Truth, source: str,
                     mention: tuple[int, int, str] | None = None, field: bool = False,
                     bare: bool = False) -> list[Claim]:
    """Severity stated in a clause, compared with the case's grade (:func:`medr2.vocab.compare_values`): a grade
    word anywhere in the clause (``mention`` None), or a size word said of the ``mention`` (start, end, label)
    of a finding that carries a severity ("a small effusion", "the haemorrhage is large", "a pneumothorax, large
    (…)"; ``field``: the clause is the value of a size field of the rationale's finding, "- Size: large"; ``bare``:
    the clause is a grade alone, "，大量。", "That's large.", whose size word is said of the case's graded finding)."""
    if not truth.severity:
        return []
    _, grades, size_words = _descriptors(clinical.generation())
    if mention is None:
        found = [(m.start(), m.end()) for m in grades.finditer(text, clause[0], clause[1])]
        graded = [str(f["label"]) for f in truth.findings if clinical.carries(str(f["label"]), SEVERITY)]
        if bare and not found and graded:
            return _severity_claims(text, clause, truth, source, (clause[1], clause[1], graded[0]), field=True)
    else:
        s, e, label = mention
        if not clinical.carries(label, SEVERITY):
            return []
        found = [(m.start(), m.end()) for m in size_words.finditer(text, clause[0], clause[1])] if field else [
            (m.start(), m.end()) for m in size_words.finditer(text, max(clause[0], s - 24), min(clause[1], e + 24))
            if (m.end() <= s and re.fullmatch(r"[\s\w-]*", text[m.end():s]))
            or (m.start() >= e and (_COPULA.fullmatch(text[e:m.start()]) or _APPOSED.fullmatch(text, e, m.start())
                                    and _APPOSED_END.match(text, m.end())))]
    out = []
    true_grade = truth.severity.strip().lower()
    for a, b in found:
        if re.search(r"(?:-|to )\s*$", text[clause[0]:a]) or re.match(r"\s*(?:-|to )", text[b:clause[1]]):
            continue  # "moderate-to-severe": a range
        if _found(_COMPARED, text[max(clause[0], a - 40):a]):
            continue  # "more than mild", "at least moderate", "worse than severe": a cut-off, no grade
        c = clinical.concept_of(text[a:b], ("attribute",))
        if c is None:
            continue
        grade = _grade_of(c)
        rel = clinical.compare_values(grade, true_grade)
        if rel == "unrelated" or (rel == "excludes" and mention is not None and _grade_steps(grade, true_grade) < 2):
            continue  # a size word states a grade roughly: "large" of a moderate effusion is not decided
        out.append(Claim("severity", grade, text[a:b], a, b, source, False, False,
                         "supported" if rel == "same" else "contradicted"))
    return out


# a size word set after the finding by a comma, standing alone ("pneumothorax, large (more than 50 %)", "气胸，大量，")
_APPOSED = re.compile(r"\s*[,，]\s*")
_APPOSED_END = re.compile(r"\s*(?:[(（,，;；.。]|$)")


# the ACR reporting systems' categories (BI-RADS, TI-RADS, Lung-RADS, PI-RADS, LI-RADS, O-RADS): a case's severity
# that names one ("TI-RADS 4") is a category; what a rationale says of the same system is compared with it ("So
# BI-RADS 3.", "that's TR5", "TI-RADS：5类"; TI-RADS's "TR" and LI-RADS's "LR" abbreviations)
_RADS = {"bi-rads": r"bi-?rads|birads", "ti-rads": r"(?:acr[\s-]*)?ti-?rads|tirads", "lung-rads": r"lung-?rads",
         "pi-rads": r"pi-?rads", "li-rads": r"li-?rads", "o-rads": r"o-?rads"}
_RADS_ABBREVIATION = {"ti-rads": "TR", "li-rads": "LR"}
_CATEGORY = r"(?P<n>[0-6][a-c]?)(?!\d|\.\d)"


def _rads_of(severity: str | None) -> tuple[str, str] | None:
    """``(system, category)`` of a severity that is a reporting system's category ("TI-RADS 4": ti-rads, 4)."""
    for system, name in _RADS.items():
        m = re.fullmatch(rf"\s*(?:{name})\s*(?:category\s*)?{_CATEGORY}\s*", severity or "", re.IGNORECASE)
        if m is not None:
            return system, m.group("n").lower()
    return None


def _category_claims(text: str, truth: Truth, source: str) -> list[Claim]:
    """Categories of the case's reporting system said in the text, each compared with the case's: the same category
    (or a sub-category of it: "4a" of a "4") supported, another contradicted. The caller drops those said in a
    clause that is not about the image, hedged or retracted."""
    rads = _rads_of(truth.severity)
    if rads is None:
        return []
    system, true = rads
    forms = [rf"(?i:\b(?:{_RADS[system]})\b)\**\s*(?:category\s*|类别\s*)?[:：]?\s*\**\s*{_CATEGORY}"]
    if system in _RADS_ABBREVIATION:
        forms.append(rf"\b{_RADS_ABBREVIATION[system]}-?{_CATEGORY}")
    out = []
    for m in re.finditer("|".join(f"(?:{f})".replace("(?P<n>", f"(?P<n{i}>") for i, f in enumerate(forms)), text):
        said = next(g for g in m.groups() if g is not None).lower()
        if re.match(r"\s*(?:-|–|to|or|/|或)\s*\d", text[m.end():m.end() + 6]):
            continue  # "BI-RADS 4-5", "TR4 or TR5": a range, no category
        agrees = said == true or said[:1] == true[:1] and (len(said) == 1 or len(true) == 1)
        out.append(Claim("severity", f"{system} {said}", text[m.start():m.end()], m.start(), m.end(), source, False,
                         False, "supported" if agrees else "contradicted", "" if agrees else "another category"))
    return out


def _span_at(spans: Sequence[tuple[int, int]], starts: Sequence[int], pos: int) -> tuple[int, int] | None:
    """The span of sorted, non-overlapping ``spans`` holding ``pos`` (bisect)."""
    i = bisect.bisect_right(starts, pos) - 1
    return spans[i] if i >= 0 and spans[i][0] <= pos < spans[i][1] else None


def _blanked(text: str, span: tuple[int, int], s: int, e: int) -> str:
    """``text[span]`` with the mention ``text[s:e]`` replaced by spaces (same length, same positions)."""
    a, b = span
    lo, hi = min(max(s, a), b), max(min(e, b), a)
    return text[a:lo] + " " * (hi - lo) + text[hi:b]


# framing that is no framing: a judgement said of what was just described ("a mass with a dural tail, typical of a
# meningioma": asserted, with a strong hedge), and a short question the rationale answers at once ("Hard exudates?
# None.", "Effusion? Yes.", "积液？无。": a statement, the answer its polarity)
_ATTRIBUTED = re.compile(r"(?:,|—|–|\(|\bwhich (?:is|are))\s*(?:most |very |quite |fairly )?"
                         r"(?:typical|characteristic|classic|pathognomonic|diagnostic)(?:ally)?\s+(?:of|for)\b",
                         re.IGNORECASE)
_ANSWERED = re.compile(r"[ \t]*(?P<a>none|no|nil|absent|negative|not seen|yes|present|seen|无|未见|有)[ \t]*"
                       r"(?:[.。!！;；\n]|$)", re.IGNORECASE)
_NO_ANSWERS = frozenset({"none", "no", "nil", "absent", "negative", "not seen", "无", "未见"})
_QUESTION_WORDS = 8  # at most so many words before the "?": a fragment, not a question to the reader


# a sentence that is a grade alone ("Mild.", "Overall: severe.", "中度。", "That's large."): a severity said of the case
_BARE_GRADE = re.compile(r"\s*(?:(?:overall|grade|severity)\s*[,:：]?\s*"
                         r"|(?:that|it|this)(?:'s|\s+(?:is|was|looks|seems))\s+)?"
                         r"[^\s.。!！:：,，]{1,12}\s*[.。!！]?\s*", re.IGNORECASE)


# a row whose label is the mention and whose value is what is said of it: a table row ("| Pneumothorax | none |") or
# a list field ("- Effusion: right, small"); the label marks the value
_ROW = re.compile(r"[ \t]*(?:\|[ \t]*(?P<tkey>[^|\n]+?)[ \t]*\|[ \t]*(?P<tval>[^|\n]*?)[ \t]*\|[^\n]*"
                  r"|(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?P<key>[^:：|\n]{1,40}?)[ \t]*[:：][ \t]*(?P<val>[^\n]*?))"
                  r"[ \t]*\n?")
_GLOSS = re.compile(r"\s*[(（][^()（）\n]{1,24}[)）][\s*]*$")
_ROW_VALUE_WORDS = 6  # at most so many words in a row's value: a value, not a sentence of its own
# a table header that weighs alternatives ("| Differential | Likelihood |"): its rows are reasoning, not findings
_WEIGHED = re.compile(r"\bdifferential|\bddx\b|\blikelihood\b|\bprobability\b|鉴别|可能性", re.IGNORECASE)


def _answer(text: str, sentence: tuple[int, int], s: int, e: int, row: bool) -> tuple[str, int] | None:
    """What is said of the mention ``text[s:e]`` as an answer, lower-cased, and where it ends: the answer right after
    a sentence that is a short question ("Hard exudates? None."), or (``row``: a pathology mention) the value of the
    row whose label is the mention (:data:`_ROW`: "| Pneumothorax | none |", "- Effusion: right, small")."""
    body = text[sentence[0]:sentence[1]].rstrip()
    if body.endswith(("?", "？")) and len(_WORD.findall(body)) <= _QUESTION_WORDS:
        m = _ANSWERED.match(text, sentence[1])
        return (m.group("a").lower(), m.end("a")) if m is not None else None
    line = _line(text, sentence[0])
    got = _ROW.fullmatch(text, *line) if row else None
    if got is None or _TABLE_RULE.fullmatch(text, *line):
        return None
    key, val = ("tkey", "tval") if got.group("tkey") is not None else ("key", "val")
    value = got.group(val).strip(" *.;。")
    # the label, less an abbreviation or gloss after it: "| Enhancing tumour (ET) |", "- Effusion (pleural): none"
    key_end = got.start(key) + len(_GLOSS.sub("", text[got.start(key):got.end(key)]))
    label = text[got.start(key):key_end].strip(" *")
    if text[got.start(key):key_end].lstrip(" *") != text[s:key_end] or len(label) != e - s \
            or not value or len(value.split()) > _ROW_VALUE_WORDS or _header_row(text, got.start()):
        return None
    return value.lower(), got.start(val) + len(got.group(val).rstrip(" *.;。"))


def _line(text: str, pos: int) -> tuple[int, int]:
    """The line holding ``pos``, without its newline."""
    a = text.rfind("\n", 0, pos) + 1
    b = text.find("\n", pos)
    return a, len(text) if b < 0 else b


def _header_row(text: str, pos: int) -> bool:
    """Whether the line at ``pos`` is a table's header: the next line is its rule ("|---|---|")."""
    _, b = _line(text, pos)
    return b < len(text) and _TABLE_RULE.fullmatch(text, *_line(text, b + 1)) is not None


def _table_header(text: str, pos: int) -> str:
    """The header row of the table whose body row holds ``pos`` ("" outside a table body)."""
    a, b = _line(text, pos)
    while text[a:b].lstrip().startswith("|") and a > 0:
        rule = _line(text, a - 1)
        if _TABLE_RULE.fullmatch(text, *rule):
            return text[slice(*_line(text, rule[0] - 1))] if rule[0] > 0 else ""
        a, b = rule
    return ""


def _framed(text: str, span: tuple[int, int], s: int, e: int, answered: bool) -> str:
    """``text[span]`` as its framing words are looked for: the mention blanked (:func:`_blanked`), an attribution
    of what was described (:data:`_ATTRIBUTED`) and the question mark of an answered question too."""
    out = _blanked(text, span, s, e)
    out = _ATTRIBUTED.sub(lambda m: " " * len(m.group(0)), out)
    return re.sub(r"[?？]\s*$", " ", out) if answered else out


def _side_owners(mentions: Sequence[tuple[int, int, _Term]], truth: Truth) -> list[tuple[int, int]]:
    """Spans of the mentions that take a side word of their own: anatomy, and findings the truth decides (a
    side before an undecidable word, "a right basal opacity", may be the finding's own)."""
    return [(s, e) for s, e, t in mentions if t.kind in ("organ", "body_region", "region_normal") or (
        t.kind in ("finding", "diagnosis") and _decide(t.kind, t.value, False, truth)[0] != "unverifiable")]


_FIELD_ROW = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?:\*\*)?[ \t]*(?P<key>[A-Za-z][A-Za-z ]{1,20}?)[ \t]*(?:\*\*)?"
    r"(?P<sep>[:：])[ \t]*(?:\*\*)?(?P<val>[^\n]*)"
    r"|^[ \t]*(?P<tsep>\|)[ \t]*(?:\*\*)?(?P<tkey>[A-Za-z][A-Za-z ]{1,20}?|[\u4e00-\u9fff]{2,4})(?:\*\*)?[ \t]*\|"
    r"(?P<tval>[^|\n]*)\|"
    r"|^[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?:\*\*)?(?P<zkey>[\u4e00-\u9fff]{2,4})(?:\*\*)?(?P<zsep>[:：])[ \t]*"
    r"(?P<zval>[^\n]*)", re.MULTILINE)
_FIELD_KEYS = {"side": "laterality", "sides": "laterality", "laterality": "laterality", "size": "size",
               "sizes": "size", "long axis": "size", "short axis": "size", "diameter": "size", "dimensions": "size",
               "dimension": "size", "measurement": "size", "measurements": "size", "length": "size",
               "count": "count", "number": "count", "margin": "descriptor", "margins": "descriptor",
               "shape": "descriptor", "signal": "descriptor", "intensity": "descriptor", "density": "descriptor",
               "attenuation": "descriptor", "echogenicity": "descriptor", "echo": "descriptor",
               "content": "descriptor", "enhancement": "descriptor", "organ": "site", "site": "site",
               "location": "site",
               # the same fields as Chinese reports name them
               "部位": "site", "位置": "site", "侧别": "laterality", "方位": "laterality", "大小": "size",
               "尺寸": "size", "直径": "size", "数目": "count", "数量": "count", "个数": "count", "形态": "descriptor",
               "形状": "descriptor", "边缘": "descriptor", "边界": "descriptor", "密度": "descriptor",
               "信号": "descriptor", "回声": "descriptor", "强化": "descriptor"}
_TABLE = re.compile(r"(?:^[ \t]*\|[^\n]*\|[ \t]*(?:\n|$))+", re.MULTILINE)
_TABLE_RULE = re.compile(r"[ \t]*\|(?:[ \t]*:?-{2,}:?[ \t]*\|)+[ \t]*")


def _cells(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The cells of the table row ``text[lo:hi]`` ("| a | b |"), each span stripped of blanks and ``**``."""
    bars = [i for i in range(lo, hi) if text[i] == "|"]
    out = []
    for a, b in zip(bars, bars[1:], strict=False):
        while a + 1 < b and text[a + 1] in " \t*":
            a += 1
        while b - 1 > a + 1 and text[b - 1] in " \t*":
            b -= 1
        out.append((a + 1, b))
    return out


def _fields(text: str) -> list[tuple[str, int, int, int, tuple[int, int]]]:
    """``(key, value start, value end, separator, row)`` of every attribute field of a rationale: a key and its
    value in one list item or table row ("- Side: right", "| Size | large |"; the row is the value), and a table's
    cells under a header that names an attribute ("| Nodule | Side | Size |" over "| 2 | right | 8 mm |"; the row
    is the table row, whose other cells may name what the cell is said of)."""
    out = []
    for m in _FIELD_ROW.finditer(text):
        g = "t" if m.group("tkey") is not None else "z" if m.group("zkey") is not None else ""
        key = m.group(f"{g}key").strip().lower()
        if key in _FIELD_KEYS:
            lo, hi = m.start(f"{g}val"), m.end(f"{g}val")
            out.append((key, lo, hi, m.start(f"{g}sep"), (lo, hi)))
    for t in _TABLE.finditer(text):
        rows = [(a.start(), a.end()) for a in re.finditer(r"[^\n]+", text[t.start():t.end()])]
        rows = [(t.start() + a, t.start() + b) for a, b in rows]
        if len(rows) < 3 or not _TABLE_RULE.fullmatch(text, *rows[1]):
            continue
        keys = [text[a:b].strip().lower() for a, b in _cells(text, *rows[0])]
        for lo, hi in rows[2:]:
            for key, (a, b) in zip(keys, _cells(text, lo, hi), strict=False):
                if key in _FIELD_KEYS and b > a:
                    out.append((key, a, b, a - 1, (lo, hi)))
    return out


def _field_claims(text: str, mentions: Sequence[tuple[int, int, _Term]], said: Sequence[Claim], truth: Truth,
                  source: str) -> list[Claim]:
    """Attribute fields of a list or table (:func:`_fields`: a key and its value in one row, or a table column
    under an attribute's header) whose value names no finding, said of the findings the rationale asserts
    elsewhere (those of the case its supported finding mentions match; a generic "lesion": all of them): side,
    size (a measure, or a size word of a finding that carries a severity), count, descriptors and the organ or
    site, decided as beside the finding itself."""
    pathology = [c for c in said if c.kind in ("finding", "diagnosis") and not c.value.startswith("normal")
                 and not c.denied]  # a denied one ("| Calcifications | none |") is no finding the fields describe
    asserted = [c for c in pathology if c.verdict == "supported"]
    generic = any(c.value == "lesion" for c in asserted) or any(  # the case's diagnosis: what its findings are
        c.kind == "diagnosis" and truth.diagnosis and _matches(c.value, truth.diagnosis) for c in asserted)
    all_matching = [f for f in truth.findings
                    if generic or any(_matches(c.value, str(f["label"])) for c in asserted)]
    if not pathology and len({_fold(str(f["label"])) for f in truth.findings}) == 1:
        all_matching = list(truth.findings)  # no finding named at all: the fields describe the case's one finding
    out: list[Claim] = []
    for key, lo, hi, sep, row in _fields(text):
        what = _FIELD_KEYS[key]
        if any(lo <= a < hi and t.kind in _PATHOLOGY_KINDS for a, _, t in mentions):
            continue
        of_row = _row_findings(row, (lo, hi), mentions, truth)
        matching = all_matching if of_row is None else of_row
        if not matching:
            continue
        if what == "laterality":
            out.extend(_laterality_claims(text, lo, lo, (lo, hi), matching, source, (),
                                          complete=truth.findings_complete))
        elif what == "descriptor":
            out.extend(_descriptor_claims(text, lo, hi, matching, source))
        elif what == "site":  # a site said with its side ("Location: left upper lobe") says the finding's side
            out.extend(_laterality_claims(text, lo, lo, (lo, hi), matching, source, (),
                                          complete=truth.findings_complete))
            out.extend(_site_claims(text, lo, hi, [(a, b) for a, b, t in mentions if lo <= a < hi
                                                   and t.kind in ("organ", "body_region")], matching, truth, source))
        elif what == "count":
            got = _COUNT_FIELD.match(text, sep)
            if got is not None and not (_COUNT_WORDS.get(got.group(1).lower()) == 1
                                        and _ENUMERATED.search(text, got.end(1), min(len(text), got.end(1) + 120))):
                word, n_true = got.group(1).lower(), _true_count(matching, truth.findings_complete)
                agrees = _COUNT_WORDS[word] == n_true if word in _COUNT_WORDS else (n_true or 0) >= 2
                out.append(Claim("count", str(_COUNT_WORDS.get(word, "multiple")), got.group(1), got.start(1),
                                 got.end(1), source, False, False, *_count_verdict(n_true, agrees)))
        else:
            out.extend(_size_claims(text, lo, hi, matching, source))
            for f in matching[:1]:
                out.extend(_severity_claims(text, (lo, hi), truth, source, (hi, hi, str(f["label"])), field=True))
    return out


def _row_findings(row: tuple[int, int], cell: tuple[int, int], mentions: Sequence[tuple[int, int, _Term]],
                  truth: Truth) -> list[Mapping[str, Any]] | None:
    """The case's findings a table row's cell is said of where another cell of its row names a finding ("| Hydrocephalus
    | bilateral |" under "| Finding | Side |"): those its mentions match (none for a finding the case lacks: its
    side is no side of the case's findings); ``None`` where the row names none (the rationale's findings)."""
    named = [t for a, _, t in mentions if row[0] <= a < row[1] and not cell[0] <= a < cell[1]
             and t.kind in _PATHOLOGY_KINDS]
    if not named:
        return None
    if any(t.kind == "generic" for t in named):
        return list(truth.findings)
    return [f for f in truth.findings if any(_matches(t.value, str(f["label"])) for t in named)]


def _site_claims(text: str, lo: int, hi: int, said: Sequence[tuple[int, int]], matching: Sequence[Mapping[str, Any]],
                 truth: Truth, source: str) -> list[Claim]:
    """An organ or region named as the site of the case's finding ("| Organ | kidney |", "- Location: gastric"; the
    organ and region mentions of the value, else the whole value as a spelling of one): supported where it is where
    the finding lies (:func:`_finding_sites`: the same, a part or a whole of it), contradicted where every finding
    is known to lie in another, undecided where a site is unknown."""
    v = clinical.vocabulary()
    sites = [_finding_sites(str(f["label"]), f["attributes"], truth) for f in matching]
    value = text[lo:hi].rstrip(" .;*")
    if not said and value:
        said = [(lo, lo + len(value))]
    out = []
    for a, b in said:
        c = clinical.concept_of(clinical.split_side(text[a:b])[1], ("organ", "body_region"))
        if c is None or not sites or not all(sites):
            continue
        inside = any(x.id == c.id or v.part_of(x.label, c.label) or v.part_of(c.label, x.label)
                     for row in sites for x in row)
        out.append(Claim("organ", c.label, text[a:b], a, b, source, False, False,
                         "supported" if inside else "contradicted", "" if inside else "wrong_site"))
    return out


# a clause that only says where the finding just named lies ("气胸，位于左侧肺尖", "an effusion, located on the right")
_LOCATED = re.compile(r"[,，]\s*(?:位于|见于|(?:located|situated|lying|seen)\b)", re.IGNORECASE)


_TECHNIQUES = frozenset({"modality", "plane", "sequence"})
# a technique named as where something is looked at ("on an AP", "in the T2 image"), as what a judgement allows for
# ("not enlarged for an AP projection", "given the supine AP") or as the kind of a signal ("FLAIR signal", "T2
# hyperintensity"): a negation in its clause denies what is seen, not the technique
_FRAME_BEFORE = re.compile(r"\b(?:on|in|for|given|despite)\s+(?:(?:an?|the|this|these|its)\s+)?$", re.IGNORECASE)
_FRAME_AFTER = re.compile(r"[\s-]*(?:weighted\s+)?(?:images?\s+)?(?:signal|hyper\w*|hypo\w*|intensit\w*|bright\w*|"
                          r"abnormalit\w*|changes?)\b|[\s-]*(?:上|像上|图像上|序列上)", re.IGNORECASE)


def _technique_framed(text: str, s: int, e: int) -> bool:
    """Whether the technique mention ``text[s:e]`` is the frame of what is said (:data:`_FRAME_BEFORE`,
    :data:`_FRAME_AFTER`) rather than what is said."""
    return _found(_FRAME_BEFORE, text[max(0, s - 12):s]) or _FRAME_AFTER.match(text, e) is not None


_FOCAL = "nodule/mass"  # the vocabulary's focal-lesion words ("nodule", "mass", "结节", "肿块", "占位")


def _names_case_lesion(text: str, sentence: tuple[int, int], value: str, mentions: Sequence[tuple[int, int, _Term]],
                       truth: Truth) -> bool:
    """Whether a focal-lesion word (:data:`_FOCAL` or a sub-type of it) names the case's focal finding of another
    kind in the organ where it lies ("肝右叶见一低回声结节" or "a solid mass in the liver" of a liver cyst): the
    sentence names that organ and no finding of the case (a nodule beside a mass stays two findings). It is read
    as the generic "lesion" there (its descriptors are what is said of the case's finding); anywhere else it
    stays the finding it names."""
    if relation(value, _FOCAL) not in ("same", "child") or any(
            _matches(t.value, str(f["label"])) for a, _, t in mentions if sentence[0] <= a < sentence[1]
            and t.kind in _PATHOLOGY_KINDS for f in truth.findings):
        return False  # it is a finding of the case, or the sentence names the case's finding itself
    organs = [clinical.concept_of(t.value, ("organ", "body_region")) for a, _, t in mentions
              if sentence[0] <= a < sentence[1] and t.kind == "organ"]
    sites = [x for f in truth.findings if relation(str(f["label"]), _FOCAL) == "unrelated"
             for x in _finding_sites(str(f["label"]), f["attributes"], truth)]
    v = clinical.vocabulary()
    return any(o is not None and (x.id == o.id or v.part_of(o.label, x.label)) for o in organs for x in sites)


def _denied_elsewhere(text: str, clause: tuple[int, int], value: str, truth: Truth) -> bool:
    """Whether a denial of a finding the case has is said of one side only, where the case has none of it ("no
    right-sided nodules" of left nodules; as :func:`medr2.vocab.context.stated_absent` reads a side in a negated
    clause as a partial denial): every finding of that label lies on a known side the clause does not name."""
    said = {side for _, _, side in _patient_sides(text, _near(text, clause[0], clause[1], _LATERALITY))}
    sides = [str(f["attributes"].get("laterality") or "").lower() for f in truth.findings
             if _matches(value, str(f["label"]))]
    return bool(said) and bool(sides) and "bilateral" not in said and all(
        side in ("left", "right") and side not in said for side in sides)


@functools.lru_cache(maxsize=4)
def _sided_regions(generation: tuple[object, ...]) -> re.Pattern[str]:
    """Per vocabulary generation: a side word before a spelling of a body region that has a side (``@ laterality``
    in concepts.txt: a limb or a part of one, the breast, the eye): "the right wrist", "left breast", "右侧乳腺"."""
    en: list[str] = []
    zh: list[str] = []
    for c in clinical.vocabulary():
        if c.kind == "body_region" and "laterality" in c.attributes:
            en.extend(t for t in c.terms if t.isascii() and len(t) > 2)
            zh.extend(t for t in c.terms if not t.isascii())
    alt_en = "|".join(r"[\s-]+".join(re.escape(w) for w in t.split()) for t in sorted(set(en), key=lambda t: -len(t)))
    alt_zh = "|".join(re.escape(t) for t in sorted(set(zh), key=lambda t: -len(t)))
    forms = [rf"(?<![A-Za-z])(?P<side>left|right)[\s-]+(?:sided[\s-]+)?(?P<r>{alt_en})(?![A-Za-z])"] if alt_en else []
    forms += [rf"(?P<zside>[左右])侧?(?P<zr>{alt_zh})"] if alt_zh else []
    return re.compile("|".join(forms) or r"(?!)", re.IGNORECASE)


def _study_side_claims(text: str, truth: Truth, said: Sequence[Claim], clauses: Sequence[tuple[int, int]],
                       source: str) -> list[Claim]:
    """The side of the imaged region said of the image ("so this is the right wrist", "the left breast" of a
    mammogram): a region with a side (:func:`_sided_regions`) that is the case's region, a part or a whole of it, is
    imaged on one side, the side of the case's findings: supported where a finding lies on it (or both), contradicted
    where every finding lies on a known other side; no claim on a case without sided findings, in a clause that
    denies, hedges or is not about the image, or where a finding already takes the side word."""
    actual = _region(truth.body_region)
    sides = {str(f["attributes"].get("laterality") or "").lower() for f in truth.findings}
    if actual is None or not truth.findings or "" in sides:
        return []
    v = clinical.vocabulary()
    starts = [a for a, _ in clauses]
    taken = {(c.start, c.end) for c in said if c.kind == "laterality"}
    out = []
    for m in _sided_regions(clinical.generation()).finditer(text):
        side_group = "side" if m.group("side") else "zside"
        ss, se = m.span(side_group)
        region = clinical.concept_of(m.group("r") or m.group("zr"), ("body_region",))
        clause = _span_at(clauses, starts, ss) or (0, len(text))
        ctext = text[clause[0]:clause[1]]
        if region is None or (ss, se) in taken or not _patient_sides(text, [(ss, se, "")]) or not (
                region.label == actual or v.part_of(region.label, actual) or v.part_of(actual, region.label)) \
                or _negated(text, clause, ss, m.end()) or _uncertain(ctext, False) or _found(_NOT_ABOUT_IMAGE, ctext):
            continue
        side = _SIDE_WORDS.get(m.group(side_group).lower(), m.group(side_group).lower())
        ok = side in sides or "bilateral" in sides
        out.append(Claim("laterality", side, text[ss:se], ss, se, source, False, False,
                         "supported" if ok else "contradicted", "" if ok else "wrong_side"))
    return out
