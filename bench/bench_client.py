"""Client overhead of medr2's ``openai`` adapter and runner, side by side with peer clients.

Starts ``bench/instant_server.py`` in separate processes (``--servers N`` share one port with
SO_REUSEPORT), then, for each concurrency, runs the same N-item workload (one distinct PNG per
item, ``bench/workload.py``) through:

- ``medr2 adapter``: ``OpenAIAdapter.generate`` on the rendered requests (a fresh adapter per
  repeat, so every image is read and encoded once, inside the timing);
- ``medr2 eval``: the whole ``run_eval`` (load bench, render, hash, send, SQLite store, manifest)
  into a fresh run folder;
- peers, each in its own venv (``bench/setup_peers.sh``): the official ``openai`` SDK's async
  client and lmms-eval's ``async_openai`` model (``bench/peer_*.py``).

Client CPU is the client process's own CPU time (``time.process_time``); the server processes' CPU
(from ``/proc``) is reported apart. Each cell is the median of ``--repeats`` runs; every client runs
once per repeat, in turn (peers included), so all see the same load; ratios compare medians measured
in the same invocation.

    .venv/bin/python bench/bench_client.py [--n 1000] [--concurrency 1 8 64 256] [--repeats 3] \
        [--servers 1] [--latency 0] [--peers openai,lmms-eval] [--venvs /work/bench-venvs] [--spin-server]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from workload import make_workload  # noqa: E402

from medr2.bench.format import load_bench  # noqa: E402
from medr2.models.base import GenSettings, Request  # noqa: E402
from medr2.models.config import ModelConfig  # noqa: E402
from medr2.models.openai import OpenAIAdapter  # noqa: E402
from medr2.run.prompts import get_mode, render_messages, request_hash  # noqa: E402
from medr2.run.runner import EvalConfig, Progress, run_eval  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
MODEL = "bench"
SETTINGS = GenSettings(max_new_tokens=16)


@dataclass
class Sample:
    client: str
    concurrency: int
    n: int
    ok: int
    wall_s: float
    cpu_s: float
    server_cpu_s: float
    send_rate: float | None = None  # answers per second from the start of sending to the last answer


class AnswerClock(Progress):
    """The runner's progress hook: when sending started and when the last answer arrived (so the
    send-phase rate excludes loading the bench and setting up)."""

    def __init__(self) -> None:
        self.t0: float | None = None
        self.last = 0.0
        self.count = 0

    def start(self, total: int) -> None:
        self.t0 = time.perf_counter()

    def advance(self, n: int = 1, *, error: bool = False, retries: int = 0, skipped: bool = False) -> None:
        self.last = time.perf_counter()
        self.count += n

    def rate(self) -> float | None:
        return self.count / (self.last - self.t0) if self.t0 is not None and self.count else None


class Servers:
    """N instant-server processes on one port."""

    def __init__(self, n: int, latency: float, spin: bool = False) -> None:
        self.procs: list[subprocess.Popen[str]] = []
        self.port = 0
        for _ in range(n):
            args = [sys.executable, str(BENCH_DIR / "instant_server.py"), "--port", str(self.port),
                    "--latency", str(latency)] + (["--reuse-port"] if n > 1 else []) + (["--spin"] if spin else [])
            p = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
            assert p.stdout is not None
            line = p.stdout.readline()
            if not line.startswith("READY"):
                raise SystemExit(f"server did not start: {line!r}")
            self.port = int(line.split()[1])
            self.procs.append(p)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def cpu_s(self) -> float:
        total = 0
        for p in self.procs:
            fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / TICK

    def close(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.wait(10)


def build_requests(bench_root: Path) -> list[Request]:
    bench = load_bench(bench_root, validate=False)
    mode = get_mode("independent")
    conv = OpenAIAdapter(MODEL, base_urls=["http://unused/v1"]).box_convention
    out = []
    for it in bench.items:
        msgs = render_messages(it, mode=mode, history=[], conv=conv)
        h = request_hash(f"openai:{MODEL}", SETTINGS, msgs, item_id=it.item_id, mode=mode.name)
        out.append(Request(h, msgs, SETTINGS, bench.root, it.item_id))
    return out


def export_requests(requests: list[Request], path: Path) -> None:
    """One line per request: medr2's exact body, the image file and the user text (for peers)."""
    adapter = OpenAIAdapter(MODEL, base_urls=["http://unused/v1"])
    with path.open("w", encoding="utf-8") as f:
        for r in requests:
            user = r.messages[-1]
            image = next(p.image for p in user.parts if p.type == "image")
            text = "\n".join(p.text or "" for p in user.parts if p.type == "text")
            head = json.dumps({"image": str(r.bench_root / str(image)), "text": text})
            f.write(head[:-1] + ',"body":' + adapter.body(r).decode("utf-8") + "}\n")


def timed(client: str, conc: int, n: int, servers: Servers, fn: Callable[[], tuple[int, float | None]]) -> Sample:
    s0, t0, c0 = servers.cpu_s(), time.perf_counter(), time.process_time()
    ok, send_rate = fn()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return Sample(client, conc, n, ok, wall, cpu, servers.cpu_s() - s0, send_rate)


