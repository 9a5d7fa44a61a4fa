"""The registry of perturbations (docs/variants.md) and the helpers every perturbation shares.

This module imports nothing heavy (the code lists serve ``--help``). A new variant is one registration
(``@register`` / :func:`medr2.registry.register_variant`); the code lists are derived from the registry.
How to write one: ``docs/extending.md``.

A perturbation has a ``code`` (``T1`` … ``V12``), declares its ``roles`` (what its items are to scoring and
training: :data:`medr2.variant_id.ROLES`) and implements ``apply(item, case, ctx) -> list[Item]``; it raises
:class:`Skip` with a short, countable reason where it does not apply. New items are built with
:func:`derive_item`, which sets ``variant``, ``parent_id``, ``perturbation`` (code + parameters),
``seed``, ``roles`` and recomputes the content id. Scoring, training and the report read an item's roles only
through :func:`item_roles`; no other list of variant codes decides what counts where.
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
from medr2.variant_id import CLEAN, ROLES, VariantId, VariantRole, variant_code

__all__ = ["PERTURBATIONS", "ROLES", "Perturbation", "Skip", "VariantRole", "all_codes", "answer_changed_meta",
           "declared_roles", "derive_item", "derive_seed", "item_roles", "parse_variants", "register", "text_codes",
           "visual_codes"]


class Perturbation(ABC):
    """One variant family. Adding a variant: 1 file (docs/extending.md, "A variant"). 1. subclass with ``code``,
    ``title`` and ``defaults`` (its parameters); 2. declare its ``roles`` (what its items count in); 3. implement
    ``apply`` with :func:`derive_item` and register the class (``@register_variant``) in the same module, named in
    the ``medr2.plugins`` entry point. Nothing else lists variant codes."""

    code: ClassVar[str]
    title: ClassVar[str]
    defaults: ClassVar[dict[str, Any]] = {}
    # what its items are to scoring and training (medr2.variant_id.ROLES): ``derive_item`` writes them into each
    # item, narrowed where an item says otherwise (:func:`narrow_roles`). E.g. ``{"preserves_answer"}``: counted
    # in FlipRate and consistency; ``{"misleads", "augments"}``: in MFR, and a training example of ``augmented``.
    roles: ClassVar[frozenset[VariantRole]] = frozenset()

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
    roles: Any = getattr(cls, "roles", frozenset())
    if not isinstance(roles, frozenset) or not roles <= set(ROLES):
        raise ValueError(f"variant {code!r}: roles must be a frozenset of {', '.join(ROLES)}; got {roles!r}")


# code -> Perturbation class; the built-ins are lazy (codes known without importing numpy). The canonical
# order of the codes (``all_codes()``) is registration order: these, then plugins. See docs/extending.md.
PERTURBATIONS: Registry[type[Perturbation]] = Registry("variant code", field="--variants", check=_check)
for _code, _target in (
        ("T1", "text:AbsentTwin"), ("T2", "text:CorrectHint"), ("T3", "text:MisleadingPremise"),
        ("T4", "text:SuggestedAnswer"), ("T5", "text:Paraphrase"), ("T6", "text:OptionPermutation"),
        ("T7", "text:NoneOfTheAbove"), ("T8", "text:InjectedWrongStep"),
        ("T9", "premises:FramedPremise"), ("T10", "premises:IndirectPremise"),
        ("T12", "several:ContradictingPriorReport"),
        ("V1", "visual:BlankImage"), ("V2", "visual:OtherCaseSameModality"), ("V3", "visual:OtherModality"),
        ("V4", "visual:EvidenceRemoval"), ("V5", "visual:CorrectCue"), ("V6", "visual:DecoyCue"),
        ("V7", "visual:CoordinatesOnly"), ("V8", "degraded:Degradation"), ("V9", "visual:HorizontalFlip"),
        ("V10", "typographic:TypographicInjection"), ("V11", "physics:PhysicsDegradation"),
        ("V12", "lookalike:LookAlikePair"), ("V13", "several:PriorSwap"), ("V14", "several:OrderReversed"),
        ("V15", "several:CompanionBlanked")):
    PERTURBATIONS.lazy(_code, f"medr2.perturb.{_target}")


def register(cls: type[Perturbation]) -> type[Perturbation]:
    """Class decorator: register a perturbation under its ``code`` (a taken code is refused)."""
    return PERTURBATIONS.register(cls.code, cls)


def all_codes() -> tuple[str, ...]:
    """Every variant code, in canonical order (built-ins T1..T10, T12, V1..V15, then plugins)."""
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


def declared_roles(variant: str) -> frozenset[VariantRole]:
    """The roles declared by the perturbation registered under ``variant``'s code; none for ``clean`` or for a code
    no perturbation is registered under (a bench imported or built with a plugin that is not installed)."""
    code = variant_code(variant)
    cls = None if code == CLEAN or code not in PERTURBATIONS else PERTURBATIONS[code]
    return cls.roles if cls is not None else frozenset()


def narrow_roles(declared: frozenset[VariantRole] | set[VariantRole], meta: dict[str, Any]) -> list[VariantRole]:
    """An item's roles, in canonical order: its perturbation's ``declared`` roles, narrowed by what the item's
    ``meta`` says of it. An item scored as a probe (``meta["scoring"] == "probe"``: no exact answer for what is
    shown) is a ``probe`` and neither ``preserves_answer`` nor ``augments``; an item with
    ``meta["answer_preserving"]`` false does not preserve the answer (V8/V9 of benches built before roles); an item
    with a ``meta["lure_reason"]`` (:data:`NO_LURE`: no option its misleading statement points to) misleads no one."""
    roles: set[VariantRole] = set(declared)
    if meta.get("lure_reason"):  # nothing to mislead towards (NO_LURE): no attack
        roles.discard("misleads")
    if meta.get("scoring") == "probe":
        roles.add("probe")
        roles -= {"preserves_answer", "augments"}
    if meta.get("answer_preserving", True) is False:
        roles.discard("preserves_answer")
    return [r for r in ROLES if r in roles]


def item_roles(variant: str, roles: Sequence[str] | None, meta: dict[str, Any]) -> tuple[VariantRole, ...]:
    """The roles of an item (``Item``, or its ``variant``/``roles``/``meta`` columns): the recorded ``roles``; for an
    item that has none recorded (``None``: a clean item, or a bench built before roles were written) the roles its
    perturbation declares, narrowed by its meta (:func:`narrow_roles`). The one rule every reader goes through."""
    if roles is not None:
        return tuple(r for r in ROLES if r in roles)
    if variant == CLEAN:
        return ()
    return tuple(narrow_roles(declared_roles(variant), meta))


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed from a stable hash of ``parts`` (never from iteration order)."""
    from medr2.records import jsonable, stable_hash

    return int(stable_hash(jsonable(list(parts)), 16), 16) & ((1 << 63) - 1)


