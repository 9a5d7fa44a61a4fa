"""What ``medr2 view`` reads: the runs as the report loads them (``medr2.reporting.inputs.load_run``: metrics,
a :class:`~medr2.reporting.inputs.ScoreTable` over ``scores.parquet``, the store and the claims read per row asked),
their benches by columns (``medr2.reporting.write.load_benches``), and pages of scored rows.

Nothing holds a whole run. The items behind a leaderboard cell are found by scanning the filter columns of
``scores.parquet`` batch by batch (:data:`FILTER_FIELDS`, a few bytes a row) into the row numbers that match
(cached per filter, :data:`CACHED_FILTERS` of them); a page reads only the row groups holding its rows, and the
bench items of that page by id. A row is shown through the report's own row builder
(``medr2.reporting.browser``: the same fields, the same cut and cleaned text, the same claims and confidence) with
its images as links to the server's image route instead of data URIs (:class:`ImageLinks`).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput
from medr2.records import Item
from medr2.reporting.browser import Thumbnails, _clean_view, _row, is_visual_variant
from medr2.reporting.inputs import RunData, ScoreTable, claims_of, load_run, unique_labels
from medr2.reporting.items import BenchItems
from medr2.reporting.leaderboard import Leaderboard, breakdown_columns, build_leaderboard

# the score columns the items page filters on, in the order of its form; ``stage`` is a number
FILTER_FIELDS = ("mode", "task", "stage", "variant", "verdict")
MAX_STAGE = 127  # the stage column is int8
SLICE_PREFIX = "slice."  # URL parameters of a slice's case-level fields
PAGE_ROWS = 24  # cards per page
MAX_PAGE_ROWS = 200
CACHED_FILTERS = 32  # matching row numbers kept per run (a uint32 or int64 per matching row)
SCAN_ROWS = 65_536  # rows per batch of a filter scan
IMAGE_NAME = re.compile(r"[0-9a-f]{64}\.png")  # a bench image: images/<sha256>.png (docs/architecture.md)
IMAGES_DIR = "images"


@dataclass(frozen=True)
class Query:
    """The items page's question: the rows of run ``run`` whose filter columns equal the values given."""

    run: int
    filters: tuple[tuple[str, str], ...] = ()  # (field of FILTER_FIELDS, value), in FILTER_FIELDS order
    page: int = 0
    size: int = PAGE_ROWS
    # a subgroup slice's case-level fields (``medr2 score --slice``: sex, age, modality, ...) and their values,
    # as the run's slices.json labels them; URL parameters ``slice.FIELD=VALUE``
    cases: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        for name, value in self.filters:
            if name not in FILTER_FIELDS:
                raise BadInput(f"not a filter (one of {', '.join(FILTER_FIELDS)})", field=name)
            if name == "stage" and not (re.fullmatch(r"[0-9]{1,3}", value) and int(value) <= MAX_STAGE):
                raise BadInput(f"must be a whole number from 0 to {MAX_STAGE}", field=name)
        if self.cases:
            from medr2.bench.slicefields import SLICE_FIELDS

            for name, _ in self.cases:
                if name not in SLICE_FIELDS or SLICE_FIELDS[name].level != "case":
                    raise BadInput("not a case-level slice field", field=SLICE_PREFIX + name)

    @classmethod
    def parse(cls, params: Mapping[str, str], n_runs: int) -> Query:
        """From URL parameters (``run``, the filter fields, ``page``, ``size``); a bad value is :class:`BadInput`
        naming the parameter. An empty filter value means any."""
        run = _int_param(params, "run", 0, 0, n_runs - 1)
        page = _int_param(params, "page", 0, 0, 10**9)
        size = _int_param(params, "size", PAGE_ROWS, 1, MAX_PAGE_ROWS)
        filters = []
        for name in FILTER_FIELDS:
            value = params.get(name, "")
            if value == "":
                continue
            if name == "stage":
                _int_param(params, name, 0, 0, MAX_STAGE)
            filters.append((name, value))
        cases = tuple(sorted((k[len(SLICE_PREFIX):], v) for k, v in params.items() if k.startswith(SLICE_PREFIX)))
        return cls(run, tuple(filters), page, size, cases)

    def params(self, **change: Any) -> dict[str, str]:
        """The URL parameters of this query with ``change`` applied (a filter set to "" is dropped)."""
        out = {"run": str(self.run), **dict(self.filters), **{SLICE_PREFIX + k: v for k, v in self.cases}}
        if self.page:
            out["page"] = str(self.page)
        if self.size != PAGE_ROWS:
            out["size"] = str(self.size)
        out.update({k: str(v) for k, v in change.items()})
        return {k: v for k, v in out.items() if v != "" and not (k == "page" and v == "0")}


