"""Built-in vocabularies (the last fallback for distractors) and label normalisation.

Two labels are *equivalent* when they normalise to the same key (case, spaces, hyphens) or belong to
the same synonym group; an equivalent label is never offered as a distractor.
"""

from __future__ import annotations

import functools
import re

SYNONYMS: tuple[frozenset[str], ...] = tuple(frozenset(g) for g in (
    {"mr", "mri", "magnetic resonance", "magnetic resonance imaging"},
    {"ct", "computed tomography", "cat"},
    {"xray", "x ray", "radiograph", "radiography", "cr", "dx", "plain film", "chest xray"},
    {"us", "ultrasound", "sonography", "ultrasonography", "echography"},
    {"pet", "positron emission tomography"},
    {"nm", "nuclear medicine", "scintigraphy", "bone scan"},
    {"fundus", "fundus photography", "retinal photograph", "colour fundus photograph", "color fundus photograph"},
    {"microscopy", "histology", "histopathology", "pathology slide"},
    {"head", "brain", "skull", "cranium"},
    {"chest", "thorax", "lungs", "lung"},
    {"abdomen", "abdominal"},
    {"axial", "transverse", "transaxial"},
    {"pa", "posteroanterior", "postero anterior"},
    {"ap", "anteroposterior", "antero posterior"},
    {"t1", "t1 weighted", "t1w"},
    {"t2", "t2 weighted", "t2w"},
    {"flair", "t2 flair"},
    {"normal", "no finding", "no findings", "no abnormality", "healthy", "no tumor", "no tumour", "notumor"},
    {"malignant", "cancer", "malignancy"},
    {"benign", "non malignant"},
    {"circumscribed", "well defined", "well circumscribed"},  # BI-RADS margin (CBIS-DDSM: CIRCUMSCRIBED)
))
_GROUP: dict[str, int] = {name: i for i, g in enumerate(SYNONYMS) for name in g}

NORMAL_LABELS = SYNONYMS[17]

BUILTIN: dict[str, tuple[str, ...]] = {
    "modality": ("CT", "MRI", "X-ray", "ultrasound", "PET", "fundus photography", "microscopy", "nuclear medicine"),
    "plane": ("axial", "coronal", "sagittal", "PA", "AP", "lateral", "oblique"),
    "body_region": ("head", "neck", "chest", "abdomen", "pelvis", "spine", "upper limb", "lower limb", "breast",
                    "eye"),
    "organ": ("brain", "liver", "kidney", "spleen", "heart", "lung", "pancreas", "bladder", "stomach", "bone"),
    "finding": ("nodule", "mass", "cyst", "calcification", "haemorrhage", "fracture", "effusion", "infarct"),
    "diagnosis": ("pneumonia", "glioma", "meningioma", "metastasis", "abscess", "haemangioma", "lymphoma",
                  "tuberculosis"),
    "shape": ("round", "oval", "lobulated", "irregular"),
    "margin": ("well-defined", "ill-defined", "spiculated", "microlobulated"),
    "laterality": ("left", "right", "bilateral", "midline"),
    "landmark": ("carina", "aortic knob", "costophrenic angle", "pituitary fossa", "femoral head", "optic disc"),
    "artefact": ("noise", "blur", "motion", "low contrast", "compression", "low resolution", "contrast shift",
                 "none"),
    "quality": ("good", "usable", "reject"),
    "malignancy": ("benign", "malignant"),
}

# per modality (normalised key) for labels that only make sense within one modality
BUILTIN_BY_MODALITY: dict[str, dict[str, tuple[str, ...]]] = {
    "sequence": {
        "mr": ("T1-weighted", "T2-weighted", "FLAIR", "diffusion-weighted", "T1 post-contrast"),
        "ct": ("non-contrast", "arterial phase", "portal venous phase", "bone window", "lung window"),
    },
    "intensity": {
        "mr": ("hyperintense", "hypointense", "isointense", "mixed signal"),
        "ct": ("hyperdense", "hypodense", "isodense", "mixed density"),
        "us": ("hyperechoic", "hypoechoic", "anechoic", "isoechoic"),
    },
}

SEVERITY_ORDER: tuple[str, ...] = ("none", "minimal", "mild", "moderate", "severe", "critical")
QUALITY = BUILTIN["quality"]
ARTEFACTS = BUILTIN["artefact"]
MALIGNANCY = BUILTIN["malignancy"]


def norm(label: str) -> str:
    """Normalised key: lower case, hyphens/underscores/extra spaces folded, synonyms merged."""
    return _norm(str(label))


@functools.lru_cache(maxsize=8192)  # a build normalises the same few hundred labels ~350 times per case
def _norm(label: str) -> str:
    key = re.sub(r"[\s_\-]+", " ", label.strip().lower())
    key = key.replace("x ray", "xray")
    group = _GROUP.get(key)
    return f"<syn{group}>" if group is not None else key


def same(a: str, b: str) -> bool:
    return norm(a) == norm(b)


def is_normal(label: str | None) -> bool:
    return label is not None and norm(label) == norm("normal")


def builtin(key: str, modality: str | None) -> tuple[str, ...]:
    by_mod = BUILTIN_BY_MODALITY.get(key, {})
    if modality is not None:
        m = norm(modality)
        for mod, labels in by_mod.items():
            if norm(mod) == m:
                return labels
        if by_mod:
            return ()  # modality-specific vocabulary unknown for this modality: no blind fallback
    return BUILTIN.get(key, ())
