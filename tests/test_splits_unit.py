"""The split unit (``medr2 build --split-unit patient|case``): the default keeps its bytes; ``case`` puts each
case on its own, recorded in the manifest and shown by ``medr2 info``; the export's leak rule still holds."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from medr2 import BadInput, Item
from medr2.bench import load_bench
from medr2.bench.table import BenchTable
from medr2.builder.pipeline import build_bench
from medr2.tasks.splits import SplitKey, assign_splits, hashed_split
from medr2.train.source import TrainSource
from tests import build_fixtures  # noqa: F401  (registers the "buildtest" source)
from tests.train_fixtures import planned

# the bench checksum of ``build_bench("buildtest", seed=0, n_cases=40, variants="T6,V2")`` with the default split
# unit: the split unit (commit b7a2f01) kept the bytes of the default build. Changed on purpose since: V2 shows
# the drawn case that differs most (2026-12-03); items record their roles (issue 38: a new ``roles`` column, every
# other column and cases.parquet byte-identical to dcb957e6...). If item generation changes on purpose, recompute it
# from that change with the default split unit. 2026-12-06, recomputed once for the changes merged that day, each on
# purpose: bench format 3 (image ids from pixels, issue 44), the clinical vocabulary's option check (issue 39),
# sex/age read from the sample's DICOM headers (issue 46), the readers' shared case merge (issue 43) and the
# answerability contracts (issue 40: tasks skipped where the source does not declare what they assert). Then by
# commit 180c67c alone (checked by building at 7b438d8 and 180c67c): V2 shows a case of its own split. Then by
# branch valid40a (issue 40 kinds 4 and 5: buildtest declares its severity a grade and the diagnoses it tells
# apart, the differential and the evidence twin draw from those, s1.quality's options keep their order,
# s4.malignancy's templates agree with the number of lesions) and branch valid40b (issue 40 kinds 2 and 6: the
# s3.location items naming a patient side on the 13 mirrored cases go, the answer letters of the rest are balanced
# again). Each alone: 99e39fa0... and 9dfd4190...; merged: b07a73e4.... Then by branch valid40c (issue 40
# leftovers, measured against b07a73e4... built at f96e7e7; cases.parquet byte-identical): T6 reverses an ordinal
# option set instead of shuffling it (s2.count, s3.count, s3.size, s1.quality, s4.severity items reordered; 13
# s1.quality and 8 s4.severity T6 items go, their answer the middle of the scale that a reverse leaves in place), and
# the options of one question are mutually exclusive (13 clean s1.sequence items draw other built-in MR sequences, no
# "T1-weighted" beside "T1 post-contrast"; their T6 and V2 items with them): ba0a77c6.... Then by issue 49 (commit
# bd0dc1e: the records' new ``Item.images`` and ``Case.companions`` fields are columns of the tables; checked on
# branch multi49a: the tables are equal once the new columns, ``"[]"`` in every row, are dropped): 6217df70.... Then by
# branch multi49b (issue 49: buildtest's first six cases link a prior, a view or a sequence, so its bench holds
# several-image items, format 4, and the tasks s3.change, s3.view_finding, s3.two_view_finding, s1.which_sequence):
# 6e772654.... Then by issue 39's explicit absence (branch absent: Case.absent is a column of the cases table;
# checked on 2026-12-07 against 669cae7: items.parquet byte-identical, cases.parquet equal once the new column,
# "[]" in every row, is dropped): b54a353c.... Then by issue 40's fixes (fix40a, fix40b; fix40d's check, building at
# 1b383a1, 4dfc255 and fix40d and comparing clean items by task, case and question): fix40a's readable clause drops
# every content question of the 15 cases buildtest grades reject (421 clean items; s1.quality etc. stay) and rewords
# s4.report (the question without a second instruction: 31 items) and one s4.severity template (6 items); the items
# left keep their questions, some their answer letters re-balanced (8d9b0b59...); fix40b changes the sample only.
# Then fix40d: buildtest's grade no longer cycles with its modality (every X-ray case was reject); every item gone
# or added is on a case whose grade changed, and 31 s1.quality items key the new grade: 1800fee2.... Then by branch
# fix40c (issue 40 kinds 5 and 6; checked against 1800fee2... built at 7cf5133: cases.parquet equal, the same number
# of items per task and variant, every changed item one of three kinds): a drawn mark lies outside what it marks
# (a box as a rectangle round the box, a contour round the mask, a point as a ring), so the cue images of
# s2.cued_structure, s2.landmark and s3.cue_description change with their T6 and V2 items (33 + 33 + 24 clean);
# buildtest's MRI structure "ventricle" names no anatomy concept of the vocabulary and is no longer asked about or
# offered (85 items named it before, none after), so s2.organ_box, s2.organ_presence, s2.relative_position and
# s2.size_compare draw other structures (11 + 30 + 9 + 7 clean, their T6 and V2 items with them); 9 V2 items of
# s4.malignancy and s4.severity become probes, the other case not meeting the task's contract: a1f78fe9....
# Then fix40h (issue 40: a description's wrong options describe the marked finding with one attribute changed,
# never another finding's name; checked against a1f78fe9... built at c8ca6c2: cases.parquet equal, the same number
# of items per task and variant, every changed item an s3.cue_description one: 24 clean, their 24 T6 and 23 V2
# items): 690fd16e.... Then fix40f (issue 40 kinds 3 and 4; checked against a1f78fe9... built at c8ca6c2,
# items compared by task, case, variant, question, options and answer): buildtest declares
# meta.malignancy_discriminable (every case's meta; its s4.malignancy items unchanged), and the vocabulary's mimics of
# a meningioma (dural metastasis, schwannoma) are compatible with its image, so the 6 clean s4.diagnosis items of its
# MRI meningioma cases no longer offer "vestibular schwannoma" and draw their distractors again (with their 6 T6 and 5
# V2 items);
# nothing else changes: 399f92c4.... Both merged (2026-12-07): cases.parquet equal to fix40f's, every item equal to an
# item of fix40h's or of fix40f's build (task, case, variant, question, options, answer): 69df0caec236....
# Then fix40i (issue 40 kind 6: V2 shows another case's image only where that case's own truth does not give the
# parent's key, medr2.perturb.shown.shown_answer; checked against 69df0cae... built at a766b95: cases.parquet equal,
# no item added or changed, 628 of 1,091 V2 items gone, 565 whose key the shown case gives and 63 whose shown answer
# is unknown, both counted in manifest.json): 35babac9....
# Then the fourth review's kinds (issue 40, 2026-12-07: a sequence the same image may also be is no wrong option,
# medr2.vocab.Vocabulary.sequences_compatible; checked against 35babac9... built at 8757307: cases.parquet equal, the
# same number of items for every task and variant but s1.sequence, 23 -> 7 clean and 23 -> 7 T6: a CT's phase
# ("portal venous phase") is no longer asked beside windows ("lung window", "bone window") it may be shown in, so
# 16 drafts skip for want of distractors; the other items of those cases are drawn again from the moved random
# stream): 87e3b783.... And fix40l (issue 40, third review kind 2: s2.size_compare and s2.organ_box ask only
# structures whose outline the image shows, measured on a structure's mask; buildtest's structures are boxes without
# masks, so none is measured and both tasks skip every case; checked against 35babac9... built at 360b2ab:
# cases.parquet equal, the 33 + 33 clean items of the two tasks gone with their 33 T6 and 7 + 7 V2 items, every other
# item the same task, case, variant, question and right answer, some laid out on other letters by the balancing
# pass): c4cbef38.... Both merged (checked against 87e3b783...: cases equal, only fix40l's items gone, the rest the
# same task, case, variant, question, options and right answer, some on other letters): 56d38527....
# Then the fifth review's kinds (s1.sequence and s1.which_sequence declare `readable`: a sequence is read from the
# image's contrast, which a reject grade has lost; checked against 56d38527... built at 8575c0e: cases equal, 4 clean
# s1.sequence items of reject-graded cases gone with their 4 T6 items; V2 items drawn again where the pool of shown
# cases changed, 3 s1.sequence V2 items replaced by 4 and one s1.which_sequence V2 item added): the value below.
DEFAULT_CHECKSUM = "0222d9296cb922b782c99251b818bded960ccf034ce49851125ab04a05e1f1bb"


def _build(root: Path, **kw: object) -> Path:
    build_bench("buildtest", root, seed=0, n_cases=40, workers=1, variants="T6,V2", **kw)  # type: ignore[arg-type]
    return root


@pytest.fixture(scope="module")
def benches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("units")
    return {"default": _build(root / "default"), "case": _build(root / "case", split_unit="case")}


def test_default_build_keeps_its_bytes(benches: dict[str, Path]) -> None:
    b = load_bench(benches["default"])
    assert b.manifest["checksums"]["bench"] == DEFAULT_CHECKSUM
    assert b.manifest["build"]["split_unit"] == "patient"


def test_case_unit_splits_each_case_by_its_id(benches: dict[str, Path]) -> None:
    b = load_bench(benches["case"])
    assert b.manifest["build"]["split_unit"] == "case"
    assert b.manifest["checksums"]["bench"] != DEFAULT_CHECKSUM
    for c in b.cases:
        assert c.split == hashed_split(f"case:{c.case_id}")
    for it in b.items:
        assert it.split == b.case(it.case_id).split
    by_patient: dict[str, set[str]] = {}
    for c in b.cases:
        by_patient.setdefault(c.patient_id, set()).add(c.split or "")
    assert any(len(s) > 1 for s in by_patient.values())  # what the patient unit never allows


def test_assign_splits_units() -> None:
    keys = [SplitKey(f"c{i}", f"p{i // 2}", "bg" if i < 4 else None, None) for i in range(10)]
    keys.append(SplitKey("given", "p0", None, "val"))
    patient = assign_splits(keys).by_case
    assert len({patient[f"c{i}"] for i in range(4)} | {patient["given"]}) == 1  # one group: p0, p1, bg
    assert patient["c0"] == "val"  # the source-given split wins for the whole group
    case = assign_splits(keys, "case")
    assert case.conflicts == 0 and case.by_case["given"] == "val"  # a source-given split still wins
    assert all(case.by_case[f"c{i}"] == hashed_split(f"case:c{i}") for i in range(10))
    with pytest.raises(ValueError, match="unknown split unit"):
        assign_splits(keys, "image")


def test_case_unit_keeps_the_shares() -> None:
    keys = [SplitKey(f"case-{i:05d}", "one-patient", "one-background", None) for i in range(5000)]
    shares = Counter(assign_splits(keys, "case").by_case.values())
    for name, percent in {"train": 60, "val": 10, "test": 30}.items():
        assert abs(shares[name] / 50 - percent) < 2, shares
    assert set(assign_splits(keys).by_case.values()) == {hashed_split("one-patient")}


def _shas(it: Item) -> set[str]:
    return {ref.sha256 for ref in it.image_list()}


def _showing(it: Item, sha: str) -> Item:
    """``it`` with its last image replaced by the image ``sha`` (the current one of a one-image item)."""
    if not it.images:
        return it.model_copy(update={"image_sha256": sha})
    last = it.images[-1].model_copy(update={"sha256": sha})
    update: dict[str, object] = {"images": [*it.images[:-1], last]}
    if last.role == "current":
        update["image_sha256"] = sha
    return it.model_copy(update=update)


def _kept(table: BenchTable) -> tuple[list[Item], Counter[str], int]:
    """The train items an export reads (variants included), the counts of those held out, and the ``flat`` plan's
    ``train_items`` count (clean only)."""
    with TrainSource(table) as src:
        return list(src.items()), src.select_counts(True)[1], src.select_counts(False)[0]


def test_export_leak_rule_on_a_case_split(benches: dict[str, Path], tmp_path: Path) -> None:
    b = load_bench(benches["case"])
    held = {c.image_sha256 for c in b.cases if c.split != "train"}
    held |= {sha for it in b.items if it.split != "train" for sha in _shas(it)}
    kept, skipped, _ = _kept(b.table())
    assert kept and all(it.split == "train" and not _shas(it) & held for it in kept)
    # V2 shows a case of its own split (PerturbContext.others_for), so the build itself leaks nothing ...
    assert not [it for it in b.items if it.split == "train" and _shas(it) & held]
    assert skipped["image shared with a non-train split"] == 0
    # ... and the export's rule still refuses a train item that shows a held-out image, whatever made it, as any
    # of its images (a several-image item's prior, view or sequence as much as its current image)
    train = [it for it in b.items if it.split == "train" and it.variant != "clean"]
    train = [*(it for it in train if it.images), *(it for it in train if not it.images)]
    leaking = [_showing(it, sha) for it, sha in zip(train, sorted(held), strict=False)]
    assert any(it.images for it in leaking)
    again, skipped, _ = _kept(BenchTable.held(b.root, b.manifest, [*b.items, *leaking]))
    assert leaking and skipped["image shared with a non-train split"] == len(leaking)
    assert {it.item_id for it in again} == {it.item_id for it in kept}
    _, plan = planned(b, tmp_path, strategy="flat")
    assert plan.counts["train_items"] == sum(1 for it in kept if it.variant == "clean")


def test_unknown_unit_refused(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="unknown split unit") as e:
        build_bench("buildtest", tmp_path / "x", n_cases=4, split_unit="image")
    assert e.value.field == "--split-unit"


def test_cli_build_split_unit_and_info(tmp_path: Path) -> None:
    code = ("import sys; sys.argv=['medr2']+sys.argv[1:]; import tests.build_fixtures; "
            "from medr2.cli import main; main()")
    root = Path(__file__).resolve().parents[1]
    run = lambda *a: subprocess.run([sys.executable, "-c", code, *a], capture_output=True, text=True, cwd=root)  # noqa: E731
    r = run("build", "--source", "buildtest", "--out", str(tmp_path / "b"), "--cases", "8", "--workers", "1",
            "--split-unit", "case")
    assert r.returncode == 0, r.stderr
    r = run("info", str(tmp_path / "b"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["build"]["split_unit"] == "case"
    r = run("info", str(tmp_path / "b"))
    assert r.returncode == 0 and "splits by case" in r.stdout
    r = run("build", "--source", "buildtest", "--out", str(tmp_path / "c"), "--split-unit", "image")
    assert r.returncode == 2 and "--split-unit" in r.stderr
