"""``medr2 ARGS`` through the real entry point (:func:`medr2.cli.main`) in this process: stdout and stderr
captured, the exit code returned. An uncaught exception (what would be a traceback) propagates and fails the
calling test."""

from __future__ import annotations

import io
import sys
from contextlib import redirect_stderr, redirect_stdout


def run_cli(*args: str) -> tuple[int, str]:
    from medr2.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["medr2", *args]
    code = 0
    try:
        with redirect_stdout(out), redirect_stderr(err):
            main()
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = argv
    return code, out.getvalue() + err.getvalue()
