"""Built-in distractor lists (the last fallback for distractors), label comparison, modality families and English
for templates.

Which labels mean the same, and which contain or co-occur with which, is known once, in the clinical vocabulary
:mod:`medr2.vocab`: two labels are *equivalent* when :func:`norm` gives them one key (the same concept, or the same
text after :func:`medr2.vocab.normalise`: case, white space, hyphens, full-width and invisible characters), and a
label is never a wrong option beside a true one it :func:`conflicts` with (synonym, sub-type, super-type,
part/whole or co-occurring label).
"""

from __future__ import annotations

import re

from medr2 import vocab as clinical

# English for templates: one grammar for every text medr2 writes, shared with the sources' report templates
from medr2.vocab.appearance import COLOURS
from medr2.vocab.english import article, be, indefinite, is_plural, plural  # noqa: F401

BUILTIN: dict[str, tuple[str, ...]] = {
    "modality": ("CT", "MRI", "X-ray", "ultrasound", "PET", "fundus photography", "microscopy", "nuclear medicine"),
    "plane": ("axial", "coronal", "sagittal", "PA", "AP", "lateral", "oblique"),
    "body_region": ("head", "neck", "chest", "abdomen", "pelvis", "spine", "upper limb", "lower limb", "breast"),
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
    "plane": {
        "mr": ("axial", "coronal", "sagittal", "oblique"),
        "ct": ("axial", "coronal", "sagittal", "oblique"),
        "pet": ("axial", "coronal", "sagittal"),
        "xray": ("PA", "AP", "lateral", "oblique"),
        "us": ("transverse", "longitudinal", "oblique"),
        "nm": ("anterior", "posterior", "lateral", "oblique"),
        "mammography": ("CC", "MLO", "ML", "XCCL", "LM", "LMO"),  # BI-RADS atlas standard and supplementary views
    },
    "sequence": {
        # seven MR sequences, so three mutually exclusive wrong options remain beside any one (T1 post-contrast is a
        # T1-weighted, FLAIR a T2-weighted sequence: never two options of one question)
        "mr": ("T1-weighted", "T2-weighted", "FLAIR", "diffusion-weighted", "T1 post-contrast", "proton density",
               "susceptibility-weighted"),
        "ct": ("non-contrast", "arterial phase", "portal venous phase", "bone window", "lung window"),
    },
    "intensity": {
        "mr": ("hyperintense", "hypointense", "isointense", "mixed signal"),
        "ct": ("hyperdense", "hypodense", "isodense", "mixed density"),
        "us": ("hyperechoic", "hypoechoic", "anechoic", "isoechoic"),
        # a colour photograph's lesions are said by their colour (medr2.vocab.appearance.COLOURS, the words a drawn
        # lesion's colour is read as; issue 40)
        "fundus photography": tuple(COLOURS),
    },
}

# clinical risk tier of missing or mislabelling a finding or diagnosis (medr2.tasks.spec.RISK_TIERS), by
# normalised label (:func:`norm`); an item whose gold answer names one of these is scored at the higher of this
# tier and its task's (medr2.scoring.harm). Rationale: docs/tasks.md, "Risk tiers". Labels not listed take
# their task's tier.
FINDING_RISK: dict[str, str] = {
    # time-critical: a miss can kill or maim within hours to days
    **dict.fromkeys(("pneumothorax", "haemorrhage", "hemorrhage", "intracranial haemorrhage", "infarct",
                     "stroke", "fracture", "pneumoperitoneum", "aortic dissection", "pulmonary embolism"), "high"),
    # malignancy and infection: a miss delays treatment that changes outcome
    **dict.fromkeys(("mass", "malignant", "malignancy", "cancer", "melanoma", "glioma", "metastasis", "lymphoma",
                     "carcinoma", "basal cell carcinoma", "pneumonia", "tuberculosis", "abscess", "polyp",
                     "lung opacity", "consolidation"), "high"),
    # follow-up findings: a miss matters, usually not within days
    **dict.fromkeys(("nodule", "effusion", "cardiomegaly", "edema", "oedema", "atelectasis", "emphysema",
                     "fibrosis", "infiltration", "hernia", "pleural thickening", "meningioma"), "medium"),
    # usually benign or incidental
    **dict.fromkeys(("cyst", "calcification", "haemangioma", "hemangioma", "nevus", "benign keratosis",
                     "dermatofibroma"), "low"),
}


