"""The build pipeline: source -> cases -> clean items -> variants -> bench folder.

Pass 1 realizes the source's case specs in worker processes, validates each Case and quarantines bad
records. A source may define ``locality(spec)``: specs are then handed out grouped by that key (e.g.
the background image), so each worker keeps only a few decoded backgrounds in its cache. Realized
cases go to an on-disk spool; a scan in plan order then drops duplicates and builds the label pools
and splits. Pass 2 reads the cases back in plan order, drafts their items in workers, and assembles
them serially (balanced letters, ids, pairs, chains), streaming cases and items into the Parquet
files, so memory does not grow with the number of cases. With ``--variants`` pass 2 also spools each
case's clean items and collects the fact pools and a case index (a few strings per case); pass 3 reads
case and clean items back in plan order, adds the other cases its perturbations declared (V2/V3's
partner image) and makes the variants in workers (:class:`medr2.perturb.engine.VariantMaker`), one case
per job, appending them after the clean items as they come. Everything random is seeded from (seed,
record id), so the bytes depend neither on the number of workers nor on the order work is handed out in.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import medr2
from medr2.bench.format import QUARANTINE_FILE, BenchWriter, prepare_bench_folder
from medr2.bench.sorting import remove_stale as remove_stale_sorts
from medr2.builder.parallel import POOLS, Pool, ordered_map, worker_state
from medr2.builder.spool import SPOOL_GLOB, CaseSpool, ItemSpool
from medr2.builder.validate import validate_case
from medr2.errors import BadInput, Quarantine, QuarantineEntry
from medr2.images import CURRENT_IDENTITY, IdentityRule, ImageStore, load_image
from medr2.perturb.context import CaseIndex
from medr2.perturb.engine import Outcome, VariantMaker, collect
from medr2.perturb.facts import FactPools
from medr2.records import Case, Item
from medr2.renders import RENDER_MODES, RENDERS_FILE, write_renders
from medr2.sources.base import Source, get_source
from medr2.tasks import Assembler, CaseDrafts, LabelPools, assign_splits, draft_case, task_table
from medr2.tasks.companions import Linked, resolve
from medr2.tasks.contract import measure_outlines
from medr2.tasks.splits import SPLIT_UNITS, SplitAssignment, SplitKey


@dataclass
class BuildResult:
    root: Path
    manifest: dict[str, Any]
    n_cases: int
    n_items: int
    n_clean: int
    quarantined: int
    skipped: dict[str, dict[str, int]] = field(default_factory=dict)
    variants_skipped: dict[str, dict[str, int]] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass(frozen=True)
class _RealizeState:
    """Worker state of pass 1 (realize the source's records)."""

    source: Source
    images: ImageStore


@dataclass(frozen=True)
class _DraftState:
    """Worker state of pass 2 (draft each case's items)."""

    pools: LabelPools
    seed: int
    images: ImageStore


@dataclass(frozen=True)
class _VariantState:
    """Worker state of pass 3 (each case's variants)."""

    maker: VariantMaker


def _realize(spec: Any) -> Case | QuarantineEntry:
    state = worker_state(_RealizeState)
    source, images = state.source, state.images
    record = _spec_name(spec)
    try:
        case = source.realize(spec, images)
        try:
            validate_case(case, images.root, images.identity)
        except BadInput as e:  # name the source record (its file), not the bench-internal image path
            src = case.meta.get("file")
            raise BadInput(f"{e.reason} (case {case.case_id})", file=str(src) if src else e.file,
                           record=str(src) if src else e.record, field=e.field) from e
        # the outline of each structure as the stored image shows it (the outlines_visible clause; issue 40)
        return measure_outlines(case, lambda rel, mode: load_image(images.path(rel), mode=mode))
    except BadInput as e:
        return QuarantineEntry(e.file, e.record or record, e.field, e.reason, "source")
    except (ValueError, OSError) as e:  # pydantic ValidationError is a ValueError
        return QuarantineEntry(None, record, _error_field(e), f"{type(e).__name__}: {e}", "source")


def _draft(job: tuple[Case, Linked]) -> CaseDrafts:
    case, linked = job
    assert case.split is not None
    state = worker_state(_DraftState)
    return draft_case(case, state.pools, state.seed, case.split, state.images, linked=linked)


def _spec_name(spec: Any) -> str:
    for attr in ("case_id", "id", "name"):
        v = spec.get(attr) if isinstance(spec, dict) else getattr(spec, attr, None)
        if isinstance(v, str):
            return v
    return str(spec)[:120]


def _error_field(e: Exception) -> str | None:
    errors = getattr(e, "errors", None)
    if callable(errors):
        try:
            return ".".join(str(p) for p in errors()[0]["loc"])
        except (IndexError, KeyError, TypeError):
            return None
    return None


def _dispatch_order(source: Source, specs: Sequence[Any]) -> list[int]:
    """Plan indices in the order work is handed out: grouped by ``source.locality(spec)`` if defined."""
    locality = getattr(source, "locality", None)
    if locality is None:
        return list(range(len(specs)))
    return sorted(range(len(specs)), key=lambda i: (locality(specs[i]), i))


@dataclass
class _Realized:
    """Pass 1 in plan order: the accepted plan indices and what pools, splits and the manifest need."""

    accepted: list[int]
    pools: LabelPools
    splits: SplitAssignment
    licenses: Counter[str]
    ids: dict[str, int] = field(default_factory=dict)  # case id -> plan index (companions are resolved by it)


def _realize_all(source: Source, specs: Sequence[Any], images: ImageStore, spool: CaseSpool, workers: int,
                 quarantine: Quarantine, tracker: Any = None, pool: Pool | None = None,
                 split_unit: str = "patient") -> _Realized:
    order = _dispatch_order(source, specs)
    failed: dict[int, QuarantineEntry] = {}
    work = ((i, specs[i]) for i in order)
    for (i, _spec), res in ordered_map(_realize_indexed, work, workers, _RealizeState(source, images),
                                       n=len(specs), pool=pool):
        if isinstance(res, QuarantineEntry):
            failed[i] = res
        else:
            spool.put(i, res)
        if tracker is not None:
            tracker.advance()
    accepted: list[int] = []
    keys: list[SplitKey] = []
    seen: set[str] = set()
    pools = LabelPools.empty()
    licenses: Counter[str] = Counter()
    ids: dict[str, int] = {}
    for i in range(len(specs)):  # plan order: the first of two cases with one id wins, as before
        if i in failed:
            quarantine.add(failed[i])
            continue
        case = spool.get(i)
        if case.case_id in seen:
            quarantine.add(QuarantineEntry(case.image, case.case_id, "case_id", "duplicate case_id", "source"))
            continue
        seen.add(case.case_id)
        ids[case.case_id] = i
        accepted.append(i)
        keys.append(SplitKey(case.case_id, case.patient_id, case.background, case.split))
        pools.add_case(case)
        licenses[case.license] += 1
    return _Realized(accepted, pools, assign_splits(keys, split_unit), licenses, ids)


def _realize_indexed(job: tuple[int, Any]) -> Case | QuarantineEntry:
    return _realize(job[1])


def _prepare_out(out: Path) -> None:
    prepare_bench_folder(out)  # refuses a foreign folder; an old bench's manifest goes first
    # scratch files of a build that was killed (spools, partial Parquet, half-written images)
    for stale in [*out.glob(SPOOL_GLOB), *out.glob(".*.partial"), *out.glob("images/*.tmp")]:
        stale.unlink(missing_ok=True)
    remove_stale_sorts(out)  # the writer's sort folder and its spill files
    (out / RENDERS_FILE).unlink(missing_ok=True)  # an old bench's specs (this build writes its own, or none)


def build_bench(source_spec: str | Source, out: Path | str, seed: int = 0, n_cases: int | None = None,
                variants: Sequence[str] | str = (), workers: int | None = None, *,
                name: str | None = None, progress: Callable[[str], None] | None = None,
                tracker: Any = None, executor: str = "local", ray_address: str | None = None,
                renders: str = "deferred", split_unit: str = "patient",
                identity: IdentityRule = CURRENT_IDENTITY) -> BuildResult:
    """Build a bench folder at ``out``; see the module docstring. Returns counts and the manifest.
    ``renders``: ``deferred`` (the V2/V3/V8-V12 images are recorded in ``renders.parquet`` and rendered on
    first use, :mod:`medr2.renders`) or ``stored`` (every image written); the items are the same either way.
    ``progress`` gets a message per phase; ``tracker`` (``medr2.progress``) each phase with its counts.
    ``executor``: where the worker passes run (``local`` process pool, ``ray``: :mod:`medr2.builder.ray_pool`, on
    the cluster at ``ray_address``); the bench's bytes are the same either way. ``split_unit``: ``patient``
    (cases sharing a patient or a background share a split) or ``case`` (each case on its own;
    :mod:`medr2.tasks.splits`). ``identity``: the rule images are named by (:mod:`medr2.images`); every bench is
    built under the current one, format 3; :data:`medr2.images.PNG_BYTES` builds a format 1/2 bench as releases
    before format 3 did (for tests of the readers of such benches)."""
    from medr2.progress import Quiet

    tracker = tracker or Quiet()
    t0 = time.perf_counter()
    out = Path(out)
    if n_cases is not None and n_cases < 1:
        raise BadInput("must be at least 1", field="--cases")
    if workers is not None and workers < 1:
        raise BadInput("must be at least 1", field="--workers")
    codes = _parse_codes(variants)
    if renders not in RENDER_MODES:
        raise BadInput(f"unknown mode {renders!r}; known: {', '.join(RENDER_MODES)}", field="--renders")
    if split_unit not in SPLIT_UNITS:
        raise BadInput(f"unknown split unit {split_unit!r}; known: {', '.join(SPLIT_UNITS)}", field="--split-unit")
    from medr2.vocab import vocabulary

    vocabulary()  # a bad user or plugin vocabulary line is BadInput (exit 2) now, not a task quarantined per case
    if ray_address is not None and executor != "ray":
        raise BadInput("--ray-address goes with --executor ray", field="--executor")
    make_pool = POOLS.lookup(executor)
    source = get_source(source_spec) if isinstance(source_spec, str) else source_spec
    pool = make_pool(ray_address)
    try:
        return _build(source, source_spec, out, seed, n_cases, codes, workers, name, progress, tracker, t0, pool,
                      renders == "deferred", split_unit, identity)
    finally:
        if pool is not None:
            pool.close()


def _build(source: Source, source_spec: str | Source, out: Path, seed: int, n_cases: int | None,
           codes: tuple[str, ...], workers: int | None, name: str | None, progress: Callable[[str], None] | None,
           tracker: Any, t0: float, pool: Pool | None, defer_renders: bool = False,
           split_unit: str = "patient", identity: IdentityRule = CURRENT_IDENTITY) -> BuildResult:
    n_workers = workers or (pool.workers() if pool is not None else None) or os.cpu_count() or 1
    say = progress or (lambda _msg: None)
    _prepare_out(out)
    quarantine = Quarantine(out / QUARANTINE_FILE)
    images = ImageStore(out, defer_renders=defer_renders, identity=identity)

    specs = list(source.plan(seed, n_cases))
    say(f"realizing {len(specs)} cases with {n_workers} worker(s)")
    tracker.step(f"cases ({n_workers} worker{'s' if n_workers != 1 else ''})", len(specs))
    with CaseSpool(out) as spool, ItemSpool(out) as item_spool:
        done = _realize_all(source, specs, images, spool, n_workers, quarantine, tracker, pool, split_unit)
        if not done.accepted:
            raise BadInput(f"no usable cases (planned {len(specs)}, quarantined {quarantine.count}; "
                           f"see {out / QUARANTINE_FILE}){_top_reason(out / QUARANTINE_FILE)}",
                           file=_source_where(source_spec), field="--source")
        split_of = done.splits.by_case

        def with_split(i: int) -> Case:
            c = spool.get(i)
            return c.model_copy(update={"split": split_of[c.case_id]})

        def in_build(case_id: str) -> Case | None:
            i = done.ids.get(case_id)
            return None if i is None else with_split(i)

        say(f"generating items for {len(done.accepted)} cases")
        tracker.step("items per case", len(done.accepted))
        skipped: dict[str, Counter[str]] = {}
        assembler = Assembler(seed)
        shared = _VariantShared() if codes else None
        n_clean = 0
        state = _DraftState(done.pools, seed, images)
        with BenchWriter(out, name=name or out.name, identity=images.identity) as writer:
            # each case with its companions resolved to the build's cases (the one resolver, tasks.companions)
            jobs = ((c, resolve(c, in_build)) for c in (with_split(i) for i in done.accepted))
            for pos, ((case, _linked), drafts) in enumerate(ordered_map(_draft, jobs, n_workers, state,
                                                                        n=len(done.accepted), pool=pool)):
                writer.add_cases([case])
                for task_id, reason in drafts.skipped.items():
                    skipped.setdefault(task_id, Counter())[reason] += 1
                for entry in drafts.errors:
                    quarantine.add(entry)
                assert case.split is not None
                items = assembler.assemble(case, drafts, case.split)
                writer.add_items(items)
                n_clean += len(items)
                if shared is not None:
                    shared.add(case, done.accepted[pos])
                    item_spool.put(pos, items)
                tracker.advance()
            variant_skips: dict[str, dict[str, int]] = {}
            if shared is not None:
                say(f"generating variants {','.join(codes)}")
                tracker.step(f"variants {','.join(codes)} per case", len(done.accepted))
                variant_skips = _variants(out, done.accepted, with_split, item_spool, shared, codes, seed, images,
                                          n_workers, writer, tracker, pool)
            tracker.step("writing the manifest")
            images.close_sink()
            extra = _manifest_extra(name or out.name, source, source_spec, seed, n_cases, codes, skipped,
                                    variant_skips, quarantine.count, done.splits.conflicts, done.licenses, len(specs),
                                    split_unit)
            deferred = write_renders(out)  # renders.parquet, before the manifest names it
            if deferred is not None:
                extra["renders"] = deferred
            manifest = writer.close(extra)
    return BuildResult(out, manifest, len(done.accepted), writer.n_items, n_clean, quarantine.count,
                       {k: dict(v) for k, v in skipped.items()}, variant_skips, time.perf_counter() - t0)


def _parse_codes(variants: Sequence[str] | str) -> tuple[str, ...]:
    if not variants:
        return ()
    from medr2.perturb.registry import parse_variants

    return parse_variants(variants if isinstance(variants, str) else list(variants))


@dataclass
class _VariantShared:
    """What variants of one case may look at across the bench, collected in pass 2: fact pools, an
    index of every case by modality, and where each case is in the case spool."""

    pools: FactPools = field(default_factory=FactPools)
    index: CaseIndex = field(default_factory=CaseIndex)
    spool_index: dict[str, int] = field(default_factory=dict)

    def add(self, case: Case, spool_index: int) -> None:
        self.pools.add(case)
        self.index.add(case)
        self.spool_index[case.case_id] = spool_index


_VariantJob = tuple[Case, list[Item], list[Case]]
VARIANT_CHUNK = 4  # cases per variants job: a case has ~13x as many variant as clean items; keep few in flight


def _make_variants(job: _VariantJob) -> list[Outcome]:
    return worker_state(_VariantState).maker.make(*job)


def _variants(out: Path, accepted: list[int], with_split: Callable[[int], Case], item_spool: ItemSpool,
              shared: _VariantShared, codes: tuple[str, ...], seed: int, images: ImageStore, workers: int,
              writer: BenchWriter, tracker: Any = None, pool: Pool | None = None) -> dict[str, dict[str, int]]:
    """Pass 3: the variants of each case, in plan order, appended to ``writer``; returns the skip counts.

    Variant ids hash the case and parent item ids, so two cases never make the same variant item:
    dropping repeats within a case is dropping them across the bench."""
    maker = VariantMaker(out, images, seed, codes, shared.pools, shared.index)

    def jobs() -> Iterator[_VariantJob]:
        for pos, i in enumerate(accepted):
            case = with_split(i)
            related = [with_split(shared.spool_index[cid]) for cid in maker.related(case)]
            yield case, item_spool.get(pos), related

    skips: dict[str, Counter[str]] = {c: Counter() for c in codes}
    quarantine = Quarantine(out / QUARANTINE_FILE)  # variant entries are not counted in the manifest's n
    for _job, outcomes in ordered_map(_make_variants, jobs(), workers, _VariantState(maker), n=len(accepted),
                                      max_chunk=VARIANT_CHUNK, pool=pool):
        writer.add_items(collect(outcomes, set(), skips, quarantine))
        if tracker is not None:
            tracker.advance()
    return {c: dict(sorted(skips[c].items())) for c in codes}


def _manifest_extra(name: str, source: Source, source_spec: str | Source, seed: int, n_cases: int | None,
                    codes: tuple[str, ...], skipped: dict[str, Counter[str]],
                    variant_skips: dict[str, dict[str, int]], n_quarantined: int, split_conflicts: int,
                    licenses: Counter[str], n_planned: int, split_unit: str = "patient") -> dict[str, Any]:
    spec_text = source_spec if isinstance(source_spec, str) else getattr(source, "name", type(source).__name__)
    return {
        "name": name,
        "build": {
            "source": spec_text,
            "seed": seed,
            "cases_requested": n_cases,
            "cases_planned": n_planned,
            "variants": list(codes),
            "split_shares": {"train": 60, "val": 10, "test": 30},
            "split_unit": split_unit,
            "split_conflicts_resolved": split_conflicts,
            "builder": f"medr2 {medr2.__version__}",
            **_multi_info(source),
            **_source_report(source),
        },
        "tasks": task_table(),
        "skipped": {k: dict(sorted(v.items())) for k, v in sorted(skipped.items())},
        "variants_skipped": variant_skips,
        "quarantine": {"n": n_quarantined, "file": QUARANTINE_FILE},
        "sources": {
            "synthetic_note": ("cases with synthetic parts carry the names of those fields in Case.synthetic_fields; "
                               "findings/structures placed synthetically have synthetic=true"),
            "licenses": dict(sorted(licenses.items())),
        },
    }


def _source_where(spec: str | Source) -> str | None:
    """The data a source spec names (``folder:/data`` -> ``/data``, several joined), for error messages."""
    specs = getattr(spec, "specs", None) if not isinstance(spec, str) else [spec]
    paths = [s.split(":", 1)[1] for s in (specs or []) if isinstance(s, str) and ":" in s]
    return ", ".join(paths) or None


def _top_reason(path: Path) -> str:
    """``"; every one: field 'reason'"`` / ``"; most often: field (n), e.g. 'reason'"`` from a quarantine file."""
    entries = Quarantine.read(path)
    if not entries:
        return ""
    (fld, n), = Counter(e.field or "-" for e in entries).most_common(1)
    first = next(e for e in entries if (e.field or "-") == fld)
    reason = first.reason
    where = f" ({first.file})" if first.file else ""
    if n == len(entries) and all(e.reason == reason for e in entries):
        return f"; every one: {fld}: {reason!r}{where}"
    return f"; most often: {fld} ({n} of {len(entries)}), e.g. {reason!r}{where}"


def _source_report(source: Source) -> dict[str, Any]:
    """``source_report``: per reader that gives one (``report()``: the split rule used, counted notes),
    for a multi-source build per source spec; nothing for a source without one (the manifest unchanged)."""
    if getattr(source, "name", None) == "multi":
        reps = {spec: rep() for spec, s in zip(getattr(source, "specs", []), getattr(source, "sources", []),
                                                strict=True) if callable(rep := getattr(s, "report", None))}
        return {"source_report": reps} if reps else {}
    rep = getattr(source, "report", None)
    return {"source_report": rep()} if callable(rep) else {}


def _multi_info(source: Source) -> dict[str, Any]:
    """The sources and quotas of a multi-source build (``medr2 build --source A --source B --quota ...``)."""
    specs = getattr(source, "specs", None)
    if getattr(source, "name", None) != "multi" or not isinstance(specs, list):
        return {}
    quota = getattr(source, "quota", [None] * len(specs))
    return {"sources": list(specs), "quotas": {s: q for s, q in zip(specs, quota, strict=True) if q is not None}}
