"""What a finding's name says of how it looks: the signal or colour its own words fix (issue 40, review 2026-12-07b).

A description pairs a finding with attributes ("hypointense fatty mass", "slate grey cotton-wool spots"); some of
its words fix what the attribute can be, whatever the image: fat is bright on a T1-weighted image and dark on CT,
a cyst is dark on T1 and on CT, a calcification is dense, cotton-wool spots are white, a pigmented lesion is dark.
:func:`contradicts` says whether a description says both (a self-contradictory description: no reader needs the
image to rule it out, so it is no distractor that tests reading it). Only the words listed here are known; any
other pairing is not contradictory (unknown is not a contradiction).

This module imports nothing of medr2 (it sits beside :mod:`medr2.vocab`).
"""

from __future__ import annotations

import re

# words of a finding's name -> per modality (lower case), the intensity words it rules out; "T1" entries hold on a
# T1-weighted image (or one whose sequence is not given), "MRI" on any MR image whose fat is not suppressed
_FAT = r"\b(fat|fatty|lipoma|lipomatous)\b"
_CYST = r"\b(cyst|cystic|cysts)\b"
_CALCIFIED = r"\b(calcified|calcification|calcifications|calcific)\b"
_INTENSITY_RULES: tuple[tuple[str, dict[str, frozenset[str]]], ...] = (
    (_FAT, {"mri": frozenset({"hypointense"}), "ct": frozenset({"hyperdense"}),
            "x-ray": frozenset({"radiopaque"})}),
    (_CYST, {"t1": frozenset({"hyperintense"}), "ct": frozenset({"hyperdense"}),
             "ultrasound": frozenset({"hyperechoic"})}),
    (_CALCIFIED, {"ct": frozenset({"hypodense"}), "x-ray": frozenset({"lucent"})}),
)
_FAT_SUPPRESSED = re.compile(r"fat[ -]?(sat|suppress)|stir|dixon water", re.IGNORECASE)
# colour words a finding's name rules out on a photograph
_WHITE = frozenset({"white", "pale", "yellow", "yellow-white", "cream"})
_DARK = frozenset({"dark red", "red", "brown", "slate grey", "grey", "black", "dark"})
_COLOUR_RULES: tuple[tuple[str, frozenset[str]], ...] = (
    (r"\bcotton[ -]wool\b|\bexudates?\b|\bdrusen\b", _DARK),
    (r"\bpigment(ed)?\b|\bmelanoma\b|\bna?evus\b|\bhaemorrhages?\b|\bhemorrhages?\b|\bblot\b", _WHITE),
)


def contradicts(label: str, intensity: str | None, modality: str | None, sequence: str | None = None) -> bool:
    """Whether a finding named ``label`` cannot have the intensity (or colour) ``intensity`` on an image of
    ``modality`` and ``sequence``: its own words fix the other ("hypointense fatty mass" on a T1-weighted MR
    image, "slate grey cotton-wool spots")."""
    if not intensity:
        return False
    name, value = label.lower(), intensity.lower().strip()
    mod, seq = (modality or "").lower(), (sequence or "").lower()
    for words, banned in _COLOUR_RULES:
        if re.search(words, name) and value in banned:
            return True
    for words, per in _INTENSITY_RULES:
        if not re.search(words, name):
            continue
        if value in per.get(mod, frozenset()):
            return not (mod == "mri" and _FAT_SUPPRESSED.search(seq))
        if mod == "mri" and value in per.get("t1", frozenset()) and (not seq or "t1" in seq):
            return True
    return False
