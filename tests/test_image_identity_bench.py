"""Bench format 3 on built benches: ids are of pixels (any encoder may write the files), and format 1/2 benches keep
reading, checking (by their own rule) and scoring.

The format 1/2 bench is built here by the same build under :data:`medr2.images.PNG_BYTES`, the rule releases before
format 3 wrote with (``build_bench(identity=...)``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from medr2 import BadInput, api
from medr2.bench.format import MANIFEST, load_bench, read_manifest, verify_checksums
from medr2.images import PIXELS, PNG_BYTES, PNG_LEVEL_ENV, sha256_file, verified_image_path
from medr2.renders import RENDERS_FILE, image_path
from medr2.variant_id import CLEAN

sys.path.insert(0, str(Path(__file__).parent))
from png_encoders import ENCODERS, reencode_images  # noqa: E402

N_CASES = 4
BUILD = {"n_cases": N_CASES, "variants": "all", "workers": 1}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, build_sample: Callable[..., Path]) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("identity")
    return {"v3": build_sample(root / "v3", renders="stored", **BUILD),
            "v3-deferred": build_sample(root / "v3d", **BUILD),
            "v2": build_sample(root / "v2", identity=PNG_BYTES, **BUILD)}


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


def _images(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / "images").glob("*.png"))}


def _check_every_image(root: Path) -> int:
    """``info --check`` and every item's image verified as an adapter verifies it before sending; how many."""
    checked = api.info(root, check=True)["checked"]
    bench = load_bench(root)
    for it in bench.items:
        if it.image is not None:
            verified_image_path(root, it.image, it.image_sha256)
    return int(checked["items"])


@pytest.mark.parametrize("encoder", ["pillow-9", "zlib-9"])
def test_reencoded_format3_bench_keeps_ids_and_checks(built: dict[str, Path], tmp_path: Path, encoder: str) -> None:
    """Every PNG rewritten by another level or another encoder: same names, same tables, every check passes."""
    root = _copy(built["v3"], tmp_path / "b")
    before = {name: sha256_file(root / name) for name in ("items.parquet", "cases.parquet", MANIFEST)}
    names = set(_images(root))
    assert reencode_images(root, encoder) > len(names) // 2
    assert set(_images(root)) == names
    assert {name: sha256_file(root / name) for name in before} == before
    assert _check_every_image(root) == api.info(built["v3"])["counts"]["items"]
    for path in sorted((root / "images").glob("*.png")):
        assert path.name == f"{PIXELS.of_file(path)}.png"


def test_reencoded_format2_bench_is_refused_by_its_own_rule(built: dict[str, Path], tmp_path: Path) -> None:
    """A format 1/2 bench names images by their bytes: the same pixels in other bytes fail its check (by that
    rule, said so), never checked by the pixel rule instead."""
    root = _copy(built["v2"], tmp_path / "b")
    assert reencode_images(root, "zlib-9") > 0
    with pytest.raises(BadInput, match="png-sha256") as e:
        api.info(root, check=True)
    assert e.value.field == "image"


