"""The claim checker's negation rules against NegEx (negspacy's ``en_clinical`` termset) on the hand-labelled
rationale sets (issue 39).

For each finding/diagnosis mention the checker finds, the checker's own decision (``denied``: the hand-written
before/after triggers of :mod:`medr2.vocab.context`, the one copy the checker and the readers share) is compared
with NegEx's (the mention as an entity of a spaCy doc of its clause, the ``negex`` component of negspacy with its
clinical termset); then every set is scored twice, span-exact like tests/test_score_claims.py, once with each
negation decision.

negspacy is not a dependency of medr2; install it beside the project to run this (it pulls spaCy)::

    python -m pip install --target /tmp/negspacy_env negspacy==1.1.0
    PYTHONPATH=src:.:/tmp/negspacy_env python bench/negex_compare.py
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import medr2.scoring.claims as C
from medr2.scoring.claims import clauses as _clause_rules, rationale as _entry_rules

# the checker's modules that call the negation decision (each holds its own name for medr2.vocab.context.negated)
_NEGATING = (_clause_rules, _entry_rules)

ROOT = Path(__file__).resolve().parents[1]
SETS = {"corpus": "rationale_corpus.jsonl", "heldout": "rationale_heldout.jsonl",
        "heldout2": "rationale_heldout2.jsonl", "heldout3": "rationale_heldout3.jsonl"}


def _negex() -> Any:
    import spacy
    from negspacy.negation import Negex  # noqa: F401  (registers the "negex" factory)

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("negex", config={"ent_types": ["FINDING"]})
    return nlp


def negex_denies(nlp: Any, text: str, start: int, end: int) -> bool:
    """NegEx's decision for the mention ``text[start:end]`` within ``text`` (its sentence)."""
    doc = nlp.make_doc(text)
    span = doc.char_span(start, end, label="FINDING", alignment_mode="expand")
    if span is None:
        return False
    doc.ents = [span]
    for _, proc in nlp.pipeline:
        doc = proc(doc)
    return bool(doc.ents and doc.ents[0]._.negex)


def _rows(name: str) -> list[dict[str, Any]]:
    path = ROOT / "tests" / "data" / SETS[name]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def score(name: str, nlp: Any | None) -> dict[str, Any]:
    """Precision/recall of ``contradicted`` (span-exact); with ``nlp`` the negation decision is NegEx's (the
    checker's one negation decision, :func:`medr2.vocab.context.negated` as the checker's modules import it,
    replaced)."""
    rules = C._negated

    def negex(text: str, clause: tuple[int, int], s: int, e: int) -> bool:
        return negex_denies(nlp, text, s, e)

    tp = fp = hit = gold = 0
    try:
        if nlp is not None:
            for module in _NEGATING:
                module._negated = negex
        for row in _rows(name):
            claims = [c for c in C.check_rationale(row["raw"], row["case"]) if c.verdict == "contradicted"]
            spans = row["claims"]
            gold += len(spans)
            for c in claims:
                ok = any(c.source == "content" and c.start < sp["end"] and sp["start"] < c.end for sp in spans)
                tp, fp = tp + ok, fp + (not ok)
            hit += sum(any(c.source == "content" and c.start < sp["end"] and sp["start"] < c.end for c in claims)
                       for sp in spans)
    finally:
        for module in _NEGATING:
            module._negated = rules
    return {"precision": round(tp / max(1, tp + fp), 3), "recall": round(hit / max(1, gold), 3), "tp": tp,
            "fp": fp, "gold": gold}


def decisions(nlp: Any) -> Counter[str]:
    """How often the hand rules and NegEx agree on a finding/diagnosis mention's negation, over all sets."""
    out: Counter[str] = Counter()
    for name in SETS:
        for row in _rows(name):
            for source, text in C.rationale_parts(row["raw"]):
                for c in C.check_text(text, row["case"], source):
                    if c.kind in ("finding", "diagnosis") and c.note != "not_asserted":
                        neg = negex_denies(nlp, text, c.start, c.end)
                        out[f"rules={'neg' if c.denied else 'pos'} negex={'neg' if neg else 'pos'}"] += 1
    return out


def main() -> None:
    nlp = _negex()
    print("negation decisions on finding/diagnosis mentions:", dict(decisions(nlp)))
    for name in SETS:
        print(f"{name:9s} rules: {score(name, None)}")
        print(f"{name:9s} negex: {score(name, nlp)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
