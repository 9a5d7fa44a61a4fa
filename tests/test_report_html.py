"""The written report: files, self-containment (no external URL), escaping of model output and of run
names, the JSON data island, the content-security policy, plots, limits, determinism, the command."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given, strategies as st
from PIL import Image
from typer.testing import CliRunner

from medr2 import BadInput
from medr2.cli import app
from medr2.reporting import write_report
from medr2.reporting.browser import RESPONSE_CHARS, browser_data, clean_text, script_safe_json
from medr2.reporting.inputs import load_run
from tests.report_fixtures import HOSTILE, SCRIPT, Fixture, make_fixture


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return make_fixture(tmp_path_factory.mktemp("html"))


@pytest.fixture(scope="module")
def report(fx: Fixture, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out")
    write_report(fx.runs, out)
    return out


PAGE_TAGS = {"html", "head", "meta", "link", "title", "style", "body", "header", "h1", "h2", "p", "main", "section",
             "div", "table", "caption", "tr", "th", "td", "code", "figure", "img", "figcaption", "b", "i", "span",
             "label", "select", "input", "button", "script"}


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.scripts: list[dict[str, str | None]] = []
        self.meta: list[dict[str, str | None]] = []
        self.handlers: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags.add(tag)
        self.handlers += [k for k, _ in attrs if k.startswith("on")]
        self.urls += [v or "" for k, v in attrs if k in ("src", "href", "action", "srcset", "poster", "data")]
        if tag == "script":
            self.scripts.append(a)
        if tag == "meta":
            self.meta.append(a)


def _island(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="medr2-data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))


def test_files(report: Path) -> None:
    for name in ("index.html", "leaderboard.md", "leaderboard.csv", "leaderboard.json"):
        assert (report / name).stat().st_size > 0
    plots = sorted(p.name for p in (report / "plots").iterdir())
    # no calibration or slices plot: the fixture's runs carry no confidences and were scored without --slice
    assert plots == ["attacks.png", "confusion_1_run_before.png", "confusion_2_run_after.png", "prompt_reliance.png",
                     "robustness_heatmap.png", "stage_curves.png", "visual_reliance.png"]
    for p in (report / "plots").iterdir():
        with Image.open(p) as im:
            assert im.format == "PNG" and im.width > 300 and im.height > 200


def test_self_contained(report: Path) -> None:
    html = (report / "index.html").read_text("utf-8")
    c = _Collect()
    c.feed(html)
    assert c.urls and all(u.startswith("data:") for u in c.urls), [u[:40] for u in c.urls if not u.startswith("data:")]
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:|//)""", html, re.I)
    assert "url(" not in html and "@import" not in html
    # every plot is embedded, as a PNG data URI
    for p in (report / "plots").iterdir():
        assert base64.b64encode(p.read_bytes()).decode() in html


def test_model_output_escaped(report: Path, fx: Fixture) -> None:
    html = (report / "index.html").read_text("utf-8")
    for raw in HOSTILE.values():
        if any(ch in raw for ch in "<>&"):
            assert raw[:200] not in html
    assert "<script>alert" not in html and "</script><script>" not in html
    assert "\u2028" not in html and "\u2029" not in html
    c = _Collect()
    c.feed(html)
    assert [s.get("type") for s in c.scripts] == ["application/json", None]
    assert c.handlers == []  # no event handler attribute anywhere
    assert c.tags <= PAGE_TAGS, c.tags - PAGE_TAGS  # only the template's own elements
    data = _island(html)
    responses = [r["x"] for r in data["rows"]]
    assert SCRIPT in responses  # the text survives exactly, as data
    assert HOSTILE["close"] in responses and HOSTILE["img"] in responses
    assert any(x.startswith("\u2400\u2407B\u241b[31m red \u2421 done") for x in responses)
    huge = next(x for x in responses if x.startswith("Avery long"))
    assert len(huge) < RESPONSE_CHARS + 100 and "more characters]" in huge
    errors = [r for r in data["rows"] if r["xs"] == "error"]
    assert errors and errors[0]["vd"] == "error" and "HTTP 500" in errors[0]["xe"]


