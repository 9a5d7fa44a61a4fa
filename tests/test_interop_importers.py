"""Importers: small fixtures in each set's real layout, read back into a bench with the expected tasks;
exports (hf, vlmevalkit, lmms-eval) re-imported item for item."""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from medr2.bench.format import load_bench
from medr2.interop.common import OTHER_TASK, write_import
from medr2.interop.exporters import run_export
from medr2.interop.importers import run_import
from tests.interop_fixtures import gradient, write_png


def _vqarad(root: Path) -> Path:
    write_png(root / "VQA_RAD Image Folder" / "synpic1.jpg", gradient(32, 32))
    write_png(root / "VQA_RAD Image Folder" / "synpic2.jpg", gradient(32, 32, 1))
    recs = [
        {"qid": "1", "image_name": "synpic1.jpg", "image_organ": "CHEST", "question": "Is there a pneumothorax?",
         "answer": "No", "answer_type": "CLOSED", "question_type": "PRES", "phrase_type": "freeform"},
        {"qid": "2", "image_name": "synpic1.jpg", "image_organ": "CHEST", "question": "What imaging modality?",
         "answer": "X-ray", "answer_type": "OPEN", "question_type": "MODALITY", "phrase_type": "test_freeform"},
        {"qid": "3", "image_name": "synpic2.jpg", "image_organ": "HEAD", "question": "Where is the lesion?",
         "answer": "left frontal lobe", "answer_type": "OPEN", "question_type": "POS, PRES", "phrase_type": "para"},
        {"qid": "4", "image_name": "synpic2.jpg", "image_organ": "HEAD", "question": "Why is this?",
         "answer": "because", "answer_type": "OPEN", "question_type": "OTHER", "phrase_type": "para"},
        {"qid": "5", "image_name": "../secret.jpg", "question": "x?", "answer": "y", "answer_type": "OPEN",
         "question_type": "ORGAN", "phrase_type": "freeform"},
        {"qid": "6", "image_name": "synpic2.jpg", "question": "What abnormality is seen?", "answer": "mass",
         "answer_type": "OPEN", "question_type": "ABN", "phrase_type": "freeform"},
    ]
    (root / "VQA_RAD Dataset Public.json").write_text(json.dumps(recs))
    return root


def test_vqarad(tmp_path: Path) -> None:
    res = run_import("vqa-rad", _vqarad(tmp_path / "rad"), tmp_path / "b")
    tasks = {it.meta["qid"]: (it.task, it.form, it.answer, it.split) for it in res.items}
    assert tasks == {"1": ("s3.abnormal", "yesno", "no", "train"), "2": ("s1.modality", "text", "X-ray", "test"),
                     "3": ("s3.location", "text", "left frontal lobe", "train"),
                     "4": (OTHER_TASK, "text", "because", "train"),
                     "6": ("s3.finding_type", "text", "mass", "train")}
    assert res.unmapped == 1 and [q.record for q in res.quarantined] == ["5"]
    write_import(res, tmp_path / "b")
    bench = load_bench(tmp_path / "b")
    assert {it.task for it in bench.items} == {"s3.abnormal", "s1.modality", "s3.location", OTHER_TASK,
                                               "s3.finding_type"}
    assert bench.manifest["imported"]["unmapped"] == 1
    assert {it.stage for it in bench.items if it.task == OTHER_TASK} == {0}


