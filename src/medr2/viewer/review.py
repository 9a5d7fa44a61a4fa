"""``medr2 review BENCH``: the viewer's app in review mode (docs/review.md). The same server, security and
middleware as ``medr2 view`` (:func:`medr2.viewer.server.make_app` with :data:`REVIEW_ROUTES`): a reviewer types
a name (nothing else: no password is asked or stored), sees an item with its image, the correct box, the
question, the options and the answer, and marks it accept, fix (the question, options, answer or box edited;
the original stays in ``items.parquet``) or reject, with a reason from :data:`medr2.bench.reviews.REASONS`.
Each POST is written to ``BENCH/reviews.sqlite`` and committed before the answer (:class:`ReviewStore`); the
page then shows the reviewer's next item. ``/review/queue`` shows the reviewers' agreement per task (Cohen's κ
with its interval, ``medr2.scoring.reviews``) and the items they disagree on, each a link to adjudicate.

Routes (:data:`REVIEW_ROUTES`): ``/`` (name, summary), ``/review/item?reviewer=&id=`` (GET: the item, the
reviewer's next one without ``id``; POST: a review), ``/review/queue``, ``/review/adjudicate?id=`` (GET, POST),
``/img/0/NAME`` (the bench's ``images/<sha256>.png`` only), ``/static/NAME``, ``/favicon.ico``. Every POST
passes the app's CSRF check (``guard``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from medr2.bench.reviews import (
    EDITABLE,
    REASONS,
    VERDICTS,
    ReviewStore,
    check_fix,
    check_name,
    settled_fixes,
)
from medr2.errors import BadInput
from medr2.records import Item, letter
from medr2.viewer.data import bench_image, image_url
from medr2.viewer.server import (
    DEFAULT_HOST,
    DEFAULT_PORT,
    Route,
    ViewServer,
    _blocking,
    _render,
    check_port,
    favicon,
    make_app,
    serve,
    static,
)

REVIEW = web.AppKey("review", object)
QUEUE_SHOWN = 200  # disputed items listed on the queue page
FIXED_SHOWN = 200  # fixed items listed on the home page


@dataclass
class ReviewData:
    """The bench under review: its items read by columns, their ids in bench order (the review order), and
    the reviews file."""

    root: Path
    table: Any  # medr2.bench.table.BenchTable
    ids: list[str]
    store: ReviewStore
    _summary: dict[Any, Any] = field(default_factory=dict)

    @classmethod
    def open(cls, bench: Path | str) -> ReviewData:
        from medr2.bench.table import BenchTable

        root = Path(bench)
        if not (root / "manifest.json").is_file():
            raise BadInput("not a bench folder (no manifest.json)", file=str(root), field="BENCH")
        table = BenchTable.open(root, image_hashes=False)
        ids = [i for cols in table.column_values(["item_id"]) for i in cols["item_id"]]
        return cls(root.resolve(), table, ids, ReviewStore(root))

    def item(self, item_id: str) -> Item:
        got = self.table.items_by_id([item_id]).get(item_id)
        if got is None:
            raise web.HTTPNotFound(text="no such item in the bench")
        return got  # type: ignore[no-any-return]

    def next_for(self, reviewer: str) -> tuple[str | None, int]:
        """The first item (bench order) ``reviewer`` has not reviewed, and how many they have."""
        done = {r.item_id for r in self.store.read().reviews if r.by == reviewer}
        return next((i for i in self.ids if i not in done), None), len(done)

    def summary(self) -> dict[str, Any]:
        """The counts and the agreement per task (``medr2.scoring.reviews``), kept until the reviews change."""
        from medr2.scoring.reviews import review_summary

        key = self.store.read().through
        if key not in self._summary:
            self._summary.clear()
            self._summary[key] = review_summary(self.root, through=key) or {}
        return self._summary[key]  # type: ignore[no-any-return]

    def close(self) -> None:
        self.table.close()


def _data(request: web.Request) -> ReviewData:
    got = request.app[REVIEW]
    assert isinstance(got, ReviewData)
    return got


def _view_item(data: ReviewData, it: Item) -> dict[str, Any]:
    """What the page shows of an item: its fields, the image's URL and size, the box (as SVG attributes)."""
    img = None
    if it.image:
        try:
            img = {"url": image_url((data.root,), data.root / it.image), "w": it.image_width or 1,
                   "h": it.image_height or 1}
        except BadInput:
            img = None
    box = None
    if it.answer_box is not None:
        x1, y1, x2, y2 = it.answer_box
        box = {"x": x1, "y": y1, "w": x2 - x1, "h": y2 - y1}
    return {"item": it, "img": img, "box": box,
            "options": [(letter(i), o, _is_answer(it, letter(i))) for i, o in enumerate(it.options)]}


