"""The report plots are readable: one series per run in its own colour (at most 8 per figure, colour-blind
safe), legends outside the data, stage labels that do not overlap, a heatmap without empty rows and with
every evaluated variant as a column. Checked on matplotlib's own layout (``Plot.layout``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medr2 import Plot, PlotContext
from medr2.reporting.inputs import RunData
from medr2.reporting.plots import PALETTE, make_plots


def _m(v: float, n: int = 12, cases: int = 12) -> dict[str, Any]:
    return {"value": v, "lo": max(-1.0, v - 0.1), "hi": min(1.0, v + 0.1), "n": n, "n_cases": cases,
            "low_n": cases < 10}


def _run(k: int, modes: tuple[str, ...]) -> RunData:
    out: dict[str, Any] = {}
    for j, mode in enumerate(modes):
        x = 0.1 + 0.07 * k + 0.02 * j
        mm: dict[str, Any] = {"overall": _m(x), "stages": {str(s): _m(x + 0.05 * s) for s in (1, 2, 3, 4)},
                              "prompt_reliance": {"MisleadDrop": _m(x - 0.3), "MFR": _m(x)},
                              "visual_reliance": {"VRS": _m(x - 0.2), "IS": _m(x)},
                              "consistency": {"FlipRate": _m(0.3)}}
        if mode == "independent":  # only one mode ran variants: the others must not leave empty heatmap rows
            mm["variants"] = {"T3": {"delta": _m(-x)}, "V1": {"acc": _m(x)}, "V2": {"delta": _m(-0.2)}}
        if mode == "chain-own":
            mm["chain"] = {"ChainAcc<=s": {str(s): _m(x / s) for s in (1, 2, 3, 4)}}
        out[mode] = mm
    return RunData(run_dir=Path(f"/nonexistent/run{k}"), label=f"model-{k}", model_key=f"baseline:m{k}",
                   manifest={}, metrics={"modes": out}, scores=[])


def _overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def check_readable(plot: Plot) -> None:
    """No two series of an axes share a colour; no legend overlaps an axes (so no bar or line); no two x tick
    labels of an axes overlap."""
    lay = plot.layout
    for ax in lay["axes"]:
        colours = list(ax["series"].values())
        assert len(colours) == len(set(colours)), (plot.name, ax["series"])
        assert len(colours) <= len(PALETTE)
        for legend in lay["legends"]:
            assert not _overlap(legend, ax["box"]), (plot.name, legend, ax["box"])
            assert not any(_overlap(legend, bar) for bar in ax["bars"])
        ticks = ax["ticks"]
        for i in range(len(ticks)):
            for j in range(i + 1, len(ticks)):
                assert not _overlap(ticks[i], ticks[j]), (plot.name, ticks[i], ticks[j])
        check_n_labels(plot.name, ax, lay["legends"])


def check_n_labels(name: str, ax: dict[str, Any], legends: list[list[float]]) -> None:
    """The n label of each bar: one per bar, inside the axes, over no bar, tick label, legend or other label."""
    labels = ax.get("nlabels", [])
    assert len(labels) == len(ax["bars"]), (name, len(labels), len(ax["bars"]))
    x0, y0, x1, y1 = ax["box"]
    for i, lab in enumerate(labels):
        assert x0 - 0.5 <= lab[0] and lab[2] <= x1 + 0.5 and y0 - 0.5 <= lab[1] and lab[3] <= y1 + 0.5, (name, lab)
        assert not any(_overlap(lab, bar) for bar in ax["bars"]), (name, lab)
        assert not any(_overlap(lab, t) for t in ax["ticks"] + legends), (name, lab)
        assert not any(_overlap(lab, other) for other in labels[i + 1:]), (name, lab)


def test_many_runs_and_modes_readable() -> None:
    runs = [_run(k, ("independent", "blind", "chain-own")) for k in range(10)]
    plots = {p.name: p for p in make_plots(PlotContext(runs, {}))}
    # 10 runs -> two figures of at most 8 runs each, never a colour reused inside one
    assert {"stage_curves_1", "stage_curves_2", "prompt_reliance_1", "visual_reliance_2"} <= set(plots)
    for p in plots.values():
        check_readable(p)
    first = plots["stage_curves_1"].layout["axes"]
    # modes as panels: independent, blind, chain-own accuracy, chain-own ChainAcc; 8 runs in each
    assert len(first) == 4 and all(len(ax["series"]) == 8 for ax in first)
    assert len(plots["stage_curves_2"].layout["axes"][0]["series"]) == 2
    bars = plots["visual_reliance_1"].layout["axes"]
    # one panel per measure and mode (VRS, IS x 3 modes), 8 runs in each (issue 50: each measure its own scale)
    assert len(bars) == 6 and set(bars[0]["series"]) == {f"model-{k}" for k in range(8)}
    assert all(len(set(ax["bar_metrics"])) == 1 for ax in bars)
    # every bar carries its n (items · cases): 8 runs in each panel
    assert all(ax["ntexts"] == ["n=12·12c"] * 8 for ax in bars), bars[0]["ntexts"]


def test_bar_n_labels_mark_few_cases() -> None:
    runs = [_run(k, ("independent",)) for k in range(2)]
    node = runs[1].metrics["modes"]["independent"]["visual_reliance"]
    node["VRS"] = _m(-0.4, n=6, cases=3)  # a negative value from 3 cases: label under the bar, marked
    plots = {p.name: p for p in make_plots(PlotContext(runs, {}))}
    vis = plots["visual_reliance"]
    check_readable(vis)
    axes = vis.layout["axes"]
    assert sorted(t for ax in axes for t in ax["ntexts"]) == sorted(["n=12·12c", "n=12·12c", "n=12·12c", "n=6·3c†"])
    ax = next(a for a in axes if "n=6·3c†" in a["ntexts"])
    neg = ax["nlabels"][ax["ntexts"].index("n=6·3c†")]
    zero_y = max(b[1] for b in ax["bars"])  # the bars >= 0 start at the zero line
    assert neg[3] <= zero_y  # below the zero line, under its bar
    assert sum(h for a in axes for h in a["hatched"]) == 1  # the bar from 3 cases is hatched, no other
    assert any("fewer than 10 cases" in t for t in vis.layout["legend_texts"])
    assert "fewer than 10 cases" in vis.caption and "n=items·cases" in vis.caption


def test_heatmap_rows_and_columns() -> None:
    runs = [_run(k, ("independent", "blind")) for k in range(3)]
    heat = next(p for p in make_plots(PlotContext(runs, {})) if p.name == "robustness_heatmap")
    ax = heat.layout["axes"][0]
    assert ax["xlabels"] == ["T3", "V1", "V2"]  # V1 evaluated (its change undefined: shown n/a) is a column
    assert ax["ylabels"] == [f"model-{k} · independent" for k in range(3)]  # blind ran no variant: no empty row
    assert "robust model is near 0" in heat.caption


def test_is_drawn_with_its_noise_floor_and_captions_say_what_good_looks_like() -> None:
    runs = [_run(k, ("independent", "blind")) for k in range(3)]
    plots = {p.name: p for p in make_plots(PlotContext(runs, {}))}
    vis = plots["visual_reliance"]
    is_axes = [ax for ax in vis.layout["axes"] if "IS" in ax["bar_metrics"]]
    assert len(is_axes) == 2  # the IS panel of each mode
    for ax in is_axes:
        is_bars = [b for b, t in zip(ax["bars"], ax["bar_metrics"], strict=True) if t == "IS"]
        assert len(ax["floors"]) == len(is_bars) == 3  # one noise-floor tick on each run's IS bar
        for floor, bar in zip(sorted(ax["floors"], key=lambda f: f["box"][0]), sorted(is_bars), strict=True):
            assert floor["metric"] == "IS" and floor["value"] == 0.3  # the run's FlipRate
            assert bar[0] - 1 <= floor["box"][0] and floor["box"][2] <= bar[2] + 1  # across its own bar
    assert "IS noise floor (FlipRate)" in vis.layout["legend_texts"]
    assert "Only IS above its tick is image-driven" in vis.caption
    for p in plots.values():  # every caption says what a good model looks like
        assert "good model" in p.caption or "robust model" in p.caption, p.name



def test_each_visual_measure_has_its_own_scale() -> None:
    """A VRS of 0.02 beside an IS of 0.5 is a visible bar: its panel is scaled to it (issue 50)."""
    runs = [_run(k, ("independent",)) for k in range(2)]
    for r in runs:
        r.metrics["modes"]["independent"]["visual_reliance"] = {"VRS": _m(0.02), "IS": _m(0.5), "BlindGap": _m(0.0)}
    vis = next(p for p in make_plots(PlotContext(runs, {})) if p.name == "visual_reliance")
    check_readable(vis)
    by_metric = {ax["bar_metrics"][0]: ax for ax in vis.layout["axes"]}
    assert set(by_metric) == {"VRS", "IS", "BlindGap"}
    vrs = by_metric["VRS"]
    height = vrs["box"][3] - vrs["box"][1]
    assert all(bar[3] - bar[1] >= 0.05 * height for bar in vrs["bars"]), (vrs["bars"], height)


def test_attack_success_plot_has_a_bar_per_code_and_run() -> None:
    runs = [_run(k, ("independent",)) for k in range(2)]
    for k, r in enumerate(runs):
        r.metrics["modes"]["independent"]["attacks"] = {
            "ASR": _m(0.4 - 0.1 * k), "ASR_V10": _m(0.2), "ASR_T10": _m(0.1), "ASR_T9": _m(0.5),
            "by_variant": {"T9-guideline": _m(0.3)}}
    plots = {p.name: p for p in make_plots(PlotContext(runs, {}))}
    att = plots["attacks"]
    check_readable(att)
    ax = att.layout["axes"][0]
    assert ax["bar_metrics"] == ["ASR", "ASR_T9", "ASR_T10", "ASR_V10"] * 2  # codes in variant order, per run
    assert "attacks" not in {p.name for p in make_plots(PlotContext([_run(0, ("independent",))], {}))}


def test_degradation_curves_have_a_panel_per_kind_and_a_line_per_run() -> None:
    runs = [_run(k, ("independent",)) for k in range(2)]
    for k, r in enumerate(runs):
        r.metrics["modes"]["independent"]["degradation"] = {
            kind: {str(s): {"acc": _m(0.9 - 0.2 * s - 0.05 * k, n=10 * s), "delta": _m(-0.1 * s)} for s in (1, 2, 3)}
            for kind in ("V8-noise", "V11-mr_ghost", "V11-ct_lowdose")}
    plots = {p.name: p for p in make_plots(PlotContext(runs, {}))}
    deg = plots["degradation_curves"]
    check_readable(deg)
    axes = deg.layout["axes"]
    assert len(axes) == 3 and all(set(ax["series"]) == {r.label for r in runs} for ax in axes)
    assert [ax["xlabels"] for ax in axes][0] == ["1\nn=10", "2\nn=20", "3\nn=30"]
    assert "degradation_curves" not in {p.name for p in make_plots(PlotContext([_run(0, ("independent",))], {}))}


def test_look_alike_pair_plot_has_a_bar_per_code_and_run() -> None:
    runs = [_run(k, ("independent",)) for k in range(2)]
    for k, r in enumerate(runs):
        r.metrics["modes"]["independent"]["pairs"] = {
            "V12": {**_m(0.5 - 0.2 * k), "acc": _m(0.6), "parent_acc": _m(0.8), "chance": _m(0.1),
                    "confused": _m(0.3)}}
    plots = {p.name: p for p in make_plots(PlotContext(runs, {}))}
    pairs = plots["pairs"]
    check_readable(pairs)
    assert pairs.layout["axes"][0]["bar_metrics"] == ["V12", "V12"]  # one bar per run
    assert "pairs" not in {p.name for p in make_plots(PlotContext([_run(0, ("independent",))], {}))}
