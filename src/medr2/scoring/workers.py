"""``medr2 score --workers N``: scoring's per-batch and per-chunk work in N worker processes, results in order.

:class:`OrderedPool` maps a function that is pure in its arguments (``medr2.scoring.scorer._BatchScorer``: one
batch of counted rows; ``_ChunkMetrics``: one chunk of cases' metrics) over its arguments' sequence. With one
worker it is called in this process, one argument after another (scoring's long-standing path). With more, the
arguments go to a pool of ``fork``ed processes, which inherit the function and what it holds (the bench's items,
loaded into the columnar engine in the run's folder, each worker opening its own connection; the box convention,
the audit's state) without pickling it; the arguments go to a worker pickled and the result comes back pickled.
At most ``in_flight`` arguments per worker are submitted ahead, and results are yielded in the arguments' order, so
the caller writes ``scores.parquet``, the metrics' chunks and ``claims.parquet``, and adds up the metrics, in the
same order as with one worker: the same bytes.
"""

from __future__ import annotations

import gc
import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

# arguments submitted per worker before the first result is taken (each holds its argument and its result)
IN_FLIGHT_PER_WORKER = 2


class _Installed:
    """The function of this worker process (inherited through ``fork``)."""

    fn: Callable[..., Any] | None = None


def _install(fn: Callable[..., Any], parent: int) -> None:
    """A worker's start: its function; Ctrl-C left to the main process (which stops the pool); and a watcher
    that ends the worker when the main process is gone (killed: nobody would stop the pool, and the worker would
    keep the spill folder's lock)."""
    _Installed.fn = fn
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(1)


def _run(*args: Any) -> Any:
    fn = _Installed.fn
    if fn is None:  # pragma: no cover - the pool's initializer installs it
        raise RuntimeError("no function installed in this worker")
    return fn(*args)


class OrderedPool:
    """``map`` of ``fn(*args)`` over argument tuples, in their order, in this process (``workers`` = 1) or in
    ``workers`` forked processes (forked when :meth:`map` starts, so they see ``fn`` as it is then); :meth:`close`
    stops the workers (also after an error or an interrupt: arguments not started are dropped)."""

    def __init__(self, fn: Callable[..., Any], workers: int = 1, in_flight: int = IN_FLIGHT_PER_WORKER) -> None:
        if workers < 1 or in_flight < 1:
            raise ValueError("workers and in_flight must be at least 1")
        self.fn, self.workers, self.in_flight = fn, workers, in_flight
        self._ex: ProcessPoolExecutor | None = None
        self._frozen = False

    def map(self, args: Iterable[tuple[Any, ...]]) -> Iterator[tuple[tuple[Any, ...], Any]]:
        """``(a, fn(*a))`` per argument tuple ``a``, in the order of ``args``."""
        if self.workers == 1:
            for a in args:
                yield a, self.fn(*a)
            return
        # fork: the workers inherit fn (open files, items) as it is now; nothing of it is pickled. What exists now
        # is moved out of the collector's reach first (``gc.freeze``): a worker's collections then never walk the
        # inherited objects (the text-metric models' millions), which would cost CPU and copy their pages
        gc.freeze()
        self._frozen = True
        ex = self._ex = ProcessPoolExecutor(max_workers=self.workers, mp_context=mp.get_context("fork"),
                                            initializer=_install, initargs=(self.fn, os.getpid()))
        it = iter(args)
        pending: deque[tuple[tuple[Any, ...], Future[Any]]] = deque()

        def submit() -> None:
            a = next(it, None)
            if a is not None:
                pending.append((a, ex.submit(_run, *a)))

        for _ in range(self.workers * self.in_flight):
            submit()
        while pending:
            a, fut = pending.popleft()
            result = fut.result()
            submit()
            yield a, result
            del a, result

    def close(self) -> None:
        """Stop the workers (waits for the arguments they are running; drops the ones not started)."""
        if self._ex is not None:
            self._ex.shutdown(wait=True, cancel_futures=True)
            self._ex = None
        if self._frozen:
            gc.unfreeze()
            self._frozen = False

    def __enter__(self) -> OrderedPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
