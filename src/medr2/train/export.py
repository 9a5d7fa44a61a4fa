"""What a training example is, and how one is made from items (docs/finetuning.md); the plans that order a bench's
train split into examples are :mod:`medr2.train.stream` (``medr2 export``, ``finetune``).

Strategies (:data:`STRATEGIES`):
- ``flat``: every train item one single-turn example, in a seeded shuffle;
- ``curriculum``: stage 1 -> 4 blocks, each block mixed with a replay share of the earlier stages;
- ``chain``: each chain as one multi-turn conversation (loss on every assistant turn);
- ``augmented``: ``flat`` plus the perturbed copies whose role is ``augments`` (:func:`augments`).

Only ``split == "train"`` items are used, and a train item whose image (or cue image) is also used by
any item or case outside the train split is dropped and counted (:class:`medr2.train.source.TrainSource`): no
test item or test image leaks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from medr2.models.base import BoxConvention, Message
from medr2.perturb.registry import item_roles
from medr2.records import Item, stable_hash
from medr2.train.render import PIXELS, answer_turn, chain_turns, item_turns

STRATEGIES = ("flat", "curriculum", "chain", "augmented")  # the plans of medr2.train.stream.stream_examples
NEEDS_VARIANTS = frozenset({"augmented"})  # strategies that read the train split's variants


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


def _order_key(seed: int, key: str) -> str:
    """The hash a plan orders by (an item id, a chain's item ids, an image: with the plan's seed)."""
    return stable_hash({"seed": seed, "key": key})


def single_example(item: Item, conv: BoxConvention = PIXELS, style: str = "letter") -> Example:
    return Example(tuple([*item_turns(item, conv), answer_turn(item, conv, style)]), (item.item_id,), item.stage)


def chain_example(chain: Sequence[Item], conv: BoxConvention = PIXELS, style: str = "letter") -> Example:
    """A chain (its items in step order) as one multi-turn conversation, rendered as ``chain-gold``."""
    return Example(tuple(chain_turns(chain, conv, style)), tuple(it.item_id for it in chain),
                   max(it.stage for it in chain))


def augments(variant: str, roles: Sequence[str] | None, meta: dict[str, Any] | None) -> bool:
    """Whether a train item (its ``variant``, ``roles`` and ``meta``) is an ``augmented`` example: its role is
    ``augments`` (:func:`medr2.perturb.registry.item_roles`). Built in: misleading text (T3, T4, T8) with the
    correct answer as target, option permutations (T6), visual variants with an exact answer for what is shown
    (V2/V3: the other case's fact, V4: the counterfactual). A probe never is (V1, V2/V3 where no exact answer
    exists): its stored answer is the parent's, and training on it would teach the model to ignore the image."""
    return "augments" in item_roles(variant, roles, meta or {})


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
