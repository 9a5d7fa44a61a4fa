"""Bad input (docs/reliability.md): a corpus of broken files and records for every reader, the importers and
bench loading. Each bad record is quarantined with its file, record and field; the rest is built;
exit codes follow the README (0 with quarantined records, 2 for a source or bench that is bad as a whole)."""

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

from medr2 import BadInput
from medr2.bench.format import load_bench
from medr2.errors import Quarantine
from tests import bad_inputs as bad
from tests.interop_fixtures import make_dicom_folder, make_nifti_folder, write_png
from tests.run_fixtures import make_bench

MEDR2 = [sys.executable, "-m", "medr2.cli"]
TRIED: dict[str, int] = {}  # bad inputs tried per reader (printed as figures)


def _build(spec: str, out: Path, expect: int = 0) -> tuple[str, list[Any]]:
    """``medr2 build``: in-process for the record-level corpora (exit 0: the build returns), through the
    command line where the exit code is the point. Returns (stderr, quarantine entries)."""
    if expect == 0:
        from medr2.builder.pipeline import build_bench

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
    from medr2.images import sha256_file

    path = root / "items.parquet"
    table = pq.read_table(path)
    rows = change(table.to_pylist())
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    m = json.loads((root / "manifest.json").read_text())
    m["checksums"]["items.parquet"] = sha256_file(path)
    m["checksums"]["bench"] = bench_checksum(m["checksums"]["items.parquet"], m["checksums"]["cases.parquet"])
    (root / "manifest.json").write_text(json.dumps(m))


def _edit_manifest(root: Path, **kv: Any) -> None:
    m = json.loads((root / "manifest.json").read_text())
    m.update(kv)
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
    "manifest nested 5,000 deep": lambda r: (r / "manifest.json").write_text(
        (r / "manifest.json").read_text().replace('"format":', '"x": ' + "[" * 5000 + "]" * 5000 + ', "format":', 1)),
    "checksums a list": lambda r: _edit_manifest(r, checksums=["a", "b"]),
    "checksums missing": lambda r: _edit_manifest(r, checksums=None),
    "item meta nested 5,000 deep": lambda r: _rewrite_items(r, lambda rows: _first(rows, meta="[" * 5000 + "]" * 5000)),
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
                  "negative answer box", "unknown form", "unknown case", "image replaced", "image removed",
                  "item meta nested 5,000 deep"):
        assert err.record and err.field, str(err)  # names the record and the field


