"""``medr2 view``: the local web app over scored runs (aiohttp on 127.0.0.1 by default; pages from Jinja2 with
autoescape on, the report's own leaderboard table and item cards).

Routes (:data:`ROUTES`, every one a GET that reads; a write route added later, as review will, is guarded by the
CSRF check of :func:`guard` by construction):

- ``/``: the leaderboard (sortable, run and mode pinned, any metric column shown or hidden), each cell a link
  to the items behind it;
- ``/items?run=&mode=&task=&stage=&variant=&verdict=&page=``: those items, filtered and paged;
- ``/item?id=``: one item's answers by every run and mode side by side;
- ``/img/BENCH/NAME``: a bench image (``images/<sha256>.png`` only);
- ``/static/NAME``: the page's script and style (a fixed list); ``/favicon.ico``: none (204).

Security (docs/view.md): loopback bind unless ``--host`` says otherwise, and then a request naming another host
is refused (DNS rebinding); every response carries a strict Content-Security-Policy (no inline script or
style, nothing from another origin) and the usual hardening headers; no route reads a file by a name taken from
the request except the image route, which accepts only a sha256 file name inside a bench's ``images/``; any
request that is not GET/HEAD/OPTIONS must carry the app's CSRF token (header or form field) and a same-origin
``Origin``.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlencode

from aiohttp import web
from markupsafe import Markup

from medr2.errors import BadInput
from medr2.reporting.browser import script_safe_json
from medr2.reporting.fmt import visible_bidi
from medr2.reporting.html import template_environment
from medr2.reporting.leaderboard import HEADLINE_KEYS
from medr2.reporting.subgroups import subgroup_view
from medr2.reporting.write import short_names
from medr2.viewer.data import FILTER_FIELDS, Query, ViewData, bench_image

LOG = logging.getLogger("medr2.viewer")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: under no-referrer a browser sends ``Origin: null`` with the page's own form
    # posts, which the CSRF check refuses as cross-origin; same-origin still sends nothing to another site
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-store",
}
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf"
# the static assets, by the name the page asks for: (package, file, content type); nothing else is served
STATIC = {
    "cards.js": ("medr2.reporting", "cards.js", "text/javascript"),
    "report.css": ("medr2.reporting", "report.css", "text/css"),
    "view.js": ("medr2.viewer", "view.js", "text/javascript"),
    "view.css": ("medr2.viewer", "view.css", "text/css"),
    "reader.js": ("medr2.viewer", "reader.js", "text/javascript"),  # the human reader's page (medr2.viewer.reader)
    "reader.css": ("medr2.viewer", "reader.css", "text/css"),
    "review.css": ("medr2.viewer", "review.css", "text/css"),
    "review.js": ("medr2.viewer", "review.js", "text/javascript"),  # review mode: drawing a box by mouse
}
# the leaderboard's columns shown at first (the rest are a tick away)
FIRST_COLUMNS = (*HEADLINE_KEYS, "s1", "s2", "s3", "s4", "unparsed", "error")

APP_DATA = web.AppKey("data", ViewData)
APP_STATE = web.AppKey("state", dict)
T = TypeVar("T")


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS


def _host_name(host_header: str) -> str:
    """The host of a ``Host`` header (``[::1]:8765`` → ``[::1]``, ``a:1`` → ``a``)."""
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


@web.middleware
async def guard(request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
                ) -> web.StreamResponse:
    """Every request passes here: the Host check (loopback binds), the CSRF check of every unsafe method, errors
    as pages (a bad value a 400 naming it, never a traceback), and the security headers on every response."""
    state = request.app[APP_STATE]
    try:
        if state["loopback"] and not is_loopback(_host_name(request.host)):
            raise web.HTTPForbidden(text="this server answers only requests for 127.0.0.1 / localhost")
        if request.method not in SAFE_METHODS:
            await _check_csrf(request, state["token"])
        response = await handler(request)
    except web.HTTPException as e:
        response = _error_page(request, e.status, e.text or e.reason)
    except BadInput as e:
        response = _error_page(request, 400, str(e))
    except Exception:  # an unexpected failure: logged here, a plain page there
        LOG.exception("medr2 view: %s %s failed", request.method, request.path)
        response = _error_page(request, 500, "internal error (see the server's log)")
    response.headers.update(SECURITY_HEADERS)
    return response


async def _check_csrf(request: web.Request, token: str) -> None:
    origin = request.headers.get("Origin")
    if origin is not None and origin != f"{request.scheme}://{request.host}":
        raise web.HTTPForbidden(text="cross-origin write refused")
    sent = request.headers.get(CSRF_HEADER)
    if sent is None and request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        form = await request.post()
        value = form.get(CSRF_FIELD)
        sent = value if isinstance(value, str) else None
    if sent is None or not hmac.compare_digest(sent.encode("utf-8"), token.encode("utf-8")):
        raise web.HTTPForbidden(text="missing or wrong CSRF token")


def _error_page(request: web.Request, status: int, message: str) -> web.Response:
    page = request.app[APP_STATE].get("error_page", "view_error.html.jinja")  # another page set names its own
    html = _render(request, page, title=f"{status}", status=status, message=message)
    return web.Response(text=html, status=status, content_type="text/html")


def _render(request: web.Request, template: str, **context: Any) -> str:
    state = request.app[APP_STATE]
    return str(state["env"].get_template(template).render(csrf_token=state["token"], **context))


async def _blocking(request: web.Request, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on the app's one reader thread (parquet and SQLite reads; the data's caches see one thread)."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(request.app[APP_STATE]["reader"], fn, *args)


def _island(obj: Any) -> Markup:
    """A JSON data island for ``<script type="application/json">`` (the report's escaping)."""
    return Markup(visible_bidi(script_safe_json(obj)))


def _runs_json(data: ViewData) -> list[dict[str, str]]:
    return [{"label": r.label, "model": r.model_key} for r in data.runs]


def items_href(q: Query, **change: Any) -> str:
    return "/items?" + urlencode(q.params(**change))


async def leaderboard_page(request: web.Request) -> web.Response:
    data = request.app[APP_DATA]
    lb = data.leaderboard

    def link(row: int, key: str) -> str:
        return items_href(data.cell_query(row, key))

    shorts = short_names([r.label for r in data.runs])
    label_of = {v: k for k, v in shorts.items()}

    def slice_link(table: Any, row: dict[str, Any]) -> str | None:
        if not row.get("key"):
            return None
        return items_href(data.slice_query(label_of.get(table.run, table.run), table.mode, row["key"]))

    subgroups = subgroup_view(data.runs, shorts)
    groups: dict[str, list[Any]] = {}
    for c in lb.columns:
        groups.setdefault(c.key.split(":", 1)[0] + "s" if ":" in c.key else "metrics", []).append(c)
    html = _render(request, "view_leaderboard.html.jinja", title="medr2 view", leaderboard=lb, link=link,
                   best={c.key: lb.best(c.key) for c in lb.columns}, short_names=shorts, groups=groups,
                   subgroups=subgroups if not subgroups.empty else None, slice_link=slice_link,
                   shown=set(FIRST_COLUMNS), warnings=data.warnings, runs=data.runs)
    return web.Response(text=html, content_type="text/html")


async def items_page(request: web.Request) -> web.Response:
    data = request.app[APP_DATA]
    q = Query.parse(dict(request.query), len(data.runs))
    page = await _blocking(request, data.page, q)
    facets = await _blocking(request, data.scores[q.run].facets)
    island = {"runs": _runs_json(data), "rows": page.rows, "images": page.images, "link": True}
    html = _render(request, "view_items.html.jinja", title="items · medr2 view", q=q, page=page,
                   filters=dict(q.filters), facets=facets, fields=FILTER_FIELDS, runs=data.runs,
                   prev=items_href(q, page=q.page - 1) if q.page > 0 else None,
                   next=items_href(q, page=q.page + 1) if q.page + 1 < page.pages else None,
                   unsliced="/items?" + urlencode(Query(q.run, q.filters).params()),
                   data_json=_island(island))
    return web.Response(text=html, content_type="text/html")


async def item_page(request: web.Request) -> web.Response:
    data = request.app[APP_DATA]
    item_id = request.query.get("id", "")
    if not item_id:
        raise BadInput("name an item", field="id")
    item, cards, images = await _blocking(request, data.item, item_id)
    if item is None and not cards:
        raise web.HTTPNotFound(text="no run scored this item")
    island = {"runs": _runs_json(data), "rows": cards, "images": images, "link": False}
    html = _render(request, "view_item.html.jinja", title=f"item {item_id} · medr2 view", item_id=item_id,
                   item=item, n=len(cards), data_json=_island(island))
    return web.Response(text=html, content_type="text/html")


async def image(request: web.Request) -> web.Response:
    data = request.app[APP_DATA]
    try:
        path = await _blocking(request, bench_image, data.roots, request.match_info["bench"],
                               request.match_info["name"])
        body = await _blocking(request, path.read_bytes)
    except (BadInput, OSError) as e:
        raise web.HTTPNotFound(text="no such image") from e
    return web.Response(body=body, content_type="image/png")


async def static(request: web.Request) -> web.Response:
    got = STATIC.get(request.match_info["name"])
    if got is None:
        raise web.HTTPNotFound(text="no such file")
    package, name, ctype = got
    text = resources.files(package).joinpath("templates", name).read_text("utf-8")
    return web.Response(text=text, content_type=ctype)


async def favicon(request: web.Request) -> web.Response:
    return web.Response(status=204)  # no icon (a data: icon would need img-src data:)


# every route of the app: (method, path, handler)
ROUTES: tuple[tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]], ...] = (
    ("GET", "/", leaderboard_page),
    ("GET", "/items", items_page),
    ("GET", "/item", item_page),
    ("GET", "/img/{bench}/{name}", image),
    ("GET", "/static/{name}", static),
    ("GET", "/favicon.ico", favicon),
)


