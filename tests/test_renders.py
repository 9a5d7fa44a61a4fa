"""Deferred renders (``medr2 build --renders deferred``, :mod:`medr2.renders`): the V2/V3/V8/V9 images are
recorded in ``renders.parquet`` and made on first use; the bench is otherwise the one a full build writes.

One sample build in each mode (6 cases, the four deferred codes: V8 and V9 also re-draw the cues of
clean cue items, with their masks) is shared by the tests, each of which works on a copy."""

from __future__ import annotations

import base64
import hashlib
import json
import multiprocessing as mp
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medr2 import BadInput
from medr2.bench.format import load_bench, read_manifest, verify_checksums
from medr2.images import PIXELS, encode_png, load_image, verified_image_path
from medr2.renders import RENDERS_FILE, image_path, materialise, render_index

CODES = "V2,V3,V8,V9"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, build_sample: Callable[..., Path]) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("renders")
    return {mode: build_sample(root / mode, n_cases=6, variants=CODES, workers=1, renders=mode)
            for mode in ("stored", "deferred")}


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


def _pngs(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "images").iterdir()) if p.suffix == ".png"}


def _specs(root: Path) -> dict[str, dict[str, Any]]:
    t = pq.read_table(root / RENDERS_FILE)
    return {sha: json.loads(spec) for sha, spec in zip(t.column("sha256").to_pylist(), t.column("spec").to_pylist(),
                                                       strict=True)}


