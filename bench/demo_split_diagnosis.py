"""Why the demo's tiny VLM does not beat the text prior (issue #18 item 2): what the test split asks for.

Two questions, on a built bench (e.g. the demo's ``DIR/bench``):

1. ``seen``: per task, the share of test clean items whose gold answer (the option's text, or yes/no) is
   ever a gold answer of that task in the train split. An answer never seen in training cannot be learned
   from the train split, image or not.
2. ``probe`` (``--probe SIZE:TASK ...``): does the image carry the answer at a given input size? A
   logistic-regression probe on the image resized to SIZE x SIZE (bicubic, as the tiny model's processor
   resizes; pixels plus pooled local roughness), trained on the train split's clean items of TASK and
   evaluated on the test split's (the highest-scoring offered option), beside the train-frequency prior
   on the same items.
3. ``options`` (always): per test MCQ task, the share of items whose gold option is the **only** offered
   option that is ever a train gold answer of the task: there the options alone give the answer away to a
   model of the train answers (what the ``prior`` baseline reads).
4. ``--runs NAME=RUN ...`` (scored runs on this bench, e.g. the demo's ``DIR/runs/tiny-flat``): per model, the
   clean ``independent`` accuracy per task beside the first run's (give ``prior`` first), the unparsed share,
   and what the unparsed MCQ answers are: a train answer of the task that is not among the options shown, a
   train answer of another task, or other text.

    python bench/demo_split_diagnosis.py DIR/bench [--probe 32:s1.modality 96:s1.artefact ...]
        [--runs prior=DIR/runs/prior tiny-flat=DIR/runs/tiny-flat]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq


def gold(row: Any) -> str:
    return str(json.loads(row.options)[ord(row.answer) - 65]) if row.form == "mcq" else str(row.answer)


def clean_items(bench: Path) -> Any:
    cols = ["item_id", "stage", "task", "form", "options", "answer", "variant", "split", "image", "source"]
    t = pq.read_table(bench / "items.parquet", columns=cols).to_pandas()
    t = t[(t.variant == "clean") & t.split.isin(["train", "test"])]
    return t.assign(gold=[gold(r) for r in t.itertuples()])


def seen_table(t: Any) -> None:
    train, test = t[t.split == "train"], t[t.split == "test"]
    seen = set(zip(train.task, train.gold, strict=True))
    test = test.assign(seen=[(a, b) in seen for a, b in zip(test.task, test.gold, strict=True)])
    print(f"test clean items {len(test)}; gold answer seen in train (same task): {test.seen.mean():.2f}")
    print(test.groupby(["stage", "task"]).agg(n=("seen", "size"), seen=("seen", "mean")).round(2).to_string())


class Features:
    def __init__(self, bench: Path) -> None:
        self.bench = bench
        self.decoded: dict[str, Any] = {}

    def __call__(self, path: str, size: int) -> np.ndarray:
        from PIL import Image

        from medr2.images import load_image

        if path not in self.decoded:
            self.decoded[path] = Image.fromarray(load_image(self.bench / path, mode="RGB"))
        a = np.asarray(self.decoded[path].resize((size, size), Image.BICUBIC), dtype=np.float32) / 255.0
        g = a.mean(2)
        lap = np.abs(4 * g[1:-1, 1:-1] - g[:-2, 1:-1] - g[2:, 1:-1] - g[1:-1, :-2] - g[1:-1, 2:])
        h = lap.shape[0] // 4
        pooled = lap[:h * 4, :h * 4].reshape(4, h, 4, h).mean((1, 3)).ravel()
        return np.concatenate([a.ravel(), pooled * 10, [g.mean(), g.std(), lap.mean() * 10]])


def probe(t: Any, feats: Features, size: int, task: str) -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    d = t[t.task == task]
    tr, te = d[d.split == "train"], d[d.split == "test"]
    x_tr = np.stack([feats(p, size) for p in tr.image])
    x_te = np.stack([feats(p, size) for p in te.image])
    scaler = StandardScaler().fit(x_tr)
    clf = LogisticRegression(max_iter=2000, C=0.1).fit(scaler.transform(x_tr), list(tr.gold))
    proba, classes = clf.predict_proba(scaler.transform(x_te)), list(clf.classes_)
    freq = Counter(tr.gold)
    right, prior_right = [], []
    for r, p in zip(te.itertuples(), proba, strict=True):
        opts = json.loads(r.options) if r.form == "mcq" else ["yes", "no"]
        scores = [p[classes.index(o)] if o in classes else -1.0 for o in opts]
        right.append(opts[int(np.argmax(scores))] == r.gold)
        prior_right.append(max(opts, key=lambda o: freq.get(o, 0)) == r.gold)
    print(f"{size:4d} {task:18s} train {len(tr):3d} test {len(te):3d} probe {np.mean(right):.2f} "
          f"prior {np.mean(prior_right):.2f}", flush=True)


def options_table(t: Any) -> None:
    train, test = t[t.split == "train"], t[t.split == "test"]
    answers: dict[str, set[str]] = {}
    for task, g in zip(train.task, train.gold, strict=True):
        answers.setdefault(task, set()).add(g)
    mcq = test[test.form == "mcq"]
    only = []
    for r in mcq.itertuples():
        seen = [o for o in json.loads(r.options) if o in answers.get(r.task, set())]
        only.append(seen == [r.gold])
    mcq = mcq.assign(only=only)
    print(f"test MCQ items {len(mcq)}; the gold option is the only offered train answer of its task: "
          f"{mcq.only.mean():.2f}")
    print(mcq.groupby(["stage", "task"]).agg(n=("only", "size"), only=("only", "mean")).round(2).to_string())


def runs_table(t: Any, bench: Path, runs: list[str]) -> None:
    import sqlite3

    train = t[t.split == "train"]
    answers: dict[str, set[str]] = {}
    for task, g in zip(train.task, train.gold, strict=True):
        answers.setdefault(task, set()).add(g.lower())
    every = set().union(*answers.values())
    options = dict(zip(t.item_id, t.options, strict=True))
    per_task = []
    for spec in runs:
        name, run = spec.split("=", 1)
        s = pq.read_table(Path(run) / "scores.parquet",
                          columns=["item_id", "task", "stage", "form", "variant", "mode", "verdict"]).to_pandas()
        s = s[(s["mode"] == "independent") & (s.variant == "clean") & s.item_id.isin(options.keys())]
        with sqlite3.connect(f"file:{Path(run) / 'store.sqlite'}?mode=ro", uri=True) as con:
            raw = dict(con.execute("SELECT item_id, raw FROM predictions WHERE mode = 'independent'").fetchall())
        kinds: Counter[str] = Counter()
        for iid, task in zip(s.item_id[(s.verdict == "unparsed") & (s.form == "mcq")],
                             s.task[(s.verdict == "unparsed") & (s.form == "mcq")], strict=True):
            text = (raw.get(iid) or "").strip().rstrip(".").lower()
            if text in answers.get(task, set()) and text not in [o.lower() for o in json.loads(options[iid])]:
                kinds["a train answer of the task, not among the options"] += 1
            elif text in every:
                kinds["a train answer of another task"] += 1
            else:
                kinds["other text"] += 1
        n_mcq = int((s.form == "mcq").sum())
        print(f"{name}: clean items {len(s)}, unparsed {float((s.verdict == 'unparsed').mean()):.2f}; "
              f"unparsed MCQ answers {sum(kinds.values())} of {n_mcq}: {dict(kinds)}")
        per_task.append(s.assign(right=s.verdict == "correct", unparsed=s.verdict == "unparsed")
                        .groupby(["stage", "task"]).agg(n=("right", "size"), **{
                            f"{name} acc": ("right", "mean"), f"{name} unparsed": ("unparsed", "mean")}))
    if per_task:
        table = per_task[0]
        for other in per_task[1:]:
            table = table.join(other.drop(columns="n"), how="outer")
        print(table.round(2).to_string())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench", type=Path)
    ap.add_argument("--probe", nargs="*", default=[], help="SIZE:TASK, e.g. 32:s1.modality")
    ap.add_argument("--runs", nargs="*", default=[], help="NAME=RUN_DIR, scored runs on this bench (prior first)")
    a = ap.parse_args()
    t = clean_items(a.bench)
    seen_table(t)
    options_table(t)
    runs_table(t, a.bench, a.runs)
    feats = Features(a.bench)
    for spec in a.probe:
        size, task = spec.split(":", 1)
        probe(t, feats, int(size), task)


if __name__ == "__main__":
    main()
