"""``write_report(run_dirs, out_dir)``: leaderboard files, plots and the self-contained index.html."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medr2.atomic import publish_files, settle
from medr2.errors import BadInput
from medr2.records import Item
from medr2.report.browser import MAX_ITEMS, THUMB_PX, browser_data
from medr2.report.html import RunSummary, render_index
from medr2.report.inputs import RunData, load_run, unique_labels
from medr2.report.leaderboard import build_leaderboard, leaderboard_files
from medr2.report.plots import PlotContext, make_plots


def _recorded_checksum(manifest: dict[str, Any]) -> str | None:
    bench = manifest.get("bench")
    value = bench.get("checksum") if isinstance(bench, dict) else manifest.get("bench_checksum")
    return value if isinstance(value, str) and value else None


def _load_benches(runs: list[RunData]) -> tuple[dict[str, Item], dict[Path, Any], list[str]]:
    from medr2.bench.format import load_bench, verify_checksums

    benches: dict[Path, Any] = {}
    items: dict[str, Item] = {}
    for r in runs:
        assert r.bench_root is not None
        root = r.bench_root.resolve()
        if root not in benches:
            benches[root] = load_bench(root, validate=False)
            verify_checksums(root, benches[root].manifest)  # the check eval makes (tables, not images)
            items.update(benches[root].items_by_id)
        recorded = _recorded_checksum(r.manifest)
        if recorded is not None and recorded != benches[root].checksum:
            raise BadInput(f"the run was made on bench {recorded[:12]}..., but {root} is "
                           f"{benches[root].checksum[:12]}...", file=str(r.run_dir / "manifest.json"),
                           field="bench.checksum")
    warnings = []
    if len({b.checksum for b in benches.values()}) > 1:
        warnings.append("The runs were made on different benches: compare their numbers with care.")
    return items, benches, warnings


def _summary(r: RunData, bench: Any) -> RunSummary:
    cases = bench.manifest.get("cases", {}) if bench is not None else {}
    data = "unknown"
    if isinstance(cases, dict) and "n" in cases:
        data = (f"{cases.get('n', 0):,} cases: {cases.get('real', 0):,} real, "
                f"{cases.get('synthetic', 0):,} with synthetic content")
    bench_text = f"{bench.name} ({bench.checksum[:12]})" if bench is not None else "?"
    m = r.manifest
    toolkit = str(m.get("medr2_version") or m.get("version") or "?")
    if m.get("git_commit"):
        toolkit += f" @ {str(m['git_commit'])[:10]}"
    return RunSummary(r.label, r.model_key, r.modes, len(r.scores), bench_text, data, toolkit,
                      _completeness(r.metrics))


def _completeness(metrics: dict[str, Any]) -> str:
    """How much of its plan a run answered (``metrics.json`` ``complete`` / ``plan``)."""
    plan = metrics.get("plan")
    if not isinstance(plan, dict) or metrics.get("complete") is None:
        return "unknown"
    if metrics.get("complete"):
        return "complete"
    return f"incomplete: {plan.get('answered', 0):,} of {plan.get('planned', 0):,} planned answers"


def _incomplete_warnings(runs: list[RunData]) -> list[str]:
    from medr2.score.completeness import describe

    out = []
    for r in runs:
        plan = r.metrics.get("plan")
        message = describe(plan) if isinstance(plan, dict) and r.metrics.get("complete") is False else None
        if message is not None:
            out.append(f"Run {r.label}: {message}")
    return out


def write_report(run_dirs: list[Path] | list[str], out_dir: Path | str, *, bench: Path | str | None = None,
                 max_items: int = MAX_ITEMS, thumb_px: int = THUMB_PX, title: str = "medr2 report") -> Path:
    """Write ``leaderboard.{md,csv,json}``, ``plots/*.png`` and ``index.html`` for the scored runs into
    ``out_dir``; ``bench`` overrides the bench path recorded in the run manifests. Returns index.html."""
    if not run_dirs:
        raise BadInput("give at least one run folder", field="RUN")
    if max_items < 0:
        raise BadInput("must be >= 0", field="--max-items")
    runs = [load_run(d, bench=bench) for d in run_dirs]
    unique_labels(runs)
    items, benches, warnings = _load_benches(runs)
    warnings += _incomplete_warnings(runs)
    for r in runs:
        if r.manifest.get("complete") is False:  # a merge of shards whose eval did not finish
            shards = ", ".join(str(x.get("shard")) for x in r.manifest.get("shards_incomplete") or []) or "?"
            warnings.append(f"Run {r.label} is incomplete: merged from shards whose eval did not finish ({shards}); "
                            "its numbers cover only the items answered.")
    out = Path(out_dir)
    settle(out)  # a report killed while publishing is completed first: its plots are the old set's
    lb = build_leaderboard(runs)
    files = leaderboard_files(lb)
    plots = make_plots(PlotContext(runs, items))
    for p in plots:
        files[f"plots/{p.name}.png"] = p.png
    data = browser_data(runs, items, max_items=max_items, thumb_px=thumb_px)
    summaries = [_summary(r, benches.get(r.bench_root.resolve()) if r.bench_root else None) for r in runs]
    html = render_index(title=title, runs=summaries, leaderboard=lb, plots=plots, browser=data, warnings=warnings)
    files["index.html"] = html.encode("utf-8")
    old_plots = sorted(f"plots/{p.name}" for p in (out / "plots").glob("*.png")) if (out / "plots").is_dir() else []
    # one set: a kill never leaves new leaderboard files beside an old index.html; plots of an earlier
    # report that this one does not make are removed with it
    publish_files(out, files, remove=old_plots, command="medr2 report")
    index = out / "index.html"
    return index
