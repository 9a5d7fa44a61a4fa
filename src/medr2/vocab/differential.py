"""A case's differential, read from its record and the clinical vocabulary: the diagnoses its source declares the
image tells apart, the mimics it cannot rule out, and whether a benign/malignant claim is decided by the image. The
one rule the tasks' answerability contract (:mod:`medr2.tasks.contract`: ``discriminable``, ``malignancy_decidable``)
and a source composing its own report (the sample's "malignant appearance") both read."""

from __future__ import annotations

from medr2 import vocab as clinical
from medr2.records import Case


def _same(a: str, b: str) -> bool:
    return clinical.key(str(a)) == clinical.key(str(b))


def discriminable(case: Case) -> list[str]:
    """The diagnoses the source declares the case's image tells apart from its own diagnosis
    (``meta["discriminable"]``; a list, or one ``;``-separated text from a label table), the case's own
    diagnosis left out; none when undeclared."""
    raw = case.meta.get("discriminable")
    items = raw.split(";") if isinstance(raw, str) else raw if isinstance(raw, list) else []
    out = [str(x).strip() for x in items if str(x).strip()]
    return [d for d in dict.fromkeys(out) if case.diagnosis is None or not _same(d, case.diagnosis)]


def stated_mimics(case: Case) -> list[str]:
    """The case's differential: the mimics its source lists (``Case.mimics``) and those the clinical vocabulary
    knows for its diagnosis (``@ mimic=``, :func:`medr2.vocab.mimics`: a glioblastoma's tumefactive demyelination,
    which a source's own list may lack), in that order, each once."""
    known = clinical.mimics(case.diagnosis) if case.diagnosis else ()
    out: list[str] = []
    for m in (*case.mimics, *known):
        if not any(_same(m, o) for o in out):
            out.append(m)
    return out


def compatible_mimics(case: Case) -> list[str]:
    """The case's mimics its image cannot rule out: every mimic of its differential (:func:`stated_mimics`) the
    source does not declare discriminable. A mimic is by definition compatible with the image, so it is never a
    false statement or a wrong option. The one list every consumer reads: the pools' exclusion
    (:func:`medr2.tasks.pools.case_compatible`), the wrong-option check of clean and re-keyed questions
    (:func:`medr2.tasks.assemble.wrong_option_true`) and the malignancy clause (:func:`malignancy_decidable`)."""
    told_apart = discriminable(case)
    return [m for m in stated_mimics(case) if not any(_same(m, d) for d in told_apart)]


MALIGNANCY_UNDECIDED = ("malignancy not decided by the image: a diagnosis it cannot rule out (the diagnosis or a "
                        "compatible mimic) is of the other or an unknown class, and the source does not declare "
                        "the label discriminating")


def malignancy_discriminable(case: Case) -> bool:
    """Whether the source declares the case's benign/malignant label one its image tells apart
    (``meta["malignancy_discriminable"]``: a dataset whose benign/malignant classes are the standard task of its
    images and whose labels are confirmed by pathology, as ISIC's dermoscopy and CBIS-DDSM's mammograms)."""
    return case.meta.get("malignancy_discriminable") is True


def malignancy_decidable(case: Case) -> bool:
    """Whether a benign/malignant claim of the case's lesion is decided by its image: the one gate of every
    malignancy claim (s4.malignancy's clause, the variants' stated malignancy fact, a composed report's "malignant
    appearance"). True where the case states no benign/malignant label (nothing is claimed), where the source
    declares the label discriminating (:func:`malignancy_discriminable`), or where the source states a differential
    (:func:`stated_mimics`) and every diagnosis the image cannot rule out, its own and each compatible mimic
    (:func:`compatible_mimics`), has the label's class in the vocabulary (``@ malignancy=``,
    :func:`medr2.vocab.malignancy`). A mimic of the other class (a glioblastoma's abscess, a melanoma's naevus),
    or of an unknown one, leaves it undecided; so does an unstated differential (unknown is not none)."""
    label = case.malignancy
    if not label or not any(_same(label, m) for m in clinical.MALIGNANCY_CLASSES):
        return True
    if malignancy_discriminable(case):
        return True
    if not case.diagnosis or not stated_mimics(case):
        return False
    classes = [clinical.malignancy(d) for d in (case.diagnosis, *compatible_mimics(case))]
    return all(c is not None and _same(c, label) for c in classes)