def _normal_labels() -> frozenset[str]:
    normal = clinical.concept_of("normal", ["normal"])
    return frozenset(clinical.normalise(t) for t in (normal.terms if normal is not None else ("normal",)))


NORMAL_LABELS = _normal_labels()  # the spellings of "normal" of the built-in vocabulary (normalised)

SEVERITY_ORDER: tuple[str, ...] = ("none", "minimal", "mild", "moderate", "severe", "critical")
QUALITY = BUILTIN["quality"]
ARTEFACTS = BUILTIN["artefact"]
MALIGNANCY = BUILTIN["malignancy"]
COUNT_LABELS = ("0", "1", "2", "3", "4", "5", "6 or more")
SIZE_LABELS = ("under 5 mm", "5 to 10 mm", "10 to 20 mm", "20 to 30 mm", "30 to 50 mm", "over 50 mm")

# the option scales that have a natural order (each listed from least to most): an option set drawn from one
# of them is shown in that order, never shuffled (:func:`ordinal_scale`, read where options are laid out:
# medr2.tasks.assemble)
ORDINAL_SCALES: dict[str, tuple[str, ...]] = {
    "severity": SEVERITY_ORDER, "quality": QUALITY, "count": COUNT_LABELS, "size": SIZE_LABELS,
}


def ordinal_scale(options: list[str] | tuple[str, ...]) -> tuple[str, ...] | None:
    """The declared ordinal scale (:data:`ORDINAL_SCALES`) that holds every one of ``options`` (two or more),
    or None: such an option set declares itself ordinal."""
    if len(options) < 2:
        return None
    keys = [norm(o) for o in options]
    for scale in ORDINAL_SCALES.values():
        ranks = {norm(s) for s in scale}
        if all(k in ranks for k in keys):
            return scale
    return None


def in_scale_order(options: list[str], scale: tuple[str, ...]) -> list[str]:
    """``options`` sorted by their rank on ``scale``."""
    rank = {norm(s): i for i, s in enumerate(scale)}
    return sorted(options, key=lambda o: rank[norm(o)])


# options a variant keeps in the last place whatever it reorders ("None of the above", "All of the above")
FIXED_OPTION = re.compile(r"^\s*(none|all) of the above\s*$", re.IGNORECASE)


def fixed_last(options: list[str] | tuple[str, ...]) -> list[int]:
    """The layout of ``options`` (new position -> old index) that puts every "none/all of the above"
    (:data:`FIXED_OPTION`) last, the others in their order: "None of the above" refers to the options above it, so
    it is never first or between them (issue 40 kind 5: T7 put it in the replaced option's place, first of all). The
    identity where they already are last."""
    fixed = [i for i, o in enumerate(options) if FIXED_OPTION.match(str(o))]
    return [i for i in range(len(options)) if i not in fixed] + fixed


def ordinal_options(options: list[str] | tuple[str, ...]) -> tuple[list[str], tuple[str, ...]] | None:
    """The options of a set that stand on a declared ordinal scale (every option but a fixed "none/all of the
    above", :data:`FIXED_OPTION`) and that scale, or None where the set is no ordinal one."""
    ranked = [str(o) for o in options if not FIXED_OPTION.match(str(o))]
    scale = ordinal_scale(ranked)
    return None if scale is None else (ranked, scale)


def scale_order_kept(options: list[str] | tuple[str, ...]) -> bool:
    """Whether an option set keeps its ordinal scale's order: its options on the scale (:func:`ordinal_options`)
    stand in the scale's order or in its reverse (a radiologist reads "severe, moderate, mild" as a scale, not
    "moderate, severe, mild"). True for a set on no scale. The one rule every layout of options is checked by
    (clean items: :mod:`medr2.tasks.assemble`; variants: :func:`medr2.perturb.registry.derive_item`)."""
    found = ordinal_options(options)
    if found is None:
        return True
    ranked, scale = found
    ordered = in_scale_order(ranked, scale)
    return ranked in (ordered, ordered[::-1])


def norm(label: str) -> str:
    """Comparison key of a label: its concept in the clinical vocabulary, else its normalised text."""
    return clinical.key(str(label))