def _slake(root: Path, mask_txt: str = "1:Liver\n2:Kidney\n3:Spleen\n") -> Path:
    """SLAKE's released layout: split files and mask.txt at the root, imgs/xmlabN/{source.jpg,
    detection.json, mask.png, question.json}."""
    d = root / "imgs" / "xmlab0"
    write_png(d / "source.jpg", gradient(40, 40))
    mask = np.zeros((40, 40), np.uint8)
    mask[5:20, 5:20] = 1      # Liver: has a detection box too
    mask[25:35, 22:30] = 2    # Kidney: two detection boxes (left and right)
    mask[25:30, 5:10] = 3     # Spleen: mask only
    mask[36:38, 36:38] = 9    # a value mask.txt does not name
    write_png(d / "mask.png", mask)
    (d / "detection.json").write_text(json.dumps([{"Liver": [5, 5, 15, 15]}, {"Kidney": [22, 25, 4, 10]},
                                                  {"Kidney": [26, 25, 4, 10]}]))
    (root / "mask.txt").write_text(mask_txt)
    base = {"img_id": 0, "img_name": "xmlab0/source.jpg", "location": "Abdomen", "modality": "CT",
            "base_type": "vqa", "triple": ["vhead", "_", "_"]}
    train = [{**base, "qid": 1, "question": "What modality is used?", "answer": "CT", "q_lang": "en",
              "answer_type": "OPEN", "content_type": "Modality"},
             {**base, "qid": 2, "question": "Is the liver abnormal?", "answer": "No", "q_lang": "en",
              "answer_type": "CLOSED", "content_type": "Abnormality"},
             {**base, "qid": 3, "question": "这是什么器官?", "answer": "肝脏", "q_lang": "zh",
              "answer_type": "OPEN", "content_type": "Organ"},
             {**base, "qid": 4, "question": "What colour is the liver?", "answer": "Gray", "q_lang": "en",
              "answer_type": "OPEN", "content_type": "Color"},
             {**base, "qid": 6, "question": "Where is the kidney?", "answer": "Lower right", "q_lang": "en",
              "answer_type": "OPEN", "content_type": "Position"}]
    (root / "train.json").write_text(json.dumps(train, ensure_ascii=False))
    (d / "question.json").write_text(json.dumps(train, ensure_ascii=False))
    (root / "validate.json").write_text(json.dumps([{**base, "qid": 7, "question": "Which organ is this?",
                                                     "answer": "Spleen", "q_lang": "en", "answer_type": "OPEN",
                                                     "content_type": "Organ"}]))
    (root / "test.json").write_text(json.dumps([{**base, "qid": 5, "question": "Which organ is largest?",
                                                 "answer": "Liver", "q_lang": "en", "answer_type": "OPEN",
                                                 "content_type": "Size"}]))
    return root


def test_slake(tmp_path: Path) -> None:
    root = _slake(tmp_path / "slake")
    res = run_import("slake", root, tmp_path / "b", options={"lang": "en"}, license="CC-BY-4.0")
    got = {it.meta["qid"]: (it.task, it.form, it.split) for it in res.items}
    assert got == {"1": ("s1.modality", "text", "train"), "2": ("s3.abnormal", "yesno", "train"),
                   "4": (OTHER_TASK, "text", "train"), "5": ("s2.size_compare", "text", "test"),
                   "6": ("s3.location", "text", "train"), "7": ("s2.organ", "text", "val")}
    assert not res.quarantined
    case = res.cases[0]
    assert case.modality == "CT" and case.body_region == "abdomen"
    by_name: dict[str, list] = {}
    for s in case.structures:
        by_name.setdefault(s.name, []).append(s)
    assert sorted(by_name) == ["Kidney", "Liver", "Spleen"]
    liver, = by_name["Liver"]
    assert liver.box == (5.0, 5.0, 20.0, 20.0) and liver.mask and liver.area_px == 225
    assert [k.box for k in by_name["Kidney"]] == [(22.0, 25.0, 26.0, 35.0), (26.0, 25.0, 30.0, 35.0)]
    assert all(k.mask is None for k in by_name["Kidney"])  # two boxes, one mask value: not split by guess
    spleen, = by_name["Spleen"]
    assert spleen.box == (5.0, 25.0, 10.0, 30.0) and spleen.area_px == 25
    from medr2.images import load_image

    m = load_image(tmp_path / "b" / liver.mask)
    assert m.shape[:2] == (40, 40) and int((m > 0).sum()) == 225
    assert case.meta["mask_values_unnamed"] == [9] and case.meta["mask"].startswith("images/")
    items = {it.meta["qid"]: it for it in res.items}
    assert items["6"].meta["evidence"] == [{"name": "Kidney", "box": [22.0, 25.0, 26.0, 35.0]},
                                           {"name": "Kidney", "box": [26.0, 25.0, 30.0, 35.0]}]
    assert items["7"].meta["evidence"] == [{"name": "Spleen", "box": [5.0, 25.0, 10.0, 30.0]}]
    assert "evidence" not in items["1"].meta
    write_import(res, tmp_path / "b")
    bench = load_bench(tmp_path / "b")
    assert bench.items[0].license == "CC-BY-4.0"
    assert {s.name for s in bench.case(case.case_id).structures} == {"Liver", "Kidney", "Spleen"}


@pytest.mark.parametrize("mask_txt", ['{"1": "Liver", "2": "Kidney", "3": "Spleen"}',
                                      "{'Liver': 1, 'Kidney': 2, 'Spleen': 3}", "Liver\t1\nKidney\t2\nSpleen\t3\n"])
def test_slake_mask_txt_forms(tmp_path: Path, mask_txt: str) -> None:
    res = run_import("slake", _slake(tmp_path / "slake", mask_txt), tmp_path / "b", options={"lang": "en"})
    assert {s.name for s in res.cases[0].structures if s.mask} == {"Liver", "Spleen"}


