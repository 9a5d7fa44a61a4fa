"""The runner (docs/running.md): select items, render requests per mode, skip what is stored, send the
rest through the adapter and persist every response the moment it arrives.

``run_eval(EvalConfig)`` is what ``medr2 eval`` calls; ``Runner`` is the lower-level API for a
loaded bench, an adapter object (including your own Python callable adapter) and an open store.

Chains: in chain modes the items sharing ``chain_id`` are one dialogue ordered by ``step``. A
variant item is asked inside its chain: earlier steps the variant lacks are its clean items.
``chain-own`` asks step by step (a wave per step value), since each step shows the model's own
stored earlier answers; everything else is asked in one wave.

With an adapter that pulls requests lazily (:class:`PullingAdapter`, e.g. ``openai``), a wave is
planned and looked up in the store ``PLAN_CHUNK`` items at a time as the adapter asks for requests,
so sending starts at once and planning overlaps the requests in flight. What is stored is the same
either way; only the order rows are written in differs.
"""

from __future__ import annotations

import gc
import itertools
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from medr2 import jsonsafe
from medr2.errors import BadInput, WorkFailed
from medr2.models.base import Adapter, BoxConvention, GenSettings, Request, Response
from medr2.models.config import ModelConfig
from medr2.models.presets import Preset
from medr2.models.registry import AdapterLoader, StreamingAdapter, load_adapter
from medr2.models.structured import follows, unfollowed_note
from medr2.models.truncation import is_truncated
from medr2.records import Item, Prediction, stable_hash, with_abstain_option
from medr2.run.executors import Executor, LocalExecutor, make_executor
from medr2.run.order import DEFAULT_ORDER, get_order
from medr2.run.prompts import (
    CONFIDENCE_OPTIONS,
    VERBAL_CONFIDENCE_INSTRUCTION,
    ModeSpec,
    Turn,
    get_mode,
    gold_answer,
    messages_json,
    render_messages,
    request_hash,
    wrong_answer,
)
from medr2.run.serve import ServeSpec, serving
from medr2.run.store import Row, Store

if TYPE_CHECKING:
    from medr2.bench.format import Bench
    from medr2.bench.reviews import Selection
    from medr2.bench.table import BenchTable

PROMPT_VERSION = 2  # bump when rendering changes in a way that must not mix with stored runs
PLAN_CHUNK = 32  # items planned and looked up in the store at a time when the adapter pulls requests lazily
SEND_CHUNK = 1_024  # items planned and looked up in the store at a time otherwise (a wave is streamed)
DEFAULT_SPLIT = "test"  # what ``medr2 eval`` / ``medr2.evaluate`` ask without ``--split``: the held-out split


@runtime_checkable
class PullingAdapter(Protocol):
    """Optional capability (beyond :class:`~medr2.models.registry.StreamingAdapter`): ``stream_pull``
    takes an iterable and pulls each request only when it can send it, so the runner plans the rest
    of a wave and looks it up in the store while earlier requests are in flight."""

    def stream_pull(self, requests: Iterable[Request]) -> Iterator[tuple[int, Response]]: ...


# ---------------------------------------------------------------------------------------------
# the items a run asks (selected by :func:`medr2.bench.select.select_items`)


