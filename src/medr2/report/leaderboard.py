"""The leaderboard: one row per (run, model, mode) with overall, per-stage and key robustness numbers,
each with its 95% interval. Markdown, CSV and JSON carry the same numbers."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medr2.report.fmt import cell_text, fmt_ci, fmt_n, metric_parts
from medr2.report.inputs import RunData

# appended to a value computed from fewer than 10 cases (``low_n`` in metrics.json)
LOW_N_MARK = "†"
LOW_N_NOTE = "† fewer than 10 cases: the interval is unreliable."


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    path: tuple[str, ...]  # inside metrics.json ``modes[MODE]``
    always: bool = False  # shown even when no run has it


# The leaderboard columns, in order. A column no run reports is left out (unless ``always``).
COLUMNS: tuple[Column, ...] = (
    Column("overall", "Overall", ("overall",), always=True),
    # right answer and no contradicted claim, over the clean answers with a rationale (its n says how many)
    Column("grounded_acc", "Grounded acc", ("rationale", "overall", "grounded_acc")),
    Column("s1", "S1 acquisition", ("stages", "1"), always=True),
    Column("s2", "S2 anatomy", ("stages", "2"), always=True),
    Column("s3", "S3 findings", ("stages", "3"), always=True),
    Column("s4", "S4 diagnosis", ("stages", "4"), always=True),
    Column("worst_case", "Worst-case acc", ("consistency", "WorstCaseAcc")),
    Column("flip_rate", "Flip rate", ("consistency", "FlipRate")),
    Column("mislead_drop", "MisleadDrop", ("prompt_reliance", "MisleadDrop")),
    Column("mfr", "MFR", ("prompt_reliance", "MFR")),
    Column("vrs", "VRS", ("visual_reliance", "VRS")),
    Column("blind_gap", "Blind gap", ("visual_reliance", "BlindGap")),
    Column("miou", "mIoU", ("grounding", "all", "mIoU")),
    Column("unparsed", "Unparsed", ("rates", "unparsed"), always=True),
    Column("truncated", "Truncated", ("rates", "truncated")),  # cut off by the token limit (not in older runs)
    Column("error", "Error", ("rates", "error"), always=True),
)


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

    def cell(self, row: Row, key: str) -> dict[str, Any]:
        m = row.cells.get(key)
        value, lo, hi, n = metric_parts(m)
        n_cases = m.get("n_cases") if isinstance(m, dict) and isinstance(m.get("n_cases"), int) else None
        low_n = bool(m.get("low_n")) if isinstance(m, dict) and value is not None else False
        return {"value": value, "lo": lo, "hi": hi, "n": n, "n_cases": n_cases, "low_n": low_n,
                "text": fmt_ci(m) + (LOW_N_MARK if low_n else ""), "n_text": fmt_n(n, n_cases)}


def build_leaderboard(runs: list[RunData]) -> Leaderboard:
    rows = []
    for run in runs:
        for mode, mm in run.metrics.get("modes", {}).items():
            if isinstance(mm, dict):
                rows.append(Row(run.label, run.model_key, mode, {c.key: lookup(mm, c.path) for c in COLUMNS}))
    cols = tuple(c for c in COLUMNS if c.always or any(r.cells[c.key] is not None for r in rows))
    return Leaderboard(cols, tuple(rows))


def to_json(lb: Leaderboard) -> str:
    data = {
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
    characters become spaces and bidi controls visible first (:func:`~medr2.report.fmt.cell_text`), so a bare CR
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
    note = ("\nValues are accuracies (or rates) with 95% bootstrap intervals over cases: `value [lo, hi]`, then "
            f"(n units, cases); `n/a` where undefined. {LOW_N_NOTE}\n")
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
