"""The bad-input corpus for every importer (docs/reliability.md): each importer reads a small set in its real
layout mixing good records with broken ones (broken, empty, bomb or escaping images; missing fields;
answers matching no option; unreadable files among several; tampered round-trip columns). Every bad
record is quarantined naming its file, record, field and reason; every good one is imported; the CLI
writes the quarantine and exits 0."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medr2.bench.format import load_bench
from medr2.errors import Quarantine
from medr2.interop.common import ImportResult, write_import
from medr2.interop.exporters import run_export
from medr2.interop.importers import run_import
from medr2.interop.importers._util import WHOLE_FILE
from medr2.interop.roundtrip import ITEM_COL
from tests import bad_inputs as bad
from tests.interop_fixtures import gradient, write_png
from tests.test_interop_importers import _vqarad


def _check(res: ImportResult, expected: dict[str, str], n_items: int) -> None:
    """``expected``: quarantined record -> field. Every entry names file, record, field and reason."""
    for q in res.quarantined:
        assert q.file and q.record and q.field and q.reason, q
    got = {q.record: q.field for q in res.quarantined}
    assert got == expected, res.quarantined
    assert len(res.quarantined) == len(expected), res.quarantined  # one entry per bad record
    assert len(res.items) == n_items


def _images(folder: Path) -> None:
    """One good image (``ok.png``) and one file per bad kind (``BAD_IMAGES``) under ``folder``."""
    write_png(folder / "ok.png", bad.pattern())
    for name, make in bad.BAD_IMAGES.items():
        make(folder / name)


# --- SLAKE --------------------------------------------------------------------------------------------


def test_slake_bad_records(tmp_path: Path) -> None:
    root = tmp_path / "slake"
    imgs = root / "imgs"
    write_png(imgs / "xmlab0" / "source.jpg", gradient(40, 40))
    (imgs / "xmlab0" / "detection.json").write_text(json.dumps([{"Liver": [5, 5, -3, 4]}]))  # negative width
    write_png(imgs / "xmlab1" / "source.jpg", gradient(40, 40, 1))
    bad.truncated_png(imgs / "xmlab1" / "mask.png")
    for i, make in enumerate(bad.BAD_IMAGES.values(), start=10):
        make(imgs / f"xmlab{i}" / "source.jpg")
    outside = write_png(tmp_path / "outside.png", bad.pattern())
    (root / "mask.txt").write_text("1:Liver\n")
    base = {"answer_type": "OPEN", "content_type": "Organ", "q_lang": "en", "modality": "CT"}
    recs = [{**base, "qid": 1, "img_name": "xmlab0/source.jpg", "question": "Which organ?", "answer": "Liver"},
            {**base, "qid": 2, "img_name": "xmlab1/source.jpg", "question": "Which organ?", "answer": "Lung"},
            {**base, "qid": 3, "img_name": "../../outside.png", "question": "Which organ?", "answer": "x"},
            {**base, "qid": 4, "img_name": str(outside), "question": "Which organ?", "answer": "x"},
            {**base, "qid": 5, "img_name": "xmlab0/source.jpg", "question": None, "answer": "x"},
            {**base, "qid": 6, "img_name": "xmlab0/source.jpg", "question": "Which organ?", "answer": ""},
            {**base, "qid": 7, "img_name": "xmlab99/source.jpg", "question": "Which organ?", "answer": "x"}]
    recs += [{**base, "qid": i, "img_name": f"xmlab{i}/source.jpg", "question": "Which organ?", "answer": "x"}
             for i in range(10, 10 + len(bad.BAD_IMAGES))]
    (root / "train.json").write_text(json.dumps(recs))
    (root / "validate.json").write_text('[{"qid": 100, "question": ')  # cut off: the whole file is bad
    res = run_import("slake", root, tmp_path / "b")
    expected = {"xmlab0": "[0].Liver", "xmlab1": "mask", WHOLE_FILE: "file", "3": "image", "4": "image",
                "5": "question", "6": "question", "7": "image"}
    expected |= {str(i): "image" for i in range(10, 10 + len(bad.BAD_IMAGES))}
    _check(res, expected, n_items=2)  # qid 1 and 2 (their images are fine; only annotations were bad)


# --- PMC-VQA ------------------------------------------------------------------------------------------


def test_pmcvqa_bad_records(tmp_path: Path) -> None:
    root = tmp_path / "pmc"
    _images(root / "images")
    header = ["Figure_path", "Question", "Answer", "Choice A", "Choice B", "Choice C", "Choice D", "Answer_label"]
    choices = ["A:CT", "B:MRI", "C:PET", "D:US"]
    rows = [["ok.png", "What imaging modality was used?", "MRI", *choices, "B"],
            ["ok.png", "Which modality?", "X-ray", *choices, ""],              # answer matches no choice
            ["ok.png", "Which modality?", "CT", "A:CT", "", "", "", "A"],     # one choice
            ["ok.png", "", "CT", *choices, "A"],                                # no question
            ["../../escape.png", "Which modality?", "CT", *choices, "A"],
            ["missing.png", "Which modality?", "CT", *choices, "A"]]
    rows += [[name, f"Which modality ({name})?", "CT", *choices, "A"] for name in bad.BAD_IMAGES]
    with (root / "test_clean.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    (root / "train_2.csv").write_text("Figure_path,Question\nok.png,What?\n")  # choice columns missing
    res = run_import("pmc-vqa", root, tmp_path / "b")
    fields = ["Answer", "Question", "Question", "image", "image"] + ["image"] * len(bad.BAD_IMAGES)
    expected = {f"test_clean.csv row {i + 3}": fld for i, fld in enumerate(fields)} | {WHOLE_FILE: "Choice A"}
    _check(res, expected, n_items=1)


# --- OmniMedVQA ---------------------------------------------------------------------------------------


def test_omnimedvqa_bad_records(tmp_path: Path) -> None:
    root = tmp_path / "omni"
    _images(root / "Images" / "X")
    qa = root / "QA_information" / "Open-access"
    qa.mkdir(parents=True)
    base = {"dataset": "X", "question_type": "Modality Recognition", "question": "Which modality?",
            "gt_answer": "CT", "option_A": "CT", "option_B": "MRI", "image_path": "Images/X/ok.png"}
    recs = [{**base, "question_id": "ok"},
            {**base, "question_id": "no-gt", "gt_answer": "PET"},
            {**base, "question_id": "one-option", "option_B": ""},
            {**base, "question_id": "no-question", "question": ""},
            {**base, "question_id": "escape", "image_path": "../outside.png"},
            {**base, "question_id": "absolute", "image_path": str(tmp_path / "outside.png")},
            {**base, "question_id": "missing", "image_path": "Images/X/none.png"}]
    recs += [{**base, "question_id": f"img-{n}", "image_path": f"Images/X/{n}"} for n in bad.BAD_IMAGES]
    (qa / "X.json").write_text(json.dumps(recs))
    (qa / "Y.json").write_bytes(b"\xff\xfe not utf-8 json")
    res = run_import("omnimedvqa", root, tmp_path / "b")
    expected = {"no-gt": "gt_answer", "one-option": "question", "no-question": "question", "escape": "image",
                "absolute": "image", "missing": "image", WHOLE_FILE: "file"}
    expected |= {f"img-{n}": "image" for n in bad.BAD_IMAGES}
    _check(res, expected, n_items=1)


# --- ProbMed ------------------------------------------------------------------------------------------


def test_probmed_bad_records(tmp_path: Path) -> None:
    root = tmp_path / "pm"
    _images(root / "ct")
    base = {"id": 1, "image": "ct/ok.png", "image_type": "ct_scan_abdomen"}
    recs = [{**base, "qa_type": "modality_gt", "question": "Is this a CT scan?", "answer": "yes"},
            {**base, "qa_type": "modality_hallu", "question": "Is this an MRI?", "answer": "no"},
            {**base, "qa_type": "entity_gt_1", "question": "Is there a cyst?", "answer": "yes"},
            {**base, "qa_type": "entity_hallu_1", "question": "Is there a fracture?", "answer": "unsure"},
            {**base, "qa_type": "abnormality", "question": "", "answer": "yes"},
            {"id": 2, "image": "../../x.png", "qa_type": "modality_gt", "question": "Is this CT?", "answer": "yes"},
            {"id": 3, "image": None, "qa_type": "modality_gt", "question": "Is this CT?", "answer": "yes"}]
    recs += [{"id": 10 + i, "image": f"ct/{n}", "qa_type": "modality_gt", "question": "Is this CT?",
              "answer": "yes"} for i, n in enumerate(bad.BAD_IMAGES)]
    (root / "test.json").write_text(json.dumps(recs))
    res = run_import("probmed", root, tmp_path / "b")
    expected = {"1:entity_hallu_1": "answer", "1:abnormality": "answer", "2:modality_gt": "image",
                "3:modality_gt": "image"}
    expected |= {f"{10 + i}:modality_gt": "image" for i in range(len(bad.BAD_IMAGES))}
    _check(res, expected, n_items=3)
    pairs = {it.meta["qa_type"]: it.pair_id for it in res.items}
    assert pairs["modality_gt"] and pairs["modality_gt"] == pairs["modality_hallu"]
    assert pairs["entity_gt_1"] is None  # its twin was quarantined: the pair cannot count


# --- VLMEvalKit TSV -----------------------------------------------------------------------------------


def test_vlmevalkit_bad_records(tmp_path: Path) -> None:
    root = tmp_path / "tsv"
    root.mkdir()
    good = bad.b64(bad.png_bytes())
    write_png(root / "side.png", bad.pattern(seed=3))
    rows: list[list[Any]] = [[0, good, "", "Which modality?", "CT", "MRI", "A", "s1.modality"],
                             [1, "0", "", "Is it normal?", "", "", "yes", "x"],           # image of row 0
                             [2, good, "", "Which modality?", "CT", "MRI", "PET", "s1.modality"],
                             [3, "", "", "Which modality?", "CT", "MRI", "A", "x"],       # no image at all
                             [4, "", "../outside.png", "Which?", "CT", "MRI", "A", "x"],
                             [5, "", "side.png", "Which side?", "CT", "MRI", "B", "x"]]
    rows += [[10 + i, cell, "", "Which modality?", "CT", "MRI", "A", "x"]
             for i, cell in enumerate(bad.BAD_B64_CELLS.values())]
    with (root / "Med.tsv").open("w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(["index", "image", "image_path", "question", "A", "B", "answer", "category"])
        w.writerows(rows)
    # no answer column: a TEST file, read with answers unknown (issue 20); its one row has no image
    (root / "Other.tsv").write_text("index\tquestion\n0\tWhat?\n")
    res = run_import("vlmevalkit", root, tmp_path / "b")
    expected = {"2": "answer", "3": "image", "4": "image", "0": "image"}
    expected |= {str(10 + i): "image" for i in range(len(bad.BAD_B64_CELLS))}
    _check(res, expected, n_items=3)


# --- exports re-imported: hf, lmms-eval, vlmevalkit round-trip columns ---------------------------------


def _export(tmp_path: Path, target: str) -> Path:
    src = tmp_path / "src"
    write_import(run_import("vqa-rad", _vqarad(tmp_path / "rad"), src), src)
    out = tmp_path / f"exp-{target}"
    run_export(target, load_bench(src), out)
    return out


def _tamper(rows: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Good exported rows plus damaged copies; returns (rows, record -> expected field)."""
    a, other = rows[0], rows[1]["image"]
    out = list(rows)
    out.append({**a, "item_id": "broken-json", ITEM_COL: "{not json"})
    out.append({**a, "item_id": "wrong-image", "image": other})                      # sha256 mismatch
    out.append({**a, "item_id": "no-image", "image": None})
    out.append(dict(a))                                                               # duplicate item_id
    foreign = {k: None for k in a}
    out.append({**foreign, "item_id": "foreign-truncated", "question": "Q?", "answer": "yes",
                "image": {"bytes": bad.truncated_png_bytes(), "path": "x.png"}})
    out.append({**foreign, "item_id": "foreign-no-question", "answer": "yes",
                "image": {"bytes": bad.png_bytes(), "path": "y.png"}})
    expected = {"broken-json": ITEM_COL, "wrong-image": "image", "no-image": "image", a["item_id"]: "item_id",
                "foreign-truncated": "image", "foreign-no-question": "question"}
    return out, expected


