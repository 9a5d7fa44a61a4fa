"""Clinician review of a bench (``medr2 review BENCH``, docs/review.md): the reviews table and what is read from it.

Reviews live in ``BENCH/reviews.sqlite`` (:data:`REVIEWS_FILE`), never in ``items.parquet``: two append-only
tables (``reviews``, ``adjudications``; an UPDATE or DELETE is refused by a trigger), each row committed before
the page that sent it gets its answer (WAL, ``synchronous = FULL``: a killed server loses no saved review).
A row is one person's verdict on one item: ``accept``, ``fix`` (the edited fields as JSON, the original kept
in ``items.parquet``) or ``reject``, a reason from :data:`REASONS` (for a fix or a reject), a free note and the
time. A reviewer's later row on the same item replaces their earlier one in what is read (the rows stay).

What an item's reviews come to (:func:`outcomes`): the latest adjudication where there is one; else the
reviewers' verdicts when they agree (a fix: the same edits); else ``disputed`` (the adjudication queue). A
final ``fix`` makes a new item (:func:`fixed_item`): the parent's record with the edits, its id the content id
of the result with ``parent_id`` the original's. ``--reviewed accepted`` (``medr2 eval``/``export``) keeps the
items whose outcome is ``accept`` and the items the settled fixes make (:func:`reviewed_selection`), the ids
through the selection's one item filter (``ItemFilter.item_ids``), the fixed items added to the bench's reader
(``BenchTable.add_items``). Rows are numbered in the order written, so a selection records the last row ids it
read (:class:`Through`) and is computed again exactly from them later (:func:`recorded_fixes`: ``medr2 score``,
its completeness, the report and the viewer).

This module is the foundation's reader and writer (``build``/``eval``/``export`` are upstream of the viewer);
agreement (Cohen's κ with its interval) is computed downstream in ``medr2.scoring.reviews``.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.records import Item, check_box, item_content_id, jsonable, letter, letter_index

REVIEWS_FILE = "reviews.sqlite"
Verdict = Literal["accept", "fix", "reject"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
# why an item is fixed or rejected: the page's short list (an accept needs no reason)
REASONS: tuple[str, ...] = (
    "wrong answer", "ambiguous question", "flawed options", "wrong or missing box", "not answerable from the image",
    "image unusable", "clinically irrelevant", "other",
)
EDITABLE: tuple[str, ...] = ("question", "options", "answer", "answer_box")  # what a fix may change
REVIEWED_CHOICES: tuple[str, ...] = ("accepted",)  # ``--reviewed`` values
NAME_MAX = 64
NOTE_MAX = 2000
TEXT_MAX = 20_000
_NAME = re.compile(r"[^\x00-\x1f\x7f]{1,64}")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS reviews (
  id INTEGER PRIMARY KEY AUTOINCREMENT, reviewer TEXT NOT NULL, item_id TEXT NOT NULL,
  verdict TEXT NOT NULL CHECK (verdict IN ('accept', 'fix', 'reject')), reason TEXT NOT NULL,
  edits TEXT NOT NULL, note TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS reviews_item ON reviews (item_id);
CREATE TABLE IF NOT EXISTS adjudications (
  id INTEGER PRIMARY KEY AUTOINCREMENT, adjudicator TEXT NOT NULL, item_id TEXT NOT NULL,
  verdict TEXT NOT NULL CHECK (verdict IN ('accept', 'fix', 'reject')), reason TEXT NOT NULL,
  edits TEXT NOT NULL, note TEXT NOT NULL, at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS adjudications_item ON adjudications (item_id);
CREATE TRIGGER IF NOT EXISTS reviews_append_only_u BEFORE UPDATE ON reviews
  BEGIN SELECT RAISE(ABORT, 'reviews are append-only'); END;
CREATE TRIGGER IF NOT EXISTS reviews_append_only_d BEFORE DELETE ON reviews
  BEGIN SELECT RAISE(ABORT, 'reviews are append-only'); END;
CREATE TRIGGER IF NOT EXISTS adjudications_append_only_u BEFORE UPDATE ON adjudications
  BEGIN SELECT RAISE(ABORT, 'adjudications are append-only'); END;
CREATE TRIGGER IF NOT EXISTS adjudications_append_only_d BEFORE DELETE ON adjudications
  BEGIN SELECT RAISE(ABORT, 'adjudications are append-only'); END;
"""