def test_slake_unreadable_mask_txt_names_nothing(tmp_path: Path) -> None:
    res = run_import("slake", _slake(tmp_path / "slake", "liver spleen kidney\n"), tmp_path / "b",
                     options={"lang": "en"})
    assert [(q.field, Path(q.file).name) for q in res.quarantined] == [("mask.txt", "mask.txt")]
    assert all(s.mask is None for s in res.cases[0].structures)  # boxes kept, no mask value named by guess
    assert {s.name for s in res.cases[0].structures} == {"Liver", "Kidney"} and len(res.items) == 6


def test_pmcvqa(tmp_path: Path) -> None:
    root = tmp_path / "pmc"
    write_png(root / "images" / "PMC1_F1.jpg", gradient(30, 30))
    with (root / "test_clean.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Figure_path", "Question", "Answer", "Choice A", "Choice B", "Choice C", "Choice D",
                    "Answer_label"])
        w.writerow(["PMC1_F1.jpg", "What imaging modality was used?", "MRI", "A:CT ", "B:MRI", "C:PET", "D:US", "B"])
        w.writerow(["PMC1_F1.jpg", "What is shown by the arrow?", "cyst", "A:cyst", "B:bone", "C:air", "D:fat", ""])
        w.writerow(["PMC1_F1.jpg", "What is the diagnosis?", "gout", "A:a", "B:b", "C:c", "D:d", ""])
    res = run_import("pmc-vqa", root, tmp_path / "b")
    assert [(it.task, it.answer, it.options[1], it.split) for it in res.items] == [
        ("s1.modality", "B", "MRI", "test"), (OTHER_TASK, "A", "bone", "test")]
    assert res.quarantined[0].field == "Answer"


def test_omnimedvqa_access(tmp_path: Path) -> None:
    root = tmp_path / "omni"
    write_png(root / "Images" / "ACRIMA" / "a.png", gradient(20, 20))
    for access in ("Open-access", "Restricted-access"):
        d = root / "QA_information" / access
        d.mkdir(parents=True)
        (d / "ACRIMA.json").write_text(json.dumps([{
            "dataset": "ACRIMA", "question_id": f"ACRIMA_{access}", "question_type": "Disease Diagnosis",
            "question": f"What is the diagnosis ({access})?", "gt_answer": "Glaucoma", "option_A": "Normal",
            "option_B": "Glaucoma", "image_path": "Images/ACRIMA/a.png", "modality_type": "Fundus Photography"}]))
    res = run_import("omnimedvqa", root, tmp_path / "b")
    assert sorted((it.access, it.task, it.answer, it.chance) for it in res.items) == [
        ("open", "s4.diagnosis", "B", 0.5), ("restricted", "s4.diagnosis", "B", 0.5)]
    write_import(res, tmp_path / "b")
    from medr2.bench.info import bench_info

    info = bench_info(tmp_path / "b")
    assert info["sources"]["omnimedvqa"]["access"] == {"open": 1, "restricted": 1}


def test_probmed_pairs(tmp_path: Path) -> None:
    root = tmp_path / "pm"
    write_png(root / "mri" / "1.png", gradient(20, 20))
    recs = [
        {"id": 1, "image": "mri/1.png", "image_type": "mri_brain", "qa_type": "modality_gt",
         "question": "Is this an MRI?", "answer": "yes"},
        {"id": 1, "image": "mri/1.png", "image_type": "mri_brain", "qa_type": "modality_hallu",
         "question": "Is this a CT scan?", "answer": "no"},
        {"id": 1, "image": "mri/1.png", "image_type": "mri_brain", "qa_type": "entity_gt_1",
         "question": "Is there evidence of glioma?", "answer": "yes"},
        {"id": 1, "image": "mri/1.png", "image_type": "mri_brain", "qa_type": "entity_hallu_1",
         "question": "Is there evidence of a fracture?", "answer": "maybe"},
        {"id": 1, "image": "mri/1.png", "image_type": "mri_brain", "qa_type": "abnormality",
         "question": "Is there an abnormality?", "answer": "yes"},
    ]
    (root / "test.json").write_text(json.dumps(recs))
    res = run_import("probmed", root, tmp_path / "b")
    items = {it.meta["qa_type"]: it for it in res.items}
    assert items["modality_gt"].pair_id and items["modality_gt"].pair_id == items["modality_hallu"].pair_id
    assert items["modality_hallu"].meta["adversarial"] and items["modality_gt"].task == "s1.modality"
    assert items["entity_gt_1"].pair_id is None and items["entity_gt_1"].meta["pair_broken"]
    assert items["abnormality"].task == "s3.abnormal" and res.cases[0].modality == "MRI"
    assert [q.field for q in res.quarantined] == ["answer"]