def same(a: str, b: str) -> bool:
    return norm(a) == norm(b)


def conflicts(a: str, b: str) -> bool:
    """Whether ``a`` may not be a wrong option beside the true ``b`` (:func:`medr2.vocab.conflicts`), nor one that
    contains it or is part of it with its side read apart (:func:`contains`: "left fusiform gyrus" beside "brain"),
    so the distractor pools draw around such a pair rather than the options check skipping the draft."""
    return clinical.conflicts(str(a), str(b)) or contains(a, b)


def contains(a: str, b: str) -> bool:
    """Whether one of ``a`` and ``b`` contains the other: a sub-type or a part of it (is-a or part-of in the clinical
    vocabulary, :func:`medr2.vocab.related`), read without a leading "the" ("the brain", "the white matter") and
    an anatomical label with its side aside ("left fusiform gyrus" is a part of the brain,
    :func:`medr2.vocab.anatomy_concept`); two labels naming opposite sides never contain each other."""
    side_a, words_a = _concept_words(a)
    side_b, words_b = _concept_words(b)
    if side_a is not None and side_b is not None and side_a != side_b:
        return False
    return clinical.related(words_a, words_b) in ("parent", "child")


def _concept_words(label: str) -> tuple[str | None, str]:
    """(side, words naming its concept) of an option: the label without "the" where the vocabulary knows it as
    written ("left lung"), else the anatomy concept it names with its side aside, else the label itself."""
    bare = _bare(label)
    if clinical.concept_of(bare) is not None:
        return None, bare
    c = clinical.anatomy_concept(bare)
    return (clinical.split_side(bare)[0], c.label) if c is not None else (None, bare)


def nested_options(options: list[str] | tuple[str, ...]) -> tuple[str, str] | None:
    """The first two of ``options`` that contain each other (:func:`contains`: is-a or part-of), or None: the options
    of one question are mutually exclusive (no "glioma" beside "glioblastoma", no "whole body" beside "chest")."""
    for i, a in enumerate(options):
        for b in options[i + 1:]:
            if contains(a, b):
                return str(a), str(b)
    return None


def _bare(text: str) -> str:
    t = str(text).strip()
    return t[4:] if t[:4].lower() == "the " else t


def location_words(label: str | None, side: str | None = None) -> str | None:
    """A location as a radiologist signs it, or None where the label is none (a tissue class):
    :func:`medr2.vocab.anatomical_location`. Every location a task shows, as answer or option, passes here."""
    return clinical.anatomical_location(label, side)


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
        if key in RADIOLOGY_ONLY_BUILTIN and modality_family(modality) != "radiology":
            return ()
    return BUILTIN.get(key, ())


# --------------------------------------------------------------------------- modality families
# which modalities share conventions: radiology (patient left/right defined on the display), microscopy
# (no patient side), photography (fundus, skin, endoscopy: no display convention for left/right)
_FAMILY_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("microscopy", ("microscop", "histo", "patholog", "cytolog", "slide", "stain")),
    ("photography", ("fundus", "photograph", "dermoscop", "endoscop", "colonoscop", "retinal", "oct")),
)
RADIOLOGY = frozenset(norm(m) for m in ("CT", "MRI", "X-ray", "ultrasound", "PET", "nuclear medicine", "SPECT",
                                         "mammography", "fluoroscopy", "angiography", "PET-CT"))
# modalities where "mirrored left-to-right" is defined: a display convention fixes the patient's sides
ORIENTATION_DEFINED = frozenset(norm(m) for m in ("CT", "MRI", "X-ray", "PET", "nuclear medicine", "SPECT",
                                                  "mammography", "fluoroscopy", "angiography", "PET-CT"))


def modality_family(modality: str | None) -> str:
    """``radiology``, ``microscopy``, ``photography`` or ``other`` for a modality name."""
    if not modality:
        return "other"
    key = norm(modality)
    if key in RADIOLOGY:
        return "radiology"
    if key == norm("microscopy"):
        return "microscopy"
    if key == norm("fundus"):
        return "photography"
    low = modality.lower()
    for family, words in _FAMILY_WORDS:
        if any(w in low for w in words):
            return family
    return "other"


