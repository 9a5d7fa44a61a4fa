"""The leaderboard: one row per (run, model, mode) with overall, per-stage and key robustness numbers,
each with its 95% interval. Markdown, CSV and JSON carry the same numbers."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medr2.reporting.fmt import Scopes, cell_text, fmt_ci, fmt_n, metric_parts
from medr2.reporting.inputs import RunData

# appended to a value computed from fewer than 10 cases (``low_n`` in metrics.json)
LOW_N_MARK = "†"
LOW_N_NOTE = "† fewer than 10 cases: the interval is unreliable."


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    path: tuple[str, ...]  # inside metrics.json ``modes[MODE]``
    always: bool = False  # shown even when no run has it
    better: str = "higher"  # "higher" or "lower": the direction the page's arrow and its best mark follow
    tip: str = ""  # what the number is (the header's tooltip, with the direction)
    secondary: bool = False  # computed on a subset of the answers (shown after the headline and reliance columns)
    nonzero: bool = False  # shown only where some run's value is not 0 (a rate every run writes, mostly 0)
    # the scored rows behind the number, as (score column, value) filters (``medr2 view``'s click from a cell to
    # its items); empty: every row of the run and mode
    items: tuple[tuple[str, str], ...] = ()

    @property
    def arrow(self) -> str:
        return "↑" if self.better == "higher" else "↓"

    @property
    def title(self) -> str:
        return f"{self.tip} {'Higher' if self.better == 'higher' else 'Lower'} is better."


# The leaderboard columns, in order: the headline, then the reliance measures (does the model read the image, does
# a prompt mislead it), then the stages and the rest. A column no run reports is left out (unless ``always``).
COLUMNS: tuple[Column, ...] = (
    Column("overall", "Overall", ("overall",), always=True, tip="Accuracy over every answer."),
    Column("vrs", "VRS", ("visual_reliance", "VRS"),
           tip="Visual reliance score: how much the answers depend on the image (V-variants)."),
    Column("blind_gap", "Blind gap", ("visual_reliance", "BlindGap"),
           tip="Accuracy with the image minus accuracy without it (blind mode)."),
    Column("mislead_drop", "MisleadDrop", ("prompt_reliance", "MisleadDrop"), better="lower",
           tip="Accuracy lost when the prompt carries a misleading hint."),
    Column("mfr", "MFR", ("prompt_reliance", "MFR"), better="lower",
           tip="Misleading-hint follow rate: answers that took the wrong hint."),
    Column("s1", "S1 acquisition", ("stages", "1"), always=True, tip="Accuracy on stage 1 (acquisition).",
           items=(("stage", "1"),)),
    Column("s2", "S2 anatomy", ("stages", "2"), always=True, tip="Accuracy on stage 2 (anatomy).",
           items=(("stage", "2"),)),
    Column("s3", "S3 findings", ("stages", "3"), always=True, tip="Accuracy on stage 3 (findings).",
           items=(("stage", "3"),)),
    Column("s4", "S4 diagnosis", ("stages", "4"), always=True, tip="Accuracy on stage 4 (diagnosis).",
           items=(("stage", "4"),)),
    Column("worst_case", "Worst-case acc", ("consistency", "WorstCaseAcc"),
           tip="Accuracy counting an item right only if every variant of it is right."),
    Column("flip_rate", "Flip rate", ("consistency", "FlipRate"), better="lower",
           tip="Answers that change between an item and its variants."),
    # right answer and no contradicted claim, over the clean answers with a rationale (its n says how many)
    Column("grounded_acc", "Grounded acc", ("rationale", "overall", "grounded_acc"), secondary=True,
           tip="Right answer and no contradicted claim, over the answers with a rationale only (see its n)."),
    # share of those rationales that hedge towards a finding the case does not have ("possibly X"): a model
    # cannot hedge its way to grounded accuracy unseen
    Column("hedged_halluc", "Hedged halluc.", ("rationale", "overall", "hedged_hallucination_rate"), secondary=True,
           better="lower", tip="Rationales that hedge towards a finding the case does not have (\"possibly X\")."),
    Column("miou", "mIoU", ("grounding", "all", "mIoU"), secondary=True, tip="Mean IoU of the boxes answered."),
    # calibration (RUN/calibration.json; shown where some run has confidences), over the answers with one
    Column("ece", "ECE", ("calibration", "calibration", "ECE"), secondary=True, better="lower",
           tip="Expected calibration error of the stated or measured confidence (answers with a confidence)."),
    Column("brier", "Brier", ("calibration", "calibration", "Brier"), secondary=True, better="lower",
           tip="Brier score of the confidence against correctness (answers with a confidence)."),
    Column("auroc", "AUROC (conf.)", ("calibration", "calibration", "AUROC"), secondary=True,
           tip="How well the confidence separates right from wrong answers (0.5: not at all)."),
    Column("unparsed", "Unparsed", ("rates", "unparsed"), always=True, better="lower",
           tip="Answers that could not be read (counted wrong).", items=(("verdict", "unparsed"),)),
    # declined answers (shown where some run has them), and declining where the image cannot answer (probes)
    Column("abstained", "Abstained", ("rates", "abstained"), better="lower",
           tip="Answers that declined to answer (counted wrong in accuracy).", items=(("verdict", "abstained"),)),
    Column("appropriate_abstention", "Abstains when unanswerable",
           ("calibration", "abstention", "appropriate_abstention"),
           tip="Share of the unanswerable probes (evidence removed or replaced) where the model declined."),
    # answers read by the LLM judge (``medr2 score --judge``), counted apart from those the reader read
    Column("judged", "Judged", ("rates", "judged"), better="lower", nonzero=True,
           tip="Answers the reader left unparsed that the LLM judge read (scored as it read them; see its κ)."),
    Column("truncated", "Truncated", ("rates", "truncated"), better="lower",  # not in older runs
           tip="Answers cut off by the token limit (counted wrong).", items=(("verdict", "truncated"),)),
    Column("error", "Error", ("rates", "error"), always=True, better="lower",
           tip="Requests that failed (counted wrong).", items=(("verdict", "error"),)),
)
HEADLINE_KEYS = ("overall", "vrs", "blind_gap", "mislead_drop", "mfr")
BASELINE_PREFIX = "baseline:"


def lookup(mode_metrics: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any] | None:
    node: Any = mode_metrics
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node if isinstance(node, dict) and "value" in node else None


@dataclass(frozen=True)
class Row:
    run: str
    model: str
    mode: str
    cells: dict[str, dict[str, Any] | None]


@dataclass(frozen=True)
class Leaderboard:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    # per run (full name): the split(s) scored and the bootstrap's unit (:func:`medr2.reporting.fmt.scope_text`)
    scopes: Scopes = Scopes({})

    def contenders(self) -> list[Row]:
        """The rows that can be "best": the models, not the reference baselines (oracle, random, ...), unless
        every row is a baseline."""
        models = [r for r in self.rows if not r.model.startswith(BASELINE_PREFIX)]
        return models or list(self.rows)

    def best(self, key: str) -> set[int]:
        """Indices (into ``rows``) of the contenders with the best value of column ``key`` among the rows of the
        same mode (a blind row is not compared with an independent one); ties are all marked, and nothing where
        fewer than two contenders of a mode have a value or all of them tie (nothing to tell apart)."""
        col = next(c for c in self.columns if c.key == key)
        ok = {id(r) for r in self.contenders()}
        out: set[int] = set()
        for mode in dict.fromkeys(r.mode for r in self.rows):
            vals = [(i, self.cell(r, key)["value"]) for i, r in enumerate(self.rows) if id(r) in ok and r.mode == mode]
            vals = [(i, v) for i, v in vals if v is not None]
            top = (max if col.better == "higher" else min)((v for _, v in vals), default=None)
            marked = {i for i, v in vals if v == top}
            if len(vals) >= 2 and len(marked) < len(vals):
                out |= marked
        return out

    def headline(self) -> dict[str, Any] | None:
        """The answer the report opens with: the contender with the best overall accuracy (the independent mode
        where there is one), its accuracy and its reliance measures, each a cell (value, interval, n)."""
        rows = [r for r in self.contenders() if self.cell(r, "overall")["value"] is not None]
        independent = [r for r in rows if r.mode == "independent"]
        rows = independent or rows
        if not rows:
            return None
        top = max(rows, key=lambda r: self.cell(r, "overall")["value"])
        cols = {c.key: c for c in COLUMNS}
        return {"run": top.run, "model": top.model, "mode": top.mode,
                "measures": [{"key": k, "header": cols[k].header, "arrow": cols[k].arrow, "title": cols[k].title,
                              "cell": self.cell(top, k)} for k in HEADLINE_KEYS],
                "of": len(self.contenders()), "baselines_left_out": len(self.rows) - len(self.contenders())}

    def cell(self, row: Row, key: str) -> dict[str, Any]:
        m = row.cells.get(key)
        value, lo, hi, n = metric_parts(m)
        n_cases = m.get("n_cases") if isinstance(m, dict) and isinstance(m.get("n_cases"), int) else None
        low_n = bool(m.get("low_n")) if isinstance(m, dict) and value is not None else False
        return {"value": value, "lo": lo, "hi": hi, "n": n, "n_cases": n_cases, "low_n": low_n,
                "text": fmt_ci(m) + (LOW_N_MARK if low_n else ""), "n_text": fmt_n(n, n_cases)}


# the per-task and per-variant accuracies of metrics.json (``modes[MODE].tasks`` / ``.variants``): a column each in
# ``medr2 view``'s leaderboard (``breakdown_columns``), keyed ``task:NAME`` / ``variant:CODE``
# (metrics block, score column, the cell's path below the name, tip)
BREAKDOWNS = (("tasks", "task", (), "Accuracy on task {} (its items, every variant)."),
              ("variants", "variant", ("acc",), "Accuracy on the items of variant {}."))


def breakdown_columns(runs: list[RunData]) -> tuple[Column, ...]:
    """A column for every task and every variant some run's metrics report, each naming its items."""
    out: list[Column] = []
    for block, field, below, tip in BREAKDOWNS:
        names = sorted({str(k) for run in runs for mm in run.metrics.get("modes", {}).values()
                        if isinstance(mm, dict) and isinstance(mm.get(block), dict) for k in mm[block]})
        out += [Column(f"{field}:{n}", n, (block, n, *below), tip=tip.format(n), secondary=True, items=((field, n),))
                for n in names]
    return tuple(out)


