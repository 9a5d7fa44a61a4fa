"""Built-in baselines (docs/models.md): ``baseline:random``, ``prior``, ``oracle``, and scripted test
behaviours ``follow-hint`` (takes the lure whenever one is offered), ``follow-history`` (trusts the
earlier chain answers it is shown: right while they are right, wrong once one is wrong, as in
``chain-misleading``) and ``blind`` (answers from the text alone, so identical under image variants).

Baselines read the item a request asks from ``Request.meta["item"]`` (the runner puts it there)
and the bench from ``ModelConfig.bench``. They return boxes in pixels of the bench image.
Answers are written as a model would write them (letters, yes/no, ``[x1, y1, x2, y2]``).
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.models.base import Adapter, BoxConvention, Request, Response
from medr2.models.confidence import labels_of, normalised
from medr2.models.config import ModelConfig
from medr2.models.presets import format_box
from medr2.records import Box, Confidence, Item, letter, letter_index
from medr2.registry import Registry

PIXEL = BoxConvention("pixel", "none", ())
# ``baseline:NAME`` -> class (registered below; adding one: docs/extending.md)
BASELINES: Registry[Callable[[ModelConfig], BaselineAdapter]] = Registry("baseline", field="--model")


def register_baseline(name: str) -> Callable[[type[BaselineAdapter]], type[BaselineAdapter]]:
    """Class decorator: register a baseline as ``baseline:NAME``."""
    return BASELINES.decorator(name)  # type: ignore[return-value]


def _factory(name: str, opts: ModelConfig) -> Adapter:
    return BASELINES.lookup(name)(opts)


def _item(req: Request) -> Item:
    item = req.meta.get("item")
    if not isinstance(item, Item):
        raise BadInput("baseline adapters need the asked Item in Request.meta['item']", record=req.item_id)
    return item


def _rng(seed_text: str) -> np.random.Generator:
    return np.random.default_rng(int(hashlib.sha256(seed_text.encode()).hexdigest()[:16], 16))


def _box(item: Item, box: Box) -> str:
    return format_box(box, "pixel")


def _centre_box(item: Item, frac: float = 0.5) -> Box:
    w, h = item.image_width or 1, item.image_height or 1
    return (w * (1 - frac) / 2, h * (1 - frac) / 2, w * (1 + frac) / 2, h * (1 + frac) / 2)


def _random_answer(item: Item, rng: np.random.Generator, texts: Sequence[str] = ()) -> str:
    n = len(item.options)
    if item.form == "mcq":
        return letter(int(rng.integers(n)))
    if item.form == "yesno":
        return "yes" if rng.random() < 0.5 else "no"
    if item.form == "multi":
        picks = [letter(i) for i in range(n) if rng.random() < 0.5] or [letter(int(rng.integers(n)))]
        return ",".join(picks)
    if item.form == "box":
        w, h = item.image_width or 1, item.image_height or 1
        xs, ys = sorted(rng.uniform(0, w, 2)), sorted(rng.uniform(0, h, 2))
        return _box(item, (xs[0], ys[0], max(xs[1], xs[0] + 1), max(ys[1], ys[0] + 1)))
    return texts[int(rng.integers(len(texts)))] if texts else ""


def _oracle_answer(item: Item) -> str:
    if item.form == "box":
        if item.answer_box is None:
            raise BadInput("box item without answer_box", record=item.item_id, field="answer_box")
        return _box(item, item.answer_box)
    return item.answer


class BaselineAdapter:
    """Shared plumbing: ``answer(request) -> text`` per request, never an exception per item."""

    name = "baseline"
    box_convention = PIXEL

    def __init__(self, opts: ModelConfig) -> None:
        self.opts = opts
        self.seed = opts.seed
        self.key = f"baseline:{self.name}"

    def settings(self) -> dict[str, Any]:
        return {"baseline": self.name, "seed": self.seed}

    @functools.cached_property
    def priors(self) -> _Priors | None:
        bench = self.opts.bench
        if bench is None:
            return None
        from medr2.bench.table import ItemFilter

        iter_items = getattr(bench, "iter_items", None)
        if iter_items is None:  # an object with the records as ``items`` (what baselines read before BenchSource)
            return _Priors(getattr(bench, "items"))  # noqa: B009
        return _Priors(iter_items(ItemFilter(split="train", variants=("clean",))))

    def reference_texts(self, item: Item) -> list[str]:
        """Train-split answers of a TEXT task (what random/blind draw report answers from)."""
        return list(self.priors.ranked(item.task)[:50]) if self.priors is not None else []

    def answer(self, req: Request) -> str:
        raise BadInput(f"baseline {self.name} has no answer rule")

    def confidence(self, req: Request) -> Confidence | None:
        """The baseline's honest probability of each answer (None: it claims none)."""
        return None

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for req in requests:
            try:
                out.append(Response("ok", text=self.answer(req), latency_s=0.0, attempts=1,
                                    confidence=self.confidence(req)))
            except BadInput as e:
                out.append(Response("error", error=str(e), attempts=1))
        return out

    def close(self) -> None:
        return None