@pytest.mark.slow  # four subprocess builds with every variant (minutes on 2 busy cores)
@pytest.mark.parametrize("renders", ["stored", "deferred"])
def test_same_seed_other_zlib_levels_same_tables(built: dict[str, Path], tmp_path: Path, renders: str) -> None:
    """Two fresh processes writing PNGs at zlib levels 0 and 9: the same items, cases and renders bytes as the
    in-process build, the same image names, other image bytes."""
    outs = {}
    for level in ("0", "9"):
        out = tmp_path / f"l{level}"
        env = {**os.environ, PNG_LEVEL_ENV: level, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run([sys.executable, "-m", "medr2", "build", "--source", "sample", "--cases", str(N_CASES),
                               "--variants", "all", "--workers", "1", "--renders", renders, "--out", str(out)],
                              capture_output=True, text=True, timeout=600, env=env, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        outs[level] = out
    ref = built["v3" if renders == "stored" else "v3-deferred"]
    tables = ["items.parquet", "cases.parquet"] + ([RENDERS_FILE] if renders == "deferred" else [])
    for name in tables:
        assert (outs["0"] / name).read_bytes() == (outs["9"] / name).read_bytes() == (ref / name).read_bytes(), name
    a, b = _images(outs["0"]), _images(outs["9"])
    assert set(a) == set(b) == set(_images(ref))
    assert sum(a[k] != b[k] for k in a) > len(a) // 2
    assert sum(map(len, a.values())) > sum(map(len, b.values()))  # level 0 stores, level 9 compresses


def test_format2_bench_reads_checks_renders_and_scores(built: dict[str, Path], tmp_path: Path) -> None:
    old, new = _copy(built["v2"], tmp_path / "old"), built["v3-deferred"]
    info = api.info(old)
    assert (info["format_version"], info["image_identity"]) == (2, "png-sha256")
    assert (api.info(new)["format_version"], api.info(new)["image_identity"]) == (3, "pixel-sha256")
    _check_every_image(old)
    # every id changes once, at format 3: the same source questions, every variant family, other ids. Seeds
    # derive from ids, so the seeded draws of the variants differ (which V8 kind, which wrong option V10 burns
    # in, and so whether its text finds a free corner): the variants' counts need not be equal.
    cols = ["item_id", "variant", "task", "question", "options", "answer"]
    tables = {v: pq.read_table(root / "items.parquet", columns=cols).to_pylist()
              for v, root in (("old", old), ("new", new))}
    ids = {v: {r["item_id"] for r in rows} for v, rows in tables.items()}
    assert all(len(ids[v]) == len(rows) for v, rows in tables.items()) and not ids["old"] & ids["new"]
    sources = {v: sorted(tuple(str(r[c]) for c in cols[2:]) for r in rows if r["variant"] == CLEAN)
               for v, rows in tables.items()}
    assert sources["old"] and sources["old"] == sources["new"]
    families = {v: {r["variant"].split("-")[0] for r in rows if r["variant"] != CLEAN}
                for v, rows in tables.items()}
    assert families["old"] and families["old"] == families["new"]
    # a deferred image of the old bench renders to the bytes it pins, checked by their sha256
    sha = pq.read_table(old / RENDERS_FILE, columns=["sha256"]).column(0)[0].as_py()
    path = image_path(old, f"images/{sha}.png", sha)
    assert sha256_file(path) == sha != PIXELS.of_file(path)
    # a run on it scores
    run = tmp_path / "run"
    summary = api.evaluate(old, "baseline:random", run, command=["test"], split="all")
    assert summary.modes["independent"].ok > 0
    metrics = api.score(run, resamples=0, mixed_splits=True)
    scored = set(pq.read_table(run / "scores.parquet", columns=["item_id"]).column(0).to_pylist())
    assert scored and scored <= ids["old"] and "independent" in metrics["modes"]


@pytest.mark.parametrize("claimed", [1, 2])
def test_checksum_covers_the_identity_rule(built: dict[str, Path], tmp_path: Path, claimed: int) -> None:
    """A format 3 manifest edited to claim the PNG-bytes rule fails the checksum every command verifies."""
    root = _copy(built["v3"], tmp_path / "b")
    m = json.loads((root / MANIFEST).read_text())
    m["format_version"] = claimed
    (root / MANIFEST).write_text(json.dumps(m))
    with pytest.raises(BadInput) as e:
        verify_checksums(root, read_manifest(root))
    assert e.value.field == "checksums.bench"


def test_info_says_the_format_version(built: dict[str, Path]) -> None:
    for key, version, rule in (("v3", 3, "pixel-sha256"), ("v2", 2, "png-sha256")):
        done = subprocess.run([sys.executable, "-m", "medr2", "info", str(built[key])], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert f"format version {version}: images identified by {rule}" in done.stdout


def test_encoders_write_other_bytes() -> None:
    """The encoders the tests above use really are other encodings (else those tests would show nothing)."""
    import numpy as np

    arr = (np.arange(64 * 48 * 3) % 251).astype(np.uint8).reshape(48, 64, 3)
    assert len({enc(arr) for enc in ENCODERS.values()}) == len(ENCODERS)


def test_perturb_on_a_format2_bench_keeps_its_rule(built: dict[str, Path], tmp_path: Path) -> None:
    """``medr2 perturb`` rewriting V9 (and V8) of a format 2 bench writes them in full under the PNG-bytes rule: the
    same items as the build's, the version kept, every image checked by its bytes."""
    from medr2.perturb.add import add_variants

    root = _copy(built["v2"], tmp_path / "b")
    manifest, _, _ = add_variants(root, "V8,V9", workers=1)
    assert manifest["format_version"] == 2
    assert (root / "items.parquet").read_bytes() == (built["v2"] / "items.parquet").read_bytes()
    bench = load_bench(root)
    written = {it.image for it in bench.items if it.variant == "V9" or it.variant.startswith("V8")}
    assert written and all((root / str(rel)).is_file() for rel in written)
    for rel in written:
        assert sha256_file(root / str(rel)) == Path(str(rel)).stem
    _check_every_image(root)


def test_export_of_a_format2_bench_names_its_rule_on_import(built: dict[str, Path], tmp_path: Path) -> None:
    """A round trip keeps ids only under the current rule: an export of a format 2 bench, imported, is refused row
    by row with a reason that names the PNG-bytes rule (not a bare hash mismatch); a format 3 export comes back."""
    from medr2.interop.exporters import run_export
    from medr2.interop.importers import run_import

    for key in ("v2", "v3"):
        run_export("vlmevalkit", load_bench(built[key]), tmp_path / f"exp-{key}")
        res = run_import("vlmevalkit", tmp_path / f"exp-{key}", tmp_path / f"back-{key}")
        if key == "v2":
            assert res.quarantined and all("PNG bytes" in e.reason for e in res.quarantined), res.quarantined[:2]
        else:
            assert res.items and not res.quarantined