def test_bench_damage_exit_code(tmp_path: Path) -> None:
    root = tmp_path / "bench"
    make_bench(root, n_cases=2)
    BENCH_DAMAGE["item path escapes"](root)
    done = subprocess.run([*MEDR2, "eval", "--split", "all", "--bench", str(root), "--model", "baseline:random",
                           "--out", str(tmp_path / "run"), "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    err = done.stderr.replace("\n", "")
    assert done.returncode == 2 and "items.parquet" in err and "escapes" in err and "field=image" in err, err
    assert not (tmp_path / "run" / "store.sqlite").exists()
    TRIED["bench loading"] = len(BENCH_DAMAGE)
    print("RELIABILITY-FIGURES bad-inputs", json.dumps(TRIED, sort_keys=True))


# --- hostile values and headers (reliability II: issue 21 items 6, 7 and 9) ---------------------------

DEEP = "[" * 5000 + "]" * 5000  # 5,000 levels: the JSON decoder would raise RecursionError


def _deep_obj() -> str:
    return '{"a": ' * 5000 + "1" + "}" * 5000


def test_folder_hostile_values(tmp_path: Path) -> None:
    """A findings cell nested 5,000 deep, Infinity and NaN in a JSON label table, a 5,000-character and a
    NUL-containing image path, a ``frame`` of "x1": each record quarantined naming its field, the rest built."""
    data = tmp_path / "data"
    write_png(data / "good.png", bad.pattern(seed=1))
    for name in ("deep.png", "inf-spacing.png", "inf-severity.png", "nan-spacing.png", "frame.png", "deep2.png"):
        write_png(data / name, bad.pattern(seed=2))
    long_name = "a" * 5000 + ".png"
    rows: list[dict[str, Any]] = [
        {"image": "good.png", "modality": "CT"},
        {"image": "deep.png", "modality": "CT", "findings": DEEP},
        {"image": "deep2.png", "modality": "CT", "findings": _deep_obj()},
        {"image": "inf-spacing.png", "modality": "CT", "pixel_spacing_mm": math.inf},
        {"image": "nan-spacing.png", "modality": "CT", "pixel_spacing_mm": math.nan},
        {"image": "inf-severity.png", "modality": "CT", "artefact_severity": math.inf},
        {"image": "frame.png", "modality": "CT", "frame": "x1"},
        {"image": long_name, "modality": "CT"},
        {"image": "nul\x00.png", "modality": "CT"},
    ]
    (data / "labels.json").write_text(json.dumps(rows))  # json writes Infinity / NaN, as some tools do
    _, entries = _build(f"folder:{data}", tmp_path / "bench")
    q = _by_record(entries)
    expected = {"deep.png": "findings", "deep2.png": "findings", "inf-spacing.png": "pixel_spacing_mm",
                "nan-spacing.png": "pixel_spacing_mm", "inf-severity.png": "artefact_severity", "frame.png": "frame"}
    for rec, fld in expected.items():
        assert rec in q and q[rec].field == fld, (rec, q.get(rec))
    assert "nested more than" in q["deep.png"].reason and "nested more than" in q["deep2.png"].reason
    long_q = [e for e in entries if e.record.startswith("aaaa")]
    nul_q = [e for e in entries if "nul" in e.record]
    assert len(long_q) == 1 and "5004 characters" in long_q[0].reason and long_q[0].field == "image", long_q
    assert len(nul_q) == 1 and "NUL" in nul_q[0].reason and nul_q[0].field == "image", nul_q
    assert [c.meta["file"] for c in load_bench(tmp_path / "bench").cases] == ["good.png"]
    TRIED["folder"] = TRIED.get("folder", 0) + 8


@pytest.mark.parametrize("content", ["deep-list", "deep-object", "deep-mapping"])
def test_deep_label_file_is_exit_2(tmp_path: Path, content: str) -> None:
    """A label table or mapping file nested 5,000 deep is bad as a whole: exit 2 naming the file."""
    data = tmp_path / "data"
    write_png(data / "a.png", bad.pattern())
    if content == "deep-mapping":
        (data / "medr2.json").write_text('{"defaults": ' + DEEP + "}")
        name = "medr2.json"
    else:
        (data / "labels.json").write_text(DEEP if content == "deep-list" else _deep_obj())
        name = "labels.json"
    stderr, _ = _build(f"folder:{data}", tmp_path / "bench", expect=2)
    err = "".join(stderr.split())  # the console may wrap the message at any space
    assert name in err and "nestedmorethan" in err and "Traceback" not in stderr, stderr[-2000:]
    TRIED["folder"] = TRIED.get("folder", 0) + 1


def _dicom_corpus(d: Path) -> dict[str, str]:
    """Hostile DICOM headers beside a good file; returns file -> the field its quarantine entry must name."""
    import pydicom
    from pydicom.pixels import pack_bits

    from tests.interop_fixtures import write_dicom_image

    px = (np.arange(40 * 48, dtype=np.uint16).reshape(40, 48) * 7).astype(np.uint16)
    write_dicom_image(d / "ok.dcm", px, Modality="CT")
    for name, frames in (("frames-neg.dcm", -3), ("frames-zero.dcm", 0), ("frames-ab.dcm", 77)):
        write_dicom_image(d / name, px, Modality="CT")
        ds = pydicom.dcmread(d / name)
        ds.NumberOfFrames = frames
        ds.save_as(d / name)
    bad.dicom_tag_bytes(d / "frames-ab.dcm", b"\x28\x00\x08\x00IS\x02\x0077", b"\x28\x00\x08\x00IS\x02\x00ab")
    write_dicom_image(d / "overlay-origin.dcm", px, Modality="CT")
    ds = pydicom.dcmread(d / "overlay-origin.dcm")
    ov = np.zeros((40, 48), np.uint8)
    ov[5:10, 5:10] = 1
    for tag, vr, value in ((0x60000010, "US", 40), (0x60000011, "US", 48), (0x60000040, "CS", "G"),
                           (0x60000050, "SS", [1]), (0x60000100, "US", 1), (0x60000102, "US", 0),
                           (0x60003000, "OW", pack_bits(ov.ravel()))):
        ds.add_new(tag, vr, value)
    ds.save_as(d / "overlay-origin.dcm")
    bad.deflated_dicom_bomb(d / "deflated-bomb.dcm")  # ~0.8 MB declaring 20,000 x 20,000 pixels
    write_dicom_image(d / "frames-bomb.dcm", px, Modality="CT")
    ds = pydicom.dcmread(d / "frames-bomb.dcm")
    ds.Rows = ds.Columns = 16000
    ds.NumberOfFrames = 10
    ds.save_as(d / "frames-bomb.dcm")
    return {"frames-neg.dcm": "NumberOfFrames", "frames-zero.dcm": "NumberOfFrames", "frames-ab.dcm": "NumberOfFrames",
            "overlay-origin.dcm": "(6000,0050) OverlayOrigin", "deflated-bomb.dcm": "Rows",
            "frames-bomb.dcm": "NumberOfFrames"}


def test_dicom_hostile_headers(tmp_path: Path) -> None:
    """NumberOfFrames -3 / 0 / "ab", a one-value OverlayOrigin and bombs declared by the header (a small deflated
    file of 20,000 x 20,000 pixels; 10 frames of 16,000 x 16,000): each quarantined with its reason and field,
    never vanishing, never decoded; the good file is built."""
    d = tmp_path / "dcm"
    expected = _dicom_corpus(d)
    (d / "medr2.json").write_text(json.dumps({"defaults": {"modality": "CT"}}))
    # built in a fresh process, so that its peak memory is this build's alone: VmHWM (the high-water mark of
    # this process's own memory map; ru_maxrss would carry the parent's peak across exec on Linux)
    code = ("import re, sys; from pathlib import Path; from medr2.builder.pipeline import build_bench; "
            "build_bench(sys.argv[1], Path(sys.argv[2]), seed=0, workers=1); "
            "print(re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1))")
    done = subprocess.run([sys.executable, "-c", code, f"dicom:{d}", str(tmp_path / "bench")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    peak_mb = int(done.stdout.split()[-1]) / 1024
    entries = Quarantine.read(tmp_path / "bench" / "quarantine.jsonl")
    q = _by_record(entries)
    for rec, fld in expected.items():
        assert rec in q and q[rec].field == fld, (rec, q.get(rec))
    assert "-3" in q["frames-neg.dcm"].reason and "'ab'" in q["frames-ab.dcm"].reason
    assert "exceeds the limit" in q["deflated-bomb.dcm"].reason and "header" in q["deflated-bomb.dcm"].reason
    assert len(entries) == len(expected)
    assert [c.meta["file"] for c in load_bench(tmp_path / "bench").cases] == ["ok.dcm"]
    assert peak_mb < 600, f"peak memory {peak_mb:.0f} MB: the bomb was inflated"  # it holds 800 MB inflated
    TRIED["dicom"] = TRIED.get("dicom", 0) + len(expected)


def test_dicom_frame_column_and_infinity(tmp_path: Path) -> None:
    """A DICOM label table whose ``frame`` is "x1" or Infinity: that row quarantined naming ``frame``."""
    from tests.interop_fixtures import write_dicom_image

    d = tmp_path / "dcm"
    px = np.arange(40 * 48, dtype=np.uint16).reshape(40, 48)
    write_dicom_image(d / "a.dcm", px, Modality="CT")
    (d / "labels.json").write_text(json.dumps([{"image": "a.dcm", "frame": "x1", "diagnosis": "x"},
                                              {"image": "a.dcm", "frame": math.inf, "diagnosis": "y"},
                                              {"image": "a.dcm", "frame": 0, "diagnosis": "z"}]))
    (d / "medr2.json").write_text(json.dumps({"labels": "labels.json", "defaults": {"modality": "CT"}}))
    from medr2.sources.base import get_source
    from medr2.sources.common import load_label_table

    table = load_label_table(get_source(f"dicom:{d}").dr, "labels.json")  # type: ignore[attr-defined]
    assert [(e.record, e.field) for e in table.bad] == [("a.dcm", "frame"), ("a.dcm", "frame")], table.bad
    assert "not an integer" in table.bad[0].reason and "not an integer" in table.bad[1].reason
    assert list(table.rows) == ["a.dcm#0"]
    TRIED["dicom"] = TRIED.get("dicom", 0) + 2


def test_nifti_single_slice_and_bomb(tmp_path: Path) -> None:
    """A single-slice NIfTI (128 x 128 x 1) keeps its image (one axial case, no 1-pixel-high slices); a
    header declaring 18,000 x 18,000 x 3 voxels is refused from the header; a 4 x 4 x 1 volume that gives no
    usable slice is quarantined, not dropped."""
    import nibabel as nib

    d = tmp_path / "nii"
    d.mkdir()
    v = np.random.default_rng(0).random((128, 128, 1)).astype(np.float32)
    nib.save(nib.Nifti1Image(v, np.eye(4)), d / "single.nii.gz")
    nib.save(nib.Nifti1Image(v[:4, :4], np.eye(4)), d / "tiny.nii.gz")
    bad.nifti_bomb(d / "bomb.nii")
    (d / "medr2.json").write_text(json.dumps({"defaults": {"modality": "CT"}}))
    _, entries = _build(f"nifti:{d}", tmp_path / "bench")
    q = _by_record(entries)
    assert set(q) == {"bomb.nii", "tiny.nii.gz"}, entries
    assert "exceeds the limit" in q["bomb.nii"].reason and "header" in q["bomb.nii"].reason
    assert q["tiny.nii.gz"].field == "volume" and "no slice" in q["tiny.nii.gz"].reason
    cases = load_bench(tmp_path / "bench").cases
    assert [(c.width, c.height, c.plane) for c in cases] == [(128, 128, "axial")]
    TRIED["nifti"] = TRIED.get("nifti", 0) + 3


def test_float_tiff_with_nan_and_inf_keeps_its_contrast(tmp_path: Path) -> None:
    """A float TIFF with one NaN and one +inf pixel is windowed over its finite values (NaN black, +inf white),
    not turned into a constant image; an all-NaN TIFF is quarantined with its reason."""
    from PIL import Image

    from medr2.images import load_image

    data = tmp_path / "data"
    data.mkdir()
    a = np.tile(np.linspace(0.0, 1.0, 48, dtype=np.float32), (40, 1))
    a[3, 3], a[5, 5], a[7, 7] = np.nan, np.inf, -np.inf
    Image.fromarray(a, mode="F").save(data / "nan.tif")
    Image.fromarray(np.full((40, 48), np.nan, np.float32), mode="F").save(data / "all-nan.tif")
    got = load_image(data / "nan.tif")
    assert got[0, 0] == 0 and got[0, -1] == 255 and len(np.unique(got)) > 40  # the gradient survives
    assert got[3, 3] == 0 and got[5, 5] == 255 and got[7, 7] == 0
    (data / "labels.csv").write_text("image,modality\nnan.tif,CT\nall-nan.tif,CT\n")
    _, entries = _build(f"folder:{data}", tmp_path / "bench")
    assert [(e.record, e.field) for e in entries] == [("all-nan.tif", "image")] and "finite" in entries[0].reason
    TRIED["folder"] = TRIED.get("folder", 0) + 2


@pytest.mark.parametrize("kind", ["number", "null", "string", "list"])
@pytest.mark.parametrize("fmt", ["vqa-rad", "probmed"])
def test_record_list_holding_a_non_object(tmp_path: Path, fmt: str, kind: str) -> None:
    """A VQA-RAD or ProbMed record list holding a number, null, a string or a list: that entry quarantined with
    its position, the good record imported (exit 0 through the command line)."""
    root = tmp_path / "data"
    write_png(root / "ok.png", bad.pattern())
    odd = {"number": 7, "null": None, "string": "hello", "list": [1, 2]}[kind]
    if fmt == "vqa-rad":
        good = {"qid": 1, "image_name": "ok.png", "question": "Is there a mass?", "answer": "yes",
                "answer_type": "CLOSED", "question_type": "PRES"}
        (root / "VQA_RAD Dataset Public.json").write_text(json.dumps([good, odd]))
        jname = "VQA_RAD Dataset Public.json"
    else:
        good = {"id": 1, "image": "ok.png", "qa_type": "abnormality", "question": "Is it normal?", "answer": "no"}
        (root / "test.json").write_text(json.dumps([odd, good]))
        jname = "test.json"
    done = subprocess.run([*MEDR2, "import", fmt, str(root), "--out", str(tmp_path / "bench")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    entries = Quarantine.read(tmp_path / "bench" / "quarantine.jsonl")
    row = 1 if fmt == "vqa-rad" else 0
    assert [(e.record, e.field) for e in entries] == [(f"{jname} row {row}", "(record)")], entries
    assert "JSON object" in entries[0].reason and len(load_bench(tmp_path / "bench").items) == 1
    TRIED[f"import {fmt}"] = TRIED.get(f"import {fmt}", 0) + 1



@pytest.mark.parametrize("fmt", ["vqa-rad", "probmed"])
def test_import_long_and_nul_image_paths(tmp_path: Path, fmt: str) -> None:
    """A 5,000-character and a NUL-containing image path in an importer's records: each quarantined with its
    reason (field image), the good record imported."""
    from medr2.interop.importers import run_import

    root = tmp_path / "data"
    write_png(root / "ok.png", bad.pattern())
    names = {"ok": "ok.png", "long": "a" * 5000 + ".png", "nul": "ok.png\x00../../etc/passwd",
             "long-segments": "/".join(["d"] * 3000) + ".png"}
    if fmt == "vqa-rad":
        recs = [{"qid": k, "image_name": v, "question": "Is there a mass?", "answer": "yes", "answer_type": "CLOSED",
                 "question_type": "PRES"} for k, v in names.items()]
        (root / "VQA_RAD Dataset Public.json").write_text(json.dumps(recs))
    else:
        recs = [{"id": k, "image": v, "qa_type": "abnormality", "question": "Is it normal?", "answer": "no"}
                for k, v in names.items()]
        (root / "test.json").write_text(json.dumps(recs))
    res = run_import(fmt, root, tmp_path / "bench")
    got = {q.record.split(":")[0]: q for q in res.quarantined}
    assert set(got) == {"long", "nul", "long-segments"}, res.quarantined
    assert all(q.field == "image" and q.file for q in got.values())
    assert "5004 characters" in got["long"].reason and "NUL" in got["nul"].reason, got
    assert len(res.items) == 1
    TRIED[f"import {fmt}"] = TRIED.get(f"import {fmt}", 0) + 3

def test_import_deep_json_is_exit_2(tmp_path: Path) -> None:
    """A question file nested 5,000 deep is bad as a whole: exit 2, the file named, no traceback."""
    root = tmp_path / "data"
    root.mkdir()
    (root / "VQA_RAD Dataset Public.json").write_text(DEEP)
    done = subprocess.run([*MEDR2, "import", "vqa-rad", str(root), "--out", str(tmp_path / "bench")],
                          capture_output=True, text=True, timeout=300)
    err = "".join(done.stderr.split())  # the console may wrap the message at any space
    assert done.returncode == 2 and "VQA_RADDatasetPublic.json" in err and "nestedmorethan" in err, err
    assert "Traceback" not in done.stderr
    TRIED["import vqa-rad"] = TRIED.get("import vqa-rad", 0) + 1


def _run(bench: Path, out: Path, shard: str | None = None) -> Path:
    from medr2 import ModelConfig
    from medr2.run.runner import EvalConfig, run_eval

    run_eval(EvalConfig(bench=bench, model=ModelConfig("baseline:random"), out=out,
                        shard=tuple(int(x) for x in shard.split("/")) if shard else None))  # type: ignore[arg-type]
    return out


MERGE_DAMAGE: dict[str, tuple[Any, str]] = {
    "shard 1of2": (lambda m: m["identity"].update(shard="1of2"), "identity.shard"),
    "shard 2/2": (lambda m: m["identity"].update(shard="2/2"), "identity.shard"),
    "shard a number": (lambda m: m["identity"].update(shard=7), "identity.shard"),
    "no identity": (lambda m: m.pop("identity"), "identity"),
    "identity a list": (lambda m: m.update(identity=[1]), "identity"),
    "deep manifest": (None, "manifest.json"),
    "manifest a list": (None, "manifest.json"),
}


@pytest.fixture(scope="module")
def two_shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("shards")
    make_bench(root / "bench", n_cases=2)
    return _run(root / "bench", root / "s0", "0/2"), _run(root / "bench", root / "s1", "1/2")


@pytest.mark.parametrize("damage", sorted(MERGE_DAMAGE))
def test_merge_refuses_bad_shard_manifests(tmp_path: Path, damage: str, two_shards: tuple[Path, Path]) -> None:
    """A shard field ``1of2``, a manifest without ``identity``, one nested 5,000 deep: ``medr2 merge`` exits 2
    naming the file and field, without a traceback and without writing a store."""
    import shutil

    s0, s1 = two_shards[0], tmp_path / "s1"
    shutil.copytree(two_shards[1], s1)
    change, fld = MERGE_DAMAGE[damage]
    mpath = s1 / "manifest.json"
    if damage == "deep manifest":
        mpath.write_text('{"format": "medr2-run", "x": ' + DEEP + "}")
    elif damage == "manifest a list":
        mpath.write_text("[1, 2]")
    else:
        m = json.loads(mpath.read_text())
        change(m)
        mpath.write_text(json.dumps(m))
    done = subprocess.run([*MEDR2, "merge", str(s0), str(s1), "--out", str(tmp_path / "merged")],
                          capture_output=True, text=True, timeout=120)
    err = "".join(done.stderr.split())
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "manifest.json" in err and fld in err, err
    assert not (tmp_path / "merged" / "store.sqlite").exists()
    TRIED["merge"] = TRIED.get("merge", 0) + 1


MAPPING_DAMAGE: dict[str, tuple[str, dict[str, Any], str]] = {
    "nifti slices_per_plane text": ("nifti", {"slices_per_plane": "x"}, "slices_per_plane"),
    "nifti slices_per_plane inf": ("nifti", {"slices_per_plane": math.inf}, "slices_per_plane"),
    "nifti planes a string": ("nifti", {"planes": "axial"}, "planes"),
    "nifti percentiles nan": ("nifti", {"window_percentiles": [math.nan, 99]}, "window_percentiles"),
    "nifti percentiles reversed": ("nifti", {"window_percentiles": [99, 1]}, "window_percentiles"),
    "nifti findings of objects": ("nifti", {"findings": [{"a": 1}]}, "findings"),
    "masks min_area_px text": ("masks", {"min_area_px": "big"}, "min_area_px"),
    "coco structures of lists": ("coco", {"structures": [[1]]}, "structures"),
    "defaults a list": ("folder", {"defaults": ["CT"]}, "defaults"),
    "columns a list": ("folder", {"columns": [1, 2]}, "columns"),
    "columns to numbers": ("folder", {"columns": {"img": 3}}, "columns"),
    "labels a number": ("folder", {"labels": 7}, "labels"),
}


@pytest.mark.parametrize("damage", sorted(MAPPING_DAMAGE))
def test_mapping_file_bad_values_are_exit_2(tmp_path: Path, damage: str) -> None:
    """A mapping file (``medr2.json``) with a value of the wrong type is bad as a whole: BadInput naming the
    file and key (exit 2), never a ValueError/TypeError from the reader's constructor."""
    from medr2.sources.base import get_source

    reader, mapping, fld = MAPPING_DAMAGE[damage]
    d = tmp_path / "data"
    write_png(d / "images" / "a.png", bad.pattern())
    (d / "annotations.json").write_text(json.dumps({"images": [], "annotations": [], "categories": []}))
    (d / "medr2.json").write_text(json.dumps(mapping))
    with pytest.raises(BadInput) as info:
        get_source(f"{reader}:{d}")
    assert info.value.field == fld and str(info.value.file).endswith("medr2.json"), info.value
    TRIED["mapping files"] = TRIED.get("mapping files", 0) + 1


def test_zz_print_bad_input_figures() -> None:
    """Runs last in this file: the figures of every corpus above (with ``-s``)."""
    if not TRIED:
        pytest.skip("run with the corpora above (they record what they tried)")
    assert all(n > 0 for n in TRIED.values()), TRIED
    print("RELIABILITY-FIGURES bad-inputs (all)", json.dumps(TRIED, sort_keys=True), "total", sum(TRIED.values()))
