"""Order-keeping parallel map with a bounded window, for the build's worker passes.

``ordered_map(fn, items, workers, state)`` yields ``(item, fn(item))`` in the order of ``items``.
With more than one worker, chunks of items go to a process pool, but at most a few chunks per worker
are in flight at any time, so neither the inputs nor finished-but-unread results pile up in memory
(``ProcessPoolExecutor.map`` would submit the whole input at once). ``state`` is installed once per
worker process (``STATE``), e.g. the source or the label pools.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import islice
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

STATE: dict[str, Any] = {}
CHUNKS_PER_WORKER = 4  # chunks in flight per worker
MAX_CHUNK = 64


def init_worker(state: dict[str, Any]) -> None:
    STATE.clear()
    STATE.update(state)


def _run_chunk(fn: Callable[[T], R], chunk: list[T]) -> list[R]:
    return [fn(x) for x in chunk]


def chunk_size(n: int, workers: int, max_chunk: int = MAX_CHUNK) -> int:
    return max(1, min(max_chunk, n // (workers * CHUNKS_PER_WORKER)))


def ordered_map(fn: Callable[[T], R], items: Iterable[T], workers: int, state: dict[str, Any], *,
                n: int, max_chunk: int = MAX_CHUNK) -> Iterator[tuple[T, R]]:
    """``(item, fn(item))`` in input order; in-process for one worker (or ``n <= 1`` items). ``max_chunk``
    caps the items per chunk (where results are large, fewer items are in flight)."""
    if workers <= 1 or n <= 1:
        init_worker(state)
        for x in items:
            yield x, fn(x)
        return
    size = chunk_size(n, workers, max_chunk)
    it = iter(items)
    with ProcessPoolExecutor(max_workers=workers, initializer=init_worker, initargs=(state,)) as ex:
        pending: deque[tuple[list[T], Future[list[R]]]] = deque()

        def submit() -> None:
            chunk = list(islice(it, size))
            if chunk:
                pending.append((chunk, ex.submit(_run_chunk, fn, chunk)))

        for _ in range(workers * CHUNKS_PER_WORKER):
            submit()
        while pending:
            chunk, fut = pending.popleft()
            results = fut.result()
            submit()
            yield from zip(chunk, results, strict=True)