def build_leaderboard(runs: list[RunData], extra: tuple[Column, ...] = ()) -> Leaderboard:
    """The leaderboard of ``runs``: :data:`COLUMNS` (a column no run reports left out unless ``always``), then
    ``extra`` columns (``breakdown_columns``) where some run reports them."""
    columns = COLUMNS + extra
    rows = []
    for run in runs:
        for mode, mm in run.metrics.get("modes", {}).items():
            if isinstance(mm, dict):
                rows.append(Row(run.label, run.model_key, mode, {c.key: lookup(mm, c.path) for c in columns}))
    cols = tuple(c for c in columns if c.always or any(
        r.cells[c.key] is not None and (not c.nonzero or (r.cells[c.key] or {}).get("value")) for r in rows))
    return Leaderboard(cols, tuple(rows), Scopes.of_runs({run.label: run.metrics for run in runs}))


def to_json(lb: Leaderboard) -> str:
    data = {
        "scope": dict(lb.scopes.by_run),
        "columns": [{"key": c.key, "header": c.header, "path": ".".join(c.path)} for c in lb.columns],
        "rows": [{"run": r.run, "model": r.model, "mode": r.mode,
                  "metrics": {c.key: lb.cell(r, c.key) for c in lb.columns}} for r in lb.rows],
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _csv_num(v: float | int | None) -> str:
    return "" if v is None else repr(v)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(text: str) -> str:
    """A text cell a spreadsheet will not run: one starting with ``= + - @`` (or a tab / carriage return)
    gets a leading ``'``, unless it is a plain number (``-0.25`` stays a number); line breaks and control
    characters become spaces and bidi controls visible first (:func:`~medr2.reporting.fmt.cell_text`), so a bare CR
    cannot start a new row holding a formula."""
    text = cell_text(text)
    if not text.startswith(_FORMULA_START):
        return text
    try:
        float(text)
    except ValueError:
        return "'" + text
    return text if text.strip() == text else "'" + text


def to_csv(lb: Leaderboard) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    header = ["run", "model", "mode"]
    for c in lb.columns:
        header += [c.key, f"{c.key}_lo", f"{c.key}_hi", f"{c.key}_n", f"{c.key}_n_cases", f"{c.key}_low_n"]
    w.writerow(header)
    for r in lb.rows:
        line = [csv_text(r.run), csv_text(r.model), csv_text(r.mode)]
        for c in lb.columns:
            cell = lb.cell(r, c.key)
            line += [_csv_num(cell["value"]), _csv_num(cell["lo"]), _csv_num(cell["hi"]), _csv_num(cell["n"]),
                     _csv_num(cell["n_cases"]), "true" if cell["low_n"] else "false"]
        w.writerow(line)
    return buf.getvalue()


def _md_value(cell: dict[str, Any]) -> str:
    return f"{cell['text']} ({cell['n_text']})" if cell["n_text"] else cell["text"]


def _md_cell(text: str) -> str:
    return cell_text(text).replace("\\", "\\\\").replace("|", "\\|")


def to_markdown(lb: Leaderboard) -> str:
    header = ["Run", "Model", "Mode"] + [c.header for c in lb.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * len(lb.columns)) + "|"]
    for r in lb.rows:
        cells = [r.run, r.model, r.mode] + [_md_value(lb.cell(r, c.key)) for c in lb.columns]
        lines.append("| " + " | ".join(_md_cell(x) for x in cells) + " |")
    note = (f"\nScored: {_md_cell(lb.scopes.of())}. Values are accuracies (or rates) with 95% bootstrap intervals "
            f"(resampling the unit named there): `value [lo, hi]`, then (n units, cases); `n/a` where undefined. "
            f"{LOW_N_NOTE}\n")
    return "\n".join(lines) + "\n" + note


def leaderboard_files(lb: Leaderboard) -> dict[str, bytes]:
    """``leaderboard.{md,csv,json}`` by name (published with the rest of the report as one set)."""
    return {"leaderboard.md": to_markdown(lb).encode("utf-8"), "leaderboard.csv": to_csv(lb).encode("utf-8"),
            "leaderboard.json": to_json(lb).encode("utf-8")}


def write_leaderboard(lb: Leaderboard, out_dir: Path) -> dict[str, Path]:
    from medr2.atomic import publish_files

    files = leaderboard_files(lb)
    publish_files(out_dir, files, command="medr2 report")
    return {name.rsplit(".", 1)[1]: out_dir / name for name in files}
