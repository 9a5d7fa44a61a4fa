"""``medr2 import FORMAT PATH --out BENCH`` and ``medr2 convert BENCH --to TARGET --out PATH``."""

from __future__ import annotations

from pathlib import Path

import typer


def _options(pairs: list[str]) -> dict[str, str]:
    from medr2.errors import BadInput

    out = {}
    for p in pairs:
        k, sep, v = p.partition("=")
        if not sep or not k:
            raise BadInput(f"expected KEY=VALUE, got {p!r}", field="--option")
        out[k.strip()] = v.strip()
    return out


def register(app: typer.Typer) -> None:
    @app.command("import")
    def import_cmd(
        fmt: str = typer.Argument(..., metavar="FORMAT",
                                  help="vqa-rad, slake, pmc-vqa, omnimedvqa, probmed, vlmevalkit, hf, lmms-eval"),
        path: Path = typer.Argument(..., help="the dataset's local file or folder"),
        out: Path = typer.Option(..., "--out", help="bench folder to write"),
        license: str | None = typer.Option(None, "--license", help="licence recorded on every item"),
        access: str | None = typer.Option(None, "--access", help="open, credentialed or restricted"),
        source: str | None = typer.Option(None, "--source-name", help="source name (default: the format)"),
        option: list[str] = typer.Option([], "--option", help="format option KEY=VALUE (e.g. images=DIR)"),
    ) -> None:
        """Import an existing medical VQA set as a bench (questions mapped onto the four stages)."""
        from rich.console import Console
        from rich.markup import escape

        from medr2.interop.common import why_quarantined, write_import
        from medr2.interop.importers import run_import

        res = run_import(fmt, path, out, license=license, access=access, source=source, options=_options(option))
        write_import(res, out)
        con = Console()
        con.print(f"imported {len(res.items)} items on {len(res.cases)} images into {out}")
        for task, n in res.counts.items():
            con.print(f"  {task:24s} {n}")
        con.print(f"unmapped (imported.other): {res.unmapped}, duplicates merged: {res.duplicates}, "
                  f"quarantined: {len(res.quarantined)}")
        if res.quarantined:
            con.print("[yellow]quarantined[/]" + escape(why_quarantined(res.quarantined, out)))
        unknown = sum(1 for it in res.items if it.meta.get("answer_unknown"))
        if unknown:
            con.print(f"[yellow]{unknown} item(s) without an answer[/] (meta answer_unknown): for running models "
                      "and exporting predictions, not for scoring")

    @app.command("convert")
    def convert_cmd(
        bench: Path = typer.Argument(..., help="bench folder"),
        to: str = typer.Option(..., "--to", help="hf, vlmevalkit or lmms-eval"),
        out: Path = typer.Option(..., "--out", help="output folder"),
    ) -> None:
        """Export a bench to another harness's format."""
        from medr2.bench.format import load_bench
        from medr2.interop.exporters import run_export

        summary = run_export(to, load_bench(bench), out)
        typer.echo(f"wrote {sum(summary['splits'].values())} items ({summary['splits']}) to {out}")
