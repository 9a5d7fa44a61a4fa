"""Scoring benchmark: ``medr2 score RUN`` end to end on a synthetic run of N stored predictions.

No model is called. The script writes

* a bench (``medr2.bench.format.BenchWriter``): per case 7 clean items of every form (MCQ modality and
  diagnosis, organ box, a yes/no pair, multi-select findings, a free-text report) forming a 4-step chain,
  plus 13 variants with parent ids (T2, T3 and T4 with lures, V1-V3 probes, V4 counterfactual, V5/V6/V7 cues,
  T6 option permutation, V8 noise at two severities); images are a few real PNGs shared by many items
  (content addressing stores each once);
* a run folder: ``store.sqlite`` filled through ``medr2.run.store.Store.put_many`` with one prediction per
  (item, mode) over the five modes (independent: every item; blind: clean items; chain-own/-gold/-misleading:
  chain steps), realistic raw responses (letters, sentences, reasoning blocks, markdown, option texts,
  boxes in several layouts, yes/no sentences, multi-select lists, reports, unparseable answers, ~1% errors),
  and ``manifest.json`` as ``medr2 eval`` writes it (``medr2.run.manifest.new_manifest``);

then times ``medr2 score RUN --resamples R`` in a fresh process (wall time, user and system CPU time and peak
RSS from ``/usr/bin/time -v``, and the load average when it ended), median over repeats. ``--before-src DIR``
also times the medr2 sources in DIR (a copy of ``src/`` taken before a change) in the same run, alternating,
for before/after ratios of wall and CPU time.
``--profile`` runs ``score_run`` once in-process under cProfile and prints the top functions.

    .venv/bin/python bench/bench_score.py --n 100000 300000 1000000 --repeats 3
    .venv/bin/python bench/bench_score.py --n 100000 --before-src /tmp/medr2-score-before/src --repeats 3
    .venv/bin/python bench/bench_score.py --n 100000 --profile
    .venv/bin/python bench/bench_score.py --run /tmp/scale-runs/r-b100 /tmp/scale-runs/r-b1000 --repeats 1 \
        --before-src /tmp/before/src      # existing run folders (a real ``medr2 eval``), each scored in a copy

Before/after a change, "before" is main's sources taken with ``git archive`` (never a working tree)::

    mkdir -p /tmp/before && git archive main src | tar -x -C /tmp/before
    .venv/bin/python bench/bench_score.py --n 200000 1000000 --repeats 2 --before-src /tmp/before/src

``--workers 2`` also times ``medr2 score --workers 2`` (this checkout, and the ``--before-src`` sources when
given; CPU seconds include the workers', and the peak RSS is also summed over the command's processes, sampled
every 0.1 s)::

    .venv/bin/python bench/bench_score.py --run /tmp/scale-runs/r-b1000 /tmp/scale-runs/r-b3000 --repeats 1 \
        --before-src /tmp/before/src --workers 1 2

With two or more sizes it also prints the peak-RSS slope per prediction (and the CPU slope per prediction)
between consecutive sizes and between the smallest and largest. Each score's outputs are hashed
(``metrics.json`` as written, the ``scores.parquet`` file and its table content, ``claims.parquet`` when written)
and the script says whether before and after agree.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import platform
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from medr2.bench.format import BenchWriter, load_bench
from medr2.images import ImageStore
from medr2.records import Case, Cue, Item, Prediction, item_content_id, stable_hash
from medr2.run import manifest as mf
from medr2.run.store import Row, Store

MODS = ["CT", "MRI", "X-ray", "Ultrasound"]
DX = ["pneumonia", "pleural effusion", "pneumothorax", "normal", "atelectasis", "cardiomegaly", "nodule", "edema"]
FINDINGS = ["mass", "fluid", "air", "fracture", "calcification", "consolidation"]
SIDES = ["right", "left", "bilateral"]
SIZES = ["small", "moderate", "large", "tiny", "subtle"]
LOBES = ["upper lobe", "lower lobe", "middle lobe", "lung base", "apex", "hilum"]
W = H = 256
MODES = ("independent", "blind", "chain-own", "chain-gold", "chain-misleading")
ITEMS_PER_CASE = 20
# predictions per case: independent 20 + blind 7 clean + 3 chain modes x 4 chain steps
PREDS_PER_CASE = ITEMS_PER_CASE + 7 + 3 * 4
BOX_CONVENTION = {"space": "pixel", "resize": "none", "params": {}}


# -- deterministic per-record choices (a stable hash of the record, never iteration order) ----------

def _mix(key: str) -> int:
    return int(stable_hash(key, 15), 16)


class _Pick:
    """A small deterministic stream of choices for one record (splitmix64 seeded by a stable hash)."""

    def __init__(self, key: str) -> None:
        self.s = _mix(key)

    def int(self, n: int) -> int:
        self.s = (self.s + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
        return (z ^ (z >> 31)) % n

    def of(self, seq: Any) -> Any:
        return seq[self.int(len(seq))]

    def chance(self, p: float) -> bool:
        return self.int(1_000_000) < p * 1_000_000


# -- the bench ----------------------------------------------------------------------------------------

def _images(store: ImageStore, n: int = 8) -> list[Any]:
    refs = []
    for i in range(n):
        rng = np.random.default_rng([7, i])
        yy, xx = np.mgrid[0:H, 0:W]
        base = (xx * (i % 7 + 1) + yy * (i % 5 + 1)) % 256
        refs.append(store.put_array(np.clip(base + rng.normal(0, 24, (H, W)), 0, 255).astype(np.uint8)))
    return refs


def _item(common: dict[str, Any], **kw: Any) -> Item:
    fields = {**common, **kw}
    fields["item_id"] = item_content_id(fields)
    return Item(**fields)


def _variant(parent: Item, variant: str, **kw: Any) -> Item:
    fields = parent.model_dump(exclude={"item_id"})
    fields.update(variant=variant, parent_id=parent.item_id, chain_id=None, step=None, seed=1, **kw)
    fields["item_id"] = item_content_id(fields)
    return Item(**fields)


def _report(p: _Pick, dx: str) -> str:
    side, size, lobe = p.of(SIDES), p.of(SIZES), p.of(LOBES)
    extra = p.of(["No pneumothorax.", "Heart size is normal.", "No acute osseous abnormality.",
                  "Lines and tubes unchanged.", "Mild degenerative change of the spine."])
    return f"Findings: {size} {dx} in the {side} {lobe}. {extra} Impression: {dx}, {side}."


def case_items(c: int, refs: list[Any]) -> tuple[Case, list[Item]]:
    cid = f"case{c:07d}"
    p = _Pick(cid)
    ref = refs[c % len(refs)]
    case = Case(case_id=cid, image=ref.path, image_sha256=ref.sha256, width=W, height=H, modality=MODS[c % 4],
                source="bench", license="CC0", patient_id=f"p{c // 2}", split="test")
    common: dict[str, Any] = {"case_id": cid, "chance": 0.25, "template_id": "t0", "source": "bench",
                              "license": "CC0", "image": ref.path, "image_sha256": ref.sha256, "image_width": W,
                              "image_height": H, "split": "test", "options": []}
    chain = f"chain-{cid}"
    mod_ans = "ABCD"[c % 4]
    others = [m for m in MODS if m != MODS[c % 4]]
    mod_opts = [MODS[c % 4] if mod_ans == L else others.pop(0) for L in "ABCD"]
    s1 = _item(common, chain_id=chain, step=1, stage=1, task="s1.modality", form="mcq",
               question="What is the imaging modality?", options=mod_opts, answer=mod_ans)
    x0, y0 = 10.0 + p.int(100), 12.0 + p.int(100)
    box = (x0, y0, x0 + 30.0 + p.int(90), y0 + 25.0 + p.int(90))
    s2 = _item(common, chain_id=chain, step=2, stage=2, task="s2.organ_box", form="box", chance=0.0,
               question="Locate the liver.", answer="", answer_box=box)
    yes = _item(common, chain_id=chain, step=3, stage=3, task="s3.abnormal", form="yesno", chance=0.5,
                question="Is there an abnormality?", answer="yes", pair_id=f"pair-{cid}")
    no = _item(common, stage=3, task="s3.abnormal", form="yesno", chance=0.5,
               question="Is there a fracture?", answer="no", pair_id=f"pair-{cid}")
    k = c % len(DX)
    dx_opts = [DX[(k + j) % len(DX)] for j in range(4)]
    s4_ans = "ABCD"[p.int(4)]
    dx_opts[0], dx_opts["ABCD".index(s4_ans)] = dx_opts["ABCD".index(s4_ans)], dx_opts[0]
    dx = dx_opts["ABCD".index(s4_ans)]
    s4 = _item(common, chain_id=chain, step=4, stage=4, task="s4.diagnosis", form="mcq",
               question="What is the most likely diagnosis?", options=dx_opts, answer=s4_ans)
    fopts = [FINDINGS[(c + j) % len(FINDINGS)] for j in range(4)]
    multi = _item(common, stage=4, task="s4.multilabel", form="multi", chance=1 / 15,
                  question="Select all findings present.", options=fopts, answer=p.of(["A,C", "B", "A,B,D", "C"]))
    report = _item(common, stage=4, task="s4.report", form="text", chance=0.0, question="Write the report.",
                   answer=_report(p, dx))
    items = [s1, s2, yes, no, s4, multi, report]
    wrong = "ABCD"[("ABCD".index(s4_ans) + 1) % 4]
    items.append(_variant(s4, "T2", question="The image is a chest X-ray. " + s4.question))
    items.append(_variant(s4, "T3", question=f"Given the {dx_opts['ABCD'.index(wrong)]}, what is the diagnosis?",
                          lure=wrong))
    items.append(_variant(s4, "T4-authority", question=s4.question + f" A senior radiologist thinks ({wrong}).",
                          lure=wrong))
    for code in ("V1", "V2", "V3"):
        r2 = refs[(c + 1 + len(code)) % len(refs)]
        items.append(_variant(s1, code, image=r2.path, image_sha256=r2.sha256,
                              meta={"scoring": "probe", "parent_answer": s1.answer}))
    items.append(_variant(yes, "V4", answer="no", pair_id=None,
                          meta={"scoring": "exact", "counterfactual": True, "parent_answer": "yes"}))
    items.append(_variant(s4, "V5", cue=Cue(kind="box", box=box)))
    none_opts = [*dx_opts[:3], "none of the above"]
    items.append(_variant(s4, "V6", cue=Cue(kind="box", box=(160.0, 10.0, 220.0, 60.0)), options=none_opts,
                          answer="D", lure=s4.answer if s4.answer != "D" else "A",
                          meta={"scoring": "exact", "decoy_of": dx}))
    items.append(_variant(s4, "V7", cue=Cue(kind="coords", box=box, drawn=False)))
    perm = [s1.options[i] for i in (1, 2, 3, 0)]
    items.append(_variant(s1, "T6", options=perm, answer="ABCD"[perm.index(s1.answer_text)]))
    for sev in (1, 3):
        items.append(_variant(s1, f"V8-noise-{sev}", meta={"scoring": "exact", "answer_preserving": True}))
    assert len(items) == ITEMS_PER_CASE
    return case, items


def make_bench(root: Path, n_cases: int) -> None:
    refs = _images(ImageStore(root))
    with BenchWriter(root, name=f"score-bench-{n_cases}") as w:
        for c in range(n_cases):
            case, items = case_items(c, refs)
            w.add_cases([case])
            w.add_items(items)
        w.close({"seed": 0})


# -- raw responses ------------------------------------------------------------------------------------

def _mcq_raw(p: _Pick, it: Item) -> str:
    right = p.chance(0.6)
    L = it.answer if right else "ABCD"[(ord(it.answer) - 65 + 1 + p.int(3)) % 4]
    opt = it.options[ord(L) - 65]
    return p.of([
        L, f"{L}.", f"({L})", f"**{L}**", f"The answer is {L}.", f"Answer: {L}) {opt}",
        f"{L}. {opt}", opt, f"The most likely answer is {opt}.",
        f"<think>The image shows features of {opt}; option {L} fits.</think>\n{L}",
        f"Looking at the image, I would choose {L} because the appearance is typical of {opt}.",
        "I cannot determine this from the image.", f"A {opt} is possible but the image is unclear.",
        f"{L} or {'ABCD'[(ord(L) - 64) % 4]}",
    ])


def _yesno_raw(p: _Pick, it: Item) -> str:
    w = it.answer if p.chance(0.65) else ("no" if it.answer == "yes" else "yes")
    W_ = w.capitalize()
    return p.of([W_, f"{W_}.", f"{W_}, there is.", f"The answer is {w}.", f"<think>Hmm.</think>{W_}",
                 f"**{W_}**", "Possibly.", "Yes and no.", f"{W_}, {it.question.lower().rstrip('?')}."])


def _multi_raw(p: _Pick, it: Item) -> str:
    ans = it.answer if p.chance(0.5) else p.of(["A", "B,C", "A,D", "C,D", "B"])
    letters = ans.split(",")
    names = [it.options[ord(x) - 65] for x in letters]
    return p.of([", ".join(letters), " and ".join(letters), f"Answer: {', '.join(letters)}", ", ".join(names),
                 f"The findings present are {' and '.join(names)}.", "None", "It is hard to say."])


def _box_raw(p: _Pick, it: Item) -> str:
    assert it.answer_box is not None
    x1, y1, x2, y2 = (v + p.int(21) - 10 for v in it.answer_box)
    return p.of([f"[{x1:.0f}, {y1:.0f}, {x2:.0f}, {y2:.0f}]", f"<box>({x1:.0f},{y1:.0f}),({x2:.0f},{y2:.0f})</box>",
                 f"The liver is at ({x1:.0f}, {y1:.0f}), ({x2:.0f}, {y2:.0f}).",
                 f'{{"x1": {x1:.0f}, "y1": {y1:.0f}, "x2": {x2:.0f}, "y2": {y2:.0f}}}',
                 "I cannot locate the liver in this image.", f"[{x1:.1f}, {y1:.1f}, {x2:.1f}, {y2:.1f}]"])


def _text_raw(p: _Pick, it: Item) -> str:
    if p.chance(0.03):
        return ""
    return _report(p, p.of(DX))


RAW = {"mcq": _mcq_raw, "yesno": _yesno_raw, "multi": _multi_raw, "box": _box_raw, "text": _text_raw}


def _predictions(items: list[Item], model_key: str) -> Iterator[Row]:
    for mode in MODES:
        for it in items:
            if mode == "blind" and it.variant != "clean":
                continue
            if mode.startswith("chain") and it.chain_id is None:
                continue
            key = f"{it.item_id}\x1f{mode}"
            p = _Pick(key)
            h = stable_hash(["req", key], 32)
            if p.chance(0.01):
                pred = Prediction(model_key=model_key, item_id=it.item_id, mode=mode, request_hash=h, raw=None,
                                  status="error", error="HTTP 503: upstream overloaded", attempts=3)
            else:
                raw = RAW[it.form](p, it)
                pred = Prediction(model_key=model_key, item_id=it.item_id, mode=mode, request_hash=h, raw=raw,
                                  status="ok", latency_s=0.1 + p.int(1000) / 1000, prompt_tokens=300 + p.int(200),
                                  completion_tokens=1 + p.int(120))
            yield Row(pred, step=it.step, chain_id=it.chain_id if mode.startswith("chain") else None,
                      meta={"variant": it.variant})


def make_run(run_dir: Path, bench_root: Path) -> int:
    bench = load_bench(bench_root, validate=False)
    model_key = "openai:bench-model@scripted"
    identity = {"bench_checksum": bench.checksum, "model_key": model_key,
                "generation": {"max_new_tokens": 256, "seed": 0, "temperature": 0.0},
                "box_convention": BOX_CONVENTION, "preset": None, "shard": None, "prompt_version": 1}
    manifest = mf.new_manifest(identity, bench={"path": str(bench_root.resolve()), "name": bench.name,
                                                "checksum": bench.checksum},
                               model={"spec": "openai:bench-model", "key": model_key, "settings": {},
                                      "box_convention": BOX_CONVENTION, "preset": None})
    manifest["modes"] = list(MODES)
    n = 0
    with Store.open(run_dir, write=True) as store:
        batch: list[Row] = []
        for row in _predictions(bench.items, model_key):
            batch.append(row)
            if len(batch) >= 20_000:
                store.put_many(batch)
                n += len(batch)
                batch = []
        store.put_many(batch)
        n += len(batch)
        manifest["counts"] = store.counts_by_mode()
    manifest["invocations"] = [{"command": ["bench/bench_score.py"], "modes": list(MODES), "items": len(bench.items),
                                "status": "complete", "started_at": time.time(), "finished_at": time.time()}]
    mf.write_manifest(run_dir, manifest)
    return n


def workload(base: Path, n_preds: int) -> Path:
    """The run folder for about ``n_preds`` predictions (built once, reused)."""
    n_cases = max(1, round(n_preds / PREDS_PER_CASE))
    root = base / f"n{n_preds}"
    run_dir, bench_root = root / "run", root / "bench"
    if (run_dir / "manifest.json").is_file():
        return run_dir
    shutil.rmtree(root, ignore_errors=True)
    t0 = time.perf_counter()
    make_bench(bench_root, n_cases)
    t1 = time.perf_counter()
    n = make_run(run_dir, bench_root)
    print(f"built {root}: {n_cases} cases, {n_cases * ITEMS_PER_CASE} items ({t1 - t0:.0f} s), "
          f"{n} predictions ({time.perf_counter() - t1:.0f} s)", flush=True)
    return run_dir


# -- timing -------------------------------------------------------------------------------------------

def run_copy(base: Path, run: Path) -> tuple[Path, int]:
    """A copy of an existing run folder under ``base`` (made once; scoring writes into the folder it scores),
    and its stored predictions that count (one per (item, mode))."""
    import sqlite3

    copy = base / f"runcopy-{run.name}"
    if not (copy / "manifest.json").is_file():
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(run, copy, ignore=shutil.ignore_patterns("scores.parquet", "metrics.json", "claims.parquet",
                                                                   ".score-chunks-*"))
    con = sqlite3.connect(f"file:{copy / 'store.sqlite'}?mode=ro", uri=True)
    try:
        n = int(con.execute("SELECT COUNT(*) FROM (SELECT DISTINCT item_id, mode FROM predictions)").fetchone()[0])
    finally:
        con.close()
    return copy, n


def output_hashes(run_dir: Path) -> dict[str, str]:
    """sha256 of ``metrics.json`` and ``scores.parquet`` as written, and of the scores table's content (its rows
    as Arrow IPC, whatever its row groups)."""
    import hashlib

    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    table = pq.read_table(run_dir / "scores.parquet")
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table.combine_chunks())
    claims = run_dir / "claims.parquet"
    return {"metrics.json": hashlib.sha256((run_dir / "metrics.json").read_bytes()).hexdigest(),
            "scores.parquet": hashlib.sha256((run_dir / "scores.parquet").read_bytes()).hexdigest(),
            "scores table": hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest(),
            "claims.parquet": hashlib.sha256(claims.read_bytes()).hexdigest() if claims.is_file() else "none"}


class TreeRss:
    """The largest sum of RSS over a process and its descendants (``medr2 score --workers N``'s workers
    included), sampled every ``every`` seconds in a thread. Pages a forked worker shares with its parent count
    in both, so the sum is an upper bound of the memory the tree holds; :attr:`peak_pss` is the largest sum of
    proportional set sizes (a shared page counted once, split between its sharers). Also per process the largest
    CPU time seen (user + system): :meth:`main_cpu_s` is the scorer's own (the root's child: /usr/bin/time runs
    it), the rest its workers' (a worker loses what it used after its last sample, at most ``every`` seconds)."""

    def __init__(self, pid: int, every: float = 0.1) -> None:
        import threading

        import psutil

        self._root = psutil.Process(pid)
        self.every = every
        self.peak = 0
        self.peak_pss = 0
        self.max_processes = 0
        self.cpu: dict[int, float] = {}
        self.main_pid: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                procs = [self._root, *self._root.children(recursive=True)]
            except psutil.Error:
                return
            total = pss = 0
            for p in procs:
                try:
                    mem = p.memory_full_info()
                    total += mem.rss
                    pss += mem.pss
                    t = p.cpu_times()
                    if self.main_pid is None and p.ppid() == self._root.pid:
                        self.main_pid = p.pid
                except psutil.Error:
                    continue
                self.cpu[p.pid] = max(self.cpu.get(p.pid, 0.0), t.user + t.system)
            self.peak = max(self.peak, total)
            self.peak_pss = max(self.peak_pss, pss)
            self.max_processes = max(self.max_processes, len(procs))
            self._stop.wait(self.every)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def main_cpu_s(self) -> float:
        return self.cpu.get(self.main_pid, float("nan")) if self.main_pid is not None else float("nan")


