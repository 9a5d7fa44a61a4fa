"""Progress of a long command step by step: a rich bar with counts and ETA on a terminal, plain periodic
lines (``medr2 report: thumbnails 120/1,000 (12%), 3.1 s, ETA 22 s``) when the output is not one (a log
file or a pipe, where a bar would be cut to 80 columns and its numbers lost). ``Quiet`` reports nothing
(the Python API default)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO, Any

PLAIN_EVERY_S = 10.0  # a plain progress line at most this often (and at the start and end of each step)


class Quiet:
    """Progress that reports nothing."""

    def step(self, name: str, total: int | None = None) -> None: ...

    def advance(self, n: int = 1) -> None: ...

    def close(self) -> None: ...


def _secs(s: float) -> str:
    return f"{s:.1f} s" if s < 90 else f"{int(s // 60)}:{int(s % 60):02d} min"


class Plain(Quiet):
    """One line when a step starts, one at most every ``every`` seconds while it runs, one when it ends."""

    def __init__(self, command: str, stream: IO[str] | None = None, *, every: float = PLAIN_EVERY_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.command, self.stream, self.every, self.clock = command, stream or sys.stderr, every, clock
        self.name: str | None = None
        self.total: int | None = None
        self.done = 0
        self.t0 = self.last = 0.0

    def _line(self, text: str) -> None:
        from medr2.console import echo

        echo(f"{self.command}: {text}", file=self.stream)

    def _status(self, eta: bool = True) -> str:
        el = self.clock() - self.t0
        if self.total:
            text = f"{self.name} {self.done:,}/{self.total:,} ({100 * self.done / self.total:.0f}%), {_secs(el)}"
            if eta and 0 < self.done < self.total:
                text += f", ETA {_secs(el * (self.total - self.done) / self.done)}"
            return text
        return f"{self.name} {self.done:,}, {_secs(el)}" if self.done else f"{self.name}, {_secs(el)}"

    def step(self, name: str, total: int | None = None) -> None:
        self._end()
        self.name, self.total, self.done = name, total, 0
        self.t0 = self.last = self.clock()
        self._line(f"{name}" + (f" (0/{total:,})" if total else "") + " ...")

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = self.clock()
        if now - self.last >= self.every:
            self.last = now
            self._line(self._status())

    def _end(self) -> None:
        if self.name is not None:
            self._line(f"{self._status(eta=False)}: done")
            self.name = None

    def close(self) -> None:
        self._end()


def _rich_progress(description: str | tuple[str, str], *fields: str | tuple[str, str],
                   after: tuple[str | tuple[str, str], ...] = (), console: Any, **options: Any) -> Any:
    """A rich ``Progress`` (:func:`medr2.console.progress`: text shown as text) with the columns every bar
    shares: ``description``, the bar, done/total, then ``fields`` (format strings over the task), elapsed
    time, ETA, then ``after``."""
    from medr2.console import progress

    return progress(description, "bar", "count", *fields, "elapsed", "ETA", "eta", *after, console=console,
                    refresh_per_second=4, **options)


class Bar(Quiet):
    """A rich progress bar per step, with counts, elapsed time and ETA (on stderr)."""

    def __init__(self, command: str) -> None:
        from medr2.console import get_console

        self.command = command
        self._bar = _rich_progress(f"{command}: " + "{task.description}", console=get_console(err=True),
                                   transient=False)
        self._bar.start()
        self._task: Any = None

    def step(self, name: str, total: int | None = None) -> None:
        if self._task is not None:
            t = self._bar.tasks[-1]
            self._bar.update(self._task, total=t.total if t.total is not None else t.completed)
        self._task = self._bar.add_task(name, total=total)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._bar.advance(self._task, n)

    def close(self) -> None:
        if self._task is not None:
            t = self._bar.tasks[-1]
            self._bar.update(self._task, total=t.total if t.total is not None else t.completed)
        self._bar.stop()


def for_console(command: str, *, stream: IO[str] | None = None) -> Quiet:
    """A rich bar when ``stream`` (stderr) is a terminal, else plain periodic lines."""
    s = stream or sys.stderr
    return Bar(command) if s.isatty() else Plain(command, s)


class RichProgress:
    """The live bar of ``medr2 eval`` (a :class:`medr2.run.runner.Progress`): done/total, rate, ETA, retries,
    errors."""

    def __init__(self, label: str, console: Any = None) -> None:
        """``console``: the rich console to draw on (default: a new one on stderr); a caller that prints
        other lines while the bar runs passes its own, so rich keeps the bar below them."""
        from medr2.console import get_console

        self.console = console or get_console(err=True)
        self._bar = _rich_progress(("{task.description}", "bold"), "{task.fields[rate]:>8} req/s",
                                   after=("retries {task.fields[retries]}  errors", ("{task.fields[errors]}", "red")),
                                   console=self.console)
        self._label = label
        self._task: Any = None
        self._sent = 0
        self._t0 = 0.0
        self._retries = 0
        self._errors = 0

    def start(self, total: int) -> None:
        self._bar.start()
        self._t0 = time.perf_counter()
        self._task = self._bar.add_task(self._label, total=total, rate="-", retries=0, errors=0)

    def advance(self, n: int = 1, *, error: bool = False, retries: int = 0, skipped: bool = False) -> None:
        self._retries += retries
        self._errors += int(error)
        fields: dict[str, Any] = {"retries": self._retries, "errors": self._errors}
        if not skipped:
            self._sent += n
        elapsed = time.perf_counter() - self._t0
        if elapsed > 0:
            fields["rate"] = f"{self._sent / elapsed:.1f}"
        self._bar.update(self._task, advance=n, **fields)

    def stop(self) -> None:
        self._bar.stop()
