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
        "coverage": task_coverage(root),
    }


def task_coverage(root: Path | str) -> dict[str, Any]:
    """Clean items per task and source (the tasks x sources table of ``medr2 info``), and the tasks of the
    four stages that no source of this bench supports (no clean item from any source)."""
    from medr2.bench.format import ITEMS_FILE
    from medr2.interop.common import OTHER_TASK, TASK_STAGE

    path = Path(root) / ITEMS_FILE
    table: dict[str, dict[str, int]] = {}
    sources: set[str] = set()
    if path.is_file():
        for (task, src), n in clean_task_source_counts(path).items():
            sources.add(src)
            row = table.setdefault(task, {})
            row[src] = row.get(src, 0) + n
    every = [k for k in TASK_STAGE if k != OTHER_TASK]
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
    """Print the summary as tables (medr2.console: every name shown as text)."""
    from medr2.console import say, table

    counts, cases = info["counts"], info["cases"]
    say((str(info["name"]), "bold"), f"  medr2 {info['medr2_version']}  checksum {info['checksum'][:16]}")
    say(f"cases {cases.get('n', 0)} ({provenance_line(cases)}), patients {cases.get('patients', 0)}, "
        f"items {counts.get('items', 0)}, "
        f"chains {counts.get('chains', 0)}, yes/no pairs {counts.get('pairs', 0)}")
    say(f"splits by {split_unit_line(info.get('build', {}))}")
    for key in ("stage", "split", "variant", "form"):
        table(f"items per {key}", [key, ("items", "right")], sorted(counts.get(key, {}).items()))
    splits = sorted({s for v in counts.get("task_split", {}).values() for s in v})
    skipped = info.get("skipped", {})
    tasks = [row["id"] for row in info.get("tasks", [])] or sorted(counts.get("task_split", {}))
    rows = []
    for task in tasks:
        row = counts.get("task_split", {}).get(task, {})
        reasons = "; ".join(f"{r}: {n}" for r, n in sorted(skipped.get(task, {}).items()))
        rows.append((task, *(row.get(s, 0) for s in splits), reasons))
    table("items per task and split", ["task", *((s, "right") for s in splits), "skipped cases (reason)"], rows)
    vs = info.get("variants_skipped") or {}
    if vs:
        table("variants skipped", ["variant", "reason", ("items", "right")],
              [(code, r, n) for code, reasons in sorted(vs.items()) for r, n in sorted(reasons.items())])
    table("sources and licences", ["kind", "name", ("cases", "right")],
          [(kind, k, n) for kind in ("sources", "licenses", "access", "modalities")
           for k, n in sorted(cases.get(kind, {}).items())])
    cov = info.get("coverage") or {}
    if cov.get("sources"):
        table("coverage: clean items per task and source", ["task", *((src, "right") for src in cov["sources"])],
              [(task, *(row.get(src, 0) for src in cov["sources"])) for task, row in cov["tasks"].items()])
        if cov.get("unsupported"):
            say(f"tasks no source supports ({len(cov['unsupported'])}): " + ", ".join(cov["unsupported"]))
    q = info["quarantine"]
    say(f"quarantined records: {q['n']}" + (f" by stage {q['by_stage']}" if q["n"] else ""))
    for e in q["examples"]:
        say(f"  {e['stage']}: file={e['file']} record={e['record']} field={e['field']}: {e['reason']}")


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