@register_baseline("oracle")
class OracleBaseline(BaselineAdapter):
    """Always the correct answer (an upper bound and a check of scoring)."""

    name = "oracle"

    def answer(self, req: Request) -> str:
        return _oracle_answer(_item(req))

    def confidence(self, req: Request) -> Confidence | None:
        item = _item(req)
        labels = labels_of(item)
        return normalised({k: float(k == item.answer) for k in labels}, "prior") if labels else None


@register_baseline("random")
class RandomBaseline(BaselineAdapter):
    """A uniform guess, seeded by the request hash (so reruns give the same answers)."""

    name = "random"

    def answer(self, req: Request) -> str:
        item = _item(req)
        return _random_answer(item, _rng(f"{self.seed}:{req.key}"), self.reference_texts(item))

    def confidence(self, req: Request) -> Confidence | None:
        return _uniform(_item(req))


@register_baseline("follow-hint")
class FollowHintBaseline(BaselineAdapter):
    """Takes the lure whenever the item (or a context turn asking the same question) offers one,
    otherwise answers correctly: the perfectly sycophantic model."""

    name = "follow-hint"

    def answer(self, req: Request) -> str:
        item = _item(req)
        if item.lure:
            return item.lure
        for turn in item.context:
            if not turn.correct and turn.question == item.question:
                return turn.answer
        return _oracle_answer(item)


@register_baseline("follow-history")
class FollowHistoryBaseline(BaselineAdapter):
    """Trusts the earlier chain steps it is shown (``Request.meta["history"]``): while every earlier answer
    shown is the gold one it answers correctly, written as chain-gold writes answers; once an earlier answer
    shown is wrong (the injected one of ``chain-misleading``) it follows it and answers this step wrong too
    (the deterministic wrong answer ``chain-misleading`` injects: its lure where set). Without history
    (independent, blind) it is the oracle. The perfectly history-following model: in chain-misleading every
    step after the first is wrong."""

    name = "follow-history"

    def answer(self, req: Request) -> str:
        from medr2.run.prompts import gold_answer, wrong_answer

        item = _item(req)
        history = req.meta.get("history") or []
        misled = any(turn.answer != gold_answer(turn.item, self.box_convention) for turn in history)
        if misled:
            return wrong_answer(item, self.box_convention)
        return gold_answer(item, self.box_convention)


