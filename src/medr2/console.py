"""The one console writer: everything medr2 prints goes through this module (docs/reliability.md).

Text from data (paths, labels, model names, server logs, error messages) is never interpreted: the rich
consoles made here have markup, emoji and highlighting off, so ``[/x]`` or ``data[ct]`` in a path is printed
as written instead of crashing rich or losing its brackets. Styling is given explicitly, as ``(text, style)``
parts (:func:`say`), never by markup inside a string. Every line also passes the secret scrubber
(:func:`medr2.redact.scrub_registered`), so a key read by the process never reaches the terminal.

Width: as wide as the terminal on a terminal, and ``PIPED_WIDTH`` columns when the stream is a file or a pipe
(rich's default there is 80, which wrapped tables and cut words short with "…"); ``COLUMNS`` in the environment
wins, as rich reads it. :func:`make_console` is the one place a rich console is constructed; :func:`widen_help`
gives typer's help the same width.

``tests/test_reliability_console.py`` walks ``src/medr2`` and fails if any other module prints, builds a rich
console, column or table, or imports rich.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, Any, TextIO

from medr2.redact import scrub_registered

Part = str | tuple[str, str]  # plain text, or (text, rich style such as "bold red")

PIPED_WIDTH = 160

_CONSOLES: dict[bool, Any] = {}


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False


def piped_width(stream: TextIO) -> int | None:
    """The width for output to ``stream``: None (rich decides: the terminal's, or COLUMNS) on a terminal or when
    COLUMNS is set, else ``PIPED_WIDTH``."""
    if os.environ.get("COLUMNS", "").isdigit() or _is_terminal(stream):
        return None
    return PIPED_WIDTH


def make_console(*, stderr: bool = False, **kwargs: Any) -> Any:
    """The one constructor of rich consoles: markup, emoji and highlighting off (data is shown as is), and
    ``PIPED_WIDTH`` wide when writing to a file or a pipe (unless ``file`` or ``width`` is given)."""
    from rich.console import Console

    if kwargs.get("file") is None and kwargs.get("width") is None:
        kwargs["width"] = piped_width(sys.stderr if stderr else sys.stdout)
    kwargs.update(markup=False, emoji=False, highlight=False)
    return Console(stderr=stderr, **kwargs)


def get_console(*, err: bool = False) -> Any:
    """The rich console on stdout (or stderr), made by :func:`make_console` on first use."""
    con = _CONSOLES.get(err)
    if con is None:
        con = _CONSOLES[err] = make_console(stderr=err)
    return con


def widen_help() -> None:
    """typer's help console (stdout) at ``PIPED_WIDTH`` when stdout is not a terminal (TERMINAL_WIDTH wins)."""
    width = piped_width(sys.stdout)
    if width is not None and not os.environ.get("TERMINAL_WIDTH"):
        import typer.rich_utils

        typer.rich_utils.MAX_WIDTH = width


def _text(parts: Sequence[Part]) -> Any:
    from rich.text import Text

    pieces: list[str | tuple[str, str]] = []
    for p in parts:
        if isinstance(p, tuple):
            pieces.append((scrub_registered(str(p[0])), p[1]))
        else:
            pieces.append(scrub_registered(str(p)))
    return Text.assemble(*pieces)


def say(*parts: Part, err: bool = False, console: Any = None) -> None:
    """Print one line made of ``parts``: strings printed as written, ``(text, style)`` pairs styled."""
    (console or get_console(err=err)).print(_text(parts), soft_wrap=True)  # lines are not cut: paths stay whole


def warn(message: str, *, label: str = "warning:", console: Any = None) -> None:
    """``warning: MESSAGE`` on stderr, the label in yellow."""
    say((label, "yellow"), " ", message, err=True, console=console)


def error(message: str) -> None:
    """``error: MESSAGE`` on stderr, the label in bold red (the command line's error path)."""
    say(("error:", "bold red"), " ", message, err=True)


def rule(*parts: Part, console: Any = None, err: bool = False) -> None:
    """A horizontal rule titled with ``parts``."""
    (console or get_console(err=err)).rule(_text(parts), align="left")


def table(title: str, columns: Sequence[str | tuple[str, str]], rows: Iterable[Sequence[object]], *,
          console: Any = None, err: bool = False) -> None:
    """A table: ``columns`` are names or ``(name, justify)``; every cell is shown as text, never as markup."""
    from rich.table import Table
    from rich.text import Text

    t = Table(title=scrub_registered(title))
    for c in columns:
        name, justify = (c, "left") if isinstance(c, str) else c
        t.add_column(Text(scrub_registered(name)), justify=justify)  # type: ignore[arg-type]
    for row in rows:
        t.add_row(*(Text(scrub_registered(str(v))) for v in row))
    (console or get_console(err=err)).print(t)


def echo(text: str, *, err: bool = False, file: IO[str] | None = None) -> None:
    """A plain line (no rich at all: JSON output, lines meant for logs), scrubbed of secrets."""
    stream = file if file is not None else (sys.stderr if err else sys.stdout)
    print(scrub_registered(text), file=stream, flush=True)


def progress(*columns: str | tuple[str, str], console: Any = None, **options: Any) -> Any:
    """A rich ``Progress`` whose columns are named: ``bar``, ``count`` (done/total), ``elapsed``, ``eta``
    (remaining time), ``spinner``; any other string is a text column formatted over the task (its
    ``{task.description}`` and ``{task.fields[...]}`` shown as text, never as markup); ``(format, style)`` a
    styled text column."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    named = {"bar": BarColumn, "count": MofNCompleteColumn, "elapsed": TimeElapsedColumn,
             "eta": TimeRemainingColumn, "spinner": SpinnerColumn}
    cols: list[Any] = []
    for c in columns:
        if isinstance(c, tuple):
            cols.append(_ScrubbedColumn(c[0], style=c[1], markup=False))
        elif c in named:
            cols.append(named[c]())
        else:
            cols.append(_ScrubbedColumn(c, markup=False))
    return Progress(*cols, console=console or get_console(err=True), **options)


def _scrubbed_column_class() -> Any:
    from rich.progress import TextColumn

    class ScrubbedColumn(TextColumn):  # type: ignore[misc]
        """A text column shown as text (markup off), with registered secrets masked."""

        def render(self, task: Any) -> Any:
            from rich.text import Text

            text = self.text_format.format(task=task)
            return Text(scrub_registered(text), style=self.style, justify=self.justify)

    return ScrubbedColumn


def _ScrubbedColumn(fmt: str, **kw: Any) -> Any:  # noqa: N802 - a class made on first use (rich loads late)
    return _scrubbed_column_class()(fmt, **kw)


@contextmanager
def status(label: str, *, console: Any = None) -> Iterator[Any]:
    """A spinner with ``label`` (shown as text); yields a function replacing its text."""
    from rich.text import Text

    con = console or get_console(err=True)
    with con.status(Text(scrub_registered(label))) as st:
        yield lambda msg: st.update(Text(scrub_registered(msg)))
