"""A small bench on real images (skimage retina, pydicom CT and chest CR) with painted lesions,
and hand-written clean items of every form, for the perturbation tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from medr2 import Case, Item
from medr2.images import ImageStore
from medr2.imaging.draw import draw_cue, make_cue
from medr2.records import Companion, Finding, ImageRef, Structure, item_content_id


def _resize(arr: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    mode = "L" if arr.ndim == 2 else "RGB"
    return np.asarray(Image.fromarray(arr, mode=mode).resize(size, Image.Resampling.BILINEAR)).copy()


def _dicom8(name: str) -> np.ndarray:
    import pydicom
    from pydicom.data import get_testdata_file

    path = get_testdata_file(name, download=False)
    assert path is not None, name
    a = pydicom.dcmread(path).pixel_array.astype(np.float64)
    lo, hi = np.percentile(a, (0.5, 99.5))
    return np.clip((a - lo) / (hi - lo) * 255, 0, 255).round().astype(np.uint8)


def real_backgrounds() -> dict[str, np.ndarray]:
    from skimage import data

    return {
        "fundus": _resize(data.retina(), (320, 320)),
        "ct": _resize(_dicom8("CT_small.dcm"), (256, 256)),
        "xray": _resize(_dicom8("RG1_UNCR.dcm"), (300, 320)),
    }


def paint_lesion(arr: np.ndarray, cx: float, cy: float, r: float, value: float) -> tuple[np.ndarray, np.ndarray]:
    """A soft-edged disc of intensity ``value`` (per channel for RGB); returns (image, mask alpha>=0.5)."""
    h, w = arr.shape[:2]
    yy, xx = np.mgrid[:h, :w]
    d = np.sqrt((xx + 0.5 - cx) ** 2 + (yy + 0.5 - cy) ** 2)
    alpha = np.clip(r + 1.5 - d, 0, 3) / 3.0
    a = alpha if arr.ndim == 2 else alpha[..., None]
    out = np.clip(np.rint(arr * (1 - a) + value * a), 0, 255).astype(np.uint8)
    return out, alpha >= 0.5


@dataclass
class Fixture:
    root: Path
    images: ImageStore
    cases: list[Case]
    items: list[Item]
    clean: dict[str, np.ndarray]  # case_id -> image before the lesion was painted
    masks: dict[str, np.ndarray]  # case_id -> lesion mask


def _bbox(mask: np.ndarray) -> tuple[float, float, float, float]:
    ys, xs = np.nonzero(mask)
    return (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))


LESIONS = {  # case_id: (background, modality, label, cx, cy, r, value, laterality)
    "fundus_a": ("fundus", "fundus photography", "exudate", 100.0, 170.0, 13.0, 245.0, "left"),
    "fundus_b": ("fundus", "fundus photography", "haemorrhage", 215.0, 120.0, 11.0, 40.0, "right"),
    "ct_a": ("ct", "CT", "hypodense lesion", 150.0, 140.0, 12.0, 30.0, "right"),
    "ct_b": ("ct", "CT", None, 0, 0, 0, 0, None),
    "xray_a": ("xray", "X-ray", "nodule", 95.0, 140.0, 12.0, 235.0, "left"),
}


def _item(case: Case, task: str, stage: int, form: str, question: str, answer: str, *, options: list[str] | None = None,
          answer_box: tuple[float, float, float, float] | None = None, chain: int | None = None,
          pair: str | None = None, image: tuple[str, str] | None = None, cue: object = None,
          meta: dict | None = None, images: list[ImageRef] | None = None) -> Item:
    fields = {
        "case_id": case.case_id, "stage": stage, "task": task, "form": form, "question": question,
        "options": options or [], "answer": answer, "answer_box": answer_box,
        "chance": 0.0 if form == "box" else (0.5 if form == "yesno" else 1.0 / max(1, len(options or [1]))),
        "pair_id": pair, "image": image[0] if image else case.image,
        "image_sha256": image[1] if image else case.image_sha256,
        "image_width": case.width, "image_height": case.height, "cue": cue,
        "chain_id": f"chain-{case.case_id}" if chain is not None else None, "step": chain,
        "template_id": f"{task}.t1", "split": "test", "source": case.source, "license": case.license,
        "meta": meta or {},
    }
    if images:
        fields["images"] = [r.model_dump() for r in images]
    fields["item_id"] = item_content_id(fields)
    return Item.model_validate(fields)


def items_for(case: Case, images: ImageStore) -> list[Item]:
    f = case.findings[0] if case.findings else None
    out = [
        _item(case, "s1.modality", 1, "mcq", "Which imaging modality was used to acquire this image?",
              "A", options=[case.modality, "MRI", "ultrasound", "PET"], chain=1),
        _item(case, "s1.orientation", 1, "yesno", "Is this image mirrored left-to-right?", "no",
              pair="o" + case.case_id),
        _item(case, "s1.artefact", 1, "mcq", "Which artefact is present?", "D",
              options=["noise", "blur", "low contrast", "none"]),
        _item(case, "s3.abnormal", 3, "yesno", "Is this image abnormal?", "yes" if f else "no",
              pair="a" + case.case_id),
        _item(case, "s3.abnormal", 3, "yesno", "Is this image normal, free of any abnormality?", "no" if f else "yes",
              pair="a" + case.case_id),
        _item(case, "s3.count", 3, "mcq", "How many lesions are visible in this image?", "B" if f else "A",
              options=["0", "1", "2", "3"]),
    ]
    if f is not None:
        other = {"exudate": "drusen", "haemorrhage": "exudate", "hypodense lesion": "cyst", "nodule": "mass"}[f.label]
        side = f.attributes["laterality"]
        out += [
            _item(case, "s3.finding_type", 3, "mcq", "Which finding is present in this image?", "B",
                  options=[other, f.label, "calcification", "abscess"], chain=2),
            _item(case, "s3.lesion_box", 3, "box", "Locate the lesion.", "", answer_box=f.box),
            _item(case, "s3.location", 3, "mcq", "On which side of the image is the lesion?",
                  "A" if side == "left" else "B", options=["left", "right", "centre"]),
            _item(case, "s3.absent_finding", 3, "yesno", "Is there a calcification in this image?", "no",
                  pair="c" + case.case_id),
            _item(case, "s4.diagnosis", 4, "mcq", "What is the most likely diagnosis?", "C",
                  options=["normal", "infection", case.diagnosis or "lesion", "artefact"], chain=3),
            _item(case, "s4.report", 4, "text", "Write the findings.", f"A {f.label} on the {side} side."),
        ]
    if case.structures:
        s = case.structures[0]
        from medr2.images import load_image

        shown = load_image(images.path(case.image))
        cue = make_cue("box", s.box, case.width, case.height, image=shown)
        ref = images.put_array(draw_cue(shown, cue))
        out.append(_item(case, "s2.cued_structure", 2, "mcq", "Which structure is outlined on the image?", "A",
                         options=[s.name, "liver", "kidney", "spleen"], image=(ref.path, ref.sha256), cue=cue))
    return out


def build_fixture(root: Path) -> Fixture:
    images = ImageStore(root)
    bgs = real_backgrounds()
    cases, items, clean, masks = [], [], {}, {}
    for cid, (bg, modality, label, cx, cy, r, value, side) in LESIONS.items():
        arr = bgs[bg]
        findings, synthetic = [], []
        if label:
            painted, mask = paint_lesion(arr, cx, cy, r, value)
            mref = images.put_array(np.where(mask, 255, 0).astype(np.uint8))
            findings = [Finding(label=label, box=_bbox(mask), mask=mref.path, area_px=float(mask.sum()),
                                attributes={"laterality": side, "shape": "round"}, synthetic=True)]
            masks[cid] = mask
            synthetic = ["findings", "diagnosis"]
        else:
            painted = arr
        clean[cid] = arr
        ref = images.put_array(painted)
        h, w = painted.shape[:2]
        structures = [Structure(name="optic disc" if bg == "fundus" else "body", kind="organ",
                                box=(w * 0.05, h * 0.3, w * 0.3, h * 0.6))]
        case = Case(case_id=cid, image=ref.path, image_sha256=ref.sha256, width=w, height=h, modality=modality,
                    plane="axial" if bg == "ct" else None, body_region={"fundus": "eye", "ct": "abdomen",
                                                                        "xray": "chest"}[bg],
                    structures=structures, findings=findings, diagnosis=(label + " disease") if label else "normal",
                    source="test", license="CC0", patient_id=f"p-{cid}", split="test", synthetic_fields=synthetic,
                    flipped=False, meta={"findings_complete": True})  # the fixture knows every finding it paints
        cases.append(case)
        items += items_for(case, images)
    cases, items = with_prior(cases, items)
    return Fixture(root, images, cases, items, clean, masks)


def with_prior(cases: list[Case], items: list[Item]) -> tuple[list[Case], list[Item]]:
    """``ct_b`` (no lesion) linked to ``ct_a`` (a hypodense lesion) as its prior study, and ``ct_a``'s comparison item
    (issue 49: the lesion is new), shown as [prior, current]."""
    by_id = {c.case_id: c for c in cases}
    prior, current = by_id["ct_b"], by_id["ct_a"]
    current = current.model_copy(update={"companions": [Companion(case_id="ct_b", role="prior", interval_days=180)]})
    refs = [ImageRef(path=prior.image, sha256=prior.image_sha256, width=prior.width, height=prior.height,
                     role="prior", interval_days=180, case_id="ct_b"),
            ImageRef(path=current.image, sha256=current.image_sha256, width=current.width, height=current.height)]
    options = ["new since the prior study", "resolved since the prior study", "unchanged",
               "worse: grown since the prior study"]
    item = _item(current, "s3.change", 3, "mcq", "Compared with the prior study, how has the hypodense lesion changed "
                 "on the current image?", "A", options=options, images=refs,
                 meta={"finding": "hypodense lesion", "change": "new", "prior_case": "ct_b", "prior_state": "absent",
                       "current_state": "present", "prior_answer": "unchanged", "comparison": True})
    return [current if c.case_id == "ct_a" else c for c in cases], [*items, item]
