"""The human reader's page (``medr2.viewer.reader``) over real HTTP on 127.0.0.1 (raw requests through ``http.client``,
so nothing is normalised on the way), and the ``human`` adapter's answers: every route answers with the view's
security headers and CSP; an answer needs the CSRF token and a same-origin ``Origin``; another Host is refused;
the image route serves only the images of the question on the desk (generated names, path traversal included);
question text from the bench is escaped; a malformed answer is a 400 naming its field, a repeated one a 409; a
box drawn in pixels is stored in the box convention of every registered preset and reads back (the scorer's own
reader) as the box drawn; a stated confidence is the answer's probability."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import BadInput, BoxConvention, Item
from medr2.images import encode_png, sha256_bytes
from medr2.models.presets import PRESETS, model_image_size
from medr2.records import ABSTAIN_OPTION, letter
from medr2.scoring.boxes import read_box_pixels
from medr2.scoring.extract import read
from medr2.viewer.human import HumanAdapter
from medr2.viewer.reader import Desk, Question, Reply, Turn, make_reader_app, parse_reply
from medr2.viewer.server import CSP, SECURITY_HEADERS, start
from tests.raw_http import raw_request

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>&amp;\u202e"


@dataclass
class Served:
    host: str
    port: int
    desk: Desk
    image: bytes
    sha: str

    def request(self, method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes | None = None,
                ) -> tuple[int, dict[str, str], bytes]:
        return raw_request(self.host, self.port, method, path, headers=headers, body=body)

    def page(self) -> str:
        status, _, body = self.request("GET", "/")
        assert status == 200
        return body.decode("utf-8")

    def token(self) -> str:
        found = re.search(r'name="csrf" value="([^"]+)"', self.page())
        assert found
        return found.group(1)

    def post(self, fields: dict[str, str] | list[tuple[str, str]], *, origin: str | None = "same",
             ) -> tuple[int, dict[str, str], bytes]:
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        if origin is not None:
            headers["Origin"] = f"http://{self.host}:{self.port}" if origin == "same" else origin
        return self.request("POST", "/answer", headers=headers, body=urlencode(fields).encode())


class Asker:
    """Puts questions on the desk from another thread (as the adapter does) and collects the replies."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.replies: list[Reply] = []
        self.thread: threading.Thread | None = None

    def ask(self, q: Question) -> None:
        def run() -> None:
            reply, _ = self.desk.ask(q)
            self.replies.append(reply)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        while self.desk.showing() is None:
            threading.Event().wait(0.01)

    def wait(self) -> Reply:
        assert self.thread is not None
        self.thread.join(timeout=30)
        return self.replies[-1]


def _question(key: str, form: str, image: Path, sha: str, options: tuple[str, ...] = ("one", "two", HOSTILE)
              ) -> Question:
    return Question(key=key, item_id="item-1", form=form, options=options if form in ("mcq", "multi") else (),
                    turns=(Turn("user", f"What is shown? {HOSTILE}", (sha,)),), images={sha: image},
                    box_image=sha if form == "box" else None, width=40, height=30)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, Asker, Path]]:
    import numpy as np

    root = tmp_path_factory.mktemp("reader")
    data = encode_png(np.arange(40 * 30, dtype=np.uint8).reshape(30, 40))
    sha = sha256_bytes(data)
    (root / "images").mkdir()
    image = root / "images" / f"{sha}.png"
    image.write_bytes(data)
    (root / "secret.txt").write_text("TOP-SECRET", "utf-8")
    desk = Desk("alice")
    server = start(make_reader_app(desk), port=0)
    parts = urlsplit(server.url)
    assert parts.hostname == "127.0.0.1" and parts.port
    try:
        yield Served(parts.hostname, parts.port, desk, data, sha), Asker(desk), image
    finally:
        desk.finish(grace_s=0)
        server.stop()


def test_every_route_carries_the_security_headers(served: tuple[Served, Asker, Path]) -> None:
    s, asker, image = served
    asker.ask(_question("a" * 64, "mcq", image, s.sha))
    for path in ("/", f"/img/{s.sha}.png", "/img/nope.png", "/static/reader.js", "/static/reader.css",
                 "/static/nope.js", "/favicon.ico", "/nowhere"):
        _, headers, _ = s.request("GET", path)
        for k, v in SECURITY_HEADERS.items():
            assert headers.get(k.lower()) == v, (path, k)
    assert SECURITY_HEADERS["Content-Security-Policy"] == CSP and "'unsafe-inline'" not in CSP
    html = s.page()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # the bench's text, escaped (question and option)
    assert not re.search(r"<script(?![^>]*\bsrc=\"/static/reader\.js\")", html)  # no inline script at all
    assert s.post({"csrf": s.token(), "key": "a" * 64, "action": "A"})[0] == 303
    assert asker.wait() == Reply("choice", choice="A")