def _is_answer(it: Item, ch: str) -> bool:
    return ch in it.answer.split(",") if it.form in ("mcq", "multi") else False


def _form_edits(form: Any, it: Item) -> dict[str, Any]:
    """The edits a fix form carries: each editable field as the form has it (the unchanged ones are dropped by
    :func:`check_fix`)."""
    out: dict[str, Any] = {}
    if "question" in form:
        out["question"] = str(form["question"])
    if "options" in form and it.form in ("mcq", "multi"):
        out["options"] = [line.strip() for line in str(form["options"]).splitlines() if line.strip()]
    if "answer" in form and it.form != "box":
        out["answer"] = str(form["answer"])
    if it.form == "box" and all(f"box_{k}" in form for k in ("x1", "y1", "x2", "y2")):
        try:
            box = [float(str(form[f"box_{k}"])) for k in ("x1", "y1", "x2", "y2")]
        except ValueError as e:
            raise BadInput("the box must be four numbers x1, y1, x2, y2", field="answer_box") from e
        if not all(math.isfinite(v) for v in box):
            raise BadInput("the box must be four finite numbers", field="answer_box")
        out["answer_box"] = box
    return out


def _field(form: Any, name: str, default: str = "") -> str:
    value = form.get(name, default)
    if not isinstance(value, str):
        raise BadInput("must be text", field=name)
    return value


async def _write(request: web.Request, table: str, who_field: str) -> tuple[str, str]:
    """Store the POSTed review or adjudication (committed before returning); returns (who, item id)."""
    data = _data(request)
    form = await request.post()
    who = check_name(_field(form, who_field), who_field)
    item_id = _field(form, "item_id")
    verdict = _field(form, "verdict")
    if verdict not in VERDICTS:
        raise BadInput(f"choose one of {', '.join(VERDICTS)}", field="verdict")
    it = await _blocking(request, data.item, item_id)
    edits = check_fix(it, _form_edits(form, it)) if verdict == "fix" else {}
    await _blocking(request, data.store.add, table, who, item_id, verdict, _field(form, "reason"), edits,
                    _field(form, "note"))
    return who, item_id


def _context(data: ReviewData, it: Item, prefill: dict[str, Any] | None = None) -> dict[str, Any]:
    """The item and its fix form's values (the original fields, or ``prefill``'s edits over them)."""
    fields = {k: getattr(it, k) for k in EDITABLE}
    fields.update(prefill or {})
    box = fields["answer_box"] or [0, 0, 0, 0]
    return {**_view_item(data, it), "reasons": REASONS, "verdicts": VERDICTS,
            "f_question": fields["question"], "f_options": "\n".join(fields["options"]), "f_answer": fields["answer"],
            "f_box": dict(zip(("x1", "y1", "x2", "y2"), (f"{v:g}" for v in box), strict=True))}


async def home_page(request: web.Request) -> web.Response:
    data = _data(request)
    summary = await _blocking(request, data.summary)
    got = await _blocking(request, data.store.read)
    made, _ = await _blocking(request, settled_fixes, got, data.table.items_by_id)  # what --reviewed accepted asks
    fixed = [{"parent": f.parent_id, "id": f.item_id,
              "fields": sorted((f.meta.get("review") or {}).get("fields") or ())} for f in made[:FIXED_SHOWN]]
    per_reviewer = {name: sum(1 for by in got.latest().values() if name in by) for name in got.reviewers()}
    html = _render(request, "review_home.html.jinja", title="medr2 review", bench=data.root.name, n=len(data.ids),
                   summary=summary, per_reviewer=per_reviewer, fixed=fixed, queue=len(got.queue()))
    return web.Response(text=html, content_type="text/html")