def _rewrite(parquet: Path) -> tuple[int, dict[str, str]]:
    table = pq.read_table(parquet)
    rows, expected = _tamper(table.to_pylist())
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), parquet)
    return len(table), expected


def test_hf_bad_records(tmp_path: Path) -> None:
    out = _export(tmp_path, "hf")
    n_good, expected = _rewrite(out / "data" / "train-00000-of-00001.parquet")
    bad.truncated_copy(out / "data" / "test-00000-of-00001.parquet", out / "data" / "zz-broken.parquet")
    res = run_import("hf", out, tmp_path / "b")
    _check(res, expected | {WHOLE_FILE: "file"}, n_items=n_good + 1)  # train rows + the test split's row


def test_lmms_eval_bad_records(tmp_path: Path) -> None:
    out = _export(tmp_path, "lmms-eval")
    n_good, expected = _rewrite(out / "data" / "train-00000-of-00001.parquet")
    outside = tmp_path / "elsewhere.parquet"
    outside.write_bytes((out / "data" / "test-00000-of-00001.parquet").read_bytes())
    yml = next(out.glob("*_test.yaml"))
    (out / "escape.yaml").write_text(yml.read_text().replace(
        str((out / "data" / "test-00000-of-00001.parquet").resolve()), str(outside)))
    (out / "missing.yaml").write_text(yml.read_text().replace("test-00000-of-00001", "gone-00000-of-00001"))
    res = run_import("lmms-eval", out, tmp_path / "b")
    gone = str((out / "data" / "gone-00000-of-00001.parquet").resolve())
    _check(res, expected | {str(outside): "data_files", gone: "data_files"}, n_items=n_good + 1)