def test_an_answer_needs_the_token_and_the_same_origin(served: tuple[Served, Asker, Path]) -> None:
    s, asker, image = served
    key = "b" * 64
    asker.ask(_question(key, "yesno", image, s.sha))
    token = s.token()
    assert s.post({"key": key, "action": "yes"})[0] == 403  # no token
    assert s.post({"csrf": token[:-1] + ("A" if token[-1] != "A" else "B"), "key": key, "action": "yes"})[0] == 403
    assert s.post({"csrf": token, "key": key, "action": "yes"}, origin="http://evil.example")[0] == 403
    assert s.post({"csrf": token, "key": key, "action": "yes"}, origin="null")[0] == 403
    status, headers, body = s.request("GET", "/", headers={"Host": "evil.example"})
    assert status == 403 and b"127.0.0.1" in body  # DNS rebinding: another Host is refused
    assert s.desk.showing() is not None and not asker.replies[1:]  # nothing was taken as an answer
    status, headers, _ = s.post({"csrf": token, "key": key, "action": "no", "confidence": "65"}, origin=None)
    assert status == 303 and headers["location"] == "/"
    assert asker.wait() == Reply("choice", choice="no", confidence=0.65)
    status, _, body = s.post({"csrf": token, "key": key, "action": "yes"})
    assert status == 409 and b"answered already" in body  # once only


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.one_of(
    st.text(st.characters(exclude_categories=["Cs"]), max_size=40),
    st.builds(lambda n, s: "../" * n + s, st.integers(0, 6), st.sampled_from(["secret.txt", "images/", "etc/passwd"])),
    st.builds(lambda h: f"{h}.png", st.text("0123456789abcdef", min_size=64, max_size=64))))
def test_the_image_route_serves_only_the_images_on_the_desk(served: tuple[Served, Asker, Path], name: str) -> None:
    s, asker, image = served
    if s.desk.showing() is None:
        asker.ask(_question("c" * 64, "box", image, s.sha))
    status, headers, body = s.request("GET", "/img/" + quote(name, safe=""))
    if name == f"{s.sha}.png":
        assert status == 200 and body == s.image
    else:
        assert status == 404 and b"TOP-SECRET" not in body and body != s.image
    status, _, body = s.request("GET", f"/img/{s.sha}.png")
    assert status == 200 and body == s.image


def test_a_malformed_answer_is_a_400_naming_its_field(served: tuple[Served, Asker, Path]) -> None:
    s, asker, image = served
    if s.desk.showing() is None:
        asker.ask(_question("c" * 64, "box", image, s.sha))
    key = s.desk.showing().key  # type: ignore[union-attr]
    token = s.token()
    for fields, field in ((("action", "A"),), "action"), ((("action", "box"), ("box", "1,2,3")), "box"), \
            ((("action", "box"), ("box", "0,0,41,10")), "box"), ((("action", "box"), ("box", "5,5,5,9")), "box"), \
            ((("action", "box"), ("box", "1,1,9,9"), ("confidence", "50")), "confidence"):
        status, _, body = s.post([("csrf", token), ("key", key), *fields])
        assert status == 400 and field.encode() in body, (fields, body[-400:])
    assert s.post([("csrf", token), ("key", "0" * 64), ("action", "abstain")])[0] == 409  # not on the desk
    assert s.post([("csrf", token), ("key", "../x"), ("action", "abstain")])[0] == 400
    assert s.post([("csrf", token), ("key", key), ("action", "box"), ("box", "1.5,2,39.5,30")])[0] == 303
    assert asker.wait() == Reply("box", box=(1.5, 2.0, 39.5, 30.0))


# -- the answers as stored ---------------------------------------------------------------------------------------

def _item(form: Any, n_options: int, width: int, height: int) -> Item:
    options = [f"option {i}" for i in range(n_options)] if form in ("mcq", "multi") else []
    return Item(item_id="i1", case_id="c1", stage=1, task="s1.test", form=form, question="q?", options=options,
                answer="A" if form == "mcq" else "yes", chance=0.5, image="images/x.png", image_width=width,
                image_height=height, template_id="t", source="test", license="test")


@pytest.fixture(scope="module")
def adapter() -> Iterator[HumanAdapter]:
    a = HumanAdapter("alice", port=0, announce=False)
    try:
        yield a
    finally:
        a.close()


@settings(max_examples=200, deadline=None)
@given(conv=st.sampled_from(sorted({p.box for p in (PRESETS.lookup(n) for n in PRESETS.names())} | {BoxConvention()},
                                   key=repr)),
       size=st.tuples(st.integers(16, 4000), st.integers(16, 4000)),
       corners=st.tuples(*[st.floats(0, 1) for _ in range(4)]))
