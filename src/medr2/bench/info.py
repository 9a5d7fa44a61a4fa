"""Summaries of a bench for ``medr2 info`` (read from the manifest and the quarantine log)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medr2.bench.format import QUARANTINE_FILE, read_manifest, verify_checksums
from medr2.errors import Quarantine
from medr2.images import identity_of_version

if TYPE_CHECKING:
    from medr2.bench.table import BenchTable


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
    verify_checksums(root, m)  # the tables read below are the ones the manifest names (a damaged one: exit 2)
    coverage = task_coverage(root)
    return {
        "name": m.get("name"),
        "format_version": m["format_version"],
        "image_identity": identity_of_version(m["format_version"]).name,
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
        "split_origin": split_origin(m),
        "split_overlap": split_overlap(root),
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
    from medr2.console import table

    columns: list[str | tuple[str, str]] = [
        "task", ("items", "right"), ("skipped cases", "right"), ("by contract", "right"),
        "skipped (reason: cases)", "answerable only if (contract)"]
    rows = [(task, q["items"], q["skipped_cases"], q["skipped_by_contract"],
             "; ".join(f"{r}: {n}" for r, n in q["skipped"].items()), q["contract"])
            for task, q in info.get("quality", {}).items()]
    table("item quality per task: clean items generated, cases skipped and why, the contract applied", columns, rows)


def slice_field_completeness(root: Path | str) -> dict[str, dict[str, Any]]:
    """Per case-level slice field (``medr2 score --slice``): cases carrying a value, of how many, and how many
    distinct values (:func:`medr2.bench.slicefields.completeness`)."""
    from medr2.bench.slicefields import completeness

    return completeness(Path(root))


def split_origin(manifest: dict[str, Any]) -> dict[str, Any]:
    """Where the bench's splits come from: ``{"by": "patient"|"case"}`` for a build (``build.split_unit``), or
    ``{"by": "dataset", "format": ...}`` for an import that keeps each record's published split."""
    imported = manifest.get("imported")
    if imported is not None and "build" not in manifest:
        return {"by": imported.get("split_source", "dataset"), "format": imported.get("format")}
    return {"by": (manifest.get("build") or {}).get("split_unit", "patient")}


def split_overlap(root: Path | str) -> dict[str, Any]:
    """Images (cases) and patients (groups of cases sharing a patient or a source image:
    :func:`medr2.bench.format.case_clusters`) whose items sit in more than one split: their test items are not
    held out. Read by columns through the bench's query layer (case id and split: each batch's distinct pairs)."""
    import pyarrow as pa

    from medr2.bench.format import case_clusters
    from medr2.bench.table import SCAN_ROWS, BenchTable

    table = BenchTable(root)
    splits: dict[str, set[str]] = {}
    if table.items_path.is_file():
        for batch, _ in table.iter_batches(None, ["case_id", "split"], SCAN_ROWS):
            pairs = pa.Table.from_batches([batch]).group_by(["case_id", "split"]).aggregate([])
            for case, split in zip(pairs.column("case_id").to_pylist(), pairs.column("split").to_pylist(),
                                   strict=True):
                splits.setdefault(str(case), set()).add(str(split))
        table.close()
    clusters = case_clusters(table.root) if table.cases_path.is_file() else {}
    by_group: dict[str, set[str]] = {}
    for case, s in splits.items():
        by_group.setdefault(clusters.get(case, case), set()).update(s)
    cases = sorted(c for c, s in splits.items() if len(s) > 1)
    groups = sorted(g for g, s in by_group.items() if len(s) > 1)
    return {"cases": len(cases), "of_cases": len(splits), "patients": len(groups), "of_patients": len(by_group),
            "examples": cases[:5] or groups[:5]}


def split_origin_line(origin: dict[str, Any], build: dict[str, Any]) -> str:
    """The ``splits ...`` line of ``medr2 info``."""
    if origin.get("by") == "dataset":
        return (f"splits as published by the dataset ({origin.get('format')} import: each record keeps its own "
                "split; cases are not grouped by patient)")
    return f"splits by {split_unit_line(build)}"


def split_overlap_warning(overlap: dict[str, Any]) -> str | None:
    """A warning when an image or a patient has items in more than one split (None otherwise)."""
    if not overlap.get("cases") and not overlap.get("patients"):
        return None
    parts = []
    if overlap.get("cases"):
        parts.append(f"{overlap['cases']:,} of {overlap['of_cases']:,} images (cases)")
    if overlap.get("patients"):
        parts.append(f"{overlap['patients']:,} of {overlap['of_patients']:,} patients")
    examples = ", ".join(overlap.get("examples") or [])
    return (f"{' and '.join(parts)} have items in more than one split (e.g. {examples}): their test items are not "
            "held out from training, so test scores of a model trained on this bench's train split overstate it")


