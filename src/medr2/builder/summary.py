"""The rich summary printed after ``medr2 build``."""

from __future__ import annotations

from medr2.bench.info import provenance_line
from medr2.builder.pipeline import BuildResult


def print_summary(result: BuildResult) -> None:
    from medr2.console import say, table

    m = result.manifest
    counts = m["counts"]
    say(("built", "bold green"), f" {result.root}  ({result.seconds:.1f} s)")
    say(f"cases {result.n_cases} ({provenance_line(m['cases'])}), "
        f"clean items {result.n_clean}, all items {result.n_items}, chains {counts['chains']}, "
        f"quarantined {result.quarantined}")
    splits = sorted(counts["split"])
    per_stage: dict[str, dict[str, int]] = {}
    for row in m["tasks"]:
        for split, n in counts["task_split"].get(row["id"], {}).items():
            st = per_stage.setdefault(str(row["stage"]), {})
            st[split] = st.get(split, 0) + n
    table("items per stage and split", ["stage", *((s, "right") for s in splits)],
          [(stage, *(row.get(s, 0) for s in splits)) for stage, row in sorted(per_stage.items())])
    if result.skipped:
        table("tasks skipped (cases lacking what the task needs)", ["task", "reason", ("cases", "right")],
              [(task_id, reason, n) for task_id, reasons in sorted(result.skipped.items())
               for reason, n in sorted(reasons.items())])
    if counts["variant"]:
        say("variants: " + ", ".join(f"{k} {n}" for k, n in sorted(counts["variant"].items())))
    if result.quarantined:
        say((f"{result.quarantined} record(s) quarantined", "yellow"), f" -> {result.root / 'quarantine.jsonl'}")
