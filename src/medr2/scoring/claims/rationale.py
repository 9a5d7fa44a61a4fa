"""The claim checker's entry points (the rationale audit): the rationale of a raw response
(:func:`rationale_parts`), a text's claims (:func:`check_text`, :func:`check_rationale`), a row's :class:`Audit`,
the scoring hook and the stored verdicts (:mod:`medr2.scoring.claims`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from medr2.scoring.claims.clauses import (
    _ATTRIBUTED,
    _BARE_GRADE,
    _LOCATED,
    _NO_ANSWERS,
    _TECHNIQUES,
    _WEIGHED,
    _answer,
    _attribute_claims,
    _category_claims,
    _denied_elsewhere,
    _field_claims,
    _framed,
    _names_case_lesion,
    _severity_claims,
    _side_owners,
    _sides_said_after,
    _span_at,
    _study_side_claims,
    _table_header,
    _technique_framed,
)
from medr2.scoring.claims.lexicon import (
    _PATHOLOGY_KINDS,
    _RETRACTED,
    _VISUAL,
    _WORD,
    _matches,
    _mentions,
    _organ_state_term,
    _region_said,
    _sentences,
    _Term,
)
from medr2.scoring.claims.truth import HEDGED_HALLUCINATION, Claim, Truth
from medr2.scoring.claims.verdicts import _decide, _decide_region, _hedged_note, _region_value
from medr2.vocab.context import (
    NOT_ABOUT_IMAGE as _NOT_ABOUT_IMAGE,
    PLANNED as _PLANNED,
    STRONG_HEDGE as _STRONG_HEDGE,
    WEAK_HEDGE as _WEAK_HEDGE,
    clauses as _clauses,
    found as _found,
    hedge_scope as _hedge_scope,
    negated as _negated,
    uncertain as _uncertain,
)

_ANSWER_LINE = re.compile(r"^\s*(?:\**\s*)?(?:final answer|answer|the answer is|correct answer|答案|最终答案)\b"
                          r"|^\s*\\boxed", re.IGNORECASE | re.MULTILINE)
_THINK_TAG = re.compile(r"</?(?:think|thinking|reasoning|reflection|analysis)>|◁/?think▷", re.IGNORECASE)


def rationale_parts(raw: str | None, reasoning: str | None = None) -> list[tuple[str, str]]:
    """``(source, text)`` pairs to audit: the server's separate reasoning text, and the content up to its final
    answer line (reasoning tags are dropped, their text kept: a ``<think>`` block is part of the rationale)."""
    parts: list[tuple[str, str]] = []
    if reasoning and reasoning.strip():
        parts.append(("reasoning", reasoning))
    if raw and raw.strip():
        text = _THINK_TAG.sub(lambda m: " " * len(m.group(0)), raw)  # same offsets as the stored content
        answers = list(_ANSWER_LINE.finditer(text))
        if answers:
            text = text[:answers[-1].start()]
        if not _bare_answer(text):
            parts.append(("content", text))
    return parts


# has_rationale of a content without reasoning text: bare answers ("B", "yes") repeat across most rows of a run; at
# most _HAS_MAX entries (then cleared), content of at most _HAS_RAW_MAX characters (a longer one seldom repeats)
_HAS: dict[str | None, bool] = {}
_HAS_MAX = 1 << 16
_HAS_RAW_MAX = 256


def has_rationale(raw: str | None, reasoning: str | None = None) -> bool:
    """Whether :func:`rationale_parts` finds something to audit (memoised for short answers)."""
    if reasoning is None and (raw is None or len(raw) <= _HAS_RAW_MAX):
        got = _HAS.get(raw)
        if got is None:
            got = bool(rationale_parts(raw))
            if len(_HAS) >= _HAS_MAX:
                _HAS.clear()
            _HAS[raw] = got
        return got
    return bool(rationale_parts(raw, reasoning))


_CJK = re.compile(r"[\u3400-\u9fff]")


_SENTENCE_GOES_ON = re.compile(r"[.。;；]\s*[^\W\d_]")


# a multi-select answer given as option letters ("A, C, D, E", "(A) and (B)"): each letter is a "word" to _WORD
_LETTER_LIST = re.compile(r"\(?[A-Z]\)?(?:\s*(?:[,;/&]|and)?\s*\(?[A-Z]\)?)*\s*\.?")


def _bare_answer(text: str) -> bool:
    """A content that is only an answer ("B", "yes", "[1, 2, 3, 4]", "A, C, D, E", "left lung"): no rationale to
    audit."""
    body = text.strip()
    if _LETTER_LIST.fullmatch(body):
        return True
    cjk = len(_CJK.findall(body))
    words = _WORD.findall(body)
    return not body or ("\n" not in body and len(words) < 4 and cjk < 6
                        and not _SENTENCE_GOES_ON.search(body))


# a denial of another one ("no other nodules", "Additional nodules: none", "no other acute abnormality", "其余…未见"):
# said beside the one the rationale has named, it denies only further instances
_OTHER_ONE = re.compile(r"(?:\b(?:other|additional|further|another|more|new|remaining|separate|second)"
                        r"|其[余他]|另外|另)(?:[\s-]+[A-Za-z-]+){0,2}[\s-]*$", re.IGNORECASE)


def _denied_other(text: str, clause: tuple[int, int], s: int, term: _Term, truth: Truth) -> bool:
    """Whether a denial of a finding the case has denies only further ones ("no other nodules" of a case with one
    nodule; "no other acute abnormality" of a case with one finding): no missed finding. Where the case has two or
    more of it, "no other" denies one it has (missed evidence, as before)."""
    if not _OTHER_ONE.search(text, max(clause[0], s - 40), s):
        return False
    found = [f for f in truth.findings
             if term.kind == "generic" or _matches(term.value, str(f["label"]))]
    return sum(int(f["attributes"].get("count") or 1) for f in found) <= 1


# a textbook definition set against the image: a class named bare at the start of a sentence, "is/are" and what
# such a class is, then what this image shows instead ("Drusen are softer-edged; these are crisp", "Meningioma is
# extra-axial with a dural tail, not seen here", "Mild NPDR is microaneurysms only; here there are exudates too")
_DEFINES = re.compile(r"\s*(?:is|are)\s+(?!(?:present|seen|visible|noted|identified|evident|likely|probable|possible|"
                      r"suspected|confirmed|demonstrated|shown|also|again|now|still|the\s+(?:[a-z]+\s+){0,2}"
                      r"(?:diagnosis|answer|finding|choice|option)|consistent|compatible|in|on|at|located|small|large|mild|"
                      r"moderate|severe|not)\b)", re.IGNORECASE)
_DEFINED_LEAD = re.compile(r"[\s*#>\-\d.)]*(?:[A-Za-z-]+\s+){0,2}")
_NOT_BARE = frozenset({"a", "an", "the", "this", "that", "these", "those", "there", "its", "his", "her", "their",
                       "our", "my", "your", "which", "it", "so", "and", "but", "i", "we", "you", "think", "believe",
                       "guess", "feel", "then", "thus", "therefore", "hence"})  # a subject said of the image
_THIS_IMAGE = re.compile(r"\b(?:here|these|this one|in this (?:case|image|patient|study)|this (?:lesion|image))\b"
                         r"|此处|本例|这里", re.IGNORECASE)


def _defined(text: str, sentence: tuple[int, int], s: int, mentions: Sequence[tuple[int, int, _Term]]) -> bool:
    """Whether the mention at ``s`` lies in a textbook definition its sentence sets against this image: the
    sentence's first pathology mention is its bare subject, "is/are" follows (:data:`_DEFINES`), and this image is
    named after it; the definition runs from the subject to that point ("Mild NPDR is microaneurysms only; here …":
    neither the class nor what defines it is said of the image)."""
    first = next(((a, b) for a, b, t in mentions if sentence[0] <= a < sentence[1] and t.kind in _PATHOLOGY_KINDS),
                 None)
    if first is None or s < first[0]:
        return False
    lead = text[sentence[0]:first[0]]
    if not _DEFINED_LEAD.fullmatch(lead) or _NOT_BARE & {w.lower() for w in _WORD.findall(lead)}:
        return False
    here = _THIS_IMAGE.search(text, first[1], sentence[1])
    return _DEFINES.match(text, first[1]) is not None and here is not None and s < here.start()


def check_text(text: str, case: Any, source: str = "content") -> list[Claim]:
    """The claims of one rationale text about ``case`` (a Case, a :class:`Truth`, or a dict of Case fields)."""
    truth = Truth.of(case)
    clauses = _clauses(text)
    sentences = _sentences(text)
    clause_starts, sentence_starts = [a for a, _ in clauses], [a for a, _ in sentences]
    out: list[Claim] = []
    severity_done: set[tuple[int, int]] = set()
    mentions = _mentions(text, truth)
    owners = _side_owners(mentions, truth)
    said_after = _sides_said_after(text, mentions)
    for s, e, term in mentions:
        if term.kind == "organ_state":
            term = _organ_state_term(text, s, e, term)
        clause = _span_at(clauses, clause_starts, s) or (0, len(text))
        sentence = _span_at(sentences, sentence_starts, s) or clause
        if term.kind == "finding" and _names_case_lesion(text, sentence, term.value, mentions, truth):
            term = _Term("generic", term.value, term.pattern)
        whole = text[sentence[0]:sentence[1]]
        answered = _answer(text, sentence, s, e, term.kind in _PATHOLOGY_KINDS)
        answer = answered[0] if answered is not None else None
        denied = _negated(text, clause, s, e) or answer in _NO_ANSWERS
        if term.kind in ("normal", "region_normal"):
            denied = False  # "no abnormality" is itself the statement
        elif denied and term.kind in _TECHNIQUES and _technique_framed(text, s, e):
            denied = False  # "not visible on an AP", "no abnormal FLAIR signal": what is seen is denied, not the view
        mention = text[s:e]
        if answered is not None:  # the claim is the question or label and its answer: "Hard exudates? None"
            mention = text[s:answered[1]]
        value = term.value
        if term.kind == "region_normal":
            region, side = _region_said(text, s, e, term)
            value = _region_value(region, side)
        claim_base = dict(kind=term.kind, value=value, text=mention, start=s, end=s + len(mention), source=source,
                          denied=denied)
        kind = {"generic": "finding", "normal": "diagnosis", "region_normal": "finding"}.get(term.kind, term.kind)
        claim_base["kind"] = kind
        # the framing words are looked for around the mention, not inside it ("primary CNS lymphoma" is a name)
        if _found(_NOT_ABOUT_IMAGE, _framed(text, sentence, s, e, answer is not None)) and term.kind not in (
                "modality", "plane", "sequence"):
            out.append(Claim(**claim_base, hedged=False, verdict="unverifiable", note="not_asserted"))  # type: ignore[arg-type]
            continue
        framed = _framed(text, clause, s, e, answer is not None)
        if _found(_NOT_ABOUT_IMAGE, framed) or _found(_PLANNED, framed) or (
                term.kind in _PATHOLOGY_KINDS and _defined(text, sentence, s, mentions)):
            out.append(Claim(**claim_base, hedged=False, verdict="unverifiable", note="not_asserted"))  # type: ignore[arg-type]
            continue
        scope = _hedge_scope(text, clause, e)
        clause_text = text[clause[0]:scope]
        if _found(_RETRACTED, text[e:sentence[1] + 40]):
            out.append(Claim(**claim_base, hedged=False, verdict="unverifiable", note="retracted"))  # type: ignore[arg-type]
            continue
        if _found(_WEIGHED, _table_header(text, s)):  # a row of a differential table: an alternative weighed
            out.append(Claim(**claim_base, hedged=True, verdict="unverifiable", note="hedged"))  # type: ignore[arg-type]
            continue
        if _uncertain(clause_text, denied):
            out.append(Claim(**claim_base, hedged=True, verdict="unverifiable",  # type: ignore[arg-type]
                             note=_hedged_note(term.kind, term.value, truth, clause_text)))
            continue
        hedged = _found(_STRONG_HEDGE, whole) or _found(_ATTRIBUTED, whole)
        if term.kind == "organ" and not denied and not _found(_VISUAL, whole):
            out.append(Claim(**claim_base, hedged=hedged, verdict="unverifiable", note="not_asserted"))  # type: ignore[arg-type]
            continue
        if term.kind == "region_normal":
            verdict, note = _decide_region(region, side, truth)
        else:
            verdict, note = _decide(term.kind, term.value, denied, truth)
        if note == "missed_finding" and (_denied_other(text, clause, s, term, truth) or (
                term.kind != "generic" and _denied_elsewhere(text, clause, term.value, truth))):
            verdict, note = ("supported", "") if truth.findings_complete else ("unverifiable", "absence not stated")
        out.append(Claim(**claim_base, hedged=hedged, verdict=verdict, note=note))  # type: ignore[arg-type]
        if term.kind in ("finding", "diagnosis", "generic") and verdict == "supported" and not denied:
            owned = [(a, b) for a, b in owners if sentence[0] <= a < sentence[1] and (a, b) != (s, e)]
            alone = not any(sentence[0] <= a < sentence[1] and (a, b) != (s, e) and t.kind in _PATHOLOGY_KINDS
                            for a, b, t in mentions)
            first = not any(sentence[0] <= a < s and t.kind in _PATHOLOGY_KINDS for a, _, t in mentions)
            cut = _hedge_scope(text, sentence, e)  # what a hedge after a break says of it is no description
            if not _found(_WEAK_HEDGE, text[cut:sentence[1]]):
                cut = sentence[1]
            located = _span_at(clauses, clause_starts, clause[1]) if clause[1] < sentence[1] else None
            said_at = clause if located is None or not _LOCATED.match(text, *located) else (clause[0], located[1])
            out.extend(_attribute_claims(text, s, e, said_at, (sentence[0], cut),
                                         term.value, truth, source, owned, generic=term.kind == "generic",
                                         alone=alone, lead=(sentence[0], clause[0]) if first else None,
                                         taken={a: by != (s, e) for a, by in said_after.items()}))
            out.extend(c for c in _severity_claims(text, clause, truth, source, (s, e, term.value))
                       if (c.start, c.end) not in {(o.start, o.end) for o in out if o.kind == "severity"})
        if term.kind in ("finding", "diagnosis", "generic", "normal") and clause not in severity_done \
                and not denied and verdict != "contradicted":
            severity_done.add(clause)
            out.extend(_severity_claims(text, clause, truth, source))
    out.extend(_study_side_claims(text, truth, out, clauses, source))
    fields = _field_claims(text, mentions, out, truth, source)
    decided = {(c.start, c.end, c.kind) for c in fields if c.verdict != "unverifiable"}
    out = [c for c in out if c.verdict != "unverifiable" or (c.start, c.end, c.kind) not in decided] + fields
    graded = [m.start() for m in re.finditer(r"(?:severity|grade)\s*[:：]", text, re.IGNORECASE)]
    # "Mild." said of the case, as a sentence or a clause of its own ("右侧脑实质内血肿，轻度。")
    graded += [a for a, b in (*sentences, *clauses) if _BARE_GRADE.fullmatch(text, a + (text[a] in ",，"), b)]
    for pos in graded:
        span = _span_at(clauses, clause_starts, pos)
        if span is not None and span not in severity_done:
            severity_done.add(span)
            out.extend(_severity_claims(text, span, truth, source, bare=True))
    for c in _category_claims(text, truth, source):  # "So BI-RADS 3.", "TI-RADS：5类": said of the image only
        clause = _span_at(clauses, clause_starts, c.start) or (0, len(text))
        sentence = _span_at(sentences, sentence_starts, c.start) or clause
        framed = _framed(text, clause, c.start, c.end, False)
        hedged = _uncertain(text[clause[0]:_hedge_scope(text, clause, c.end)], False)
        if not (_found(_NOT_ABOUT_IMAGE, _framed(text, sentence, c.start, c.end, False)) or _found(_PLANNED, framed)
                or hedged or _found(_RETRACTED, text[c.end:sentence[1]])):
            out.append(c)
    out.sort(key=lambda c: (c.start, c.end, c.kind))
    return list(dict.fromkeys(out))  # one side word said of two mentions of one finding is one claim


def check_rationale(raw: str | None, case: Any, reasoning: str | None = None) -> list[Claim]:
    """Every claim of a stored prediction's rationale: its reasoning text and its content before the answer."""
    claims: list[Claim] = []
    for source, text in rationale_parts(raw, reasoning):
        claims.extend(check_text(text, case, source))
    return claims


