"""Subgroup slices of a scored run (``medr2 score --slice FIELD[,FIELD...]``; docs/metrics.md, "Slices").

A *slice field* (registry :data:`SLICE_FIELDS`) reads one value per case (sex, age bin, source, modality,
view, body region, lesion size bin: from ``cases.parquet``) or per scored row (variant, stage, task: from the
tidy table); a *slicing* is one field or a combination (``sex,modality``). Every slice of every slicing gets,
per mode, accuracy, the robustness metrics that keep their pairs inside a slice, and the harm metrics
(:mod:`medr2.scoring.harm`), each from the same :class:`~medr2.scoring.stats.MetricBook` (so all share one set of
case-bootstrap resamples) with its 95% interval, ``n`` and ``n_cases``. A value a case does not carry is the
slice ``missing``, never dropped. A slice with fewer than ``min_cases`` cases is marked ``low_n`` and never
ranked. Per metric, the largest gap between two ranked slices is tested against 0 (Wald, case-bootstrap
standard error of the difference: paired where the slices share cases) with Holm's adjustment over every pair
of ranked slices of that metric.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medr2.bench.format import case_clusters
from medr2.bench.slicefields import MISSING, SLICE_FIELDS, bin_label, case_values, parse_bins
from medr2.errors import BadInput
from medr2.scoring.files import HARM_FILE, SLICES_FILE
from medr2.scoring.harm import HarmSpec, harm_units, register_attack_harm, register_harm
from medr2.scoring.metrics import METRIC_GROUPS, Ctx, Ref, accuracy_units, attack_pairs
from medr2.scoring.scorer import _run_manifest, load_table
from medr2.scoring.stats import DEFAULT_RESAMPLES, MetricBook, bootstrap_z_test, holm, seed_for

# a slice from fewer cases than this is marked low_n and never ranked (docs/metrics.md, "Slices")
SLICE_MIN_CASES = 20
ALPHA = 0.05
# the metric groups run per slice besides accuracy and harm: their pairs (variant and parent, twins) stay inside a
# case, so inside any case-level slice
ROBUSTNESS_GROUPS = ("prompt_reliance", "visual_reliance", "consistency", "attacks", "pairs")


# -- parsing the options ---------------------------------------------------------------------------

def parse_slicings(specs: str | Sequence[str] | None) -> list[tuple[str, ...]]:
    """``["sex", "sex,modality"]`` -> ``[("sex",), ("sex", "modality")]``; unknown fields are BadInput."""
    if specs is None:
        return []
    out: list[tuple[str, ...]] = []
    for spec in [specs] if isinstance(specs, str) else list(specs):
        names = tuple(n.strip() for n in str(spec).split(",") if n.strip())
        if not names:
            raise BadInput("empty slice (give FIELD[,FIELD...])", field="--slice")
        for n in names:
            if n not in SLICE_FIELDS:
                raise BadInput(f"unknown slice field {n!r} (known: {', '.join(SLICE_FIELDS.names())})",
                               field="--slice")
        if len(set(names)) != len(names):
            raise BadInput(f"a field is repeated in {spec!r}", field="--slice")
        if names not in out:
            out.append(names)
    return out


# -- values ----------------------------------------------------------------------------------------

def _slice_labels(rows: pd.DataFrame, cases: pd.DataFrame, slicing: tuple[str, ...]) -> pd.DataFrame:
    cols = {}
    for name in slicing:
        f = SLICE_FIELDS[name]
        if f.level == "case":
            cols[name] = cases[name].reindex(rows["case_id"].astype(str)).fillna(MISSING).to_numpy(dtype=object)
        else:
            cols[name] = f.read(rows).fillna(MISSING).to_numpy(dtype=object)
    return pd.DataFrame(cols, index=rows.index)


# -- metrics ---------------------------------------------------------------------------------------

def _slice_refs(book: MetricBook, rows: pd.DataFrame, all_rows: pd.DataFrame, mode: str, slicing: tuple[str, ...],
                harm: HarmSpec) -> dict[str, int]:
    """Register one slice's metrics; name -> metric id."""
    from medr2.records import REPORT_TASKS

    probe = rows["probe"].to_numpy(dtype=bool)
    keep = ~probe & ~rows["task"].isin(REPORT_TASKS).to_numpy(dtype=bool)
    if "variant" not in slicing:  # accuracy is the clean items' (a variant slice: that variant's items)
        keep &= (rows["variant"] == "clean").to_numpy(dtype=bool)
    out: dict[str, int] = {}
    units = accuracy_units(rows[keep])
    if len(units):
        out["accuracy"] = book.ratio_metric(book.case_index(units["case_id"]), units["correct"].to_numpy(float))
    # pairs join a variant to its clean parent: both in a case, so in a case slice (none without variants)
    if "variant" not in slicing and bool((rows["variant"] != "clean").any()):
        ctx = Ctx(book=book, rows=rows, mode=mode, all_rows=all_rows)
        for group in ROBUSTNESS_GROUPS:
            fn = METRIC_GROUPS.get(group)
            got = fn(ctx) if fn is not None else None
            for name, ref in (got or {}).items():
                if isinstance(ref, Ref):
                    out[f"{group}.{name}"] = ref.index
        out.update(register_attack_harm(book, attack_pairs(ctx), harm))
    out.update(register_harm(book, harm_units(rows), harm))
    return out