def run_adapter(url: str, requests: list[Request], conc: int) -> tuple[int, float | None]:
    adapter = OpenAIAdapter(MODEL, base_urls=[url], concurrency=conc, timeout_s=60.0, retries=0)
    clock = AnswerClock()
    clock.start(len(requests))
    ok = 0
    try:
        for _, r in adapter.stream(requests):
            ok += r.status == "ok"
            clock.advance()
    finally:
        adapter.close()
    return ok, clock.rate()


def warm_adapter(url: str, requests: list[Request], conc: int) -> OpenAIAdapter:
    """An adapter whose image cache already holds every image (as on a second mode or variant)."""
    adapter = OpenAIAdapter(MODEL, base_urls=[url], concurrency=conc, timeout_s=60.0, retries=0)
    for r in requests:
        adapter.body(r)
    return adapter


def run_warm(adapter: OpenAIAdapter, requests: list[Request]) -> tuple[int, float | None]:
    try:
        return sum(r.status == "ok" for r in adapter.generate(requests)), None
    finally:
        adapter.close()


def load_bodies(reqfile: Path) -> list[bytes]:
    out = []
    with reqfile.open("rb") as f:
        for line in f:
            out.append(line[line.index(b',"body":') + 8:-2])
    return out


def run_plain_aiohttp(url: str, bodies: list[bytes], conc: int) -> tuple[int, float | None]:
    """The floor of the HTTP layer: bare aiohttp posts of pre-built bodies (no images to encode, no
    retries, no bookkeeping), ``json.loads`` of each answer."""
    import asyncio

    import aiohttp

    async def main() -> int:
        connector = aiohttp.TCPConnector(limit=conc, limit_per_host=0)
        headers = {"Content-Type": "application/json"}
        async with aiohttp.ClientSession(connector=connector) as session:
            sem = asyncio.Semaphore(conc)

            async def one(body: bytes) -> bool:
                async with sem, session.post(url + "/chat/completions", data=body, headers=headers) as r:
                    return r.status == 200 and json.loads(await r.read())["choices"][0]["message"]["content"] == "A"

            return sum(await asyncio.gather(*(one(b) for b in bodies)))

    return asyncio.run(main()), None


def run_cli_eval(url: str, bench_root: Path, conc: int, workdir: Path) -> tuple[int, float | None]:
    out = Path(tempfile.mkdtemp(dir=workdir, prefix=f"run-c{conc}-"))
    clock = AnswerClock()
    summary = run_eval(EvalConfig(bench=bench_root,
                                  model=ModelConfig(f"openai:{MODEL}", concurrency=conc, base_urls=(url,),
                                                    max_new_tokens=SETTINGS.max_new_tokens, timeout_s=60.0), out=out,
                                  split="all"),
                       progress=clock)
    return sum(c.ok for c in summary.modes.values()), clock.rate()


def run_peer(script: str, python: Path, url: str, reqfile: Path, conc: int, repeats: int,
             servers: Servers) -> list[Sample]:
    s0 = servers.cpu_s()
    cmd = [str(python), str(BENCH_DIR / script), "--url", url, "--requests", str(reqfile),
           "--concurrency", str(conc), "--repeats", str(repeats)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"{script} failed:\n{done.stderr[-3000:]}")
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    server_share = (servers.cpu_s() - s0) / max(1, len(rows))  # per repeat (peer startup excluded upstream)
    return [Sample(r["client"], r["concurrency"], r["n"], r["ok"], r["wall_s"], r["cpu_s"], server_share)
            for r in rows]


def summarize(samples: list[Sample]) -> list[dict[str, object]]:
    groups: dict[tuple[str, int], list[Sample]] = {}
    for s in samples:
        groups.setdefault((s.client, s.concurrency), []).append(s)
    rows = []
    for (client, conc), ss in groups.items():
        rows.append({"client": client, "concurrency": conc, "runs": len(ss),
                     "ok": min(s.ok for s in ss), "n": ss[0].n,
                     "req_s": statistics.median(s.n / s.wall_s for s in ss),
                     "send_req_s": statistics.median(s.send_rate or 0.0 for s in ss),
                     "cpu_ms": statistics.median(1000 * s.cpu_s / s.n for s in ss),
                     "server_cpu_ms": statistics.median(1000 * s.server_cpu_s / s.n for s in ss)})
    return rows


