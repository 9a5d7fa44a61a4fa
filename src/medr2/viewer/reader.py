"""The human reader's page (``medr2 eval --model human:NAME``, docs/human.md): one question at a time, served from
the :class:`Desk` the ``human`` adapter (:mod:`medr2.viewer.human`) puts each request on, answered with buttons, a
box drawn on the image, a text, or "cannot determine", with an optional confidence.

Routes (:data:`READER_ROUTES`):

- ``GET /``: the question on the desk (or a short wait for the next one, or the end of the sitting);
- ``POST /answer``: the answer to the question named by its request key (CSRF-checked by the view's ``guard``,
  like every write); a stale or repeated answer is refused (409), a malformed one is a 400 naming the field;
  then back to ``/`` (303);
- ``GET /img/NAME``: an image of the question on the desk, by its sha256 file name (nothing else is ever read);
- ``/static/NAME``, ``/favicon.ico``: the view's.

The app is the view's (:func:`medr2.viewer.server.guard`: loopback Host check, CSRF on writes, security headers and
the strict Content-Security-Policy on every answer, errors as pages); every value is escaped by Jinja's autoescape.
"""

from __future__ import annotations

import asyncio
import math
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from aiohttp import web

from medr2.errors import BadInput
from medr2.records import letter
from medr2.viewer.server import APP_STATE, DEFAULT_HOST, favicon, make_app, static

ReplyKind = Literal["choice", "letters", "box", "text", "abstain"]
KEY = re.compile(r"[0-9a-f]{64}")  # a request key (medr2.run.prompts.request_hash)
IMAGE_NAME = re.compile(r"([0-9a-f]{64})\.png")
MAX_TEXT = 20_000  # characters of a typed answer
WAIT_S = 3.0  # how long ``GET /`` waits for the next question before showing the waiting page (it refreshes)
CONFIDENCE_FORMS = ("mcq", "yesno")  # the forms whose answers have labels (medr2.models.confidence.labels_of)


@dataclass(frozen=True)
class Turn:
    """One message of the dialogue as the reader sees it: who speaks, the text, the images (sha256 names)."""

    role: str
    text: str
    images: tuple[str, ...] = ()


@dataclass(frozen=True)
class Question:
    """One request as a question for a person: the dialogue (the rendered messages, verbatim), the form of the
    answer and its options, the image a box is drawn on (and its size), where it stands in the sitting."""

    key: str
    item_id: str
    form: str
    options: tuple[str, ...]
    turns: tuple[Turn, ...]
    images: Mapping[str, Path]  # sha256 -> the bench file (verified) of every image shown
    box_image: str | None = None  # sha256 of the image a box is drawn on (form box)
    # sha256 -> what the image is to the question, where it shows several ("Image 1: prior study, 90 days before
    # the current one"; issue 49); none for one image
    captions: Mapping[str, str] = field(default_factory=dict)
    width: int | None = None
    height: int | None = None
    position: int = 1
    total: int = 1

    @property
    def confidence(self) -> bool:
        """Whether a confidence can be given (the forms with labelled answers)."""
        return self.form in CONFIDENCE_FORMS

    def choices(self) -> list[tuple[str, str]]:
        """The buttons of a closed question: (value sent, label shown)."""
        if self.form == "yesno":
            return [("yes", "yes"), ("no", "no")]
        return [(letter(i), opt) for i, opt in enumerate(self.options)]


@dataclass(frozen=True)
class Reply:
    """What the person gave: a choice (a letter, ``yes``/``no``), letters (multi), a box in pixels of the bench
    image, a text, or an abstention; and the confidence in it (0-1), if stated."""

    kind: ReplyKind
    choice: str | None = None
    letters: tuple[str, ...] = ()
    box: tuple[float, float, float, float] | None = None
    text: str | None = None
    confidence: float | None = None


class Stale(Exception):
    """An answer to a question that is not (or no longer) on the desk."""


class Closed(Exception):
    """The desk was closed while a question waited (the run is ending)."""