@dataclass(frozen=True)
class Review:
    """One row of ``reviews`` or ``adjudications`` (``by``: the reviewer or the adjudicator)."""

    id: int
    by: str
    item_id: str
    verdict: str
    reason: str
    edits: dict[str, Any]
    note: str
    at: float


@dataclass(frozen=True)
class Through:
    """The last row id of each table a selection read (the reviews as they were then)."""

    reviews: int
    adjudications: int

    def as_dict(self) -> dict[str, int]:
        return {"reviews": self.reviews, "adjudications": self.adjudications}

    @classmethod
    def of(cls, value: Any) -> Through | None:
        if not isinstance(value, Mapping):
            return None
        return cls(int(value.get("reviews") or 0), int(value.get("adjudications") or 0))


@dataclass(frozen=True)
class Outcome:
    """What an item's reviews come to: ``accept``/``fix``/``reject``, or ``disputed`` (awaiting adjudication)."""

    item_id: str
    status: str  # accept | fix | reject | disputed
    latest: dict[str, Review]  # each reviewer's latest review of the item
    adjudication: Review | None = None

    @property
    def edits(self) -> dict[str, Any]:
        if self.status != "fix":
            return {}
        if self.adjudication is not None:
            return self.adjudication.edits
        return next(iter(self.latest.values())).edits


@dataclass
class Reviews:
    """The rows read from a bench's reviews file (through :attr:`through`)."""

    reviews: list[Review] = field(default_factory=list)
    adjudications: list[Review] = field(default_factory=list)
    through: Through = Through(0, 0)

    def latest(self) -> dict[str, dict[str, Review]]:
        """item id → reviewer → their latest review."""
        out: dict[str, dict[str, Review]] = defaultdict(dict)
        for r in self.reviews:  # in row order: a later row replaces an earlier one
            out[r.item_id][r.by] = r
        return dict(out)

    def outcomes(self) -> dict[str, Outcome]:
        """Every reviewed item's :class:`Outcome`, by id."""
        adj: dict[str, Review] = {}
        for a in self.adjudications:
            adj[a.item_id] = a
        out: dict[str, Outcome] = {}
        latest = self.latest()
        for item_id in sorted(set(latest) | set(adj)):
            by = latest.get(item_id, {})
            if item_id in adj:
                out[item_id] = Outcome(item_id, adj[item_id].verdict, by, adj[item_id])
                continue
            keys = {(r.verdict, _canonical(r.edits) if r.verdict == "fix" else "") for r in by.values()}
            status = next(iter(keys))[0] if len(keys) == 1 else "disputed"
            out[item_id] = Outcome(item_id, status, by)
        return out

    def queue(self) -> list[Outcome]:
        """The adjudication queue: items the reviewers disagree on, not yet adjudicated."""
        return [o for o in self.outcomes().values() if o.status == "disputed"]

    def reviewers(self) -> list[str]:
        return sorted({r.by for r in self.reviews})


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def reviews_path(bench: Path | str) -> Path:
    return Path(bench) / REVIEWS_FILE


def check_name(name: str, field_name: str = "reviewer") -> str:
    """A reviewer's typed name, stripped: 1 to 64 characters, no control character."""
    name = name.strip()
    if not _NAME.fullmatch(name):
        raise BadInput(f"type a name of 1 to {NAME_MAX} characters (no control characters)", field=field_name)
    return name