class SizedItems(Protocol):
    """Items a run asks: a list, or a :class:`~medr2.bench.select.ItemSelection` (iterable more than once, with a
    length)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Item]: ...


def _first_over(items: SizedItems, limit: int) -> tuple[str, int] | None:
    """(item id, images it shows) of the first item of a run, in bench order, that shows more than ``limit``
    images; None: none does. A streamed selection is read by the distinct values of its ``images`` column (each
    parsed once), its rows only where some value holds too many; held or listed items by their records."""
    from medr2.bench.select import ItemSelection

    if not (isinstance(items, ItemSelection) and items.held is None):
        return next(((it.item_id, len(it.images)) for it in items if len(it.images) > limit), None)
    table, flt = items.table, items.filter
    if "images" not in table.schema.names:  # a bench written before issue 49
        return None
    over = {v: n for v in table.value_counts("images", flt) if v != "[]"
            for n in [len(jsonsafe.loads(v, field="images"))] if n > limit}
    if over:
        for cols in table.column_values(["item_id", "images"], flt):
            for item_id, images in zip(cols["item_id"], cols["images"], strict=True):
                if images in over:
                    return item_id, over[images]
    return None


def refuse_too_many_images(items: SizedItems, adapter: Adapter, file: str) -> None:
    """Before any request: an item showing more images than the model takes in one prompt (its ``max_images``:
    the preset's, ``--model-option max_images=N`` or the vLLM engine's limit) is refused, naming the item, rather
    than sent to fail or scored as an error of the model (docs/models.md "Several images per prompt")."""
    limit = getattr(adapter, "max_images", None)
    found = _first_over(items, limit) if limit is not None else None
    if found is not None:
        item_id, n = found
        raise BadInput(f"the item shows {n} images but {adapter.key} takes at most {limit} per prompt (its preset's "
                       "max_images or --model-option max_images, vllm: max_images_per_prompt; give a larger limit "
                       "where the model and server take more, or leave the item out with --task/--variants)",
                       file=file, record=item_id, field="images")


# ---------------------------------------------------------------------------------------------
# chains


class ChainIndex:
    """Items of the whole bench by chain, variant and step (to find a chain's earlier steps). An item a review
    fix made (``meta.review``, read under ``--reviewed accepted``) stands for its parent's step."""

    def __init__(self, items: Iterable[Item]) -> None:
        self._idx: dict[str, dict[str, dict[int, Item]]] = defaultdict(lambda: defaultdict(dict))
        for it in sorted(items, key=lambda x: ("review" not in (x.meta or {}), x.item_id)):
            if it.chain_id is not None and it.step is not None:
                self._idx[it.chain_id][it.variant].setdefault(it.step, it)

    def earlier(self, item: Item) -> list[Item]:
        """The items of the steps before ``item`` in its chain: the item's variant where it has
        that step, else the clean item of the step."""
        if item.chain_id is None or item.step is None:
            return []
        by_variant = self._idx.get(item.chain_id, {})
        own = by_variant.get(item.variant, {})
        clean = by_variant.get("clean", {})
        steps = sorted(s for s in set(own) | set(clean) if s < item.step)
        return [own.get(s) or clean[s] for s in steps]


# ---------------------------------------------------------------------------------------------
# planned requests


@dataclass
class Planned:
    item: Item
    mode: ModeSpec
    request: Request | None  # None: not sendable (an earlier chain step failed)
    meta: dict[str, Any]
    messages: list[Any] | None
    upstream_error: str | None = None


@dataclass
class ModeCounts:
    planned: int = 0
    stored_before: int = 0
    ok: int = 0
    error: int = 0
    truncated: int = 0  # ok answers cut off by the token limit (scored ``truncated``)
    # ok answers of a --structured-answers run without their constraint's shape (medr2.models.structured.follows)
    unfollowed: int = 0


@dataclass
class RunSummary:
    run_dir: Path | None
    modes: dict[str, ModeCounts] = field(default_factory=dict)
    retries: int = 0
    interrupted: bool = False
    seconds: float = 0.0
    last_error: str | None = None  # the error of the last request stored as one (shown by ``medr2 eval``)

    @property
    def sent(self) -> int:
        return sum(c.ok + c.error for c in self.modes.values())

    def as_dict(self) -> dict[str, Any]:
        return {"modes": {m: vars(c) for m, c in self.modes.items()}, "sent": self.sent, "retries": self.retries,
                "interrupted": self.interrupted, "seconds": round(self.seconds, 3), "last_error": self.last_error}


class Progress:
    """Callbacks the runner reports to (the command line shows a rich bar)."""

    def start(self, total: int) -> None: ...

    def advance(self, n: int = 1, *, error: bool = False, retries: int = 0, skipped: bool = False) -> None: ...

    def stop(self) -> None: ...


class Runner:
    """Runs one adapter over items of one bench into one store."""

    def __init__(self, *, bench_root: Path, bench_items: Iterable[Item] = (), adapter: Adapter, store: Store,
                 settings: GenSettings, preset: Preset | None = None, retry_errors: bool = False,
                 batch_size: int = 8, progress: Progress | None = None, executor: Executor | None = None,
                 chains: ChainIndex | None = None, order: str = "bench", suffix: str | None = None,
                 abstain_option: bool = False) -> None:
        """``bench_items``: the items chains are looked up in (every item of the bench, or at least those of
        the chains asked); or ``chains``, that index built already. ``order``: the dispatch order of each
        wave's items (:data:`medr2.run.order.ORDERS`; default ``bench``: as given; ``medr2 eval`` passes its
        ``--order``, default :data:`~medr2.run.order.DEFAULT_ORDER`); what is stored is the same whatever the order."""
        self.bench_root = Path(bench_root)
        self.chains = chains if chains is not None else ChainIndex(bench_items)
        self.adapter = adapter
        self.store = store
        self.settings = settings
        self.preset = preset
        self.suffix = suffix  # one more instruction after each asked question (--confidence verbal)
        self.abstain_option = abstain_option  # single-choice items offer records.ABSTAIN_OPTION (--abstain-option)
        self.conv: BoxConvention = adapter.box_convention
        self.retry_errors = retry_errors
        self.batch_size = max(1, batch_size)
        self.progress = progress or Progress()
        self.executor: Executor = executor or LocalExecutor()
        self.order = get_order(order)
        # --structured-answers: the mechanism the adapter constrains closed answers with (None: free answers)
        self.structured: str | None = adapter.settings().get("structured")
        if preset is not None and preset.box.space != self.conv.space:
            raise BadInput(f"preset {preset.name!r} expects boxes in {preset.box.space!r} but the adapter returns "
                           f"{self.conv.space!r}", field="--preset")

    # -- planning ----------------------------------------------------------------------------
    def asked_items(self, mode: ModeSpec, items: Iterable[Item]) -> list[Item]:
        """Items asked in ``mode``: the selection, plus (chain-own) earlier steps a chain needs answered."""
        items = list(items)
        if mode.history != "own":
            return items
        asked = {it.item_id: it for it in items}
        frontier = list(items)
        while frontier:
            nxt = []
            for it in frontier:
                for e in self.chains.earlier(it):
                    if e.item_id not in asked:
                        asked[e.item_id] = e
                        nxt.append(e)
            frontier = nxt
        order = {it.item_id: i for i, it in enumerate(items)}
        return sorted(asked.values(), key=lambda it: (order.get(it.item_id, -1), it.item_id))

    def waves(self, mode: ModeSpec, items: Iterable[Item]) -> list[list[Item]]:
        if mode.history != "own":
            return [list(items)]
        by_step: dict[int, list[Item]] = defaultdict(list)
        for it in items:
            by_step[it.step if (it.chain_id is not None and it.step is not None) else -1].append(it)
        return [by_step[s] for s in sorted(by_step)]

    def _history(self, mode: ModeSpec, item: Item) -> tuple[list[Turn], dict[str, Any], str | None]:
        if not mode.chain:
            return [], {}, None
        earlier = self.chains.earlier(item)
        meta: dict[str, Any] = {}
        turns: list[Turn] = []
        for k, e in enumerate(earlier):
            if mode.history == "gold":
                turns.append(Turn(e, gold_answer(e, self.conv)))
            elif mode.history == "misleading":
                if k == len(earlier) - 1:
                    turns.append(Turn(e, wrong_answer(e, self.conv)))
                    meta.update(misled_step=e.step, misled_item=e.item_id, misled_answer=turns[-1].answer)
                else:
                    turns.append(Turn(e, gold_answer(e, self.conv)))
            else:  # own
                row = self.store.get_item(e.item_id, mode.name)  # through the answer budget (the default)
                if row is None:
                    raise WorkFailed(f"chain {item.chain_id}: no stored answer for earlier step {e.step} "
                                     f"(item {e.item_id}) in mode {mode.name}")
                if row.prediction.status != "ok" or row.prediction.raw is None:
                    return [], {"upstream_item": e.item_id, "upstream_hash": row.prediction.request_hash}, (
                        f"earlier chain step {e.step} (item {e.item_id}) failed: {row.prediction.error}")
                # the answer as the assistant turn: surrounding whitespace dropped here, for every adapter (a
                # served model's text keeps a leading space that hf:/vllm: strip; the history must not differ)
                turns.append(Turn(e, row.prediction.raw.strip()))
        if earlier:
            meta["history_items"] = [e.item_id for e in earlier]
        return turns, meta, None

    def plan(self, mode: ModeSpec, items: Sequence[Item]) -> list[Planned]:
        out: list[Planned] = []
        for it in items:
            turns, meta, upstream = self._history(mode, it)
            meta["variant"] = it.variant
            if self.abstain_option and it.form == "mcq":  # asked with "Cannot be determined from the image"
                it = it.model_copy(update={"options": with_abstain_option(it.form, it.options)})
            if upstream is not None:
                key = stable_hash(["upstream-error", self.adapter.key, it.item_id, mode.name,
                                   meta["upstream_hash"]], n=64)
                out.append(Planned(it, mode, Request(key, (), self.settings, self.bench_root, it.item_id),
                                   meta, None, upstream))
                continue
            msgs = render_messages(it, mode=mode, history=turns, conv=self.conv, preset=self.preset,
                                   suffix=self.suffix)
            h = request_hash(self.adapter.key, self.settings, msgs, item_id=it.item_id, mode=mode.name)
            req = Request(h, msgs, self.settings, self.bench_root, it.item_id,
                          meta={"item": it, "mode": mode.name, "history": turns})
            out.append(Planned(it, mode, req, meta, messages_json(msgs)))
        return out

    # -- sending -----------------------------------------------------------------------------
    def _row(self, p: Planned, resp: Response) -> Row:
        assert p.request is not None
        pred = Prediction(model_key=self.adapter.key, item_id=p.item.item_id, mode=p.mode.name,
                          request_hash=p.request.key, raw=resp.text,
                          latency_s=resp.latency_s, prompt_tokens=resp.prompt_tokens,
                          completion_tokens=resp.completion_tokens, status=resp.status,
                          error=resp.error if resp.status == "error" else None, attempts=resp.attempts,
                          finish_reason=resp.finish_reason, reasoning=resp.reasoning,
                          confidence=resp.confidence if resp.status == "ok" else None)
        meta = {**p.meta, "notes": list(resp.notes)} if resp.notes else p.meta
        return Row(pred, p.item.step, p.item.chain_id, meta, p.messages)

    def persist(self, p: Planned, resp: Response, counts: ModeCounts, summary: RunSummary) -> None:
        """Store the answer to ``p`` (committed at once) and count it. A structured answer without its constraint's
        shape (whatever the executor: every answer is stored here) is stored with a note saying so, and counted."""
        unfollowed = resp.status == "ok" and follows(self.structured, p.item, resp.text) is False
        if unfollowed:
            assert self.structured is not None
            note = unfollowed_note(self.structured, p.item, resp.text, resp.finish_reason)
            resp = replace(resp, notes=(*resp.notes, note))
        self.store.put_many([self._row(p, resp)])
        if resp.status == "ok":
            counts.ok += 1
            counts.unfollowed += unfollowed
            if is_truncated(resp.text, resp.finish_reason):
                counts.truncated += 1
        else:
            counts.error += 1
            summary.last_error = resp.error
        retries = max(0, resp.attempts - 1)
        summary.retries += retries
        self.progress.advance(error=resp.status != "ok", retries=retries)

    def persist_blocked(self, p: Planned, counts: ModeCounts, summary: RunSummary) -> None:
        """Store a request blocked by an earlier chain step's error as that error (nothing is sent)."""
        self.persist(p, Response("error", error=p.upstream_error, attempts=0), counts, summary)

    def send(self, todo: Sequence[Planned], counts: ModeCounts, summary: RunSummary) -> None:
        blocked = [p for p in todo if p.upstream_error is not None]
        for p in blocked:
            self.persist_blocked(p, counts, summary)
        ready = [p for p in todo if p.upstream_error is None]
        if not ready:
            return
        requests = [p.request for p in ready]
        if isinstance(self.adapter, StreamingAdapter):
            with _closed(self.adapter.stream(requests)) as results:  # type: ignore[arg-type]
                for i, resp in results:
                    self.persist(ready[i], resp, counts, summary)
            return
        for start in range(0, len(ready), self.batch_size):
            chunk = ready[start:start + self.batch_size]
            responses = self.adapter.generate([p.request for p in chunk])  # type: ignore[misc]
            if len(responses) != len(chunk):
                raise WorkFailed(f"adapter {self.adapter.key} returned {len(responses)} responses "
                                 f"for {len(chunk)} requests")
            for p, resp in zip(chunk, responses, strict=True):
                self.persist(p, resp, counts, summary)

    def send_pulled(self, todo: Iterable[Planned], counts: ModeCounts, summary: RunSummary) -> None:
        """``send`` for a :class:`PullingAdapter`: ``todo`` is consumed lazily, as the adapter pulls
        requests; requests blocked by an upstream error are stored as they come."""
        assert isinstance(self.adapter, PullingAdapter)
        in_flight: dict[int, Planned] = {}  # index of a pulled request -> its plan, until stored
        index = itertools.count()

        def requests() -> Iterator[Request]:
            for p in todo:
                if p.upstream_error is not None:
                    self.persist_blocked(p, counts, summary)
                    continue
                assert p.request is not None
                in_flight[next(index)] = p
                yield p.request

        with _closed(self.adapter.stream_pull(requests())) as results:
            for i, resp in results:
                self.persist(in_flight.pop(i), resp, counts, summary)

    def unstored(self, mode: ModeSpec, items: Sequence[Item], counts: ModeCounts) -> list[Planned]:
        """Plan ``items`` and drop what the store already holds (errors too, unless retry_errors)."""
        planned = self.plan(mode, items)
        stored = self.store.statuses(p.request.key for p in planned if p.request is not None)
        todo = []
        for p in planned:
            st = stored.get(p.request.key) if p.request is not None else None
            if st == "ok" or (st == "error" and not self.retry_errors):
                counts.stored_before += 1
                self.progress.advance(skipped=True)
            else:
                todo.append(p)
        return todo

    def unstored_chunks(self, mode: ModeSpec, items: Iterable[Item], counts: ModeCounts,
                        chunk: int = PLAN_CHUNK) -> Iterator[Planned]:
        """``unstored`` over ``items`` (any iterable, e.g. streamed from the bench), ``chunk`` items at a time."""
        source = iter(items)
        while block := list(itertools.islice(source, chunk)):
            yield from self.unstored(mode, block, counts)

    def send_streamed(self, todo: Iterable[Planned], counts: ModeCounts, summary: RunSummary) -> None:
        """``send`` for a wave planned as it is consumed: batches of ``batch_size`` are formed from the
        unstored requests in order (the batches ``send`` forms from the whole wave); a streaming adapter
        gets them :data:`SEND_CHUNK` at a time."""
        source = iter(todo)
        if isinstance(self.adapter, StreamingAdapter):
            while block := list(itertools.islice(source, SEND_CHUNK)):
                self.send(block, counts, summary)
            return
        batch: list[Planned] = []
        for p in source:
            if p.upstream_error is not None:
                self.persist_blocked(p, counts, summary)
                continue
            batch.append(p)
            if len(batch) == self.batch_size:
                self.send(batch, counts, summary)
                batch = []
        if batch:
            self.send(batch, counts, summary)

    def run(self, modes: Sequence[str], items: SizedItems, summary: RunSummary | None = None) -> RunSummary:
        """Ask ``items`` in each mode; stored requests are skipped (errors too, unless retry_errors).
        ``items`` is iterated once per mode (a list, or a :class:`~medr2.bench.select.ItemSelection` streamed from
        the bench): outside chain-own, waves are planned, looked up and sent a chunk at a time."""
        summary = summary or RunSummary(None)
        specs = [get_mode(m) for m in modes]
        asked: dict[str, SizedItems] = {
            m.name: self.asked_items(m, items) if m.history == "own" else items for m in specs}
        self.progress.start(sum(len(v) for v in asked.values()))
        t0 = time.perf_counter()
        frozen = _freeze_heap()
        try:
            for mode in specs:
                counts = summary.modes.setdefault(mode.name, ModeCounts())
                counts.planned += len(asked[mode.name])
                waves: Iterable[Iterable[Item]] = (
                    self.waves(mode, asked[mode.name]) if mode.history == "own" else [asked[mode.name]])
                for wave in waves:
                    self.executor.send_wave(self, mode, self.order(wave), counts, summary)
        except KeyboardInterrupt:
            summary.interrupted = True
        finally:
            if frozen:
                gc.unfreeze()
            summary.seconds += time.perf_counter() - t0
            self.progress.stop()
        return summary


def _freeze_heap() -> bool:
    """Move every object alive now (the loaded bench, the adapter, ...) out of the garbage collector's
    view for the run (``gc.freeze``), so its full collections scan only what the run allocates: a full
    collection over a large loaded bench stops the event loop for tens of ms, which a latency-bound run
    pays in every slot. Nothing is freed or kept differently: ``gc.unfreeze`` afterwards puts the objects
    back. Skipped when the caller has frozen objects itself (its freeze is left alone)."""
    if gc.get_freeze_count():
        return False
    gc.freeze()
    return True


# ---------------------------------------------------------------------------------------------
# the whole eval command


@contextmanager
def _closed(results: Iterator[tuple[int, Response]]) -> Iterator[Iterator[tuple[int, Response]]]:
    """``results``, closed on leaving (an adapter's stream is a generator: closing it stops its work)."""
    try:
        yield results
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()


@dataclass
class EvalConfig:
    """One ``medr2 eval``: the bench, the run folder, what to ask, and the model.

    ``model``: the model and every setting of it, one :class:`~medr2.models.config.ModelConfig` (what
    :func:`medr2.evaluate` builds from ``medr2 eval``'s options); it reaches the adapter's factory unchanged (its
    ``bench`` set to the bench read). Its ``seed`` also seeds a stratified ``limit``."""

    bench: Path
    model: ModelConfig
    out: Path
    modes: tuple[str, ...] = ("independent",)
    variants: tuple[str, ...] | None = None
    split: str | None = DEFAULT_SPLIT  # train, val, test or all (None: all, as older callers pass it)
    limit: int | None = None
    stratify: tuple[str, ...] | None = None  # --limit samples evenly over these item columns (STRATA), by the seed
    shard: tuple[int, int] | None = None
    allow_empty: bool = False  # an empty selection runs (nothing) instead of being refused
    tasks: tuple[str, ...] | None = None  # only these tasks (None: every task)
    stages: tuple[int, ...] | None = None  # only these stages (None: every stage)
    reviewed: str | None = None  # ``accepted``: only the items the bench's clinician review accepted (docs/review.md)
    retry_errors: bool = False
    command: tuple[str, ...] = ()
    executor: str = "local"  # where requests are sent from (medr2.run.executors.EXECUTORS)
    executor_options: dict[str, Any] = field(default_factory=dict)  # e.g. {"address": ...} for ray
    serve: ServeSpec | None = None  # a server to start for this run, healthy before the first request (--serve)
    order: str = DEFAULT_ORDER  # the dispatch order of the items (medr2.run.order.ORDERS); answers do not depend on it
    # where each answer's confidence comes from (run.prompts.CONFIDENCE_OPTIONS): ``logprobs`` asks an openai:
    # server for token log-probabilities, ``verbal`` asks the model to state it; recorded in the manifest
    confidence: str = "none"
    abstain_option: bool = False  # offer "Cannot be determined from the image" on single-choice items; recorded
    # constrain closed answers where the model can (medr2.models.structured; hf: by log-likelihood); recorded
    structured_answers: bool = False


def conv_dict(conv: BoxConvention) -> dict[str, Any]:
    return {"space": conv.space, "resize": conv.resize, "params": dict(conv.params)}


def _chain_items(table: BenchTable, chain_ids: set[str]) -> Iterator[Item]:
    """The items of the chains asked (what their earlier steps are looked up in)."""
    if not chain_ids:
        return iter(())
    from medr2.bench.table import ItemFilter

    return table.iter_items(ItemFilter(chain_ids=frozenset(chain_ids)))


def _refuse_bench_as_out(bench: Path, out: Path) -> None:
    """``--out`` may not be the bench folder, inside it, or another bench (its lock and store would land there)."""
    b, o = bench.resolve(), out.resolve()
    if o == b or b in o.parents:
        raise BadInput("the run folder is the bench folder or inside it; choose another --out", file=str(out),
                       field="--out")
    try:
        is_bench = jsonsafe.load_object(o / "manifest.json").get("format") == "medr2-bench"
    except BadInput:
        is_bench = False
    if is_bench:
        raise BadInput("the run folder holds a bench; choose another --out", file=str(out), field="--out")


def _with_confidence(model_cfg: ModelConfig, confidence: str) -> ModelConfig:
    """The model settings ``--confidence`` implies: ``logprobs`` asks an ``openai:`` server for the top 20
    log-probabilities of each answer token (``top_logprobs``, unless given); the other sources need nothing."""
    if confidence not in CONFIDENCE_OPTIONS:
        raise BadInput(f"--confidence must be one of {', '.join(CONFIDENCE_OPTIONS)}, not {confidence!r}",
                       field="--confidence")
    if confidence != "logprobs":
        return model_cfg
    if not model_cfg.spec.startswith("openai:"):
        raise BadInput("--confidence logprobs needs an openai: model (an OpenAI-compatible server: vLLM, SGLang, "
                       "transformers serve); hf: models give log-likelihood confidences with "
                       "--model-option choice=loglik", field="--confidence")
    return replace(model_cfg, extra={"top_logprobs": 20, **model_cfg.extra})


def _with_structured(model_cfg: ModelConfig, structured: bool) -> ModelConfig:
    """The model settings ``--structured-answers`` implies: the adapter option ``structured=preset`` (the
    preset's mechanism for ``openai:`` servers, the log-likelihood choice for ``hf:``), unless given."""
    if not structured:
        return model_cfg
    return replace(model_cfg, extra={"structured": "preset", **model_cfg.extra})


def structured_identity(adapter: Adapter, asked: bool) -> str | None:
    """The structured-answer mechanism the adapter declares it uses (its ``settings()["structured"]``), or
    None; ``--structured-answers`` with an adapter that declares none is refused."""
    mech = adapter.settings().get("structured")
    if asked and not mech:
        raise BadInput(f"{adapter.key} cannot give structured answers: --structured-answers needs an openai: "
                       "server (the preset's mechanism, docs/serving.md) or an hf: model (log-likelihood choice)",
                       field="--structured-answers")
    return str(mech) if mech else None


def _reviewed(cfg: EvalConfig) -> Selection | None:
    """``--reviewed``: the accepted items, the fixed items and the review rows read (None without the option)."""
    if cfg.reviewed is None:
        return None
    from medr2.bench.reviews import reviewed_selection

    return reviewed_selection(cfg.bench, cfg.reviewed)


def run_eval(cfg: EvalConfig, *, progress: Progress | None = None,
             adapter_factory: AdapterLoader | None = None, bench: Bench | None = None) -> RunSummary:
    """Open the bench, build the adapter, check/write the manifest, run, update the manifest.
    The bench is read by columns (:class:`~medr2.bench.table.BenchTable`, validated streaming): the items
    asked are selected from its columns (:func:`medr2.bench.select.select_items`) and built a batch at a time.
    ``bench``: the bench at ``cfg.bench`` already loaded (callers running many evals load it once), selected from
    through the same API over its records held as a table (:meth:`~medr2.bench.format.Bench.table`)."""
    from medr2.bench.select import select_items
    from medr2.bench.table import BenchTable
    from medr2.run import manifest as mf
    from medr2.run.prompts import settings_json

    for m in cfg.modes:
        get_mode(m)
    get_order(cfg.order)
    _refuse_bench_as_out(Path(cfg.bench), Path(cfg.out))
    source: Bench | BenchTable
    if bench is None:  # read and checked by columns, each item built checked as a record; images are not
        # hashed here: each adapter verifies those it sends
        source = BenchTable.open(cfg.bench, image_hashes=False)
    elif Path(bench.root).resolve() != Path(cfg.bench).resolve():
        raise BadInput(f"the loaded bench is {bench.root}, not {cfg.bench}", field="bench")
    else:
        source = bench
    model_cfg = _with_structured(_with_confidence(replace(cfg.model, bench=source), cfg.confidence),
                                 cfg.structured_answers)
    executor = make_executor(cfg.executor, cfg.executor_options)
    preset = model_cfg.resolve_preset()
    settings = model_cfg.generation(preset)
    adapter = (adapter_factory or executor.adapter_factory() or load_adapter)(model_cfg)
    try:
        executor.bind(adapter)  # refuses an adapter it cannot send for, before the run folder is touched
        reviewed = _reviewed(cfg)
        # a loaded bench is read through the same API, over its records held as a table
        table = source if isinstance(source, BenchTable) else source.table()
        if reviewed is not None:  # the fixed items are read after the table's rows, by every read
            table.add_items(reviewed.fixed)
        items = select_items(table, variants=cfg.variants, split=cfg.split, limit=cfg.limit, shard=cfg.shard,
                             tasks=cfg.tasks, stages=cfg.stages, allow_empty=cfg.allow_empty,
                             stratify=cfg.stratify, seed=model_cfg.seed,
                             item_ids=reviewed.item_ids if reviewed is not None else None)
        chain_ids = items.chain_ids() if any(get_mode(m).chain for m in cfg.modes) else set()
        chains = ChainIndex(_chain_items(table, chain_ids))
        if any(get_mode(m).image for m in cfg.modes):
            refuse_too_many_images(items, adapter, str(source.items_path))
        identity = {
            "bench_checksum": source.checksum,
            "model_key": adapter.key,
            "generation": settings_json(settings),
            "box_convention": conv_dict(adapter.box_convention),
            "preset": preset.name if preset else None,
            "shard": f"{cfg.shard[0]}/{cfg.shard[1]}" if cfg.shard else None,
            "prompt_version": PROMPT_VERSION,
        }
        request_extra = adapter.settings().get("extra_body")  # e.g. a thinking budget: it changes the answers
        if request_extra:
            identity["request_extra"] = request_extra
        if cfg.confidence != "none":  # recorded where asked (older runs have none): it changes the prompt or body
            identity["confidence"] = cfg.confidence
        if cfg.abstain_option:
            identity["abstain_option"] = True
        structured = structured_identity(adapter, cfg.structured_answers)
        if structured is not None:  # recorded where used (older runs have none): it constrains the answers
            identity["structured_answers"] = structured
        out = Path(cfg.out)
        store = Store.open(out, write=True)  # takes the writer lock before the manifest is touched
        try:
            manifest = mf.read_manifest(out)
            if manifest is None:
                manifest = mf.new_manifest(identity, bench={"path": str(Path(cfg.bench).resolve()),
                                                            "name": source.name, "checksum": source.checksum},
                                           model={"spec": model_cfg.spec, "key": adapter.key,
                                                  "settings": adapter.settings(),
                                                  "box_convention": conv_dict(adapter.box_convention),
                                                  "preset": preset.as_dict() if preset else None})
            else:
                mf.check_same_run(manifest, identity, out)
                manifest["model"]["settings"] = adapter.settings()
            invocation: dict[str, Any] = {
                "command": list(cfg.command) or list(sys.argv), "started_at": time.time(), "modes": list(cfg.modes),
                "variants": list(cfg.variants) if cfg.variants else None, "split": cfg.split, "limit": cfg.limit,
                "items": len(items), "status": "running", "executor": executor.describe(), "order": cfg.order}
            for key, value in (("tasks", cfg.tasks), ("stages", cfg.stages), ("stratify", cfg.stratify)):
                if value is not None:  # recorded where given (older runs have neither)
                    invocation[key] = list(value)
            if reviewed is not None:  # the review rows read: the same selection is computed again from them
                invocation["reviewed"] = reviewed.recorded()
            manifest["invocations"].append(invocation)
            manifest["modes"] = sorted(set(manifest["modes"]) | set(cfg.modes))
            if cfg.confidence != "none":
                manifest["confidence"] = cfg.confidence
            if cfg.abstain_option:
                manifest["abstain_option"] = True  # scoring reads single-choice answers with that option
            if structured is not None:
                manifest["structured_answers"] = structured  # scoring reads the structured answer field
            manifest["updated_at"] = time.time()
            mf.write_manifest(out, manifest)
            runner = Runner(bench_root=source.root, chains=chains, adapter=adapter, store=store,
                            settings=settings, preset=preset, retry_errors=cfg.retry_errors,
                            batch_size=model_cfg.batch_size, progress=progress, executor=executor, order=cfg.order,
                            suffix=VERBAL_CONFIDENCE_INSTRUCTION if cfg.confidence == "verbal" else None,
                            abstain_option=cfg.abstain_option)
            summary = RunSummary(out)
            status = "failed"
            try:
                with serving(cfg.serve, out, invocation):
                    runner.run(cfg.modes, items, summary)
                status = "interrupted" if summary.interrupted else "complete"
            except KeyboardInterrupt:  # outside the runner's own handling: e.g. while --serve waits for health
                status = "interrupted"
                raise
            finally:
                invocation.update(status=status, finished_at=time.time(), summary=summary.as_dict())
                manifest["counts"] = store.counts_by_mode()
                manifest["updated_at"] = time.time()
                mf.write_manifest(out, manifest)
        finally:
            store.close()
    finally:
        try:
            executor.close()
        finally:
            adapter.close()
    return summary