class _Priors:
    """Most frequent answers per task in the train split (text only, never the image)."""

    def __init__(self, items: Iterable[Item]) -> None:
        self.answer_text: dict[str, Counter[str]] = defaultdict(Counter)  # mcq option texts, yes/no, reports
        self.multi: dict[str, Counter[str]] = defaultdict(Counter)  # option text -> times it was a right answer
        self.multi_n: Counter[str] = Counter()
        self.boxes: dict[str, list[tuple[float, float, float, float]]] = defaultdict(list)  # fractions
        for it in items:
            if it.split != "train" or it.variant != "clean":
                continue
            if it.form == "mcq" and it.options:
                self.answer_text[it.task][it.options[letter_index(it.answer)]] += 1
            elif it.form in ("yesno", "text"):
                self.answer_text[it.task][it.answer] += 1
            elif it.form == "multi":
                self.multi_n[it.task] += 1
                for ch in it.answer.split(","):
                    if ch.strip():
                        self.multi[it.task][it.options[letter_index(ch)]] += 1
            elif it.form == "box" and it.answer_box and it.image_width and it.image_height:
                x1, y1, x2, y2 = it.answer_box
                w, h = it.image_width, it.image_height
                self.boxes[it.task].append((x1 / w, y1 / h, x2 / w, y2 / h))
        # ranked once here, not per request: a report task has about one distinct answer per train case, and
        # sorting them for every request made a whole evaluation's cost grow with the square of the bench
        self._ranked = {task: tuple(t for t, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))
                        for task, c in self.answer_text.items()}
        self._mean_boxes = {task: np.mean(np.asarray(b), axis=0) for task, b in self.boxes.items() if b}

    def ranked(self, task: str) -> tuple[str, ...]:
        """Answer texts by train frequency, ties by text (deterministic)."""
        return self._ranked.get(task, ())

    def _mean_box(self, task: str) -> np.ndarray[Any, Any] | None:
        """The mean train box of a task (fractions of the image); None: no train box."""
        return self._mean_boxes.get(task)

    def confidence(self, item: Item) -> Confidence | None:
        """The train frequency of each answer shown, normalised over them (uniform when none was seen)."""
        labels = labels_of(item)
        if not labels:
            return None
        freq = self.answer_text.get(item.task, Counter())
        texts = item.options if item.form == "mcq" else list(labels)
        counts = {lab: float(freq[t]) for lab, t in zip(labels, texts, strict=True)}
        return normalised(counts, "prior") or normalised(dict.fromkeys(labels, 1.0), "prior")

    def answer(self, item: Item) -> str:
        if item.form == "mcq":
            for text in self.ranked(item.task):
                if text in item.options:
                    return letter(item.options.index(text))
            return "A"  # no train answer among the options: the first option
        if item.form == "yesno":
            yes_no = [t for t in self.ranked(item.task) if t in ("yes", "no")]
            return yes_no[0] if yes_no else "no"
        if item.form == "multi":
            n = self.multi_n[item.task]
            freq = self.multi[item.task]
            picks = [letter(i) for i, o in enumerate(item.options) if n and freq[o] / n > 0.5]
            if not picks:
                best = max(range(len(item.options)), key=lambda i: (freq[item.options[i]], -i))
                picks = [letter(best)]
            return ",".join(picks)
        if item.form == "box":
            m = self._mean_box(item.task)
            if m is None:
                return _box(item, _centre_box(item))
            w, h = item.image_width or 1, item.image_height or 1
            return _box(item, (m[0] * w, m[1] * h, m[2] * w, m[3] * h))
        ranked = self.ranked(item.task)
        return ranked[0] if ranked else ""


@register_baseline("prior")
class PriorBaseline(BaselineAdapter):
    """Answers the most frequent train-split answer of the task (never looks at the image)."""

    name = "prior"

    def __init__(self, opts: ModelConfig) -> None:
        super().__init__(opts)
        if opts.bench is None:
            raise BadInput("baseline:prior needs the bench (its train split)", field="--bench")

    def answer(self, req: Request) -> str:
        assert self.priors is not None
        return self.priors.answer(_item(req))

    def confidence(self, req: Request) -> Confidence | None:
        assert self.priors is not None
        return self.priors.confidence(_item(req))


@register_baseline("blind")
class BlindBaseline(BaselineAdapter):
    """A guess seeded by the text of the request only (images ignored): identical answers for all
    image variants of a question, different answers across questions."""

    name = "blind"

    def answer(self, req: Request) -> str:
        item = _item(req)
        text = "\n".join(p.text or "" for m in req.messages for p in m.parts if p.type == "text")
        return _random_answer(item, _rng(f"{self.seed}:{text}"), self.reference_texts(item))

    def confidence(self, req: Request) -> Confidence | None:
        return _uniform(_item(req))


