"""``medr2 view``'s server over HTTP (a real aiohttp server on 127.0.0.1, started by the test; raw requests through
``http.client`` so no path is normalised on the way): every route answers with the security headers, no request
path reads a file outside the benches' ``images/`` (path traversal, generated), every unsafe method needs the
CSRF token (every route enumerated, and a write route added the way review will add one), a request for another
Host is refused, bad parameters are a 400 naming them; and the items pages are exactly the scored rows that
match, paged (generated filters against the whole file read here)."""

from __future__ import annotations

import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import pyarrow.parquet as pq
import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings, strategies as st

import medr2
from medr2.viewer.data import FILTER_FIELDS, PAGE_ROWS, Query, ViewData
from medr2.viewer.server import APP_STATE, CSP, CSRF_HEADER, ROUTES, SAFE_METHODS, SECURITY_HEADERS, make_app, start
from tests.raw_http import raw_request
from tests.report_fixtures import HOSTILE, make_fixture

SECRET = "TOP-SECRET-0a1b2c"  # in a file beside the runs and the bench, never to be served


@dataclass
class Served:
    root: Path
    url: str
    host: str
    port: int
    token: str
    runs: list[Path]
    bench: Path

    def request(self, method: str, path: str, *, headers: dict[str, str] | None = None, body: bytes | None = None,
                ) -> tuple[int, dict[str, str], bytes]:
        return raw_request(self.host, self.port, method, path, headers=headers, body=body)


async def _write_ok(request: web.Request) -> web.Response:
    return web.Response(text="written")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("view_server")
    fx = make_fixture(root)
    (root / "secret.txt").write_text(SECRET, "utf-8")
    (fx.bench / "secret.txt").write_text(SECRET, "utf-8")  # inside the bench, but not an image
    data = ViewData.open(fx.runs)
    app = make_app(data)
    # a write route added the way a later page set (review) adds one: the app's guard covers it by construction
    app.router.add_post("/test-write", _write_ok)
    server = start(app, port=0)
    parts = urlsplit(server.url)
    assert parts.hostname == "127.0.0.1" and parts.port
    try:
        yield Served(root, server.url, "127.0.0.1", parts.port, app[APP_STATE]["token"], fx.runs, fx.bench)
    finally:
        server.stop()


def _check_headers(headers: dict[str, str]) -> None:
    for k, v in SECURITY_HEADERS.items():
        assert headers.get(k.lower()) == v, k
    assert "'unsafe-inline'" not in CSP and "default-src 'none'" in CSP


def _route_paths() -> list[str]:
    """A concrete path of every route (their parameters filled with a real value)."""
    return [p.replace("{bench}", "0").replace("{name}", "view.js") for _, p, _ in ROUTES]


def test_every_route_answers_with_the_security_headers(served: Served) -> None:
    assert {m for m, _, _ in ROUTES} <= SAFE_METHODS  # the routes of today only read
    for path in [*_route_paths(), "/items?run=0&stage=1", "/item?id=x", "/no-such-route", "/items?run=99"]:
        head = served.request("HEAD", path)
        _check_headers(head[1])
        status, headers, body = served.request("GET", path)
        assert head[0] == status and head[2] == b"", path
        assert status in (200, 204, 400, 404), path
        _check_headers(headers)
        if headers.get("content-type", "").startswith("text/html"):
            assert b"<script>" not in body and b" style=" not in body  # nothing inline: the CSP allows none


def test_pages_show_text_never_markup(served: Served) -> None:
    """The hostile responses of the fixture reach the pages only inside the JSON island, escaped."""
    seen = b""
    for run in (0, 1):
        q = Query(run, (("mode", "independent"),), size=200)
        status, _, body = served.request("GET", "/items?" + urlencode(q.params()))
        assert status == 200
        seen += body
    island = re.search(rb'<script type="application/json" id="medr2-data">(.*?)</script>', seen, re.S)
    assert island is not None
    for bad in (b"<script>alert", b"<img src=x", b"</script><script>", b"<b>bold</b>"):
        assert bad not in seen
    rows = json.loads(island.group(1))["rows"]
    assert any(HOSTILE["img"] in r["x"] for r in rows)  # shown as text by the page's script (test_view.py)


PARTS = st.sampled_from(["..", "%2e%2e", "%2E%2E", ".", "%2f", "%5c", "\\", "secret.txt", "etc", "passwd",
                         "manifest.json", "items.parquet", "images", "0", "1", "..%2f..%2fsecret.txt",
                         "%00", "view.js", "a" * 64 + ".png", "/", "//", "~"])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.sampled_from(["/img/0/", "/img/1/", "/img/", "/static/", "/", "/item?id=", "/items?task="]),
       parts=st.lists(PARTS, min_size=1, max_size=6))
