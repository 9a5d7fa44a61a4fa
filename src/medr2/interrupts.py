"""A helper thread's ``_thread.interrupt_main()`` reaching the main thread, whatever SIGINT was set to.

``interrupt_main`` does nothing where SIGINT has no Python handler: a process started with SIGINT ignored (a
command run in the background by a script: a non-interactive shell starts those so) would never hear from the
thread that watches its server or its second demo lane, and go on working for nothing (or, asking a dead server,
for ever). Used by ``medr2 eval --serve`` (medr2.run.serve) and the demo's second lane (medr2.demokit.run)."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def interruptible(raised_for: Callable[[], bool]) -> Iterator[None]:
    """Within the block, in the main thread, an ``interrupt_main`` raises KeyboardInterrupt also where SIGINT was
    ignored or left to the default action: there a handler is installed that raises once ``raised_for()`` is true
    (the watcher sets its reason before it interrupts) and otherwise does what was set before (ignore, or the
    default action). Where SIGINT has a Python handler already (Python's own, or the program's) nothing changes."""
    previous = signal.getsignal(signal.SIGINT)
    if callable(previous):
        yield
        return

    def on_sigint(signum: int, frame: object) -> None:
        if raised_for():
            raise KeyboardInterrupt
        if previous == signal.SIG_DFL:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.raise_signal(signal.SIGINT)

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
