"""Rationale audit: the claims a free-text rationale makes that a case's ground truth can decide (issue 19).

:func:`check_rationale` reads a rationale (the content before the final answer line, and the server's
separate reasoning text where it gave one) and returns one :class:`Claim` per mention of something the
ground truth (:class:`medr2.records.Case`) speaks about: modality, plane/view, MR/CT sequence, body region,
organs, findings (present or absent, with laterality, count, size and descriptors: margin, shape, intensity,
content, enhancement), a region or organ called normal, diagnosis and severity. Each claim is ``supported``,
``contradicted`` or ``unverifiable``, with the character span (in its source text) it came from.

Rules only, deliberately conservative (a wrong ``contradicted`` accuses a model of a false statement):

* the labels are the bench's own (:mod:`medr2.tasks.vocab`: built-in, per-region vocabularies, synonyms)
  plus the case's own labels; English (British and American spelling) and common Chinese terms;
* negation ("no effusion", "without", "absent", "is not seen", "ruled out", "unlikely", "未见", "无") turns
  a mention into a denial; a denial of what the case has is contradicted (*missed evidence*);
* weak hedges ("possible", "may", "cannot exclude", "differential", "or", "可能") and clauses that are not
  about this image (restating the question or options, planning "let me check", textbook statements
  "typically", conditionals "if", "would") make a mention ``unverifiable``; strong hedges ("likely",
  "consistent with", "考虑") still assert (``hedged=True``);
* a finding the case does not have is contradicted (*hallucinated finding*), and its denial supported, only
  where the case's truth states it absent (:func:`medr2.tasks.contract.states_absent`, the rule the tasks' "no"
  answers use): a negative label of the source (``Case.absent``) or a concept it is a sub-type of, a complete
  finding list (``meta.findings_complete``) that does not list it, or a finding that lies only in another body
  part; a finding merely unlisted on an incomplete list is ``unverifiable``; "normal" needs a complete list; an
  organ that is not annotated is never "absent" (only one of another body part is contradicted).

An optional judge (``medr2 score --judge SPEC --judge-claims``; ``medr2.scoring.rationaleaudit._judge_claims``)
decides the claims the rules leave ``unverifiable`` (asserted ones only); its share is reported in ``metrics.json``
``claims``.

The checker is this package's modules, each importing only those above it: :mod:`.truth` (:class:`Claim`,
:class:`Truth`, the version), :mod:`.lexicon` (terms and mentions), :mod:`.verdicts` (a mention decided against the
truth), :mod:`.clauses` (the attribute, laterality, count, size, severity, site and field claims of a mention) and
:mod:`.rationale` (:func:`check_text`, :func:`check_rationale`, :func:`audit`, the scoring hook, stored verdicts).
"""

from __future__ import annotations

from medr2.scoring.claims.lexicon import _REGION_WORDS, _vocab_term_ok, relation
from medr2.scoring.claims.rationale import (
    AUDIT_COLUMNS,
    CLAIM_COLUMNS,
    CLAIMS_FILE,
    NO_RATIONALE,
    audit,
    audit_columns,
    check_rationale,
    check_rows,
    check_text,
    claims_table,
    has_rationale,
    rationale_parts,
)
from medr2.scoring.claims.truth import CHECKER_VERSION, HEDGED_HALLUCINATION, Claim, Truth

# the shared negation and hedging reading the checker uses (medr2.vocab.context), under the names it had here
from medr2.vocab.context import (
    GENERIC as _VOCAB_SKIP,
    WEAK_HEDGE as _WEAK_HEDGE,
    clauses as _clauses,
    negated as _negated,
    uncertain as _uncertain,
)

__all__ = [
    "AUDIT_COLUMNS", "CHECKER_VERSION", "CLAIMS_FILE", "CLAIM_COLUMNS", "HEDGED_HALLUCINATION", "NO_RATIONALE",
    "_REGION_WORDS", "_VOCAB_SKIP", "_WEAK_HEDGE", "Claim", "Truth", "_clauses", "_negated", "_uncertain",
    "_vocab_term_ok", "audit", "audit_columns", "check_rationale", "check_rows", "check_text", "claims_table",
    "has_rationale", "rationale_parts", "relation",
]