def test_no_path_reads_a_file_outside_the_bench_images(served: Served, prefix: str, parts: list[str]) -> None:
    path = prefix + "/".join(parts)
    status, headers, body = served.request("GET", path)
    assert SECRET.encode() not in body
    assert b"PAR1" not in body[:4] and b'"checksum"' not in body  # no bench table, no manifest
    if status == 200:
        ctype = headers["content-type"]
        # a static asset by its fixed name, or a page (the leaderboard, a filtered list, a not-found item)
        assert ctype.startswith(("text/html", "text/javascript", "text/css")), (path, ctype)
    _check_headers(headers)


def test_an_image_is_served_only_by_its_sha256_name(served: Served) -> None:
    images = sorted((served.bench / "images").glob("*.png"))
    status, headers, body = served.request("GET", f"/img/0/{images[0].name}")
    assert status == 200 and headers["content-type"] == "image/png" and body == images[0].read_bytes()
    outside = served.root / ("b" * 64 + ".png")
    shutil.copy(images[0], outside)
    for path in (f"/img/0/..%2f{outside.name}", f"/img/0/{quote('../' + outside.name, safe='')}",
                 f"/img/1/{images[0].name}", f"/img/0/{images[0].name.upper()}", "/img/0/secret.txt",
                 f"/img/00/{images[0].name}"):
        assert served.request("GET", path)[0] == 404, path


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_every_unsafe_request_needs_the_csrf_token(served: Served, method: str) -> None:
    for path in [*_route_paths(), "/test-write"]:
        status, headers, body = served.request(method, path, body=b"x=1",
                                               headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 403 and b"CSRF" in body, (method, path)
        _check_headers(headers)
    wrong = served.request("POST", "/test-write", headers={CSRF_HEADER: served.token[:-1] + "x"})
    assert wrong[0] == 403
    ok = served.request("POST", "/test-write", headers={CSRF_HEADER: served.token})
    assert ok[0] == 200 and ok[2] == b"written"
    form = served.request("POST", "/test-write", body=urlencode({"csrf": served.token}).encode(),
                          headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert form[0] == 200
    other = served.request("POST", "/test-write", headers={CSRF_HEADER: served.token,
                                                           "Origin": "http://evil.example"})
    assert other[0] == 403


def test_the_token_is_on_every_page_for_a_write_to_use(served: Served) -> None:
    status, _, body = served.request("GET", "/")
    assert status == 200 and f'<meta name="csrf-token" content="{served.token}">'.encode() in body


@given(host=st.sampled_from(["evil.example", "evil.example:80", "127.0.0.1.evil.example", "localhost.evil",
                             "10.0.0.1", "[::2]:1"]))
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_loopback_server_refuses_other_hosts(served: Served, host: str) -> None:
    status, headers, _ = served.request("GET", "/", headers={"Host": host})
    assert status == 403
    _check_headers(headers)
    for good in ("localhost", f"127.0.0.1:{served.port}", f"localhost:{served.port}"):
        assert served.request("GET", "/", headers={"Host": good})[0] == 200


@pytest.mark.parametrize("query,field", [("run=7", "run"), ("run=-1", "run"), ("page=x", "page"),
                                         ("stage=one", "stage"), ("stage=128", "stage"), ("size=0", "size"),
                                         ("size=100000", "size")])
def test_a_bad_parameter_is_a_400_naming_it(served: Served, query: str, field: str) -> None:
    status, _, body = served.request("GET", "/items?" + query)
    assert status == 400 and field.encode() in body and b"Traceback" not in body


def test_the_default_bind_is_loopback(served: Served) -> None:
    server = medr2.view(served.runs, port=0, block=False)
    try:
        assert urlsplit(server.url).hostname == "127.0.0.1"
    finally:
        server.stop()


def _all_rows(run: Path) -> list[dict[str, Any]]:
    return pq.read_table(str(run / "scores.parquet")).to_pylist()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_pages_are_exactly_the_matching_rows(served: Served, data: st.DataObject) -> None:
    view = ViewData.open(served.runs)
    try:
        run = data.draw(st.integers(0, len(served.runs) - 1))
        rows = _all_rows(served.runs[run])
        filters: list[tuple[str, str]] = []
        for f in FILTER_FIELDS:
            values = sorted({str(r[f]) for r in rows}) + ["99" if f == "stage" else "no-such-value"]
            v = data.draw(st.one_of(st.none(), st.sampled_from(values)), label=f)
            if v is not None:
                filters.append((f, v))
        size = data.draw(st.integers(1, 9))
        want = [(r["item_id"], r["mode"]) for r in rows if all(str(r[f]) == v for f, v in filters)]
        got: list[tuple[str, str]] = []
        q = Query(run, tuple(filters), 0, size)
        first = view.page(q)
        assert first.total == len(want) and first.pages == max(1, -(-len(want) // size))
        for p in range(first.pages):
            page = view.page(Query(run, tuple(filters), p, size))
            assert len(page.rows) <= size
            got += [(c["id"], c["m"]) for c in page.rows]
            assert all(c["r"] == run for c in page.rows)
        assert got == want
    finally:
        view.close()


def test_a_leaderboard_cell_opens_the_rows_its_column_names(served: Served) -> None:
    view = ViewData.open(served.runs)
    try:
        for i, row in enumerate(view.leaderboard.rows):
            for col in view.leaderboard.columns:
                q = view.cell_query(i, col.key)
                assert view.runs[q.run].label == row.run
                assert dict(q.filters) == {"mode": row.mode, **dict(col.items)}
        assert any(c.key.startswith("task:") for c in view.leaderboard.columns)
        assert any(c.key.startswith("variant:") for c in view.leaderboard.columns)
        assert Query(0).size == PAGE_ROWS
    finally:
        view.close()


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "medr2", "view", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_the_command_refuses_bad_input_with_one_line(served: Served, tmp_path: Path) -> None:
    missing = _cli(str(tmp_path / "nope"), "--port", "0")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert str(tmp_path / "nope") in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = _cli(str(served.runs[0]), "--port", str(taken.getsockname()[1]))
    assert busy.returncode == 2 and "--port" in busy.stderr and "Traceback" not in busy.stderr
    assert _cli(str(served.runs[0]), "--port", "70000").returncode == 2


def test_the_command_serves_until_interrupted(served: Served) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "medr2", "view", *map(str, served.runs), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url is not None, line
        with urllib.request.urlopen(url.group()) as r:
            assert r.status == 200 and b'id="lb"' in r.read()
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and "Traceback" not in err


@pytest.fixture(scope="module")
def sliced(served: Served) -> Iterator[tuple[ViewData, Path]]:
    """A copy of a run scored again with subgroup slices (``medr2 score --slice modality,stage,age``)."""
    run = served.root / "run_sliced"
    shutil.copytree(served.runs[1], run)
    medr2.score(run, slice=["modality,stage,age"], resamples=50)
    view = ViewData.open([run])
    try:
        yield view, run
    finally:
        view.close()


def test_a_slice_opens_its_cases_items(sliced: tuple[ViewData, Path]) -> None:
    """Every slice of slices.json opens rows of exactly its cases: as many as the scorer counted (n_cases), each
    row with the slice's item-level values, and the slices of one crossing share no row."""
    view, run = sliced
    slices = json.loads((run / "slices.json").read_text("utf-8"))
    rows = {(r["item_id"], r["mode"]): r for r in pq.read_table(str(run / "scores.parquet")).to_pylist()}
    tested = 0
    for mode, by in slices["modes"].items():
        for table in by.values():
            seen: set[tuple[str, str]] = set()
            for x in table["slices"]:
                q = view.slice_query(view.runs[0].label, mode, x["key"])
                assert q.cases and all(k in FILTER_FIELDS or (k, v) in q.cases for k, v in x["key"].items())
                page = view.page(Query(q.run, q.filters, 0, 200, q.cases))
                shown = [(c["id"], c["m"]) for c in page.rows]
                assert page.total == len(shown) > 0
                assert len({rows[k]["case_id"] for k in shown}) == x["n_cases"]
                for k in shown:
                    assert rows[k]["mode"] == mode
                    assert all(str(rows[k][f]) == v for f, v in x["key"].items() if f in FILTER_FIELDS)
                assert not seen & set(shown)
                seen |= set(shown)
                tested += 1
    assert tested >= 2


def test_a_slice_parameter_must_be_a_case_field(sliced: tuple[ViewData, Path]) -> None:
    from medr2 import BadInput

    with pytest.raises(BadInput, match="slice.task"):
        Query.parse({"slice.task": "x"}, 1)
    with pytest.raises(BadInput, match="slice.nope"):
        Query.parse({"slice.nope": "x"}, 1)
    assert Query.parse({"slice.modality": "MRI"}, 1).cases == (("modality", "MRI"),)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from('<>&"\\\'/=ab \u202e\u2028!-;#x'), min_size=1, max_size=24))
def test_a_value_from_the_request_is_escaped_where_the_page_shows_it(served: Served, text: str) -> None:
    """Values taken from the URL come back in the page (the filter form keeps them) only escaped: between two
    markers, no character that could end an attribute or open a tag, and every ``&`` starts an entity."""
    value = f"QZX{text}XZQ"
    query = urlencode({"run": "0", "task": value, "verdict": value, "slice.modality": value})
    status, headers, body = served.request("GET", "/items?" + query)
    assert status == 200
    shown = re.findall(r"QZX(.*?)XZQ", body.decode("utf-8"), re.S)
    assert len(shown) >= 3  # each value is shown (the form keeps it)
    for seg in shown:
        assert not set(seg) & set("<>\"'"), seg
        assert all(re.match(r"&(#[0-9]+|#x[0-9a-fA-F]+|[a-z]+);", seg[i:]) for i, c in enumerate(seg) if c == "&")
        assert "\u202e" not in seg  # bidi controls shown as markers, as in the report
    _check_headers(headers)
