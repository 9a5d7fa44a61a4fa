"""Importers and readers on the real annotation files of public sets (issue 20, part 1).

The real files live outside the project, in ``../shared/real-formats/`` beside the clone (each folder's
SOURCE.txt says where they come from); they are read in place, never copied into the project, and the
tests skip when they are absent. Images are not part of those folders: placeholders with the real names
(and, for COCO, the real sizes from ``images_manifest.tsv``) are written under ``tmp_path``.
The rule tests at the end use small fixtures of our own and always run.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from medr2 import BadInput
from medr2.errors import Quarantine
from medr2.interop.common import yes_no
from medr2.interop.importers import run_import
from medr2.interop.importers._mapping import SEQUENCE_WORDS, or_options, vocab_fields
from medr2.tasks.vocab import BUILTIN, canonical_modality, canonical_region
from tests.interop_fixtures import gradient, realize_all, write_png


def _real_root() -> Path | None:
    repo = Path(__file__).resolve().parents[1]
    for base in (repo.parent, repo.parent.parent):  # ../shared beside the clone (or beside its folder)
        p = base / "shared" / "real-formats"
        if p.is_dir():
            return p
    return None


REAL = _real_root()


def real(name: str) -> Path:
    if REAL is None or not (REAL / name).is_dir():
        pytest.skip(f"real files ../shared/real-formats/{name} not present (they are not part of the project)")
    return REAL / name


def placeholders(root: Path, names: set[str] | list[str], size: tuple[int, int] = (16, 16)) -> Path:
    """One small distinct image per name (distinct bytes, so images never merge by content)."""
    for i, n in enumerate(sorted(set(names))):
        write_png(root / n, gradient(size[1], size[0], i))
    return root


def reconciles(res, n_records: int) -> None:  # type: ignore[no-untyped-def]
    assert len(res.items) + res.duplicates + len(res.quarantined) == n_records


# --- SLAKE (byte copies of train/validate/test.json) ------------------------------------------------

ZH_YES_NO = {"是的": "yes", "不是": "no", "包含": "yes", "不包含": "no", "有": "yes", "没有": "no"}


@pytest.fixture(scope="module")
def slake(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    d = real("slake")
    recs = {f: json.loads((d / f).read_text("utf-8")) for f in ("train.json", "validate.json", "test.json")}
    tmp = tmp_path_factory.mktemp("slake")
    imgs = placeholders(tmp / "imgs", {r["img_name"] for rs in recs.values() for r in rs})
    res = run_import("slake", d, tmp / "bench", options={"images": str(imgs)})
    return recs, res


def test_slake_zh_closed_answers_are_yes_no(slake) -> None:  # type: ignore[no-untyped-def]
    recs, res = slake
    reconciles(res, sum(len(v) for v in recs.values()))
    by_qid = {it.meta["qid"]: it for it in res.items}
    zh = [r for rs in recs.values() for r in rs if r["q_lang"] == "zh" and r["answer_type"] == "CLOSED"
          and r["answer"].strip() in ZH_YES_NO and str(r["qid"]) in by_qid]
    assert len(zh) > 2000  # 2,777 closed zh items were open text before
    for r in zh:
        it = by_qid[str(r["qid"])]
        assert (it.form, it.answer, it.chance) == ("yesno", ZH_YES_NO[r["answer"].strip()], 0.5), r
        assert it.question == r["question"]  # verbatim
    zh_abn = [by_qid[str(r["qid"])] for r in zh if r["content_type"] == "Abnormality"]
    assert zh_abn and {it.task for it in zh_abn} == {"s3.abnormal"}


def test_slake_task_mapping(slake) -> None:  # type: ignore[no-untyped-def]
    recs, res = slake
    by_qid = {it.meta["qid"]: it for it in res.items}
    rows = [r for rs in recs.values() for r in rs if str(r["qid"]) in by_qid]
    body = [r for r in rows if r["question"] == "Which part of the body does this image belong to?"]
    assert len(body) >= 350 and {by_qid[str(r["qid"])].task for r in body} == {"s1.region"}
    organ_yn = [r for r in rows if r["content_type"] == "Organ"
                and r["question"].startswith("Does the picture contain")]
    assert organ_yn and {by_qid[str(r["qid"])].task for r in organ_yn} == {"s2.organ_presence"}
    weighting = [r for r in rows if r["question"] in ("What is the mr weighting in this image?",
                                                      "这张MRI图片用的什么加权方式?")]
    assert weighting and {by_qid[str(r["qid"])].task for r in weighting} == {"s1.sequence"}


def test_slake_vocabularies(slake) -> None:  # type: ignore[no-untyped-def]
    _, res = slake
    assert {c.modality for c in res.cases} == {"CT", "MRI", "X-ray"}
    assert {c.body_region for c in res.cases} <= set(BUILTIN["body_region"])
    raw = Counter(c.meta.get("body_region_raw") for c in res.cases)
    assert raw["Brain_Tissue"] and raw["Chest_lung"]  # the set's own words kept beside medr2's
    assert {c.body_region for c in res.cases if c.meta.get("body_region_raw") == "Brain_Tissue"} == {"head"}
    assert {c.meta.get("modality_raw") for c in res.cases if c.modality == "X-ray"} == {"X-Ray"}


# --- VQA-RAD (the MEVF copy: trainset.json + testset.json) ------------------------------------------


@pytest.fixture(scope="module")
def vqarad(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    d = real("vqarad")
    recs = {f: json.loads((d / f).read_text("utf-8")) for f in ("trainset.json", "testset.json")}
    tmp = tmp_path_factory.mktemp("rad")
    imgs = placeholders(tmp / "images", {r["image_name"] for rs in recs.values() for r in rs})
    res = run_import("vqa-rad", d, tmp / "bench", options={"images": str(imgs)})  # the folder form
    return d, recs, imgs, res


def test_vqarad_common_copy_keeps_its_test_split(vqarad) -> None:  # type: ignore[no-untyped-def]
    _, recs, _, res = vqarad
    reconciles(res, 3064 + 451)
    test_qids = {str(r["qid"]) for r in recs["testset.json"]}  # disjoint from the train qids
    assert {it.split for it in res.items if it.meta["qid"] in test_qids} == {"test"}
    assert {it.split for it in res.items if it.meta["qid"] not in test_qids} == {"train"}
    # 14 test questions repeat a train question on the same image word for word: merged into that item
    merged = {q for it in res.items for q in it.meta.get("duplicate_qids", []) if q in test_qids}
    assert sum(1 for it in res.items if it.split == "test") + len(merged) == 451


def test_vqarad_all_test_images_occur_in_train(vqarad) -> None:  # type: ignore[no-untyped-def]
    """The fact docs/bring-your-own-data.md states: the MEVF split is by question, not by image."""
    _, recs, _, _ = vqarad
    test_imgs = {r["image_name"] for r in recs["testset.json"]}
    train_imgs = {r["image_name"] for r in recs["trainset.json"]}
    assert len(test_imgs) == 203 and test_imgs <= train_imgs


def test_vqarad_split_option_and_single_file(vqarad, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d, _, imgs, _ = vqarad
    one = run_import("vqa-rad", d / "testset.json", tmp_path / "b1", options={"images": str(imgs)})
    assert {it.split for it in one.items} == {"test"}
    forced = run_import("vqa-rad", d / "testset.json", tmp_path / "b2", options={"images": str(imgs), "split": "val"})
    assert {it.split for it in forced.items} == {"val"}
    with pytest.raises(BadInput, match="split must be"):
        run_import("vqa-rad", d / "testset.json", tmp_path / "b3", options={"images": str(imgs), "split": "dev"})


def test_vqarad_sequence_and_a_or_b_questions(vqarad) -> None:  # type: ignore[no-untyped-def]
    _, recs, _, res = vqarad
    seq = [it for it in res.items if it.task == "s1.sequence"]
    assert len(seq) >= 53
    assert all("MODALITY" in it.meta["question_type"] for it in seq)
    assert all(SEQUENCE_WORDS.search(f"{it.question} {it.answer_text}") for it in seq)
    mods = [it for it in res.items if it.task == "s1.modality"]
    assert not any(SEQUENCE_WORDS.search(f"{it.question} {it.answer_text}") for it in mods)
    ab = [it for it in res.items if it.meta.get("options_from_question")]
    assert len(ab) >= 40
    for it in ab:
        assert it.form == "mcq" and len(it.options) == 2 and it.chance == 0.5 and it.answer in ("A", "B")
        words = set(re.findall(r"[\w'-]+", it.question.lower()))
        assert all(w in words for o in it.options for w in o.lower().split()), it  # read from the wording
    lr = next(it for it in ab if it.question == "Is the largest cyst in the left or right kidney?")
    assert lr.options == ["left kidney", "right kidney"] and lr.answer_text == "left kidney"


# --- HF parquet in the SLAKE card's schema (built from the real test.json) ---------------------------

CARD_COLUMNS = ("img_id", "question", "answer", "q_lang", "location", "modality", "answer_type", "base_type",
                "content_type", "triple", "qid")


def _png(seed: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(gradient(12, 12, seed)).save(buf, format="PNG")
    return buf.getvalue()


def test_hf_parquet_slake_card_groups_rows_by_image(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    test = json.loads((real("slake") / "test.json").read_text("utf-8"))
    rows = [r for r in test if r["q_lang"] == "en"][:20] + [r for r in test if r["q_lang"] == "zh"][:20]
    images = {name: _png(i) for i, name in enumerate(sorted({r["img_name"] for r in rows}))}
    table = {c: [str(r[c]) if c == "triple" else r[c] for r in rows] for c in CARD_COLUMNS}
    table["image"] = [{"bytes": images[r["img_name"]], "path": r["img_name"]} for r in rows]
    (tmp_path / "data").mkdir()
    pq.write_table(pa.table(table), tmp_path / "data" / "test-00000-of-00001.parquet")
    res = run_import("hf", tmp_path, tmp_path / "bench")
    reconciles(res, 40)
    assert len(res.cases) == len(images) == 5  # one case per image, not per row
    assert {it.split for it in res.items} == {"test"}  # from the file name
    by_qid = {it.meta["qid"]: it for it in res.items}
    for r in rows:
        it = by_qid[str(r["qid"])]
        cols = it.meta["columns"]
        assert cols["q_lang"] == r["q_lang"] and cols["content_type"] == r["content_type"]
        assert cols["img_id"] == r["img_id"] and cols["answer_type"] == r["answer_type"]
        if r["answer_type"] == "CLOSED" and r["answer"] in ZH_YES_NO:
            assert it.form == "yesno" and it.answer == ZH_YES_NO[r["answer"]]
    assert {c.modality for c in res.cases} <= {"CT", "MRI", "X-ray"}
    assert all(c.body_region in BUILTIN["body_region"] for c in res.cases)


# --- VLMEvalKit TSVs in GMAI-MMBench's shape ---------------------------------------------------------


def test_vlmevalkit_gmai_val_columns_and_grouping(tmp_path: Path) -> None:
    f = real("vlmevalkit") / "GMAI-MMBench_VAL-shaped.tsv"
    res = run_import("vlmevalkit", f, tmp_path / "b")
    reconciles(res, 6)
    rows = list(csv.DictReader(f.open(encoding="utf-8"), delimiter="\t"))
    by_qid = {it.meta["qid"]: it for it in res.items}
    for r in rows:
        if r["index"] not in by_qid:
            continue  # merged: the same question on the same image (row 3 = row 0)
        cols = by_qid[r["index"]].meta["columns"]
        for c in ("clinical VQA task", "department", "perceptual granularity", "original task"):
            assert cols[c] == r[c]
    assert {by_qid[r["index"]].task for r in rows if r["index"] in by_qid
            and r["clinical VQA task"] == "Organ Recognition"} == {"s2.organ"}
    # row 3 stores its image as the index of row 0 (VLMEvalKit convention): one image, one case, and here
    # the same question too, merged with its qid kept
    assert by_qid["0"].meta["duplicate_qids"] == ["3"]
    assert len(res.cases) == len({r["image"] for r in rows if len(r["image"]) > 64})
    assert "unknown" not in {c.modality for c in res.cases}


def test_vlmevalkit_test_tsv_without_answers(tmp_path: Path) -> None:
    from medr2.bench.format import load_bench
    from medr2.interop.common import write_import

    f = real("vlmevalkit") / "GMAI_mm_bench_TEST-shaped.tsv"
    res = run_import("vlmevalkit", f, tmp_path / "b")
    reconciles(res, 6)
    assert res.items and all(it.meta["answer_unknown"] and it.answer == "" and it.split == "test"
                             for it in res.items)
    write_import(res, tmp_path / "b")
    bench = load_bench(tmp_path / "b")
    assert bench.manifest["imported"]["answers_unknown"] == len(res.items)


# --- quarantine.jsonl when nothing imports -----------------------------------------------------------


def test_nothing_imported_still_writes_quarantine(tmp_path: Path) -> None:
    from medr2.interop.common import write_import

    d = real("vqarad")
    (tmp_path / "empty").mkdir()
    res = run_import("vqa-rad", d / "testset.json", tmp_path / "b", options={"images": str(tmp_path / "empty")})
    assert not res.items and len(res.quarantined) == 451
    with pytest.raises(BadInput, match=r"by field: image \(451, e.g. '.*testset.json, record \d+: image synpic") as e:
        write_import(res, tmp_path / "b", data=d / "testset.json")
    assert "quarantine.jsonl" in str(e.value) and e.value.file == str(d / "testset.json")  # the file that failed
    assert len(Quarantine.read(tmp_path / "b" / "quarantine.jsonl")) == 451


# --- COCO exports (CVAT / Roboflow) -----------------------------------------------------------------


def _coco_copy(src: Path, dst: Path, images_dir: str, mapping: dict) -> Path:  # type: ignore[type-arg]
    """The COCO JSON beside placeholder images of the manifest's names and sizes (in tmp, not the project)."""
    ann = next(src.glob("*.json"))
    ann = ann if ann.name != "medr2.json" else next(p for p in src.glob("*.json") if p.name != "medr2.json")
    dst.mkdir(parents=True)
    shutil.copyfile(ann, dst / "annotations.json")
    with (src / "images_manifest.tsv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            arr = np.full((int(row["height"]), int(row["width"])), 90, np.uint8)
            write_png(dst / images_dir / row["file"], arr)
    (dst / "medr2.json").write_text(json.dumps(mapping))
    return dst / "annotations.json"


def test_coco_nih_patients_from_file_names(tmp_path: Path) -> None:
    from medr2.sources.base import get_source

    ann = _coco_copy(real("coco") / "xray", tmp_path / "cxr", "imgs",
                     {"images_dir": "imgs", "patient_from_name": "nih", "defaults": {"modality": "X-ray"}})
    src = get_source(f"coco:{ann}")  # the COCO file itself
    cases, errors = realize_all(src, tmp_path / "bench")
    assert not errors and len(cases) == 50
    patients = Counter(c.patient_id for c in cases)
    assert all(len(p) == 8 and p.isdigit() for p in patients)
    names = [im["file_name"] for im in json.loads(ann.read_text("utf-8"))["images"]]
    assert patients == Counter(n.split("_")[0] for n in names)  # <patient>_<study>_jpg.rf.<hash>.jpg
    assert sum(1 for n in patients.values() if n > 1) == 6  # multi-image patients: one id each, so no split leak
    assert not any(c.meta.get("patient_id_inferred") for c in cases)


def test_coco_cvat_case_insensitive_names_and_attribute_specs(tmp_path: Path) -> None:
    from medr2.sources.base import get_source

    _coco_copy(real("coco") / "mri", tmp_path / "mri", "50 mri brain tumor in jpg format",
                     {"defaults": {"modality": "MRI", "body_region": "head"}})
    cases, errors = realize_all(get_source(f"coco:{tmp_path / 'mri'}"), tmp_path / "bench")
    assert not errors and len(cases) == 50
    renamed = [c for c in cases if "file_name_on_disk" in c.meta]
    assert len(renamed) == 11 and all(c.meta["file_name_on_disk"].endswith(".JPG") for c in renamed)
    findings = [f for c in cases for f in c.findings]
    assert len(findings) == 53
    assert all("Confidence" not in f.attributes and f.attributes.get("occluded") is False for f in findings)
    assert {tuple(c.meta["attribute_specs_dropped"]) for c in cases} == {("Confidence",)}


# --- OmniMedVQA, ProbMed, PMC-VQA --------------------------------------------------------------------


def test_omnimedvqa_yes_no_abnormality_and_modality_words(tmp_path: Path) -> None:
    d = real("omnimedvqa")
    recs = [r for f in sorted((d / "QA_information" / "Open-access").glob("*.json"))
            for r in json.loads(f.read_text("utf-8"))]
    root = placeholders(tmp_path / "root", {r["image_path"] for r in recs})
    res = run_import("omnimedvqa", d, tmp_path / "b", options={"root": str(root)})
    reconciles(res, len(recs))
    by_qid = {it.meta["qid"]: it for it in res.items}
    for qid in ("Covid CT_0194", "Covid CT_0195"):
        assert (by_qid[qid].task, by_qid[qid].form, by_qid[qid].answer) == ("s3.abnormal", "yesno", "no")
    assert {c.modality for c in res.cases} == {"CT", "X-ray", "microscopy"}
    assert {c.meta["modality_raw"] for c in res.cases if c.modality == "CT"} == {"CT(Computed Tomography)"}


def test_probmed_present_findings_and_body_part(tmp_path: Path) -> None:
    f = real("probmed") / "adapted" / "test.json"
    recs = json.loads(f.read_text("utf-8"))
    imgs = placeholders(tmp_path / "imgs", {r["image"] for r in recs})
    res = run_import("probmed", f, tmp_path / "b", options={"images": str(imgs)})
    reconciles(res, len(recs))
    absent = [it for it in res.items if it.task == "s3.absent_finding"]
    assert absent and all(it.answer == "no" and it.meta["adversarial"] for it in absent)
    present = [it for it in res.items if it.meta["qa_type"].startswith("entity_gt")]
    assert present and {it.task for it in present} == {"s3.finding_type"}
    assert all(it.pair_id for it in present)
    assert all(bool(it.pair_id) == (it.meta["qa_type"] != "entity_hallu") for it in absent)  # unnumbered: no twin
    assert {c.body_region for c in res.cases} == {"abdomen", "chest"}
    assert {c.modality for c in res.cases} == {"CT", "X-ray"}


def test_pmcvqa_card_row(tmp_path: Path) -> None:
    d = real("pmcvqa")
    imgs = placeholders(tmp_path / "images", {"PMC1064097_F1.jpg"})
    res = run_import("pmc-vqa", d / "train.csv", tmp_path / "b", options={"images": str(imgs)})
    reconciles(res, 1)
    assert res.items[0].form == "mcq" and res.items[0].answer == "B"


# --- a class-per-folder image set without medr2.json -------------------------------------------------


def test_class_folders_without_mapping_say_why(tmp_path: Path) -> None:
    from medr2.builder.pipeline import build_bench

    for cls in ("normal", "pneumonia"):
        write_png(tmp_path / "d" / cls / "x.png", gradient(12, 12))
    with pytest.raises(BadInput, match=r"every one: modality: 'modality is missing: class-per-folder") as e:
        build_bench(f"folder:{tmp_path / 'd'}", tmp_path / "b", workers=1)
    assert "medr2.json" in str(e.value) and "defaults" in str(e.value)


# --- the rules, on our own fixtures (always run) -----------------------------------------------------


def test_yes_no_chinese() -> None:
    for a, want in ZH_YES_NO.items():
        assert yes_no(a) == want and yes_no(a + "。") == want
    assert yes_no("肝脏") is None and yes_no("Yes.") == "yes"


def test_or_options_rules() -> None:
    assert or_options("Is this a solid or cystic lesion?", "Solid") == ["solid", "cystic"]
    assert or_options("Is the largest cyst in the left or right kidney?", "Left kidney") == \
        ["left kidney", "right kidney"]
    assert or_options("Is the pathologic part of this image the small bowel or colon?", "Small bowel") == \
        ["small bowel", "colon"]
    assert or_options("Is this a contrast CT or a non-contrast CT?", "Non-contrast CT") == \
        ["contrast CT", "non-contrast CT"]
    assert or_options("Is this a T1 weighted, T2 weighted, or FLAIR image?", "FLAIR") is None  # a list
    assert or_options("Was oral or IV contrast used?", "Both") is None  # the answer is neither
    assert or_options("Does this image use contrast or not?", "contrast") is None  # "not" is no option
    assert or_options("Is there a mass?", "yes") is None


def test_vocabulary_mapping() -> None:
    assert canonical_modality("CT(Computed Tomography)") == "CT"
    assert canonical_modality("X-Ray") == "X-ray" and canonical_modality("MR") == "MRI"
    assert canonical_modality("Microscopy Images") == "microscopy" and canonical_modality("foo") is None
    assert canonical_region("brain_tissue") == "head" and canonical_region("chest_lung") == "chest"
    assert canonical_region("Pelvic Cavity") == "pelvis" and canonical_region("ABD") == "abdomen"
    assert vocab_fields("X-Ray", "Lung") == {"modality": "X-ray", "body_region": "chest",
                                              "meta": {"modality_raw": "X-Ray", "body_region_raw": "Lung"}}
    assert vocab_fields("CT", "oddplace") == {"modality": "CT", "body_region": "oddplace", "meta": {}}


# --- the same layouts on our own small fixtures (always run) -------------------------------------------


def test_own_coco_export_cvat_style(tmp_path: Path) -> None:
    """A tiny CVAT/Roboflow-style export: NIH names, a .JPG on disk, an attribute spec, the file as source."""
    from medr2.sources.base import get_source

    root = tmp_path / "c"
    write_png(root / "imgs" / "00000013_005.png", gradient(20, 20, 0))
    write_png(root / "imgs" / "00000013_006.png", gradient(20, 20, 1))
    write_png(root / "imgs" / "00000099_000.JPG", gradient(20, 20, 2))
    spec = {"Confidence": "High, Medium, Low", "occluded": False}
    coco = {"images": [{"id": 1, "file_name": "00000013_005.png", "width": 20, "height": 20},
                       {"id": 2, "file_name": "00000013_006.png", "width": 20, "height": 20},
                       {"id": 3, "file_name": "00000099_000.jpg", "width": 20, "height": 20}],
            "annotations": [{"id": i, "image_id": i, "category_id": 1, "bbox": [2, 2, 5, 5], "segmentation": [],
                             "attributes": spec} for i in (1, 2, 3)],
            "categories": [{"id": 1, "name": "Mass"}]}
    (root / "export.json").write_text(json.dumps(coco))
    (root / "medr2.json").write_text(json.dumps({"images_dir": "imgs", "patient_from_name": "nih",
                                                 "defaults": {"modality": "X-ray"}}))
    cases, errors = realize_all(get_source(f"coco:{root / 'export.json'}"), tmp_path / "b")
    assert not errors
    assert sorted(c.patient_id for c in cases) == ["00000013", "00000013", "00000099"]
    assert [c.meta.get("file_name_on_disk") for c in cases if c.patient_id == "00000099"] == ["00000099_000.JPG"]
    assert all(f.attributes == {"occluded": False} for c in cases for f in c.findings)
    (root / "medr2.json").write_text(json.dumps({"images_dir": "imgs", "patient_from_name": "^(\\d+)$",
                                                 "defaults": {"modality": "X-ray"}}))
    _, errors = realize_all(get_source(f"coco:{root / 'export.json'}"), tmp_path / "b2")
    assert {e.field for e in errors} == {"images.file_name"} and "patient_from_name" in errors[0].reason


def test_own_vlmevalkit_grouping_columns_and_no_answers(tmp_path: Path) -> None:
    import base64

    img0, img1 = (base64.b64encode(_png(i)).decode() for i in (0, 1))
    head = ["index", "image", "question", "A", "B", "answer", "clinical VQA task", "department", "modality"]
    rows = [["0", img0, "Which organ?", "liver", "lung", "A", "Organ Recognition", "Hepatology", "CT"],
            ["1", "0", "Which side?", "left", "right", "B", "Attribute Recognition", "Hepatology", "CT"],
            ["2", img1, "Which organ?", "liver", "lung", "B", "Organ Recognition", "Pulmonology", "X-Ray"]]
    for name, cols, data in (("val.tsv", head, rows), ("test.tsv", [c for c in head if c != "answer"],
                                                       [[v for j, v in enumerate(r) if j != 5] for r in rows])):
        with (tmp_path / name).open("w", newline="") as fh:
            w = csv.writer(fh, delimiter="\t")
            w.writerow(cols)
            w.writerows(data)
    val = run_import("vlmevalkit", tmp_path / "val.tsv", tmp_path / "b1")
    assert len(val.cases) == 2 and {c.modality for c in val.cases} == {"CT", "X-ray"}
    by = {it.meta["qid"]: it for it in val.items}
    assert by["0"].case_id == by["1"].case_id != by["2"].case_id
    assert (by["0"].task, by["1"].task) == ("s2.organ", "s3.attribute")
    assert by["2"].meta["columns"] == {"clinical VQA task": "Organ Recognition", "department": "Pulmonology"}
    test = run_import("vlmevalkit", tmp_path / "test.tsv", tmp_path / "b2")
    assert len(test.items) == 3 and all(it.meta["answer_unknown"] and it.answer == "" for it in test.items)
    from medr2.bench.format import read_manifest
    from medr2.interop.common import write_import
    from medr2.scoring.scorer import refuse_unknown_answers

    write_import(test, tmp_path / "b2")
    with pytest.raises(BadInput, match="3 item\\(s\\) of this bench have no reference answer"):
        refuse_unknown_answers(read_manifest(tmp_path / "b2"), tmp_path / "b2")  # medr2 score refuses, not 0 %
    write_import(val, tmp_path / "b1")
    refuse_unknown_answers(read_manifest(tmp_path / "b1"), tmp_path / "b1")  # answers known: scored as usual


def test_own_vqarad_mevf_folder_and_empty_import(tmp_path: Path) -> None:
    from medr2.interop.common import write_import

    d = tmp_path / "data_RAD"
    write_png(d / "images" / "synpic1.jpg", gradient(16, 16))
    rec = {"image_name": "synpic1.jpg", "image_organ": "HEAD", "answer_type": "CLOSED", "phrase_type": "freeform"}
    (d / "trainset.json").write_text(json.dumps([
        {**rec, "qid": 1, "question": "Is this a T2 weighted image?", "answer": "Yes", "question_type": "MODALITY"},
        {**rec, "qid": 2, "question": "Is this a CT or an MRI?", "answer": "MRI", "question_type": "MODALITY"}]))
    (d / "testset.json").write_text(json.dumps([
        {**rec, "qid": 3, "question": "Is the mass hyperintense or hypointense?", "answer": "Hyperintense",
         "question_type": "ATTRIB"}]))
    res = run_import("vqa-rad", d, tmp_path / "b")
    by = {it.meta["qid"]: it for it in res.items}
    assert (by["1"].task, by["1"].split, by["2"].task, by["3"].split) == ("s1.sequence", "train", "s1.modality",
                                                                          "test")
    assert (by["2"].options, by["2"].answer_text) == (["CT", "MRI"], "MRI")
    assert (by["3"].form, by["3"].options, by["3"].answer) == ("mcq", ["hyperintense", "hypointense"], "A")
    assert {c.body_region for c in res.cases} == {"head"}
    (tmp_path / "none").mkdir()
    empty = run_import("vqa-rad", d, tmp_path / "e", options={"images": str(tmp_path / "none")})
    with pytest.raises(BadInput, match=r"by field: image \(3, e.g."):
        write_import(empty, tmp_path / "e")
    assert len(Quarantine.read(tmp_path / "e" / "quarantine.jsonl")) == 3
