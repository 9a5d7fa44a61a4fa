"""Order-keeping parallel map with a bounded window, for the build's worker passes.

``ordered_map(fn, items, workers, state)`` yields ``(item, fn(item))`` in the order of ``items``.
With more than one worker, chunks of items go to a process pool, but at most a few chunks per worker
are in flight at any time, so neither the inputs nor finished-but-unread results pile up in memory
(``ProcessPoolExecutor.map`` would submit the whole input at once). ``state`` (a typed object, e.g. a
frozen dataclass holding the source or the label pools) is installed once per worker process and read there
with ``worker_state(TheStateClass)``, which checks its type.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import islice
from typing import Any, Protocol, TypeVar

from medr2.registry import Registry

T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S")

CHUNKS_PER_WORKER = 4  # chunks in flight per worker
MAX_CHUNK = 64


class _Installed:
    """The state of this worker process (one per process; the in-process path installs it too)."""

    state: object = None


def init_worker(state: object) -> None:
    _Installed.state = state


def worker_state(kind: type[S]) -> S:
    """The state installed in this worker by :func:`ordered_map`, checked to be a ``kind``."""
    state = _Installed.state
    if not isinstance(state, kind):
        raise TypeError(f"worker state is {type(state).__name__}, expected {kind.__name__}")
    return state


def _run_chunk(fn: Callable[[T], R], chunk: list[T]) -> list[R]:
    return [fn(x) for x in chunk]


def chunk_size(n: int, workers: int, max_chunk: int = MAX_CHUNK) -> int:
    return max(1, min(max_chunk, n // (workers * CHUNKS_PER_WORKER)))


class Pool(Protocol):
    """Where the chunks of :func:`ordered_map` run: ``submit(fn, chunk, state)`` returns a handle whose results
    ``result(handle)`` waits for (the items' ``fn`` results, in order)."""

    def submit(self, fn: Callable[[T], R], chunk: list[T], state: object) -> Any: ...

    def result(self, handle: Any) -> list[Any]: ...

    def workers(self) -> int:
        """How many chunks can run at once (the default for ``--workers``)."""
        ...

    def close(self) -> None: ...


# where the build's chunks run (``medr2 build --executor NAME``): a factory ``(address) -> Pool``; ``local`` (the
# default) is the process pool of ``ordered_map`` itself
POOLS: Registry[Callable[[str | None], Pool | None]] = Registry("build executor", field="--executor")
POOLS.register("local", lambda address: None)
POOLS.lazy("ray", "medr2.builder.ray_pool:RayPool")

def ordered_map(fn: Callable[[T], R], items: Iterable[T], workers: int, state: object, *,
                n: int, max_chunk: int = MAX_CHUNK, pool: Pool | None = None) -> Iterator[tuple[T, R]]:
    """``(item, fn(item))`` in input order; in-process for one worker (or ``n <= 1`` items). ``max_chunk``
    caps the items per chunk (where results are large, fewer items are in flight). ``pool``: run the chunks
    there (e.g. :class:`medr2.builder.ray_pool.RayPool`) instead of a local process pool."""
    if pool is not None and n > 1:
        yield from _windowed(fn, iter(items), workers, state, n, max_chunk, pool)
        return
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

        try:
            for _ in range(workers * CHUNKS_PER_WORKER):
                submit()
            while pending:
                chunk, fut = pending.popleft()
                results = fut.result()
                submit()
                yield from zip(chunk, results, strict=True)
        except BaseException:
            # interrupted (Ctrl-C, SIGTERM through the commands' handler, an error, or the consumer stopped): drop
            # the queued chunks, so the workers finish only the chunk they are running and exit with us
            ex.shutdown(wait=True, cancel_futures=True)
            raise


def _windowed(fn: Callable[[T], R], it: Iterator[T], workers: int, state: object, n: int, max_chunk: int,
              pool: Pool) -> Iterator[tuple[T, R]]:
    """:func:`ordered_map` through ``pool``, with the same bounded window of chunks in flight."""
    size = chunk_size(n, workers, max_chunk)
    pending: deque[tuple[list[T], Any]] = deque()

    def submit() -> None:
        chunk = list(islice(it, size))
        if chunk:
            pending.append((chunk, pool.submit(fn, chunk, state)))

    for _ in range(workers * CHUNKS_PER_WORKER):
        submit()
    while pending:
        chunk, handle = pending.popleft()
        results = pool.result(handle)
        submit()
        yield from zip(chunk, results, strict=True)


def run_chunk_with_state(fn: Callable[[T], R], chunk: list[T], state: object) -> list[R]:
    """A chunk on a worker that did not get ``state`` from a process-pool initializer (a Ray task)."""
    init_worker(state)
    return [fn(x) for x in chunk]
