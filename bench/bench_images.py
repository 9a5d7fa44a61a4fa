"""Where a bench's image bytes go, and what PNG encoder settings cost on its real images.

``--breakdown BENCH`` attributes every file of ``BENCH/images/`` to the kinds of record that reference
it: case originals, masks (structures and findings), cue renders of clean items, and each variant
code (V1..V9; V8 also per degradation kind; text variants T1..T8 that reuse their parent's image).
A file referenced by several kinds is counted once, under the first kind in that order, and the
number of files shared with a later kind is printed. Images a bench defers (``renders.parquet``, not in
``images/`` until first use) are counted per kind apart, with the size of ``renders.parquet``. It also
counts files stored twice: byte-identical
(same sha256 under two names, impossible for a content-addressed store unless a name lies) and
pixel-identical (same decoded array and mode under two names: bytes that a deterministic encoder
would have made equal). Sizes are apparent bytes and allocated bytes (4 KiB blocks on this disk: small
files cost a whole block).

``--png BENCH`` re-encodes a sample of the bench's images, stratified by kind, with each candidate
encoder setting and prints the median encode time per image, total CPU seconds and total bytes,
side by side in one run, and checks that every candidate decodes to the same pixels. The imagecodecs
candidates (libpng, libspng) are measured when ``imagecodecs`` is importable; it is not a medr2
dependency (``pip install --target DIR imagecodecs`` and put DIR on PYTHONPATH).

``--build N [N ...]`` runs ``build_bench('sample', n_cases=N, variants='all', workers=1)`` in a fresh
process per mode, the modes one after the other: ``current`` (``--renders stored``: every image written by
``medr2.images.encode_png``), ``imagecodecs-up3`` (libpng level 3, filter UP; stored) and ``deferred``
(``--renders deferred``, the default: V2/V3/V8/V9 renders encoded and hashed but recorded in
``renders.parquet`` instead of written; same items, ids and hashes as ``current``).
Per build: CPU, wall, the CPU inside the PNG encoders (and the part asked for by V2/V3/V8/V9 renders,
with what hashing their pixels instead would cost), and the bytes on disk (images, plus ``renders.parquet``);
then the current and imagecodecs
builds are compared item by item (matched by what they show and ask, since their ids differ): same
pixels, other pixels, or no counterpart.

    .venv/bin/python bench/bench_images.py --breakdown /tmp/b100 --pixels
    .venv/bin/python bench/bench_images.py --png /tmp/b100 --per-kind 25
    PYTHONPATH=src:/tmp/ic .venv/bin/python bench/bench_images.py --build 100 300 --modes current imagecodecs-up3
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
from PIL import Image

ORDER = ["original", "mask", "cue render (clean items)", "T (text variants)", "V1", "V2", "V3", "V4", "V5",
         "V6", "V7", "V8", "V9", "unreferenced"]


def _kind_of_variant(variant: str) -> str:
    if variant.startswith("T"):
        return "T (text variants)"
    return variant.split("-", 1)[0]


def owners(bench: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """For each image name: the kinds referencing it, and the V8 degradation kinds referencing it."""
    kinds: dict[str, set[str]] = defaultdict(set)
    v8: dict[str, set[str]] = defaultdict(set)
    cases = pq.read_table(bench / "cases.parquet", columns=["case_id", "image", "structures", "findings"])
    case_image: dict[str, str] = {}
    for row in cases.to_pylist():
        case_image[row["case_id"]] = row["image"]
        kinds[Path(row["image"]).name].add("original")
        for col in ("structures", "findings"):
            for region in json.loads(row[col] or "[]"):
                if region.get("mask"):
                    kinds[Path(region["mask"]).name].add("mask")
    pf = pq.ParquetFile(bench / "items.parquet")
    for batch in pf.iter_batches(columns=["case_id", "image", "variant"], batch_size=65536):
        for case_id, image, variant in zip(*(batch.column(i).to_pylist() for i in range(3)), strict=True):
            if not image:
                continue
            name = Path(image).name
            if variant == "clean":
                if image != case_image.get(case_id):
                    kinds[name].add("cue render (clean items)")
                continue
            kind = _kind_of_variant(variant)
            if kind == "T (text variants)" and image == case_image.get(case_id):
                continue  # a text variant shown the original: nothing new stored
            kinds[name].add(kind)
            if kind == "V8":
                v8[name].add(variant.split("-")[1])
    return kinds, v8


def breakdown(bench: Path, pixels: bool) -> None:
    kinds, v8 = owners(bench)
    files = sorted(p for p in (bench / "images").iterdir() if p.suffix == ".png")
    n_cases = pq.ParquetFile(bench / "cases.parquet").metadata.num_rows
    rows: dict[str, list[int]] = {k: [0, 0, 0, 0] for k in ORDER}  # files, apparent, allocated, shared
    v8rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    by_sha: dict[str, list[str]] = defaultdict(list)
    by_pixels: dict[str, list[str]] = defaultdict(list)
    for p in files:
        st = p.stat()
        ks = kinds.get(p.name) or {"unreferenced"}
        first = min(ks, key=ORDER.index)
        r = rows[first]
        r[0] += 1
        r[1] += st.st_size
        r[2] += st.st_blocks * 512
        r[3] += len(ks) > 1
        if first == "V8":
            for d in sorted(v8[p.name])[:1]:
                v8rows[d][0] += 1
                v8rows[d][1] += st.st_size
                v8rows[d][2] += st.st_blocks * 512
        data = p.read_bytes()
        by_sha[hashlib.sha256(data).hexdigest()].append(p.name)
        if pixels:
            with Image.open(io.BytesIO(data)) as im:
                im.load()
                key = hashlib.sha256(f"{im.mode}{im.size}".encode() + im.tobytes()).hexdigest()
            by_pixels[key].append(p.name)
    tot = [sum(r[i] for r in rows.values()) for i in range(3)]
    print(f"bench {bench}: {n_cases} cases, {tot[0]:,} image files, {tot[1] / 2**20:.1f} MiB apparent, "
          f"{tot[2] / 2**20:.1f} MiB allocated ({tot[2] / n_cases / 2**20:.3f} MiB per case)")
    _deferred(bench, kinds, {p.name for p in files}, n_cases, tot[2])
    print("| kind | files | MiB apparent | MiB allocated | share of allocated | KiB per file "
          "| also used by a later kind |")
    print("|---|---|---|---|---|---|---|")
    for k in ORDER:
        f, a, b, s = rows[k]
        if f:
            print(f"| {k} | {f:,} | {a / 2**20:.1f} | {b / 2**20:.1f} | {100 * b / tot[2]:.1f} % "
                  f"| {a / f / 1024:.1f} | {s:,} |")
        if k == "V8":
            for d, (f2, a2, b2) in sorted(v8rows.items()):
                print(f"| &nbsp;&nbsp;V8 {d} | {f2:,} | {a2 / 2**20:.1f} | {b2 / 2**20:.1f} "
                      f"| {100 * b2 / tot[2]:.1f} % | {a2 / f2 / 1024:.1f} | |")
    small = sum(1 for p in files if p.stat().st_size < 4096)
    print(f"files under 4 KiB: {small:,} (each takes a whole 4 KiB block)")
    dup_bytes = sum(len(v) - 1 for v in by_sha.values() if len(v) > 1)
    mislabeled = sum(1 for p in files if hashlib.sha256(p.read_bytes()).hexdigest() + ".png" != p.name)
    print(f"byte-identical files stored twice: {dup_bytes}; files whose name is not their sha256: {mislabeled}")
    if pixels:
        dup_px = [v for v in by_pixels.values() if len(v) > 1]
        print(f"pixel-identical (same mode, size, pixels) under different names: {sum(len(v) - 1 for v in dup_px)}")


def _deferred(bench: Path, kinds: dict[str, set[str]], present: set[str], n_cases: int, allocated: int) -> None:
    """The images the bench defers (``renders.parquet``) that are not in ``images/``, per kind, and what the
    bench costs on disk with the specs file."""
    path = bench / "renders.parquet"
    if not path.exists():
        print("renders.parquet: none (every image stored)")
        return
    shas = pq.read_table(path, columns=["sha256"]).column(0).to_pylist()
    missing = Counter(min(kinds.get(f"{s}.png") or {"unreferenced"}, key=ORDER.index)
                      for s in shas if f"{s}.png" not in present)
    st = path.stat()
    print(f"renders.parquet: {len(shas):,} specs, {st.st_size / 2**20:.2f} MiB; deferred images not in images/: "
          + ", ".join(f"{k} {missing[k]:,}" for k in ORDER if missing[k]))
    both = allocated + st.st_blocks * 512
    print(f"images + renders.parquet: {both / 2**20:.1f} MiB allocated ({both / n_cases / 2**20:.3f} MiB per case)")


# -- PNG encoder settings ---------------------------------------------------------------------------

def _pil(level: int, strategy: int = -1, optimize: bool = False) -> Callable[[Image.Image], bytes]:
    def enc(im: Image.Image) -> bytes:
        buf = io.BytesIO()
        im.save(buf, format="PNG", compress_level=level, compress_type=strategy, optimize=optimize)
        return buf.getvalue()
    return enc


def candidates() -> dict[str, Callable[[Image.Image], bytes]]:
    c: dict[str, Callable[[Image.Image], bytes]] = {}
    for lvl in (1, 2, 3, 4, 6, 9):
        c[f"PIL level {lvl}"] = _pil(lvl)
    c["PIL level 1, Z_RLE"] = _pil(1, zlib.Z_RLE)
    c["PIL level 3, Z_RLE"] = _pil(3, zlib.Z_RLE)
    c["PIL level 6, Z_RLE"] = _pil(6, zlib.Z_RLE)
    c["PIL level 3, Z_FILTERED"] = _pil(3, zlib.Z_FILTERED)
    c["PIL level 3, Z_HUFFMAN_ONLY"] = _pil(3, zlib.Z_HUFFMAN_ONLY)
    c["PIL level 9, optimize"] = _pil(9, optimize=True)
    try:  # optional: not a dependency of medr2; install with pip --target and put it on PYTHONPATH
        import imagecodecs as ic
    except ImportError:
        return c

    def _ic(fn: Callable[[np.ndarray], bytes]) -> Callable[[Image.Image], bytes]:
        def enc(im: Image.Image) -> bytes:
            if im.mode == "1":  # 1-bit masks: the array encoders would write 8-bit grey
                return _pil(3)(im)
            return fn(np.asarray(im))
        return enc

    for lvl in (1, 3, 6):
        c[f"imagecodecs libpng level {lvl}"] = _ic(lambda a, lvl=lvl: ic.png_encode(a, level=lvl))
    c["imagecodecs libpng level 1, RLE, SUB"] = _ic(lambda a: ic.png_encode(a, level=1, strategy=3, filter=16))
    c["imagecodecs libpng level 3, UP"] = _ic(lambda a: ic.png_encode(a, level=3, filter=32))
    c["imagecodecs libpng level 3, PAETH"] = _ic(lambda a: ic.png_encode(a, level=3, filter=128))
    for lvl in (1, 3, 6):
        c[f"imagecodecs libspng level {lvl}"] = _ic(lambda a, lvl=lvl: ic.spng_encode(a, level=lvl))
    return c


def png_bench(bench: Path, per_kind: int, only: list[str] | None) -> None:
    kinds, _ = owners(bench)
    groups: dict[str, list[Path]] = defaultdict(list)
    for p in sorted((bench / "images").iterdir()):
        if p.suffix == ".png":
            ks = kinds.get(p.name) or {"unreferenced"}
            groups[min(ks, key=ORDER.index)].append(p)
    sample: list[tuple[str, Image.Image, np.ndarray]] = []
    for k in ORDER:
        paths = groups.get(k, [])
        step = max(1, len(paths) // per_kind) if paths else 1
        for p in paths[::step][:per_kind]:
            with Image.open(p) as im:
                im.load()
                sample.append((k, im.copy(), np.asarray(im).copy()))
    # Pillow's mode for each file as the build wrote it (1-bit masks stay 1-bit)
    print(f"{len(sample)} images ({', '.join(f'{k} {n}' for k, n in Counter(s[0] for s in sample).items())}),"
          f" stored size {sum(len(_pil(3)(im)) for _, im, _ in sample) / 2**20:.2f} MiB at level 3")
    cands = candidates()
    if only:
        cands = {k: v for k, v in cands.items() if k in only}
    times: dict[str, list[float]] = defaultdict(list)
    sizes: dict[str, int] = Counter()
    cpu: dict[str, float] = defaultdict(float)
    per_kind_size: dict[tuple[str, str], int] = Counter()
    # interleave candidates per image so each saw the same load
    for kind, im, arr in sample:
        for name, enc in cands.items():
            c0, t0 = time.process_time(), time.perf_counter()
            data = enc(im)
            times[name].append(time.perf_counter() - t0)
            cpu[name] += time.process_time() - c0
            sizes[name] += len(data)
            per_kind_size[(name, kind)] += len(data)
            with Image.open(io.BytesIO(data)) as back:
                if back.mode != im.mode or not np.array_equal(np.asarray(back), arr):
                    sys.exit(f"{name}: pixels differ after decoding ({kind})")
    base = "PIL level 3"
    print("| encoder setting | median ms per image | CPU s (all) | MiB (all) | size vs level 3 | CPU vs level 3 |")
    print("|---|---|---|---|---|---|")
    for name in cands:
        print(f"| {name} | {1000 * statistics.median(times[name]):.2f} | {cpu[name]:.2f} | {sizes[name] / 2**20:.2f} | "
              f"{sizes[name] / sizes[base]:.3f} | {cpu[name] / cpu[base]:.2f} |")
    print("size per kind (KiB per image):")
    kinds_seen = [k for k in ORDER if any(s[0] == k for s in sample)]
    print("| setting | " + " | ".join(kinds_seen) + " |")
    print("|---|" + "---|" * len(kinds_seen))
    counts = Counter(s[0] for s in sample)
    for name in cands:
        cells = [f"{per_kind_size[(name, k)] / counts[k] / 1024:.1f}" for k in kinds_seen]
        print(f"| {name} | " + " | ".join(cells) + " |")


# -- whole builds with each encoder ----------------------------------------------------------------

DEFERRED = ("V2", "V3", "V8", "V9")  # the render kinds that are most of the bytes (see --breakdown)


def _modes() -> list[str]:
    modes = ["current"]
    try:
        import imagecodecs  # noqa: F401
        modes.append("imagecodecs-up3")
    except ImportError:
        pass
    modes.append("deferred")
    return modes


MODE_TEXT = {
    "current": "current encoder (Pillow, zlib level 3)",
    "imagecodecs-up3": "imagecodecs libpng level 3, filter UP",
    "deferred": "--renders deferred: " + "/".join(DEFERRED) + " renders encoded, hashed, recorded in renders.parquet",
}


def _one_build(out: Path, n: int, mode: str) -> dict[str, float]:
    """One in-process build (one worker) in this fresh process; CPU, wall and encode seconds."""
    from medr2 import images
    from medr2.builder.pipeline import build_bench
    from medr2.perturb.context import PerturbContext
    from medr2.sources.sample import source as sample_source

    spent: dict[str, float] = defaultdict(float)
    rendering: list[str] = []  # the kind of the render being made (a stack: renders do not nest, but be safe)
    put_mask = sample_source.put_mask
    enc = images.encode_png
    if mode == "imagecodecs-up3":
        import imagecodecs as ic

        def enc(arr: np.ndarray) -> bytes:
            return bytes(ic.png_encode(arr, level=3, filter=32))

    def timed_enc(arr: np.ndarray) -> bytes:
        c0 = time.process_time()
        try:
            return enc(arr)
        finally:
            dt = time.process_time() - c0
            spent["encode"] += dt
            if rendering and rendering[-1] in DEFERRED:
                spent["encode_deferrable"] += dt
                c1 = time.process_time()  # what naming by pixels would cost instead
                hashlib.sha256(f"{arr.dtype}{arr.shape}".encode() + arr.tobytes()).hexdigest()
                spent["pixel_hash"] += time.process_time() - c1

    def timed_mask(store: images.ImageStore, mask: np.ndarray) -> images.ImageRef:
        c0 = time.process_time()
        try:
            return put_mask(store, mask)
        finally:
            spent["encode"] += time.process_time() - c0

    images.encode_png = timed_enc
    sample_source.put_mask = timed_mask  # type: ignore[assignment]
    render = PerturbContext.render

    def tagged(self: PerturbContext, key: tuple[object, ...], make: Callable[[], np.ndarray]) -> images.ImageRef:
        rendering.append(str(key[0]).split("-")[0])
        try:
            return render(self, key, make)
        finally:
            rendering.pop()

    PerturbContext.render = tagged  # type: ignore[method-assign]
    render_spec = PerturbContext.render_spec

    def tagged_spec(self: PerturbContext, key: tuple[object, ...], spec: Any, *, record: str) -> images.ImageRef:
        rendering.append(str(key[0]).split("-")[0])
        try:
            return render_spec(self, key, spec, record=record)
        finally:
            rendering.pop()

    PerturbContext.render_spec = tagged_spec  # type: ignore[method-assign]
    shutil.rmtree(out, ignore_errors=True)
    c0, t0 = time.process_time(), time.perf_counter()
    build_bench("sample", out, n_cases=n, variants="all", workers=1,
                renders="deferred" if mode == "deferred" else "stored")
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    files = [p for p in (out / "images").iterdir() if p.suffix == ".png"]
    files += [out / "renders.parquet"] if (out / "renders.parquet").exists() else []
    return {"cpu": cpu, "wall": wall, "encode": spent["encode"], "encode_deferrable": spent["encode_deferrable"],
            "pixel_hash": spent["pixel_hash"], "files": len(files),
            "apparent": sum(p.stat().st_size for p in files), "allocated": sum(p.stat().st_blocks * 512 for p in files)}


def same_pixels(a: Path, b: Path) -> str:
    """Compare two benches built from the same seed whose PNG bytes differ. Items are matched by what
    they show and ask (case, task, variant, question, options, answer, template, cue), since their ids
    hash the image bytes; per variant code: matched items with the same decoded pixels, matched items
    with other pixels, and items of ``a`` with no counterpart in ``b``."""
    cols = ["case_id", "task", "variant", "question", "template_id", "options", "answer", "cue", "image"]

    def by_key(bench: Path) -> dict[tuple[object, ...], set[str | None]]:
        d: dict[tuple[object, ...], set[str | None]] = defaultdict(set)
        for r in pq.read_table(bench / "items.parquet", columns=cols).to_pylist():
            d[tuple(r[c] for c in cols[:-1])].add(r["image"])
        return d

    ka, kb = by_key(a), by_key(b)
    out: dict[str, Counter[str]] = defaultdict(Counter)
    seen: dict[tuple[str, str], bool] = {}
    for key, imgs in ka.items():
        code = str(key[2]).split("-")[0]
        other = kb.get(key)
        if other is None or len(imgs) != 1 or len(other) != 1:
            out[code]["no counterpart"] += 1
            continue
        ia, ib = next(iter(imgs)), next(iter(other))
        if ia is None or ib is None:
            out[code]["same pixels" if ia == ib else "other pixels"] += 1
            continue
        if (ia, ib) not in seen:
            with Image.open(a / ia) as x, Image.open(b / ib) as y:
                seen[(ia, ib)] = x.mode == y.mode and np.array_equal(np.asarray(x), np.asarray(y))
        out[code]["same pixels" if seen[(ia, ib)] else "other pixels"] += 1
    return "; ".join(f"{code}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items()))
                     for code, c in sorted(out.items()))


def build_ab(sizes: list[int], work: Path, repeats: int, keep: bool, only: list[str] | None) -> None:
    modes = [m for m in _modes() if not only or m in only]
    print("Each build: `build_bench('sample', n_cases=N, variants='all', workers=1)` in a fresh process.")
    print("| cases | build | CPU s | wall s | encode CPU s | encode share | of which " + "/".join(DEFERRED)
          + " renders | sha256 of their pixels | image MiB allocated | MiB per case |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        res: dict[str, list[dict[str, float]]] = defaultdict(list)
        for r in range(repeats):
            for mode in modes:  # alternate: each mode saw the same load
                out = work / f"{n}-{r}-{mode}"
                proc = subprocess.run([sys.executable, __file__, "--one-build", str(n), str(out), mode],
                                      capture_output=True, text=True, check=False)
                if proc.returncode:
                    sys.exit(f"build {mode} {n} failed:\n{proc.stderr[-3000:]}")
                res[mode].append(json.loads(proc.stdout.strip().splitlines()[-1]))
        for mode, runs in res.items():
            cpu = statistics.median(r["cpu"] for r in runs)
            encode = statistics.median(r["encode"] for r in runs)
            wall = statistics.median(r["wall"] for r in runs)
            deferrable = statistics.median(r["encode_deferrable"] for r in runs)
            pixel_hash = statistics.median(r["pixel_hash"] for r in runs)
            alloc = runs[0]["allocated"]
            print(f"| {n} | {MODE_TEXT[mode]} | {cpu:.1f} | {wall:.1f} | {encode:.1f} | {100 * encode / cpu:.0f} % | "
                  f"{deferrable:.1f} ({100 * deferrable / cpu:.0f} %) | {pixel_hash:.2f} | "
                  f"{alloc / 2**20:.1f} | {alloc / n / 2**20:.3f} |", flush=True)
        if "imagecodecs-up3" in res:
            pair = same_pixels(work / f"{n}-0-current", work / f"{n}-0-imagecodecs-up3")
            print(f"items of the current build vs the imagecodecs build: {pair}")
        if not keep:
            for p in work.glob(f"{n}-*"):
                shutil.rmtree(p, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--breakdown", type=Path, help="a bench folder: image bytes by kind, duplicates")
    ap.add_argument("--pixels", action="store_true", help="with --breakdown: also count pixel-identical files")
    ap.add_argument("--png", type=Path, help="a bench folder: PNG encoder settings on its images")
    ap.add_argument("--per-kind", type=int, default=30, help="images per kind for --png")
    ap.add_argument("--only", nargs="*", help="candidate names for --png")
    ap.add_argument("--build", type=int, nargs="*", help="numbers of cases: whole builds with each encoder")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "medr2-bench-images")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--keep", action="store_true", help="keep the --build benches")
    ap.add_argument("--modes", nargs="*", help="with --build: current, imagecodecs-up3, deferred (default: all)")
    ap.add_argument("--one-build", nargs=3, metavar=("N", "OUT", "MODE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one_build:
        n, out, mode = args.one_build
        print(json.dumps(_one_build(Path(out), int(n), mode)))
        return
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}, Pillow {Image.__version__}, "
          f"zlib {zlib.ZLIB_RUNTIME_VERSION}")
    if args.breakdown:
        breakdown(args.breakdown, args.pixels)
    if args.png:
        png_bench(args.png, args.per_kind, args.only)
    if args.build:
        build_ab(args.build, args.work, args.repeats, args.keep, args.modes)


if __name__ == "__main__":
    main()