# ``meta["lure_reason"]`` of an item that would mislead (role "misleads": T3, T8, T9, T10, T12) but whose premise,
# wrong earlier answer or report points to no answer option: it has nothing to mislead towards, so it is no attack
# (:func:`narrow_roles` drops "misleads"; its answer stays exact, and it still augments)
NO_LURE = "no answer option follows from the misleading statement"


def derive_item(parent: Item, *, variant: str, params: dict[str, Any], seed: int,
                meta: dict[str, Any] | None = None, roles: frozenset[VariantRole] | set[VariantRole] | None = None,
                **updates: Any) -> Item:
    """A new variant Item of ``parent`` with ``updates`` applied and a fresh content id; new ``options`` of an
    ordinal scale keep its order or its reverse (:func:`medr2.tasks.vocab.scale_order_kept`) and no two of them
    contain each other (:func:`medr2.tasks.vocab.nested_options`); else :class:`Skip`, counted. Its ``roles``: ``roles``
    where given (an item that is less than its perturbation declares), else those its perturbation declares;
    narrowed by its meta either way (:func:`narrow_roles`: an item scored as a probe is a probe). An item that
    would mislead but names no lure (no option its misleading statement points to) records :data:`NO_LURE` and so
    loses the role ``misleads``: it counts as no attack."""
    from medr2.records import Item, item_content_id, jsonable
    from medr2.tasks.vocab import nested_options, scale_order_kept

    if "options" in updates:  # the rules every option set follows (clean: medr2.tasks.assemble), for every variant
        updates = _fixed_options_last(parent, updates)
        if not scale_order_kept(updates["options"]):
            raise Skip("ordinal options out of their scale's order")
        if nested_options(updates["options"]):
            raise Skip("two options contain each other (is-a or part-of)")
    fields = parent.model_dump()
    fields.update(updates)
    if fields.get("images") and "image" in updates and "images" not in updates:
        fields["images"] = _with_current(fields["images"], fields)
    fields["variant"] = variant
    fields["parent_id"] = parent.item_id
    fields["perturbation"] = jsonable({"code": VariantId.parse(variant).code, **params})
    fields["seed"] = seed
    fields["meta"] = {**parent.meta, **(meta or {})}
    declared = declared_roles(variant) if roles is None else roles
    if "misleads" in declared and fields.get("lure") is None:  # the one place a lure-less attack is disarmed
        fields["meta"]["lure_reason"] = NO_LURE
    fields["roles"] = narrow_roles(declared, fields["meta"])
    fields["item_id"] = item_content_id(fields)
    try:
        return Item.model_validate(fields)
    except ValueError as e:  # pydantic ValidationError is a ValueError
        raise BadInput(f"variant {variant} is not a valid item: {e}", record=parent.item_id, field="variant") from e


