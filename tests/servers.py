"""Start, wait for and stop real OpenAI-compatible inference servers (vLLM, ``transformers serve``).

Each server runs as its own process group on 127.0.0.1 and a free port, with stdout and stderr
written to a log file. Readiness means ``GET /v1/models`` lists the served model; waiting is
bounded, and a server that exits or is not ready in time raises ``ServerError`` carrying the tail
of its log. Stopping sends SIGTERM to the group, then SIGKILL after a grace period.

    with transformers_serve(model_dir, log_dir) as srv:
        srv.url, srv.model  # "http://127.0.0.1:PORT/v1", the model name requests must use

Also used by ``bench/bench_servers.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VLLM_VENV = REPO / ".venv-vllm"
VLLM_READY_MARKER = VLLM_VENV / ".medr2-ready"
TRANSFORMERS_READY_S = 180.0
VLLM_READY_S = 480.0
STOP_GRACE_S = 30.0
# An explicit KV cache (256 MiB: ~130k tokens of the tiny model). With `--gpu-memory-utilization F` the CPU
# backend reserves F x RAM for the worker and gives the KV cache what the worker's RSS leaves of it, so a
# worker whose startup RSS exceeds that share refuses to start ("less than requested memory for kv").
VLLM_KV_CACHE_BYTES = 256 * 1024 * 1024
# The engine core's message queues on loopback (vLLM otherwise connects to the machine's outward IP), and no
# OpenMP thread pinning (its automatic mode reads the NUMA and core topology, which differs between machines).
VLLM_ENV = {"VLLM_HOST_IP": "127.0.0.1", "VLLM_CPU_OMP_THREADS_BIND": "nobind"}
ROOT_CAUSE = re.compile(r"(Error|ERROR|Exception|Traceback|assert|Killed|Illegal instruction|core dumped)")
COMPLETION_200 = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" 200')


class ServerError(RuntimeError):
    """A server did not start, died, or was not ready in time (the message ends with its log tail)."""


@dataclass
class Server:
    name: str
    url: str  # base URL, ".../v1"
    model: str  # the model name requests must send
    log: Path
    proc: subprocess.Popen[bytes]
    started_s: float = 0.0  # seconds from launch to ready

    def log_text(self) -> str:
        return self.log.read_text("utf-8", "replace") if self.log.exists() else ""

    def completions_ok(self) -> int:
        """How many chat completions the server's access log shows answered with 200."""
        return len(COMPLETION_200.findall(self.log_text()))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def log_tail(path: Path, lines: int = 60) -> str:
    if not path.exists():
        return f"(no log at {path})"
    return "\n".join(path.read_text("utf-8", "replace").splitlines()[-lines:])


def log_errors(path: Path, limit: int = 40) -> str:
    """The log's error lines, first ones first: the root cause of a failed start is often logged by a child
    process (vLLM's engine core) far above the parent's closing traceback that ``log_tail`` shows."""
    if not path.exists():
        return "(no log)"
    hits = [line for line in path.read_text("utf-8", "replace").splitlines() if ROOT_CAUSE.search(line)]
    return "\n".join(hits[:limit]) if hits else "(no error lines)"


def failure_report(srv: Server) -> str:
    return (f"--- error lines in {srv.log} ---\n{log_errors(srv.log)}\n"
            f"--- last lines of {srv.log} ---\n{log_tail(srv.log)}")


def get_json(url: str, timeout_s: float = 5.0) -> object:
    with urllib.request.urlopen(url, timeout=timeout_s) as r:  # noqa: S310 - local test servers only
        return json.loads(r.read())


