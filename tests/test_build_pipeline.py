"""End-to-end build on a small test source: determinism, quarantine, splits, chains, CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from medr2 import BadInput
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.errors import Quarantine
from medr2.records import check_box
from medr2.tasks import TASKS
from medr2.tasks.contract import NOT_READABLE
from tests import build_fixtures  # noqa: F401  (registers the "buildtest" source)


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("b") / "bench"
    build_bench("buildtest:bad", out, seed=0, n_cases=30, workers=1)
    return out


def test_same_seed_same_bytes_any_workers(tmp_path: Path, bench_dir: Path) -> None:
    build_bench("buildtest:bad", tmp_path / "w2", seed=0, n_cases=30, workers=2)
    for f in ("items.parquet", "cases.parquet"):
        assert (bench_dir / f).read_bytes() == (tmp_path / "w2" / f).read_bytes()
    build_bench("buildtest:bad", tmp_path / "s1", seed=1, n_cases=30, workers=1)
    assert (bench_dir / "items.parquet").read_bytes() != (tmp_path / "s1" / "items.parquet").read_bytes()


def test_quarantined_records_kept_with_reason(bench_dir: Path) -> None:
    entries = {(e.record, e.field) for e in Quarantine.read(bench_dir / "quarantine.jsonl")}
    assert ("bad-box", "findings[0].box") in entries
    assert ("bad-label", "quality") in entries
    assert ("case000", "case_id") in entries  # the duplicate
    assert any(r == "bad-corrupt" for r, _ in entries)
    b = load_bench(bench_dir)
    assert b.manifest["quarantine"]["n"] == 4
    ids = {c.case_id for c in b.cases}
    # 30 cases and the companions of the first six (issue 49: a prior study, a view or a sequence each)
    assert not ids & {"bad-box", "bad-label", "bad-corrupt"} and len(b.cases) == 36


def test_no_patient_or_background_across_splits(bench_dir: Path) -> None:
    b = load_bench(bench_dir)
    splits_of: dict[str, set[str]] = defaultdict(set)
    for c in b.cases:
        splits_of[c.patient_id].add(c.split or "")
        if c.background:
            splits_of["bg:" + c.background].add(c.split or "")
    assert all(len(s) == 1 for s in splits_of.values())
    used = {c.split for c in b.cases}
    assert used <= {"train", "val", "test"} and len(used) >= 2
    for it in b.items:
        assert it.split == b.case(it.case_id).split


def test_boxes_inside_images(bench_dir: Path) -> None:
    b = load_bench(bench_dir)
    boxes = [it for it in b.items if it.answer_box is not None]
    assert boxes
    for it in boxes:
        assert it.image_width and it.image_height
        check_box(it.answer_box, it.image_width, it.image_height)  # type: ignore[arg-type]
        assert it.answer == "" and it.chance == 0


def test_every_task_appears(bench_dir: Path) -> None:
    """Every task of the registry generates items from the fixture, but those whose contract asks what the fixture
    cannot give: an extent question (``outlines_visible``) needs a structure mask whose outline the image shows, and
    the fixture's structures are boxes; each of those is skipped on every case with that clause's counted reason."""
    b = load_bench(bench_dir)
    missing = set(TASKS) - set(b.manifest["counts"]["task"])
    assert missing == {t for t, spec in TASKS.items() if "outlines_visible" in spec.requires}, missing
    for t in missing:
        assert any("outline" in reason for reason in b.manifest["skipped"][t]), b.manifest["skipped"][t]
    assert len(b.manifest["tasks"]) == 35


def test_chains_in_stage_order(bench_dir: Path) -> None:
    b = load_bench(bench_dir)
    chains: dict[str, list] = defaultdict(list)
    for it in b.items:
        if it.chain_id:
            chains[it.chain_id].append(it)
    # every case has a chain except those its source grades reject (issue 40: a non-diagnostic image is asked only
    # about its acquisition and quality, stage-1 questions, and a chain needs two stages); their skips are counted
    staged: dict[str, set[int]] = defaultdict(set)
    for it in b.items:
        staged[it.case_id].add(it.stage)
    chained = {steps[0].case_id for steps in chains.values()}
    unchained = [c for c in b.cases if c.case_id not in chained]
    assert unchained and all(c.quality == "reject" and staged[c.case_id] <= {1} for c in unchained)
    assert {c.case_id for c in b.cases if len(staged[c.case_id]) >= 2} == chained
    assert b.manifest["skipped"]["s3.lesion_box"][NOT_READABLE] == sum(1 for c in b.cases if c.quality == "reject")
    for steps in chains.values():
        steps.sort(key=lambda it: it.step)
        assert [it.step for it in steps] == list(range(1, len(steps) + 1))
        assert [it.stage for it in steps] == sorted({it.stage for it in steps})
        assert len({it.case_id for it in steps}) == 1
        assert steps[0].task == "s1.modality"
    assert b.manifest["counts"]["chains"] == len(chains)


def test_bad_usage(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="unknown source"):
        build_bench("nosuchsource", tmp_path / "x")
    (tmp_path / "notabench").mkdir()
    (tmp_path / "notabench" / "precious.txt").write_text("keep")
    with pytest.raises(BadInput, match="not empty") as e:
        build_bench("buildtest", tmp_path / "notabench")
    assert e.value.field == "--out"


def test_cli_build_and_info(tmp_path: Path) -> None:
    code = ("import sys; sys.argv=['medr2']+sys.argv[1:]; import tests.build_fixtures; "
            "from medr2.cli import main; main()")
    root = Path(__file__).resolve().parents[1]
    run = lambda *a: subprocess.run([sys.executable, "-c", code, *a], capture_output=True, text=True, cwd=root)  # noqa: E731
    r = run("build", "--source", "buildtest", "--out", str(tmp_path / "b"), "--cases", "8", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert "built" in r.stdout
    r = run("info", str(tmp_path / "b"), "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["cases"]["n"] == 8 + 6 and info["counts"]["items"] > 0 and "skipped" in info
    r = run("info", str(tmp_path / "b"))
    assert r.returncode == 0 and "items per task" in r.stdout
    r = run("build", "--source", "buildtest", "--out", str(tmp_path / "c"), "--cases", "0")
    assert r.returncode == 2
    r = run("info", str(tmp_path / "nothing"))
    assert r.returncode == 2 and "manifest" in r.stderr


def test_variants_pass(tmp_path: Path) -> None:
    r = build_bench("buildtest", tmp_path / "v", seed=0, n_cases=8, workers=1, variants="T6")
    b = load_bench(tmp_path / "v")
    variants = [it for it in b.items if it.variant != "clean"]
    assert variants and r.n_items == r.n_clean + len(variants)
    assert all(it.parent_id in b.items_by_id for it in variants)
    assert "T6" in b.manifest["variants_skipped"] and b.manifest["build"]["variants"] == ["T6"]
