"""``summary.md`` of ``medr2 demo``: clean accuracy and robustness per model with 95% intervals, and
the paired change of each fine-tuned model against the untrained one. Numbers come from the scored
runs (``metrics.json``) and from :func:`medr2.scoring.metrics.compare_runs`; nothing is adjusted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medr2 import jsonsafe
from medr2.reporting.fmt import fmt_value_n


@dataclass(frozen=True)
class SummaryColumn:
    header: str
    mode: str
    path: tuple[str, ...]


ACCURACY_COLUMNS: tuple[SummaryColumn, ...] = (
    SummaryColumn("Overall", "independent", ("overall",)),
    SummaryColumn("S1 acquisition", "independent", ("stages", "1")),
    SummaryColumn("S2 anatomy", "independent", ("stages", "2")),
    SummaryColumn("S3 findings", "independent", ("stages", "3")),
    SummaryColumn("S4 diagnosis", "independent", ("stages", "4")),
    SummaryColumn("Unparsed", "independent", ("rates", "unparsed")),
    SummaryColumn("Truncated", "independent", ("rates", "truncated")),
)

ROBUSTNESS_COLUMNS: tuple[SummaryColumn, ...] = (
    SummaryColumn("MFR ↓", "independent", ("prompt_reliance", "MFR")),
    SummaryColumn("MisleadDrop ↓", "independent", ("prompt_reliance", "MisleadDrop")),
    SummaryColumn("PRI ↓", "independent", ("prompt_reliance", "PRI")),
    SummaryColumn("VRS ↑", "independent", ("visual_reliance", "VRS")),
    # no arrow: a raw image sensitivity is not better higher (random's is high); it reads only against FlipRate
    SummaryColumn("IS", "independent", ("visual_reliance", "IS")),
    SummaryColumn("FlipRate ↓", "independent", ("consistency", "FlipRate")),
    SummaryColumn("Worst-case acc ↑", "independent", ("consistency", "WorstCaseAcc")),
    SummaryColumn("BlindGap ↑", "independent", ("visual_reliance", "BlindGap")),
    SummaryColumn("chain-own overall", "chain-own", ("overall",)),
    SummaryColumn("ChainAcc≤last", "chain-own", ("chain", "ChainAcc<=s", "LAST")),
)

LEGEND = """\
- **Overall / S1–S4**: clean accuracy on the test split in `independent` mode (yes/no items scored as
  pairs; stage = macro over its tasks, overall = macro over stages). **Unparsed**: share of answers no
  rule could read (counted wrong). **Truncated**: share of answers cut off by the token limit (counted
  wrong; raise `--max-new-tokens`).
- **MFR** (misleading-following rate): share of T3/T4/T8 answers equal to the lure. **MisleadDrop**:
  clean accuracy − accuracy under a misleading premise (T3), on the same items. **PRI** (prompt-reliance
  index): accuracy with the earlier facts stated correctly (T2) − accuracy under a misleading premise (T3), on
  the same parents: how far the answer follows the prompt rather than the image.
- **VRS**: accuracy on the real image − rate of still giving that answer with another case's image (V2).
  **IS**: share of read answers that change under V2. **BlindGap**: clean accuracy − accuracy with the
  image removed (`blind` mode).
- **FlipRate**: share of read answers that change under answer-preserving variants (T6 option
  permutation). **Worst-case acc**: right on the clean item and on every such variant of it.
- **chain-own overall**: clean accuracy when each chain is one dialogue with the model's own earlier
  answers in context. **ChainAcc≤last**: every step of the chain right, up to its last stage.