def served_models(base_url: str) -> list[str]:
    """Model ids listed by ``GET {base_url}/models``."""
    body = get_json(base_url + "/models")
    data = body.get("data", []) if isinstance(body, dict) else []
    return [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


def wait_ready(srv: Server, timeout_s: float) -> None:
    """Poll until ``srv.model`` is listed (any answer to ``GET /models`` when ``srv.model`` is empty: a server
    that loads models on demand); raise ServerError (with the log tail) on exit or timeout."""
    t0 = time.monotonic()
    last = "no answer yet"
    while time.monotonic() - t0 < timeout_s:
        code = srv.proc.poll()
        if code is not None:
            raise ServerError(f"{srv.name} exited with code {code} before it was ready\n{failure_report(srv)}")
        try:
            models = served_models(srv.url)
            if not srv.model or srv.model in models:
                return
            last = f"models listed: {models}"
        except (OSError, ValueError, urllib.error.URLError) as e:
            last = f"{type(e).__name__}: {e}"
        time.sleep(1.0)
    raise ServerError(f"{srv.name} not ready after {timeout_s:.0f}s ({last})\n{failure_report(srv)}")


def stop(srv: Server) -> int | None:
    """Stop the server's process group (SIGTERM, then SIGKILL after a grace period); its exit code."""
    if srv.proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(srv.proc.pid, signal.SIGTERM)
        try:
            srv.proc.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(srv.proc.pid, signal.SIGKILL)
            srv.proc.wait(STOP_GRACE_S)
    with contextlib.suppress(ProcessLookupError):  # workers left behind in the group
        os.killpg(srv.proc.pid, signal.SIGKILL)
    return srv.proc.returncode


@contextlib.contextmanager
def serve(name: str, cmd: Sequence[str], *, url: str, model: str, log: Path, ready_s: float,
          env: dict[str, str] | None = None) -> Iterator[Server]:
    """Launch ``cmd``, wait until ``model`` is served at ``url``, yield the Server, stop it on exit."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as fh:
        fh.write(f"$ {' '.join(cmd)}\n".encode())
        fh.flush()
        proc = subprocess.Popen(list(cmd), stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env={**os.environ, **(env or {})},
                                start_new_session=True, cwd=str(log.parent))
    srv = Server(name, url, model, log, proc)
    t0 = time.monotonic()
    try:
        wait_ready(srv, ready_s)
        srv.started_s = time.monotonic() - t0
        yield srv
    finally:
        stop(srv)


def transformers_serve_cmd(model_dir: Path, port: int) -> list[str]:
    exe = Path(sys.executable).with_name("transformers")
    return [str(exe), "serve", str(model_dir.resolve()), "--device", "cpu", "--dtype", "float32",
            "--host", "127.0.0.1", "--port", str(port)]


def transformers_serve(model_dir: Path, log_dir: Path, port: int | None = None) -> contextlib.AbstractContextManager[
        Server]:
    """``transformers serve`` (the project venv's transformers[serving]); requests name the model by its
    absolute path."""
    port = port or free_port()
    return serve("transformers serve", transformers_serve_cmd(model_dir, port), url=f"http://127.0.0.1:{port}/v1",
                 model=str(model_dir.resolve()), log=log_dir / "transformers-serve.log", ready_s=TRANSFORMERS_READY_S)


def transformers_serve_on_demand(log_dir: Path, port: int | None = None) -> contextlib.AbstractContextManager[
        Server]:
    """``transformers serve`` without a forced model: it loads (and caches) whichever model a request names, so
    one server answers for many checkpoints, each named by its absolute path (``Server.model`` is empty)."""
    port = port or free_port()
    exe = Path(sys.executable).with_name("transformers")
    cmd = [str(exe), "serve", "--device", "cpu", "--dtype", "float32", "--host", "127.0.0.1", "--port", str(port)]
    return serve("transformers serve", cmd, url=f"http://127.0.0.1:{port}/v1", model="",
                 log=log_dir / "transformers-serve.log", ready_s=TRANSFORMERS_READY_S)


def vllm_python(venv: Path = VLLM_VENV) -> Path:
    return venv / "bin" / "python"


def vllm_serve_cmd(model_dir: Path, port: int, name: str, python: Path, extra: Sequence[str] = ()) -> list[str]:
    return [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir.resolve()),
            "--served-model-name", name, "--dtype", "float32", "--max-model-len", "2048",
            "--kv-cache-memory-bytes", str(VLLM_KV_CACHE_BYTES), "--seed", "0",
            "--host", "127.0.0.1", "--port", str(port), *extra]


def vllm_serve(model_dir: Path, log_dir: Path, name: str = "medr2-tiny", port: int | None = None,
               venv: Path = VLLM_VENV, extra: Sequence[str] = (),
               env: dict[str, str] | None = None) -> contextlib.AbstractContextManager[Server]:
    """vLLM's OpenAI-compatible server from ``venv`` (made by scripts/setup_vllm.sh), on the CPU, with an
    explicit KV cache size (see VLLM_KV_CACHE_BYTES); ``extra``: more server arguments, ``env``: more of vLLM's
    environment variables (after VLLM_ENV)."""
    port = port or free_port()
    return serve("vLLM", vllm_serve_cmd(model_dir, port, name, vllm_python(venv), extra),
                 url=f"http://127.0.0.1:{port}/v1", model=name, log=log_dir / "vllm.log", ready_s=VLLM_READY_S,
                 env={**VLLM_ENV, **(env or {})})