def test_deferred_build_same_items_and_image_bytes(built: dict[str, Path], tmp_path: Path) -> None:
    stored, deferred = built["stored"], _copy(built["deferred"], tmp_path / "d")
    for name in ("items.parquet", "cases.parquet"):
        assert (stored / name).read_bytes() == (deferred / name).read_bytes(), name
    assert read_manifest(stored)["format_version"] == 3 and not (stored / RENDERS_FILE).exists()
    m = read_manifest(deferred)
    specs = _specs(deferred)
    assert m["format_version"] == 3 and m["renders"]["n"] == len(specs) > 0
    assert {s["op"] for s in specs.values()} == {"fit", "degrade", "hflip"}
    assert any(s["cue"] is not None for s in specs.values())  # cue items' renders re-draw their cue
    full, lean = _pngs(stored), _pngs(deferred)
    missing = set(full) - set(lean)
    assert set(lean) <= set(full) and missing and {f"{sha}.png" for sha in specs} >= missing
    assert sum(map(len, lean.values())) < 0.5 * sum(map(len, full.values()))
    load_bench(deferred)  # validates (image hashes included) without rendering anything
    assert set(_pngs(deferred)) == set(lean)
    done = subprocess.run([sys.executable, "-m", "medr2", "materialise", str(deferred)], capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0 and f"{len(missing)} deferred image(s) rendered" in done.stdout, done.stderr
    assert _pngs(deferred) == full  # same names, same bytes
    assert materialise(deferred) == 0


def test_deferred_build_same_for_one_and_two_workers(built: dict[str, Path], tmp_path: Path,
                                                      build_sample: Callable[..., Path]) -> None:
    two = build_sample(tmp_path / "two", n_cases=6, variants=CODES, workers=2, renders="deferred")
    for name in ("items.parquet", RENDERS_FILE):
        assert (two / name).read_bytes() == (built["deferred"] / name).read_bytes(), name
    assert not list(two.glob(".renders.*"))  # the workers' spec files are gathered and removed


def _image_answer(body: dict[str, Any]) -> str:
    """The sha256 of the images the request carries: an answer that changes with any byte of them."""
    h = hashlib.sha256()
    for m in body["messages"]:
        for part in m["content"] if isinstance(m["content"], list) else []:
            if part.get("type") == "image_url":
                h.update(base64.b64decode(part["image_url"]["url"].split(";base64,", 1)[1]))
    return h.hexdigest()


def _run_rows(run: Path) -> set[tuple[Any, ...]]:
    from medr2.run.store import Store

    store = Store.open(run)
    try:
        return {(p.request_hash, p.item_id, p.mode, p.status, p.raw)
                for p in (sp.prediction for sp in store.iter_predictions())}
    finally:
        store.close()


def test_eval_same_request_hashes_and_answers(built: dict[str, Path], tmp_path: Path) -> None:
    """The openai adapter (renders through its image cache) and a callable reading images the way the
    chat adapters do (``verified_image_path``) send the same requests and get the same answers."""
    from medr2 import Request, evaluate
    from tests.openai_server import OpenAIServer

    deferred = _copy(built["deferred"], tmp_path / "d")
    before = set(_pngs(deferred))

    def reads_images(req: Request) -> str:
        h = hashlib.sha256()
        for m in req.messages:
            for p in m.parts:
                if p.type == "image":
                    h.update(verified_image_path(req.bench_root, p.image, p.image_sha256).read_bytes())
        return h.hexdigest()

    rows: dict[str, set[tuple[Any, ...]]] = {}
    with OpenAIServer(answer=_image_answer) as srv:
        for name, bench in (("stored", built["stored"]), ("deferred", deferred)):
            evaluate(bench, "openai:vlm", tmp_path / f"run-{name}", split="all", base_url=srv.url, variants=CODES,
                     mode="independent", concurrency=4)
            rows[name] = _run_rows(tmp_path / f"run-{name}")
            evaluate(bench, reads_images, tmp_path / f"fn-{name}", split="all", variants=CODES, mode="independent",
                     name="reads-images")
            rows[f"fn-{name}"] = _run_rows(tmp_path / f"fn-{name}")
    assert rows["stored"] == rows["deferred"] and len(rows["stored"]) > 50
    assert {r[3] for r in rows["stored"]} == {"ok"}
    assert rows["fn-stored"] == rows["fn-deferred"]
    assert set(_pngs(deferred)) > before  # the run rendered (and cached) what it showed


def _first_deferred(root: Path) -> tuple[str, dict[str, Any]]:
    sha, spec = next((s, v) for s, v in sorted(_specs(root).items()) if not (root / "images" / f"{s}.png").exists())
    return sha, spec


def _rewrite_spec(root: Path, sha: str, spec: dict[str, Any]) -> None:
    t = pq.read_table(root / RENDERS_FILE)
    shas, texts = t.column("sha256").to_pylist(), t.column("spec").to_pylist()
    texts[shas.index(sha)] = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    pq.write_table(pa.table({"sha256": shas, "spec": texts}), root / RENDERS_FILE, row_group_size=4096,
                   write_statistics=["sha256"])


def test_tampered_spec_is_caught(built: dict[str, Path], tmp_path: Path) -> None:
    root = _copy(built["deferred"], tmp_path / "d")
    sha, spec = _first_deferred(root)
    bad = dict(spec, op="hflip" if spec["op"] != "hflip" else "degrade")
    if bad["op"] == "degrade":
        bad["params"] = {"kind": "blur", "severity": 1, "seed": 1}
    _rewrite_spec(root, sha, bad)
    with pytest.raises(BadInput) as e:
        verify_checksums(root, read_manifest(root))
    assert e.value.field == "renders.sha256"
    rel = f"images/{sha}.png"
    with pytest.raises(BadInput) as e:
        image_path(root, rel, sha, record="item-42")
    msg = str(e.value)
    assert "item-42" in msg and sha in msg and "the bench pins" in msg and RENDERS_FILE in msg
    got = msg.split("has pixel-sha256 ", 1)[1].split(",", 1)[0]
    assert len(got) == 64 and got != sha  # both hashes named
    assert not (root / rel).exists()  # nothing cached
    _rewrite_spec(root, sha, dict(spec, op="no-such-op"))
    with pytest.raises(BadInput, match="no-such-op"):
        image_path(root, rel, sha)


def test_tampered_cached_file_is_caught(built: dict[str, Path], tmp_path: Path) -> None:
    root = _copy(built["deferred"], tmp_path / "d")
    sha, _ = _first_deferred(root)
    rel = f"images/{sha}.png"
    path = verified_image_path(root, rel, sha)
    assert PIXELS.of_file(path) == sha
    arr = load_image(path).copy()
    arr.flat[0] ^= 1  # one pixel changed (a changed encoding of the same pixels is the same image)
    path.write_bytes(encode_png(arr))
    with pytest.raises(BadInput, match="do not match"):
        verified_image_path(root, rel, sha)
    with pytest.raises(BadInput, match=f"image {rel} has pixel-sha256"):
        load_bench(root)


def test_missing_image_without_spec_and_old_bench(built: dict[str, Path], tmp_path: Path) -> None:
    old = _copy(built["stored"], tmp_path / "old")  # format 1: every file present, no renders.parquet
    bench = load_bench(old)
    assert not render_index(old)
    it = next(i for i in bench.items if i.variant.startswith("V8"))
    assert verified_image_path(old, it.image, it.image_sha256) == old / it.image
    assert it.image is not None
    (old / it.image).unlink()
    with pytest.raises(BadInput, match="is missing"):
        load_bench(old)
    with pytest.raises(BadInput, match="is missing"):
        image_path(old, it.image, it.image_sha256)


def _resolve_all(job: tuple[str, list[str]]) -> list[str]:
    root, rels = job
    return [PIXELS.of_file(image_path(Path(root), rel)) for rel in rels]


def test_concurrent_first_use_is_safe(built: dict[str, Path], tmp_path: Path) -> None:
    root = _copy(built["deferred"], tmp_path / "d")
    shas = [s for s in sorted(_specs(root)) if not (root / "images" / f"{s}.png").exists()][:12]
    rels = [f"images/{s}.png" for s in shas]
    with mp.get_context("fork").Pool(4) as pool:
        results = pool.map(_resolve_all, [(str(root), rels if k % 2 else rels[::-1]) for k in range(8)])
    for res in results:
        assert sorted(res) == sorted(shas)
    assert not list((root / "images").glob("*.tmp"))


def test_perturb_on_a_deferred_bench_keeps_its_specs(built: dict[str, Path], tmp_path: Path) -> None:
    """``medr2 perturb`` rewriting V9 on a bench with deferred renders: its images are written in full (same ids
    and bytes as the build's), ``renders.parquet`` stays as the manifest names it."""
    from medr2.perturb.add import add_variants

    root = _copy(built["deferred"], tmp_path / "d")
    specs = (root / RENDERS_FILE).read_bytes()
    manifest, _, _ = add_variants(root, "V9", workers=1)
    assert manifest["format_version"] == 3 and (root / RENDERS_FILE).read_bytes() == specs
    bench = load_bench(root)
    v9 = {it.image for it in bench.items if it.variant == "V9"}
    assert v9 and all((root / str(rel)).is_file() for rel in v9)
    assert (root / "items.parquet").read_bytes() == (built["deferred"] / "items.parquet").read_bytes()


def test_unknown_renders_mode_refused(tmp_path: Path) -> None:
    from medr2.builder.pipeline import build_bench

    with pytest.raises(BadInput, match="unknown mode") as e:
        build_bench("sample", tmp_path / "x", n_cases=2, renders="lazy")
    assert e.value.field == "--renders"


def test_renders_file_from_many_sinks_many_row_groups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``write_renders`` gathers the spec files of every worker: one row per sha256, sorted, the smaller spec
    where two differ, the same bytes whatever file a spec came from; lookups across row groups."""
    import random

    from medr2 import renders

    monkeypatch.setattr(renders, "ROW_GROUP", 7)
    rng = random.Random(3)
    shas = sorted({hashlib.sha256(str(rng.random()).encode()).hexdigest() for _ in range(60)}
                  | {"ab" * 30 + "0000", "ab" * 30 + "0100", "00" * 32})  # numpy "S" drops trailing NULs
    spec = {s: renders.RenderSpec("hflip", f"images/{s[::-1]}.png").to_json() for s in shas}
    outs = []
    for k, order in enumerate((shas, shas[::-1])):
        root = tmp_path / f"b{k}"
        root.mkdir()
        sinks = [renders.RenderSink(root) for _ in range(3)]
        for i, s in enumerate(order):
            sinks[i % 3].add(s, spec[s])
            if i % 5 == 0:  # the same image recorded again, by another worker, with a larger spec
                sinks[(i + 1) % 3].add(s, spec[s].replace("hflip", "hflip-other"))
        for sink in sinks:
            sink.close()
        entry = renders.write_renders(root)
        assert entry is not None and entry["n"] == len(shas) and not renders.sink_files(root)
        assert pq.ParquetFile(root / RENDERS_FILE).metadata.num_row_groups == -(-len(shas) // 7)
        outs.append((root / RENDERS_FILE).read_bytes())
        index = renders.RenderIndex(root)
        assert len(index) == len(shas) and all(index.spec_json(s) == spec[s] for s in shas)
        assert index.spec_json("f" * 64) is None and "not-hex" not in index and "ab" * 30 + "00" not in index
    assert outs[0] == outs[1]
    assert renders.write_renders(tmp_path / "b0") is None  # no spec files: nothing deferred