- Intervals: 95% bootstrap over patients (cases of one patient or one source image resampled together; over
  cases where no two share one: `metrics.json`'s `bootstrap.unit`). `n/a`: undefined (e.g. no answer could be
  read, so no change can be measured)."""


def _lookup(metrics: Mapping[str, Any], col: SummaryColumn) -> Any:
    node: Any = (metrics.get("modes") or {}).get(col.mode)
    for key in col.path:
        if not isinstance(node, dict):
            return None
        if key == "LAST":
            stages = sorted((k for k in node if k.isdigit()), key=int)
            key = stages[-1] if stages else ""
        node = node.get(key)
    return node


def _table(columns: Sequence[SummaryColumn], metrics: Mapping[str, Mapping[str, Any]],
           roles: Mapping[str, str]) -> list[str]:
    lines = ["| Model | What | " + " | ".join(c.header for c in columns) + " |",
             "|---|---|" + "---:|" * len(columns)]
    for name, m in metrics.items():
        cells = [fmt_value_n(_lookup(m, c)) for c in columns]
        lines.append(f"| {name} | {roles.get(name, '')} | " + " | ".join(cells) + " |")
    return lines


def _delta_cell(d: Any) -> str:
    return fmt_value_n(d) if isinstance(d, dict) else "n/a"


def change_table(runs: Mapping[str, Path], references: Sequence[str], after: Sequence[str], *, seed: int,
                 resamples: int, keep: dict[tuple[str, str], Any] | None = None) -> list[str]:
    """Paired change (model − reference) of clean accuracy, overall and per stage, with the cluster-aware
    test over cases (item-level McNemar ignores that items of one case are correlated) and, beside it,
    the item-level exact McNemar p. ``keep`` (if given) receives each comparison by (model, reference)."""
    from medr2.scoring.metrics import compare_runs
    from medr2.scoring.scorer import load_table, run_clusters

    tables = {name: load_table(runs[name]) for name in (*references, *after)}
    clusters = run_clusters(runs[references[0]]) if references else None  # one bench: its patients
    lines = ["| Model | − Reference | Mode | Overall Δ | S1 Δ | S2 Δ | S3 Δ | S4 Δ | p (cases, cluster test) "
             "| McNemar p (items) |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name in after:
        for ref in references:
            cmp = compare_runs(tables[name], tables[ref], seed=seed, n_resamples=resamples, clusters=clusters)
            if keep is not None:
                keep[(name, ref)] = cmp
            for mode in ("independent", "chain-own"):
                t = cmp["modes"].get(mode)
                if t is None:
                    continue
                stages = [_delta_cell(t["stages"].get(s)) for s in ("1", "2", "3", "4")]
                lines.append(f"| {name} | {ref} | {mode} | {_delta_cell(t['overall'])} | " + " | ".join(stages)
                             + f" | {_p_cell(t.get('cluster_test'))} | {_p_cell(t.get('mcnemar'))} |")
    return lines


STAGE_NAMES = {"1": "S1 acquisition", "2": "S2 anatomy", "3": "S3 findings", "4": "S4 diagnosis"}


def _interval(d: Mapping[str, Any]) -> str:
    return f"{d['value']:+.2f} [{d['lo']:+.2f}, {d['hi']:+.2f}]"


def _excludes_zero(d: Any) -> int:
    """+1 / −1 when the 95% interval lies above / below 0, else 0 (also when undefined)."""
    if not isinstance(d, dict) or any(not isinstance(d.get(k), int | float) for k in ("value", "lo", "hi")):
        return 0
    return 1 if d["lo"] > 0 else -1 if d["hi"] < 0 else 0


def change_sentence(name: str, ref: str, cmp: Mapping[str, Any], mode: str = "independent") -> str:
    """One sentence from a :func:`compare_runs` result: where ``name`` is above or below ``ref`` on clean
    accuracy (overall and per stage) with a 95% paired bootstrap interval (over patients) that excludes 0, and
    where not."""
    t = (cmp.get("modes") or {}).get(mode)
    if not t:
        return f"- **{name}** vs {ref}: no {mode} items both runs answered."
    parts = [("overall", t.get("overall"))] + [(STAGE_NAMES.get(k, f"S{k}"), t["stages"].get(k))
                                               for k in sorted(t.get("stages") or {})]
    above = [f"{lab} {_interval(d)}" for lab, d in parts if _excludes_zero(d) > 0]
    below = [f"{lab} {_interval(d)}" for lab, d in parts if _excludes_zero(d) < 0]
    neither = [lab for lab, d in parts if _excludes_zero(d) == 0]
    out = []
    if above:
        out.append(f"above it on {', '.join(above)}")
    if below:
        out.append(f"below it on {', '.join(below)}")
    if neither:
        out.append(f"no difference shown on {', '.join(neither)} (interval includes 0)")
    return f"- **{name}** vs {ref} (clean accuracy, paired over the same items): " + "; ".join(out) + "."


def image_sentence(name: str, metrics: Mapping[str, Any]) -> str:
    """Whether ``name``'s answers depend on the image, from VRS, IS and BlindGap and their intervals."""
    ind = (metrics.get("modes") or {}).get("independent") or {}
    vr = ind.get("visual_reliance") or {}
    shown = []
    for key in ("VRS", "IS", "BlindGap"):
        d = vr.get(key)
        if isinstance(d, dict) and isinstance(d.get("value"), int | float) and d.get("lo") is not None:
            shown.append((key, d))
    if not shown:
        return f"- **{name}**: no visual-reliance metric could be computed."
    text = ", ".join(f"{k} {d['value']:.2f} [{d['lo']:.2f}, {d['hi']:.2f}]" for k, d in shown)
    swap = [k for k, d in shown if k != "BlindGap" and _excludes_zero(d) > 0]
    blind = any(k == "BlindGap" and _excludes_zero(d) > 0 for k, d in shown)
    if "VRS" in swap:  # the real image's answers are right more often than another's: it reads the image
        verdict = f"the answers depend on which image is shown ({', '.join(swap)} above 0)"
    elif swap:  # IS alone: the answers change with the image, but are not right more often with the real one
        verdict = ("the answers change with the image (IS above 0), but are not right more often with the real "
                   "image than with another case's (VRS not above 0)")
    elif blind:  # removing the image costs accuracy, but any image will do
        verdict = ("removing the image costs accuracy (BlindGap above 0), but another case's image does not change "
                   "the answers (VRS and IS intervals include 0): no evidence that it reads what the image shows")
    else:
        verdict = "no evidence that the answers depend on the image (every interval includes 0 or lies below it)"
    return f"- **{name}** reads the image? {text}: {verdict}."


