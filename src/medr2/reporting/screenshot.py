"""Screenshot of a written report in headless Chromium (Playwright driving the system Chromium; no
browser download). Usage: ``python -m medr2.reporting.screenshot REPORT_DIR OUT.png [--width 1400]``."""

from __future__ import annotations

import argparse
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from medr2.errors import BadInput

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync")


def find_chromium() -> str | None:
    if Path(CHROMIUM).exists():
        return CHROMIUM
    return shutil.which("chromium")


@contextmanager
def chromium_browser() -> Iterator[Any]:
    """A Playwright Chromium browser on the system's Chromium (Debian package ``chromium``)."""
    exe = find_chromium()
    if exe is None:
        raise BadInput("Chromium not found: install the distribution's package (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as e:
        raise BadInput("the playwright Python package is missing: pip install 'medr2[dev]'") from e
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=list(CHROMIUM_ARGS), headless=True)
        try:
            yield browser
        finally:
            browser.close()


def screenshot(report_dir: Path, out: Path, *, width: int = 1400, height: int = 2200) -> list[str]:
    """Render ``report_dir/index.html`` from its file:// URL into ``out`` (PNG, top ``height`` pixels).
    Returns the console errors and page errors seen (empty when the page is clean)."""
    index = Path(report_dir).resolve() / "index.html"
    if not index.is_file():
        raise BadInput("no index.html (run `medr2 report` first)", file=str(index))
    errors: list[str] = []
    with chromium_browser() as browser:
        page = browser.new_page(viewport={"width": width, "height": 1000})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(index.as_uri())
        page.wait_for_selector("#cards article")
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out), clip={"x": 0, "y": 0, "width": width, "height": height}, full_page=True)
    return errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m medr2.reporting.screenshot", description=__doc__)
    ap.add_argument("report_dir", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--width", type=int, default=1400)
    ap.add_argument("--height", type=int, default=2200)
    a = ap.parse_args(argv)
    errors = screenshot(a.report_dir, a.out, width=a.width, height=a.height)
    from medr2.console import echo

    for e in errors:
        echo(f"console error: {e}")
    echo(f"wrote {a.out}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
