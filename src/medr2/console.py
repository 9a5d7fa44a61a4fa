"""The one way medr2 makes a rich console: as wide as the terminal on a terminal, and ``PIPED_WIDTH`` columns when
the stream is a file or a pipe (rich's default there is 80, which wrapped tables and cut words short with "…").
``COLUMNS`` in the environment wins, as rich reads it. ``tests/test_cli_help.py`` checks that nothing else in the
package constructs a rich ``Console``."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console

PIPED_WIDTH = 160


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


def make_console(*, stderr: bool = False, **kwargs: Any) -> Console:
    from rich.console import Console

    if kwargs.get("file") is None and kwargs.get("width") is None:
        kwargs["width"] = piped_width(sys.stderr if stderr else sys.stdout)
    return Console(stderr=stderr, **kwargs)


def widen_help() -> None:
    """typer's help console (stdout) at ``PIPED_WIDTH`` when stdout is not a terminal (TERMINAL_WIDTH wins)."""
    width = piped_width(sys.stdout)
    if width is not None and not os.environ.get("TERMINAL_WIDTH"):
        import typer.rich_utils

        typer.rich_utils.MAX_WIDTH = width