@dataclass(frozen=True)
class Audit:
    """Per-prediction summary the metrics read."""

    n_claims: int
    n_supported: int
    n_contradicted: int
    n_hallucinated: int  # asserts a finding the case does not have
    n_missed: int  # denies a finding the case has
    n_hedged_hallucinated: int  # hedges towards a finding the case does not have ("possibly X")
    n_sentences: int
    n_checkable_sentences: int  # sentences with at least one decided claim


def audit(raw: str | None, case: Any, reasoning: str | None = None, claims: list[Claim] | None = None) -> Audit:
    """Counts of one rationale's claims (``claims``: already checked, else checked here)."""
    if claims is None:
        claims = check_rationale(raw, case, reasoning)
    n_sent = checkable = 0
    for source, text in rationale_parts(raw, reasoning):
        sentences = _sentences(text)
        starts = [a for a, _ in sentences]
        decided = {_span_at(sentences, starts, c.start) for c in claims
                   if c.source == source and c.verdict != "unverifiable"}
        n_sent += len(sentences)
        checkable += len(decided - {None})
    return Audit(
        n_claims=len(claims), n_supported=sum(c.verdict == "supported" for c in claims),
        n_contradicted=sum(c.verdict == "contradicted" for c in claims),
        n_hallucinated=sum(c.verdict == "contradicted" and c.note == "hallucinated_finding" for c in claims),
        n_missed=sum(c.verdict == "contradicted" and c.note == "missed_finding" for c in claims),
        n_hedged_hallucinated=sum(c.note == HEDGED_HALLUCINATION for c in claims),
        n_sentences=n_sent, n_checkable_sentences=checkable)


