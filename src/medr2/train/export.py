"""Training examples from a bench's train split (docs/finetuning.md), independent of the file format.

Strategies (registry ``STRATEGIES``):
- ``flat``: every train item one single-turn example, in a seeded shuffle;
- ``curriculum``: stage 1 -> 4 blocks, each block mixed with a replay share of the earlier stages;
- ``chain``: each chain as one multi-turn conversation (loss on every assistant turn);
- ``augmented``: ``flat`` plus the perturbed copies whose role is ``augments`` (:func:`augments`).

Only ``split == "train"`` items are used, and a train item whose image (or cue image) is also used by
any item or case outside the train split is dropped and counted: no test item or test image leaks.

The plans here take lists of records (every train item held): they are the specification. ``medr2 export``
and ``finetune`` stream the same examples in the same order (:mod:`medr2.train.stream`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from medr2.models.base import BoxConvention, Message, Part
from medr2.perturb.registry import item_roles
from medr2.records import Item, stable_hash
from medr2.train.render import PIXELS, answer_turn, chain_turns, check_style, item_turns, rejected
from medr2.train.source import TrainSplit


@dataclass(frozen=True)
class Example:
    """One training conversation. ``messages`` alternate user/assistant and end with the assistant's
    answer; for DPO, ``rejected`` is the wrong final answer."""

    messages: tuple[Message, ...]
    item_ids: tuple[str, ...]
    stage: int
    rejected: str | None = None

    @property
    def images(self) -> list[str]:
        return [p.image for m in self.messages for p in m.parts if p.type == "image" and p.image]


@dataclass
class ExportPlan:
    examples: list[Example]
    counts: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)

    def summary(self) -> dict[str, Any]:
        by_stage = Counter(str(e.stage) for e in self.examples)
        return {"n_examples": len(self.examples), "n_items": sum(len(e.item_ids) for e in self.examples),
                "examples_by_stage": dict(sorted(by_stage.items())), "counts": dict(sorted(self.counts.items())),
                "skipped": dict(sorted(self.skipped.items()))}


def _order_key(seed: int, key: str) -> str:
    return stable_hash({"seed": seed, "key": key})


def train_items(items: Sequence[Item], cases: Sequence[Any], *, with_variants: bool,
                skipped: Counter[str]) -> list[Item]:
    """Train-split items whose images are not shared with any other split."""
    held_images: set[str] = set()
    for c in cases:
        if c.split != "train":
            held_images.add(c.image_sha256)
    for it in items:
        if it.split != "train":
            held_images.update(_shas(it))
    out = []
    for it in items:
        if it.split != "train":
            skipped[f"split {it.split}"] += 1
        elif it.variant != "clean" and not with_variants:
            skipped["variant (without --with-variants)"] += 1
        elif any(sha in held_images for sha in _shas(it)):
            skipped["image shared with a non-train split"] += 1
        else:
            out.append(it)
    return out


def _shas(item: Item) -> list[str]:
    """Every image ``item`` shows (several, issue 49: each of them)."""
    return [r.sha256 for r in item.image_list()] or ([item.image_sha256] if item.image_sha256 else [])


def single_example(item: Item, conv: BoxConvention = PIXELS, style: str = "letter") -> Example:
    return Example(tuple([*item_turns(item, conv), answer_turn(item, conv, style)]), (item.item_id,), item.stage)


def chain_example(chain: Sequence[Item], conv: BoxConvention = PIXELS, style: str = "letter") -> Example:
    """A chain (its items in step order) as one multi-turn conversation, rendered as ``chain-gold``."""
    return Example(tuple(chain_turns(chain, conv, style)), tuple(it.item_id for it in chain),
                   max(it.stage for it in chain))


def _style(opts: dict[str, Any]) -> str:
    return str(opts.get("answer_style", "letter"))


def _flat(items: list[Item], seed: int, conv: BoxConvention, opts: dict[str, Any]) -> list[Example]:
    return [single_example(it, conv, _style(opts)) for it in sorted(items, key=lambda it: _order_key(seed, it.item_id))]


def _curriculum(items: list[Item], seed: int, conv: BoxConvention, opts: dict[str, Any]) -> list[Example]:
    replay = float(opts.get("replay", 0.25))
    if not 0.0 <= replay <= 1.0:
        raise ValueError("replay must be between 0 and 1")
    out: list[Example] = []
    earlier: list[Item] = []
    for stage in sorted({it.stage for it in items}):
        block = [it for it in items if it.stage == stage]
        n_replay = min(len(earlier), round(replay * len(block)))
        replayed = sorted(earlier, key=lambda it: _order_key(seed, f"replay{stage}:{it.item_id}"))[:n_replay]
        mixed = sorted(block + replayed, key=lambda it: _order_key(seed, f"{stage}:{it.item_id}"))
        out += [single_example(it, conv, _style(opts)) for it in mixed]
        earlier += block
    return out


def _chain(items: list[Item], seed: int, conv: BoxConvention, opts: dict[str, Any]) -> list[Example]:
    chains: dict[str, list[Item]] = {}
    singles: list[Item] = []
    for it in items:
        if it.chain_id and it.variant == "clean" and it.step is not None:
            chains.setdefault(it.chain_id, []).append(it)
        else:
            singles.append(it)
    examples = [chain_example(sorted(c, key=lambda it: (it.step or 0, it.item_id)), conv, _style(opts))
                for c in chains.values()]
    examples += [single_example(it, conv, _style(opts)) for it in singles]
    return sorted(examples, key=lambda e: _order_key(seed, "|".join(e.item_ids)))


def augments(variant: str, roles: Sequence[str] | None, meta: dict[str, Any] | None) -> bool:
    """Whether a train item (its ``variant``, ``roles`` and ``meta``) is an ``augmented`` example: its role is
    ``augments`` (:func:`medr2.perturb.registry.item_roles`). Built in: misleading text (T3, T4, T8) with the
    correct answer as target, option permutations (T6), visual variants with an exact answer for what is shown
    (V2/V3: the other case's fact, V4: the counterfactual). A probe never is (V1, V2/V3 where no exact answer
    exists): its stored answer is the parent's, and training on it would teach the model to ignore the image."""
    return "augments" in item_roles(variant, roles, meta or {})


