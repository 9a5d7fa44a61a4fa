"""The ``medr2`` command line (DESIGN §13). Each subsystem registers its own commands;
heavy imports happen inside the command bodies so ``medr2 --help`` stays fast."""

from __future__ import annotations

import importlib
import sys

import typer

from medr2.errors import Medr2Error

app = typer.Typer(
    no_args_is_help=True, add_completion=False, pretty_exceptions_show_locals=False,
    help="Med-R2 style benchmark toolkit.",
)

# modules exposing ``register(app)``
COMMAND_MODULES = (
    "medr2.models.commands",
    "medr2.models.serve_commands",
    "medr2.train.commands",
    "medr2.build.commands",
    "medr2.perturb.commands",
    "medr2.bench.contact_commands",
    "medr2.report.commands",
    "medr2.run.commands",
    "medr2.score.commands",
    "medr2.interop.commands",
    "medr2.demo_commands",
)

for _mod in COMMAND_MODULES:
    importlib.import_module(_mod).register(app)


def main() -> None:
    """Entry point: map errors to the documented exit codes (2 bad input/usage, 1 failed work)."""
    from rich.console import Console

    try:
        app(standalone_mode=False)
    except Medr2Error as e:
        Console(stderr=True).print(f"[bold red]error:[/] {e}", highlight=False, markup=True)
        sys.exit(e.exit_code)
    except (typer.Exit, SystemExit) as e:
        code = getattr(e, "exit_code", None) or getattr(e, "code", 0) or 0
        sys.exit(code)
    except Exception as e:  # click usage errors
        import click

        if isinstance(e, click.ClickException):
            e.show()
            sys.exit(2)
        if isinstance(e, click.exceptions.Abort):
            sys.exit(130)
        raise


if __name__ == "__main__":
    main()