def test_a_drawn_box_is_stored_in_the_convention_and_reads_back(adapter: HumanAdapter, conv: BoxConvention,
                                                                 size: tuple[int, int],
                                                                 corners: tuple[float, ...]) -> None:
    w, h = size
    xs, ys = sorted((corners[0] * w, corners[2] * w)), sorted((corners[1] * h, corners[3] * h))
    if xs[1] - xs[0] < 1 or ys[1] - ys[0] < 1:
        return
    box = (xs[0], ys[0], xs[1], ys[1])
    adapter.box_convention = conv
    raw = adapter.answer_text(_item("box", 0, w, h), Reply("box", box=box))
    back, why = read_box_pixels(raw, conv, w, h)
    assert back is not None, (raw, why)
    mw, mh = model_image_size(conv, w, h)
    step = 0.001 if conv.space == "unit" else 1.0  # written with 3 decimals in 0-1, as integers otherwise
    # half a written step of rounding, and one more where a box under one step is written one step wide
    tol = [1.5 * step * w / mw + 1e-6, 1.5 * step * h / mh + 1e-6] * 2
    assert all(abs(a - b) <= t for a, b, t in zip(back, box, tol, strict=True)), (conv, raw, box, back)


@given(form=st.sampled_from(["mcq", "yesno"]), n=st.integers(2, 8), pick=st.integers(0, 7),
       confidence=st.one_of(st.none(), st.integers(0, 100)))
@settings(max_examples=100, deadline=None)
def test_a_stated_confidence_is_the_answers_probability(adapter: HumanAdapter, form: str, n: int, pick: int,
                                                        confidence: int | None) -> None:
    item = _item(form, n, 10, 10)
    labels = [letter(i) for i in range(n)] if form == "mcq" else ["yes", "no"]
    choice = labels[pick % len(labels)]
    q = Question("d" * 64, "i1", form, tuple(item.options), (), {}, width=10, height=10)
    fields = {"action": choice, "confidence": "" if confidence is None else str(confidence)}
    reply = parse_reply(q, fields, [])
    raw = adapter.answer_text(item, reply)
    assert read(form, raw, item.options).value == choice  # the scorer reads what was pressed
    conf = adapter.confidence(item, reply)
    if confidence is None:
        assert conf is None
    else:
        assert conf is not None and conf.source == "reader" and set(conf.probs) == set(labels)
        assert conf.probs[choice] == pytest.approx(confidence / 100)
        assert sum(conf.probs.values()) == pytest.approx(1.0)


@pytest.mark.parametrize("form", ["mcq", "yesno", "multi", "box", "text"])
def test_cannot_determine_is_scored_abstained_for_every_form(adapter: HumanAdapter, form: str) -> None:
    item = _item(form, 3, 10, 10)
    q = Question("e" * 64, "i1", form, tuple(item.options), (), {}, width=10, height=10)
    reply = parse_reply(q, {"action": "abstain", "confidence": "70"}, [])
    raw = adapter.answer_text(item, reply)
    assert raw == ABSTAIN_OPTION and read(form, raw, item.options).abstained
    assert adapter.confidence(item, reply) is None


def test_the_factory_refuses_what_it_does_not_know() -> None:
    from medr2 import ModelConfig
    from medr2.models.registry import load_adapter

    with pytest.raises(BadInput, match="unknown model option"):
        load_adapter(ModelConfig("human:alice", extra={"colour": "red"}))
    with pytest.raises(BadInput, match="port"):
        load_adapter(ModelConfig("human:alice", extra={"port": "x"}))
    with pytest.raises(BadInput, match="name"):
        load_adapter(ModelConfig("human:<b>", extra={"port": 0}))
    a: Any = load_adapter(ModelConfig("human:bob", extra={"port": 0}))
    try:
        assert a.key == "human:bob" and a.url.startswith("http://127.0.0.1:")
    finally:
        a.close()


def test_ticked_letters_and_a_typed_text_are_taken_as_given(served: tuple[Served, Asker, Path]) -> None:
    s, asker, image = served
    if s.desk.showing() is not None:  # left by an earlier test: answered out of the way
        s.post({"csrf": s.token(), "key": s.desk.showing().key, "action": "abstain"})  # type: ignore[union-attr]
        asker.wait()
    asker.ask(_question("f" * 64, "multi", image, s.sha))
    token = s.token()
    assert s.post([("csrf", token), ("key", "f" * 64), ("action", "letters")])[0] == 400  # nothing ticked
    assert s.post([("csrf", token), ("key", "f" * 64), ("action", "letters"), ("letters", "D")])[0] == 400
    assert s.post([("csrf", token), ("key", "f" * 64), ("action", "letters"), ("letters", "C"),
                   ("letters", "A"), ("letters", "C")])[0] == 303
    assert asker.wait() == Reply("letters", letters=("A", "C"))
    asker.ask(_question("9" * 64, "text", image, s.sha))
    assert s.post({"csrf": token, "key": "9" * 64, "action": "text", "text": "   "})[0] == 400
    assert s.post({"csrf": token, "key": "9" * 64, "action": "text", "text": f" {HOSTILE}\n"})[0] == 303
    assert asker.wait() == Reply("text", text=HOSTILE.strip())