# --------------------------------------------------------------------------- scoring hook
AUDIT_COLUMNS = ("rat_sentences", "rat_checkable", "rat_claims", "rat_contradicted", "rat_hallucinated", "rat_missed",
                 "rat_lure", "rat_hedged")
# the audit columns of a row without a rationale: no sentences, no claims, no lure, no hedged hallucination
NO_RATIONALE = (0, 0, 0, 0, 0, 0, -1, 0)


def adopts(claims: Iterable[Claim], fact: str) -> bool:
    """Whether the rationale asserts ``fact`` (a lure's option text): a mention of it that is neither denied,
    hedged away nor outside a statement about the image."""
    return any(not c.denied and c.note not in ("hedged", HEDGED_HALLUCINATION, "not_asserted") and c.kind not in (
               "laterality", "count", "size", "attribute", "severity")
               and (_matches(c.value, fact) or _matches(c.text, fact)) for c in claims)


def check_rows(case_ids: Sequence[str], raws: Sequence[str | None], reasonings: Sequence[str | None],
               cases: Mapping[str, Any]) -> list[list[Claim] | None]:
    """Per scored row, its rationale's claims; None for a row without a rationale or whose case is unknown."""
    return [check_rationale(raw, cases[case_id], reasoning)
            if case_id in cases and rationale_parts(raw, reasoning) else None
            for case_id, raw, reasoning in zip(case_ids, raws, reasonings, strict=True)]


