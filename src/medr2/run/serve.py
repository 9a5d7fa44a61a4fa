"""``medr2 eval --serve CMD``: start the model server the run asks, wait until it is healthy, stop it after.

A Slurm array task (or any one-node job) runs its own server for its shard (docs/running.md, "Batch clusters"):

    medr2 eval --shard $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT --serve "vllm serve MODEL --port {port}" ...

- ``CMD`` runs under ``/bin/sh -c`` in a process group of its own (a new session), stdin closed, stdout and
  stderr appended to ``RUN/serve.log``. ``{port}`` in ``CMD`` is replaced by a free port of this machine, and
  the base URL is then ``http://127.0.0.1:PORT/v1`` unless ``--base-url`` says otherwise; without ``{port}``
  ``--base-url`` says where the server will listen. ``{port}`` in a base URL or health URL is the same port.
- Healthy: ``GET`` of the health URL(s) answers 2xx (default ``BASE_URL/models`` for each base URL; vLLM,
  SGLang and ``transformers serve`` answer it once the model is loaded). Polled every ``POLL_S``; a server
  that exits first, or is not healthy within the startup timeout, is :class:`ServerFailed` (exit 2) with the
  tail of its log, and its process group is stopped.
- While the run asks, a watcher thread polls the process: a server that exits interrupts the run (as Ctrl-C
  does: everything answered is kept) and the eval fails (:class:`~medr2.errors.WorkFailed`, exit 1) with
  the log tail; rerunning the same command resumes.
- Stopping (always: done, error, Ctrl-C, SIGTERM): SIGTERM to the process group, a grace period, SIGKILL to
  the group, and SIGKILL again to whatever of the group is left.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medr2.errors import BadInput, WorkFailed
from medr2.interrupts import interruptible
from medr2.redact import scrub_registered

PORT_PLACEHOLDER = "{port}"
LOG_NAME = "serve.log"
DEFAULT_STARTUP_S = 900.0
STOP_GRACE_S = 30.0
POLL_S = 0.5
GROUP_GONE_S = 5.0  # after SIGKILL, how long stopping waits for the group's last processes to go
TAIL_LINES = 40


class ServerFailed(BadInput):
    """The ``--serve`` command exited before it was healthy, or was not healthy in time (exit 2)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, field="--serve")


@dataclass(frozen=True)
class ServeSpec:
    """What to start (``command``, through ``/bin/sh -c``), when it is ready (every ``health_urls`` answers
    2xx), how long to wait for that (``startup_s``) and for it to stop (``stop_grace_s``)."""

    command: str
    health_urls: tuple[str, ...]
    startup_s: float = DEFAULT_STARTUP_S
    stop_grace_s: float = STOP_GRACE_S

    def describe(self) -> dict[str, Any]:
        """What the run manifest records (credentials in URLs masked when it is written)."""
        return {"command": self.command, "health": list(self.health_urls), "log": LOG_NAME}


def plan_serve(command: str, base_urls: Sequence[str], *, health: str | Sequence[str] | None = None,
               startup_s: float = DEFAULT_STARTUP_S, stop_grace_s: float = STOP_GRACE_S,
               ) -> tuple[ServeSpec, tuple[str, ...]]:
    """(the spec, the base URLs the eval sends to) for ``--serve command``: ``{port}`` in ``command`` becomes a
    free local port (and the base URL ``http://127.0.0.1:PORT/v1`` when none is given)."""
    if not command.strip():
        raise BadInput("--serve needs a command", field="--serve")
    if startup_s <= 0:
        raise BadInput(f"--serve-timeout must be positive, not {startup_s}", field="--serve-timeout")
    urls = tuple(base_urls)
    health_urls = ((health,) if isinstance(health, str) else tuple(health)) if health else ()
    if PORT_PLACEHOLDER in command:
        port = str(free_port())
        command = command.replace(PORT_PLACEHOLDER, port)
        urls = tuple(u.replace(PORT_PLACEHOLDER, port) for u in urls) or (f"http://127.0.0.1:{port}/v1",)
        health_urls = tuple(u.replace(PORT_PLACEHOLDER, port) for u in health_urls)
    elif not urls:
        raise BadInput("--serve needs --base-url (where the server will listen) or {port} in the command "
                       "(a free port is put there)", field="--serve")
    health_urls = health_urls or tuple(u.rstrip("/") + "/models" for u in urls)
    for url in health_urls:
        if not url.startswith(("http://", "https://")):
            raise BadInput(f"the health URL {url!r} is not an http(s) URL", field="--serve-health")
    return ServeSpec(command, health_urls, startup_s, stop_grace_s), urls