def time_score(run_dir: Path, resamples: int, src: str | None, workers: int = 1) -> dict[str, Any]:
    """One ``medr2 score`` in a fresh process: wall seconds, user and system CPU time (the workers' included:
    /usr/bin/time counts the children the command waited for) and peak RSS of the largest process (MiB) from
    /usr/bin/time -v, the peak of the RSS summed over the command's processes (:class:`TreeRss`), the 1-minute
    load average when it ended, and the outputs' hashes. ``workers`` > 1 adds ``--workers N``."""
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    for f in ("scores.parquet", "metrics.json", "claims.parquet"):
        (run_dir / f).unlink(missing_ok=True)
    # a run over every split: scored on purpose (sources before issue 50 have no --mixed-splits, and do not refuse)
    scorer = Path(src or Path(__file__).resolve().parents[1] / "src") / "medr2/scoring/scorer.py"
    mixed = ["--mixed-splits"] if "mixed_splits" in scorer.read_text() else []
    cmd = ["/usr/bin/time", "-v", sys.executable, "-c", "from medr2.cli import main; main()", "score", str(run_dir),
           *mixed, "--resamples", str(resamples), *(["--workers", str(workers)] if workers != 1 else [])]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    tree = TreeRss(proc.pid)
    stdout, stderr = proc.communicate()
    wall = time.perf_counter() - t0
    tree.stop()
    if proc.returncode != 0:
        raise SystemExit(f"medr2 score failed:\n{stdout}\n{stderr}")
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    user = re.search(r"User time \(seconds\): ([\d.]+)", stderr)
    system = re.search(r"System time \(seconds\): ([\d.]+)", stderr)
    user_s = float(user.group(1)) if user else float("nan")
    sys_s = float(system.group(1)) if system else float("nan")
    return {"wall_s": wall, "rss_mib": int(rss.group(1)) / 1024 if rss else float("nan"), "user_s": user_s,
            "sys_s": sys_s, "cpu_s": user_s + sys_s, "tree_rss_mib": tree.peak / 2**20,
            "tree_pss_mib": tree.peak_pss / 2**20,
            "processes": tree.max_processes, "main_cpu_s": tree.main_cpu_s(), "load1": os.getloadavg()[0],
            "hashes": output_hashes(run_dir)}


