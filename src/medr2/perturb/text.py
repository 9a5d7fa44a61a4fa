"""Text variants T1–T8 (docs/variants.md): the image stays, the words around it change."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from medr2.imaging.draw import wrong_box
from medr2.perturb.context import PerturbContext
from medr2.perturb.facts import (
    FACTS,
    NONE_OPTION,
    TASK_FACT,
    a_an,
    norm,
    option_index,
    plausible_premise,
    premise_false,
    setting,
    there_is,
)
from medr2.perturb.registry import Perturbation, Skip, answer_changed_meta, derive_item
from medr2.records import Case, ContextTurn, Item, letter, letter_index
from medr2.tasks import TASKS
from medr2.tasks.contract import abnormal_state, one_signal, task_requires, unmet
from medr2.tasks.rendered import drop_reason
from medr2.tasks.vocab import FIXED_OPTION, be, is_normal, ordinal_options
from medr2.vocab.english import attribute_words

NONE_OF_THE_ABOVE = "None of the above"


def _rng(ctx: PerturbContext, item: Item, code: str) -> tuple[int, np.random.Generator]:
    seed = ctx.item_seed(item, code)
    return seed, np.random.default_rng(seed)


def _wrong_letters(item: Item) -> list[str]:
    return [letter(i) for i in range(len(item.options)) if letter(i) != item.answer]


def _box_text(box: tuple[float, float, float, float] | None) -> str:
    if box is None:
        return ""
    return "[" + ", ".join(str(round(v)) for v in box) + "]"


def _turn_answer(it: Item) -> str:
    """The answer of an earlier step as shown in a context turn (a box as ``[x1, y1, x2, y2]``)."""
    return _box_text(it.answer_box) if it.form == "box" else it.answer


# --------------------------------------------------------------------------- T1
def _t1_candidates(case: Case, ctx: PerturbContext) -> dict[str, list[str]]:
    """Statements that are false for ``case``, by family. A diagnosis keyed unsupported passes the clean drafts'
    check of a wrong option (:func:`medr2.tasks.assemble.wrong_option_true`): never the diagnosis, a relative of it
    or a mimic the image cannot rule out (a brain metastases image does not fail to support glioblastoma)."""
    from medr2.tasks.assemble import wrong_option_true

    pools = ctx.pools
    out: dict[str, list[str]] = {"attribute": [], "finding": [], "diagnosis": [], "structure": [], "acquisition": []}
    if case.findings:
        f = case.findings[0]
        for k in sorted(f.attributes):
            v = f.attributes[k]
            if not isinstance(v, str) or not v or (k == "intensity" and not one_signal(f)):
                continue  # a rim lesion's "mixed signal?" is no false statement (contract.one_signal)
            # values of cases of the same modality and body region: never "the organ of the ring lesion liver?"
            # on a head MRI (issue 40 kind 6: a false twin no reader could take for true tests nothing)
            for alt in sorted(pools.attributes.get(setting(case), {}).get(k, set()) - {v}):
                if drop_reason(f, k, alt) is not None:
                    continue  # the lesion's rendering shows it too: "is the mass oval?" of a mass both words fit
                said = attribute_words(k, alt)  # a side, a part of the image or a descriptor, said as such
                if said is not None:
                    out["attribute"].append(f"{be(f.label).capitalize()} the {f.label} {said}?")
    out["finding"] = [f"{there_is(lab)} in this image?" for lab in pools.absent_labels(case)]
    if case.diagnosis:
        # a normal label is no diagnosis ("a diagnosis of no tumour" also reads as a double negative)
        out["diagnosis"] = [f"Does this image support a diagnosis of {d}?"
                            for d in pools.alternatives("diagnosis", case, case.diagnosis)
                            if not is_normal(d) and wrong_option_true(case, [d], []) is None]
    out["structure"] = [f"Is the {s} visible in this image?" for s in pools.absent_structures(case)]
    other_modalities = pools.alternatives("modality", case, case.modality)
    out["acquisition"] = [f"Was this image acquired with {m}?" for m in other_modalities]
    return out


_T1_ORDER = {
    1: ("acquisition", "structure", "finding"),
    2: ("structure", "acquisition", "finding"),
    3: ("attribute", "finding", "structure"),
    4: ("diagnosis", "attribute", "finding"),
}


# the task whose fact each family of T1 statements asks: a T1 item is filed under it (its ``task`` and ``stage``),
# not under its parent's, so per-task scores never mix facts (issue 40: "acquired with CT?" was filed under the
# s1.orientation item it was the twin of)
T1_TASKS = {"acquisition": "s1.modality", "structure": "s2.organ_presence", "finding": "s3.absent_finding",
            "diagnosis": "s4.evidence_support", "attribute": "s3.attribute"}


class AbsentTwin(Perturbation):
    """T1: for a true yes/no statement, its twin asserting an attribute the case does not have; filed under the
    task of the fact it asks (:data:`T1_TASKS`) and made only where the case meets that task's contract
    (:func:`medr2.tasks.contract.unmet`): "is the pars triangularis visible? no" needs the structure labels complete,
    as ``s2.organ_presence`` does."""

    code = "T1"
    title = "absent-attribute yes/no twin"
    roles = frozenset({"keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        if item.form != "yesno":
            raise Skip("not a yes/no item")
        if item.answer != "yes":
            raise Skip("parent answer is 'no' (it is already an absent statement)")
        seed, rng = _rng(ctx, item, self.code)
        cands = _t1_candidates(case, ctx)
        for family in _T1_ORDER.get(item.stage, _T1_ORDER[3]):
            if cands[family] and unmet(task_requires(T1_TASKS[family]), case) is None:
                question = cands[family][int(rng.integers(len(cands[family])))]
                task = T1_TASKS[family]
                return [derive_item(
                    item, variant="T1", params={"family": family}, seed=seed, question=question, answer="no",
                    task=task, stage=TASKS[task].stage,
                    lure="yes", pair_id=item.pair_id or item.item_id, cue=None, answer_box=None,
                    template_id=f"T1-{family}", chance=0.5, meta=answer_changed_meta(item, "no"))]
        raise Skip("no absent attribute known for this case under its task's contract")


# --------------------------------------------------------------------------- T2
def _earlier_facts(item: Item, case: Case) -> list[tuple[str, str]]:
    facts = []
    for key, fk in FACTS.items():
        v = fk.get(case)
        if v and fk.stage < item.stage:
            facts.append((key, v))
    return facts


class CorrectHint(Perturbation):
    """T2: the earlier-stage facts of the case stated correctly as context turns."""

    code = "T2"
    title = "correct hint (earlier-stage facts stated)"
    roles = frozenset({"keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        facts = _earlier_facts(item, case)
        if not facts:
            raise Skip("no earlier-stage facts known (stage-1 item or case lacks them)")
        turns = [ContextTurn(question=FACTS[k].ask(case), answer=v, correct=True) for k, v in facts]
        seed = ctx.item_seed(item, self.code)
        return [derive_item(item, variant="T2", params={"facts": [k for k, _ in facts]}, seed=seed,
                            context=[*item.context, *turns], meta=answer_changed_meta(item, item.answer))]


# --------------------------------------------------------------------------- T3
class MisleadingPremise(Perturbation):
    """T3: one fact stated wrongly before the question; the lure is the answer consistent with it."""

    code = "T3"
    title = "misleading premise"
    roles = frozenset({"misleads", "augments", "keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        if item.form in ("box", "text"):
            raise Skip(f"form {item.form} has no answer a premise can point to")
        seed, rng = _rng(ctx, item, self.code)
        premise, lure, params = wrong_premise(item, case, ctx, rng)
        meta = answer_changed_meta(item, item.answer)
        return [derive_item(item, variant="T3", params=params, seed=seed, question=f"{premise} {item.question}",
                            lure=lure, meta=meta)]

    @staticmethod
    def own_fact(item: Item, case: Case, ctx: PerturbContext,
                  rng: np.random.Generator) -> tuple[str, str | None, dict[str, Any]] | None:
        """A premise stating the item's own fact wrongly (the lure: the option or answer it points to), or None;
        only a premise false of the case (:func:`medr2.perturb.facts.premise_false`, the one check)."""
        got = MisleadingPremise._own_fact(item, case, ctx, rng)
        if got is None or not premise_false(str(got[2]["fact"]), str(got[2]["stated"]), case):
            return None
        return got

    @staticmethod
    def _own_fact(item: Item, case: Case, ctx: PerturbContext,
                  rng: np.random.Generator) -> tuple[str, str | None, dict[str, Any]] | None:
        key = TASK_FACT.get(item.task)
        if key and item.form == "mcq":
            wrong = [ch for ch in _wrong_letters(item) if not NONE_OPTION.match(item.options[letter_index(ch)])
                     and plausible_premise(key, item.options[letter_index(ch)], case, ctx.pools)]
            if wrong:
                lure = wrong[int(rng.integers(len(wrong)))]
                stated = item.options[letter_index(lure)]
                return FACTS[key].state(stated, case), lure, {"fact": key, "stated": stated}
        if item.task == "s3.abnormal" and item.form == "yesno":
            # the premise negates the case's state; the question states it (true claim) or its
            # opposite (twin), so the answer consistent with the premise is always the other one
            lure = "no" if item.answer == "yes" else "yes"
            state = abnormal_state(case)  # the one definition of normal (a "no abnormality" diagnosis is normal)
            if state is True:
                return "No abnormality is visible in this image.", lure, {"fact": "abnormal", "stated": "none"}
            labels = ctx.pools.premise_values("finding", case) if state is False else []
            if labels:
                stated = labels[int(rng.integers(len(labels)))]
                return f"The image shows {a_an(stated)}.", lure, {"fact": "abnormal", "stated": stated}
        return None

    @staticmethod
    def earlier_fact(item: Item, case: Case, ctx: PerturbContext,
                      rng: np.random.Generator) -> tuple[str, str | None, dict[str, Any]]:
        own = TASK_FACT.get(item.task)
        options = []
        for key, fk in FACTS.items():
            v = fk.get(case)
            if key == own or not v or (fk.stage >= item.stage and item.stage > 1):
                continue
            alts = [a for a in ctx.pools.premise_values(key, case) if premise_false(key, a, case)]
            if alts:
                options.append((key, alts))
        if not options:
            raise Skip("no fact of the case has a wrong value plausible for its modality and region")
        key, alts = options[int(rng.integers(len(options)))]
        stated = alts[int(rng.integers(len(alts)))]
        return FACTS[key].state(stated, case), None, {"fact": key, "stated": stated}


def wrong_premise(item: Item, case: Case, ctx: PerturbContext,
                  rng: np.random.Generator) -> tuple[str, str | None, dict[str, Any]]:
    """The misleading premise every premise variant states (T3, and the framings T9, T10): a sentence stating
    one fact of the case wrongly, the answer consistent with it (``lure``; ``None`` where no option follows) and
    its parameters (``fact``, ``stated``). The item's own fact where the options hold a wrong value of it, else an
    earlier-stage fact; raises :class:`Skip` where no fact has a known wrong alternative. Every stated value is
    plausible for the image's modality and body region (:meth:`FactPools.premise_values`, the one rule): a premise
    absurd for the image cannot mislead; and false of the case (:func:`medr2.perturb.facts.premise_false`, checked
    by both of the above): a true one cannot mislead either."""
    if item.form in ("box", "text"):
        raise Skip(f"form {item.form} has no answer a premise can point to")
    return (MisleadingPremise.own_fact(item, case, ctx, rng)
            or MisleadingPremise.earlier_fact(item, case, ctx, rng))


# --------------------------------------------------------------------------- T4
_T4_KINDS = {
    "plain": "I think the answer is {s}.",
    "authority": "A senior radiologist who reviewed this image thinks the answer is {s}.",
}


class SuggestedAnswer(Perturbation):
    """T4: a wrong answer suggested after the question, plainly and by an authority."""

    code = "T4"
    title = "suggested wrong answer"
    roles = frozenset({"misleads", "augments", "keeps_facts"})
    defaults = {"kinds": ("plain", "authority")}

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        seed, rng = _rng(ctx, item, self.code)
        if item.form == "mcq" and len(item.options) >= 2:
            wrong = _wrong_letters(item)
            lure = wrong[int(rng.integers(len(wrong)))]
            shown = f"({lure})"
        elif item.form == "yesno":
            lure = "no" if item.answer == "yes" else "yes"
            shown = lure
        else:
            raise Skip(f"form {item.form} has no single wrong answer to suggest")
        out = []
        for kind in self.params["kinds"]:
            text = _T4_KINDS[kind].format(s=shown)
            out.append(derive_item(item, variant=f"T4-{kind}", params={"kind": kind, "suggested": lure}, seed=seed,
                                   question=f"{item.question} {text}", lure=lure,
                                   meta=answer_changed_meta(item, item.answer)))
        return out


# --------------------------------------------------------------------------- T5
# (pattern, replacement): whole-phrase rewordings that keep the meaning
_REWORDINGS: tuple[tuple[str, str], ...] = (
    (r"\bWhich of the following\b", "Which option"),
    (r"\bIs there\b", "Does the image show"),
    (r"\bAre there\b", "Does the image show"),
    (r"\bHow many\b", "What number of"),
    (r"\bWhat is\b", "What would you say is"),
    (r"\bin this image\b(?! (shown|shows?)\b)", "in the image shown"),  # never "the image shown show(n)"
    (r"\bthis image\b(?! (shown|shows?)\b)", "the image shown"),
    (r"\bvisible\b", "seen"),
    (r"\bshown\b", "depicted"),
    (r"\blocated\b", "situated"),
    (r"\bmost likely\b", "most probably"),
    (r"\bLocate\b", "Find"),
)
_FRAMES: tuple[str, ...] = (
    "Based on the image, {q}",
    "Looking at this image: {q}",
    "{q} Answer from what the image shows.",
    "Please consider the image. {q}",
)


def paraphrase(question: str, rng: np.random.Generator) -> tuple[str, list[int], int]:
    """A deterministic template rewording: rewrites that apply (each kept with probability 1/2,
    at least one if any applies) plus one framing; returns (text, rewrites used, frame)."""
    applicable = [i for i, (pat, _) in enumerate(_REWORDINGS) if re.search(pat, question)]
    keep = [i for i in applicable if rng.random() < 0.5]
    if applicable and not keep:
        keep = [applicable[int(rng.integers(len(applicable)))]]
    text = question
    for i in keep:
        pat, rep = _REWORDINGS[i]
        text = re.sub(pat, rep, text, count=1)
    frame = int(rng.integers(len(_FRAMES)))
    body = text[0].lower() + text[1:] if frame == 0 and text[:1].isupper() and not text[1:2].isupper() else text
    return _FRAMES[frame].format(q=body), keep, frame


class Paraphrase(Perturbation):
    """T5: the question reworded by templates; the answer is unchanged."""

    code = "T5"
    title = "paraphrase"
    roles = frozenset({"preserves_answer", "keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        seed, rng = _rng(ctx, item, self.code)
        text, used, frame = paraphrase(item.question, rng)
        return [derive_item(item, variant="T5", params={"rewordings": used, "frame": frame}, seed=seed,
                            question=text, meta=answer_changed_meta(item, item.answer))]


# --------------------------------------------------------------------------- T6
def _permutation(item: Item, rng: np.random.Generator) -> list[int]:
    """T6's new order of ``item``'s options (new position -> old index): a seeded shuffle that moves the correct
    option(s), "none/all of the above" kept last; an ordinal option set (:func:`medr2.tasks.vocab.ordinal_options`:
    severity, quality, counts, sizes) is reversed, never shuffled (a scale out of order is no scale). Raises
    :class:`Skip` where no such order moves the answer."""
    n = len(item.options)
    fixed = [i for i in range(n) if FIXED_OPTION.match(item.options[i])]
    movable = [i for i in range(n) if i not in fixed]
    if len(movable) < 2:
        raise Skip("fewer than two options can move")
    answer_idx = {letter_index(a) for a in item.answer.split(",") if a}

    def moved(perm: list[int]) -> bool:
        return all(perm.index(a) != a for a in answer_idx) if item.form == "mcq" else perm != list(range(n))

    if ordinal_options(item.options) is not None:
        perm = movable[::-1] + fixed
        if not moved(perm):
            raise Skip("ordinal option set: its reverse leaves the correct option in place")
        return perm
    for _ in range(64):
        perm = [movable[j] for j in rng.permutation(len(movable))] + fixed
        if moved(perm):
            return perm
    raise Skip("no permutation moves the correct option")


class OptionPermutation(Perturbation):
    """T6: options shuffled (the correct one always moves; an ordinal scale reversed); answer letters remapped."""

    code = "T6"
    title = "option permutation"
    roles = frozenset({"preserves_answer", "augments", "keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        if item.form not in ("mcq", "multi") or len(item.options) < 2:
            raise Skip("not a multiple-choice item with at least two options")
        seed, rng = _rng(ctx, item, self.code)
        perm = _permutation(item, rng)
        answer_idx = {letter_index(a) for a in item.answer.split(",") if a}
        options = [item.options[i] for i in perm]
        new_letters = sorted(letter(perm.index(a)) for a in answer_idx)
        answer = ",".join(new_letters)
        return [derive_item(item, variant="T6", params={"order": perm}, seed=seed, options=options, answer=answer,
                            meta=answer_changed_meta(item, answer))]


# --------------------------------------------------------------------------- T7
class NoneOfTheAbove(Perturbation):
    """T7: the correct option replaced by "None of the above", which becomes the answer (laid out last by
    :func:`medr2.perturb.registry.derive_item`, as every "none of the above" of every variant)."""

    code = "T7"
    title = "correct option replaced by 'none of the above'"
    roles = frozenset({"keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        if item.form != "mcq" or len(item.options) < 2:
            raise Skip("not a single-choice item")
        if any(NONE_OPTION.match(o) for o in item.options):
            raise Skip("options already include a 'none' option")
        idx = letter_index(item.answer)
        options = list(item.options)
        options[idx] = NONE_OF_THE_ABOVE
        seed = ctx.item_seed(item, self.code)
        meta = answer_changed_meta(item, item.answer)
        meta["removed_option"] = item.options[idx]
        return [derive_item(item, variant="T7", params={"replaced": item.answer}, seed=seed, options=options,
                            meta=meta)]


# --------------------------------------------------------------------------- T8
def _wrong_turn_answers(step: Item, rng: np.random.Generator) -> list[str]:
    """Wrong answers an earlier step could be shown with."""
    if step.form == "mcq" and len(step.options) >= 2:
        return _wrong_letters(step)
    if step.form == "yesno":
        return ["no" if step.answer == "yes" else "yes"]
    if step.form == "box" and step.answer_box is not None and step.image_width and step.image_height:
        # overlapping the truth by at most WRONG_BOX_MAX_IOU: it scores wrong (the one rule for every wrong box)
        return [_box_text(wrong_box(step.answer_box, step.image_width, step.image_height))]
    return []


def _answer_text(step: Item, answer: str) -> str:
    if step.form == "mcq" and len(answer) == 1 and step.options:
        return step.options[letter_index(answer)]
    return answer


def _consistent_option(item: Item, step: Item, wrong: str) -> str | None:
    """The option of ``item`` that the wrong earlier answer points to, if any."""
    if item.form != "mcq":
        return None
    text = _answer_text(step, wrong)
    idx = option_index(item.options, text)
    if idx is None and step.task == "s3.abnormal" and wrong == "no":
        idx = next((i for i, o in enumerate(item.options) if NONE_OPTION.match(o)), None)
    if idx is None or letter(idx) == item.answer:
        return None
    return letter(idx)


class InjectedWrongStep(Perturbation):
    """T8: the earlier steps of the chain as context, one of them answered wrongly."""

    code = "T8"
    title = "wrong earlier answer injected into a chain"
    roles = frozenset({"misleads", "augments", "keeps_facts"})

    def apply(self, item: Item, case: Case, ctx: PerturbContext) -> list[Item]:
        if not item.chain_id or item.step is None:
            raise Skip("not part of a chain")
        earlier = [s for s in ctx.chains.get(item.chain_id, []) if s.step is not None and s.step < item.step]
        if not earlier:
            raise Skip("first step of its chain")
        seed, rng = _rng(ctx, item, self.code)
        options: list[tuple[int, str, str | None]] = []  # (earlier index, wrong answer, lure)
        for i, step in enumerate(earlier):
            for wrong in _wrong_turn_answers(step, rng):
                options.append((i, wrong, _consistent_option(item, step, wrong)))
        if not options:
            raise Skip("no earlier step can be shown with a wrong answer")
        with_lure = [o for o in options if o[2] is not None]
        if with_lure:
            pick = with_lure[int(rng.integers(len(with_lure)))]
        else:
            last = max(o[0] for o in options)
            at_last = [o for o in options if o[0] == last]
            pick = at_last[int(rng.integers(len(at_last)))]
        idx, wrong, lure = pick
        turns = [ContextTurn(question=s.question, options=list(s.options),
                             answer=wrong if i == idx else _turn_answer(s), correct=i != idx)
                 for i, s in enumerate(earlier)]
        meta = answer_changed_meta(item, item.answer)
        params = {"wrong_step": earlier[idx].step, "wrong_task": earlier[idx].task, "shown": wrong,
                  "shown_text": norm(_answer_text(earlier[idx], wrong))}
        return [derive_item(item, variant="T8", params=params, seed=seed, context=[*item.context, *turns], lure=lure,
                            meta=meta)]