def _int_param(params: Mapping[str, str], name: str, default: int, lo: int, hi: int) -> int:
    text = params.get(name, "")
    if text == "":
        return default
    if not re.fullmatch(r"[0-9]{1,10}", text) or not lo <= int(text) <= hi:
        raise BadInput(f"must be a whole number from {lo} to {hi}", field=name)
    return int(text)


@dataclass
class ImageLinks(Thumbnails):
    """The report's image index (:class:`~medr2.reporting.browser.Thumbnails`) giving same-origin URLs of the
    server's image route (``/img/BENCH/NAME``) instead of data URIs: only an image in a bench's ``images/``
    folder gets one (:func:`image_url`)."""

    roots: tuple[Path, ...] = ()

    def add(self, path: Path) -> int:
        if path not in self._index:
            self._index[path] = len(self.uris)
            self.uris.append(image_url(self.roots, path))
            self.sizes.append(_image_size(path))
        return self._index[path]


def image_url(roots: tuple[Path, ...], path: Path) -> str:
    """``/img/K/NAME`` for ``path`` = ``roots[K]/images/NAME`` (NAME a sha256 file name); else :class:`BadInput`."""
    resolved = path.resolve()
    for k, root in enumerate(roots):
        if resolved.parent == (root / IMAGES_DIR).resolve() and IMAGE_NAME.fullmatch(resolved.name):
            return f"/img/{k}/{resolved.name}"
    raise BadInput("an image outside the benches' images/ folders is not served", file=str(path))


def _image_size(path: Path) -> tuple[int, int]:
    from medr2.images import open_checked

    with open_checked(path) as im:
        return im.width, im.height


def bench_image(roots: tuple[Path, ...], bench: str, name: str) -> Path:
    """The file the image route serves for ``/img/BENCH/NAME``: bench ``BENCH``'s ``images/NAME`` (rendered first
    where the bench defers it), NAME a sha256 file name. Anything else is :class:`BadInput` (the route's 404):
    no other file of a bench, and nothing outside the benches, is ever read."""
    from medr2.renders import image_path

    if not re.fullmatch(r"0|[1-9][0-9]{0,3}", bench) or int(bench) >= len(roots) or not IMAGE_NAME.fullmatch(name):
        raise BadInput("no such image", field="image")
    return image_path(roots[int(bench)], f"{IMAGES_DIR}/{name}")