def findings(metrics: Mapping[str, Mapping[str, Any]], compared: Mapping[tuple[str, str], Any],
             after: Sequence[str]) -> list[str]:
    """"What this run shows": sentences computed from this run's numbers (nothing written by hand)."""
    lines = []
    for (name, ref), cmp in compared.items():
        lines.append(change_sentence(name, ref, cmp))
    lines += [image_sentence(name, metrics[name]) for name in after if name in metrics]
    return lines


def _better(header: str) -> int:
    """+1 if a higher value is better for the column (↑), −1 if lower is (↓), 0 where neither is (no arrow)."""
    return -1 if "↓" in header else 1 if "↑" in header else 0


def significance_word(delta: float, header: str) -> str:
    """The table's word for a significant difference: better or worse where the column has a direction (↑/↓),
    higher or lower where it has none (IS, chain-own overall: neither way is better)."""
    way = _better(header)
    if not way:
        return "yes: higher" if delta > 0 else "yes: lower"
    return "yes: better" if delta * way > 0 else "yes: worse"


STRATEGY_COLUMNS: tuple[SummaryColumn, ...] = (
    SummaryColumn("Clean accuracy ↑", "independent", ("overall",)), *ROBUSTNESS_COLUMNS)


def strategy_verdict(name: str, reference: str, cmp: Mapping[str, Mapping[str, Any]]) -> str:
    """One sentence from the comparison (:func:`medr2.scoring.paired.compare_metrics`, keyed by column header):
    which metrics are significantly better or worse, and that nothing else is."""
    from medr2.scoring.paired import significant

    better: list[str] = []
    worse: list[str] = []
    compared = 0
    for col in STRATEGY_COLUMNS:
        e = cmp.get(col.header)
        if not e or e.get("missing") or not _better(col.header):  # no direction: neither better nor worse
            continue
        compared += 1
        d = (e.get("delta") or {}).get("value")
        if significant(e) and d is not None:
            (better if d * _better(col.header) > 0 else worse).append(f"{col.header.rstrip(' ↑↓')} ({d:+.2f})")
    if not compared:
        return f"- **{name}** vs {reference}: no metric both runs have could be compared."
    if not better and not worse:
        return f"- **{name}** vs {reference}: no significant difference on any of the {compared} metrics compared."
    parts = ([f"significantly better on {', '.join(better)}"] if better else []) + (
        [f"significantly worse on {', '.join(worse)}"] if worse else [])
    rest = compared - len(better) - len(worse)
    return (f"- **{name}** vs {reference}: {'; '.join(parts)}; no significant difference on the other {rest} "
            f"metric{'s' if rest != 1 else ''}.")