def _fixed_options_last(parent: Item, updates: dict[str, Any]) -> dict[str, Any]:
    """``updates`` with its new options laid out by :func:`medr2.tasks.vocab.fixed_last` ("none/all of the above"
    last) and the letters that point into them (``answer`` and ``lure`` of a choice item) moved with them: the one
    place every variant's options pass, whatever the variant put where."""
    from medr2.records import letter, letter_index
    from medr2.tasks.vocab import fixed_last

    options = list(updates["options"])
    order = fixed_last(options)
    if order == list(range(len(options))):
        return updates
    new_pos = {old: new for new, old in enumerate(order)}
    out = {**updates, "options": [options[i] for i in order]}
    if updates.get("form", parent.form) in ("mcq", "multi"):
        for key in ("answer", "lure"):
            value = updates.get(key, getattr(parent, key))
            marks = [a for a in str(value or "").split(",") if a]
            if marks and all(len(a) == 1 and a.isupper() and letter_index(a) in new_pos for a in marks):
                out[key] = ",".join(sorted(letter(new_pos[letter_index(a)]) for a in marks))
    return out


def _with_current(images: list[dict[str, Any]], fields: dict[str, Any]) -> list[dict[str, Any]]:
    """An item's image list with its current image replaced by the item's (new) ``image``: a variant that changes
    the image shown (V1 blank, V2 another case, V8 degraded, ...) changes the current image of a several-image item
    (issue 49), its other images kept. The one place every variant's image change reaches ``Item.images``."""
    new = {"path": fields["image"], "sha256": fields["image_sha256"], "width": fields["image_width"],
           "height": fields["image_height"]}
    return [{**r, **new} if r.get("role") == "current" else r for r in images]


def answer_changed_meta(parent: Item, answer: str, *, scoring: str = "exact") -> dict[str, Any]:
    """``meta`` for a variant: how it is scored, and the parent's answer where it differs or is probed."""
    meta: dict[str, Any] = {"scoring": scoring}
    if scoring == "probe" or answer != parent.answer:
        meta["parent_answer"] = parent.answer
    return meta