def _whole_harm(book: MetricBook, rows: pd.DataFrame, all_rows: pd.DataFrame, mode: str,
                harm: HarmSpec) -> dict[str, int]:
    """A mode's harm metrics over all its rows: the clean items' (:func:`register_harm`) and the harm-weighted
    attack success rates of its attack pairs (:func:`register_attack_harm`)."""
    out = register_harm(book, harm_units(rows), harm)
    if bool((rows["variant"] != "clean").any()):
        out.update(register_attack_harm(book, attack_pairs(Ctx(book=book, rows=rows, mode=mode, all_rows=all_rows)),
                                        harm))
    return out


def _label(key: Mapping[str, str]) -> str:
    return " · ".join(key.values())


def _sort_key(field_bins: Mapping[str, Sequence[float]], key: Mapping[str, str]) -> tuple[Any, ...]:
    out: list[Any] = []
    for name, v in key.items():
        if v == MISSING:
            out.append((2, 0, ""))
        elif name in field_bins:
            edges = field_bins[name]
            labels = [bin_label(e - 1e-9 if i == 0 else e, edges, SLICE_FIELDS[name].unit)
                      for i, e in enumerate([edges[0], *edges])]
            out.append((0, labels.index(v) if v in labels else len(labels), v))
        else:
            out.append((0, 0, v))
    return tuple(out)


def _gap(metric: str, entries: list[tuple[str, dict[str, Any], np.ndarray]]) -> dict[str, Any] | None:
    """The largest gap of ``metric`` between ranked slices (label, result, draws), tested with Holm over all pairs."""
    if len(entries) < 2:
        return None
    pairs = []
    for i in range(len(entries)):
        for j in range(i + 1, len(entries)):
            (la, ra, da), (lb, rb, db) = entries[i], entries[j]
            hi, lo = ((la, ra, da), (lb, rb, db)) if ra["value"] >= rb["value"] else ((lb, rb, db), (la, ra, da))
            delta = float(hi[1]["value"] - lo[1]["value"])
            draws = hi[2] - lo[2]
            pairs.append((delta, hi[0], lo[0], draws, bootstrap_z_test(delta, draws)))
    ps = [1.0 if t["p"] is None else t["p"] for *_, t in pairs]
    adj = holm(ps)
    best = max(range(len(pairs)), key=lambda k: (pairs[k][0], -k))
    delta, high, low, draws, test = pairs[best]
    finite = draws[np.isfinite(draws)]
    lo_ci, hi_ci = (float(v) for v in np.quantile(finite, [0.025, 0.975])) if finite.size else (None, None)
    tested = test["p"] is not None  # not without resamples (--resamples 0): then nothing is called significant
    n_sig = sum(a < ALPHA for a, pair in zip(adj, pairs, strict=True) if pair[4]["p"] is not None)
    return {"metric": metric, "high": high, "low": low, "delta": delta, "lo": lo_ci, "hi": hi_ci,
            "p": test["p"], "p_holm": adj[best] if tested else None, "se": test["se"],
            "method": f"{test['method']}, Holm over {len(pairs)} pair{'s' if len(pairs) != 1 else ''}",
            "significant": tested and adj[best] < ALPHA,
            "n_significant_pairs": int(n_sig),
            "pairs_tested": len(pairs)}