def strategy_table(runs: Mapping[str, Path], reference: str, others: Sequence[str], *, seed: int,
                   resamples: int) -> list[str]:
    """Each of ``others`` − ``reference`` (e.g. every strategy − ``tiny-flat``) on clean accuracy and on each
    robustness metric both runs have, paired over the same items: 95% bootstrap interval (over patients) of the
    difference and the cluster-aware case-swap test (:mod:`medr2.scoring.paired`); then one sentence per
    model saying, from these numbers, what differs significantly (interval excludes 0 and p < 0.05)."""
    from medr2.scoring.paired import compare_metrics, significant
    from medr2.scoring.scorer import load_table, run_clusters

    wanted = {c.header: (c.mode, *c.path) for c in STRATEGY_COLUMNS}
    ref_rows = load_table(runs[reference])
    lines = [f"| Model | Metric | Model value | {reference} | Δ (model − {reference}) | p (cases, swap test) "
             "| Significant |", "|---|---|---:|---:|---:|---:|---|"]
    verdicts: list[str] = []
    for name in others:
        cmp = compare_metrics(load_table(runs[name]), ref_rows, wanted, seed=seed, n_resamples=resamples,
                              clusters=run_clusters(runs[reference]))
        for col in STRATEGY_COLUMNS:
            e = cmp.get(col.header) or {"missing": True}
            if e.get("missing"):
                continue
            word = "no" if not significant(e) else significance_word(e["delta"]["value"] or 0, col.header)
            lines.append(f"| {name} | {col.header} | {fmt_value_n(e['a'])} | {fmt_value_n(e['b'])} | "
                         f"{_delta_cell(e['delta'])} | {_p_cell(e['test'])} | {word} |")
        verdicts.append(strategy_verdict(name, reference, cmp))
    return [*lines, "", *verdicts]


def _p_cell(test: Any) -> str:
    p = test.get("p") if isinstance(test, dict) else None
    return f"{p:.2g}" if isinstance(p, int | float) else "n/a"


SPLIT_UNIT_NOTES = {
    "case": ("Splits by **case** (`split_unit=case`): the test images are other crops, windows, lesions and "
             "degradations of backgrounds that also occur in training, so the test split measures whether a model "
             "reads lesions and image attributes, not generalisation to new patients."),
    "patient": ("Splits by **patient** (`split_unit=patient`): no patient or source image is in two splits."),
}


def _bench_line(metrics: Mapping[str, Any], demo: Mapping[str, Any] | None) -> str:
    run = metrics.get("run") or {}
    bench = run.get("bench") or {}
    ind = (metrics.get("modes") or {}).get("independent") or {}
    overall = ind.get("overall") or {}
    cfg = (demo or {}).get("config") or {}
    unit = cfg.get("split_unit", "patient")
    return (f"Bench `{bench.get('name')}` (checksum `{str(bench.get('checksum'))[:12]}`): {cfg.get('cases', '?')} "
            f"sample cases (real images with synthetic lesions), seed {cfg.get('seed', '?')}; scored on the "
            f"`{cfg.get('split', 'test')}` split: {overall.get('n_cases', '?')} cases, variants "
            f"{', '.join(cfg.get('eval_variants', []))} in `independent` mode, clean items in "
            f"{', '.join(f'`{m}`' for m in cfg.get('clean_modes', []))}. {SPLIT_UNIT_NOTES.get(unit, '')}"
            + CHOICE_NOTES.get(cfg.get("choice", "generate"), ""))


CHOICE_NOTES = {
    "loglik": " The tiny VLMs answer multiple-choice and yes/no questions by likelihood: the offered answer they "
              "find most likely, written as their fine-tuning wrote answers (`hf:` with `choice=loglik`, the "
              "log-likelihood of every option kept with each answer); boxes and free text are generated. The "
              "baselines answer as always.",
}


