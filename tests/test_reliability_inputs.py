"""DESIGN §12 bad input: a corpus of broken files and records for every reader, the importers and
bench loading. Each bad record is quarantined with its file, record and field; the rest is built;
exit codes follow DESIGN §13 (0 with quarantined records, 2 for a source or bench that is bad as a whole)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medr2.bench.format import load_bench
from medr2.errors import BadInput, Quarantine
from tests import bad_inputs as bad
from tests.interop_fixtures import make_dicom_folder, make_nifti_folder, write_png
from tests.run_fixtures import make_bench

MEDR2 = [sys.executable, "-m", "medr2.cli"]
TRIED: dict[str, int] = {}  # bad inputs tried per reader (printed as figures)


def _build(spec: str, out: Path, expect: int = 0) -> tuple[str, list[Any]]:
    """``medr2 build``: in-process for the record-level corpora (exit 0: the build returns), through the
    command line where the exit code is the point. Returns (stderr, quarantine entries)."""
    if expect == 0:
        from medr2.build.pipeline import build_bench

        build_bench(spec, out, seed=0, workers=1)
        return "", Quarantine.read(out / "quarantine.jsonl")
    done = subprocess.run([*MEDR2, "build", "--source", spec, "--out", str(out), "--workers", "1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == expect, done.stderr[-3000:]
    return done.stderr, Quarantine.read(out / "quarantine.jsonl")


def _by_record(entries: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for e in entries:
        assert e.reason and e.record and e.file, e  # names the file, the record and why
        out.setdefault(e.record, e)
    return out


def _cell(obj: Any) -> str:
    return '"' + json.dumps(obj).replace('"', '""') + '"'


# --- folder reader ---------------------------------------------------------------------------------


def test_folder_bad_corpus(tmp_path: Path) -> None:
    data = tmp_path / "data"
    rows = ["image,modality,quality,findings"]
    write_png(data / "good1.png", bad.pattern(seed=1))
    write_png(data / "good2.png", bad.pattern(seed=2))
    rows += ["good1.png,CT,good,", "good2.png,CT,,"]
    expected_bad: dict[str, str | None] = {}
    for name, make in bad.BAD_IMAGES.items():
        make(data / name)
        rows.append(f"{name},CT,,")
        expected_bad[name] = "image"
    for name, (make, _) in bad.ODD_IMAGES.items():
        make(data / name)
        rows.append(f"{name},MRI,,")
    box_cases = {"box-outside.png": [30, 10, 90, 20], "box-negative.png": [20, 10, 10, 20],
                 "box-nan.png": [math.nan, 1, 5, 5], "box-text.png": [1, 2, "x", 4], "box-inf.png": [0, 0, 1e999, 3]}
    for name, box in box_cases.items():
        write_png(data / name, bad.pattern(seed=3))
        rows.append(f"{name},CT,,{_cell([{'label': 'nodule', 'box': box}])}")
        expected_bad[name] = "findings[0].box"
    write_png(data / "unknown-label.png", bad.pattern(seed=4))
    rows.append("unknown-label.png,CT,excellent,")
    expected_bad["unknown-label.png"] = "quality"
    # the same image under another spelling with the same labels: the second row is quarantined, the first kept
    # (contradictory labels for one image quarantine every row of it: tests/test_integrity.py)
    rows.append("./good1.png,CT,good,")
    outside = tmp_path / "outside.png"
    write_png(outside, bad.pattern(seed=5))
    os.symlink(outside, data / "link.png")
    rows += ["../outside.png,CT,,", f"{outside},CT,,", "link.png,CT,,", "missing.png,CT,,"]
    expected_bad.update({"../outside.png": "image", str(outside): "image", "link.png": "image",
                         "missing.png": "image"})
    (data / "labels.csv").write_text("\n".join(rows) + "\n")
    TRIED["folder"] = len(expected_bad) + 1 + len(bad.ODD_IMAGES)

    _, entries = _build(f"folder:{data}", tmp_path / "bench")
    q = _by_record(entries)
    for rec, fld in expected_bad.items():
        assert rec in q, f"{rec} not quarantined: {sorted(q)}"
        assert q[rec].field == fld, (rec, q[rec])
    assert "escapes" in q["../outside.png"].reason and "escapes" in q["link.png"].reason
    assert "absolute" in q[str(outside)].reason
    assert "bomb" in q["bomb.png"].reason or "exceeds" in q["bomb.png"].reason
    dup = [e for e in entries if e.record == "good1.png"]
    assert len(dup) == 1 and "duplicate" in dup[0].reason
    bench = load_bench(tmp_path / "bench")
    by_file = {c.meta["file"]: c for c in bench.cases}
    assert set(by_file) == {"good1.png", "good2.png", *bad.ODD_IMAGES}  # the rest continued
    for name, (_, size) in bad.ODD_IMAGES.items():
        assert (by_file[name].width, by_file[name].height) == size, name  # EXIF rotation applied
    assert by_file["good1.png"].modality == "CT"  # the first of the duplicate rows
    assert bench.manifest["quarantine"]["n"] == len(entries)


@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
def test_folder_wrong_encoding_is_exit_2(tmp_path: Path, encoding: str) -> None:
    data = tmp_path / "data"
    write_png(data / "a.png", bad.pattern())
    text = "image,modality,diagnosis\na.png,CT,œdème\n" if encoding == "utf-16" else "image,modality,diagnosis\n" \
        "a.png,CT,\xe9panchement\n"
    (bad.utf16_csv if encoding == "utf-16" else bad.latin1_csv)(data / "labels.csv", text)
    stderr, _ = _build(f"folder:{data}", tmp_path / "bench", expect=2)
    assert "labels.csv" in stderr.replace("\n", "")
    assert not (tmp_path / "bench" / "manifest.json").exists()
    TRIED["folder"] = TRIED.get("folder", 0) + 1


# --- coco reader -----------------------------------------------------------------------------------


def test_coco_bad_corpus(tmp_path: Path) -> None:
    root = tmp_path / "c"
    write_png(root / "imgs" / "ok.png", bad.pattern(40, 50))
    bad.zero_byte(root / "imgs" / "zero.png")
    bad.truncated_png(root / "imgs" / "trunc.png")
    bad.bomb_png(root / "imgs" / "bomb.png")
    write_png(root / "imgs" / "boxes.png", bad.pattern(40, 50, 1))
    outside = tmp_path / "outside.png"
    write_png(outside, bad.pattern(40, 50))
    os.symlink(outside, root / "imgs" / "link.png")
    images = [
        {"id": 1, "file_name": "ok.png", "width": 50, "height": 40},
        {"id": 2, "file_name": "zero.png", "width": 50, "height": 40},
        {"id": 3, "file_name": "trunc.png", "width": 48, "height": 40},
        {"id": 4, "file_name": "bomb.png", "width": 100000, "height": 100000},
        {"id": 5, "file_name": "../../outside.png", "width": 50, "height": 40},
        {"id": 6, "file_name": str(outside), "width": 50, "height": 40},
        {"id": 7, "file_name": "link.png", "width": 50, "height": 40},
        {"id": 8, "file_name": "boxes.png", "width": 50, "height": 40},
        {"id": 9, "file_name": "boxes.png", "width": 50, "height": 40},
        {"id": 10, "file_name": "boxes.png", "width": 50, "height": 40},
        {"id": 11, "file_name": "boxes.png", "width": 50, "height": 40},
        {"id": 8, "file_name": "ok.png", "width": 50, "height": 40},  # duplicate image id
    ]
    anns = [
        {"id": 1, "image_id": 1, "category_id": 1, "bbox": [2, 3, 10, 10]},
        {"id": 2, "image_id": 8, "category_id": 1, "bbox": [40, 30, 30, 30]},  # outside the image
        {"id": 3, "image_id": 9, "category_id": 1, "bbox": [5, 5, -4, 6]},  # negative size
        {"id": 4, "image_id": 10, "category_id": 77, "bbox": [1, 1, 2, 2]},  # unknown category
        {"id": 5, "image_id": 11, "category_id": 1, "bbox": [float("nan"), 1, 2, 2]},
    ]
    coco = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "cyst"}]}
    (root / "ann.json").write_text(json.dumps(coco))  # json writes NaN, as some exporters do
    (root / "medr2.json").write_text(json.dumps({"annotations": "ann.json", "images_dir": "imgs",
                                                 "defaults": {"modality": "CT"}}))
    TRIED["coco"] = 12
    _, entries = _build(f"coco:{root}", tmp_path / "bench")
    assert all(e.reason and e.file and e.record and e.field for e in entries), entries
    fields = sorted({e.field for e in entries})
    assert any(f.startswith("images.file_name") for f in fields), fields
    assert any("bbox" in f or "box" in f for f in fields), fields
    text = " ".join(e.reason for e in entries)
    assert "escapes" in text and "absolute" in text and "unknown category" in text
    bench = load_bench(tmp_path / "bench")
    assert len(bench.cases) == 1 and bench.cases[0].findings[0].box == (2.0, 3.0, 12.0, 13.0)
    boxes = {e.reason for e in entries if e.field == "findings[0].box"}
    assert any("outside" in r for r in boxes) and any("non-positive" in r for r in boxes), boxes
    assert any("non-finite" in r for r in boxes), boxes
    assert len(entries) == 11


# --- masks reader ----------------------------------------------------------------------------------


def test_masks_bad_corpus(tmp_path: Path) -> None:
    d = tmp_path / "m"
    lm = np.zeros((40, 48), np.uint8)
    lm[5:15, 5:20] = 1
    for stem in ("ok", "zero-mask", "trunc-mask", "rgb-mask", "size-mask", "unknown-value"):
        write_png(d / "images" / f"{stem}.png", bad.pattern(seed=len(stem)))
    write_png(d / "masks" / "ok.png", lm)
    bad.zero_byte(d / "masks" / "zero-mask.png")
    bad.truncated_png(d / "masks" / "trunc-mask.png")
    write_png(d / "masks" / "rgb-mask.png", np.stack([lm] * 3, axis=-1))
    write_png(d / "masks" / "size-mask.png", np.zeros((10, 10), np.uint8))
    unk = lm.copy()
    unk[30, 30] = 9
    write_png(d / "masks" / "unknown-value.png", unk)
    for name, make in bad.BAD_IMAGES.items():
        make(d / "images" / name)
        write_png(d / "masks" / (Path(name).stem + ".png"), lm)
    (d / "labels.json").write_text(json.dumps({"1": "liver"}))
    (d / "medr2.json").write_text(json.dumps({"defaults": {"modality": "CT"}}))
    TRIED["masks"] = 5 + len(bad.BAD_IMAGES)
    _, entries = _build(f"masks:{d}", tmp_path / "bench")
    q = _by_record(entries)
    assert all(e.field for e in entries), entries
    expected = {f"images/{s}.png" for s in ("zero-mask", "trunc-mask", "rgb-mask", "size-mask", "unknown-value")}
    expected |= {f"images/{n}" for n in bad.BAD_IMAGES}
    assert expected <= set(q), sorted(set(expected) - set(q))
    assert [c.meta["file"] for c in load_bench(tmp_path / "bench").cases] == ["images/ok.png"]


# --- dicom and nifti readers -----------------------------------------------------------------------


def test_dicom_bad_corpus(tmp_path: Path) -> None:
    d = tmp_path / "dcm"
    make_dicom_folder(d)  # holds good files and broken.dcm
    good = d / "cr" / "chest.dcm"
    bad.zero_byte(d / "bad" / "zero.dcm")
    bad.truncated_copy(good, d / "bad" / "trunc.dcm", 0.6)
    bad.truncated_copy(good, d / "bad" / "header-only.dcm", 0.02)
    bad.text_as_image(d / "bad" / "text.dcm")
    bad.truncated_png(d / "bad" / "png.dcm")
    TRIED["dicom"] = 6
    _, entries = _build(f"dicom:{d}", tmp_path / "bench")
    files = {e.file for e in entries}
    for name in ("zero.dcm", "trunc.dcm", "header-only.dcm", "text.dcm", "png.dcm"):
        assert f"bad/{name}" in files or any(str(f).endswith(name) for f in files), (name, entries)
    assert all(e.reason and e.record for e in entries), entries
    assert len(load_bench(tmp_path / "bench").cases) >= 5  # ct, 3 mr frames, cr


def test_nifti_bad_corpus(tmp_path: Path) -> None:
    d = tmp_path / "nii"
    make_nifti_folder(d)
    vols = sorted(p for p in d.rglob("*.nii.gz") if "labels" not in p.parts)
    bad.zero_byte(d / "zero.nii.gz")
    bad.truncated_copy(vols[0], d / "trunc.nii.gz", 0.5)
    bad.text_as_image(d / "text.nii")
    TRIED["nifti"] = 3
    _, entries = _build(f"nifti:{d}", tmp_path / "bench")
    recs = {e.record for e in entries}
    assert {"zero.nii.gz", "trunc.nii.gz", "text.nii"} <= recs, entries
    assert all(e.field for e in entries), entries
    assert len(load_bench(tmp_path / "bench").cases) == 6


# --- an importer -----------------------------------------------------------------------------------


def test_vqarad_import_bad_records(tmp_path: Path) -> None:
    root = tmp_path / "vqarad"
    imgs = root / "VQA_RAD Image Folder"
    write_png(imgs / "ok.png", bad.pattern())
    bad.truncated_png(imgs / "trunc.png")
    bad.zero_byte(imgs / "zero.png")
    outside = tmp_path / "outside.png"
    write_png(outside, bad.pattern())
    base = {"answer_type": "CLOSED", "question_type": "PRES", "phrase_type": "freeform", "image_organ": "CHEST"}
    recs = [
        {"qid": 1, "image_name": "ok.png", "question": "Is there a mass?", "answer": "yes", **base},
        {"qid": 2, "image_name": "trunc.png", "question": "Is there a mass?", "answer": "no", **base},
        {"qid": 3, "image_name": "zero.png", "question": "Is there a mass?", "answer": "no", **base},
        {"qid": 4, "image_name": "../../outside.png", "question": "Is there a mass?", "answer": "no", **base},
        {"qid": 5, "image_name": str(outside), "question": "Is there a mass?", "answer": "no", **base},
        {"qid": 6, "image_name": "ok.png", "question": None, "answer": "no", **base},
        {"qid": 7, "image_name": "nope.png", "question": "Is there a mass?", "answer": "no", **base},
    ]
    (root / "VQA_RAD Dataset Public.json").write_text(json.dumps(recs))
    TRIED["import vqa-rad"] = 6
    done = subprocess.run([*MEDR2, "import", "vqa-rad", str(root), "--out", str(tmp_path / "bench")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    entries = Quarantine.read(tmp_path / "bench" / "quarantine.jsonl")
    assert len(entries) == 6, entries
    assert all(e.reason and e.file and e.record for e in entries), entries
    assert len(load_bench(tmp_path / "bench").items) >= 1


# --- bench loading ---------------------------------------------------------------------------------


def _rewrite_items(root: Path, change: Any) -> None:
    """Edit items.parquet in place and fix the manifest checksums (a bench built by a buggy tool)."""
    from medr2.bench.format import bench_checksum
    from medr2.imageio import sha256_file

    path = root / "items.parquet"
    table = pq.read_table(path)
    rows = change(table.to_pylist())
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    m = json.loads((root / "manifest.json").read_text())
    m["checksums"]["items.parquet"] = sha256_file(path)
    m["checksums"]["bench"] = bench_checksum(m["checksums"]["items.parquet"], m["checksums"]["cases.parquet"])
    (root / "manifest.json").write_text(json.dumps(m))


def _first(rows: list[dict[str, Any]], **kv: Any) -> list[dict[str, Any]]:
    rows[0].update(kv)
    return rows


BENCH_DAMAGE: dict[str, Any] = {
    "zero-byte items": lambda r: (r / "items.parquet").write_bytes(b""),
    "truncated items": lambda r: (r / "items.parquet").write_bytes((r / "items.parquet").read_bytes()[:200]),
    "no manifest": lambda r: (r / "manifest.json").unlink(),
    "incomplete manifest": lambda r: (r / "manifest.json").write_text(
        (r / "manifest.json").read_text().replace('"complete": true', '"complete": false')),
    "manifest not utf-8": lambda r: (r / "manifest.json").write_bytes(b'{"format": "\xff\xfe"}'),
    "manifest not json": lambda r: (r / "manifest.json").write_text("{not json"),
    "image replaced": lambda r: bad.text_as_image(sorted((r / "images").iterdir())[0]),
    "image removed": lambda r: sorted((r / "images").iterdir())[0].unlink(),
    "item path escapes": lambda r: _rewrite_items(r, lambda rows: _first(rows, image="../../etc/passwd")),
    "item absolute path": lambda r: _rewrite_items(r, lambda rows: _first(rows, image="/etc/passwd")),
    "duplicate item id": lambda r: _rewrite_items(r, lambda rows: [*rows, rows[0]]),
    "nan answer box": lambda r: _rewrite_items(r, lambda rows: [
        {**x, "answer_box": "[NaN, 1, 5, 5]"} if x["answer_box"] else x for x in rows]),
    "negative answer box": lambda r: _rewrite_items(r, lambda rows: [
        {**x, "answer_box": "[20, 10, 10, 20]"} if x["answer_box"] else x for x in rows]),
    "unknown form": lambda r: _rewrite_items(r, lambda rows: _first(rows, form="essay")),
    "unknown case": lambda r: _rewrite_items(r, lambda rows: _first(rows, case_id="nobody")),
    "checksum mismatch": lambda r: pq.write_table(pq.read_table(r / "items.parquet").slice(1),
                                                   r / "items.parquet"),
}


@pytest.mark.parametrize("damage", sorted(BENCH_DAMAGE))
def test_bench_loading_refuses_damage(tmp_path: Path, damage: str) -> None:
    root = tmp_path / "bench"
    make_bench(root, n_cases=2)
    BENCH_DAMAGE[damage](root)
    with pytest.raises(BadInput) as info:
        load_bench(root)
    err = info.value
    assert err.file, str(err)
    if damage in ("item path escapes", "item absolute path", "duplicate item id", "nan answer box",
                  "negative answer box", "unknown form", "unknown case", "image replaced", "image removed"):
        assert err.record and err.field, str(err)  # names the record and the field


def test_bench_damage_exit_code(tmp_path: Path) -> None:
    root = tmp_path / "bench"
    make_bench(root, n_cases=2)
    BENCH_DAMAGE["item path escapes"](root)
    done = subprocess.run([*MEDR2, "eval", "--bench", str(root), "--model", "baseline:random", "--out",
                           str(tmp_path / "run"), "--no-progress"], capture_output=True, text=True, timeout=120)
    err = done.stderr.replace("\n", "")
    assert done.returncode == 2 and "items.parquet" in err and "escapes" in err and "field=image" in err, err
    assert not (tmp_path / "run" / "store.sqlite").exists()
    TRIED["bench loading"] = len(BENCH_DAMAGE)
    print("RELIABILITY-FIGURES bad-inputs", json.dumps(TRIED, sort_keys=True))
