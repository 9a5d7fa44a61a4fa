"""SIGTERM handled as Ctrl-C by the long-running commands, so their cleanup runs (``finally`` blocks, process
pools shut down, servers stopped) when a scheduler or ``timeout`` stops them; the default action would end the
process at once and leave its worker processes behind."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


def _sigterm_to_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`KeyboardInterrupt` (the previous handler is restored after)."""
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _sigterm_to_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