def slice_metrics(rows: pd.DataFrame, cases: pd.DataFrame, slicings: Sequence[tuple[str, ...]], *,
                  harm: HarmSpec | None = None, bins: Mapping[str, Sequence[float]] | None = None, seed: int = 0,
                  n_resamples: int = DEFAULT_RESAMPLES, min_cases: int = SLICE_MIN_CASES,
                  clusters: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Per mode, the whole run's harm metrics (``all``) and every slicing's slices with their metrics and gaps.
    ``rows``: the tidy table (:func:`medr2.scoring.scorer.load_table`), with a ``confidence`` column where answers
    carry one; ``cases``: :func:`case_values`; ``clusters``: the bench's patient groups (the bootstrap's unit, as
    in ``metrics.json``)."""
    harm = harm or HarmSpec()
    bins = dict(bins or parse_bins(None))
    book = MetricBook(rows["case_id"].astype(str).unique().tolist(), clusters)
    plan: list[tuple[str, tuple[str, ...], dict[str, str], int, dict[str, int]]] = []
    whole: dict[str, dict[str, int]] = {}
    for mode in sorted(rows["mode"].astype(str).unique()):
        mrows = rows[(rows["mode"] == mode).to_numpy(dtype=bool)]
        whole[mode] = _whole_harm(book, mrows, rows, mode, harm)
        for slicing in slicings:
            labels = _slice_labels(mrows, cases, slicing)
            all_labels = _slice_labels(rows, cases, slicing)
            by: str | list[str] = slicing[0] if len(slicing) == 1 else list(slicing)
            for key_vals, idx in labels.groupby(by, sort=True).groups.items():
                vals = key_vals if isinstance(key_vals, tuple) else (key_vals,)
                key = {n: str(v) for n, v in zip(slicing, vals, strict=True)}
                sub = mrows.loc[idx]
                in_slice = np.logical_and.reduce([all_labels[n].to_numpy() == key[n] for n in slicing])
                refs = _slice_refs(book, sub, rows[in_slice], mode, slicing, harm)
                plan.append((mode, slicing, key, int(sub["case_id"].nunique()), refs))
    keep = sorted({i for *_, refs in plan for i in refs.values()} | {i for r in whole.values() for i in r.values()})
    results, draws = book.evaluate_draws(n_resamples, seed_for(seed, "slices"), keep=keep)
    modes: dict[str, Any] = {m: {"all": {"harm": {k: results[i] for k, i in r.items()}}, "slicings": {}}
                             for m, r in whole.items()}
    for mode in modes:
        for slicing in slicings:
            name = ",".join(slicing)
            entries = sorted([p for p in plan if p[0] == mode and p[1] == slicing],
                             key=lambda p: _sort_key(bins, p[2]))
            slices = []
            ranked: dict[str, list[tuple[str, dict[str, Any], np.ndarray]]] = {}
            for _, _, key, n_cases, refs in entries:
                low = n_cases < min_cases
                metrics = {k: results[i] for k, i in refs.items()}
                slices.append({"key": key, "label": _label(key), "n_cases": n_cases, "low_n": low,
                               "metrics": metrics})
                for k, i in refs.items():
                    r = results[i]
                    if not low and r["value"] is not None and r["n_cases"] >= min_cases:
                        ranked.setdefault(k, []).append((_label(key), r, draws[i]))
            gaps = {k: g for k, v in sorted(ranked.items()) if (g := _gap(k, v)) is not None}
            modes[mode]["slicings"][name] = {"fields": list(slicing), "slices": slices, "gaps": gaps}
    return {"modes": modes}


def missing_notes(cases: pd.DataFrame, slicings: Sequence[tuple[str, ...]]) -> dict[str, str]:
    """A note per case-level field of the slicings that some cases lack (e.g. a dataset without demographics)."""
    out = {}
    for name in sorted({n for s in slicings for n in s}):
        if SLICE_FIELDS[name].level != "case" or name not in cases.columns:
            continue
        missing = int((cases[name] == MISSING).sum())
        if missing:
            out[name] = (f"{missing} of {len(cases)} cases do not carry {name} ({SLICE_FIELDS[name].doc}); "
                         f"they are the slice '{MISSING}'")
    return out


def analyse_run(run_dir: Path | str, slicings: Sequence[tuple[str, ...]], *, harm: HarmSpec,
                bins: Mapping[str, Sequence[float]] | None = None, seed: int = 0,
                n_resamples: int = DEFAULT_RESAMPLES, min_cases: int = SLICE_MIN_CASES) -> dict[str, Any]:
    """Slices and harm of a scored run: writes ``RUN/harm.json`` and, with slicings, ``RUN/slices.json``;
    returns ``{"harm": ..., "slices": ... or None}``."""
    from medr2.atomic import publish_files

    run_dir = Path(run_dir)
    bins = dict(bins or parse_bins(None))
    rows = load_table(run_dir)
    manifest, bench_path = _run_manifest(run_dir)
    rows = _with_confidences(run_dir, rows, manifest)
    fields = sorted({n for s in slicings for n in s})
    cases = case_values(Path(bench_path), fields, bins)
    got = slice_metrics(rows, cases, slicings, harm=harm, bins=bins, seed=seed, n_resamples=n_resamples,
                        min_cases=min_cases, clusters=case_clusters(Path(bench_path)))
    common = {"seed": seed, "resamples": n_resamples, "harm_spec": harm.record()}
    harm_doc = {**common, "modes": {m: v["all"]["harm"] for m, v in got["modes"].items()}}
    files: dict[str, bytes | Path] = {HARM_FILE: _dump(harm_doc)}
    slices_doc = None
    if slicings:
        slices_doc = {**common, "min_cases": min_cases, "alpha": ALPHA,
                      "bins": {k: list(v) for k, v in sorted(bins.items())},
                      "fields": {n: {"level": SLICE_FIELDS[n].level, "doc": SLICE_FIELDS[n].doc} for n in fields},
                      "missing": missing_notes(cases, slicings),
                      "modes": {m: v["slicings"] for m, v in got["modes"].items()}}
        files[SLICES_FILE] = _dump(slices_doc)
    publish_files(run_dir, files, command=f"medr2 score {run_dir} --slice")
    return {"harm": harm_doc, "slices": slices_doc}


def _with_confidences(run_dir: Path, rows: pd.DataFrame, manifest: Mapping[str, Any]) -> pd.DataFrame:
    """The tidy rows with each answer's confidence (NaN: none) where the run stored or asked for confidences (the
    silent-failure rate then counts only confident wrong answers), read as ``calibration.json`` reads them."""
    from medr2.run.manifest import eval_option
    from medr2.run.store import Store
    from medr2.scoring.confread import run_confidences

    with Store.open(run_dir) as store:
        stored = store.has_confidences()
    if not (stored or eval_option(dict(manifest), "confidence") == "verbal"):
        return rows
    conf, _, _ = run_confidences(run_dir, rows, manifest)
    return rows.assign(confidence=conf)


def _dump(doc: Any) -> bytes:
    return (json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