Route = tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]]


def make_app(data: ViewData | None, *, host: str = DEFAULT_HOST, routes: tuple[Route, ...] = ROUTES
             ) -> web.Application:
    """The app over ``data``; ``host`` the address it will be bound to (loopback: other Host headers refused);
    ``routes`` its routes (another page set's, e.g. review mode's ``medr2.viewer.review.REVIEW_ROUTES``, whose
    data is set on the app by its maker; ``data`` None then)."""
    app = web.Application(middlewares=[guard], client_max_size=1 << 20)
    if data is not None:
        app[APP_DATA] = data
    app[APP_STATE] = {"token": secrets.token_urlsafe(32), "loopback": is_loopback(host),
                      "env": template_environment("medr2.viewer"),
                      "reader": ThreadPoolExecutor(max_workers=1, thread_name_prefix="medr2-view-reader")}
    for method, path, handler in routes:
        if method == "GET":
            app.router.add_get(path, handler)  # and HEAD
        else:
            app.router.add_route(method, path, handler)

    async def _close(app: web.Application) -> None:
        app[APP_STATE]["reader"].shutdown(wait=False, cancel_futures=True)

    app.on_cleanup.append(_close)
    return app


@dataclass
class ViewServer:
    """A server started by :func:`start` on its own thread: its URL, and :meth:`stop`."""

    url: str
    data: ViewData | None  # None: an app over no runs (the human reader's page, review mode)
    thread: threading.Thread
    loop: asyncio.AbstractEventLoop
    runner: web.AppRunner

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        if self.data is not None:
            self.data.close()

    def wait(self) -> None:
        """Block until interrupted (Ctrl-C), then stop."""
        try:
            while self.thread.is_alive():
                self.thread.join(timeout=0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()


def start(app: web.Application, *, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> ViewServer:
    """Serve ``app`` on ``host:port`` (port 0: a free one) from a new thread; returns once it listens. A port
    already taken is :class:`BadInput` naming ``--port``."""
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app, access_log=None)
    ready = threading.Event()
    failure: list[BaseException] = []
    where: list[str] = []

    async def _up() -> None:
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = runner.addresses[0]
        shown = f"[{bound[0]}]" if ":" in str(bound[0]) else str(bound[0])
        where.append(f"http://{shown}:{bound[1]}/")

    def _serve() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(_up())
        except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
            failure.append(e)
            ready.set()
            loop.run_until_complete(runner.cleanup())
            loop.close()
            return
        ready.set()
        loop.run_forever()
        loop.close()

    thread = threading.Thread(target=_serve, name="medr2-view", daemon=True)
    thread.start()
    ready.wait()
    if failure:
        e = failure[0]
        if isinstance(e, OSError):
            raise BadInput(f"cannot listen on {host}:{port}: {e.strerror or e}", field="--port") from e
        raise e
    return ViewServer(where[0], app.get(APP_DATA), thread, loop, runner)


def open_view(run_dirs: list[Path] | list[str], *, bench: Path | str | None = None, host: str = DEFAULT_HOST,
              port: int = DEFAULT_PORT, block: bool = True, on_ready: Callable[[str], None] | None = None,
              ) -> ViewServer:
    """Open the runs (:meth:`ViewData.open`: metrics and file metadata only) and serve them: see
    :func:`medr2.api.view`."""
    check_port(port)
    data = ViewData.open(run_dirs, bench=bench)
    return serve(lambda: make_app(data, host=host), data.close, host=host, port=port, block=block,
                 on_ready=on_ready)


def check_port(port: int) -> None:
    """``--port``: 0 (a free one) to 65535, checked before anything is opened."""
    if not 0 <= port <= 65535:
        raise BadInput("must be from 0 to 65535", field="--port")


def serve(make: Callable[[], web.Application], close: Callable[[], None], *, host: str, port: int, block: bool,
          on_ready: Callable[[str], None] | None) -> ViewServer:
    """Start the app ``make`` builds on ``host:port`` (``close``: the data it serves, closed if it does not start),
    tell ``on_ready`` its URL, and with ``block`` serve until interrupted: the one way ``view`` and ``review``
    serve."""
    try:
        server = start(make(), host=host, port=port)
    except BaseException:
        close()
        raise
    if on_ready is not None:
        on_ready(server.url)
    if block:
        server.wait()
    return server
