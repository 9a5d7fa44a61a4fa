"""Columnar engines on the scoring workload: DuckDB, Polars, pyarrow compute and pandas (today's metrics).

The joins and group-bys that per-case scoring aggregates need, on a scored run of ``bench/bench_score.py``
(its ``scores.parquet`` and its bench's ``items.parquet``):

1. **join**: every scored row joined with its item (case id, parent id) on ``item_id``;
2. **pair**: every variant row joined with its parent's row of the same mode (``parent_id, mode`` =
   ``item_id, mode``), keeping the parent's verdict;
3. **cells**: per (case, mode, variant) the counts a case bootstrap of accuracy, paired delta and McNemar
   needs: rows, right, right only on the variant, right only on the parent.

Each engine runs in a fresh process (``--engine NAME``): CPU seconds of the three steps (median over
repeats) and the process's peak RSS, with the result rows' checksum so the engines are seen to agree.

    .venv/bin/python bench/bench_engines.py --run /tmp/medr2-score-bench/n1000000/run --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ENGINES = ("duckdb", "polars", "pyarrow", "pandas")


def _inputs(run: Path) -> tuple[Any, Any]:
    import pyarrow.parquet as pq

    bench = run.parent / "bench"
    scores = pq.read_table(run / "scores.parquet", columns=["item_id", "mode", "variant", "verdict"])
    items = pq.read_table(bench / "items.parquet", columns=["item_id", "case_id", "parent_id"])
    return scores, items


def run_duckdb(scores: Any, items: Any) -> tuple[int, float]:
    import duckdb

    con = duckdb.connect()
    con.execute("SET threads = 2")
    con.register("scores", scores)
    con.register("items", items)
    con.execute("CREATE TEMP TABLE j AS SELECT s.item_id, s.mode, s.variant, s.verdict = 'correct' AS ok, "
                "i.case_id, i.parent_id FROM scores s JOIN items i USING (item_id)")
    con.execute("CREATE TEMP TABLE p AS SELECT v.*, q.ok AS ok_p FROM j v LEFT JOIN j q "
                "ON v.parent_id = q.item_id AND v.mode = q.mode")
    n, total = con.execute(
        "SELECT COUNT(*), SUM(n + right_ + only_v + only_p) FROM (SELECT case_id, mode, variant, COUNT(*) AS n, "
        "SUM(ok::INT) AS right_, SUM((ok AND NOT COALESCE(ok_p, FALSE))::INT) AS only_v, "
        "SUM((NOT ok AND COALESCE(ok_p, FALSE))::INT) AS only_p FROM p GROUP BY case_id, mode, variant)").fetchone()
    return int(n), float(total)


def run_polars(scores: Any, items: Any) -> tuple[int, float]:
    import polars as pl

    s = pl.from_arrow(scores)
    i = pl.from_arrow(items)
    assert isinstance(s, pl.DataFrame) and isinstance(i, pl.DataFrame)
    j = s.join(i, on="item_id", how="inner").with_columns((pl.col("verdict") == "correct").alias("ok"))
    par = j.select(pl.col("item_id").alias("parent_id"), "mode", pl.col("ok").alias("ok_p"))
    p = j.join(par, on=["parent_id", "mode"], how="left").with_columns(pl.col("ok_p").fill_null(False))
    cells = p.group_by(["case_id", "mode", "variant"]).agg(
        pl.len().alias("n"), pl.col("ok").sum().alias("right"),
        (pl.col("ok") & ~pl.col("ok_p")).sum().alias("only_v"), (~pl.col("ok") & pl.col("ok_p")).sum().alias("only_p"))
    total = cells.select(pl.sum_horizontal("n", "right", "only_v", "only_p").sum()).item()
    return cells.height, float(total)


def run_pyarrow(scores: Any, items: Any) -> tuple[int, float]:
    import pyarrow as pa
    import pyarrow.compute as pc

    j = scores.join(items, keys="item_id", join_type="inner")
    j = j.append_column("ok", pc.equal(j.column("verdict"), "correct"))
    par = pa.table({"parent_id": j.column("item_id"), "mode": j.column("mode"), "ok_p": j.column("ok")})
    p = j.join(par, keys=["parent_id", "mode"], join_type="left outer")
    ok, ok_p = p.column("ok"), pc.fill_null(p.column("ok_p"), False)
    p = p.set_column(p.column_names.index("ok_p"), "ok_p", ok_p)
    p = p.append_column("only_v", pc.and_(ok, pc.invert(ok_p))).append_column("only_p", pc.and_(pc.invert(ok), ok_p))
    cells = p.group_by(["case_id", "mode", "variant"]).aggregate(
        [("ok", "count"), ("ok", "sum"), ("only_v", "sum"), ("only_p", "sum")])
    total = sum(pc.sum(cells.column(c)).as_py() or 0 for c in ("ok_count", "ok_sum", "only_v_sum", "only_p_sum"))
    return cells.num_rows, float(total)


def run_pandas(scores: Any, items: Any) -> tuple[int, float]:
    s, i = scores.to_pandas(), items.to_pandas()
    j = s.merge(i, on="item_id", how="inner")
    j["ok"] = j["verdict"] == "correct"
    par = j[["item_id", "mode", "ok"]].rename(columns={"item_id": "parent_id", "ok": "ok_p"})
    p = j.merge(par, on=["parent_id", "mode"], how="left")
    p["ok_p"] = p["ok_p"].fillna(False).astype(bool)
    p["only_v"] = p["ok"] & ~p["ok_p"]
    p["only_p"] = ~p["ok"] & p["ok_p"]
    cells = p.groupby(["case_id", "mode", "variant"], sort=False).agg(
        n=("ok", "size"), right=("ok", "sum"), only_v=("only_v", "sum"), only_p=("only_p", "sum"))
    return len(cells), float(cells.to_numpy().sum())


def _child(engine: str, run: Path, repeats: int) -> None:
    fn = globals()[f"run_{engine}"]
    scores, items = _inputs(run)
    cpu: list[float] = []
    wall: list[float] = []
    result: tuple[int, float] = (0, 0.0)
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        result = fn(scores, items)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"engine": engine, "rows_in": scores.num_rows, "cells": result[0], "checksum": result[1],
                      "cpu_s": statistics.median(cpu), "wall_s": statistics.median(wall), "peak_rss_mib": peak}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, required=True, help="a scored run folder of bench/bench_score.py")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--engine", choices=ENGINES, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.engine:
        _child(a.engine, a.run, a.repeats)
        return
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, python "
          f"{platform.python_version()}, load {os.getloadavg()[0]:.1f}", flush=True)
    import duckdb
    import pandas
    import polars
    import pyarrow

    print(f"duckdb {duckdb.__version__}, polars {polars.__version__}, pyarrow {pyarrow.__version__}, "
          f"pandas {pandas.__version__}", flush=True)
    rows = []
    for engine in ENGINES:
        out = subprocess.run([sys.executable, __file__, "--run", str(a.run), "--repeats", str(a.repeats),
                              "--engine", engine], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise SystemExit(f"{engine} failed:\n{out.stderr}")
        row = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(row)
        print(json.dumps(row), flush=True)
    print("\n| engine | rows in | cells out | checksum | median CPU s | median wall s | peak RSS MiB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['engine']} | {r['rows_in']:,} | {r['cells']:,} | {r['checksum']:.0f} | {r['cpu_s']:.2f} "
              f"| {r['wall_s']:.2f} | {r['peak_rss_mib']:.0f} |")


if __name__ == "__main__":
    main()