@dataclass
class Desk:
    """The one question being asked, between the adapter's thread (:meth:`ask` blocks until it is answered) and
    the page's (:meth:`showing`, :meth:`submit`). One question at a time: a person reads one image at once."""

    reader: str
    _cond: threading.Condition = field(default_factory=threading.Condition)
    _current: Question | None = None
    _reply: Reply | None = None
    _shown_at: float | None = None
    answered: int = 0
    finished: bool = False
    _unseen: bool = False  # an answer's redirect has not been shown its next page yet

    def ask(self, question: Question) -> tuple[Reply, float]:
        """Put ``question`` on the desk and wait for its answer: (the reply, seconds from first shown to
        answered). Waits in short steps so Ctrl-C / SIGTERM reach the caller; :class:`Closed` if closed."""
        with self._cond:
            if self.finished:
                raise Closed
            self._current, self._reply, self._shown_at = question, None, None
            asked = time.monotonic()
            self._cond.notify_all()
            try:
                while self._reply is None:
                    if self.finished:
                        raise Closed
                    self._cond.wait(0.25)
                reply, shown = self._reply, self._shown_at
            finally:
                self._current, self._reply = None, None
            self.answered += 1
            return reply, time.monotonic() - (shown if shown is not None else asked)

    def showing(self) -> Question | None:
        """The question on the desk, marked shown (its reading time starts at the first showing)."""
        with self._cond:
            if self._current is not None and self._shown_at is None:
                self._shown_at = time.monotonic()
            if self._current is not None or self.finished:
                self._unseen = False
            return self._current

    def submit(self, key: str, reply: Reply) -> None:
        with self._cond:
            if self._current is None or self._current.key != key or self._reply is not None:
                raise Stale
            self._reply, self._current = reply, None  # answered: off the desk at once (a reload never shows it again)
            self._unseen = True
            self._cond.notify_all()

    def finish(self, grace_s: float = 3.0, linger_s: float = 1.0) -> None:
        """Close the desk. Where the page after an answer is still on its way, wait up to ``grace_s`` for it to
        be served (it says the sitting is done), then ``linger_s`` for its style and script."""
        with self._cond:
            self.finished = True
            waiting = self._unseen
            self._cond.notify_all()
        if not waiting:
            return
        end = time.monotonic() + grace_s
        while self._unseen and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(linger_s)


# ---------------------------------------------------------------------------------------------
# the answer form


def _field(form: Mapping[str, str | object], name: str) -> str:
    value = form.get(name)
    return value if isinstance(value, str) else ""


def parse_reply(question: Question, form: Mapping[str, object], letters: list[str]) -> Reply:
    """The posted answer to ``question`` (``action``: the button pressed), checked against the question: a
    letter of its options, yes/no, letters of its options, a box inside the image, a non-empty text. Anything
    else is :class:`BadInput` naming the field."""
    action = _field(form, "action")
    conf_text = _field(form, "confidence").strip()
    confidence: float | None = None
    if conf_text and action != "abstain":
        if not question.confidence:
            raise BadInput("this question takes no confidence", field="confidence")
        try:
            value = float(conf_text)
        except ValueError:
            raise BadInput("must be a number from 0 to 100", field="confidence") from None
        if not (math.isfinite(value) and 0 <= value <= 100):
            raise BadInput("must be a number from 0 to 100", field="confidence")
        confidence = value / 100
    if action == "abstain":
        return Reply("abstain")
    if question.form in ("mcq", "yesno"):
        if action not in {v for v, _ in question.choices()}:
            raise BadInput(f"not an answer of this question: {action[:20]!r}", field="action")
        return Reply("choice", choice=action, confidence=confidence)
    if question.form == "multi" and action == "letters":
        valid = {v for v, _ in question.choices()}
        chosen = tuple(sorted(set(letters)))
        if not chosen or not set(chosen) <= valid:
            raise BadInput("tick at least one option of this question", field="letters")
        return Reply("letters", letters=chosen)
    if question.form == "box" and action == "box":
        return Reply("box", box=_box(question, _field(form, "box")))
    if question.form == "text" and action == "text":
        text = _field(form, "text").strip()
        if not text or len(text) > MAX_TEXT:
            raise BadInput(f"write an answer (at most {MAX_TEXT:,} characters)", field="text")
        return Reply("text", text=text)
    raise BadInput(f"not an answer of a {question.form} question: {action[:20]!r}", field="action")


