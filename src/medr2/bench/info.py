"""Summaries of a bench for ``medr2 info`` (read from the manifest and the quarantine log)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from medr2.bench.format import QUARANTINE_FILE, read_manifest
from medr2.errors import Quarantine


def quarantine_summary(root: Path | str) -> dict[str, Any]:
    entries = Quarantine.read(Path(root) / QUARANTINE_FILE)
    return {
        "n": len(entries),
        "by_stage": dict(sorted(Counter(e.stage for e in entries).items())),
        "by_field": dict(sorted(Counter(e.field or "-" for e in entries).items())),
        "examples": [
            {"file": e.file, "record": e.record, "field": e.field, "reason": e.reason, "stage": e.stage}
            for e in entries[:5]
        ],
    }


def bench_info(root: Path | str) -> dict[str, Any]:
    """Everything ``medr2 info`` shows, as plain JSON-able data."""
    m = read_manifest(root)
    coverage = task_coverage(root)
    return {
        "name": m.get("name"),
        "medr2_version": m.get("medr2_version"),
        "checksum": m["checksums"]["bench"],
        "build": m.get("build", {}),
        "tasks": m.get("tasks", []),
        "counts": m.get("counts", {}),
        "cases": m.get("cases", {}),
        "skipped": m.get("skipped", {}),
        "variants_skipped": m.get("variants_skipped", {}),
        "quarantine": quarantine_summary(root),
        "sources": m.get("sources", {}),
        "coverage": coverage,
        "slice_fields": slice_field_completeness(root),
        "quality": quality_summary(m.get("tasks", []), m.get("skipped", {}), coverage),
    }


def quality_summary(tasks: list[dict[str, Any]], skipped: dict[str, dict[str, int]],
                    coverage: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per task (``medr2 info --quality``): clean items generated, cases skipped and why, how many of them by its
    answerability contract, and the contract that applied (as the bench's manifest recorded it; the task
    registry's for a bench built before contracts were recorded)."""
    from medr2.tasks import TASKS
    from medr2.tasks.contract import REQUIREMENTS, contract_text

    out: dict[str, dict[str, Any]] = {}
    ids = [str(row["id"]) for row in tasks] or list(TASKS)
    rows = {str(row["id"]): row for row in tasks}
    for task in ids:
        row = rows.get(task, {})
        requires = [str(r) for r in row.get("requires", TASKS[task].requires if task in TASKS else ())]
        contract = row.get("contract") or (contract_text(tuple(requires)) if all(
            r in REQUIREMENTS for r in requires) else "; ".join(requires) or "-")
        reasons = dict(sorted(skipped.get(task, {}).items(), key=lambda kv: (-kv[1], kv[0])))
        by_contract = {REQUIREMENTS[r].reason for r in requires if r in REQUIREMENTS}
        out[task] = {
            "items": sum(coverage.get("tasks", {}).get(task, {}).values()),
            "skipped": reasons, "skipped_cases": sum(reasons.values()),
            "skipped_by_contract": sum(n for r, n in reasons.items() if r in by_contract),
            "requires": requires, "contract": contract,
        }
    return out