def test_vlmevalkit_roundtrip_rows_tampered(tmp_path: Path) -> None:
    out = _export(tmp_path, "vlmevalkit")
    tsv = next(out.glob("*_train.tsv"))
    csv.field_size_limit(1 << 30)
    with tsv.open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    n_good = len(rows)
    a, b = rows[0], rows[1]
    rows += [{**a, "index": "90", ITEM_COL: "{not json"}, {**a, "index": "91", "image": b["image"]},
             {**a, "index": "92", "image": bad.BAD_B64_CELLS["truncated-png"]}, {**a, "index": "93"}]
    with tsv.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(a), delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    res = run_import("vlmevalkit", out, tmp_path / "b")
    _check(res, {"90": ITEM_COL, "91": "image", "92": "image", "93": "item_id"}, n_items=n_good + 1)


# --- through the command line: quarantine written, exit 0 ----------------------------------------------


@pytest.mark.parametrize("fmt", ["omnimedvqa"])
def test_cli_writes_quarantine(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "omni"
    write_png(root / "Images" / "X" / "ok.png", gradient(20, 20))
    qa = root / "QA_information" / "Restricted-access"
    qa.mkdir(parents=True)
    base = {"dataset": "X", "question_type": "Disease Diagnosis", "question": "Diagnosis?", "gt_answer": "a",
            "option_A": "a", "option_B": "b"}
    (qa / "X.json").write_text(json.dumps([{**base, "question_id": "1", "image_path": "Images/X/ok.png"},
                                           {**base, "question_id": "2", "image_path": "/etc/passwd"}]))
    done = subprocess.run([sys.executable, "-m", "medr2.cli", "import", fmt, str(root), "--out",
                           str(tmp_path / "bench")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    entries = Quarantine.read(tmp_path / "bench" / "quarantine.jsonl")
    assert [(e.record, e.field) for e in entries] == [("2", "image")]
    bench = load_bench(tmp_path / "bench")
    assert len(bench.items) == 1 and bench.items[0].access == "restricted"


# --- every file an importer reads stays inside the dataset folder: a symlink and a `..` path for each ----------


def _outside(tmp_path: Path) -> Path:
    """A folder outside every dataset, holding a valid image, label map and annotation files to lure readers."""
    out = tmp_path / "outside"
    write_png(out / "outside.png", bad.pattern(seed=9))
    lm = bad.pattern(40, 40, seed=9) % 3
    write_png(out / "labelmap.png", lm.astype("uint8"))
    (out / "detection.json").write_text(json.dumps([{"Secret": [1, 1, 5, 5]}]))
    (out / "mask.txt").write_text("1:Secret\n2:Hidden\n")
    return out


def _link(path: Path, target: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    return path


def _escaped(res: ImportResult) -> None:
    """No byte from outside reached the import: no structure, finding or item mentions the lures."""
    names = {s.name for c in res.cases for s in c.structures} | {f.label for c in res.cases for f in c.findings}
    assert not names & {"Secret", "Hidden"}, names
    for q in res.quarantined:
        assert "escapes" in q.reason or "absolute" in q.reason or "outside" in q.reason, q


def _escaping_images(tmp_path: Path, image_dir: Path) -> Path:
    """The lures outside (returned) and, in ``image_dir``, ``ok.png`` and ``link.png`` symlinked out."""
    out = _outside(tmp_path)
    write_png(image_dir / "ok.png", bad.pattern())
    _link(image_dir / "link.png", out / "outside.png")
    return out


def _lure(out: Path, name: str, text: str, link: Path) -> None:
    """A question file ``name`` outside holding ``text``, symlinked into the dataset as ``link``."""
    (out / name).write_text(text)
    _link(link, out / name)


def _import_inside(fmt: str, root: Path, dest: Path, expected: dict[str, str], n_items: int) -> None:
    res = run_import(fmt, root, dest)
    _check(res, expected, n_items=n_items)
    _escaped(res)


def test_slake_paths_stay_inside(tmp_path: Path) -> None:
    """SLAKE: detection.json and mask.png symlinked to files outside (issue 24), mask.txt symlinked out, a
    split file symlinked out, an image named with `..` and an image symlinked out: each quarantined with the
    reason; the cases keep their own image."""
    out = _outside(tmp_path)
    root = tmp_path / "slake"
    imgs = root / "imgs"
    for i in range(2):
        write_png(imgs / f"xmlab{i}" / "source.jpg", gradient(40, 40, i))
    _link(imgs / "xmlab0" / "detection.json", out / "detection.json")
    _link(imgs / "xmlab1" / "mask.png", out / "labelmap.png")
    _link(imgs / "xmlab2" / "source.jpg", out / "outside.png")
    _link(root / "mask.txt", out / "mask.txt")
    base = {"answer_type": "OPEN", "content_type": "Organ", "q_lang": "en", "modality": "CT", "answer": "x",
            "question": "Which organ is shown?"}
    recs = [{**base, "qid": 1, "img_name": "xmlab0/source.jpg"}, {**base, "qid": 2, "img_name": "xmlab1/source.jpg"},
            {**base, "qid": 3, "img_name": "xmlab2/source.jpg"},
            {**base, "qid": 4, "img_name": "../../outside/outside.png"},
            {**base, "qid": 5, "img_name": "xmlab0/../../../outside/outside.png"}]
    (root / "train.json").write_text(json.dumps(recs))
    (out / "test.json").write_text(json.dumps([{**base, "qid": 9, "img_name": "xmlab0/source.jpg"}]))
    _link(root / "test.json", out / "test.json")
    res = run_import("slake", root, tmp_path / "b")
    _check(res, {"xmlab0": "detection", "xmlab1": "mask", "mask.txt": "mask.txt", WHOLE_FILE: "file",
                 "3": "image", "4": "image", "5": "image"}, n_items=2)
    _escaped(res)
    assert all("mask" not in c.meta for c in res.cases)  # the lured label map was not stored either


def test_vqarad_paths_stay_inside(tmp_path: Path) -> None:
    root = tmp_path / "rad"
    out = _escaping_images(tmp_path, root / "VQA_RAD Image Folder")
    base = {"answer_type": "CLOSED", "question_type": "PRES", "question": "Is there a mass?", "answer": "yes"}
    recs = [{**base, "qid": "ok", "image_name": "ok.png"}, {**base, "qid": "link", "image_name": "link.png"},
            {**base, "qid": "dotdot", "image_name": "../../outside/outside.png"}]
    (root / "VQA_RAD Dataset Public.json").write_text(json.dumps(recs))
    _import_inside("vqa-rad", root, tmp_path / "b", {"link": "image", "dotdot": "image"}, n_items=1)
    # the question file itself symlinked out of the dataset folder: quarantined whole, never read
    root2 = tmp_path / "rad2"
    write_png(root2 / "VQA_RAD Image Folder" / "ok.png", bad.pattern())
    _lure(out, "rad.json", json.dumps(recs[:1]), root2 / "VQA_RAD Dataset Public.json")
    _check(run_import("vqa-rad", root2, tmp_path / "b2"), {WHOLE_FILE: "file"}, n_items=0)


def test_probmed_paths_stay_inside(tmp_path: Path) -> None:
    root = tmp_path / "pm"
    out = _escaping_images(tmp_path, root / "ct")
    base = {"qa_type": "abnormality", "question": "Is it normal?", "answer": "no"}
    recs = [{**base, "id": 1, "image": "ct/ok.png"}, {**base, "id": 2, "image": "ct/link.png"},
            {**base, "id": 3, "image": "ct/../../outside/outside.png"}]
    (root / "test.json").write_text(json.dumps(recs))
    _import_inside("probmed", root, tmp_path / "b", {"2:abnormality": "image", "3:abnormality": "image"}, n_items=1)
    root2 = tmp_path / "pm2"
    write_png(root2 / "ct" / "ok.png", bad.pattern())
    _lure(out, "pm.json", json.dumps(recs[:1]), root2 / "test.json")
    _check(run_import("probmed", root2, tmp_path / "b2"), {WHOLE_FILE: "file"}, n_items=0)


def test_pmcvqa_paths_stay_inside(tmp_path: Path) -> None:
    root = tmp_path / "pmc"
    out = _escaping_images(tmp_path, root / "images")
    header = "Figure_path,Question,Answer,Choice A,Choice B,Choice C,Choice D,Answer_label\n"
    (root / "test.csv").write_text(header + "ok.png,Which modality?,CT,A:CT,B:MRI,,,A\n"
                                   "link.png,Which modality?,CT,A:CT,B:MRI,,,A\n"
                                   "../../outside/outside.png,Which modality?,CT,A:CT,B:MRI,,,A\n")
    _lure(out, "lure.csv", header + "ok.png,Which plane?,axial,A:axial,B:coronal,,,A\n", root / "train.csv")
    _import_inside("pmc-vqa", root, tmp_path / "b",
                   {"test.csv row 3": "image", "test.csv row 4": "image", WHOLE_FILE: "file"}, n_items=1)


def test_omnimedvqa_paths_stay_inside(tmp_path: Path) -> None:
    root = tmp_path / "omni"
    out = _escaping_images(tmp_path, root / "Images" / "X")
    qa = root / "QA_information" / "Open-access"
    base = {"dataset": "X", "question_type": "Modality Recognition", "question": "Which modality?",
            "gt_answer": "CT", "option_A": "CT", "option_B": "MRI"}
    recs = [{**base, "question_id": "ok", "image_path": "Images/X/ok.png"},
            {**base, "question_id": "link", "image_path": "Images/X/link.png"},
            {**base, "question_id": "dotdot", "image_path": "Images/../../outside/outside.png"}]
    qa.mkdir(parents=True)
    (qa / "X.json").write_text(json.dumps(recs))
    _lure(out, "Y.json", json.dumps(recs[:1]), qa / "Y.json")
    _import_inside("omnimedvqa", root, tmp_path / "b", {"link": "image", "dotdot": "image", WHOLE_FILE: "file"},
                   n_items=1)


def test_vlmevalkit_paths_stay_inside(tmp_path: Path) -> None:
    root = tmp_path / "tsv"
    out = _escaping_images(tmp_path, root)
    header = "index\timage\timage_path\tquestion\tA\tB\tanswer\n"
    (root / "Med.tsv").write_text(header + "0\t\tok.png\tWhich?\tCT\tMRI\tA\n1\t\tlink.png\tWhich?\tCT\tMRI\tA\n"
                                  "2\t\t../outside/outside.png\tWhich?\tCT\tMRI\tA\n")
    _lure(out, "lure.tsv", header + "0\t\tok.png\tWhich plane?\taxial\tcoronal\tA\n", root / "Lure.tsv")
    _import_inside("vlmevalkit", root, tmp_path / "b", {"1": "image", "2": "image", WHOLE_FILE: "file"}, n_items=1)


def _edited_path_rows(rows: list[dict[str, Any]], key: str, rec: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Exported rows whose embedded ``medr2_item`` / ``medr2_case`` image path was edited to leave the bench
    (the sha256 kept, so the hash check alone would pass). ``key``: the column naming the record."""
    from medr2.interop.roundtrip import CASE_COL

    a = rows[0]
    item, case = json.loads(a[ITEM_COL]), json.loads(a[CASE_COL])
    out = [{**a, key: f"{rec}-item", ITEM_COL: json.dumps({**item, "image": "../../../../etc/hostname"})},
           {**a, key: f"{rec}-case", CASE_COL: json.dumps({**case, "image": "../../../../etc/hostname"})},
           {**a, key: f"{rec}-mask", CASE_COL: json.dumps(
               {**case, "structures": [{"name": "x", "box": [0, 0, 2, 2], "mask": "../../../../etc/hostname"}]})},
           {**a, key: f"{rec}-deep", ITEM_COL: "[" * 5000 + "]" * 5000},  # nested 5,000 deep
           {**a, key: f"{rec}-deep-case", CASE_COL: '{"a": ' * 5000 + "1" + "}" * 5000}]
    return out, {f"{rec}-item": f"{ITEM_COL}.image", f"{rec}-case": f"{CASE_COL}.image",
                 f"{rec}-mask": f"{CASE_COL}.structures[0].mask", f"{rec}-deep": ITEM_COL, f"{rec}-deep-case": CASE_COL}


def test_vlmevalkit_export_with_edited_image_path(tmp_path: Path) -> None:
    """Issue 24: an exported TSV whose ``medr2_item`` image path was edited to ../../../../etc/hostname (its sha
    kept) is quarantined at import time naming file, record and field; the untouched rows import, and the bench
    written from the import loads."""
    exp = _export(tmp_path, "vlmevalkit")
    tsv = next(exp.glob("*_train.tsv"))
    csv.field_size_limit(1 << 30)
    with tsv.open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    n_good = len(rows)
    edited, expected = _edited_path_rows(rows, "index", "9")
    with tsv.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows + edited)
    res = run_import("vlmevalkit", exp, tmp_path / "b")
    _check(res, expected, n_items=n_good + 1)
    assert all(q.file == str(tsv) for q in res.quarantined)
    write_import(res, tmp_path / "b")
    assert len(load_bench(tmp_path / "b").items) == n_good + 1


def test_hf_and_lmms_paths_stay_inside(tmp_path: Path) -> None:
    """hf: a parquet in data/ symlinked out, rows with edited image paths. lmms-eval: a task YAML symlinked
    out, a data file named with `..`, a data file symlinked out."""
    lure = tmp_path / "outside"
    lure.mkdir()
    out = _export(tmp_path, "hf")
    train = out / "data" / "train-00000-of-00001.parquet"
    table = pq.read_table(train)
    edited, expected = _edited_path_rows(table.to_pylist(), "item_id", "edited")
    pq.write_table(pa.Table.from_pylist(table.to_pylist() + edited, schema=table.schema), train)
    (lure / "x.parquet").write_bytes((out / "data" / "test-00000-of-00001.parquet").read_bytes())
    _link(out / "data" / "zz-link.parquet", lure / "x.parquet")
    res = run_import("hf", out, tmp_path / "b")
    _check(res, expected | {WHOLE_FILE: "file"}, n_items=len(table) + 1)

    lm = _export(tmp_path, "lmms-eval")
    yml = next(lm.glob("*_test.yaml"))
    test_pq = str((lm / "data" / "test-00000-of-00001.parquet").resolve())
    (lure / "t.yaml").write_text(yml.read_text())
    _link(lm / "lure.yaml", lure / "t.yaml")
    (lm / "dotdot.yaml").write_text(yml.read_text().replace(test_pq, "../outside/x.parquet"))
    _link(lm / "data" / "link.parquet", lure / "x.parquet")
    (lm / "link.yaml").write_text(yml.read_text().replace(test_pq, "data/link.parquet"))
    res = run_import("lmms-eval", lm, tmp_path / "b2")
    n_train = len(pq.read_table(lm / "data" / "train-00000-of-00001.parquet"))
    _check(res, {WHOLE_FILE: "file", str(lm / "../outside/x.parquet"): "data_files",
                 str(lm / "data/link.parquet"): "data_files"},
           n_items=n_train + 1)
