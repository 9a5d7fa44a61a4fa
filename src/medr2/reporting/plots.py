"""Report plots (matplotlib Agg, PNG): stage degradation curves, model x variant robustness heatmap,
prompt- and visual-reliance bars, confusion matrices. Each plot kind is a registered function (``PLOTS``;
adding one: ``docs/extending.md``)."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from medr2.records import STAGES, UNREAD_OUTCOMES, Item
from medr2.registry import Registry
from medr2.reporting.fmt import is_low_n, metric_parts
from medr2.reporting.inputs import RunData, Scores, score_batches
from medr2.variant_id import VariantId

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
PREFERRED_MODE = "independent"
WIDE_VARIANTS = 12  # a heatmap with more variant columns than this spans the page
PROMPT_KEYS = ("PromptGain", "MisleadDrop", "PRI", "MFR", "Sycophancy")
VISUAL_KEYS = ("VRS", "BlankGap", "ModalityGap", "IS", "IS_V1", "IS_V3", "BlindGap")
# Okabe & Ito's colour-blind-safe palette: one colour per run, at most this many runs per figure
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
NOISE_COLOR = "#7f7f7f"  # the IS noise-floor tick (not a run)
STAGE_NAMES = " · ".join(f"S{s} {STAGES[s]}" for s in sorted(STAGES))


@dataclass(frozen=True)
class Plot:
    name: str  # file stem, e.g. "stage_curves"
    title: str
    caption: str
    png: bytes
    wide: bool = False  # shown across the whole page width
    # where matplotlib put things (display pixels, origin bottom left), for tests and the page:
    # {"axes": [{"box", "series": {label: colour}, "bars": [box], "hatched": [bool] (fewer than 10 cases),
    #            "bar_metrics": [str], "ticks": [box], "nlabels": [box] (the n on each bar), "ntexts",
    #            "floors": [{"metric", "value", "box"}] (the IS noise-floor ticks), "xlabels", "ylabels"}],
    #  "legends": [box], "legend_texts": [str]}
    layout: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class PlotContext:
    runs: list[RunData]
    # item_id -> item, over all benches of the runs: in ``medr2 report`` a
    # :class:`~medr2.reporting.items.BenchItems`, which reads the benches by columns (iterate or index it sparingly)
    items: Mapping[str, Item]


PlotFn = Callable[[PlotContext], list[Plot]]
PLOTS: Registry[PlotFn] = Registry("plot")


def register_plot(name: str) -> Callable[[PlotFn], PlotFn]:
    """Decorator: register ``fn(PlotContext) -> [Plot]``; every registered plot is drawn in the report."""
    return PLOTS.decorator(name)


def _figure(w: float, h: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(w, h), dpi=DPI, layout="constrained")


def _png(fig: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _box(bb: Any) -> list[float]:
    return [round(float(bb.x0), 1), round(float(bb.y0), 1), round(float(bb.x1), 1), round(float(bb.y1), 1)]


def _hex(color: Any) -> str:
    from matplotlib.colors import to_hex

    return to_hex(color, keep_alpha=False)


def figure_layout(fig: Figure) -> dict[str, Any]:
    """Bounding boxes of the drawn figure (call after ``_png``): each axes with its series' colours (by
    label), its bars and its x tick labels, and every legend."""
    from matplotlib.container import BarContainer, ErrorbarContainer

    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    axes = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.has_data():
            continue
        series: dict[str, str] = {}
        bars = []
        hatched: list[bool] = []
        metrics: list[str] = []
        for c in ax.containers:
            label = str(c.get_label())
            if isinstance(c, BarContainer):
                patches = [p for p in c.patches if p.get_height() == p.get_height()]  # not NaN
                if patches:
                    series.setdefault(label, _hex(patches[0].get_facecolor()))
                bars += [_box(p.get_window_extent(renderer)) for p in patches]
                hatched += [bool(p.get_hatch()) for p in patches]
                metrics += [str(p.get_gid() or "") for p in patches]
            elif isinstance(c, ErrorbarContainer) and c.lines[0] is not None:
                series.setdefault(label, _hex(c.lines[0].get_color()))
        for line in ax.get_lines():  # labelled plain lines (the calibration curves); "_..." labels are unnamed
            if not str(line.get_label()).startswith("_"):
                series.setdefault(str(line.get_label()), _hex(line.get_color()))
        ticks = [_box(t.get_window_extent(renderer)) for t in ax.get_xticklabels() if t.get_text()]
        ntexts = [t for t in ax.texts if t.get_gid() == "nlabel"]
        floors = [{"metric": str(c.get_gid()).split()[1], "value": float(str(c.get_gid()).split()[2]),
                   "box": _box(c.get_window_extent(renderer))}
                  for c in ax.collections if str(c.get_gid()).startswith("noise_floor ")]
        axes.append({"box": _box(ax.get_window_extent(renderer)), "series": series, "bars": bars, "hatched": hatched,
                     "bar_metrics": metrics,
                     "ticks": ticks, "nlabels": [_box(t.get_window_extent(renderer)) for t in ntexts],
                     "ntexts": [t.get_text() for t in ntexts], "floors": floors,
                     "xlabels": [t.get_text() for t in ax.get_xticklabels()],
                     "ylabels": [t.get_text() for t in ax.get_yticklabels()]})
    legends = [_box(lg.get_window_extent(renderer)) for lg in fig.legends]
    legends += [_box(lg.get_window_extent(renderer)) for ax in fig.axes if (lg := ax.get_legend()) is not None]
    texts = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    return {"axes": axes, "legends": legends, "legend_texts": texts}


def _finish(fig: Figure, name: str, title: str, caption: str, *, wide: bool = False) -> Plot:
    png = _png(fig)
    return Plot(name, title, caption, png, wide=wide, layout=figure_layout(fig))


def _groups(runs: list[RunData]) -> list[list[RunData]]:
    """Runs in figures of at most ``len(PALETTE)`` (one colour per run, never reused in a figure)."""
    n = len(PALETTE)
    return [runs[i:i + n] for i in range(0, len(runs), n)] or [[]]


def _suffix(name: str, title: str, g: int, groups: list[list[RunData]]) -> tuple[str, str]:
    if len(groups) == 1:
        return name, title
    first = g * len(PALETTE) + 1
    return f"{name}_{g + 1}", f"{title} (runs {first}–{first + len(groups[g]) - 1})"


def _modes(runs: list[RunData]) -> list[str]:
    """The modes the runs report, in the order of the mode registry (independent first), unknown ones last."""
    from medr2.run.prompts import MODES

    out: list[str] = []
    for r in runs:
        out += [m for m, mm in r.metrics.get("modes", {}).items() if isinstance(mm, dict) and m not in out]
    order = list(MODES)
    return sorted(out, key=lambda m: (order.index(m) if m in order else len(order), m))


def _mode_metrics(r: RunData, mode: str) -> dict[str, Any] | None:
    mm = r.metrics.get("modes", {}).get(mode)
    return mm if isinstance(mm, dict) else None


def _run_legend(fig: Figure, runs: list[RunData], extra: list[tuple[Any, str]] | None = None, *,
                bars: bool = False) -> None:
    """One legend entry per run, above the panels (outside every axes: it never covers data)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = [Patch(color=PALETTE[k]) if bars else
                          Line2D([], [], color=PALETTE[k], marker=MARKERS[k], linewidth=2) for k in range(len(runs))]
    labels = [r.label for r in runs]
    for h, lab in extra or []:
        handles.append(h)
        labels.append(lab)
    fig.legend(handles, labels, loc="outside upper center", ncols=min(4, len(labels)), fontsize=8, frameon=False)