def _box(question: Question, text: str) -> tuple[float, float, float, float]:
    """``x1,y1,x2,y2`` in pixels of the image, a box of positive size inside it."""
    parts = text.split(",")
    try:
        x1, y1, x2, y2 = (float(p) for p in parts)
    except ValueError:
        raise BadInput("draw a box on the image", field="box") from None
    w, h = question.width or 0, question.height or 0
    if not all(math.isfinite(v) for v in (x1, y1, x2, y2)) or not (0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h):
        raise BadInput(f"the box must lie inside the {w}x{h} image, with x1 < x2 and y1 < y2", field="box")
    return x1, y1, x2, y2


# ---------------------------------------------------------------------------------------------
# the app

APP_DESK = web.AppKey("desk", Desk)


def _render(request: web.Request, template: str, **context: object) -> str:
    state = request.app[APP_STATE]
    return str(state["env"].get_template(template).render(csrf_token=state["token"], **context))


async def question_page(request: web.Request) -> web.Response:
    desk = request.app[APP_DESK]
    end = time.monotonic() + WAIT_S
    question = desk.showing()
    while question is None and not desk.finished and time.monotonic() < end:
        await asyncio.sleep(0.05)
        question = desk.showing()
    state = "question" if question is not None else "done" if desk.finished else "waiting"
    html = _render(request, "reader.html.jinja", title=f"medr2 reader · {desk.reader}", reader=desk.reader,
                   q=question, state=state, answered=desk.answered)
    return web.Response(text=html, content_type="text/html")


async def answer(request: web.Request) -> web.Response:
    desk = request.app[APP_DESK]
    form = await request.post()
    key = _field(form, "key")
    if not KEY.fullmatch(key):
        raise BadInput("no question named", field="key")
    question = desk.showing()
    if question is None or question.key != key:
        raise web.HTTPConflict(text="this question is answered already (or was never asked here); the page shows "
                                    "the question waiting now")
    reply = parse_reply(question, form, [v for v in form.getall("letters", []) if isinstance(v, str)])
    try:
        desk.submit(key, reply)
    except Stale:
        raise web.HTTPConflict(text="this question is answered already") from None
    return web.Response(status=303, headers={"Location": "/"})  # returned: the guard makes raised ones pages


async def image(request: web.Request) -> web.Response:
    got = IMAGE_NAME.fullmatch(request.match_info["name"])
    question = request.app[APP_DESK].showing()
    path = question.images.get(got.group(1)) if got is not None and question is not None else None
    if path is None:
        raise web.HTTPNotFound(text="no such image")
    loop = asyncio.get_running_loop()
    try:
        body = await loop.run_in_executor(request.app[APP_STATE]["reader"], path.read_bytes)
    except OSError as e:
        raise web.HTTPNotFound(text="no such image") from e
    return web.Response(body=body, content_type="image/png")


# every route of the reader's app: (method, path, handler)
READER_ROUTES: tuple[tuple[str, str, Callable[[web.Request], Awaitable[web.StreamResponse]]], ...] = (
    ("GET", "/", question_page),
    ("POST", "/answer", answer),
    ("GET", "/img/{name}", image),
    ("GET", "/static/{name}", static),
    ("GET", "/favicon.ico", favicon),
)


def make_reader_app(desk: Desk, *, host: str = DEFAULT_HOST) -> web.Application:
    """The reading page over ``desk``: the viewer's app (:func:`medr2.viewer.server.make_app`: its guard, token and
    file reader) with the reader's routes; ``host`` the address it will be bound to (loopback: other Hosts refused)."""
    app = make_app(None, host=host, routes=READER_ROUTES)
    app[APP_DESK] = desk
    app[APP_STATE]["error_page"] = "reader_error.html.jinja"
    return app
