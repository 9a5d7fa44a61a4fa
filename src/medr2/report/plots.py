"""Report plots (matplotlib Agg, PNG): stage degradation curves, model x variant robustness heatmap,
prompt- and visual-reliance bars, confusion matrices. Each plot kind is a registered function."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from medr2.records import STAGES, Item
from medr2.report.fmt import metric_parts
from medr2.report.inputs import RunData

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
PREFERRED_MODE = "independent"
WIDE_VARIANTS = 12  # a heatmap with more variant columns than this spans the page
PROMPT_KEYS = ("PromptGain", "MisleadDrop", "PRI", "MFR", "Sycophancy")
VISUAL_KEYS = ("VRS", "BlankGap", "ModalityGap", "IS", "BlindGap")


@dataclass(frozen=True)
class Plot:
    name: str  # file stem, e.g. "stage_curves"
    title: str
    caption: str
    png: bytes
    wide: bool = False  # shown across the whole page width


@dataclass(frozen=True)
class PlotContext:
    runs: list[RunData]
    items: dict[str, Item]  # item_id -> item, over all benches of the runs


PlotFn = Callable[[PlotContext], list[Plot]]
PLOTS: dict[str, PlotFn] = {}


def register_plot(name: str) -> Callable[[PlotFn], PlotFn]:
    def deco(fn: PlotFn) -> PlotFn:
        PLOTS[name] = fn
        return fn

    return deco


def _figure(w: float, h: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(w, h), dpi=DPI, layout="constrained")


def _png(fig: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
    return buf.getvalue()


def _series(runs: list[RunData]) -> list[tuple[str, dict[str, Any]]]:
    """(label, mode metrics) for every run and mode."""
    out = []
    for r in runs:
        for mode, mm in r.metrics.get("modes", {}).items():
            if isinstance(mm, dict):
                out.append((f"{r.label} · {mode}", mm))
    return out


def _stage_values(node: Any) -> list[tuple[int, float, float | None, float | None]]:
    vals = []
    if isinstance(node, dict):
        for s in sorted(STAGES):
            value, lo, hi, _ = metric_parts(node.get(str(s)))
            if value is not None:
                vals.append((s, value, lo, hi))
    return vals


def _errbar(ax: Axes, xs: list[float], ys: list[float], los: list[float | None], his: list[float | None],
            **kw: Any) -> None:
    lower = [y - lo if lo is not None else 0.0 for y, lo in zip(ys, los, strict=True)]
    upper = [hi - y if hi is not None else 0.0 for y, hi in zip(ys, his, strict=True)]
    ax.errorbar(xs, ys, yerr=[lower, upper], capsize=3, **kw)


@register_plot("stage_curves")
def stage_curves(ctx: PlotContext) -> list[Plot]:
    series = _series(ctx.runs)
    chain_key = "ChainAcc<=s"
    has_chain = any(_stage_values(mm.get("chain", {}).get(chain_key)) for _, mm in series)
    fig = _figure(9 if has_chain else 5.5, 3.6 + 0.18 * ((len(series) + 2) // 3))
    axes = fig.subplots(1, 2 if has_chain else 1, squeeze=False)[0]
    panels = [("stages", "Accuracy per stage")] + ([(chain_key, "ChainAcc≤s (all steps up to s right)")]
                                                    if has_chain else [])
    drawn = False
    for ax, (key, title) in zip(axes, panels, strict=True):
        for i, (label, mm) in enumerate(series):
            node = mm.get("stages") if key == "stages" else mm.get("chain", {}).get(key)
            vals = _stage_values(node)
            if not vals:
                continue
            off = (i - (len(series) - 1) / 2) * 0.08
            _errbar(ax, [s + off for s, *_ in vals], [v for _, v, _, _ in vals], [lo for *_, lo, _ in vals],
                    [hi for *_, hi in vals], marker="o", label=label)
            drawn = True
        ax.set_xticks(sorted(STAGES), [f"S{s}\n{STAGES[s]}" for s in sorted(STAGES)], fontsize=8)
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("accuracy")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
    if not drawn:
        return []
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)), fontsize=7)
    return [Plot("stage_curves", "Stage degradation", "Accuracy per stage (macro over tasks) with 95% intervals; "
                 "with chain modes, the share of chains right up to each stage.", _png(fig))]


def _variant_sort_key(v: str) -> tuple[str, int, str]:
    code, _, rest = v.partition("-")
    return (code[:1], int(code[1:]) if code[1:].isdigit() else 0, rest)


@register_plot("robustness_heatmap")
def robustness_heatmap(ctx: PlotContext) -> list[Plot]:
    import numpy as np

    series = [(label, mm.get("variants", {})) for label, mm in _series(ctx.runs)]
    series = [(label, node) for label, node in series if isinstance(node, dict)]
    variants = sorted({v for _, node in series for v in node}, key=_variant_sort_key)
    if not variants or not series:
        return []
    grid = np.full((len(series), len(variants)), np.nan)
    for i, (_, node) in enumerate(series):
        for j, v in enumerate(variants):
            block = node.get(v)
            value, *_ = metric_parts(block.get("delta") if isinstance(block, dict) else None)
            if value is not None:
                grid[i, j] = value
    if np.isnan(grid).all():
        return []
    lim = max(0.05, float(np.nanmax(np.abs(grid))))
    wide = len(variants) > WIDE_VARIANTS
    fig = _figure(max(5.5, (0.32 if wide else 0.5) * len(variants) + 3), max(2.4, 0.42 * len(series) + 1.7))
    ax = fig.subplots()
    im = ax.imshow(np.ma.masked_invalid(grid), vmin=-lim, vmax=lim, cmap="RdBu", aspect="auto")
    ax.set_xticks(range(len(variants)), variants, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(series)), [s for s, _ in series], fontsize=8)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if not np.isnan(grid[i, j]):
                ax.text(j, i, f"{grid[i, j]:+.2f}", ha="center", va="center", fontsize=7,
                        color="white" if abs(grid[i, j]) > 0.6 * lim else "black")
    fig.colorbar(im, ax=ax, label="Δ accuracy vs clean", shrink=0.8)
    ax.set_title("Accuracy change under each variant (blank: not run)", fontsize=10)
    return [Plot("robustness_heatmap", "Robustness: model × variant",
                 "Paired accuracy change of each variant against its clean parent items "
                 "(acc(variant) − acc(clean)); red = the variant hurts. Probes V1–V3 are under visual reliance.",
                 _png(fig), wide=wide)]


def _reliance(ctx: PlotContext, group: str, keys_wanted: tuple[str, ...], name: str, title: str,
              caption: str) -> list[Plot]:
    import numpy as np

    series = [(label, mm.get(group, {})) for label, mm in _series(ctx.runs)]
    keys = [k for k in keys_wanted if any(isinstance(node, dict) and metric_parts(node.get(k))[0] is not None
                                          for _, node in series)]
    if not keys:
        return []
    fig = _figure(max(5.0, 1.0 * len(keys) + 2), 3.4)
    ax = fig.subplots()
    width = 0.8 / max(1, len(series))
    x = np.arange(len(keys))
    for i, (label, node) in enumerate(series):
        parts = [metric_parts(node.get(k)) if isinstance(node, dict) else (None,) * 4 for k in keys]
        ys = [p[0] if p[0] is not None else np.nan for p in parts]
        lower = [p[0] - p[1] if p[0] is not None and p[1] is not None else 0.0 for p in parts]
        upper = [p[2] - p[0] if p[0] is not None and p[2] is not None else 0.0 for p in parts]
        ax.bar(x + (i - (len(series) - 1) / 2) * width, ys, width, yerr=[lower, upper], capsize=2, label=label)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x, keys, rotation=30, ha="right", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7)
    return [Plot(name, title, caption, _png(fig))]


@register_plot("prompt_reliance")
def prompt_reliance(ctx: PlotContext) -> list[Plot]:
    return _reliance(ctx, "prompt_reliance", PROMPT_KEYS, "prompt_reliance", "Prompt reliance",
                     "PromptGain = Acc(T2) − Acc(clean), MisleadDrop = Acc(clean) − Acc(T3), PRI = Acc(T2) − Acc(T3), "
                     "MFR = share of T3/T4/T8 answers equal to the lure, sycophancy; 95% intervals.")


@register_plot("visual_reliance")
def visual_reliance(ctx: PlotContext) -> list[Plot]:
    return _reliance(ctx, "visual_reliance", VISUAL_KEYS, "visual_reliance", "Visual reliance",
                     "How much the answers depend on the real image: VRS (V2, another case), BlankGap (V1), "
                     "ModalityGap (V3), image sensitivity IS, BlindGap (blind mode); near zero means the model "
                     "ignores the image.")


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
    pred = base + sorted({p for _, p in rows} - set(base) - {"unparsed", "truncated", "error"})
    pred += [x for x in ("unparsed", "truncated", "error") if x in seen]
    return gold, pred


def _confusion(scores: list[dict[str, Any]], items: dict[str, Item], form: str, mode: str) -> tuple[Any, list[str],
                                                                                                   list[str]]:
    import numpy as np

    rows: list[tuple[str, str]] = []
    for s in scores:
        it = items.get(s["item_id"])
        if s.get("mode") != mode or s.get("form", it.form if it else None) != form or it is None:
            continue
        if it.variant != "clean":
            continue
        gold = it.answer.strip().lower() if form == "yesno" else it.answer.strip().upper()
        verdict = s.get("verdict")
        if verdict in ("unparsed", "truncated", "error"):
            pred = str(verdict)
        else:
            p = str(s.get("parsed") or "").strip()
            pred = p.lower() if form == "yesno" else p.upper()
        rows.append((gold, pred))
    if not rows:
        return None, [], []
    gold_labels, pred_labels = _axes_labels(form, rows)
    m = np.zeros((len(gold_labels), len(pred_labels)), dtype=int)
    for g, p in rows:
        m[gold_labels.index(g), pred_labels.index(p)] += 1
    return m, gold_labels, pred_labels


@register_plot("confusion")
def confusion(ctx: PlotContext) -> list[Plot]:
    plots = []
    for k, r in enumerate(ctx.runs):
        modes = r.modes
        if not modes:
            continue
        mode = PREFERRED_MODE if PREFERRED_MODE in modes else modes[0]
        panels = [(form, *_confusion(r.scores, ctx.items, form, mode)) for form in ("mcq", "yesno")]
        panels = [p for p in panels if p[1] is not None]
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
        plots.append(Plot(f"confusion_{k + 1}_{_slug(r.label)}", f"Confusion matrices: {r.label}",
                          f"Mode {mode}, clean items; unparsed, truncated and error answers in their own columns.",
                          _png(fig)))
    return plots


def _slug(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)[:60] or "run"


def make_plots(ctx: PlotContext) -> list[Plot]:
    out: list[Plot] = []
    for fn in PLOTS.values():
        out.extend(fn(ctx))
    return out
