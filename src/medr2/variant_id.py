"""Variant ids, parsed in one place: ``clean``, ``T1``, ``T4-hint``, ``V8-noise-2``.

A variant id is the perturbation code (one upper-case letter, the family: ``T`` text, ``V`` visual; then a
number), optionally followed by ``-``-separated qualifiers; a last qualifier made of digits is the severity.
``clean`` is the unperturbed item. See ``docs/extending.md`` (adding a variant).

This module imports nothing heavy.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

CLEAN = "clean"

# What a variant item is to scoring and training (declared by its perturbation, ``Perturbation.roles``; written into
# each item it makes, ``Item.roles``; docs/variants.md "Roles"):
# - ``preserves_answer``: the right answer is the parent's, so a changed answer is a flip (FlipRate, consistency);
# - ``misleads``: the prompt states a misleading premise or a wrong answer (``lure``), counted in MFR;
# - ``probe``: no exact answer exists for what is shown (stored answer: the parent's); only compared with the
#   parent, left out of accuracy per variant, consistency and training;
# - ``augments``: a training example of the fine-tuning strategy ``augmented``;
# - ``keeps_facts``: the case's facts hold for what is shown (its own image), so a rationale is audited against them;
# - ``pairs``: the item and its clean parent are one pair, scored as a pair (right only where both are right: the
#   look-alike pairs of V12, MediConfusion's "both right").
VariantRole = Literal["preserves_answer", "misleads", "probe", "augments", "keeps_facts", "pairs"]
ROLES: tuple[VariantRole, ...] = get_args(VariantRole)  # the canonical order of an item's roles

_CODE = re.compile(r"[A-Z][0-9]+")


@dataclass(frozen=True, order=True)
class VariantId:
    """A parsed variant id. ``str(VariantId.parse(s)) == s`` for every id it accepts."""

    code: str  # "clean", "T1", "V8", ...
    qualifiers: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> VariantId:
        """Parse ``text``; raises ValueError for anything that is not a variant id."""
        if not isinstance(text, str):
            raise ValueError(f"variant id must be a string, not {type(text).__name__}")
        if text == CLEAN:
            return cls(CLEAN)
        code, *quals = text.split("-")
        if not _CODE.fullmatch(code) or any(not q for q in quals):
            raise ValueError(f"not a variant id: {text!r} (expected 'clean' or a code like T1, V8-noise-2)")
        return cls(code, tuple(quals))

    @classmethod
    def lenient(cls, text: str) -> VariantId:
        """Split any string the way :meth:`parse` does, without validating it (for ids read from a bench
        written by another tool): the code is the part before the first ``-``."""
        code, *quals = text.split("-")
        return cls(code, tuple(quals))

    @property
    def is_clean(self) -> bool:
        return self.code == CLEAN

    @property
    def family(self) -> str:
        """``T`` (text), ``V`` (visual), another letter for a plugin family; ``""`` for clean."""
        return "" if self.is_clean else self.code[:1]

    @property
    def number(self) -> int:
        """The number of the code (8 for ``V8``); 0 for clean (or a code without a number)."""
        return int(self.code[1:]) if self.code[1:].isdigit() else 0

    @property
    def severity(self) -> int | None:
        """The last qualifier when it is all digits (``V8-noise-2`` -> 2), else None."""
        return int(self.qualifiers[-1]) if self.qualifiers and self.qualifiers[-1].isdigit() else None

    @property
    def rest(self) -> str:
        """Everything after the code (``noise-2`` for ``V8-noise-2``)."""
        return "-".join(self.qualifiers)

    def matches(self, wanted: str) -> bool:
        """``wanted`` is this id or a prefix of it up to a ``-`` (``V8`` and ``V8-noise`` match ``V8-noise-2``)."""
        text = str(self)
        return text == wanted or text.startswith(wanted + "-")

    def sort_key(self) -> tuple[str, int, str]:
        """First letter of the code, its number, then the qualifiers (the order of report columns; ``clean``
        sorts by its ``c``)."""
        return (self.code[:1], self.number, self.rest)

    def __str__(self) -> str:
        return "-".join((self.code, *self.qualifiers))


@functools.lru_cache(maxsize=1 << 12)
def variant_code(variant: str) -> str:
    """The perturbation code of a variant id (``V8-noise-2`` -> ``V8``; ``clean`` -> ``clean``); memoised (a
    bench has few distinct ids, scoring asks once per row)."""
    return VariantId.lenient(variant).code


@functools.lru_cache(maxsize=1 << 12)
def variant_severity(variant: str) -> int | None:
    """The severity of a variant id (``V8-noise-2`` -> 2), or None; memoised."""
    return VariantId.lenient(variant).severity


def variant_matches(variant: str, wanted: Sequence[str] | None) -> bool:
    """``wanted`` entries match a variant id exactly or as its code prefix (``V8`` matches ``V8-noise-2``;
    none given, or ``all``, match every variant)."""
    if not wanted or "all" in wanted:
        return True
    vid = VariantId.lenient(variant)
    return any(vid.matches(w) for w in wanted)