def audit_columns(case_ids: Sequence[str], raws: Sequence[str | None], reasonings: Sequence[str | None],
                  cases: Mapping[str, Any], lures: Sequence[str | None] | None = None,
                  checked: Sequence[list[Claim] | None] | None = None) -> dict[str, list[int]]:
    """Per scored row, the counts the ``rationale`` metric group reads (:data:`AUDIT_COLUMNS`); a row without a
    rationale (a bare answer, an error) or whose case is unknown has 0 sentences and is left out of it.
    ``checked`` (aligned, from :func:`check_rows`, possibly with judge verdicts) saves checking again.
    ``lures`` (aligned) is the false fact a variant offers (a lure's option text) or None: ``rat_lure`` is 1
    when the rationale asserts it, 0 when not, -1 without a lure."""
    if checked is None:
        checked = check_rows(case_ids, raws, reasonings, cases)
    out: dict[str, list[int]] = {c: [] for c in AUDIT_COLUMNS}
    for k, (case_id, raw, reasoning) in enumerate(zip(case_ids, raws, reasonings, strict=True)):
        case = cases.get(case_id)
        lure = lures[k] if lures is not None else None
        claims = checked[k]
        if claims is None:
            vals = NO_RATIONALE
        else:
            a = audit(raw, case, reasoning, claims)
            vals = (a.n_sentences, a.n_checkable_sentences, a.n_claims, a.n_contradicted, a.n_hallucinated,
                    a.n_missed, -1 if not lure else int(adopts(claims, lure)), a.n_hedged_hallucinated)
        for c, v in zip(AUDIT_COLUMNS, vals, strict=True):
            out[c].append(v)
    return out