def orientation_defined(modality: str | None) -> bool:
    """Whether a mirrored image can be told from the original: only where a display convention fixes the
    patient's left and right (radiographs, CT, MR, nuclear medicine); never in microscopy, histology crops
    or photographs (a mirrored left fundus is a right one), nor in ultrasound (probe orientation varies)."""
    return modality is not None and norm(modality) in ORIENTATION_DEFINED


# --------------------------------------------------------------------------- region vocabularies
# Built-in labels per (modality family, body region): the last fallback for distractors of anatomy-bound
# keys (organ, landmark, finding). Each list names things found in that region only, and none of them is
# a generic hypernym of another (a candidate whose words occur inside a true label is never offered).
BUILTIN_BY_REGION: dict[str, dict[tuple[str, str], tuple[str, ...]]] = {
    "organ": {
        ("radiology", "head"): ("cerebellum", "brainstem", "orbit", "pituitary gland", "maxillary sinus",
                                "corpus callosum", "thalamus"),
        ("radiology", "neck"): ("thyroid gland", "larynx", "trachea", "parotid gland", "carotid artery"),
        ("radiology", "chest"): ("heart", "aorta", "trachea", "oesophagus", "diaphragm", "sternum"),
        ("radiology", "abdomen"): ("liver", "spleen", "pancreas", "kidney", "stomach", "gallbladder"),
        ("radiology", "pelvis"): ("urinary bladder", "rectum", "uterus", "prostate", "sacrum"),
        ("radiology", "spine"): ("spinal cord", "vertebral body", "intervertebral disc", "spinous process"),
        ("radiology", "shoulder"): ("humeral head", "glenoid", "acromion", "clavicle", "deltoid muscle"),
        ("photography", "eye"): ("retina", "macula", "optic disc", "choroid"),
    },
    "landmark": {
        ("radiology", "head"): ("pituitary fossa", "foramen magnum", "frontal sinus", "internal acoustic meatus"),
        ("radiology", "chest"): ("carina", "aortic knob", "costophrenic angle", "cardiophrenic angle"),
        ("radiology", "abdomen"): ("porta hepatis", "renal hilum", "coeliac trunk", "umbilicus"),
        ("radiology", "pelvis"): ("femoral head", "pubic symphysis", "ischial spine", "sacral promontory"),
        ("photography", "eye"): ("optic disc", "macula", "superior temporal arcade", "inferior temporal arcade"),
    },
    "finding": {
        ("radiology", "head"): ("haemorrhage", "infarct", "calcification", "oedema", "hydrocephalus"),
        ("radiology", "chest"): ("consolidation", "pleural effusion", "pneumothorax", "cardiomegaly", "atelectasis"),
        ("radiology", "abdomen"): ("free fluid", "calcification", "lymphadenopathy", "dilated bowel", "hernia"),
        ("radiology", "breast"): ("architectural distortion", "focal asymmetry", "skin thickening",
                                  "nipple retraction", "axillary lymphadenopathy"),  # BI-RADS mammography lexicon
        ("photography", "eye"): ("drusen", "hard exudates", "microaneurysms", "cotton-wool spots",
                                 "flame haemorrhage"),
    },
    "diagnosis": {
        ("radiology", "head"): ("subdural haematoma", "multiple sclerosis", "pituitary adenoma", "arachnoid cyst",
                                "vestibular schwannoma"),
        ("radiology", "chest"): ("pneumothorax", "sarcoidosis", "pulmonary oedema", "lung abscess",
                                 "pleural effusion"),
        ("radiology", "abdomen"): ("renal cyst", "hepatic abscess", "acute pancreatitis", "cholecystitis",
                                   "splenic infarct"),
        ("photography", "eye"): ("glaucoma", "age-related macular degeneration", "retinal detachment",
                                 "papilloedema"),
    },
}
def region_related(a: str, b: str) -> bool:
    """Whether one body region contains the other, or they are the same ("lower limb" and "lower leg", "chest"
    and "lung"): part-of in the clinical vocabulary (:func:`medr2.vocab.related`)."""
    return same(a, b) or clinical.related(str(a), str(b)) in ("parent", "child")


RADIOLOGY_ONLY_BUILTIN = frozenset({"body_region"})  # the generic region list means nothing for a slide or photo