def check_fix(item: Item, edits: Mapping[str, Any]) -> dict[str, Any]:
    """The edits of a fix, checked against the item's form: only :data:`EDITABLE` fields, each changed, an
    answer the (edited) options allow, a box inside the image. Returns the edits as stored (the changed
    fields only, JSON values). :class:`BadInput` names the field."""
    unknown = sorted(set(edits) - set(EDITABLE))
    if unknown:
        raise BadInput(f"not an editable field (one of {', '.join(EDITABLE)})", field=unknown[0])
    new = {k: jsonable(v) for k, v in edits.items()}
    if "question" in new:
        q = new["question"]
        if not isinstance(q, str) or not q.strip() or len(q) > TEXT_MAX:
            raise BadInput("the question must be text of 1 to 20,000 characters", field="question")
        new["question"] = q.strip()
    if "options" in new:
        opts = new["options"]
        if not isinstance(opts, list) or not all(isinstance(o, str) and o.strip() for o in opts):
            raise BadInput("options must be a list of non-empty texts", field="options")
        new["options"] = [o.strip() for o in opts]
        if item.form in ("mcq", "multi") and not 2 <= len(new["options"]) <= 26:
            raise BadInput("a choice question needs 2 to 26 options", field="options")
    options = new.get("options", item.options)
    answer = new.get("answer", item.answer)
    if not isinstance(answer, str):
        raise BadInput("the answer must be text", field="answer")
    answer = answer.strip()
    if item.form == "mcq":
        answer = answer.upper()
        if not re.fullmatch(r"[A-Z]", answer) or letter_index(answer) >= len(options):
            raise BadInput(f"the answer must be an option letter (A to {letter(len(options) - 1)})", field="answer")
    elif item.form == "multi":
        parts = sorted({p.strip().upper() for p in answer.split(",") if p.strip()})
        if not parts or any(not re.fullmatch(r"[A-Z]", p) or letter_index(p) >= len(options) for p in parts):
            raise BadInput("the answer must be option letters separated by commas", field="answer")
        answer = ",".join(parts)
    elif item.form == "yesno":
        answer = answer.lower()
        if answer not in ("yes", "no"):
            raise BadInput("the answer must be yes or no", field="answer")
    elif item.form == "text" and not answer:
        raise BadInput("the reference text must not be empty", field="answer")
    if "answer" in new:
        new["answer"] = answer
    if "answer_box" in new:
        box = new["answer_box"]
        if item.form != "box":
            raise BadInput("only a box question has a box to fix", field="answer_box")
        if not isinstance(box, list) or len(box) != 4 or not all(isinstance(v, int | float) for v in box):
            raise BadInput("the box must be four numbers x1, y1, x2, y2", field="answer_box")
        new["answer_box"] = [float(v) for v in box]
        try:
            if item.image_width and item.image_height:
                check_box(tuple(new["answer_box"]), item.image_width, item.image_height)  # type: ignore[arg-type]
        except ValueError as e:
            raise BadInput(str(e), field="answer_box") from e
    changed = {k: v for k, v in new.items() if v != jsonable(getattr(item, k))}
    if not changed:
        raise BadInput("a fix must change the question, the options, the answer or the box", field="edits")
    return changed


def fixed_item(parent: Item, edits: Mapping[str, Any]) -> Item:
    """The new item a fix makes: the parent's record with ``edits``, ``parent_id`` the parent's id, its id the
    content id of the result (as every item's: ``medr2.records.item_content_id``), ``meta.review`` saying
    so."""
    fields = parent.model_dump(mode="json")
    fields.update({k: jsonable(v) for k, v in edits.items()})
    fields["parent_id"] = parent.item_id
    fields["meta"] = {**fields.get("meta", {}), "review": {"fixed_from": parent.item_id,
                                                          "fields": sorted(edits)}}
    fields["item_id"] = item_content_id(fields)
    return Item.model_validate(fields)