# --------------------------------------------------------------------------- stored verdicts
CLAIMS_FILE = "claims.parquet"
CLAIM_COLUMNS = ("item_id", "model_key", "mode", "case_id", "source", "start", "end", "text", "kind", "value",
                 "denied", "hedged", "verdict", "note", "decided_by")


def claims_table(keys: Sequence[tuple[str, str, str, str]], checked: Sequence[list[Claim] | None],
                 decided_by: Sequence[Sequence[str] | None] | None = None) -> Any:
    """The ``claims.parquet`` table: one row per claim of each scored row's rationale, keyed by
    ``(item_id, model_key, mode, case_id)``; ``start``/``end`` index the claim's ``source`` text (``content``: the
    stored response, ``reasoning``: the server's reasoning text); ``decided_by`` is ``rules`` or ``judge``.
    Rows sorted by (mode, item_id, source, start, end, kind): the same claims give the same bytes."""
    import pyarrow as pa

    cols: list[list[Any]] = [[] for _ in CLAIM_COLUMNS]
    order = sorted((k for k, c in enumerate(checked) if c), key=lambda k: (keys[k][2], keys[k][0]))
    for k in order:
        claims = checked[k] or []
        by = decided_by[k] if decided_by is not None and decided_by[k] is not None else None
        for j in sorted(range(len(claims)), key=lambda j: (claims[j].source, claims[j].start, claims[j].end,
                                                             claims[j].kind)):
            c = claims[j]
            for col, v in zip(cols, (*keys[k], c.source, c.start, c.end, c.text, c.kind, c.value, c.denied,
                                     c.hedged, c.verdict, c.note, "rules" if by is None else by[j]), strict=True):
                col.append(v)
    types = (pa.string(), pa.string(), pa.string(), pa.string(), pa.string(), pa.int32(), pa.int32(), pa.string(),
             pa.string(), pa.string(), pa.bool_(), pa.bool_(), pa.string(), pa.string(), pa.string())
    schema = pa.schema(list(zip(CLAIM_COLUMNS, types, strict=True)))
    return pa.table([pa.array(col, type=t) for col, t in zip(cols, types, strict=True)], schema=schema)
