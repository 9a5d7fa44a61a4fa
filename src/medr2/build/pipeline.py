"""The build pipeline: source -> cases -> clean items -> variants -> bench folder.

Pass 1 realizes the source's case specs in worker processes (order kept), validates each Case and
quarantines bad records. Pass 2 builds label pools from all valid cases, drafts the items of every
case in workers, and assembles them serially (balanced letters, ids, pairs, chains), streaming them
into ``items.parquet``. Pass 3 (optional) asks :mod:`medr2.perturb.engine` for variants. Everything
random is seeded from (seed, record id), so the bytes do not depend on the number of workers.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import medr2
from medr2.bench.format import CASES_FILE, ITEMS_FILE, MANIFEST, QUARANTINE_FILE, BenchWriter
from medr2.build.validate import validate_case
from medr2.errors import BadInput, Quarantine, QuarantineEntry
from medr2.imageio import ImageStore
from medr2.records import Case, Item
from medr2.sources.base import Source, get_source
from medr2.tasks import Assembler, CaseDrafts, LabelPools, assign_splits, draft_case, task_table

T = TypeVar("T")
R = TypeVar("R")


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


# --- worker state (set once per process by the pool initializer; fork shares it for free) ---
_STATE: dict[str, Any] = {}


def _init_worker(state: dict[str, Any]) -> None:
    _STATE.clear()
    _STATE.update(state)


def _realize(spec: Any) -> Case | QuarantineEntry:
    source: Source = _STATE["source"]
    images: ImageStore = _STATE["images"]
    record = _spec_name(spec)
    try:
        case = source.realize(spec, images)
        validate_case(case, images.root)
        return case
    except BadInput as e:
        return QuarantineEntry(e.file, e.record or record, e.field, e.reason, "source")
    except (ValueError, OSError) as e:  # pydantic ValidationError is a ValueError
        return QuarantineEntry(None, record, _error_field(e), f"{type(e).__name__}: {e}", "source")


def _draft(case: Case) -> CaseDrafts:
    return draft_case(case, _STATE["pools"], _STATE["seed"], _STATE["splits"][case.case_id], _STATE["images"])


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


def _parallel_map(fn: Callable[[T], R], items: Sequence[T], workers: int, state: dict[str, Any]) -> Iterator[R]:
    """``map`` in plan order; in-process for one worker, else a process pool with chunks."""
    if workers <= 1 or len(items) <= 1:
        _init_worker(state)
        yield from map(fn, items)
        return
    chunk = max(1, min(64, len(items) // (workers * 4)))
    with ProcessPoolExecutor(max_workers=workers, initializer=_init_worker, initargs=(state,)) as ex:
        yield from ex.map(fn, items, chunksize=chunk)


def _prepare_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise BadInput("output path exists and is not a folder", file=str(out), field="--out")
    if out.is_dir():
        known = {MANIFEST, CASES_FILE, ITEMS_FILE, QUARANTINE_FILE, "images"}
        foreign = [p.name for p in out.iterdir() if p.name not in known and not p.name.startswith(".")]
        if foreign:
            raise BadInput(f"output folder is not empty and not a bench (found {foreign[0]!r}); choose another --out",
                           file=str(out), field="--out")
    out.mkdir(parents=True, exist_ok=True)
    (out / QUARANTINE_FILE).unlink(missing_ok=True)


def build_bench(source_spec: str | Source, out: Path | str, seed: int = 0, n_cases: int | None = None,
                variants: Sequence[str] | str = (), workers: int | None = None, *,
                name: str | None = None, progress: Callable[[str], None] | None = None) -> BuildResult:
    """Build a bench folder at ``out``; see the module docstring. Returns counts and the manifest."""
    t0 = time.perf_counter()
    out = Path(out)
    if n_cases is not None and n_cases < 1:
        raise BadInput("must be at least 1", field="--cases")
    if workers is not None and workers < 1:
        raise BadInput("must be at least 1", field="--workers")
    codes = _parse_codes(variants)
    source = get_source(source_spec) if isinstance(source_spec, str) else source_spec
    n_workers = workers or os.cpu_count() or 1
    say = progress or (lambda _msg: None)
    _prepare_out(out)
    quarantine = Quarantine(out / QUARANTINE_FILE)
    images = ImageStore(out)

    specs = list(source.plan(seed, n_cases))
    say(f"realizing {len(specs)} cases with {n_workers} worker(s)")
    cases: list[Case] = []
    seen: set[str] = set()
    for res in _parallel_map(_realize, specs, n_workers, {"source": source, "images": images}):
        if isinstance(res, QuarantineEntry):
            quarantine.add(res)
        elif res.case_id in seen:
            quarantine.add(QuarantineEntry(res.image, res.case_id, "case_id", "duplicate case_id", "source"))
        else:
            seen.add(res.case_id)
            cases.append(res)
    if not cases:
        raise BadInput(f"no usable cases (planned {len(specs)}, quarantined {quarantine.count}; "
                       f"see {out / QUARANTINE_FILE})", field="--source")

    split_of = assign_splits(cases)
    cases = [c.model_copy(update={"split": split_of.by_case[c.case_id]}) for c in cases]
    pools = LabelPools.from_cases(cases)
    say(f"generating items for {len(cases)} cases")
    skipped: dict[str, Counter[str]] = {}
    assembler = Assembler(seed)
    clean: list[Item] = []
    state = {"pools": pools, "seed": seed, "splits": split_of.by_case, "images": images}
    with BenchWriter(out, name=name or out.name) as writer:
        writer.add_cases(cases)
        for case, drafts in zip(cases, _parallel_map(_draft, cases, n_workers, state), strict=True):
            for task_id, reason in drafts.skipped.items():
                skipped.setdefault(task_id, Counter())[reason] += 1
            for entry in drafts.errors:
                quarantine.add(entry)
            items = assembler.assemble(case, drafts, split_of.by_case[case.case_id])
            writer.add_items(items)
            clean.extend(items)
        variant_items, variant_skips = _variants(out, cases, clean, codes, seed, images, n_workers, say)
        writer.add_items(variant_items)
        manifest = writer.close(_manifest_extra(
            name or out.name, source, source_spec, seed, n_cases, codes, skipped, variant_skips,
            quarantine.count, split_of.conflicts, cases, specs))
    return BuildResult(out, manifest, len(cases), writer.n_items, len(clean), quarantine.count,
                       {k: dict(v) for k, v in skipped.items()}, variant_skips, time.perf_counter() - t0)


def _parse_codes(variants: Sequence[str] | str) -> tuple[str, ...]:
    if not variants:
        return ()
    from medr2.perturb.registry import parse_variants

    return parse_variants(variants if isinstance(variants, str) else list(variants))


def _variants(out: Path, cases: list[Case], clean: list[Item], codes: tuple[str, ...], seed: int,
              images: ImageStore, workers: int, say: Callable[[str], None]
              ) -> tuple[list[Item], dict[str, dict[str, int]]]:
    if not codes:
        return [], {}
    from medr2.perturb.engine import generate_variants

    say(f"generating variants {','.join(codes)}")
    items, skips = generate_variants(out, cases, clean, codes, seed, images, workers)
    return list(items), {k: dict(v) for k, v in skips.items()}


def _manifest_extra(name: str, source: Source, source_spec: str | Source, seed: int, n_cases: int | None,
                    codes: tuple[str, ...], skipped: dict[str, Counter[str]],
                    variant_skips: dict[str, dict[str, int]], n_quarantined: int, split_conflicts: int,
                    cases: list[Case], specs: Iterable[Any]) -> dict[str, Any]:
    spec_text = source_spec if isinstance(source_spec, str) else getattr(source, "name", type(source).__name__)
    return {
        "name": name,
        "build": {
            "source": spec_text,
            "seed": seed,
            "cases_requested": n_cases,
            "cases_planned": len(list(specs)),
            "variants": list(codes),
            "split_shares": {"train": 60, "val": 10, "test": 30},
            "split_conflicts_resolved": split_conflicts,
            "builder": f"medr2 {medr2.__version__}",
        },
        "tasks": task_table(),
        "skipped": {k: dict(sorted(v.items())) for k, v in sorted(skipped.items())},
        "variants_skipped": variant_skips,
        "quarantine": {"n": n_quarantined, "file": QUARANTINE_FILE},
        "sources": {
            "synthetic_note": ("cases with synthetic parts carry the names of those fields in Case.synthetic_fields; "
                               "findings/structures placed synthetically have synthetic=true"),
            "licenses": dict(sorted(Counter(c.license for c in cases).items())),
        },
    }