def is_augmentation(item: Item) -> bool:
    return augments(item.variant, item.roles, item.meta)


def _augmented(items: list[Item], seed: int, conv: BoxConvention, opts: dict[str, Any]) -> list[Example]:
    keep = [it for it in items if it.variant == "clean" or is_augmentation(it)]
    return _flat(keep, seed, conv, opts)


Strategy = Callable[[list[Item], int, BoxConvention, dict[str, Any]], list[Example]]
STRATEGIES: dict[str, Strategy] = {"flat": _flat, "curriculum": _curriculum, "chain": _chain,
                                   "augmented": _augmented}
NEEDS_VARIANTS = frozenset({"augmented"})  # strategies that read the train split's variants


def plan_examples(items: Sequence[Item], cases: Sequence[Any], *, strategy: str = "flat", with_variants: bool = False,
                  seed: int = 0, conv: BoxConvention = PIXELS, split: TrainSplit | None = None,
                  **opts: Any) -> ExportPlan:
    """SFT examples for a strategy (see module doc); boxes are written in ``conv``. ``split``
    (:func:`medr2.train.source.read_train_split`) stands for ``items`` and ``cases``: the train split read
    column-wise, with the same items kept and the same counts of those dropped."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (known: {sorted(STRATEGIES)})")
    check_style(_style(opts))
    skipped: Counter[str] = Counter()
    keep: list[Item] = []
    with_variants = with_variants or strategy in NEEDS_VARIANTS
    if split is not None:
        selected, skipped = split.select(with_variants)
    else:
        selected = train_items(items, cases, with_variants=with_variants, skipped=skipped)
    for it in selected:
        if it.form == "box" and it.answer_box is None:
            skipped["box item without answer_box"] += 1
        else:
            keep.append(it)
    examples = STRATEGIES[strategy](keep, seed, conv, opts)
    return ExportPlan(examples, Counter({"train_items": len(keep)}), skipped)


def plan_dpo(items: Sequence[Item], cases: Sequence[Any], *, strategy: str = "flat", with_variants: bool = False,
             seed: int = 0, conv: BoxConvention = PIXELS, split: TrainSplit | None = None, **opts: Any) -> ExportPlan:
    """DPO pairs: each example's final answer as chosen, the evaluation's wrong answer for that item
    (its lure where it has one, else a fixed wrong option) as rejected."""
    plan = plan_examples(items, cases, strategy=strategy, with_variants=with_variants, seed=seed, conv=conv,
                         split=split, **opts)
    by_id = {it.item_id: it for it in (split.items if split is not None else items)}
    pairs: list[Example] = []
    lure_used = 0
    for ex in plan.examples:
        last = by_id[ex.item_ids[-1]]
        rej = rejected(last, conv, _style(opts))
        if rej is None:
            plan.skipped[f"dpo: no wrong answer for form {last.form}"] += 1
            continue
        lure_used += bool(last.lure and last.lure != last.answer)
        pairs.append(Example(ex.messages, ex.item_ids, ex.stage, rejected=rej))
    plan.counts["rejected_is_lure"] = lure_used
    return ExportPlan(pairs, plan.counts, plan.skipped)


# -- image pre-training: only the image decides the target --------------------------------------------

CAPTION_PROMPT = "Describe this image."
CAPTION_FORMS = ("mcq",)


def caption_text(items: Sequence[Item]) -> str:
    """What the train split says about one image, from its clean multiple-choice items: ``"modality: MRI;
    plane: axial; ..."`` (task name after the stage prefix, the correct option's text), in task order."""
    facts: dict[str, str] = {}
    for it in sorted(items, key=lambda it: (it.task, it.item_id)):
        if it.variant == "clean" and it.form in CAPTION_FORMS and it.task not in facts:
            facts[it.task] = it.options[ord(it.answer[:1]) - ord("A")]
    return "; ".join(f"{task.split('.', 1)[-1]}: {text}" for task, text in facts.items())