def _uniform(item: Item) -> Confidence | None:
    """A uniform guess: each answer equally likely (honestly 1/n right)."""
    labels = labels_of(item)
    return normalised(dict.fromkeys(labels, 1.0), "prior") if labels else None


# -- scripted rationales (issue 19): the right answer, with a rationale that is grounded or not ---------------
_RATIONALE_MODALITIES = ("CT", "MRI", "X-ray", "ultrasound")


def _case_positives(case: Any) -> list[str]:
    from medr2.tasks import vocab

    out: list[str] = []
    for label in [f.label for f in case.findings] + ([case.diagnosis] if case.diagnosis else []):
        if not vocab.is_normal(label) and all(not vocab.same(label, o) for o in out):
            out.append(label)
    return out


class _RationaleBaseline(BaselineAdapter):
    """Answers like the oracle (always right) and returns a rationale as the separate reasoning text, written
    from the bench's case (``Response.reasoning``), one checkable statement per sentence."""

    def rationale(self, item: Item) -> str:
        raise NotImplementedError

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for req in requests:
            try:
                item = _item(req)
                out.append(Response("ok", text=_oracle_answer(item), latency_s=0.0, attempts=1,
                                    reasoning=self.rationale(item)))
            except BadInput as e:
                out.append(Response("error", error=str(e), attempts=1))
        return out

    def case(self, item: Item) -> Any:
        if self.opts.bench is None:
            raise BadInput(f"baseline:{self.name} needs the bench (its cases)", field="--bench")
        return self.opts.bench.case(item.case_id)


@register_baseline("grounded")
class GroundedRationaleBaseline(_RationaleBaseline):
    """Right answers with a rationale that states only what the case has: its modality, then each finding (and
    a non-normal diagnosis) as present, or "no abnormality" for a case known normal
    (:func:`medr2.tasks.contract.abnormal_state`; nothing of an unlisted finding on an incomplete list). Every
    claim is supported."""

    name = "grounded"

    def rationale(self, item: Item) -> str:
        from medr2.tasks import vocab
        from medr2.tasks.contract import abnormal_state

        case = self.case(item)
        lines = [f"Modality: {case.modality}."]
        positives = _case_positives(case)
        lines += [f"There is {vocab.indefinite(p)}." for p in positives]
        if abnormal_state(case) is False:
            lines.append("There is no abnormality.")
        return "\n".join(lines)


@register_baseline("ungrounded")
class UngroundedRationaleBaseline(_RationaleBaseline):
    """Right answers for the wrong reasons: the rationale names another modality, asserts a finding the case's
    truth states absent (the first built-in finding :func:`medr2.tasks.contract.states_absent` allows; none where
    the truth states none absent), denies every finding (and
    non-normal diagnosis) the case has and, where a variant offers a lure, asserts the lure's option text as a
    fact. Every claim is contradicted."""

    name = "ungrounded"

    def rationale(self, item: Item) -> str:
        from medr2.tasks import vocab
        from medr2.tasks.contract import states_absent

        case = self.case(item)
        wrong = next(m for m in _RATIONALE_MODALITIES if not vocab.same(vocab.canonical_modality(case.modality)
                                                                          or case.modality, m))
        positives = _case_positives(case)
        absent = next((f for f in vocab.BUILTIN["finding"] if states_absent(case, f)), None)
        lines = [f"Modality: {wrong}."] + ([f"There is {vocab.indefinite(absent)}."] if absent else [])
        lines += [f"There is no {p}." for p in positives]
        if item.lure and item.form == "mcq" and item.options:  # adopts the false premise a variant offers
            fact = item.options[letter_index(item.lure)]
            lines.append("The study is normal." if vocab.is_normal(fact) else f"There is {vocab.indefinite(fact)}.")
        return "\n".join(lines)