def print_table(rows: list[dict[str, object]], latency: float) -> None:
    """req/s: whole call (eval: includes loading the bench); send req/s: from the start of sending
    to the last answer. Ratios: medr2 adapter over the row, at the same concurrency."""
    base = {r["concurrency"]: r for r in rows if r["client"] == "medr2 adapter"}
    head = (f"{'client':<32} {'conc':>5} {'ok/n':>10} {'req/s':>7} {'send req/s':>10} {'client CPU ms/req':>17} "
            f"{'server CPU ms/req':>17} {'medr2 speedup':>13} {'CPU ratio':>9}")
    if latency > 0:
        head += f" {'% of ideal (send)':>17}"
    print(head)
    for r in sorted(rows, key=lambda r: (r["concurrency"], str(r["client"]))):
        b = base.get(r["concurrency"])
        speedup = f"{float(b['req_s']) / float(r['req_s']):.2f}x" if b else "-"  # type: ignore[arg-type]
        cpu_ratio = f"{float(r['cpu_ms']) / float(b['cpu_ms']):.2f}x" if b else "-"  # type: ignore[arg-type]
        send = f"{float(r['send_req_s']):.0f}" if r["send_req_s"] else "-"  # type: ignore[arg-type]
        line = (f"{r['client']:<32} {r['concurrency']:>5} {str(r['ok']) + '/' + str(r['n']):>10} "
                f"{float(r['req_s']):>7.0f} {send:>10} {float(r['cpu_ms']):>17.3f} "  # type: ignore[arg-type]
                f"{float(r['server_cpu_ms']):>17.3f} {speedup:>13} {cpu_ratio:>9}")  # type: ignore[arg-type]
        if latency > 0:
            ideal = min(int(r["concurrency"]), int(r["n"])) / latency  # type: ignore[call-overload]
            rate = float(r["send_req_s"] or r["req_s"])  # type: ignore[arg-type]
            line += f" {100 * rate / ideal:>16.1f}%"
        print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", type=Path, default=Path("/tmp/medr2-client-bench"))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 64, 256])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--servers", type=int, default=1)
    ap.add_argument("--latency", type=float, default=0.0, help="server latency per request, seconds")
    ap.add_argument("--paths", default="adapter,eval",
                    help="in-process clients: adapter, eval (medr2), warm (adapter with every image already "
                         "encoded), aiohttp (bare aiohttp floor)")
    ap.add_argument("--peers", default="", help="comma list: openai, lmms-eval")
    ap.add_argument("--venvs", type=Path, default=Path("/work/bench-venvs"))
    ap.add_argument("--json", type=Path, help="also write the rows here")
    ap.add_argument("--rt", action="store_true",
                    help="run client and servers under SCHED_FIFO (root; shields a latency-bound run from other "
                         "load on a shared machine; do not use with --latency 0, which keeps the CPU busy)")
    ap.add_argument("--spin-server", action="store_true",
                    help="servers busy-poll instead of sleeping (one core each; server CPU then reads ~100%%): "
                         "takes an idle CPU's wake-up latency out of each round trip, for concurrency 1 on an idle "
                         "machine; on a loaded machine it only takes a core from the clients")
    a = ap.parse_args()
    if a.rt:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))  # servers and peers inherit it

    bench_root = make_workload(a.bench, a.n)
    requests = build_requests(bench_root)
    reqfile = bench_root / "requests.jsonl"
    peers = [p for p in a.peers.split(",") if p]
    paths = set(a.paths.split(","))
    if (peers or "aiohttp" in paths) and not reqfile.exists():
        export_requests(requests, reqfile)
    bodies = load_bodies(reqfile) if "aiohttp" in paths else []
    servers = Servers(a.servers, a.latency, a.spin_server)
    samples: list[Sample] = []
    print(f"# {len(requests)} requests, server: {a.servers} process(es), latency {a.latency}s, "
          f"{a.repeats} repeats, python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}{', SCHED_FIFO' if a.rt else ''}"
          f"{', spinning server' if a.spin_server else ''}", flush=True)
    try:
        with tempfile.TemporaryDirectory(prefix="medr2-client-runs-") as tmp:
            for conc in a.concurrency:
                for _ in range(a.repeats):
                    if "adapter" in paths:
                        samples.append(timed("medr2 adapter", conc, len(requests), servers,
                                             lambda c=conc: run_adapter(servers.url, requests, c)))
                    if "eval" in paths:
                        samples.append(timed("medr2 eval (run_eval)", conc, len(requests), servers,
                                             lambda c=conc: run_cli_eval(servers.url, bench_root, c, Path(tmp))))
                    if "warm" in paths:
                        warm = warm_adapter(servers.url, requests, conc)
                        samples.append(timed("medr2 adapter, images cached", conc, len(requests), servers,
                                             lambda w=warm: run_warm(w, requests)))
                    if "aiohttp" in paths:
                        samples.append(timed("bare aiohttp (floor)", conc, len(bodies), servers,
                                             lambda c=conc: run_plain_aiohttp(servers.url, bodies, c)))
                    # peers interleaved with medr2's runs (one run per repeat), so both see the same load
                    if "openai" in peers:
                        samples += run_peer("peer_openai_sdk.py", a.venvs / "openai/bin/python", servers.url,
                                            reqfile, conc, 1, servers)
                    if "lmms-eval" in peers:
                        samples += run_peer("peer_lmms_eval.py", a.venvs / "lmms-eval/bin/python", servers.url,
                                            reqfile, conc, 1, servers)
    finally:
        servers.close()
    rows = summarize(samples)
    print_table(rows, a.latency)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