def plan_captions(items: Sequence[Item], cases: Sequence[Any], *, seed: int = 0,
                  split: TrainSplit | None = None) -> ExportPlan:
    """One example per train image: the same prompt for every image (:data:`CAPTION_PROMPT`), the target
    :func:`caption_text`. The text alone cannot predict the target, so a model trained on it must read the
    image: a pre-training stage for a model whose image features are still random (the demo's tiny VLM).
    Train split only, with the same leak rules as every export; ``split`` stands for ``items`` and ``cases``
    as in :func:`plan_examples`."""
    skipped: Counter[str] = Counter()
    if split is not None:
        clean, skipped = split.select(False)
    else:
        clean = train_items(items, cases, with_variants=False, skipped=skipped)
    by_image: dict[str, list[Item]] = {}
    for it in clean:
        if it.image:
            by_image.setdefault(it.image, []).append(it)
    examples = []
    for image, group in sorted(by_image.items(), key=lambda kv: _order_key(seed, kv[0])):
        text = caption_text(group)
        if not text:
            skipped["image without a clean multiple-choice item"] += 1
            continue
        first = group[0]
        user = Message("user", (Part("image", image=image, image_sha256=first.image_sha256),
                                Part("text", text=CAPTION_PROMPT)))
        examples.append(Example((user, Message("assistant", (Part("text", text=text),))),
                                tuple(it.item_id for it in group), min(it.stage for it in group)))
    return ExportPlan(examples, Counter({"train_images": len(examples)}), skipped)
