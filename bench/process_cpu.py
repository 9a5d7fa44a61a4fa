"""CPU seconds of a set of other processes (a Ray cluster's), sampled in a thread while a workload runs: the largest
cumulative user + system time seen per pid, minus what each had at the start. Processes that end between two
samples lose at most half a second of CPU. Shared by the Ray benchmarks."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

import psutil


class ProcessCpu:
    def __init__(self, processes: Callable[[], Iterable[psutil.Process]]) -> None:
        self.processes = processes
        self.seen: dict[int, float] = {}
        self.base: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        for p in self.processes():
            try:
                t = p.cpu_times()
            except psutil.Error:
                continue
            self.seen[p.pid] = max(self.seen.get(p.pid, 0.0), t.user + t.system)

    def _run(self) -> None:
        while not self._stop.wait(0.5):
            self._sample()

    def __enter__(self) -> ProcessCpu:
        self._sample()
        self.base = dict(self.seen)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def cpu_s(self) -> float:
        return sum(v - self.base.get(pid, 0.0) for pid, v in self.seen.items())