class RunRows:
    """One run's ``scores.parquet`` paged: the row numbers matching a filter (scanned once, cached), the score
    rows of given row numbers (only their row groups read), the rows of one item."""

    def __init__(self, table: ScoreTable) -> None:
        import pyarrow.parquet as pq

        self.table = table
        md = pq.read_metadata(str(table.path))
        sizes = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
        self.starts = np.cumsum([0, *sizes])
        self._cache: OrderedDict[tuple[tuple[str, str], ...], np.ndarray] = OrderedDict()
        self._facets: dict[str, list[str]] | None = None

    def _file(self, dictionary: bool = False) -> Any:
        """The file; ``dictionary``: its text filter columns read as dictionary arrays (a filter compares the
        row group's few distinct values, then takes the answer by index)."""
        from medr2.arrowmem import open_parquet

        text = [f for f in FILTER_FIELDS if f != "stage"]
        return open_parquet(self.table.path, read_dictionary=text) if dictionary else open_parquet(self.table.path)

    def matching(self, filters: tuple[tuple[str, str], ...], cases: tuple[tuple[str, str], ...] = (),
                 case_ids: frozenset[str] | None = None) -> np.ndarray:
        """Row numbers (file order) of the rows whose filter columns equal ``filters``' values (and, with
        ``case_ids``, whose case is one of them: the cases of the slice ``cases`` names)."""
        key = (*filters, *((f"{SLICE_PREFIX}{k}", v) for k, v in cases))
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        if filters or case_ids is not None:
            got = self._scan(filters, case_ids)
        else:
            got = np.arange(len(self.table), dtype=np.int64)
        self._cache[key] = got
        while len(self._cache) > CACHED_FILTERS:
            self._cache.popitem(last=False)
        return got

    def _scan(self, filters: tuple[tuple[str, str], ...], case_ids: frozenset[str] | None = None) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        cols = [name for name, _ in filters] + (["case_id"] if case_ids is not None else [])
        in_cases = pa.array(sorted(case_ids), type=pa.string()) if case_ids is not None else None
        parts: list[np.ndarray] = []
        offset = 0
        try:
            with self._file(dictionary=True) as f:
                for batch in f.iter_batches(SCAN_ROWS, columns=cols, use_threads=False):
                    mask = None
                    for name, value in filters:
                        m = pc.fill_null(_equals(batch.column(name), int(value) if name == "stage" else value),
                                         False)
                        mask = m if mask is None else pc.and_(mask, m)
                    if in_cases is not None:
                        m = pc.fill_null(pc.is_in(batch.column("case_id").cast(pa.string()), value_set=in_cases),
                                         False)
                        mask = m if mask is None else pc.and_(mask, m)
                    parts.append(np.asarray(pc.indices_nonzero(mask)) + offset)
                    offset += batch.num_rows
        except (OSError, pa.ArrowException) as e:
            raise BadInput(f"cannot read parquet: {e}", file=str(self.table.path)) from e
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)

    def facets(self) -> dict[str, list[str]]:
        """The distinct values of each filter field (the items page's choices), from one scan of those columns."""
        if self._facets is None:
            import pyarrow as pa
            import pyarrow.compute as pc

            seen: dict[str, set[str]] = {f: set() for f in FILTER_FIELDS}
            cols = [f for f in FILTER_FIELDS if f in self.table.columns]
            try:
                with self._file(dictionary=True) as f:
                    for batch in f.iter_batches(SCAN_ROWS, columns=cols, use_threads=False):
                        for name in cols:
                            col = batch.column(name)
                            if pa.types.is_dictionary(col.type):  # the values the batch's rows use
                                col = col.dictionary.take(pc.unique(col.indices).drop_null())
                            seen[name].update(str(v) for v in pc.unique(col).to_pylist() if v is not None)
            except (OSError, pa.ArrowException) as e:
                raise BadInput(f"cannot read parquet: {e}", file=str(self.table.path)) from e
            self._facets = {k: sorted(v, key=lambda x: (len(x), x) if k == "stage" else (0, x))
                            for k, v in seen.items()}
        return self._facets

    def rows(self, numbers: np.ndarray) -> list[dict[str, Any]]:
        """The score rows (the report's columns) of ``numbers``, in their order, reading only their row groups."""
        import pyarrow as pa

        numbers = np.asarray(numbers, dtype=np.int64)
        groups = np.searchsorted(self.starts, numbers, side="right") - 1
        by_number: dict[int, dict[str, Any]] = {}
        try:
            with self._file() as f:
                for g in np.unique(groups):
                    local = numbers[groups == g] - self.starts[g]
                    t = f.read_row_group(int(g), columns=list(self.table.columns), use_threads=False)
                    for n, row in zip(local, t.take(pa.array(local)).to_pylist(), strict=True):
                        by_number[int(n + self.starts[g])] = row
        except (OSError, pa.ArrowException) as e:
            raise BadInput(f"cannot read parquet: {e}", file=str(self.table.path)) from e
        return [by_number[int(n)] for n in numbers]

    def of_item(self, item_id: str) -> list[dict[str, Any]]:
        """Every score row of ``item_id`` (each mode), in file order."""
        import pyarrow as pa
        import pyarrow.compute as pc

        hits: list[np.ndarray] = []
        offset = 0
        try:
            with self._file() as f:
                for batch in f.iter_batches(SCAN_ROWS, columns=["item_id"], use_threads=False):
                    m = pc.fill_null(pc.equal(batch.column(0), pa.scalar(item_id, batch.column(0).type)), False)
                    hits.append(np.asarray(pc.indices_nonzero(m)) + offset)
                    offset += batch.num_rows
        except (OSError, pa.ArrowException) as e:
            raise BadInput(f"cannot read parquet: {e}", file=str(self.table.path)) from e
        numbers = np.concatenate(hits) if hits else np.zeros(0, dtype=np.int64)
        return self.rows(numbers) if len(numbers) else []


