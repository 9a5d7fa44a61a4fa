"""The rich summary printed after ``medr2 build``."""

from __future__ import annotations

from medr2.bench.info import provenance_line
from medr2.build.pipeline import BuildResult


def print_summary(result: BuildResult) -> None:
    from rich.table import Table

    from medr2.console import make_console

    con = make_console()
    m = result.manifest
    counts = m["counts"]
    con.print(f"[bold green]built[/] {result.root}  ({result.seconds:.1f} s)")
    con.print(f"cases {result.n_cases} ({provenance_line(m['cases'])}), "
              f"clean items {result.n_clean}, all items {result.n_items}, chains {counts['chains']}, "
              f"quarantined {result.quarantined}")
    t = Table(title="items per stage and split")
    t.add_column("stage")
    splits = sorted(counts["split"])
    for s in splits:
        t.add_column(s, justify="right")
    per_stage: dict[str, dict[str, int]] = {}
    for row in m["tasks"]:
        for split, n in counts["task_split"].get(row["id"], {}).items():
            st = per_stage.setdefault(str(row["stage"]), {})
            st[split] = st.get(split, 0) + n
    for stage, row in sorted(per_stage.items()):
        t.add_row(stage, *[str(row.get(s, 0)) for s in splits])
    con.print(t)
    if result.skipped:
        t = Table(title="tasks skipped (cases lacking what the task needs)")
        t.add_column("task")
        t.add_column("reason")
        t.add_column("cases", justify="right")
        for task_id, reasons in sorted(result.skipped.items()):
            for reason, n in sorted(reasons.items()):
                t.add_row(task_id, reason, str(n))
        con.print(t)
    if counts["variant"]:
        con.print("variants: " + ", ".join(f"{k} {n}" for k, n in sorted(counts["variant"].items())))
    if result.quarantined:
        con.print(f"[yellow]{result.quarantined} record(s) quarantined[/] -> {result.root / 'quarantine.jsonl'}")
