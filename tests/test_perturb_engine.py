"""The variant engine: determinism (same seed -> same bytes, any worker count), non-destruction,
skip reporting, and ``medr2 perturb`` on a bench folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medr2 import BadInput
from medr2.bench.format import WRITER_KEYS, load_bench, write_bench
from medr2.images import PIXELS, ImageStore, sha256_file
from medr2.perturb.engine import generate_variants
from medr2.perturb.registry import ALL_CODES, derive_seed, parse_variants
from medr2.records import canonical_json, jsonable

sys.path.insert(0, str(Path(__file__).parent))
from perturb_fixtures import Fixture, build_fixture  # noqa: E402


def _source_files() -> list[Path]:
    from pydicom.data import get_testdata_file
    from skimage import data

    files = [Path(p) for p in (get_testdata_file("CT_small.dcm", download=False),
                               get_testdata_file("RG1_UNCR.dcm", download=False)) if p]
    files += sorted(Path(data.__file__).parent.glob("retina*"))
    return files


def _images_digest(root: Path) -> dict[str, str]:
    return {p.name: sha256_file(p) for p in sorted((root / "images").glob("*.png"))}


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return build_fixture(tmp_path_factory.mktemp("bench"))


def test_parse_variants() -> None:
    assert parse_variants("all") == ALL_CODES and len(ALL_CODES) == 26  # issue 49: T12, V13-V15
    assert parse_variants("v8, T1") == ("T1", "V8")
    assert parse_variants("") == () and parse_variants(None) == ()
    with pytest.raises(BadInput):
        parse_variants("T99")


def test_seeds_are_stable_hashes() -> None:
    assert derive_seed(0, "abc", "T4") == derive_seed(0, "abc", "T4")
    assert derive_seed(0, "abc", "T4") != derive_seed(1, "abc", "T4")
    assert derive_seed(0, "abc", "T4") != derive_seed(0, "abd", "T4")


def test_same_seed_same_bytes_any_workers_and_sources_untouched(fx: Fixture, tmp_path: Path) -> None:
    sources_before = {p: sha256_file(p) for p in _source_files()}
    clean_before = _images_digest(fx.root)
    runs = []
    for k, workers in enumerate((1, 2, 1)):
        root = tmp_path / f"run{k}"
        (root / "images").mkdir(parents=True)
        for p in (fx.root / "images").glob("*.png"):  # the clean bench's images
            (root / "images" / p.name).write_bytes(p.read_bytes())
        codes = "all" if k < 2 else "T4,V8"
        items, skips = generate_variants(root, fx.cases, fx.items, codes, 7 if k < 2 else 8, ImageStore(root),
                                         workers=workers)
        runs.append((canonical_json(jsonable(items)), skips, _images_digest(root)))
    assert runs[0][0] == runs[1][0] and runs[0][1] == runs[1][1] and runs[0][2] == runs[1][2]
    t4v8 = [it for it in json.loads(runs[0][0]) if it["variant"].startswith(("T4", "V8"))]
    assert canonical_json(t4v8) != runs[2][0]  # another seed gives other variants
    # clean images are never modified or removed; variant images only add files
    for name, sha in clean_before.items():
        assert runs[0][2][name] == sha
    assert {p: sha256_file(p) for p in _source_files()} == sources_before
    assert _images_digest(fx.root) == clean_before


def test_each_perturbed_image_is_stored_once_and_content_addressed(fx: Fixture, tmp_path: Path) -> None:
    items, _ = generate_variants(fx.root, fx.cases, fx.items, "V8,V9", 0, fx.images, workers=1)
    assert len({it.item_id for it in items}) == len(items)
    for it in items:
        assert it.image is not None and it.image_sha256 is not None
        assert PIXELS.of_file(fx.root / it.image) == it.image_sha256 == Path(it.image).stem
    # every question about one image sees the same perturbed image
    per_case = {}
    for it in items:
        if it.variant == "V9" and it.cue is None:
            per_case.setdefault(it.case_id, set()).add(it.image_sha256)
    assert all(len(s) == 1 for s in per_case.values())


def test_skips_are_counted_with_reasons(fx: Fixture) -> None:
    items, skips = generate_variants(fx.root, fx.cases, fx.items, "all", 0, fx.images, workers=1)
    assert set(skips) == set(ALL_CODES)
    made = {it.variant.split("-")[0] for it in items}
    assert made == set(ALL_CODES)
    per_code = {c: sum(1 for it in items if it.variant.split("-")[0] == c) for c in ALL_CODES}
    # each parent is either varied or skipped for a reason (T4/V8 make several items per parent)
    for code in ("T1", "T2", "T3", "T5", "T6", "T7", "T8", "V1", "V2", "V3", "V4", "V5", "V6", "V7", "V9"):
        parents = {it.parent_id for it in items if it.variant.split("-")[0] == code}
        assert len(parents) + sum(skips[code].values()) == len(fx.items), code
        assert per_code[code] >= len(parents)
    assert skips["V4"]["case has no lesion to remove"] > 0
    assert skips["T1"]["not a yes/no item"] > 0


def test_medr2_perturb_adds_variants_to_a_bench(fx: Fixture, tmp_path: Path) -> None:
    from medr2.cli import app

    root = tmp_path / "b"
    (root / "images").mkdir(parents=True)
    for p in (fx.root / "images").glob("*.png"):
        (root / "images" / p.name).write_bytes(p.read_bytes())
    write_bench(root, fx.cases, fx.items, {"build": {"seed": 3, "variants": []}})
    before = load_bench(root)
    r = CliRunner().invoke(app, ["perturb", str(root), "--variants", "T4,V9"])
    assert r.exit_code == 0, r.output
    b = load_bench(root)
    codes = {it.variant.split("-")[0] for it in b.items if it.variant != "clean"}
    assert codes == {"T4", "V9"}
    assert [it for it in b.items if it.variant == "clean"] == before.items
    assert set(b.manifest["variants_skipped"]) == {"T4", "V9"}
    assert b.manifest["build"]["variants"] == ["T4", "V9"]
    assert all(it.seed == derive_seed(3, it.parent_id, it.variant.split("-")[0]) for it in b.items
               if it.variant.startswith("T4"))
    # again with more codes: existing ones are replaced, not duplicated; same bytes as one call
    r = CliRunner().invoke(app, ["perturb", str(root), "--variants", "T4,V1"])
    assert r.exit_code == 0, r.output
    once = tmp_path / "once"
    (once / "images").mkdir(parents=True)
    for p in (fx.root / "images").glob("*.png"):
        (once / "images" / p.name).write_bytes(p.read_bytes())
    write_bench(once, fx.cases, fx.items, {"build": {"seed": 3, "variants": []}})
    r = CliRunner().invoke(app, ["perturb", str(once), "--variants", "T4,V1,V9"])
    assert r.exit_code == 0, r.output
    assert sha256_file(root / "items.parquet") == sha256_file(once / "items.parquet")
    r = CliRunner().invoke(app, ["perturb", str(root), "--variants", "X1"])
    assert r.exit_code != 0


def _add_variants_in_memory(root: Path, codes: str, seed: int) -> None:
    """``add_variants`` as it was before it streamed: the whole bench loaded, every variant sorted in memory."""
    from medr2.perturb.registry import all_codes
    from medr2.variant_id import variant_code

    loaded = load_bench(root)
    wanted = parse_variants(codes)
    every = all_codes()
    clean = loaded.clean_items()
    new, skips = generate_variants(loaded.root, loaded.cases, clean, wanted, seed, ImageStore(loaded.root), 1)
    kept = [it for it in loaded.items if it.variant != "clean" and variant_code(it.variant) not in wanted]
    order = {it.item_id: i for i, it in enumerate(clean)}
    seen = {it.item_id for it in clean}
    rest = []
    for it in [*kept, *new]:
        if it.item_id not in seen:
            seen.add(it.item_id)
            rest.append(it)
    rest.sort(key=lambda it: (order.get(it.parent_id or "", len(order)), every.index(variant_code(it.variant))))
    m = loaded.manifest
    build = dict(m["build"])
    build["variants"] = [c for c in every if c in set(build.get("variants", [])) | set(wanted)]
    extra = {k: v for k, v in m.items() if k not in WRITER_KEYS}
    extra["build"] = build
    extra["variants_skipped"] = {**m.get("variants_skipped", {}), **skips}
    write_bench(root, loaded.cases, [*clean, *rest], extra)


def test_streamed_perturb_writes_the_bytes_of_the_in_memory_one(fx: Fixture, tmp_path: Path) -> None:
    """``medr2 perturb`` reads the bench by columns and streams the variants it keeps: the same bench, byte for
    byte, as loading everything and sorting every variant in memory (variants kept and replaced)."""
    from medr2.perturb.add import add_variants

    roots = []
    for name in ("streamed", "in-memory"):
        root = tmp_path / name
        (root / "images").mkdir(parents=True)
        for p in (fx.root / "images").glob("*.png"):
            (root / "images" / p.name).write_bytes(p.read_bytes())
        write_bench(root, fx.cases, fx.items, {"build": {"seed": 3, "variants": []}})
        add_variants(root, "T4,V1", workers=1)
        roots.append(root)
    add_variants(roots[0], "V1,T1,V9", workers=1)
    _add_variants_in_memory(roots[1], "V1,T1,V9", 3)
    for f in ("items.parquet", "cases.parquet"):
        assert (roots[0] / f).read_bytes() == (roots[1] / f).read_bytes(), f
    manifests = [json.loads((r / "manifest.json").read_text()) for r in roots]
    assert {**manifests[0], "name": None} == {**manifests[1], "name": None}  # named after their folders
    codes = {it.variant.split("-")[0] for it in load_bench(roots[0]).items}
    assert codes == {"clean", "T1", "T4", "V1", "V9"}
