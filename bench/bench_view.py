"""``medr2 view`` on a run of ``--rows`` scored rows: time from the command's start to the leaderboard page
served (first paint's HTML), the cold and cached items pages behind a task cell (a scan of the filter columns),
a late page, one item's side-by-side page, and the server's peak RSS (``VmHWM``) after them.

The run is the report tests' fixture (a real bench of 32 items, two scripted models, scored by the real scorer)
with ``run_before/scores.parquet`` grown to ``--rows`` rows: its 32 rows first, then copies whose item ids
(``ID~K``) the bench does not hold (the pages count them as not in the bench; the scan and paging cost is that of
a run of that many rows). Row groups of 65,536 rows, zstd, as the scorer writes.

The server is ready when its port accepts a connection; the first page is then asked by ``urllib`` (the HTML
received), or with ``--chromium`` by headless Chromium (Playwright, started before the command), whose
first-contentful-paint is added to the time the navigation started.

    PYTHONPATH=src:. .venv/bin/python bench/bench_view.py --out /tmp/viewbench --rows 1048576 [--chromium]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def grow(run: Path, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    t = pq.read_table(str(run / "scores.parquet"))
    n = t.num_rows
    reps = -(-rows // n)
    big = pa.concat_tables([t] * reps).slice(0, rows)
    k = pa.array([str(i // n) for i in range(rows)])
    ids = pc.if_else(pc.less(pa.array(range(rows)), n), big.column("item_id"),
                     pc.binary_join_element_wise(big.column("item_id"), k, "~"))
    big = big.set_column(big.schema.get_field_index("item_id"), "item_id", ids)
    pq.write_table(big, str(run / "scores.parquet"), row_group_size=65_536, compression="zstd")


# the first-contentful-paint time (ms after the navigation started), once Chromium reports it
FCP_JS = """new Promise(done => new PerformanceObserver(list => {
  const e = list.getEntriesByName('first-contentful-paint')[0];
  if (e) { done(e.startTime); }
}).observe({type: 'paint', buffered: true}))"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def timed_get(url: str) -> tuple[float, int]:
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as r:
        body = r.read()
    return time.perf_counter() - t, len(body)


def peak_rss_mib(pid: int) -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmHWM"].split()[0]) / 1024, int(fields["VmRSS"].split()[0]) / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--rows", type=int, default=1 << 20)
    ap.add_argument("--chromium", action="store_true", help="measure the first paint in Chromium")
    a = ap.parse_args()
    from tests.report_fixtures import make_fixture

    if not (a.out / "run_before" / "scores.parquet").is_file():
        a.out.mkdir(parents=True, exist_ok=True)
        make_fixture(a.out)
    grow(a.out / "run_before", a.rows)
    port = free_port()
    browser = None
    if a.chromium:
        from medr2.reporting.screenshot import chromium_browser

        browser_cm = chromium_browser()
        browser = browser_cm.__enter__()
        page = browser.new_page()
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}:{os.environ.get('PYTHONPATH', '')}"}
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "medr2", "view", str(a.out / "run_before"),
                             str(a.out / "run_after"), "--port", str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None:
                    raise SystemExit(proc.stderr.read().decode() if proc.stderr else "server exited") from None
                time.sleep(0.01)
        listening = time.perf_counter() - t0
        if browser is not None:
            started = time.perf_counter() - t0
            page.goto(base + "/")
            fcp = page.evaluate(FCP_JS) / 1000
            print(f"rows {a.rows:,}: listening {listening:.2f} s, first contentful paint in Chromium "
                  f"{started + fcp:.2f} s after `medr2 view` started")
        else:
            timed_get(base + "/")
            first = time.perf_counter() - t0
            print(f"rows {a.rows:,}: listening {listening:.2f} s, leaderboard received {first:.2f} s after "
                  "`medr2 view` started")
        for name, path in (("items, task cell (cold scan)", "/items?run=0&mode=independent&task=s1.modality"),
                           ("items, same cell (cached)", "/items?run=0&mode=independent&task=s1.modality"),
                           ("items, page 5000 of every row", "/items?run=0&mode=independent&page=5000"),
                           ("one item side by side (scans item_id)", "/item?id=10122331c3b42a40")):
            s, n = timed_get(base + path)
            print(f"  {name}: {s:.2f} s ({n:,} bytes)")
        hwm, rss = peak_rss_mib(proc.pid)
        print(f"  server peak RSS {hwm:.0f} MiB, RSS now {rss:.0f} MiB")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        if browser is not None:
            browser_cm.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