def write_summary(path: Path, runs: Mapping[str, Path], *, roles: Mapping[str, str], before: str,
                  after: Sequence[str], also_against: Sequence[str] = ("prior",), seed: int = 0,
                  resamples: int = 1000, flat: str = "tiny-flat") -> str:
    """Write ``summary.md`` for the scored ``runs`` (name → run folder); returns its text. Each ``after``
    model is compared with ``before`` and with each run in ``also_against`` (e.g. the text-only prior), and
    every other ``after`` model with ``flat`` on clean accuracy and every robustness metric."""
    metrics = {name: jsonsafe.load_object(Path(d) / "metrics.json") for name, d in runs.items()}
    demo_file = path.parent / "demo.json"
    demo = jsonsafe.load_object(demo_file) if demo_file.is_file() else None
    first = next(iter(metrics.values()))
    out = ["# medr2 demo: summary", "", _bench_line(first, demo), "",
           "## Clean accuracy (test split, `independent`)", "",
           *_table(ACCURACY_COLUMNS, metrics, roles), "",
           "## Robustness", "", *_table(ROBUSTNESS_COLUMNS, metrics, roles), "",
           "Each value: 95% interval, then (n units, cases). † fewer than 10 cases: the interval is unreliable.", ""]
    compared: dict[tuple[str, str], Any] = {}
    if before in runs and after and all(a in runs for a in after):
        refs = [before, *(r for r in also_against if r in runs)]
        out += ["## Change after fine-tuning (paired over the same items, 95% paired bootstrap over patients)", "",
                *change_table(runs, refs, after, seed=seed, resamples=resamples, keep=compared), ""]
        out += ["## What this run shows", "",
                "Sentences computed from the numbers above: a difference is called above/below only where its "
                "95% paired bootstrap interval excludes 0 (no correction for the number of comparisons).",
                "", *findings(metrics, compared, after), ""]
    if flat in runs and (others := [a for a in after if a != flat and a in runs]):
        out += [f"## Each strategy vs {flat} (same base, same budget; paired over the same items)", "",
                *strategy_table(runs, flat, others, seed=seed, resamples=resamples), "",
                "Δ: 95% paired bootstrap over patients; p: cluster-aware case-swap randomisation test (the two "
                "models' results exchanged at random patient by patient, the unit the interval resamples). "
                "Significant: the interval excludes 0 and p < 0.05 (no correction for the number of metrics "
                "compared).", ""]
    out += ["## Legend", "", LEGEND, "",
            "The values are as measured on this run; the report (`report/index.html`) has every metric, "
            "per task and per variant, and each answer.", ""]
    text = "\n".join(out)
    _atomic_text(path, text)
    return text


def append_timings(path: Path, stages: Sequence[Mapping[str, Any]], machine: Mapping[str, Any], threads: int,
                   total_s: float, *, lanes: int = 1, total_is_sum: bool = False) -> None:
    """Add the time of each demo stage (and the machine) to ``summary.md``. ``total_s``: the run's wall time,
    or (``total_is_sum``, a resume) the sum of the stages' wall times; ``lanes``: processes that ran stages
    side by side (each stage's lane is shown then)."""
    lane_col = lanes > 1
    lines = ["## Time per stage", "", "| Stage |" + (" Lane |" if lane_col else "") + " Wall s | CPU s |",
             "|---|" + ("---:|" if lane_col else "") + "---:|---:|"]
    lines += [f"| {s['stage']}{' (reused on resume)' if s.get('reused') else ''} |"
              + (f" {s.get('lane', 1)} |" if lane_col else "")
              + f" {s['seconds']:.1f} | {s.get('cpu_s', 0.0):.1f} |" for s in stages]
    cpu = sum(float(s.get("cpu_s", 0.0)) for s in stages)
    what = "sum of the stages" if total_is_sum else "wall"
    lines += [f"| **total ({what})** |" + (" |" if lane_col else "") + f" **{total_s:.1f}** | **{cpu:.1f}** |", "",
              "CPU s: user + system time of the demo and its worker processes during the stage (on a busy "
              "machine wall time grows while CPU time stays close to what the work needs). A stage reused on "
              "resume shows the time of the run that did its work.", ""]
    if lane_col:
        lines += [f"{lanes} lanes: the fine-tunings and the evaluations of the tiny VLM ran in {lanes} processes side "
                  "by side (the Lane column), so the demo's wall time is less than the sum of its stages'"
                  + (" (the total above is that sum)" if total_is_sum else "") + ".", ""]
    lines += [f"Machine: {machine.get('cpus', '?')} CPUs ({machine.get('platform', '?')}), Python "
              f"{machine.get('python', '?')}, torch {machine.get('torch', '?')}, {threads} torch threads"
              + (" per lane" if lane_col else "") + ".", ""]
    _atomic_text(path, path.read_text("utf-8") + "\n" + "\n".join(lines))


def _atomic_text(path: Path, text: str) -> None:
    tmp = path.parent / f".{path.name}.tmp"
    tmp.write_text(text, "utf-8")
    tmp.replace(path)