def render_quality(info: dict[str, Any]) -> None:
    """Print the per-task quality table of ``medr2 info --quality`` (text from the bench is never markup)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    t = Table(title="item quality per task: clean items generated, cases skipped and why, the contract applied")
    for col, just in (("task", "left"), ("items", "right"), ("skipped cases", "right"), ("by contract", "right"),
                      ("skipped (reason: cases)", "left"), ("answerable only if (contract)", "left")):
        t.add_column(col, justify=just)  # type: ignore[arg-type]
    for task, q in info.get("quality", {}).items():
        reasons = "; ".join(f"{r}: {n}" for r, n in q["skipped"].items())
        t.add_row(Text(task), str(q["items"]), str(q["skipped_cases"]), str(q["skipped_by_contract"]), Text(reasons),
                  Text(q["contract"]))
    Console().print(t)


def slice_field_completeness(root: Path | str) -> dict[str, dict[str, Any]]:
    """Per case-level slice field (``medr2 score --slice``): cases carrying a value, of how many, and how many
    distinct values (:func:`medr2.bench.slicefields.completeness`)."""
    from medr2.bench.slicefields import completeness

    return completeness(Path(root))


def task_coverage(root: Path | str) -> dict[str, Any]:
    """Clean items per task and source (the tasks x sources table of ``medr2 info``), and the tasks of the
    four stages that no source of this bench supports (no clean item from any source)."""
    from medr2.bench.format import ITEMS_FILE
    from medr2.tasks import task_stage

    path = Path(root) / ITEMS_FILE
    table: dict[str, dict[str, int]] = {}
    sources: set[str] = set()
    if path.is_file():
        for (task, src), n in clean_task_source_counts(path).items():
            sources.add(src)
            row = table.setdefault(task, {})
            row[src] = row.get(src, 0) + n
    every = list(task_stage())  # every registered task (plugins included)
    return {"sources": sorted(sources), "tasks": {k: dict(sorted(v.items())) for k, v in sorted(table.items())},
            "unsupported": [k for k in every if k not in table]}


def clean_task_source_counts(path: Path) -> Counter[tuple[str, str]]:
    """Clean items per (task, source), aggregated one row group at a time from the three columns, skipping row
    groups whose variant statistics (sorted tables, docs/bench-format.md) show no clean item."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    out: Counter[tuple[str, str]] = Counter()
    with pq.ParquetFile(str(path), read_dictionary=["task", "source", "variant"]) as f:
        names = f.schema_arrow.names
        vcol = names.index("variant") if "variant" in names else None
        for rg in range(f.num_row_groups):
            stats = f.metadata.row_group(rg).column(vcol).statistics if vcol is not None else None
            if stats is not None and stats.has_min_max and not stats.min <= "clean" <= stats.max:
                continue
            t = f.read_row_group(rg, columns=["task", "source", "variant"])
            t = t.filter(pc.equal(t.column("variant").cast("string"), "clean"))
            if not t.num_rows:
                continue
            keys = pa.table({c: t.column(c).cast(pa.string()) for c in ("task", "source")})
            grouped = keys.group_by(["task", "source"]).aggregate([([], "count_all")])
            for task, src, n in zip(*(grouped.column(c).to_pylist() for c in ("task", "source", "count_all")),
                                    strict=True):
                out[(task, src)] += n
    return out


def split_unit_line(build: dict[str, Any]) -> str:
    """How the bench's splits were drawn (``build.split_unit``; benches built before the option: patient)."""
    if build.get("split_unit", "patient") == "case":
        return ("case (split_unit=case: test images may be other crops, lesions or degradations of backgrounds "
                "that also occur in training; no held-out patients)")
    return "patient (split_unit=patient: cases sharing a patient or a source image share a split)"


