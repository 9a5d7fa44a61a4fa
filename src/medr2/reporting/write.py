"""``write_report(run_dirs, out_dir)``: leaderboard files, plots and the self-contained index.html."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from medr2.atomic import publish_files, settle
from medr2.bench.table import BenchTable
from medr2.errors import BadInput
from medr2.progress import Quiet
from medr2.reporting.browser import MAX_ITEMS, THUMB_PX, browser_data
from medr2.reporting.html import RunSummary, render_index
from medr2.reporting.inputs import RunData, load_run, unique_labels
from medr2.reporting.items import BenchItems
from medr2.reporting.leaderboard import build_leaderboard, leaderboard_files
from medr2.reporting.plots import PLOTS, PlotContext, make_plots
from medr2.reporting.subgroups import subgroup_view


def _recorded_checksum(manifest: dict[str, Any]) -> str | None:
    bench = manifest.get("bench")
    value = bench.get("checksum") if isinstance(bench, dict) else manifest.get("bench_checksum")
    return value if isinstance(value, str) and value else None


def load_benches(runs: list[RunData]) -> tuple[BenchItems, dict[Path, BenchTable], list[str]]:
    """The benches of the runs, opened by columns and validated as eval validates them
    (:meth:`~medr2.bench.table.BenchTable.validate`; records are read, and checked, only for the items a report
    shows), and their items as one :class:`BenchItems`; the items review fixes made that a run asked
    (``--reviewed accepted``, recorded in its manifest) are read after each bench's rows."""
    benches: dict[Path, BenchTable] = {}
    for r in runs:
        assert r.bench_root is not None
        root = r.bench_root.resolve()
        if root not in benches:
            benches[root] = BenchTable.open(root, image_hashes=False)  # the validation eval makes
        recorded = _recorded_checksum(r.manifest)
        if recorded is not None and recorded != benches[root].checksum:
            raise BadInput(f"the run was made on bench {recorded[:12]}..., but {root} is "
                           f"{benches[root].checksum[:12]}...", file=str(r.run_dir / "manifest.json"),
                           field="bench.checksum")
    from medr2.bench.reviews import recorded_fixes

    added: dict[Path, dict[str, Any]] = {}  # the items review fixes made that the runs' --reviewed selections asked
    for r in runs:
        assert r.bench_root is not None
        invocations = [i for i in r.manifest.get("invocations") or [] if isinstance(i, dict)]
        for it in recorded_fixes(r.bench_root, invocations):
            added.setdefault(r.bench_root.resolve(), {})[it.item_id] = it
    for root, fixed in added.items():
        benches[root].add_items([fixed[k] for k in sorted(fixed)])
    warnings = []
    if len({b.checksum for b in benches.values()}) > 1:
        warnings.append("The runs were made on different benches: compare their numbers with care.")
    return BenchItems(list(benches.values())), benches, warnings


def data_provenance(bench: Any) -> str:
    """What is real and what is synthetic, per field, over the bench's cases: e.g. "4 cases (4 patients);
    image: real in 4 (2 with synthetic lesions drawn into a real image); synthetic: findings 4, diagnosis 2
    of 4; every other field real". The cases are read one at a time where the bench streams them
    (``iter_cases``), else from its ``cases``."""
    if bench is None:
        return "unknown"
    cases = bench.iter_cases() if hasattr(bench, "iter_cases") else getattr(bench, "cases", None) or ()
    n = drawn = 0
    patients: set[str] = set()
    synthetic: Counter[str] = Counter()
    for c in cases:
        n += 1
        patients.add(c.patient_id)
        fields = set(c.synthetic_fields)
        if any(f.synthetic for f in c.findings):
            fields.add("findings")
        if any(s.synthetic for s in c.structures):
            fields.add("structures")
        synthetic.update(fields)
        if "image" not in fields and c.background and "findings" in fields:
            drawn += 1
    if not n:
        return "unknown"
    real_images = n - synthetic.get("image", 0)
    image = f"image: real in {real_images:,} of {n:,}"
    if drawn:
        image += f" ({drawn:,} with synthetic lesions drawn into a real image)"
    parts = [f"{n:,} cases ({len(patients):,} patients)", image]
    others = [(k, v) for k, v in sorted(synthetic.items(), key=lambda kv: (-kv[1], kv[0])) if k != "image"]
    if others:
        parts.append("synthetic: " + ", ".join(f"{k} {v:,}" for k, v in others) + f" of {n:,}; every other field real")
    else:
        parts.append("every field real")
    return "; ".join(parts)


