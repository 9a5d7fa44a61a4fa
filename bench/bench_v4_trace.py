"""What V4's removal costs per image, step by step, side by side in one run (issue 40, fix40g).

Builds the sample source (``--cases`` cases, no variants) in a temporary folder, then for every case with lesion
masks times, in CPU seconds of this process: the removal region with the fixed 1 % dilation alone (the region
before fix40g), the region covering each lesion's measured halo (``visual.lesion_removal_region``), one fill
(``inpaint.inpaint``) of that region, and the trace check of the filled image (``trace.removal_traces``). Prints the
median milliseconds per image of each step, the totals, and how many first fills pass the check.

    python bench/bench_v4_trace.py --cases 60 --seed 5151
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from PIL import Image
from scipy import ndimage

from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.perturb.inpaint import inpaint
from medr2.perturb.trace import removal_traces
from medr2.perturb.visual import lesion_removal_region, tissue_mask

T = TypeVar("T")


def _timed(fn: Callable[..., T], *args: Any) -> tuple[T, float]:
    t0 = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t0


def _check(after: np.ndarray, region: np.ndarray) -> list[Any]:
    return removal_traces(after, region, tissue_mask(after))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--seed", type=int, default=5151)
    args = ap.parse_args()
    steps: dict[str, list[float]] = {"fixed region": [], "halo region": [], "fill": [], "trace check": []}
    passed = 0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "bench"
        build_bench("sample", root, seed=args.seed, n_cases=args.cases, variants="", workers=1)
        bench = load_bench(root)
        for case in bench.cases:
            masks = [np.asarray(Image.open(root / f.mask)) > 0 for f in case.findings if f.mask]
            if not masks or len(masks) != len(case.findings):
                continue
            arr = np.asarray(Image.open(root / case.image))
            dilate = max(2, round(0.01 * min(case.width, case.height)))
            union = np.logical_or.reduce(masks)
            _, t = _timed(ndimage.binary_dilation, union, None, dilate)
            steps["fixed region"].append(t)
            region, t = _timed(lesion_removal_region, masks, arr, dilate)
            steps["halo region"].append(t)
            after, t = _timed(inpaint, arr, region, np.random.default_rng(0))
            steps["fill"].append(t)
            traces, t = _timed(_check, after, region)
            steps["trace check"].append(t)
            passed += not any(tr.failed() for tr in traces)
    n = len(steps["fill"])
    print(f"images with lesion masks: {n} (sample, seed {args.seed}, {args.cases} cases)")
    print(f"{'step':<14} {'median ms':>10} {'total CPU s':>12}")
    for name, ts in steps.items():
        print(f"{name:<14} {1000 * statistics.median(ts):>10.1f} {sum(ts):>12.2f}")
    before = statistics.median(steps["fixed region"]) + statistics.median(steps["fill"])
    after_ = statistics.median(steps["halo region"]) + statistics.median(steps["fill"]) + statistics.median(
        steps["trace check"])
    print(f"per draw, median: fixed region + fill {1000 * before:.1f} ms; halo region + fill + check "
          f"{1000 * after_:.1f} ms ({after_ / before:.1f}x)")
    print(f"first fills that pass the trace check: {passed} of {n}")


if __name__ == "__main__":
    main()