class ReviewStore:
    """A bench's ``reviews.sqlite``: append a review or an adjudication (committed before returning), read
    the rows. A connection per call (the server's handlers run on several threads)."""

    def __init__(self, bench: Path | str) -> None:
        self.bench = Path(bench)
        self.path = reviews_path(bench)

    @contextmanager
    def _connect(self, write: bool) -> Iterator[sqlite3.Connection]:
        if not write and not self.path.exists():
            raise FileNotFoundError(self.path)
        existing = self.path.exists() and self.path.stat().st_size > 0  # a write never starts over a damaged file
        try:
            if write:
                conn = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0)
            else:
                conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, isolation_level=None, timeout=30.0)
        except sqlite3.Error as e:
            raise BadInput(f"cannot open the reviews: {e}", file=str(self.path)) from e
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            if write:
                if existing and not {"reviews", "adjudications"} <= {
                        r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}:
                    raise BadInput("holds no reviews tables: not a medr2 reviews file, or damaged (move it away "
                                   "to start the reviews afresh)", file=str(self.path))
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = FULL")
                conn.executescript(_SCHEMA)
            yield conn
        except (sqlite3.DatabaseError, UnicodeDecodeError) as e:  # a changed page's text need not be UTF-8
            raise BadInput(f"cannot use the reviews: {e}", file=str(self.path)) from e
        finally:
            conn.close()

    def add(self, table: Literal["reviews", "adjudications"], by: str, item_id: str, verdict: str, reason: str,
            edits: Mapping[str, Any], note: str = "") -> int:
        """Append one row and commit it; returns its id. The values are checked here (a bad one is
        :class:`BadInput` naming the field); the item's fix edits by :func:`check_fix` before."""
        who = "adjudicator" if table == "adjudications" else "reviewer"
        by = check_name(by, who)
        if verdict not in VERDICTS:
            raise BadInput(f"must be one of {', '.join(VERDICTS)}", field="verdict")
        if verdict == "accept":
            if reason not in ("", *REASONS):
                raise BadInput(f"not a reason (one of {', '.join(REASONS)})", field="reason")
        elif reason not in REASONS:
            raise BadInput(f"a {verdict} needs a reason: one of {', '.join(REASONS)}", field="reason")
        if (verdict == "fix") != bool(edits):
            raise BadInput("a fix carries its edits, and only a fix does", field="edits")
        if len(note) > NOTE_MAX:
            raise BadInput(f"at most {NOTE_MAX} characters", field="note")
        with self._connect(write=True) as conn:
            conn.execute("BEGIN IMMEDIATE")
            cur = conn.execute(
                f"INSERT INTO {table} ({'adjudicator' if table == 'adjudications' else 'reviewer'}, item_id, "
                "verdict, reason, edits, note, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (by, item_id, verdict, reason, _canonical(dict(edits)), note, time.time()))
            conn.execute("COMMIT")
            return int(cur.lastrowid or 0)

    def read(self, through: Through | None = None) -> Reviews:
        """Every row (through ``through``'s row ids where given); an absent file reads as no review."""
        if not self.path.exists():
            return Reviews()
        with self._connect(write=False) as conn:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if not {"reviews", "adjudications"} <= names:  # a file there that holds no reviews: damage, not "none"
                raise BadInput("holds no reviews tables: not a medr2 reviews file, or damaged (move it away to "
                               "start the reviews afresh)", file=str(self.path))
            lim = through or Through(2**62, 2**62)
            rev = [_row(r) for r in conn.execute(
                "SELECT id, reviewer, item_id, verdict, reason, edits, note, at FROM reviews WHERE id <= ? "
                "ORDER BY id", (lim.reviews,))]
            adj = [_row(r) for r in conn.execute(
                "SELECT id, adjudicator, item_id, verdict, reason, edits, note, at FROM adjudications "
                "WHERE id <= ? ORDER BY id", (lim.adjudications,))]
        last = Through(max((r.id for r in rev), default=0), max((a.id for a in adj), default=0))
        return Reviews(rev, adj, last)


def _row(r: tuple[Any, ...]) -> Review:
    edits = jsonsafe.loads(r[5], file=REVIEWS_FILE, record=str(r[0]), field="edits") if r[5] else {}
    return Review(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), edits if isinstance(edits, dict) else {},
                  str(r[6]), float(r[7]))


def read_reviews(bench: Path | str, through: Through | None = None) -> Reviews:
    return ReviewStore(bench).read(through)


def has_reviews(bench: Path | str) -> bool:
    return reviews_path(bench).exists()


PARENT_MISSING = "parent not in the bench"  # why a settled fix is not an item (a rebuilt bench)
FIX_INVALID = "fix no longer valid for its parent"


