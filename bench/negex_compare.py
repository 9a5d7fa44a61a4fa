"""The claim checker's negation rules against NegEx (negspacy's ``en_clinical`` termset) on the hand-labelled
rationale sets (issue 39).

For each finding/diagnosis mention the checker finds, the checker's own decision (``denied``: its hand-written
before/after patterns) is compared with NegEx's (the mention as an entity of a spaCy doc of its clause, the
``negex`` component of negspacy with its clinical termset); then every set is scored twice, span-exact like
tests/test_score_claims.py, once with each negation decision.

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

import medr2.score.claims as C

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
    """Precision/recall of ``contradicted`` (span-exact); with ``nlp`` the negation decision is NegEx's."""
    original = C._found
    current: dict[str, Any] = {}

    def found(pattern: Any, text: str) -> bool:
        if nlp is not None and pattern in (C._NEG_BEFORE, C._NEG_AFTER) and "span" in current:
            full, s, e = current["span"]
            return negex_denies(nlp, full, s, e)
        return original(pattern, text)

    def mentions(text: str, truth: Any) -> list[Any]:
        out = real_mentions(text, truth)
        return [_Tracked(m, text, current) for m in out]

    real_mentions = C._mentions
    tp = fp = hit = gold = 0
    agree: Counter[str] = Counter()
    try:
        C._found = found  # type: ignore[assignment]
        C._mentions = mentions  # type: ignore[assignment]
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
        C._found = original  # type: ignore[assignment]
        C._mentions = real_mentions  # type: ignore[assignment]
    return {"precision": round(tp / max(1, tp + fp), 3), "recall": round(hit / max(1, gold), 3), "tp": tp,
            "fp": fp, "gold": gold, **agree}


class _Tracked(tuple):  # type: ignore[type-arg]
    """A mention ``(start, end, term)`` that, when unpacked by check_text, records where it is (for NegEx)."""

    def __new__(cls, m: tuple[int, int, Any], text: str, current: dict[str, Any]) -> _Tracked:
        obj = super().__new__(cls, m)
        obj._text, obj._current = text, current  # type: ignore[attr-defined]
        return obj

    def __iter__(self) -> Any:
        s, e, _ = tuple.__iter__(self)
        self._current["span"] = (self._text, s, e)  # type: ignore[attr-defined]
        return tuple.__iter__(self)


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