def test_csp_allows_only_own_script(report: Path) -> None:
    html = (report / "index.html").read_text("utf-8")
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    policy = csp.group(1).replace("&#39;", "'")
    assert "default-src 'none'" in policy and "img-src data:" in policy and "unsafe-inline" not in policy
    js = re.search(r"<script>(.*?)</script>", html, re.S)
    assert js is not None
    digest = base64.b64encode(hashlib.sha256(js.group(1).encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in policy


def test_run_names_are_escaped(fx: Fixture, tmp_path: Path) -> None:
    hostile = tmp_path / "run<b>&'x"
    shutil.copytree(fx.runs[0], hostile)
    write_report([hostile], tmp_path / "out", max_items=3)
    html = (tmp_path / "out" / "index.html").read_text("utf-8")
    assert "run<b>" not in html and "run&lt;b&gt;&amp;&#39;x" in html
    assert _island(html)["runs"][0]["label"] == "run<b>&'x"


def test_item_limit_same_items_in_every_run(fx: Fixture) -> None:
    runs = [load_run(r) for r in fx.runs]
    items = {it.item_id: it for it in fx.items}
    data = browser_data(runs, items, max_items=6)
    assert data["shown"] == 6 and data["total"] == 2 * len(fx.items)
    by_run = [{r["id"] for r in data["rows"] if r["r"] == k} for k in (0, 1)]
    assert by_run[0] == by_run[1] and len(by_run[0]) == 3
    assert len(data["images"]) <= 6
    for uri in data["images"]:
        with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as im:
            assert max(im.size) <= 256
    cue_rows = [r for r in browser_data(runs, items)["rows"] if r["cue"]]
    assert cue_rows and all(r["w"] and r["h"] and len(r["cue"]["box"]) == 4 for r in cue_rows)


def test_deterministic(fx: Fixture, report: Path, tmp_path: Path) -> None:
    write_report(fx.runs, tmp_path)
    for name in ("index.html", "leaderboard.md", "leaderboard.csv", "leaderboard.json", "plots/stage_curves.png"):
        assert (tmp_path / name).read_bytes() == (report / name).read_bytes(), name


def test_bench_mismatch_refused(fx: Fixture, tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(fx.runs[0], run)
    m = json.loads((run / "manifest.json").read_text())
    m["bench"]["checksum"] = "0" * 64
    (run / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BadInput, match="bench.checksum|was made on bench"):
        write_report([run], tmp_path / "out")


def test_command(fx: Fixture, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["report", *map(str, fx.runs), "--out", str(tmp_path / "r"), "--max-items", "10"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r" / "index.html").is_file()
    assert len(_island((tmp_path / "r" / "index.html").read_text("utf-8"))["rows"]) == 10


def test_command_missing_metrics(fx: Fixture, tmp_path: Path) -> None:
    run = tmp_path / "unscored"
    shutil.copytree(fx.runs[0], run)
    (run / "metrics.json").unlink()
    with pytest.raises(BadInput, match="metrics.json"):
        write_report([run], tmp_path / "out")


@given(st.text())
def test_script_safe_json_round_trip(text: str) -> None:
    out = script_safe_json({"x": text, "l": [text]})
    assert not any(ch in out for ch in "<>&\u2028\u2029")
    assert json.loads(out) == {"x": text, "l": [text]}


def test_clean_text() -> None:
    assert clean_text("a\x00b\tc\nd\x1b") == "a\u2400b\tc\nd\u241b"
    assert clean_text("x\ud800y") == "x?y"
    assert clean_text(None) == ""
    cut = clean_text("z" * 50, limit=10)
    assert cut.startswith("z" * 10 + "\n") and "40 more characters" in cut
