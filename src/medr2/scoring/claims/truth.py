"""What the claim checker reads and returns: :class:`Claim` (one checked mention with its verdict), :class:`Truth`
(what it reads of a case), the claim kinds and the checker's version (:mod:`medr2.scoring.claims`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from medr2.tasks import contract

ClaimVerdict = Literal["supported", "contradicted", "unverifiable"]
CLAIM_KINDS = ("modality", "plane", "sequence", "body_region", "organ", "finding", "diagnosis", "laterality",
               "count", "size", "attribute", "severity")
# v2: "absent", "X: no Y", part-level 正常, size cut-offs, retractions; v3: the clinical vocabulary (medr2.vocab:
# synonyms, sub-types, planes/views, modalities), laterality anywhere in the clause, counts only where the truth
# states one, hedged hallucinations counted; v4: "REGION is normal/clear" against where findings lie, descriptors and
# severity through the vocabulary (compare_values), sizes and counts in any spelling and field, every side word;
# v5: a weak hedge after a break ("X, which could suggest Y") leaves X asserted, attribute fields of a list or table
# said of the finding named elsewhere, body regions decided through part-of (vocab.overlap), sequences compared on a
# shared axis (contrast phase, CT window, weighting), co-occurring labels no hallucination, a descriptor anywhere in
# a sentence naming one finding; v6: the organ-state reading ("the spleen is enlarged", "| Heart | enlarged |"), table
# columns under an attribute's header and organ/site fields, a side word in a clause before the finding, the
# diagnosis standing for its findings' attributes, attributions (", typical of X") and answered questions ("X? None.")
# as statements, a bare grade sentence, a share (80 %) as a grade, vocabulary acronyms as a field's value; v7: image
# sides and the radiological convention are no side of the finding, a differential table's rows weighed, a row's
# label marks its value ("| Pneumothorax | none |"), plans ("建议CT随访") and "X over Y" alternatives no statement, a
# negation ending at ", so", "one ...; the other" no count, spelled-out sizes, a clause saying where a finding lies;
# v8: a hedge opening a "with" clause hedges it, "maybe" and "I'd", a grade or side compared ("more than mild", "右>左":
# both sides), a technique as the frame of a negation ("not visible on an AP"), a negation ending at "and the", a row
# label's gloss ("| Enhancing tumour (ET) |"), "bilateral" of a one-sided finding decided on complete lists only;
# v9: a side comparison grading a "bilateral" names the larger side only, a side said right after another mention is
# its ("an effusion on the right", "the heart is on the left"), a table cell of a row naming another finding is
# that finding's, an unticked checklist box denies, a one-sided denial of the other side is no missed finding, a
# focal-lesion word in the organ of the case's focal finding names it, "the radiograph shows the ankle" and
# "normal macular OCT" as claims; v10: a case's absent labels are terms, a denial of a strict sub-type of the case's
# finding is no missed finding ("no intraventricular extension" of a haemorrhage), "no other X" of a case with one X
# denies only further ones, an angiogram said of a CT is a contrast-enhanced CT (of MR or X-ray a compatible
# modality), one listed instance of a countable finding on a complete list states its count, a sub-type the source
# states absent by name contradicted, a size word set apart after the finding ("a pneumothorax, large"), fields of a
# finding named only denied or as the diagnosis, a site field's side, Chinese field keys, "Region:" fields, a
# textbook definition set against the image no claim, "for an AP projection" a frame, sequences read as sequences,
# a category of the case's reporting system ("So BI-RADS 3.", "TR5") compared with the case's
CHECKER_VERSION = "claims-v10"
HEDGED_HALLUCINATION = "hedged_hallucination"


@dataclass(frozen=True)
class Claim:
    kind: str
    value: str  # the canonical label the mention names
    text: str  # the mention as written
    start: int  # span in ``source`` text
    end: int
    source: str  # "content" or "reasoning"
    denied: bool  # the rationale says it is absent / not so
    hedged: bool  # asserted with a strong hedge ("likely", "consistent with")
    verdict: ClaimVerdict
    note: str = ""  # why: "hallucinated_finding", "missed_finding", "hedged", "not_asserted", ...


@dataclass(frozen=True)
class Truth:
    """What the checker reads of a case (built from a :class:`~medr2.records.Case` or a plain dict)."""

    modality: str | None = None
    plane: str | None = None
    sequence: str | None = None
    body_region: str | None = None
    structures: tuple[str, ...] = ()
    findings: tuple[Mapping[str, Any], ...] = ()  # {"label", "attributes": {laterality, size_mm, count, ...}}
    diagnosis: str | None = None
    severity: str | None = None
    mimics: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()  # the labels the source states absent (Case.absent)
    findings_complete: bool = False  # the source declares every finding labelled (Case.meta["findings_complete"])

    @classmethod
    def of(cls, case: Any) -> Truth:
        if isinstance(case, Truth):
            return case
        get = case.get if isinstance(case, Mapping) else (lambda k, d=None: getattr(case, k, d))
        structures = cast(tuple[str, ...], tuple(  # a structure's name is a required string of the case
            s if isinstance(s, str) else (s.get("name") if isinstance(s, Mapping) else s.name)
            for s in (get("structures") or ())))
        findings = []
        for f in get("findings") or ():
            if isinstance(f, str):
                findings.append({"label": f, "attributes": {}})
            elif isinstance(f, Mapping):
                findings.append({"label": f["label"], "attributes": dict(f.get("attributes") or {})})
            else:
                findings.append({"label": f.label, "attributes": dict(f.attributes)})
        meta = get("meta") or {}
        return cls(modality=get("modality"), plane=get("plane"), sequence=get("sequence"),
                   body_region=get("body_region"), structures=structures, findings=tuple(findings),
                   diagnosis=get("diagnosis"), severity=get("severity"), mimics=tuple(get("mimics") or ()),
                   absent=tuple(str(a) for a in get("absent") or ()),
                   findings_complete=isinstance(meta, Mapping) and meta.get("findings_complete") is True)

    @property
    def positives(self) -> list[str]:
        return list(self.stated.positives)

    @functools.cached_property
    def stated(self) -> contract.Stated:
        """What the truth states about presence, read by the one rule of absence
        (:func:`medr2.tasks.contract.states_absent`) and of normal (:func:`medr2.tasks.contract.abnormal_state`)."""
        labels = [str(f["label"]) for f in self.findings] + ([self.diagnosis] if self.diagnosis else [])
        return contract.Stated(positives=contract.positives(labels), absent=self.absent,
                               complete=self.findings_complete, modality=self.modality, body_region=self.body_region)

    @property
    def abnormal(self) -> bool | None:
        """Abnormal (a label present), normal (complete labels, none present) or None: unknown."""
        return contract.abnormal_state(self.stated)

    @property
    def is_normal(self) -> bool:
        """Known normal: complete finding labels, none of them present (no finding on an incomplete list is not)."""
        return self.abnormal is False