def _grid(fig: Figure, n: int, ncols: int = 3) -> list[Axes]:
    cols = min(ncols, n)
    rows = (n + cols - 1) // cols
    axes = list(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax in axes[n:]:
        fig.delaxes(ax)
    return axes[:n]


def _stage_values(node: Any) -> list[tuple[int, float, float | None, float | None, int | None, bool]]:
    """Per stage with a value: ``(stage, value, lo, hi, n, low_n)``."""
    vals = []
    if isinstance(node, dict):
        for s in sorted(STAGES):
            value, lo, hi, n = metric_parts(node.get(str(s)))
            if value is not None:
                vals.append((s, value, lo, hi, n, is_low_n(node.get(str(s)))))
    return vals


def _stage_ticks(lines: list[tuple[int, list[Any]]]) -> list[str]:
    """``S1`` with the range of n over the panel's runs under it (``n=4`` or ``n=4–16``)."""
    out = []
    for s in sorted(STAGES):
        ns = [v[4] for _, vals in lines for v in vals if v[0] == s and v[4] is not None]
        if not ns:
            out.append(f"S{s}")
        elif min(ns) == max(ns):
            out.append(f"S{s}\nn={min(ns):,}")
        else:
            out.append(f"S{s}\nn={min(ns):,}–{max(ns):,}")
    return out


def _errbar(ax: Axes, xs: list[float], ys: list[float], los: list[float | None], his: list[float | None],
            **kw: Any) -> None:
    lower = [y - lo if lo is not None else 0.0 for y, lo in zip(ys, los, strict=True)]
    upper = [hi - y if hi is not None else 0.0 for y, hi in zip(ys, his, strict=True)]
    ax.errorbar(xs, ys, yerr=[lower, upper], capsize=3, **kw)


CHAIN_KEY = "ChainAcc<=s"


@register_plot("stage_curves")
def stage_curves(ctx: PlotContext) -> list[Plot]:
    from matplotlib.lines import Line2D

    groups = _groups(ctx.runs)
    out = []
    for g, runs in enumerate(groups):
        panels: list[tuple[str, list[tuple[int, list[Any]]]]] = []
        for mode in _modes(runs):
            for key, title in (("stages", f"{mode}: accuracy per stage"), (CHAIN_KEY, f"{mode}: ChainAcc≤s")):
                lines = []
                for k, r in enumerate(runs):
                    mm = _mode_metrics(r, mode) or {}
                    node = mm.get("stages") if key == "stages" else (mm.get("chain") or {}).get(key)
                    vals = _stage_values(node)
                    if vals:
                        lines.append((k, vals))
                if lines:
                    panels.append((title, lines))
        if not panels:
            continue
        cols = min(3, len(panels))
        fig_w = max(5.0, 3.6 * cols)
        fig = _figure(fig_w, 0.9 + 2.9 * ((len(panels) + cols - 1) // cols))
        any_low = False
        for ax, (title, lines) in zip(_grid(fig, len(panels)), panels, strict=True):
            for k, vals in lines:
                off = (k - (len(runs) - 1) / 2) * 0.07
                xs = [v[0] + off for v in vals]
                _errbar(ax, xs, [v[1] for v in vals], [v[2] for v in vals], [v[3] for v in vals], marker=MARKERS[k],
                        color=PALETTE[k], label=runs[k].label, markersize=5, linewidth=1.6)
                low = [(x, v[1]) for x, v in zip(xs, vals, strict=True) if v[5]]
                if low:  # a hollow marker: from fewer than 10 cases
                    ax.plot([x for x, _ in low], [y for _, y in low], linestyle="none", marker=MARKERS[k],
                            markersize=5, markerfacecolor="white", markeredgecolor=PALETTE[k], zorder=3)
                    any_low = True
            ax.set_xticks(sorted(STAGES), _stage_ticks(lines), fontsize=8)
            ax.set_xlim(min(STAGES) - 0.4, max(STAGES) + 0.4)
            ax.set_ylim(0, 1.02)
            ax.set_ylabel("accuracy", fontsize=9)
            ax.set_title(title, fontsize=10)
            ax.grid(alpha=0.3)
        fig.supxlabel(STAGE_NAMES, fontsize=8)
        hollow = Line2D([], [], linestyle="none", marker="o", markerfacecolor="white", markeredgecolor="#555555")
        _run_legend(fig, runs, [(hollow, "hollow: fewer than 10 cases")] if any_low else None)
        name, title = _suffix("stage_curves", "Stage degradation", g, groups)
        out.append(_finish(fig, name, title,
                           "Accuracy per stage (macro over tasks) with 95% intervals, one line per run and one panel "
                           "per mode; chain modes add the share of chains right up to each stage (ChainAcc≤s). "
                           "A good model stays high and flat from S1 to S4; a falling line is where it breaks down. "
                           "Under each stage: the answers (n) behind its points; a hollow marker is a value from "
                           "fewer than 10 cases (unreliable interval).",
                           wide=fig_w > 9))
    return out


def _severity_values(node: Any) -> list[tuple[int, float, float | None, float | None, int | None, bool]]:
    """Per severity with an accuracy (``degradation.<kind>``): ``(severity, value, lo, hi, n, low_n)``."""
    vals = []
    if isinstance(node, dict):
        for sev in sorted((k for k in node if str(k).isdigit()), key=int):
            acc = (node.get(sev) or {}).get("acc")
            value, lo, hi, n = metric_parts(acc)
            if value is not None:
                vals.append((int(sev), value, lo, hi, n, is_low_n(acc)))
    return vals


@register_plot("degradation_curves")
def degradation_curves(ctx: PlotContext) -> list[Plot]:
    """Accuracy against severity per degradation kind (``metrics.json`` ``degradation``: V8, V11), one line per run,
    one panel per mode and kind."""
    groups = _groups(ctx.runs)
    out = []
    for g, runs in enumerate(groups):
        panels: list[tuple[str, list[tuple[int, list[Any]]]]] = []
        for mode in _modes(runs):
            nodes = [(_mode_metrics(r, mode) or {}).get("degradation") or {} for r in runs]
            kinds = sorted({str(k) for n in nodes if isinstance(n, dict) for k in n}, key=_variant_sort_key)
            for kind in kinds:
                lines = [(k, vals) for k, n in enumerate(nodes) if (vals := _severity_values(n.get(kind)))]
                if lines:
                    panels.append((f"{mode}: {kind}", lines))
        if not panels:
            continue
        cols = min(4, len(panels))
        fig_w = max(5.0, 3.2 * cols)
        fig = _figure(fig_w, 0.9 + 2.6 * ((len(panels) + cols - 1) // cols))
        for ax, (title, lines) in zip(_grid(fig, len(panels), cols), panels, strict=True):
            sevs = sorted({v[0] for _, vals in lines for v in vals})
            for k, vals in lines:
                off = (k - (len(runs) - 1) / 2) * 0.06
                _errbar(ax, [v[0] + off for v in vals], [v[1] for v in vals], [v[2] for v in vals],
                        [v[3] for v in vals], marker=MARKERS[k], color=PALETTE[k], label=runs[k].label, markersize=4,
                        linewidth=1.4)
            ns = {s: [v[4] for _, vals in lines for v in vals if v[0] == s and v[4] is not None] for s in sevs}
            ax.set_xticks(sevs, [f"{s}\nn={min(ns[s]):,}" if ns[s] else str(s) for s in sevs], fontsize=8)
            ax.set_xlim(min(sevs) - 0.4, max(sevs) + 0.4)
            ax.set_ylim(0, 1.02)
            ax.set_ylabel("accuracy", fontsize=8)
            ax.set_title(title, fontsize=9)
            ax.grid(alpha=0.3)
        fig.supxlabel("severity (1 mild … 3 severe)", fontsize=8)
        _run_legend(fig, runs)
        name, title = _suffix("degradation_curves", "Accuracy per degradation and severity", g, groups)
        out.append(_finish(fig, name, title,
                           "Accuracy against severity, one panel per mode and degradation kind (V8 image "
                           "degradations, V11 physics-true CT/MRI/X-ray degradations), one line per run, 95% "
                           "intervals; under each severity the fewest answers (n) behind a point. Items whose "
                           "evidence did not survive a V11 degradation are probes and not counted. A robust model "
                           "stays flat; the paired change against the clean parents is degradation.<kind>.<severity>"
                           ".delta in metrics.json.", wide=fig_w > 9))
    return out


def _variant_sort_key(v: str) -> tuple[str, int, str]:
    return VariantId.lenient(v).sort_key()


@register_plot("robustness_heatmap")
def robustness_heatmap(ctx: PlotContext) -> list[Plot]:
    import numpy as np

    series = []
    for r in ctx.runs:
        for mode in _modes([r]):
            node = (_mode_metrics(r, mode) or {}).get("variants")
            if isinstance(node, dict) and node:
                series.append((f"{r.label} · {mode}", node))
    # every variant a run evaluated is a column (V1-V3 too), even where its change is undefined
    variants = sorted({v for _, node in series for v in node}, key=_variant_sort_key)
    if not variants or not series:
        return []
    grid = np.full((len(series), len(variants)), np.nan)
    evaluated = np.zeros(grid.shape, dtype=bool)
    low = np.zeros(grid.shape, dtype=bool)
    counts: list[list[int | None]] = [[None] * len(variants) for _ in series]  # n of each cell
    for i, (_, node) in enumerate(series):
        for j, v in enumerate(variants):
            block = node.get(v)
            evaluated[i, j] = isinstance(block, dict)
            delta = block.get("delta") if isinstance(block, dict) else None
            value, *_ = metric_parts(delta)
            if value is not None:
                grid[i, j] = value
                low[i, j] = is_low_n(delta)
                counts[i][j] = metric_parts(delta)[3]
    keep = [i for i in range(len(series)) if evaluated[i].any()]  # no empty rows
    grid, evaluated, low, series = grid[keep], evaluated[keep], low[keep], [series[i] for i in keep]
    counts = [counts[i] for i in keep]
    if np.isnan(grid).all():
        return []
    lim = max(0.05, float(np.nanmax(np.abs(grid))))
    wide = len(variants) > WIDE_VARIANTS
    fig = _figure(max(5.5, 0.55 * len(variants) + 3.2), max(2.6, 0.42 * len(series) + 1.9))
    ax = fig.subplots()
    im = ax.imshow(np.ma.masked_invalid(grid), vmin=-lim, vmax=lim, cmap="RdBu", aspect="auto")
    ax.set_facecolor("#eeeeee")
    ax.set_xticks(range(len(variants)), variants, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(series)), [s for s, _ in series], fontsize=8)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if not np.isnan(grid[i, j]):
                n_text = f"\nn={counts[i][j]:,}" if counts[i][j] is not None else ""
                ax.text(j, i, f"{grid[i, j]:+.2f}" + ("†" if low[i, j] else "") + n_text, ha="center", va="center",
                        fontsize=6.5, color="white" if abs(grid[i, j]) > 0.6 * lim else "black", linespacing=1.1)
            else:
                ax.text(j, i, "n/a" if evaluated[i, j] else "", ha="center", va="center", fontsize=6, color="#555555")
    fig.colorbar(im, ax=ax, label="Δ accuracy vs clean", shrink=0.8)
    ax.set_title("Accuracy change under each variant (grey: not run; n/a: undefined)", fontsize=10)
    return [_finish(fig, "robustness_heatmap", "Robustness: model × variant",
                    "Paired accuracy change of each evaluated variant against its clean parent items "
                    "(acc(variant) − acc(clean)), one row per run and mode that ran variants. The colour is that "
                    "change and nothing more: red = lower accuracy under the variant, blue = higher, white = no "
                    "change; it does not say why. A robust model is near 0 (white) on the answer-preserving "
                    "variants (T, S, C codes). On the image probes V1–V3 (blank, another case's image, another "
                    "modality) a drop can come from reading the image or from the variant's items themselves: an "
                    "image-blind baseline (prior, blind) cannot read the image, so its cell there is the change "
                    "that is not the image's — a model uses the image only where it drops clearly more than that "
                    "row. A positive cell from a low clean accuracy is not robustness. Each cell: the change and "
                    "its n (paired items); † fewer than 10 cases: unreliable.",
                    wide=wide)]


def _noise_floor(mm: dict[str, Any]) -> float | None:
    """Answer changes not caused by the image: FlipRate over the answer-preserving variants."""
    return metric_parts((mm.get("consistency") or {}).get("FlipRate"))[0]


N_FONT = 7.5  # points, the n label on each bar
BAR_PX = 17  # at least this many pixels per bar, so a vertical n label fits inside its bar's width
LOW_N_HATCH = "////"


def _n_label(m: Any) -> str:
    """``"n=12·4c"`` (items · cases) under or over a bar, ``†`` when from fewer than 10 cases."""
    _, _, _, n = metric_parts(m)
    cases = m.get("n_cases") if isinstance(m, dict) and isinstance(m.get("n_cases"), int) else None
    text = f"n={n}" if n is not None else "n=?"
    return text + (f"·{cases}c" if cases is not None else "") + ("†" if is_low_n(m) else "")


def _fit_labels(fig: Figure, ax: Axes, labels: list[Any]) -> None:
    """Widen the y range until every label lies inside the axes (labels sit in data coordinates plus a
    fixed offset, so each widening moves them: a few rounds converge)."""
    from matplotlib.transforms import Bbox

    for _ in range(4):
        fig.canvas.draw()  # type: ignore[attr-defined]
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        lo, hi = ax.get_ylim()
        inv = ax.transData.inverted()
        ys = [y for t in labels for y in inv.transform(Bbox(t.get_window_extent(renderer)).get_points())[:, 1]]
        if not ys:
            return
        new_lo, new_hi = min(lo, min(ys)), max(hi, max(ys))
        pad = 0.03 * (new_hi - new_lo)
        if new_lo >= lo and new_hi <= hi:
            return
        ax.set_ylim(new_lo - (pad if new_lo < lo else 0), new_hi + (pad if new_hi > hi else 0))


def _reliance(ctx: PlotContext, group: str, keys_wanted: tuple[str, ...], name: str, title: str,
              caption: str, *, per_measure: bool = False) -> list[Plot]:
    """Bars with 95% intervals, one bar per run; one panel per mode (its measures side by side on one scale) or,
    ``per_measure``, one panel per measure and mode, each on its own scale (a 0.02 is not flattened by a 0.5 beside
    it), the noise floor of an IS measure drawn across the panel with its value."""
    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    groups = _groups(ctx.runs)
    out = []
    for g, runs in enumerate(groups):
        panels = []  # (mode, keys with a value in that mode)
        for mode in _modes(runs):
            nodes = [(_mode_metrics(r, mode) or {}).get(group) for r in runs]
            keys = [k for k in keys_wanted if any(isinstance(n, dict) and metric_parts(n.get(k))[0] is not None
                                                  for n in nodes)]
            if keys:
                panels += [(mode, [k]) for k in keys] if per_measure else [(mode, keys)]
        if not panels:
            continue
        widest = max(len(k) for _, k in panels)
        # each bar at least BAR_PX wide (its n label is written inside that width); 0.8 of a key is bars
        panel_w = max(3.4, widest * max(1, len(runs)) * BAR_PX / 0.8 / DPI + 1.2)
        cols = min(3 if panel_w <= 4.5 else 2 if panel_w <= 6.5 else 1, len(panels))
        fig = _figure(max(5.0, cols * panel_w), 0.9 + 3.4 * ((len(panels) + cols - 1) // cols))
        FigureCanvasAgg(fig)
        floor_drawn = low_drawn = False
        labelled: list[tuple[Axes, list[Any]]] = []
        width = 0.8 / max(1, len(runs))
        for ax, (mode, keys) in zip(_grid(fig, len(panels), ncols=cols), panels, strict=True):
            x = np.arange(len(keys))
            labels: list[Any] = []
            for k, r in enumerate(runs):
                mm = _mode_metrics(r, mode) or {}
                node = mm.get(group)
                blocks = [node.get(key) if isinstance(node, dict) else None for key in keys]
                parts = [metric_parts(b) for b in blocks]
                ys = [p[0] if p[0] is not None else np.nan for p in parts]
                lower = [p[0] - p[1] if p[0] is not None and p[1] is not None else 0.0 for p in parts]
                upper = [p[2] - p[0] if p[0] is not None and p[2] is not None else 0.0 for p in parts]
                xs = x + (k - (len(runs) - 1) / 2) * width
                low = [is_low_n(b) for b in blocks]
                bars = ax.bar(xs, ys, width, yerr=[lower, upper], capsize=2, label=r.label, color=PALETTE[k],
                              edgecolor="white", linewidth=0.5, error_kw={"elinewidth": 0.8})
                for patch, is_low, key in zip(bars.patches, low, keys, strict=True):
                    patch.set_gid(key)  # the metric, for the layout
                    if is_low:
                        patch.set_hatch(LOW_N_HATCH)
                        low_drawn = True
                floor = _noise_floor(mm)
                for xi, key, y, lo_e, hi_e, block in zip(xs, keys, ys, lower, upper, blocks, strict=True):
                    if y != y:  # no value: no bar, no label
                        continue
                    if key.startswith("IS") and floor is not None:
                        half = 0.5 if per_measure and len(runs) == 1 else width / 2
                        ax.hlines(floor, xi - half, xi + half, colors=NOISE_COLOR, linestyles="--",
                                  linewidth=1.8, gid=f"noise_floor {key} {floor!r}", zorder=3)
                        floor_drawn = True
                    # the n label just beyond the bar's end (and its interval): above a bar >= 0, below one < 0
                    up = y >= 0
                    end = max(y + hi_e, 0.0) if up else min(y - lo_e, 0.0)
                    labels.append(ax.annotate(_n_label(block), (xi, end), xytext=(0, 2 if up else -2),
                                              textcoords="offset points", rotation=90, ha="center",
                                              va="bottom" if up else "top", fontsize=N_FONT, color="#333333",
                                              gid="nlabel", zorder=4,
                                              bbox={"facecolor": "white", "alpha": 0.75, "pad": 0.4,
                                                    "linewidth": 0}))
            ax.axhline(0, color="black", linewidth=0.8)
            if per_measure:  # its own scale, always showing 0, so a small value is a visible bar
                lo, hi = ax.get_ylim()
                span = max(hi - lo, 0.05)
                ax.set_ylim(min(lo, 0.0) - 0.05 * span, max(hi, 0.0) + 0.05 * span)
                ax.set_xticks(x, keys, fontsize=8)
                ax.set_title(f"{keys[0]} · {mode}", fontsize=10)
            else:
                ax.set_xticks(x, keys, rotation=30, ha="right", fontsize=8)
                ax.set_title(f"{title} · {mode}", fontsize=10)
            ax.grid(axis="y", alpha=0.3)
            labelled.append((ax, labels))
        extra: list[tuple[Any, str]] = []
        if floor_drawn:
            extra.append((Line2D([], [], color=NOISE_COLOR, linestyle="--"), "IS noise floor (FlipRate)"))
        if low_drawn:
            extra.append((Patch(facecolor="#999999", edgecolor="white", hatch=LOW_N_HATCH),
                          "hatched, †: fewer than 10 cases"))
        _run_legend(fig, runs, extra, bars=True)
        for _ in range(2):  # after the legend (the layout settles): every label inside its axes
            for ax, labels in labelled:
                _fit_labels(fig, ax, labels)
        nm, tt = _suffix(name, title, g, groups)
        # across the page: the figure is shown near its own size, so the n labels stay legible
        out.append(_finish(fig, nm, tt, caption + N_CAPTION, wide=True))
    return out


N_CAPTION = (" Over or under each bar: n=items·cases it is computed from; a hatched bar and † mark a value from "
             "fewer than 10 cases, whose interval is unreliable.")


@register_plot("prompt_reliance")
def prompt_reliance(ctx: PlotContext) -> list[Plot]:
    return _reliance(ctx, "prompt_reliance", PROMPT_KEYS, "prompt_reliance", "Prompt reliance",
                     "One bar per run, one panel per mode, 95% intervals. PromptGain = Acc(T2) − Acc(clean), "
                     "MisleadDrop = Acc(clean) − Acc(T3), PRI = Acc(T2) − Acc(T3), MFR = share of T3/T4/T8 "
                     "answers equal to the lure, Sycophancy = share of answers right on the clean item that "
                     "follow the lure under push-back (T4). "
                     "A good model is near 0 on all of them: a hint does not carry it and a false premise, lure "
                     "or push-back does not move it.")


def _attack_keys(runs: Sequence[Any]) -> tuple[str, ...]:
    """``ASR`` then every ``ASR_<code>`` some run reports (variant order)."""
    keys = {k for r in runs for mode in _modes([r]) for k in ((_mode_metrics(r, mode) or {}).get("attacks") or {})
            if k == "ASR" or k.startswith("ASR_")}
    return tuple(sorted(keys, key=lambda k: (k != "ASR", _variant_sort_key(k.removeprefix("ASR_")))))


@register_plot("attacks")
def attacks(ctx: PlotContext) -> list[Plot]:
    return _reliance(ctx, "attacks", _attack_keys(ctx.runs), "attacks", "Attack success",
                     "One bar per run, one panel per mode, 95% intervals. ASR = share of (variant, clean) pairs "
                     "whose answer moved to the option a misleading premise, a context note or text burnt into the "
                     "image names, where the clean answer was not that option; ASR_<code> per variant code (T3 "
                     "premise, T4 suggestion, T8 wrong earlier step, T9 guideline/protocol/exception framing, T10 "
                     "prior report/referral note/earlier turn, V10 text in the image). A good model is near 0.")


@register_plot("pairs")
def pairs(ctx: PlotContext) -> list[Plot]:
    keys = {k for r in ctx.runs for mode in _modes([r]) for k in ((_mode_metrics(r, mode) or {}).get("pairs") or {})}
    return _reliance(ctx, "pairs", tuple(sorted(keys, key=_variant_sort_key)), "pairs", "Look-alike pairs",
                     "One bar per run, one panel per mode, 95% intervals. Pair accuracy = share of (variant, clean) "
                     "pairs where both answers are right: V12 asks the clean question of the most alike image of "
                     "another case whose answer differs (docs/variants.md). Its chance, each side's accuracy and "
                     "the share confused (the variant answered the clean answer) are in metrics.json. A good model "
                     "is near its clean accuracy; one that does not tell look-alikes apart is near 0.")


COMPARISON_KEYS = ("acc", "prior_reliance", "current_reading")


@register_plot("comparison")
def comparison(ctx: PlotContext) -> list[Plot]:
    return _reliance(ctx, "comparison", COMPARISON_KEYS, "comparison", "Comparison with the prior study",
                     "Items that compare the current image with a prior study of the patient (s3.change: new, "
                     "resolved, unchanged or worse, from both studies' labels), one bar per run, one panel per mode, "
                     "95% intervals. acc = accuracy on them; over those whose answer differs from what the prior "
                     "alone gives (the finding changed), prior_reliance = share of read answers that are the prior's "
                     "(the answer followed the prior, not the current image) and current_reading = share that are "
                     "right. A model that reads the current image is near 0 prior reliance; one that copies the "
                     "prior is near 1. Per variant (prior swapped, order reversed) in metrics.json comparison."
                     "by_variant.")


@register_plot("visual_reliance")
def visual_reliance(ctx: PlotContext) -> list[Plot]:
    return _reliance(ctx, "visual_reliance", VISUAL_KEYS, "visual_reliance", "Visual reliance",
                     "How much the answers depend on the real image, one bar per run, one panel per measure and "
                     "mode, each panel on its own scale (read the axis: a small value is drawn as a visible bar): VRS "
                     "(V2, another case's image), BlankGap (V1), ModalityGap (V3), BlindGap (blind mode) — a "
                     "model that reads the image scores well above 0, near 0 means it ignores the image. Image "
                     "sensitivity IS (IS_V1, IS_V3) is the share of answers that change when the image is "
                     "swapped; the dashed grey tick on each IS bar is that run's noise floor, FlipRate (answers "
                     "that change under answer-preserving variants, not caused by the image). Only IS above its "
                     "tick is image-driven: a random baseline has a high IS and an equally high floor, so IS has no "
                     "better direction on its own. A good model reads the image: its gaps are well above 0 and its "
                     "IS stands above its tick.", per_measure=True)


def _axes_labels(form: str, rows: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """Yes/no: both answers always; MCQ: letters A up to the last one seen; then anything else seen
    (e.g. a parsed multi-letter answer), then ``unparsed``, ``truncated`` and ``error`` where they occur."""
    seen = {g for g, _ in rows} | {p for _, p in rows}
    if form == "yesno":
        base = ["yes", "no"]
    else:
        letters = [x for x in seen if len(x) == 1 and "A" <= x <= "Z"]
        base = [chr(c) for c in range(ord("A"), ord(max(letters)) + 1)] if letters else []
    gold = base + sorted({g for g, _ in rows} - set(base))
    pred = base + sorted({p for _, p in rows} - set(base) - set(UNREAD_OUTCOMES))
    pred += [x for x in UNREAD_OUTCOMES if x in seen]
    return gold, pred


Gold = dict[str, tuple[str, str, str]]  # item_id -> (variant, form, answer)


def _gold(items: Mapping[str, Item]) -> Gold:
    """Variant, form and answer of the items a confusion matrix may count (clean ones; every item where several
    benches may hold one id, so the later bench's item decides), read by columns."""
    from medr2.bench.table import ItemFilter
    from medr2.reporting.items import report_items

    source = report_items(items)
    flt = ItemFilter(variants=("clean",)) if source.sources <= 1 else None
    gold: Gold = {}
    for cols in source.column_batches(["item_id", "variant", "form", "answer"], flt):
        gold.update(zip(cols["item_id"], zip(cols["variant"], cols["form"], cols["answer"], strict=True), strict=True))
    return gold


CONFUSION_FORMS = ("mcq", "yesno")


def _confusions(scores: Scores, gold: Gold, mode: str) -> dict[str, tuple[Any, list[str], list[str]]]:
    """Per form (:data:`CONFUSION_FORMS`) with rows: the counts of (correct answer, model answer) of the clean
    items answered in ``mode``, and the labels of the rows and columns; one pass over the score rows."""
    import numpy as np

    counts: dict[str, Counter[tuple[str, str]]] = {form: Counter() for form in CONFUSION_FORMS}
    for cols in score_batches(scores, ("item_id", "mode", "form", "verdict", "parsed")):
        forms = cols.get("form")
        for j, item_id in enumerate(cols["item_id"]):
            it = gold.get(item_id)
            if cols["mode"][j] != mode or it is None or it[0] != "clean":
                continue
            form = forms[j] if forms is not None else it[1]
            if form not in counts:
                continue
            yesno = form == "yesno"
            g = it[2].strip().lower() if yesno else it[2].strip().upper()
            verdict = cols["verdict"][j]
            if verdict in UNREAD_OUTCOMES:
                pred = str(verdict)
            else:
                p = str(cols["parsed"][j] or "").strip()
                pred = p.lower() if yesno else p.upper()
            counts[form][(g, pred)] += 1
    out = {}
    for form, c in counts.items():
        if not c:
            continue
        gold_labels, pred_labels = _axes_labels(form, list(c))
        m = np.zeros((len(gold_labels), len(pred_labels)), dtype=int)
        for (g, p), n in c.items():
            m[gold_labels.index(g), pred_labels.index(p)] += n
        out[form] = (m, gold_labels, pred_labels)
    return out


@register_plot("confusion")
def confusion(ctx: PlotContext) -> list[Plot]:
    plots = []
    answers: Gold | None = None
    for k, r in enumerate(ctx.runs):
        modes = r.modes
        if not modes:
            continue
        mode = PREFERRED_MODE if PREFERRED_MODE in modes else modes[0]
        answers = _gold(ctx.items) if answers is None else answers
        found = _confusions(r.scores, answers, mode)
        panels = [(form, *found[form]) for form in CONFUSION_FORMS if form in found]
        if not panels:
            continue
        fig = _figure(4.2 * len(panels), 3.6)
        axes = fig.subplots(1, len(panels), squeeze=False)[0]
        for ax, (form, m, gold, pred) in zip(axes, panels, strict=True):
            ax.imshow(m, cmap="Blues", vmin=0, vmax=max(1, int(m.max())))
            ax.set_xticks(range(len(pred)), pred, rotation=45, ha="right", fontsize=8)
            ax.set_yticks(range(len(gold)), gold, fontsize=8)
            ax.set_xlabel("model answer")
            ax.set_ylabel("correct answer")
            ax.set_title("multiple choice (letter)" if form == "mcq" else "yes / no", fontsize=10)
            hi = m.max() or 1
            for i in range(m.shape[0]):
                for j in range(m.shape[1]):
                    ax.text(j, i, str(m[i, j]), ha="center", va="center", fontsize=8,
                            color="white" if m[i, j] > hi * 0.6 else "black")
        fig.suptitle(f"{r.label} · {mode} (clean items)", fontsize=10)
        plots.append(_finish(fig, f"confusion_{k + 1}_{_slug(r.label)}", f"Confusion matrices: {r.label}",
                             f"Mode {mode}, clean items; unparsed, truncated and error answers in their own "
                             "columns. A good model has its counts on the diagonal."))
    return plots


def _calibration_curves(mm: dict[str, Any] | None) -> tuple[list[dict[str, Any]], list[list[float]]] | None:
    """A mode's reliability bins (equal width) and risk–coverage points (``RUN/calibration.json``), if any."""
    cal = (mm or {}).get("calibration")
    if not isinstance(cal, dict):
        return None
    bins = (cal.get("reliability") or {}).get("equal_width") or []
    curve = cal.get("risk_coverage") or []
    return (bins, curve) if bins or curve else None


@register_plot("calibration")
def calibration(ctx: PlotContext) -> list[Plot]:
    """Per mode: a reliability diagram (accuracy against confidence, per confidence bin) and the risk–coverage
    curve, one series per run (runs without confidences are left out: nothing is invented for them)."""
    groups = _groups(ctx.runs)
    out = []
    for g, runs in enumerate(groups):
        panels: list[tuple[str, list[tuple[int, Any]]]] = []
        for mode in _modes(runs):
            got = [(k, c) for k, r in enumerate(runs) if (c := _calibration_curves(_mode_metrics(r, mode)))]
            if got:
                panels.append((mode, got))
        if not panels:
            continue
        fig = _figure(8.0, 0.9 + 3.0 * len(panels))
        axes = list(fig.subplots(len(panels), 2, squeeze=False).ravel())
        for row, (mode, got) in enumerate(panels):
            rel, rc = axes[2 * row], axes[2 * row + 1]
            rel.plot([0, 1], [0, 1], linestyle="--", color=NOISE_COLOR, linewidth=1)
            for k, (bins, curve) in got:
                if bins:
                    rel.plot([b["confidence"] for b in bins], [b["accuracy"] for b in bins], marker=MARKERS[k],
                             color=PALETTE[k], label=runs[k].label, markersize=5, linewidth=1.4)
                if curve:
                    rc.plot([p[0] for p in curve], [p[1] for p in curve], color=PALETTE[k], label=runs[k].label,
                            linewidth=1.6)
            rel.set(xlim=(0, 1), ylim=(0, 1.02))
            rel.set_xlabel("confidence (mean per bin)", fontsize=9)
            rel.set_ylabel("accuracy", fontsize=9)
            rel.set_title(f"{mode}: reliability", fontsize=10)
            rc.set(xlim=(0, 1.02), ylim=(0, 1.02))
            rc.set_xlabel("coverage (answered, most confident first)", fontsize=9)
            rc.set_ylabel("risk (error rate)", fontsize=9)
            rc.set_title(f"{mode}: risk–coverage", fontsize=10)
            for ax in (rel, rc):
                ax.grid(alpha=0.3)
        from matplotlib.lines import Line2D

        drawn = sorted({k for _, got in panels for k, _ in got})  # each run keeps its colour (index in the group)
        fig.legend([Line2D([], [], color=PALETTE[k], marker=MARKERS[k], linewidth=2) for k in drawn],
                   [runs[k].label for k in drawn], loc="outside upper center", ncols=min(4, len(drawn)), fontsize=8,
                   frameon=False)
        name, title = _suffix("calibration", "Calibration", g, groups)
        out.append(_finish(fig, name, title,
                           "Left: accuracy against confidence over the clean answers that carry a confidence (10 "
                           "equal-width bins, a point per non-empty bin); a calibrated model lies on the dashed "
                           "diagonal, below it is over-confident. Right: the error rate when only the most confident "
                           "answers are kept, by the share kept; a model whose confidence knows its errors starts "
                           "low and rises. ECE, Brier, AUROC and abstention with intervals: the leaderboard and "
                           "calibration.json. Runs without confidences are not drawn."))
    return out


def _slug(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)[:60] or "run"


def make_plots(ctx: PlotContext, progress: Any = None) -> list[Plot]:
    """Every registered plot kind; ``progress`` (``medr2.progress``) advances once per kind."""
    import matplotlib

    out: list[Plot] = []
    # names from data (runs, models, labels) are text: "$" never starts mathtext (an unbalanced one crashed)
    with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
        for fn in PLOTS.values():
            out.extend(fn(ctx))
            if progress is not None:
                progress.advance()
    return out


def _slice_panels(runs: list[RunData]) -> list[tuple[str, str, list[str], dict[str, int], dict[str, bool]]]:
    """Per (mode, slicing) of the runs' ``slices.json``: its slice labels (first run's order first), the cases of
    each and whether it is low-n (from the first run that has it)."""
    panels: dict[tuple[str, str], tuple[list[str], dict[str, int], dict[str, bool]]] = {}
    for r in runs:
        for mode, by in ((r.analysis.get("slices") or {}).get("modes") or {}).items():
            for slicing, t in by.items():
                labels, cases, low = panels.setdefault((mode, slicing), ([], {}, {}))
                for s in t.get("slices", []):
                    label = str(s.get("label"))
                    if label not in cases:
                        labels.append(label)
                        cases[label], low[label] = int(s.get("n_cases", 0)), bool(s.get("low_n"))
    return [(mode, slicing, *v) for (mode, slicing), v in sorted(panels.items())]


def _slice_value(r: RunData, mode: str, slicing: str, label: str) -> Any:
    t = (((r.analysis.get("slices") or {}).get("modes") or {}).get(mode) or {}).get(slicing) or {}
    for s in t.get("slices", []):
        if str(s.get("label")) == label:
            return (s.get("metrics") or {}).get("accuracy")
    return None


@register_plot("slices")
def slices(ctx: PlotContext) -> list[Plot]:
    """Small multiples of subgroup accuracy (runs scored with ``medr2 score --slice``): one panel per mode and
    slicing, one row per slice, each run's accuracy with its 95% interval; low-n slices hollow and marked †."""
    out = []
    groups = [g for g in _groups([r for r in ctx.runs if r.analysis.get("slices")]) if g]
    for g, runs in enumerate(groups):
        panels = _slice_panels(runs)
        if not panels:
            continue
        ncols = min(2, len(panels))
        tallest = max(len(p[2]) for p in panels)
        fig = _figure(6.5 * ncols, 1.2 + 0.3 * tallest * ((len(panels) + ncols - 1) // ncols))
        for ax, (mode, slicing, labels, cases, low) in zip(_grid(fig, len(panels), ncols), panels, strict=True):
            ys = list(range(len(labels)))[::-1]
            for k, r in enumerate(runs):
                offset = (k - (len(runs) - 1) / 2) * 0.12
                for y, label in zip(ys, labels, strict=True):
                    value, lo, hi, _ = metric_parts(_slice_value(r, mode, slicing, label))
                    if value is None:
                        continue
                    err = [[value - lo if lo is not None else 0.0], [hi - value if hi is not None else 0.0]]
                    ax.errorbar([value], [y + offset], xerr=err, fmt=MARKERS[k], color=PALETTE[k], capsize=2,
                                markerfacecolor="none" if low[label] else PALETTE[k], label=r.label)
            ax.set_yticks(ys, [f"{lab}{'†' if low[lab] else ''} ({cases[lab]:,} cases)" for lab in labels],
                          fontsize=7)
            ax.set_xlim(-0.02, 1.02)
            ax.set_xlabel("accuracy (95% interval)", fontsize=8)
            ax.set_title(f"{mode}: by {slicing}", fontsize=9)
            ax.grid(axis="x", alpha=0.3)
        _run_legend(fig, runs)
        name, title = _suffix("slices", "Accuracy by subgroup", g, groups)
        out.append(_finish(fig, name, title, "Accuracy per slice of the runs scored with medr2 score --slice, each "
                           "run's value with its 95% bootstrap interval; every slice names its cases. † and a "
                           "hollow marker: fewer cases than the run's --slice-min-cases (never ranked or tested). "
                           "Cases without a field's value are the slice 'missing'. The sortable tables under "
                           "Subgroups and harm have every metric and the largest gap's test. A good model's intervals "
                           "overlap across the slices of a field: no subgroup is failed more than another.",
                           wide=ncols > 1))
    return out