def _summary(r: RunData, bench: Any, short: str) -> RunSummary:
    data = data_provenance(bench)
    bench_text = f"{bench.name} ({bench.checksum[:12]})" if bench is not None else "?"
    m = r.manifest
    toolkit = str(m.get("medr2_version") or m.get("version") or "?")
    if m.get("git_commit"):
        toolkit += f" @ {str(m['git_commit'])[:10]}"
    model = m.get("model")
    spec = str(model.get("spec") or r.model_key) if isinstance(model, dict) else r.model_key
    if spec != r.model_key:
        spec = f"{spec} (key {r.model_key})"
    return RunSummary(r.label, spec, r.modes, len(r.scores), bench_text, data, toolkit,
                      _completeness(r.metrics), short=short, answers=answers_badge(r.metrics),
                      judge=judge_badge(r.metrics))


def answers_badge(metrics: dict[str, Any]) -> str:
    """How the run's closed answers were constrained (``run.structured_answers``), or "" for free text: a run
    with structured answers is marked, since constraining the decoder can change a model's accuracy."""
    mech = (metrics.get("run") or {}).get("structured_answers")
    return "" if not mech else f"structured ({mech}): closed answers constrained, read from the answer field"


def judge_badge(metrics: dict[str, Any]) -> str:
    """The judge of unparsed answers and its agreement with the reader (``metrics.json`` ``judge``), or ""."""
    from medr2.scoring.judge import describe_audit

    return describe_audit(metrics.get("judge"))


SHORT_NAME = 22  # run names longer than this are shortened in the leaderboard (full name in the runs table)


def short_names(labels: list[str]) -> dict[str, str]:
    """Short, unique run names for the leaderboard: the start and end of a long name (``qwen2-vl-7…e1_seed0``);
    the full name where shortening would make two equal."""
    def cut(s: str) -> str:
        return s if len(s) <= SHORT_NAME else f"{s[:11]}…{s[-(SHORT_NAME - 12):]}"

    short = {lab: cut(lab) for lab in labels}
    counts = Counter(short.values())
    return {lab: (s if counts[s] == 1 else lab) for lab, s in short.items()}


def _completeness(metrics: dict[str, Any]) -> str:
    """How much of its plan a run answered (``metrics.json`` ``complete`` / ``plan``)."""
    plan = metrics.get("plan")
    if not isinstance(plan, dict) or metrics.get("complete") is None:
        return "unknown"
    if metrics.get("complete"):
        return "complete"
    return f"incomplete: {plan.get('answered', 0):,} of {plan.get('planned', 0):,} planned answers"


def _incomplete_warnings(runs: list[RunData]) -> list[str]:
    from medr2.scoring.completeness import describe

    out = []
    for r in runs:
        plan = r.metrics.get("plan")
        message = describe(plan) if isinstance(plan, dict) and r.metrics.get("complete") is False else None
        if message is not None:
            out.append(f"Run {r.label}: {message}")
    return out


def write_report(run_dirs: list[Path] | list[str], out_dir: Path | str, *, bench: Path | str | None = None,
                 max_items: int = MAX_ITEMS, thumb_px: int = THUMB_PX, title: str = "medr2 report",
                 progress: Quiet | None = None) -> Path:
    """Write ``leaderboard.{md,csv,json}``, ``plots/*.png`` and ``index.html`` for the scored runs into
    ``out_dir``; ``bench`` overrides the bench path recorded in the run manifests; ``progress``
    (``medr2.progress``) is told each step. Returns index.html."""
    progress = progress or Quiet()
    if not run_dirs:
        raise BadInput("give at least one run folder", field="RUN")
    if max_items < 0:
        raise BadInput("must be >= 0", field="--max-items")
    progress.step("reading runs", len(run_dirs))
    runs = []
    for d in run_dirs:
        runs.append(load_run(d, bench=bench))
        progress.advance()
    unique_labels(runs)
    progress.step("reading benches")
    items, benches, warnings = load_benches(runs)
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
    progress.step("plots", len(PLOTS))
    plots = make_plots(PlotContext(runs, items), progress)
    for p in plots:
        files[f"plots/{p.name}.png"] = p.png
    head = lb.headline()
    data = browser_data(runs, items, max_items=max_items, thumb_px=thumb_px, progress=progress,
                        first=(head["run"], head["mode"]) if head else None)
    progress.step("writing index.html")
    shorts = short_names([r.label for r in runs])
    summaries = [_summary(r, benches.get(r.bench_root.resolve()) if r.bench_root else None, shorts[r.label])
                 for r in runs]
    html = render_index(title=title, runs=summaries, leaderboard=lb, plots=plots, browser=data, warnings=warnings,
                        short_names=shorts, subgroups=subgroup_view(runs, shorts))
    files["index.html"] = html.encode("utf-8")
    for table in benches.values():
        table.close()
    old_plots = sorted(f"plots/{p.name}" for p in (out / "plots").glob("*.png")) if (out / "plots").is_dir() else []
    # one set: a kill never leaves new leaderboard files beside an old index.html; plots of an earlier
    # report that this one does not make are removed with it
    publish_files(out, files, remove=old_plots, command="medr2 report")
    index = out / "index.html"
    return index