def task_coverage(root: Path | str) -> dict[str, Any]:
    """Clean items per task and source (the tasks x sources table of ``medr2 info``), and the tasks of the
    four stages that no source of this bench supports (no clean item from any source)."""
    from medr2.bench.table import BenchTable
    from medr2.tasks import task_stage

    bench = BenchTable(root)
    table: dict[str, dict[str, int]] = {}
    sources: set[str] = set()
    if bench.items_path.is_file():
        for (task, src), n in clean_task_source_counts(bench).items():
            sources.add(src)
            row = table.setdefault(task, {})
            row[src] = row.get(src, 0) + n
    every = list(task_stage())  # every registered task (plugins included)
    return {"sources": sorted(sources), "tasks": {k: dict(sorted(v.items())) for k, v in sorted(table.items())},
            "unsupported": [k for k in every if k not in table]}


def clean_task_source_counts(table: BenchTable) -> Counter[tuple[str, str]]:
    """Clean items per (task, source), read by the bench's query layer from the two columns of the clean rows
    (row groups whose variant statistics show no clean item skipped: sorted tables, docs/bench-format.md)."""
    import pyarrow as pa

    from medr2.bench.table import SCAN_ROWS, ItemFilter

    out: Counter[tuple[str, str]] = Counter()
    try:
        for batch, _ in table.iter_batches(ItemFilter(variant_ids=frozenset({"clean"})), ["task", "source"],
                                           SCAN_ROWS):
            if not batch.num_rows:
                continue
            grouped = pa.Table.from_batches([batch]).group_by(["task", "source"]).aggregate([([], "count_all")])
            for task, src, n in zip(*(grouped.column(c).to_pylist() for c in ("task", "source", "count_all")),
                                    strict=True):
                out[(task, src)] += n
    finally:
        table.close()
    return out


def split_unit_line(build: dict[str, Any]) -> str:
    """How the bench's splits were drawn (``build.split_unit``; benches built before the option: patient)."""
    if build.get("split_unit", "patient") == "case":
        return ("case (split_unit=case: test images may be other crops, lesions or degradations of backgrounds "
                "that also occur in training; no held-out patients)")
    return "patient (split_unit=patient: cases sharing a patient or a source image share a split)"


def source_report_lines(build: dict[str, Any]) -> list[str]:
    """``build.source_report`` as lines: per reader, the split rule(s) used (planned records per rule) and
    its counted notes. Text from the data is printed as text (medr2.console)."""
    rep = build.get("source_report")
    if not isinstance(rep, dict):
        return []
    reports = [rep] if "reader" in rep else [r for r in rep.values() if isinstance(r, dict)]
    lines: list[str] = []
    for r in reports:
        for rule, n in (r.get("split_rules") or {}).items():
            lines.append(f"{r.get('reader')}: split rule {rule} ({n} records)")
        for note, n in (r.get("notes") or {}).items():
            lines.append(f"{r.get('reader')}: {note}: {n}")
    return lines


def render_info(info: dict[str, Any]) -> None:
    """Print the summary as tables (medr2.console: every name shown as text)."""
    from medr2.console import say, table

    counts, cases = info["counts"], info["cases"]
    say((str(info["name"]), "bold"), f"  medr2 {info['medr2_version']}  checksum {info['checksum'][:16]}")
    say(f"format version {info['format_version']}: images identified by {info['image_identity']}")
    say(f"cases {cases.get('n', 0)} ({provenance_line(cases)}), patients {cases.get('patients', 0)}, "
        f"items {counts.get('items', 0)}, "
        f"chains {counts.get('chains', 0)}, yes/no pairs {counts.get('pairs', 0)}")
    say(split_origin_line(info.get("split_origin") or {}, info.get("build", {})))
    if (warning := split_overlap_warning(info.get("split_overlap") or {})) is not None:
        say(("warning:", "yellow"), " ", warning)  # on stdout with the rest of the summary
    for line in source_report_lines(info.get("build", {})):
        say(line)
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
    sf = info.get("slice_fields") or {}
    if sf:
        table("slice fields (medr2 score --slice): cases carrying a value",
              ["field", ("cases with a value", "right"), ("share", "right"), ("distinct values", "right")],
              [(name, f"{c['known']} of {c['cases']}", "-" if c["share"] is None else f"{c['share']:.0%}",
                c["values"]) for name, c in sf.items()])
        lacking = [n for n in ("sex", "age") if n in sf and sf[n]["known"] < sf[n]["cases"]]
        if lacking:
            gaps = ", ".join(f"{n} is missing for {sf[n]['cases'] - sf[n]['known']} cases" for n in lacking)
            say(f"note: {gaps} (their slice is 'missing')")
    if info.get("reviews"):
        from medr2.bench.reviews import review_lines

        for line in review_lines(info["reviews"]):
            say(f"review: {line}")
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