def free_port() -> int:
    """A TCP port free on this machine now (the server binds it a moment later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def log_tail(path: Path, lines: int = TAIL_LINES, max_bytes: int = 1 << 16) -> str:
    """The last ``lines`` lines of the log, read from its last ``max_bytes`` (a server's access log grows with
    every request)."""
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, fh.seek(0, os.SEEK_END) - max_bytes))
            text = fh.read().decode("utf-8", "replace").splitlines()
    except OSError as e:
        return f"(cannot read {path}: {e})"
    return "\n".join(text[-lines:]) if text else "(the log is empty)"


_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # as the aiohttp client: no env proxies


def probe(url: str, timeout_s: float = 5.0) -> str | None:
    """None when ``GET url`` answers 2xx, else what it answered (for the timeout message)."""
    try:
        with _NO_PROXY.open(url, timeout=timeout_s) as r:
            status = int(r.status)
            return None if 200 <= status < 300 else f"HTTP {status}"
    except urllib.error.HTTPError as e:
        return f"HTTP {e.code}"
    except (OSError, ValueError) as e:
        return f"{type(e).__name__}: {e}"


@dataclass
class RunningServer:
    """The started server: its process (group leader), log, and what the watcher saw."""

    spec: ServeSpec
    proc: subprocess.Popen[bytes]
    log: Path
    ready_s: float | None = None
    died: int | None = None  # the exit code, when it exited while the run was asking
    _armed: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _done: threading.Event = field(default_factory=threading.Event)
    pump: threading.Thread | None = None  # copies the server's output into the log, scrubbed

    def tail(self) -> str:
        """The last lines of the log, once what the server wrote before exiting has been copied there."""
        if self.pump is not None:
            self.pump.join(timeout=2.0)
        return log_tail(self.log)

    def describe(self) -> dict[str, Any]:
        return {**self.spec.describe(), "pid": self.proc.pid,
                "ready_s": None if self.ready_s is None else round(self.ready_s, 3),
                **({"exited_during_run": self.died} if self.died is not None else {}),
                **({"exit_code": self.proc.returncode} if self.proc.returncode is not None else {})}

    def wait_healthy(self) -> None:
        t0 = time.monotonic()
        pending = list(self.spec.health_urls)
        last = "no answer yet"
        while True:
            code = self.proc.poll()
            if code is not None:
                raise ServerFailed(f"the server command exited with code {code} before it was healthy "
                                   f"(GET {pending[0]}: {last}); last lines of {self.log}:\n{self.tail()}")
            while pending and (answer := probe(pending[0])) is None:
                pending.pop(0)
            if not pending:
                self.ready_s = time.monotonic() - t0
                return
            last = answer or last
            if time.monotonic() - t0 >= self.spec.startup_s:
                raise ServerFailed(f"the server was not healthy after {self.spec.startup_s:g} s (GET {pending[0]}: "
                                   f"{last}); last lines of {self.log}:\n{self.tail()}")
            time.sleep(POLL_S)

    def watch(self) -> None:
        """Interrupt the main thread (as Ctrl-C) if the server exits while armed."""
        while not self._done.wait(POLL_S):
            code = self.proc.poll()
            if code is None:
                continue
            with self._lock:
                if self._armed:
                    self.died = code
                    self._armed = False
                    _thread.interrupt_main()
            return

    def arm(self, on: bool) -> None:
        with self._lock:
            self._armed = on

    def stop(self) -> int | None:
        """SIGTERM to the group, the grace period, SIGKILL to the group; the leader's exit code."""
        self._done.set()
        pgid = self.proc.pid
        try:
            if self.proc.poll() is None:
                _signal_group(pgid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(self.spec.stop_grace_s)
        finally:  # also when a second Ctrl-C cuts the grace period short
            _signal_group(pgid, signal.SIGKILL)  # the group, and whatever of it outlived its leader
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(self.spec.stop_grace_s)
            deadline = time.monotonic() + GROUP_GONE_S
            while _group_alive(pgid) and time.monotonic() < deadline:
                time.sleep(0.05)
        return self.proc.returncode


def _group_alive(pgid: int) -> bool:
    """Whether a process of the group is still there (a killed one is until its new parent reaps it)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _start(spec: ServeSpec, run_dir: Path) -> RunningServer:
    run_dir.mkdir(parents=True, exist_ok=True)
    log = run_dir / LOG_NAME
    fh = log.open("ab")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    fh.write(f"=== medr2 eval --serve, {stamp}: $ {scrub_registered(spec.command)}\n".encode())
    fh.flush()
    proc = subprocess.Popen(["/bin/sh", "-c", spec.command], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    pump = threading.Thread(target=_copy_scrubbed, args=(proc.stdout, fh), name="medr2-serve-log", daemon=True)
    pump.start()
    return RunningServer(spec, proc, log, pump=pump)


def _copy_scrubbed(src: Any, fh: Any) -> None:
    """The server's output into ``serve.log`` line by line, each passed through the secret scrubber (a server
    that logs its arguments or headers must not write the key there)."""
    try:
        for line in iter(lambda: src.readline(1 << 16), b""):  # at most 64 KiB at a time
            fh.write(scrub_registered(line.decode("utf-8", "replace")).encode("utf-8"))
            fh.flush()
    except (OSError, ValueError):
        pass
    finally:
        fh.close()


@contextlib.contextmanager
def serving(spec: ServeSpec | None, run_dir: Path, record: dict[str, Any] | None = None,
            ) -> Iterator[RunningServer | None]:
    """Start ``spec``'s server (nothing when None), wait until healthy, yield it, stop it on the way out.
    Inside, the server's exit interrupts the main thread; leaving the block then raises WorkFailed.
    ``record["serve"]`` (e.g. the manifest's invocation) says what was started, also when it failed."""
    if spec is None:
        yield None
        return
    server = _start(spec, run_dir)
    watcher: threading.Thread | None = None
    try:
        if record is not None:
            record["serve"] = server.describe()
        server.wait_healthy()
        if record is not None:
            record["serve"] = server.describe()
        watching = threading.current_thread() is threading.main_thread()  # interrupt_main reaches it only
        if watching:
            server.arm(True)
            watcher = threading.Thread(target=server.watch, name="medr2-serve-watch", daemon=True)
            watcher.start()
        try:
            with interruptible(lambda: server.died is not None) if watching else contextlib.nullcontext():
                yield server
        except KeyboardInterrupt:
            if server.died is None:
                raise
        finally:
            server.arm(False)
        if server.died is not None:
            raise WorkFailed(f"the --serve server exited with code {server.died} during the run; everything answered "
                             f"is stored (rerun the same command to resume); last lines of {server.log}:\n"
                             f"{server.tail()}")
    finally:
        server.stop()
        if record is not None:
            record["serve"] = server.describe()
        if watcher is not None:
            watcher.join(POLL_S * 4)