def render_info(info: dict[str, Any]) -> None:
    """Print the summary with rich tables."""
    from rich.console import Console
    from rich.table import Table

    con = Console()
    counts, cases = info["counts"], info["cases"]
    con.print(f"[bold]{info['name']}[/]  medr2 {info['medr2_version']}  checksum {info['checksum'][:16]}")
    con.print(f"cases {cases.get('n', 0)} ({provenance_line(cases)}), patients {cases.get('patients', 0)}, "
              f"items {counts.get('items', 0)}, "
              f"chains {counts.get('chains', 0)}, yes/no pairs {counts.get('pairs', 0)}")
    con.print(f"splits by {split_unit_line(info.get('build', {}))}")
    for key in ("stage", "split", "variant", "form"):
        t = Table(title=f"items per {key}")
        t.add_column(key)
        t.add_column("items", justify="right")
        for k, n in sorted(counts.get(key, {}).items()):
            t.add_row(k, str(n))
        con.print(t)
    t = Table(title="items per task and split")
    t.add_column("task")
    splits = sorted({s for v in counts.get("task_split", {}).values() for s in v})
    for s in splits:
        t.add_column(s, justify="right")
    t.add_column("skipped cases (reason)")
    skipped = info.get("skipped", {})
    tasks = [row["id"] for row in info.get("tasks", [])] or sorted(counts.get("task_split", {}))
    for task in tasks:
        row = counts.get("task_split", {}).get(task, {})
        reasons = "; ".join(f"{r}: {n}" for r, n in sorted(skipped.get(task, {}).items()))
        t.add_row(task, *[str(row.get(s, 0)) for s in splits], reasons)
    con.print(t)
    vs = info.get("variants_skipped") or {}
    if vs:
        t = Table(title="variants skipped")
        t.add_column("variant")
        t.add_column("reason")
        t.add_column("items", justify="right")
        for code, reasons in sorted(vs.items()):
            for r, n in sorted(reasons.items()):
                t.add_row(code, r, str(n))
        con.print(t)
    t = Table(title="sources and licences")
    t.add_column("kind")
    t.add_column("name")
    t.add_column("cases", justify="right")
    for kind in ("sources", "licenses", "access", "modalities"):
        for k, n in sorted(cases.get(kind, {}).items()):
            t.add_row(kind, k, str(n))
    con.print(t)
    cov = info.get("coverage") or {}
    if cov.get("sources"):
        t = Table(title="coverage: clean items per task and source")
        t.add_column("task")
        for src in cov["sources"]:
            t.add_column(src, justify="right")
        for task, row in cov["tasks"].items():
            t.add_row(task, *[str(row.get(src, 0)) for src in cov["sources"]])
        con.print(t)
        if cov.get("unsupported"):
            con.print(f"tasks no source supports ({len(cov['unsupported'])}): " + ", ".join(cov["unsupported"]),
                      highlight=False, markup=False)
    sf = info.get("slice_fields") or {}
    if sf:
        t = Table(title="slice fields (medr2 score --slice): cases carrying a value")
        t.add_column("field")
        t.add_column("cases with a value", justify="right")
        t.add_column("share", justify="right")
        t.add_column("distinct values", justify="right")
        for name, c in sf.items():
            share = "-" if c["share"] is None else f"{c['share']:.0%}"
            t.add_row(name, f"{c['known']} of {c['cases']}", share, str(c["values"]))
        con.print(t)
        lacking = [n for n in ("sex", "age") if n in sf and sf[n]["known"] < sf[n]["cases"]]
        if lacking:
            gaps = ", ".join(f"{n} is missing for {sf[n]['cases'] - sf[n]['known']} cases" for n in lacking)
            con.print(f"note: {gaps} (their slice is 'missing')", highlight=False, markup=False)
    q = info["quarantine"]
    con.print(f"quarantined records: {q['n']}" + (f" by stage {q['by_stage']}" if q["n"] else ""))
    for e in q["examples"]:
        con.print(f"  {e['stage']}: file={e['file']} record={e['record']} field={e['field']}: {e['reason']}",
                  highlight=False, markup=False)


def provenance_line(cases: dict[str, Any]) -> str:
    """What is real and what is synthetic per field, from the manifest's ``cases`` block: "images real in
    200 of 200; synthetic: findings 200, report 200". Benches built before the per-field counts existed
    say how many cases have any synthetic part."""
    n = int(cases.get("n", 0))
    by = cases.get("synthetic_by_field")
    if not isinstance(by, dict):
        return f"real {cases.get('real', 0)}, with synthetic parts {cases.get('synthetic', 0)}"
    image = f"images real in {n - int(by.get('image', 0))} of {n}"
    others = sorted(((k, int(v)) for k, v in by.items() if k != "image"), key=lambda kv: (-kv[1], kv[0]))
    if not others:
        return f"{image}; every field real" if not by.get("image") else image
    return f"{image}; synthetic: " + ", ".join(f"{k} {v}" for k, v in others) + "; every other field real"
