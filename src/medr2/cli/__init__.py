"""The ``medr2`` command line (docs/architecture.md): one thin module per command in this package, each
calling the public API (:mod:`medr2.api`) and printing what it returns. Heavy imports happen inside the
command bodies, so ``import medr2.cli`` and ``medr2 --help`` load none of numpy, pyarrow, PIL, pydantic or
torch (``tests/test_cli_light.py``; timed by ``bench/bench_cli_help.py``)."""

from __future__ import annotations

import errno
import importlib
import sys

import typer

from medr2.catalog import IMPORT_FORMATS, MODES, PRESETS, SOURCE_KINDS, TEXT_CODES, VISUAL_CODES, listing
from medr2.errors import Medr2Error

EPILOG = "\n\n".join((  # light name tables (medr2.catalog), each checked against its registry by a test
    f"Source kinds (build --source): {listing(SOURCE_KINDS)}.",
    f"Model presets (eval --preset): {listing(PRESETS)}.",
    f"Modes (eval --mode): {listing(MODES)}.",
    f"Variant codes (build/perturb/eval --variants): text {listing(TEXT_CODES)}; visual {listing(VISUAL_CODES)}.",
    f"Import formats (import FORMAT): {listing(IMPORT_FORMATS)}.",
))

app = typer.Typer(
    no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
    help="Med-R2 style benchmark toolkit.", epilog=EPILOG,
)

# modules exposing ``register(app)``, in the order of ``medr2 --help``
COMMAND_MODULES = (
    "medr2.cli.tiny_vlm",
    "medr2.cli.vllm_export",
    "medr2.cli.export",
    "medr2.cli.finetune",
    "medr2.cli.build",
    "medr2.cli.info",
    "medr2.cli.materialise",
    "medr2.cli.perturb",
    "medr2.cli.variants_sheet",
    "medr2.cli.contact_sheet",
    "medr2.cli.report",
    "medr2.cli.view",
    "medr2.cli.review",
    "medr2.cli.evaluate",
    "medr2.cli.merge",
    "medr2.cli.score",
    "medr2.cli.import_dataset",
    "medr2.cli.convert",
    "medr2.cli.demo",
)

for _mod in COMMAND_MODULES:
    importlib.import_module(_mod).register(app)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("medr2")
        except PackageNotFoundError:  # running from a source tree without an install
            v = "unknown"
        from medr2.console import echo

        echo(f"medr2 {v}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", metavar="", callback=_version, is_eager=True,
                                 help="Print the medr2 version and exit."),
) -> None:
    """Med-R2 style benchmark toolkit."""


def _usage_error_types() -> tuple[type[BaseException], ...]:
    """Click's usage-error base class: typer >= 0.29 vendors click as ``typer._click``; older ones use
    click itself. Both are caught so a usage error never becomes a traceback."""
    types: list[type[BaseException]] = []
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            types.append(importlib.import_module(name).ClickException)
        except (ImportError, AttributeError):
            continue
    return tuple(types)


def _abort_types() -> tuple[type[BaseException], ...]:
    types: list[type[BaseException]] = [KeyboardInterrupt]
    for name in ("typer.exceptions", "click.exceptions"):
        try:
            types.append(importlib.import_module(name).Abort)
        except (ImportError, AttributeError):
            continue
    return tuple(types)


_STORAGE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG}
_STORAGE_TEXT = ("no space left", "disk is full", "quota exceeded", "read-only file system", "readonly database",
                 "permission denied", "unable to open database file", "file too large")


def storage_problem(e: BaseException) -> str | None:
    """A message for an error that says the output cannot be written (disk full, quota, read-only storage,
    no permission), from the exception or what caused it; None for anything else."""
    seen: set[int] = set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        text = str(cur).lower()
        if isinstance(cur, OSError) and (cur.errno in _STORAGE_ERRNOS or any(t in text for t in _STORAGE_TEXT)):
            where = cur.filename if getattr(cur, "filename", None) else None
            what = cur.strerror or str(cur)
            return (f"{what}{f': {where}' if where else ''}. Free space, or use storage this process can "
                    "write, then rerun the same command (what was finished is kept)")
        if type(cur).__module__ == "sqlite3" and any(t in text for t in _STORAGE_TEXT):
            return (f"cannot write the run store: {cur}. Free space or use writable storage, then rerun the same "
                    "command (every stored answer is kept)")
        if type(cur).__module__.lstrip("_") == "duckdb" and any(t in text for t in _STORAGE_TEXT):
            return (f"cannot write the columnar engine's files: {cur}. Free space or use writable storage, then "
                    "rerun the same command (what was finished is kept)")
        cur = cur.__cause__ or cur.__context__
    return None


def main() -> None:
    """Entry point: map errors to the documented exit codes (2 bad input/usage, 1 failed work).
    Usage errors (unknown command or option, missing argument) print one line, never a traceback."""
    from medr2.console import echo, error, widen_help

    widen_help()
    try:
        code = app(standalone_mode=False)  # a command's ``typer.Exit(N)`` is returned as N here, not raised
        if isinstance(code, int) and code:
            sys.exit(code)
    except Medr2Error as e:
        error(str(e))
        sys.exit(e.exit_code)
    except (typer.Exit, SystemExit) as e:
        code = getattr(e, "exit_code", None) or getattr(e, "code", 0) or 0
        sys.exit(code)
    except _usage_error_types() as err:
        fmt = getattr(err, "format_message", None)
        message = fmt() if callable(fmt) else str(err)
        ctx = getattr(err, "ctx", None)
        where = ctx.command_path if ctx is not None else "medr2"
        if message:  # empty for a bare command whose help was just printed
            echo(f"error: {message} (see '{where} --help')", err=True)
        sys.exit(getattr(err, "exit_code", 2) or 2)
    except _abort_types():
        echo("aborted", err=True)
        sys.exit(130)
    except Exception as e:
        storage = storage_problem(e)
        if storage is not None:  # the work failed for want of space or write access: exit 1, no traceback
            error(storage)
            sys.exit(1)
        raise

