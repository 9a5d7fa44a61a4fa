"""The registry of perturbations (docs/variants.md) and the helpers every perturbation shares.

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
from medr2.records import Case, Item, item_content_id, jsonable, stable_hash

if TYPE_CHECKING:
    from medr2.perturb.context import PerturbContext

TEXT_CODES = ("T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8")
VISUAL_CODES = ("V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9")
ALL_CODES: tuple[str, ...] = TEXT_CODES + VISUAL_CODES


class Skip(Exception):  # noqa: N818 - a control-flow signal, not an error
    """The perturbation does not apply to this item; ``reason`` is counted in the bench manifest."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


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


PERTURBATIONS: dict[str, type[Perturbation]] = {}


def register(cls: type[Perturbation]) -> type[Perturbation]:
    if cls.code in PERTURBATIONS:
        raise ValueError(f"perturbation {cls.code} registered twice")
    PERTURBATIONS[cls.code] = cls
    return cls


def load_perturbations() -> dict[str, type[Perturbation]]:
    """Import the modules that register the built-in perturbations."""
    import medr2.perturb.text
    import medr2.perturb.visual  # noqa: F401

    return PERTURBATIONS


def parse_variants(text: str | Sequence[str] | None) -> tuple[str, ...]:
    """``"all"``, ``"T1,V8"`` (or a list of codes) -> codes in canonical order; ``""``/``None`` -> ()."""
    if text is None:
        return ()
    parts = [p.strip() for p in (text.split(",") if isinstance(text, str) else text) if p and p.strip()]
    if any(p.lower() == "all" for p in parts):
        return ALL_CODES
    if any(p.lower() == "none" for p in parts):
        return ()
    wanted = {p.upper() for p in parts}
    unknown = sorted(wanted - set(ALL_CODES))
    if unknown:
        raise BadInput(f"unknown variant code(s) {unknown}; known: {', '.join(ALL_CODES)} or 'all'",
                       field="--variants")
    return tuple(c for c in ALL_CODES if c in wanted)


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed from a stable hash of ``parts`` (never from iteration order)."""
    return int(stable_hash(jsonable(list(parts)), 16), 16) & ((1 << 63) - 1)


def derive_item(parent: Item, *, variant: str, params: dict[str, Any], seed: int,
                meta: dict[str, Any] | None = None, **updates: Any) -> Item:
    """A new variant Item of ``parent`` with ``updates`` applied and a fresh content id."""
    fields = parent.model_dump()
    fields.update(updates)
    fields["variant"] = variant
    fields["parent_id"] = parent.item_id
    fields["perturbation"] = jsonable({"code": variant.split("-", 1)[0], **params})
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


