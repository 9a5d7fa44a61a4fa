"""The registry of perturbations (docs/variants.md) and the helpers every perturbation shares.

This module imports nothing heavy (the code lists serve ``--help``). A new variant is one registration
(``@register`` / :func:`medr2.registry.register_variant`); the code lists are derived from the registry.
How to write one: ``docs/extending.md``.

A perturbation has a ``code`` (``T1`` … ``V9``) and ``apply(item, case, ctx) -> list[Item]``; it raises
:class:`Skip` with a short, countable reason where it does not apply. New items are built with
:func:`derive_item`, which sets ``variant``, ``parent_id``, ``perturbation`` (code + parameters),
``seed`` and recomputes the content id.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from medr2.errors import BadInput

if TYPE_CHECKING:
    from medr2.perturb.context import PerturbContext
    from medr2.records import Case, Item

from medr2.errors import Skip
from medr2.registry import Registry
from medr2.variant_id import VariantId

__all__ = ["PERTURBATIONS", "Perturbation", "Skip", "all_codes",
           "answer_changed_meta", "derive_item", "derive_seed", "parse_variants", "register", "text_codes",
           "visual_codes"]


class Perturbation(ABC):
    """One variant family. Subclasses set ``code``, ``title`` and ``defaults`` (their parameters)."""

    code: ClassVar[str]
    title: ClassVar[str]
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, **params: Any) -> None:
        unknown = sorted(set(params) - set(self.defaults))
        if unknown:
            raise BadInput(f"unknown parameter(s) {unknown} for {self.code}", field="--variants")
        self.params: dict[str, Any] = {**self.defaults, **params}

    @abstractmethod
    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        """Variants of a clean ``item`` of ``case``; raise :class:`Skip` where it does not apply."""

    def related_cases(self, case: Case, ctx: PerturbContext) -> list[str]:
        """Ids of the other cases ``apply`` reads in full for items of ``case`` (``ctx.case(id)``); it
        may use only ``ctx.seed``, ``ctx.index`` and ``ctx.pools`` to decide. Default: none."""
        return []


def _check(code: str, cls: type[Perturbation]) -> None:
    vid = VariantId.parse(code)
    if vid.code != code or getattr(cls, "code", None) != code:
        raise ValueError(f"variant {code!r}: a perturbation is registered under its code (a letter and a number, "
                         f"e.g. T9), and {getattr(cls, '__name__', cls)!r} has code {getattr(cls, 'code', None)!r}")


# code -> Perturbation class; the built-ins are lazy (codes known without importing numpy). The canonical
# order of the codes (``all_codes()``) is registration order: these, then plugins. See docs/extending.md.
PERTURBATIONS: Registry[type[Perturbation]] = Registry("variant code", field="--variants", check=_check)
for _code, _target in (
        ("T1", "text:AbsentTwin"), ("T2", "text:CorrectHint"), ("T3", "text:MisleadingPremise"),
        ("T4", "text:SuggestedAnswer"), ("T5", "text:Paraphrase"), ("T6", "text:OptionPermutation"),
        ("T7", "text:NoneOfTheAbove"), ("T8", "text:InjectedWrongStep"),
        ("V1", "visual:BlankImage"), ("V2", "visual:OtherCaseSameModality"), ("V3", "visual:OtherModality"),
        ("V4", "visual:EvidenceRemoval"), ("V5", "visual:CorrectCue"), ("V6", "visual:DecoyCue"),
        ("V7", "visual:CoordinatesOnly"), ("V8", "visual:Degradation"), ("V9", "visual:HorizontalFlip")):
    PERTURBATIONS.lazy(_code, f"medr2.perturb.{_target}")


def register(cls: type[Perturbation]) -> type[Perturbation]:
    """Class decorator: register a perturbation under its ``code`` (a taken code is refused)."""
    return PERTURBATIONS.register(cls.code, cls)


def all_codes() -> tuple[str, ...]:
    """Every variant code, in canonical order (built-ins T1..T8, V1..V9, then plugins)."""
    return tuple(PERTURBATIONS.names())


def text_codes() -> tuple[str, ...]:
    """Codes of the text (prompt) variants: those whose code starts with ``T``."""
    return tuple(c for c in all_codes() if VariantId.parse(c).family == "T")


def visual_codes() -> tuple[str, ...]:
    """Codes of the visual variants: those whose code starts with ``V``."""
    return tuple(c for c in all_codes() if VariantId.parse(c).family == "V")


def load_perturbations() -> Registry[type[Perturbation]]:
    """Every perturbation class, imported (the registry itself)."""
    for code in PERTURBATIONS.names():
        PERTURBATIONS[code]
    return PERTURBATIONS


def __getattr__(name: str) -> tuple[str, ...]:
    # the code lists are derived from the registry (plugins included), so they are computed when asked for
    if name == "ALL_CODES":
        return all_codes()
    if name == "TEXT_CODES":
        return text_codes()
    if name == "VISUAL_CODES":
        return visual_codes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_variants(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"all"``, ``"T1,V8"`` (or a list of codes) -> codes in canonical order; ``""``/``None`` -> ()."""
    if text is None:
        return ()
    parts = [p.strip() for p in (text.split(",") if isinstance(text, str) else text) if p and p.strip()]
    codes = all_codes()
    if any(p.lower() == "all" for p in parts):
        return codes
    if any(p.lower() == "none" for p in parts):
        return ()
    wanted = {p.upper() for p in parts}
    unknown = sorted(wanted - set(codes))
    if unknown:
        raise BadInput(f"unknown variant code(s) {unknown}; known: {', '.join(codes)} or 'all'",
                       field="--variants")
    return tuple(c for c in codes if c in wanted)


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed from a stable hash of ``parts`` (never from iteration order)."""
    from medr2.records import jsonable, stable_hash

    return int(stable_hash(jsonable(list(parts)), 16), 16) & ((1 << 63) - 1)


def derive_item(parent: Item, *, variant: str, params: dict[str, Any], seed: int,
                meta: dict[str, Any] | None = None, **updates: Any) -> Item:
    """A new variant Item of ``parent`` with ``updates`` applied and a fresh content id."""
    from medr2.records import Item, item_content_id, jsonable

    fields = parent.model_dump()
    fields.update(updates)
    fields["variant"] = variant
    fields["parent_id"] = parent.item_id
    fields["perturbation"] = jsonable({"code": VariantId.parse(variant).code, **params})
    fields["seed"] = seed
    fields["meta"] = {**parent.meta, **(meta or {})}
    fields["item_id"] = item_content_id(fields)
    try:
        return Item.model_validate(fields)
    except ValueError as e:  # pydantic ValidationError is a ValueError
        raise BadInput(f"variant {variant} is not a valid item: {e}", record=parent.item_id, field="variant") from e


def answer_changed_meta(parent: Item, answer: str, *, scoring: str = "exact") -> dict[str, Any]:
    """``meta`` for a variant: how it is scored, and the parent's answer where it differs or is probed."""
    meta: dict[str, Any] = {"scoring": scoring}
    if scoring == "probe" or answer != parent.answer:
        meta["parent_answer"] = parent.answer
    return meta