def _equals(col: Any, value: str | int) -> Any:
    """Whether each value of ``col`` is ``value`` (a dictionary array: its dictionary compared, then taken by
    index; null stays null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(col.type):
        hit = pc.equal(col.dictionary, pa.scalar(value).cast(col.dictionary.type))
        return pc.take(hit, col.indices)
    return pc.equal(col, pa.scalar(value).cast(col.type))


@dataclass
class Page:
    """One page of cards: the rows as the report's browser builds them, and where they are in the whole."""

    query: Query
    total: int
    rows: list[dict[str, Any]]
    images: list[str]
    missing_items: int = 0

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.query.size))


@dataclass
class ViewData:
    """The runs and benches ``medr2 view`` shows (see the module docstring)."""

    runs: list[RunData]
    items: BenchItems
    roots: tuple[Path, ...]
    warnings: list[str]
    leaderboard: Leaderboard
    scores: list[RunRows] = field(default_factory=list)
    _case_values: dict[Any, Any] = field(default_factory=dict)  # case-level slice values per bench, fields, bins

    @classmethod
    def open(cls, run_dirs: list[Path] | list[str], *, bench: Path | str | None = None) -> ViewData:
        from medr2.reporting.write import load_benches

        if not run_dirs:
            raise BadInput("give at least one run folder", field="RUN")
        runs = [load_run(d, bench=bench) for d in run_dirs]
        unique_labels(runs)
        items, benches, warnings = load_benches(runs)
        roots = tuple(benches)
        tables = [r.scores for r in runs if isinstance(r.scores, ScoreTable)]  # load_run reads scores.parquet
        assert len(tables) == len(runs)
        lb = build_leaderboard(runs, breakdown_columns(runs))
        return cls(runs, items, roots, warnings, lb, [RunRows(t) for t in tables])

    def run_index(self, label: str) -> int:
        return next(i for i, r in enumerate(self.runs) if r.label == label)

    def cell_query(self, row: int, key: str) -> Query:
        """The items behind the leaderboard's cell (row ``row``, column ``key``): its run and mode, and the
        rows the column declares it is computed on (``Column.items``)."""
        lb_row = self.leaderboard.rows[row]
        col = next(c for c in self.leaderboard.columns if c.key == key)
        wanted = dict((("mode", lb_row.mode), *col.items))
        return Query(self.run_index(lb_row.run), tuple((f, wanted[f]) for f in FILTER_FIELDS if f in wanted))

    def slice_query(self, run_label: str, mode: str, key: Mapping[str, str]) -> Query:
        """The items of a subgroup slice (a row of the run's slices.json, ``key`` {field: value}): its item-level
        fields (variant, stage, task) as filters, its case-level ones as the slice's cases."""
        wanted = {"mode": mode, **{k: v for k, v in key.items() if k in FILTER_FIELDS}}
        cases = tuple(sorted((k, v) for k, v in key.items() if k not in FILTER_FIELDS))
        return Query(self.run_index(run_label), tuple((f, wanted[f]) for f in FILTER_FIELDS if f in wanted),
                     cases=cases)

    def case_ids(self, run: int, cases: tuple[tuple[str, str], ...]) -> frozenset[str]:
        """The cases of the run's bench whose case-level slice fields have the values ``cases`` names, read as
        ``medr2 score --slice`` read them (``medr2.bench.slicefields.case_values``, with the run's bins)."""
        from medr2.bench.slicefields import case_values

        r = self.runs[run]
        bins = {str(k): tuple(float(e) for e in v) for k, v in
                ((r.analysis.get("slices") or {}).get("bins") or {}).items() if isinstance(v, list)}
        fields = tuple(k for k, _ in cases)
        memo = (self._bench_root(r), fields, tuple(sorted(bins.items())))
        if memo not in self._case_values:
            self._case_values[memo] = case_values(memo[0], list(fields), bins)
        table = self._case_values[memo]
        keep = np.logical_and.reduce([table[k].to_numpy() == v for k, v in cases])
        return frozenset(str(c) for c in table.index[keep])

    def _bench_root(self, run: RunData) -> Path:
        assert run.bench_root is not None
        return run.bench_root.resolve()

    def page(self, q: Query) -> Page:
        """The cards of page ``q.page`` of the rows ``q`` selects."""
        ids = self.case_ids(q.run, q.cases) if q.cases else None
        numbers = self.scores[q.run].matching(q.filters, q.cases, ids)
        chosen = numbers[q.page * q.size:(q.page + 1) * q.size]
        rows = self.scores[q.run].rows(chosen) if len(chosen) else []
        links = ImageLinks(roots=self.roots)
        cards, missing = self._cards(q.run, rows, links, with_clean=False)
        return Page(q, int(len(numbers)), cards, links.uris, missing)

    def item(self, item_id: str) -> tuple[Item | None, list[dict[str, Any]], list[str]]:
        """Every run's and mode's card of one item (side by side), with the item; (None, [], []) if no run
        scored it."""
        links = ImageLinks(roots=self.roots)
        cards: list[dict[str, Any]] = []
        for ri, rr in enumerate(self.scores):
            got, _ = self._cards(ri, rr.of_item(item_id), links, with_clean=True)
            cards += got
        found = self.items.fetch([item_id]).get(item_id)
        return found, cards, links.uris

    def _cards(self, ri: int, rows: list[dict[str, Any]], links: ImageLinks, *, with_clean: bool,
               ) -> tuple[list[dict[str, Any]], int]:
        run = self.runs[ri]
        root = self._bench_root(run)
        held = self.items.fetch({str(s["item_id"]) for s in rows})
        claims = claims_of(run.claims, [(str(s["item_id"]), str(s["mode"])) for s in rows if s["item_id"] in held])
        out = []
        for s in rows:
            it = held.get(str(s["item_id"]))
            if it is None:
                continue
            card = _row(ri, run, s, it, links, root, claims.get((str(s["item_id"]), str(s["mode"]))))
            card["clean"] = self._clean(ri, s, it, links, root) if with_clean else None
            out.append(card)
        return out, len(rows) - len(out)

    def _clean(self, ri: int, s: dict[str, Any], it: Item, links: ImageLinks, root: Path) -> dict[str, Any] | None:
        """An image variant's clean item and the model's answer on it (the report's clean panel)."""
        if not is_visual_variant(it.variant) or not it.parent_id:
            return None
        parents = self.items.fetch([it.parent_id])
        answers = {(ri, str(p["item_id"]), str(p["mode"])): p for p in self.scores[ri].of_item(it.parent_id)}
        return _clean_view(ri, str(s["mode"]), it, parents, answers, links, root)

    def close(self) -> None:
        for t in self.items.tables:
            t.close()


__all__ = ["FILTER_FIELDS", "ImageLinks", "Page", "Query", "RunRows", "ViewData",
           "bench_image", "image_url"]