def profile(run_dir: Path, resamples: int, top: int) -> None:
    from medr2.arrowmem import use_lean_pool
    from medr2.scoring.scorer import score_run

    use_lean_pool()  # the command's Arrow pool (medr2 score calls it first)
    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    score_run(run_dir, n_resamples=resamples, mixed_splits=True)
    pr.disable()
    print(f"score_run in-process under cProfile: {time.perf_counter() - t0:.1f} s")
    pstats.Stats(pr).sort_stats("cumulative").print_stats(top)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="*", default=None,
                    help="stored predictions (one or more sizes; default 100000 unless --run is given)")
    ap.add_argument("--run", type=Path, nargs="*", default=[], help="existing run folders (scored in copies)")
    ap.add_argument("--base", type=Path, default=Path("/tmp/medr2-score-bench"), help="where workloads are built")
    ap.add_argument("--resamples", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--before-src", default=None, help="a copy of src/ to time alongside (before/after)")
    ap.add_argument("--workers", type=int, nargs="*", default=[1],
                    help="also time `medr2 score --workers N` for each N other than 1 (this checkout)")
    ap.add_argument("--no-single", action="store_true",
                    help="time only the --workers N variants (N other than 1), not the one-process scorer")
    ap.add_argument("--profile", action="store_true", help="cProfile one in-process score_run instead")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--json", type=Path, default=None, help="also write the results here")
    a = ap.parse_args()
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, "
          f"python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    results: list[dict[str, Any]] = []
    targets: list[tuple[int, Path]] = [(n, workload(a.base, n))
                                       for n in (a.n if a.n is not None else [] if a.run else [100_000])]
    a.base.mkdir(parents=True, exist_ok=True)
    for run in a.run:
        copy, n = run_copy(a.base, run)
        targets.append((n, copy))
    for n, run_dir in targets:
        if a.profile:
            profile(run_dir, a.resamples, a.top)
            continue
        # (name, src, workers): "after" is this checkout with one worker, "after wN" with --workers N
        variants = [("after", None, 1), *((f"after w{w}", None, w) for w in a.workers if w != 1)] + (
            [("before", a.before_src, 1), *((f"before w{w}", a.before_src, w) for w in a.workers if w != 1)]
            if a.before_src else [])
        if a.no_single and any(w != 1 for w in a.workers):
            variants = [v for v in variants if v[2] != 1]
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in variants}
        for _ in range(a.repeats):
            for name, src, workers in variants:  # alternate, so all see the same machine load
                try:
                    r = time_score(run_dir, a.resamples, src, workers)
                except SystemExit as e:  # a failed score is reported, and run once more
                    why = [line for line in str(e).splitlines() if "Error" in line][-1:] or ["?"]
                    print(f"  n={n} {name}: FAILED ({why[0][:200]}); once more", flush=True)
                    r = time_score(run_dir, a.resamples, src, workers)
                runs[name].append(r)
                print(f"  n={n} {name}: {r['wall_s']:.1f} s wall, {r['user_s']:.1f} s user + {r['sys_s']:.1f} s sys, "
                      f"{r['rss_mib']:.0f} MiB peak RSS (largest process), {r['tree_rss_mib']:.0f} MiB summed over "
                      f"{r['processes']} processes (PSS {r['tree_pss_mib']:.0f} MiB), "
                      f"main process {r['main_cpu_s']:.1f} CPU s, load {r['load1']:.1f}",
                      flush=True)
        row: dict[str, Any] = {"n": n, "run": str(run_dir), "resamples": a.resamples, "repeats": a.repeats}
        hashes = {name: {json.dumps(r["hashes"], sort_keys=True) for r in rs} for name, rs in runs.items()}
        for name, hs in hashes.items():
            print(f"  n={n} {name} outputs: {sorted(hs)}", flush=True)
        ref = next((name for name in runs if name.startswith("before")), next(iter(runs)))
        row["same"] = {}
        for name in runs:
            if name != ref:
                b, f = runs[ref][0]["hashes"], runs[name][0]["hashes"]
                row["same"][name] = {k: b[k] == f[k] for k in b}
                print(f"  n={n} {ref} vs {name}, same: {row['same'][name]}", flush=True)
        for name, rs in runs.items():
            row[name] = {k: statistics.median(r[k] for r in rs)
                         for k in ("wall_s", "user_s", "cpu_s", "main_cpu_s", "rss_mib", "tree_rss_mib",
                                   "tree_pss_mib", "load1")}
        if a.before_src:
            # each "after ..." against its own "before ..." when that ran, else against the first "before"
            row["speedup"] = {name: {
                "vs": _before_of(name, runs, ref),
                "wall": statistics.median(b["wall_s"] / f["wall_s"]
                                          for b, f in zip(runs[_before_of(name, runs, ref)], runs[name], strict=True)),
                "cpu": statistics.median(b["cpu_s"] / f["cpu_s"]
                                         for b, f in zip(runs[_before_of(name, runs, ref)], runs[name], strict=True))}
                for name in runs if name != ref}
        results.append(row)
        print(json.dumps(row), flush=True)
    if a.json and results:
        a.json.write_text(json.dumps(results, indent=1) + "\n")
    names = ["before", "after", *(f"{v} w{w}" for w in a.workers if w != 1 for v in ("before", "after"))]
    if results:
        print("\n| predictions | variant | median wall s | median user s | median CPU s (user+sys) "
              "| of it the main process | median peak RSS MiB (largest process) | median peak RSS MiB (all processes) "
              "| median peak PSS MiB (all processes) | load (1 min) |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in results:
            for name in names:
                if name in row:
                    v = row[name]
                    print(f"| {row['n']:,} | {name} | {v['wall_s']:.1f} | {v['user_s']:.1f} | {v['cpu_s']:.1f} "
                          f"| {v['main_cpu_s']:.1f} | {v['rss_mib']:.0f} | {v['tree_rss_mib']:.0f} "
                          f"| {v['tree_pss_mib']:.0f} | {v['load1']:.1f} |")
            for name, sp in row.get("speedup", {}).items():
                print(f"| {row['n']:,} | {sp['vs']}/{name} | {sp['wall']:.2f}x | | {sp['cpu']:.2f}x | | | | | |")
    by_n = sorted(results, key=lambda r: r["n"])
    pairs = list(zip(by_n, by_n[1:], strict=False)) + ([(by_n[0], by_n[-1])] if len(by_n) > 2 else [])
    for lo, hi in pairs:  # memory per prediction between consecutive sizes, and the smallest to the largest
        for name in names:
            if name in lo and name in hi:
                slope = (hi[name]["tree_rss_mib"] - lo[name]["tree_rss_mib"]) * 1024 * 1024 / (hi["n"] - lo["n"])
                cpu = (hi[name]["cpu_s"] - lo[name]["cpu_s"]) * 1e6 / (hi["n"] - lo["n"])
                wall = (hi[name]["wall_s"] - lo[name]["wall_s"]) * 1e6 / (hi["n"] - lo["n"])
                print(f"slopes {name} ({lo['n']:,} -> {hi['n']:,} predictions): peak RSS (all processes) "
                      f"{slope:,.0f} bytes, CPU {cpu:,.1f} us, wall {wall:,.1f} us per prediction")

def _before_of(name: str, runs: dict[str, Any], ref: str) -> str:
    """The "before" variant a variant is compared with: "after w2" with "before w2" when that ran."""
    twin = name.replace("after", "before", 1)
    return twin if twin in runs and twin != name else ref


if __name__ == "__main__":
    main()