def builtin_for_region(key: str, modality: str | None, region: str | None) -> tuple[str, ...]:
    """The built-in labels of ``key`` for the modality family and body region of a case (may be empty)."""
    if not region:
        return ()
    table = BUILTIN_BY_REGION.get(key, {})
    fam, reg = modality_family(modality), norm(region)
    for (f, r), labels in table.items():
        if f == fam and norm(r) == reg:
            return labels
    return ()


# --------------------------------------------------------------------------- foreign vocabularies
# what public sets write for a modality or body region -> medr2's own word (BUILTIN); importers store the
# mapped word in the Case field and the set's own word in ``meta["modality_raw"]`` / ``meta["body_region_raw"]``
_MODALITY_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("CT", re.compile(r"^(ct|cta|cat|computed tomography|ct ?\(computed tomography\).*|ct scan.*)$")),
    ("MRI", re.compile(r"^(mr|mri|magnetic resonance.*|mr ?\(magnetic resonance.*\).*|mri? .*weighted.*)$")),
    ("X-ray", re.compile(r"^(x ?ray|xray|x-ray.*|radiograph.*|cr|dx|plain film|chest x ?ray|cxr)$")),
    ("ultrasound", re.compile(r"^(us|ultrasound.*|sonograph.*|ultrasonograph.*|echograph.*)$")),
    ("PET", re.compile(r"^(pet|pet ?\(positron.*|positron emission.*|pet[ -]ct)$")),
    ("fundus photography", re.compile(r"^(fundus.*|retinal photograph.*|colou?r fundus.*|cfp)$")),
    ("microscopy", re.compile(r"^(microscopy.*|histo(logy|pathology).*|pathology.*|whole slide.*)$")),
    ("nuclear medicine", re.compile(r"^(nm|nuclear medicine|scintigraph.*|bone scan|spect)$")),
    ("dermoscopy", re.compile(r"^(dermoscop.*|dermatoscop.*)$")),
    ("endoscopy", re.compile(r"^(endoscop.*|colonoscop.*)$")),
    ("OCT", re.compile(r"^(oct|optical coherence tomography.*|oct ?\(optical.*)$")),
)
_REGION_WORDS: dict[str, str] = {
    "head": "head", "brain": "head", "brain tissue": "head", "brain face": "head", "face": "head", "skull": "head",
    "head and neck": "head", "neck": "neck", "chest": "chest", "lung": "chest", "lungs": "chest",
    "thorax": "chest", "chest lung": "chest", "chest heart": "chest", "chest mediastinal": "chest",
    "heart": "chest", "abdomen": "abdomen", "abd": "abdomen", "abdominal": "abdomen", "pelvis": "pelvis",
    "pelvic cavity": "pelvis", "pelvic": "pelvis", "spine": "spine", "breast": "breast",
    "upper limb": "upper limb", "lower limb": "lower limb", "hand": "upper limb", "knee": "lower limb",
}


def _vocab_key(raw: str) -> str:
    return re.sub(r"[\s_\-]+", " ", raw.strip().lower()).replace("x ray", "xray")


def canonical_modality(raw: str | None) -> str | None:
    """medr2's modality word for a foreign one (``CT(Computed Tomography)`` -> ``CT``, ``X-Ray`` ->
    ``X-ray``, ``MR`` -> ``MRI``); None when it is not recognised (the caller keeps the raw word)."""
    if not raw or not raw.strip():
        return None
    key = _vocab_key(raw)
    for word in BUILTIN["modality"]:
        if _vocab_key(word) == key:
            return word
    key = key.replace("xray", "x-ray") if key.startswith("xray ") else key
    for word, pat in _MODALITY_WORDS:
        if pat.match(key) or pat.match(key.replace("x-ray", "xray")):
            return word
    return None


def canonical_region(raw: str | None) -> str | None:
    """medr2's body-region word (BUILTIN ``body_region``) for a foreign one (``brain_tissue`` -> ``head``,
    ``chest_lung`` -> ``chest``, ``Pelvic Cavity`` -> ``pelvis``); None when not recognised."""
    if not raw or not raw.strip():
        return None
    return _REGION_WORDS.get(_vocab_key(raw).replace("xray", "x ray"))