async def item_page(request: web.Request) -> web.StreamResponse:
    data = _data(request)
    reviewer = check_name(request.query.get("reviewer", ""), "reviewer")
    item_id = request.query.get("id", "")
    nxt, done = await _blocking(request, data.next_for, reviewer)
    if not item_id:
        if nxt is None:
            html = _render(request, "review_done.html.jinja", title="all reviewed · medr2 review", reviewer=reviewer,
                           n=len(data.ids))
            return web.Response(text=html, content_type="text/html")
        item_id = nxt
    it = await _blocking(request, data.item, item_id)
    got = await _blocking(request, data.store.read)
    mine = got.latest().get(item_id, {}).get(reviewer)
    html = _render(request, "review_item.html.jinja", title=f"review {item_id} · medr2 review", reviewer=reviewer,
                   done=done, n=len(data.ids), mine=mine, **_context(data, it, mine.edits if mine else None))
    return web.Response(text=html, content_type="text/html")


async def item_post(request: web.Request) -> web.StreamResponse:
    reviewer, _ = await _write(request, "reviews", "reviewer")
    return _see_other("/review/item?" + urlencode({"reviewer": reviewer}))


async def queue_page(request: web.Request) -> web.Response:
    data = _data(request)
    summary = await _blocking(request, data.summary)
    got = await _blocking(request, data.store.read)
    queue = got.queue()
    html = _render(request, "review_queue.html.jinja", title="agreement and adjudication · medr2 review",
                   summary=summary, queue=queue[:QUEUE_SHOWN], n_queue=len(queue),
                   adjudicated=[o for o in got.outcomes().values() if o.adjudication is not None])
    return web.Response(text=html, content_type="text/html")


async def adjudicate_page(request: web.Request) -> web.Response:
    data = _data(request)
    item_id = request.query.get("id", "")
    if not item_id:
        raise BadInput("name an item", field="id")
    it = await _blocking(request, data.item, item_id)
    got = await _blocking(request, data.store.read)
    outcome = got.outcomes().get(item_id)
    reviews = sorted(outcome.latest.values(), key=lambda r: r.by) if outcome else []
    first_fix = next((r.edits for r in reviews if r.verdict == "fix"), None)
    html = _render(request, "review_adjudicate.html.jinja", title=f"adjudicate {item_id} · medr2 review",
                   reviews=reviews, outcome=outcome, adjudicator=request.query.get("adjudicator", ""),
                   **_context(data, it, first_fix))
    return web.Response(text=html, content_type="text/html")


async def adjudicate_post(request: web.Request) -> web.StreamResponse:
    await _write(request, "adjudications", "adjudicator")
    return _see_other("/review/queue")


def _see_other(location: str) -> web.Response:
    """The answer to a saved write: the next page (a response, not a raised redirect: the guard makes every raised
    HTTP exception an error page)."""
    return web.Response(status=303, headers={"Location": location})


async def image(request: web.Request) -> web.Response:
    data = _data(request)
    try:
        path = await _blocking(request, bench_image, (data.root,), request.match_info["bench"],
                               request.match_info["name"])
        body = await _blocking(request, path.read_bytes)
    except (BadInput, OSError) as e:
        raise web.HTTPNotFound(text="no such image") from e
    return web.Response(body=body, content_type="image/png")


# every route of review mode: (method, path, handler)
REVIEW_ROUTES: tuple[Route, ...] = (
    ("GET", "/", home_page),
    ("GET", "/review/item", item_page),
    ("POST", "/review/item", item_post),
    ("GET", "/review/queue", queue_page),
    ("GET", "/review/adjudicate", adjudicate_page),
    ("POST", "/review/adjudicate", adjudicate_post),
    ("GET", "/img/{bench}/{name}", image),
    ("GET", "/static/{name}", static),
    ("GET", "/favicon.ico", favicon),
)


def make_review_app(data: ReviewData, *, host: str = DEFAULT_HOST) -> web.Application:
    """The viewer's app with the review routes over ``data``."""
    app = make_app(None, host=host, routes=REVIEW_ROUTES)
    app[REVIEW] = data

    async def _close(app: web.Application) -> None:
        data.close()

    app.on_cleanup.append(_close)
    return app


def open_review(bench: Path | str, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, block: bool = True,
                on_ready: Any = None) -> ViewServer:
    """Open the bench and serve review mode: see :func:`medr2.api.review`."""
    check_port(port)
    data = ReviewData.open(bench)
    return serve(lambda: make_review_app(data, host=host), data.close, host=host, port=port, block=block,
                 on_ready=on_ready)


__all__ = ["REVIEW_ROUTES", "ReviewData", "make_review_app", "open_review"]