def settled_fixes(got: Reviews, parents: Callable[[set[str]], Mapping[str, Item]]
                  ) -> tuple[list[Item], Counter[str]]:
    """The items the settled fixes make (an agreed fix, or an adjudicated one: outcome ``fix``), in parent id
    order, their parents found by ``parents`` (ids → the items of them the bench holds); and the fixes left
    out, by reason (:data:`PARENT_MISSING`: a bench rebuilt since; :data:`FIX_INVALID`: the edits do not fit
    the parent any more)."""
    fixes = {i: o.edits for i, o in got.outcomes().items() if o.status == "fix"}
    found = parents(set(fixes)) if fixes else {}
    items: list[Item] = []
    skipped: Counter[str] = Counter()
    for parent_id, edits in sorted(fixes.items()):
        parent = found.get(parent_id)
        if parent is None:
            skipped[PARENT_MISSING] += 1
            continue
        try:
            items.append(fixed_item(parent, check_fix(parent, edits)))
        except (BadInput, ValueError):
            skipped[FIX_INVALID] += 1
    return items, skipped


def bench_parents(bench: Path | str) -> Callable[[set[str]], Mapping[str, Item]]:
    """The items of a set of ids the bench at ``bench`` holds (read by id from its items table)."""
    def find(ids: set[str]) -> Mapping[str, Item]:
        from medr2.bench.table import BenchTable

        table = BenchTable(bench)
        try:
            return table.items_by_id(ids)
        finally:
            table.close()

    return find


@dataclass(frozen=True)
class Selection:
    """What ``--reviewed accepted`` selects from a bench's reviews (through :attr:`through`): the accepted
    items (:attr:`accepted`, ids of the bench) and the items the settled fixes make (:attr:`fixed`, not in
    the bench's table: each reader adds them, ``BenchTable.add_items``), with the fixes left out by reason."""

    status: str
    through: Through
    accepted: frozenset[str]
    fixed: tuple[Item, ...]
    skipped: Mapping[str, int]

    @property
    def item_ids(self) -> frozenset[str]:
        """The ids the item filter keeps (``ItemFilter.item_ids``): the accepted and the fixed items."""
        return self.accepted | {it.item_id for it in self.fixed}

    def recorded(self) -> dict[str, Any]:
        """What a run or export manifest records (``status`` and ``through`` are what it is computed again
        from; the counts are for reading)."""
        return {"status": self.status, "through": self.through.as_dict(), "accepted": len(self.accepted),
                "fixed": len(self.fixed), "fixes_skipped": dict(sorted(self.skipped.items()))}


def reviewed_selection(bench: Path | str, reviewed: str, through: Through | None = None,
                       parents: Callable[[set[str]], Mapping[str, Item]] | None = None) -> Selection:
    """``--reviewed accepted``: the items whose reviews come to ``accept``, and those the settled fixes make
    (:func:`settled_fixes`; their originals are left out), from the rows read (through ``through`` where
    given: a recorded selection computed again). A bench without reviews, or a value not in
    :data:`REVIEWED_CHOICES`, is :class:`BadInput` naming ``--reviewed``."""
    if reviewed not in REVIEWED_CHOICES:
        raise BadInput(f"must be one of {', '.join(REVIEWED_CHOICES)}", field="--reviewed")
    if not has_reviews(bench):
        raise BadInput(f"the bench has no reviews ({REVIEWS_FILE}; medr2 review BENCH writes them)",
                       file=str(bench), field="--reviewed")
    got = read_reviews(bench, through)
    fixed, skipped = settled_fixes(got, parents or bench_parents(bench))
    accepted = frozenset(i for i, o in got.outcomes().items() if o.status == "accept")
    return Selection(reviewed, got.through, accepted, tuple(fixed), dict(skipped))


def recorded_selection(bench: Path | str, recorded: Mapping[str, Any],
                       parents: Callable[[set[str]], Mapping[str, Item]] | None = None) -> Selection:
    """The selection a manifest recorded (``{"status", "through"}``), computed again from the same rows."""
    return reviewed_selection(bench, str(recorded.get("status")), Through.of(recorded.get("through")), parents)


def recorded_fixes(bench: Path | str, invocations: Sequence[Mapping[str, Any]]) -> list[Item]:
    """The fixed items every recorded selection of a run asked (its invocations' ``reviewed``), once each, in
    id order: what ``medr2 score``, the report and the viewer add to the bench's items to find them."""
    out: dict[str, Item] = {}
    parents = bench_parents(bench)
    seen: set[str] = set()
    for inv in invocations:
        rec = inv.get("reviewed")
        if not isinstance(rec, Mapping):
            continue
        key = _canonical({"status": rec.get("status"), "through": rec.get("through")})
        if key in seen:
            continue
        seen.add(key)
        for it in recorded_selection(bench, rec, parents).fixed:
            out[it.item_id] = it
    return [out[k] for k in sorted(out)]