def _png_b64(arr: np.ndarray) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def test_vlmevalkit_foreign_tsv(tmp_path: Path) -> None:
    p = tmp_path / "MedX.tsv"
    with p.open("w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(["index", "image", "question", "hint", "A", "B", "C", "answer", "category", "l2-category", "split"])
        w.writerow([0, _png_b64(gradient(16, 16)), "Which modality?", "", "CT", "MRI", "X-ray", "C",
                    "s1.modality", "acq", "test"])
        w.writerow([1, "0", "Is it normal?", "", "", "", "", "Yes", "normality", "x", "test"])
        w.writerow([2, "!!notbase64", "Q?", "", "", "", "", "text", "x", "x", "test"])
    res = run_import("vlmevalkit", p, tmp_path / "b")
    assert [(it.task, it.form, it.answer) for it in res.items] == [("s1.modality", "mcq", "C"),
                                                                   (OTHER_TASK, "yesno", "yes")]
    assert res.items[0].image_sha256 == res.items[1].image_sha256  # row 1 references row 0's image
    assert res.quarantined[0].field == "image"


@pytest.mark.parametrize("target,fmt", [("hf", "hf"), ("vlmevalkit", "vlmevalkit"), ("lmms-eval", "lmms-eval")])
def test_export_import_roundtrip(tmp_path: Path, target: str, fmt: str) -> None:
    src = tmp_path / "src"
    _vqarad(tmp_path / "rad")
    res = run_import("vqa-rad", tmp_path / "rad", src, license="CC0-1.0")
    write_import(res, src)
    bench = load_bench(src)
    run_export(target, bench, tmp_path / "exp")
    back = run_import(fmt, tmp_path / "exp", tmp_path / "back")
    assert not back.quarantined
    write_import(back, tmp_path / "back")
    again = load_bench(tmp_path / "back")
    assert sorted(again.items, key=lambda i: i.item_id) == sorted(bench.items, key=lambda i: i.item_id)
    assert sorted(again.cases, key=lambda c: c.case_id) == sorted(bench.cases, key=lambda c: c.case_id)


def test_hf_export_loads_with_datasets_and_card(tmp_path: Path) -> None:
    import datasets

    src = tmp_path / "src"
    _vqarad(tmp_path / "rad")
    write_import(run_import("vqa-rad", tmp_path / "rad", src, license="CC0-1.0"), src)
    run_export("hf", load_bench(src), tmp_path / "hf")
    ds = datasets.load_dataset("parquet", data_dir=str(tmp_path / "hf" / "data"))
    assert set(ds) == {"train", "test"} and ds["train"][0]["image"].size == (32, 32)
    card = (tmp_path / "hf" / "README.md").read_text()
    assert "| vqa-rad | 5 | 2 | CC0-1.0 (5) | open (5) |" in card and "s3.location" in card


def test_lmms_eval_task_runs_in_harness_style(tmp_path: Path) -> None:
    """Load the task YAML the way lmms-eval does (!function -> utils), load its dataset with
    ``datasets.load_dataset(dataset_path, **dataset_kwargs)``, and score gold answers to 1.0."""
    import importlib.util

    import datasets
    import yaml

    src = tmp_path / "src"
    _vqarad(tmp_path / "rad")
    write_import(run_import("vqa-rad", tmp_path / "rad", src), src)
    summary = run_export("lmms-eval", load_bench(src), tmp_path / "task")
    spec = importlib.util.spec_from_file_location("utils", tmp_path / "task" / "utils.py")
    utils = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(utils)  # type: ignore[union-attr]

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda ld, node: getattr(utils, ld.construct_scalar(node).split(".")[1]))
    for name in summary["tasks"]:
        cfg = yaml.load((tmp_path / "task" / f"{name}.yaml").read_text(), Loader=Loader)
        assert cfg["task"] == name and cfg["output_type"] == "generate_until"
        docs = datasets.load_dataset(cfg["dataset_path"], **cfg["dataset_kwargs"])[cfg["test_split"]]
        results = []
        for doc in docs:
            assert cfg["doc_to_visual"](doc)[0].mode == "RGB"
            assert doc["question"] in cfg["doc_to_text"](doc, cfg["lmms_eval_specific_kwargs"]["default"])
            got = cfg["process_results"](doc, [doc[cfg["doc_to_target"]]])
            assert got["item_accuracy"] == 1.0
            results.append(got["accuracy"])
            wrong = cfg["process_results"](doc, ["zzz"])["accuracy"]
            assert wrong["score"] == 0.0
        acc = cfg["metric_list"][0]["aggregation"](results)
        # imported open questions (text form, not a report task) count in the headline accuracy
        assert acc == 1.0
