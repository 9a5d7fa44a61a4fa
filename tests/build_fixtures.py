"""A small deterministic Source whose cases support all 35 tasks, plus injectable bad records.

The first six cases have a companion (issue 49), planned after the others: a prior study of each CT case (a
finding that resolved since), a lateral view of each X-ray case (showing its first finding only) and a T1-weighted
sequence of each MRI case; each companion is its own case, with its own labels, of the same patient.

Registered as ``buildtest`` (``buildtest:bad`` adds a corrupt image, a box outside the image, an
unknown label and a duplicate case id). Images are small numpy arrays written through ImageStore.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from medr2 import BadInput, Case
from medr2.images import ImageStore, load_image
from medr2.records import Companion, Finding, Structure
from medr2.sources.base import register_source

MODALITIES = (
    ("CT", "abdomen", "axial", "portal venous phase"),
    ("MRI", "head", "axial", "T2-weighted"),
    ("X-ray", "chest", "PA", None),
)
ORGANS = {"CT": ("liver", "kidney"), "MRI": ("brain", "ventricle"), "X-ray": ("lung", "heart")}
FINDINGS = {"CT": ("cyst", "mass", "haemangioma"), "MRI": ("glioma", "meningioma", "infarct"),
            "X-ray": ("nodule", "effusion", "consolidation")}
DIAGNOSES = {"CT": ("hepatic cyst", "hepatocellular carcinoma", "haemangioma"),
             "MRI": ("glioma", "meningioma", "stroke"), "X-ray": ("pneumonia", "lung cancer", "tuberculosis")}
SHAPES, MARGINS = ("round", "oval", "irregular", "lobulated"), ("well-defined", "ill-defined", "spiculated")
SEVERITIES = ("mild", "moderate", "severe")
W, H = 96, 80


@dataclass(frozen=True)
class Spec:
    case_id: str
    index: int
    kind: str = "good"  # good / corrupt / bad_box / unknown_label / duplicate / prior / view / sequence


COMPANIONS = 6  # cases with a companion (the first ones)
COMPANION_OF = {"CT": "prior", "X-ray": "view", "MRI": "sequence"}  # by the case's modality


def companion_links(spec: Spec) -> list[Companion]:
    """The links of a case to its companion, and of a companion back to its case (views and sequences name each
    other; a prior study links nothing)."""
    i, kind = spec.index, spec.kind
    if i >= COMPANIONS:
        return []
    role = COMPANION_OF[MODALITIES[i % 3][0]]
    if kind == "good":
        label = {"prior": None, "view": "lateral", "sequence": "T1-weighted"}[role]
        return [Companion(case_id=f"case{i:03d}-{role}", role=role, label=label,  # type: ignore[arg-type]
                          interval_days=90 if role == "prior" else None)]
    if kind in ("view", "sequence"):
        back = "frontal" if kind == "view" else MODALITIES[i % 3][3]
        return [Companion(case_id=f"case{i:03d}", role=kind, label=back)]  # type: ignore[arg-type]
    return []


def companion_case(spec: Spec, images: ImageStore) -> Case:
    """The companion of case ``spec.index``: its prior (one finding, resolved on the current study), its lateral view
    (the first finding only) or its T1-weighted sequence (same findings), with a pixel pattern of its own."""
    base = make_case(Spec(f"case{spec.index:03d}", spec.index), images)
    rng = np.random.default_rng(5000 + spec.index)
    arr = (rng.integers(0, 60, (H, W)) + 40).astype(np.uint8)
    findings = list(base.findings)
    update: dict[str, Any] = {"case_id": spec.case_id, "companions": companion_links(spec)}
    if spec.kind == "prior":
        findings = [Finding(label=FINDINGS[base.modality][1], box=(40, 40, 54, 54), synthetic=True,
                            attributes={"size_mm": 12.0, "shape": "round", "margin": "well-defined"})]
        update["diagnosis"] = DIAGNOSES[base.modality][1]
    elif spec.kind == "view":
        findings = findings[:1]
        update["plane"] = "lateral"
    else:
        update["sequence"] = "T1-weighted"
    for f in findings:
        x1, y1, x2, y2 = (int(v) for v in f.box)
        arr[y1:y2, x1:x2] = 220
    ref = images.put_array(arr)
    update.update({"image": ref.path, "image_sha256": ref.sha256, "findings": findings})
    return base.model_copy(update=update)


def make_case(spec: Spec, images: ImageStore) -> Case:
    i = spec.index
    rng = np.random.default_rng(1000 + i)
    modality, region, plane, sequence = MODALITIES[i % 3]
    arr = (rng.integers(0, 60, (H, W)) + 40).astype(np.uint8)
    organ_a, organ_b = ORGANS[modality]
    structures = [
        Structure(name=organ_a, box=(4, 6, 50, 70), area_px=2000.0),
        Structure(name=organ_b, box=(60, 8, 90, 30), area_px=500.0),
        Structure(name="marker point", kind="landmark", box=(70, 60, 74, 64)),
    ]
    n_inst = 1 + i % 4
    structures += [Structure(name="vertebra", kind="instance", box=(5 + 10 * k, 72, 12 + 10 * k, 78))
                   for k in range(n_inst)]
    findings: list[Finding] = []
    n_find = i % 3  # 0, 1 or 2 findings
    for k in range(n_find):
        x = 10 + 25 * k
        arr[20:34, x:x + 14] = 220
        findings.append(Finding(
            label=FINDINGS[modality][(i + k) % 3], box=(x, 20, x + 14, 34), synthetic=True,
            attributes={"size_mm": [7.0, 14.0, 25.0, 40.0][(i + k) % 4], "shape": SHAPES[(i + k) % 4],
                        "margin": MARGINS[(i + k) % 3], "laterality": ("left", "right")[(i + k) % 2]}))
    if spec.kind == "bad_box":
        findings = [Finding(label="cyst", box=(80, 20, 120, 30))]
    ref = images.put_array(arr)
    diagnosis = DIAGNOSES[modality][i % 3] if n_find else "normal"
    # the grade cycles apart from the modality (i % 3) and the severity ((i // 3) % 3): each modality and each
    # severity meets a reject image, and the first cases (those with a companion) are readable
    quality = "excellent" if spec.kind == "unknown_label" else ("good", "usable", "reject")[(i // 3 + i // 9) % 3]
    if spec.kind == "corrupt":
        bad = images.put_png_bytes(b"\x89PNG\r\n\x1a\n" + b"garbage" * 10, W, H)
        load_image(images.path(bad.path))  # raises BadInput, as a real reader would
    return Case(
        case_id=spec.case_id, image=ref.path, image_sha256=ref.sha256, width=W, height=H, modality=modality,
        plane=plane, sequence=sequence, body_region=region, quality=quality,
        artefact=("noise", "blur", "none", "motion")[i % 4], flipped=bool(i % 2), pixel_spacing_mm=0.8,
        structures=structures, findings=findings, diagnosis=diagnosis,
        severity=SEVERITIES[(i // 3) % 3] if n_find else None,
        malignancy=("benign", "malignant")[i % 2] if n_find else None,
        mimics=[d for d in DIAGNOSES[modality] if d != diagnosis][:2] if n_find else [],
        report=f"Findings: {n_find} lesion(s) in the {organ_a}. Impression: {diagnosis}.",
        source="buildtest", license="CC0-1.0", patient_id=f"patient{i // 2}",
        synthetic_fields=["findings"] if n_find else [],
        # a synthetic case knows every finding and structure it draws; its drawn shapes tell a mirror image
        # and it stands for a source that grades severity, names the diagnoses its images tell apart and declares
        # its benign/malignant label one they tell apart (vocab.differential.malignancy_decidable)
        meta={"findings_complete": True, "structures_complete": True, "lateralising": True,
              "severity_graded": True, "malignancy_discriminable": True,
              "discriminable": [d for d in DIAGNOSES[modality] if d != diagnosis]},
        companions=companion_links(spec),
    )


class BuildTestSource:
    name = "buildtest"

    def __init__(self, arg: str | None) -> None:
        self.bad = arg == "bad"

    def plan(self, seed: int, n: int | None) -> list[Spec]:
        n = 24 if n is None else n
        specs = [Spec(f"case{i:03d}", i) for i in range(n)]
        specs += [Spec(f"case{i:03d}-{COMPANION_OF[MODALITIES[i % 3][0]]}", i, COMPANION_OF[MODALITIES[i % 3][0]])
                  for i in range(min(n, COMPANIONS))]
        if self.bad:
            specs += [Spec("bad-corrupt", 100, "corrupt"), Spec("bad-box", 101, "bad_box"),
                      Spec("bad-label", 102, "unknown_label"), Spec("case000", 0, "duplicate")]
        return specs

    def realize(self, spec: Spec, images: ImageStore) -> Case:
        if not isinstance(spec, Spec):
            raise BadInput("not a buildtest spec", record=str(spec))
        if spec.kind in COMPANION_OF.values():
            return companion_case(spec, images)
        return make_case(spec, images)


@register_source("buildtest")
def _factory(arg: str | None) -> Any:
    return BuildTestSource(arg)