def review_counts(got: Reviews, n_items: int) -> dict[str, Any]:
    """The counts ``medr2 info`` and the dataset card show: items reviewed (share of the bench), outcomes,
    acceptance rate (accepted of the items with an outcome other than disputed), reviewers, queue."""
    outcomes = got.outcomes()
    by = Counter(o.status for o in outcomes.values())
    decided = sum(n for s, n in by.items() if s != "disputed")
    return {"n_items": n_items, "reviewed": len(outcomes),
            "reviewed_share": len(outcomes) / n_items if n_items else None,
            "outcomes": {s: by.get(s, 0) for s in (*VERDICTS, "disputed")},
            "acceptance_rate": by.get("accept", 0) / decided if decided else None,
            "reviewers": got.reviewers(), "reviews": len(got.reviews), "adjudications": len(got.adjudications),
            "queue": by.get("disputed", 0), "through": got.through.as_dict()}


def pairs_by_task(got: Reviews, task_of: Mapping[str, str]) -> dict[tuple[str, str, str], list[tuple[str, str]]]:
    """For each task and pair of reviewers, the verdicts both gave on the same items (each reviewer's latest):
    ``(task, reviewer a, reviewer b) → [(verdict of a, verdict of b), ...]`` in item id order."""
    out: dict[tuple[str, str, str], list[tuple[str, str]]] = defaultdict(list)
    for item_id, by in sorted(got.latest().items()):
        names = sorted(by)
        task = task_of.get(item_id, "(not in the bench)")
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                out[(task, a, b)].append((by[a].verdict, by[b].verdict))
    return dict(out)


def review_lines(summary: Mapping[str, Any]) -> list[str]:
    """The review block as lines of text (``medr2 info``, the dataset card): reviewed share, acceptance rate,
    agreement per task (Cohen's κ with its 95% interval and n, where two reviewers saw the same items)."""
    if not summary:
        return []

    def pct(v: Any) -> str:
        return "-" if v is None else f"{v:.0%}"

    o = summary["outcomes"]
    lines = [f"reviewed {summary['reviewed']:,} of {summary['n_items']:,} items ({pct(summary['reviewed_share'])}) by "
             f"{len(summary['reviewers'])} reviewer{'s' if len(summary['reviewers']) != 1 else ''}; "
             f"accepted {o['accept']:,}, fixed {o['fix']:,}, rejected {o['reject']:,}, awaiting adjudication "
             f"{o['disputed']:,}; acceptance rate {pct(summary['acceptance_rate'])}"]
    fixes = summary.get("fixes")
    if fixes and (fixes["items"] or fixes["skipped"]):
        left = "; ".join(f"{n:,} left out: {why}" for why, n in fixes["skipped"].items())
        lines.append(f"fixed items (evaluated under --reviewed accepted) {fixes['items']:,}"
                     + (f"; {left}" if left else ""))
    for row in summary.get("agreement") or []:
        k = row["kappa"]
        value = "-" if k.get("value") is None else f"{k['value']:.2f}"
        ci = f" [{k['lo']:.2f}, {k['hi']:.2f}]" if k.get("lo") is not None and k.get("hi") is not None else ""
        lines.append(f"agreement on {row['task']} ({row['a']} vs {row['b']}, {k['n']:,} items): Cohen's κ "
                     f"{value}{ci}, raw agreement {pct(row['agreement'])}")
    return lines


__all__ = ["EDITABLE", "FIX_INVALID", "PARENT_MISSING", "REASONS", "REVIEWED_CHOICES", "REVIEWS_FILE", "VERDICTS",
           "Outcome", "Review", "ReviewStore", "Reviews", "Selection", "Through", "bench_parents", "check_fix",
           "check_name", "fixed_item", "has_reviews", "pairs_by_task", "read_reviews", "recorded_fixes",
           "recorded_selection", "review_counts", "review_lines", "reviewed_selection", "reviews_path",
           "settled_fixes"]
