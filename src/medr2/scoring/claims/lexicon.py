"""The claim checker's lexicon: the terms it recognises (modality, plane/view, sequence, region, organ, finding,
diagnosis; the bench's vocabularies and the case's own labels), the mentions of them a text makes, and how a
claimed value relates to a label (:mod:`medr2.scoring.claims`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from medr2 import vocab as clinical
from medr2.scoring.claims.truth import Truth
from medr2.tasks import vocab
from medr2.vocab.context import GENERIC as _VOCAB_SKIP, no_break as _no_break

_CS = 0  # case-sensitive pattern flag marker
_SPELL = ((r"haem", "hem"), (r"oedema", "edema"), (r"tumour", "tumor"), (r"oesophag", "esophag"),
          (r"colour", "color"), (r"haemat", "hemat"))


def _fold(label: str) -> str:
    """Spelling-folded, normalised key (British/American spelling, plural ``s``)."""
    key = clinical.normalise(label)
    for a, b in _SPELL:
        key = key.replace(a, b)
    return re.sub(r"(?<=[a-z]{3})(es|s)\b", "", key) if not key.endswith(("sis", "us", "ss")) else key


def _concept(label: str, kinds: tuple[str, ...] | None = None) -> clinical.Concept | None:
    """The vocabulary concept a mention or label names (a plural folded to its singular); of ``kinds`` first
    where given ("H&E" of a sequence is the stain, not the histopathology modality)."""
    c = clinical.concept_of(label, kinds) if kinds else None
    if c is None:
        c = clinical.concept_of(label)
    if c is None:
        key = clinical.normalise(label)
        for cut in ("s", "es"):
            if c is None and key.endswith(cut) and len(key) > len(cut) + 3:
                c = clinical.concept_of(key[:-len(cut)])
    return c


def relation(value: str, truth: str, kinds: tuple[str, ...] | None = None) -> clinical.Relation:
    """How a claimed ``value`` relates to a ``truth`` label in the clinical vocabulary (``same``, ``child``: a
    sub-type or part of the truth, ``parent``, ``sibling``, ``unrelated``); ``kinds``: the concept kinds both are
    read as first (a sequence's "H&E")."""
    a, b = _concept(value, kinds), _concept(truth, kinds)
    if a is None or b is None:
        return "same" if _fold(value) == _fold(truth) else "unrelated"
    return clinical.related(a.label, b.label)


def _words(label: str) -> set[str]:
    return set(_fold(label).split())


# term -> canonical label, per kind. English patterns are case-insensitive unless listed in _ACRONYMS.
_MODALITY_TERMS: dict[str, tuple[str, ...]] = {
    "CT": (r"\bCT\b", r"computed tomograph\w*", r"\bCAT scan"),
    "MRI": (r"\bMRI?\b", r"magnetic resonance", r"磁共振", r"核磁"),
    "X-ray": (r"x[- ]?rays?\b", r"radiograph\w*", r"plain film", r"\bCXR\b", r"X线", r"X光", r"胸片"),
    "ultrasound": (r"ultrasound", r"sonograph\w*", r"sonogram", r"\bUS\b", r"超声", r"B超"),
    "PET": (r"\bPET\b", r"positron emission"),
    "fundus photography": (r"fundus (?:photo\w*|image|picture)", r"retinal photograph\w*", r"眼底照"),
    "microscopy": (r"microscop\w*", r"histolog\w*", r"histopatholog\w*", r"\bH&E\b", r"病理切片", r"显微"),
    "nuclear medicine": (r"scintigra\w*", r"bone scan", r"nuclear medicine", r"\bSPECT\b"),
    "mammography": (r"mammogra\w*", r"钼靶"),
}
_ACRONYMS = frozenset({r"\bCT\b", r"\bMRI?\b", r"\bCXR\b", r"\bUS\b", r"\bPET\b", r"\bH&E\b", r"\bSPECT\b",
                       r"\bPA\b", r"\bAP\b", r"\bCC\b", r"\bMLO\b", r"\bFLAIR\b", r"\bDWI\b"})
# modalities one image can be at once: angiography is a technique of CT, MR and X-ray (CTA, MRA, catheter
# angiography), so "a CT pulmonary angiogram", "MR angiography of the circle of Willis" say no other modality
_MODALITY_COMPATIBLE = {frozenset({"mammography", "X-ray"}), frozenset({"PET", "CT"}),
                        frozenset({"PET", "nuclear medicine"}), frozenset({"angiography", "CT"}),
                        frozenset({"angiography", "MRI"}), frozenset({"angiography", "X-ray"})}
# a view word named as a field's value: "the projection is lateral", "View: frontal", "| View | lateral |"
_VIEW_FIELD = r"\b(?:view|projection)\**\s*(?:is|was|[:：|])\s*\**\s*(?:an? )?(?P<m>{})\b"
_PLANE_TERMS: dict[str, tuple[str, ...]] = {
    "axial": (r"(?<![-\w])axial\b(?! skeleton| load)", r"transverse (?:plane|section|slice|view|image|scan)",
              r"transaxial", r"轴位", r"横断"),
    "coronal": (r"\bcoronal\b", r"冠状位"),
    "sagittal": (r"\bsagittal\b", r"矢状位"),
    "PA": (r"\bPA\b(?! diameter)", r"postero-?anterior"),
    "AP": (r"\bAP\b(?! diameter| dimension)", r"antero-?posterior (?:view|projection|radiograph|film|chest)"),
    "lateral": (r"\blateral (?:view|projection|radiograph|film)", _VIEW_FIELD.format("lateral"),
                r"\blateral(?= (?:chest|decubitus) (?:view|projection|radiograph|film|x-?ray))", r"侧位"),
    "frontal": (r"\bfrontal(?= (?:view|projection|radiograph|film|image|chest|and lateral)\b)",
                _VIEW_FIELD.format("frontal"), r"正位"),
    "CC": (r"\bCC\b", r"cranio-?caudal"),
    "MLO": (r"\bMLO\b", r"medio-?lateral oblique"),
}
_SEQUENCE_TERMS: dict[str, tuple[str, ...]] = {
    "T1 post-contrast": (r"(?:post[- ]?contrast|contrast[- ]enhanced|gadolinium[- ]enhanced) T1\w*",
                         r"\bT1\w*[- ](?:post[- ]?contrast|with contrast|\+ ?C\b|post[- ]?gad\w*)"),
    "T1-weighted": (r"\bT1[- ]?(?:weighted|W\b|WI\b)", r"T1加权"),
    "T2-weighted": (r"\bT2[- ]?(?:weighted|W\b|WI\b)", r"T2加权"),
    "FLAIR": (r"\bFLAIR\b",),
    "diffusion-weighted": (r"diffusion[- ]weighted", r"\bDWI\b"),
    "non-contrast": (r"non-?contrast", r"unenhanced", r"平扫"),
    "arterial phase": (r"arterial phase",),
    "portal venous phase": (r"portal venous phase",),
}
_SEQUENCE_FAMILY = {"T1 post-contrast": "t1", "T1-weighted": "t1", "T2-weighted": "t2", "FLAIR": "t2"}
_IMAGING = r"(?:CT|MRI?|x[- ]?ray|radiograph|film|scan|image|ultrasound|sonogram|imaging|study|view|slice)"
_REGION_WORDS: dict[str, tuple[str, ...]] = {
    "head": (r"head", r"brain", r"cranial", r"skull", r"头颅", r"颅脑", r"头部"),
    "neck": (r"neck", r"颈部"),
    "chest": (r"chest", r"thorax", r"thoracic(?! spine)", r"lungs?", r"胸部"),
    "abdomen": (r"abdomen", r"abdominal", r"腹部"),
    "pelvis": (r"pelvis", r"pelvic", r"盆腔"),
    "spine": (r"(?:cervical |thoracic |lumbar )?spine", r"spinal", r"脊柱"),
    "breast": (r"breast", r"乳腺"),
    "upper limb": (r"hand", r"wrist", r"elbow", r"shoulder", r"forearm"),
    "lower limb": (r"knee", r"ankle", r"foot", r"hip", r"leg"),
    "eye": (r"eye", r"retina", r"fundus", r"眼底"),
}
_ORGAN_REGION: dict[str, str] = {
    "brain": "head", "cerebellum": "head", "brainstem": "head", "thalamus": "head", "corpus callosum": "head",
    "lateral ventricle": "head", "orbit": "head", "heart": "trunk", "lung": "trunk", "aorta": "trunk",
    "trachea": "trunk", "liver": "trunk", "spleen": "trunk", "pancreas": "trunk", "kidney": "trunk",
    "stomach": "trunk", "gallbladder": "trunk", "bladder": "trunk", "uterus": "trunk", "prostate": "trunk",
    "thyroid": "neck", "optic disc": "eye", "macula": "eye", "retina": "eye",
}
_ORGAN_ZH = {"大脑": "brain", "小脑": "cerebellum", "心脏": "heart", "肺": "lung", "肝": "liver", "脾": "spleen",
             "胰腺": "pancreas", "肾": "kidney", "胃": "stomach", "胆囊": "gallbladder", "膀胱": "bladder",
             "甲状腺": "thyroid", "视盘": "optic disc", "黄斑": "macula", "视网膜": "retina"}
_REGION_ZONE = {"head": "head", "eye": "eye", "neck": "neck", "chest": "trunk", "abdomen": "trunk",
                "pelvis": "trunk", "breast": "trunk", "spine": "spine", "upper limb": "limb", "lower limb": "limb"}
# findings and diagnoses: canonical label -> extra surface forms (the label itself is always a form)
_FINDING_TERMS: dict[str, tuple[str, ...]] = {
    "nodule": (r"nodul\w*", r"结节"), "mass": (r"mass(?:es)?\b(?! effect)", r"肿块", r"占位"),
    "cyst": (r"cysts?\b", r"囊肿"), "calcification": (r"calcification\w*", r"calcified", r"钙化"),
    "haemorrhage": (r"ha?emorrhag\w*", r"\bbleed(?:ing)?\b", r"出血"), "fracture": (r"fractur\w*", r"骨折"),
    "pleural effusion": (r"pleural effusions?", r"胸腔积液", r"胸水"), "effusion": (r"effusions?", r"积液"),
    "infarct": (r"infarct\w*", r"梗死", r"梗塞"), "consolidation": (r"consolidat\w*", r"实变"),
    "pneumothorax": (r"pneumothora\w*", r"气胸"),
    "cardiomegaly": (r"cardiomegaly", r"enlarged heart", r"heart (?:is )?enlarged", r"心脏增大", r"心影增大"),
    "atelectasis": (r"atelecta\w*", r"肺不张"), "oedema": (r"o?edema\w*", r"水肿"),
    "hydrocephalus": (r"hydrocephal\w*", r"脑积水"), "free fluid": (r"free fluid", r"ascites", r"腹水"),
    "lymphadenopathy": (r"lymphadenopathy", r"enlarged lymph nodes?", r"淋巴结肿大"), "hernia": (r"hernia\w*",),
    "drusen": (r"drusen",), "hard exudates": (r"exudates?",), "microaneurysms": (r"microaneurysms?", r"微血管瘤"),
    "cotton-wool spots": (r"cotton[- ]wool spots?", r"棉絮斑"), "architectural distortion": (
        r"architectural distortion",), "focal asymmetry": (r"focal asymmetry",),
    "skin thickening": (r"skin thickening",), "nipple retraction": (r"nipple retraction",),
    "dilated bowel": (r"dilated bowel", r"bowel dilat\w*"),
}
_GENERIC_TERMS: dict[str, tuple[str, ...]] = {
    "lesion": (r"lesions?\b", r"tumou?rs?\b", r"abnormalit(?:y|ies)", r"pathology", r"病灶", r"病变", r"肿瘤"),
}
_DIAGNOSIS_TERMS: dict[str, tuple[str, ...]] = {
    "pneumonia": (r"pneumonia", r"肺炎"), "glioma": (r"gliom\w*", r"glioblastoma", r"胶质瘤"),
    "meningioma": (r"meningiom\w*", r"脑膜瘤"), "metastasis": (r"metasta\w*", r"转移"),
    "abscess": (r"abscess\w*", r"脓肿"), "haemangioma": (r"ha?emangiom\w*", r"血管瘤"),
    "lymphoma": (r"lymphom\w*", r"淋巴瘤"), "tuberculosis": (r"tuberculo\w*", r"\bTB\b", r"结核"),
    "pituitary adenoma": (r"pituitary (?:macro|micro)?adenoma", r"垂体瘤"), "subdural haematoma": (
        r"subdural ha?ematoma", r"硬膜下血肿"), "multiple sclerosis": (r"multiple sclerosis", r"多发性硬化"),
    "arachnoid cyst": (r"arachnoid cyst",), "vestibular schwannoma": (r"schwannoma", r"acoustic neuroma"),
    "sarcoidosis": (r"sarcoid\w*",), "pulmonary oedema": (r"pulmonary o?edema", r"肺水肿"),
    "glaucoma": (r"glaucom\w*", r"青光眼"), "age-related macular degeneration": (
        r"macular degeneration", r"\bAMD\b", r"黄斑变性"), "retinal detachment": (r"retinal detachment",),
    "diabetic retinopathy": (r"diabetic retinopathy", r"糖尿病视网膜病变", r"糖网"),
    "papilloedema": (r"papill?o?edema",), "pancreatitis": (r"pancreatitis", r"胰腺炎"),
    "cholecystitis": (r"cholecystitis", r"胆囊炎"), "covid-19": (r"covid[- ]?19", r"新冠"),
    "hepatic abscess": (r"(?:liver|hepatic) abscess",),
    "heart failure": (r"(?:congestive )?heart failure", r"心力衰竭", r"心衰"),
    "renal cyst": (r"renal cyst", r"kidney cyst"),
}
# "normal in size", "normal for age": a measure of the part is normal, not the part
_OF_A_MEASURE = (r"(?!\s+in\s+(?:size|calibre|caliber|volume|thickness|contour|position|course|diameter)\b)"
                 r"(?!\s+for\s+(?:age|the patient)\b)")
_NORMAL_STUDY = (
    r"\b(?:the |this )?(?:study|image|scan|radiograph|film|exam(?:ination)?|brain|chest|lungs|fundus|retina|"
    r"x-ray|ct|mri)\b(?: (?:itself|overall))? (?:is|are|appears?|looks?|seems?) (?:entirely |completely |grossly )?"
    r"(?:normal|unremarkable)\b" + _OF_A_MEASURE,
    r"\bnormal (?:[a-z]+[ -]){0,2}?(?:study|examination|exam|x-?ray|radiograph|scan|fundus|oct|ct|mri|mammogram|"
    r"ultrasound|film)\b",
    r"\bno (?:significant |acute |obvious |focal |definite |visible |radiographic )*(?:abnormalit(?:y|ies)|"
    r"findings?|pathology)\b",
    r"\b(?:impression|diagnosis|conclusion|assessment)\**\s*[:：]\s*\**\s*(?P<m>normal|unremarkable)\b(?! \w)",
    r"未见(?:明显)?异常", r"无异常", r"(?:图像|影像|胸片|平片)正常",
    r"(?:^|(?<=[，。；：:,\s])|(?<=考虑)|(?<=为)|(?<=示)|(?<=基本)|(?<=大致))正常",
)
_LATERALITY = {"left": (r"\bleft\b", r"左"), "right": (r"\bright\b(?! answer| choice| option)", r"右"),
               "bilateral": (r"\bbilateral\w*", r"\bboth (?:sides|lungs|kidneys)", r"双侧", r"两侧")}
_COUNT_WORDS = {"one": 1, "a single": 1, "single": 1, "solitary": 1, "two": 2, "three": 3, "four": 4, "five": 5,
                "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "一个": 1, "单发": 1, "两个": 2, "三个": 3}
_MULTIPLE = (r"multiple", r"several", r"numerous", r"多发", r"多个")
# a size with its unit, in any spelling the checker reads (an approximator before it, "约", "about", "~", is no
# part of it): value, optional second value ("12 x 8 mm"), unit
# a number spelled out ("three centimetres", "九厘米") is the number
_NUMBER_WORDS = {w: i + 1 for i, w in enumerate(("one", "two", "three", "four", "five", "six", "seven", "eight",
                                                 "nine", "ten", "eleven", "twelve"))}
_NUMBER_WORDS.update({w: i + 1 for i, w in enumerate("一二三四五六七八九十")} | {"两": 2})
_NUMBER = r"\d+(?:\.\d+)?|(?<![A-Za-z])(?:" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + ")"
_SIZE = re.compile(r"(?<![\d.])(" + _NUMBER + r")(?:\s*[x×]\s*(" + _NUMBER + r"))?\s*"
                   r"(mm|cm|millimet(?:er|re)s?|centimet(?:er|re)s?|毫米|厘米|公分)(?![A-Za-z])", re.IGNORECASE)
_CM = ("cm", "centimet", "厘米", "公分")
SEVERITY = "severity"  # the vocabulary's attribute whose values are the grades (concepts.txt)

# a number that is a cut-off, not a measurement ("under 3 cm, so a nodule")
_THRESHOLD = re.compile(r"(?:\b(?:under|over|below|above|less than|more than|greater than|smaller than|larger than|"
                        r"at least|at most|up to|exceeds?|exceeding|threshold of|cut-?off of)|[<>≤≥]|小于|大于|超过|"
                        r"不足|以上|以下)\s*$", re.IGNORECASE)
# a grade compared, not stated: "more than mild", "at least moderate", "milder than severe" (a cut-off)
_COMPARED = re.compile(_THRESHOLD.pattern + r"|\bthan\s*$", re.IGNORECASE)
# a statement the rationale takes back in the same sentence ("Coronal... actually this is an axial slice")
_RETRACTED = re.compile(r"^[^.!?。！？\n]{0,60}?(?:\.{3}|…|,|—|-)\s*"
                        r"(?:actually|no wait|wait|correction|I mean|sorry)\b", re.IGNORECASE)

_VISUAL = re.compile(
    r"\bshow\w*\b|\bvisible\b|\bvisuali[sz]\w*\b|\bseen\b|\bdemonstrat\w*\b|\bdepict\w*\b|\bappear\w*\b|"
    r"\bnot(?:ed|e)\b|\bidentif\w*\b|\bpresent\b|\bthere (?:is|are)\b|\bimage\b|\bview\b|\bin (?:the|this)\b|"
    r"可见|显示|见", re.IGNORECASE)


_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


@dataclass
class _Term:
    kind: str
    value: str
    pattern: re.Pattern[str]


def _compile(pattern: str) -> re.Pattern[str]:
    """A term pattern; ``\\b`` at its ends means an ASCII word edge (so "CT" matches in "该图像为CT")."""
    flags = 0 if pattern in _ACRONYMS else re.IGNORECASE
    if pattern.startswith(r"\b"):
        pattern = r"(?<![A-Za-z0-9])" + pattern[2:]
    if pattern.endswith(r"\b"):
        pattern = pattern[:-2] + r"(?![A-Za-z0-9])"
    return _compiled(pattern, flags)


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str, flags: int) -> re.Pattern[str]:
    return re.compile(pattern, flags)


def _label_pattern(label: str) -> str:
    words = [re.escape(w) for w in re.split(r"[\s_\-]+", label.strip()) if w]
    body = r"[\s-]+".join(words)
    body = body.replace("haem", "ha?em").replace("oedema", "o?edema").replace("tumour", "tumou?r")
    return rf"\b{body}(?:e?s)?\b"


@dataclass
class _Lexicon:
    terms: list[_Term] = field(default_factory=list)

    def add(self, kind: str, value: str, patterns: Iterable[str]) -> None:
        for p in patterns:
            self.terms.append(_Term(kind, value, _compile(p)))


_STATIC = _Lexicon()
for _v, _ps in _MODALITY_TERMS.items():
    _STATIC.add("modality", _v, _ps)
for _v, _ps in _PLANE_TERMS.items():
    _STATIC.add("plane", _v, _ps)
for _v, _ps in _SEQUENCE_TERMS.items():
    _STATIC.add("sequence", _v, _ps)
for _v, _ps in _DIAGNOSIS_TERMS.items():
    _STATIC.add("diagnosis", _v, (*_ps, _label_pattern(_v)))
for _v, _ps in _FINDING_TERMS.items():
    _STATIC.add("finding", _v, (*_ps, _label_pattern(_v)))
for _v, _ps in _GENERIC_TERMS.items():
    _STATIC.add("generic", _v, _ps)
for _o in _ORGAN_REGION:
    _STATIC.add("organ", _o, (_label_pattern(_o),))
for _zh, _o in _ORGAN_ZH.items():
    _STATIC.add("organ", _o, (re.escape(_zh) + r"(?!炎|癌|水肿|积液|增大|转移|脓肿)",))
for _r, _ws in _REGION_WORDS.items():
    _alts = "|".join(w for w in _ws if w.isascii())
    _zh_alts = [w for w in _ws if not w.isascii()]
    _STATIC.add("body_region", _r, (rf"\b(?:{_alts})(?=\s+{_IMAGING}\b)",
                                    rf"\b{_IMAGING}\s+of\s+the\s+(?:(?:left|right|bilateral)\s+)?(?P<m>{_alts})\b",
                                    # "the radiograph shows the ankle": the region the image is said to show
                                    rf"\b{_IMAGING}\s+(?:shows|showing|depicts|depicting|demonstrates)\s+(?:the\s+|an?\s+)?"
                                    rf"(?:(?:left|right|bilateral)\s+)?(?P<m>{_alts})\b",
                                    # a field naming the imaged region ("- Region: ankle", "**Body part:** hip")
                                    rf"\b(?:body\s+)?(?:region|body\s+part|anatomy)\**\s*[:：|]\s*\**\s*(?:the\s+)?"
                                    rf"(?:(?:left|right|bilateral)\s+)?(?P<m>{_alts})\b",
                                    *_zh_alts))
_STATIC.add("normal", "normal", _NORMAL_STUDY)
# the clinical vocabulary's spellings (medr2.vocab) of findings, diagnoses and modalities the hand lexicon lacks:
# built per vocabulary generation, so a synonym added in a user file or a plugin is a claim term at once
_VOCAB_KINDS = {"finding": "finding", "diagnosis": "diagnosis", "modality": "modality", "plane": "plane",
                "sequence": "sequence"}


def _vocab_term_ok(term: str, kind: str) -> bool:
    """A spelling safe to look for in free text: no short acronym (``ED``, ``MS``, ``US``: ordinary words
    too), no bare plane word outside a view phrase."""
    bare = term.strip()
    if len(bare) <= 3 and (bare.isupper() or not bare.isalpha()) and bare.isascii():
        return False
    return kind != "plane" or not bare.isascii() or bool(re.search(r"\b(?:view|projection|plane)\b", bare, re.I))


# the field names under which a short acronym of the vocabulary (too short to look for in free text: "OCT", "MG",
# "DWI") is its kind's value: "- Modality: OCT", "| Sequence | ADC |", "View: LL"
_FIELD_NAMES = {"modality": r"(?:imaging\s+)?modality|technique|imaging", "plane": r"view|projection|plane",
                "sequence": r"sequence|weighting|window|phase"}
_ACRONYM_FIELD = r"(?i:\b(?:{keys})\b)\**\s*(?:is|was|[:：|=])\s*\**\s*(?P<m>{term})(?![A-Za-z0-9])"


@functools.lru_cache(maxsize=4)
def _vocab_terms(generation: tuple[object, ...]) -> tuple[_Term, ...]:
    lex = _Lexicon()
    for c in clinical.vocabulary():
        kind = _VOCAB_KINDS.get(c.kind)
        if kind is None or c.id in _VOCAB_SKIP:
            continue
        for t in c.terms:
            if _vocab_term_ok(t, kind):
                lex.add(kind, c.label, (_label_pattern(t) if t.isascii() else re.escape(t),))
    return tuple(lex.terms)


_FIELD_HINT = re.compile("|".join(_FIELD_NAMES.values()), re.IGNORECASE)


@functools.lru_cache(maxsize=4)
def _acronym_field_terms(generation: tuple[object, ...]) -> tuple[_Term, ...]:
    """Per vocabulary generation: each acronym :func:`_vocab_term_ok` refuses in free text, as its kind's field
    value (case-sensitive: "US" is no "us")."""
    out = []
    for c in clinical.vocabulary():
        kind = _VOCAB_KINDS.get(c.kind)
        if kind in _FIELD_NAMES and c.id not in _VOCAB_SKIP:
            for t in c.terms:
                if not _vocab_term_ok(t, kind) and t.isascii() and t.strip().isalnum():
                    pattern = _ACRONYM_FIELD.format(keys=_FIELD_NAMES[kind], term=re.escape(t.strip()))
                    out.append(_Term(kind, c.label, _compiled(pattern, 0)))
    return tuple(out)


_KIND_ORDER = {"normal": 0, "region_normal": 0, "organ_state": 0, "sequence": 1, "body_region": 2, "finding": 3,
               "diagnosis": 4, "generic": 5, "modality": 6, "plane": 7, "organ": 8}


def _case_terms(truth: Truth) -> tuple[_Term, ...]:
    """The case's own labels (and mimics) as finding/diagnosis terms, so labels outside the built-ins match; the
    labels its source states absent (``Case.absent``) too: a truth that names a finding absent names a term the
    reader looks for ("intraparenchymal haemorrhage" of an RSNA ICH case is one mention, not a "haemorrhage")."""
    return _case_terms_of(tuple(str(f["label"]) for f in truth.findings), truth.diagnosis, truth.mimics,
                          truth.structures, truth.absent)


@functools.lru_cache(maxsize=1 << 12)  # a case's rationales (one per item and mode) share its terms
def _case_terms_of(labels: tuple[str, ...], diagnosis: str | None, mimics: tuple[str, ...],
                   structures: tuple[str, ...], absent: tuple[str, ...] = ()) -> tuple[_Term, ...]:
    out = []
    for label in labels:
        out.append(_Term("finding", label, _compile(_label_pattern(label))))
    for label in absent:
        if label.strip() and not any(_matches(label, x) for x in labels):
            out.append(_Term("finding", label, _compile(_label_pattern(label))))
    for d in (diagnosis, *mimics):
        if d and not vocab.is_normal(d) and not any(_matches(d, label) for label in labels):
            out.append(_Term("diagnosis", d, _compile(_label_pattern(d))))
    for s in structures:
        out.append(_Term("organ", s, _compile(_label_pattern(s))))
    return tuple(out)


def _term_matches(text: str, terms: Iterable[_Term]) -> list[tuple[int, int, _Term]]:
    """Every match of each term in ``text`` (terms in order, each term's matches left to right)."""
    found: list[tuple[int, int, _Term]] = []
    for term in terms:
        group = "m" if "m" in term.pattern.groupindex else 0
        for m in term.pattern.finditer(text):
            if term.kind in ("finding", "generic") and re.match(r"\s+effect", text[m.end(group):]):
                continue  # "mass effect" is no mass
            if m.end(group) > m.start(group):
                found.append((m.start(group), m.end(group), term))
    return found


# rationales repeat (a model's stock phrases, a baseline's few texts): the built-in terms' matches of a text,
# a pure function of the text, are memoised (the case's own terms are matched every time)
_STATIC_MEMO = 1 << 12


@functools.lru_cache(maxsize=_STATIC_MEMO)
def _static_matches(text: str) -> tuple[tuple[int, int, _Term], ...]:
    return tuple(_term_matches(text, _STATIC.terms))


@functools.lru_cache(maxsize=_STATIC_MEMO)
def _vocab_matches(text: str, generation: tuple[object, ...]) -> tuple[tuple[int, int, _Term], ...]:
    found = _term_matches(text, _vocab_terms(generation))
    if _FIELD_HINT.search(text):  # an acronym is read only as a field's value
        found.extend(_term_matches(text, _acronym_field_terms(generation)))
    return tuple(found)


# "REGION is normal/clear/unremarkable" (a region or organ of the vocabulary, its side, a qualifier such as
# "parenchyma"): "the lungs are clear", "clear lungs", "Lungs: clear", "the brain parenchyma is unremarkable",
# "双肺清晰", "右肺野清晰", "脑实质未见异常". "Otherwise clear" (apart from what was said) and "normal in size" are not.
_NORMAL_WORDS = r"(?:normal|clear|unremarkable|intact|within normal limits)(?![\w-])" + _OF_A_MEASURE
_REGION_NORMAL_FORMS = (
    r"(?<![A-Za-z])(?:(?:the|both|bilateral)\s+)?(?:(?P<side>left|right)\s+)?(?P<r>{en})"
    r"(?:\s+(?:parenchyma|fields?|zones?|tissue|itself|bases?|apices|structures?))?"
    r"\s+(?:is|are|appears?|looks?|seems?|remains?)\s+(?:entirely\s+|completely\s+|grossly\s+|essentially\s+)?"
    + _NORMAL_WORDS,
    r"(?<![A-Za-z])(?:clear|(?:(?:an?|the)\s+|(?<=[:：|.]\s)|(?<=[:：|.])|(?m:^))(?:normal|unremarkable))\s+"
    r"(?:(?P<side>left|right)\s+)?(?P<r>{en})"
    r"(?=\s*(?:[,.;)|\n]|with\b|and\b|$))",
    r"(?<![A-Za-z])(?:(?:the|both|bilateral)\s+)?(?:(?P<side>left|right)\s+)?(?P<r>{en})\s+(?:clear|unremarkable|normal)"
    r"(?=\s*(?:[,.;)\n]|$))",
    r"(?<![A-Za-z])(?P<r>{en})\**\s*[:：|]\s*\**\s*" + _NORMAL_WORDS,
    r"(?:(?P<side>[双两左右])侧?)?(?P<r>{zh})(?:实质|野|部)?(?:清晰|清楚|未见(?:明显)?异常|正常)",
)
_SIDE_WORDS = {"left": "left", "right": "right", "左": "left", "右": "right"}


@functools.lru_cache(maxsize=4)
def _region_normal_terms(generation: tuple[object, ...]) -> tuple[_Term, ...]:
    """Per vocabulary generation: the "REGION is normal" forms over every organ and body region spelling."""
    en: list[str] = []
    zh: list[str] = []
    for c in clinical.vocabulary():
        if c.kind in ("organ", "body_region"):
            en.extend(t for t in c.terms if t.isascii() and len(t) > 3 and not t.isupper())
            zh.extend(t for t in c.terms if not t.isascii())
    alt_en = "|".join(r"[\s-]+".join(re.escape(w) for w in t.split()) for t in sorted(set(en), key=lambda t: -len(t)))
    alt_zh = "|".join(re.escape(t) for t in sorted(set(zh), key=lambda t: -len(t)))
    return tuple(_Term("region_normal", "", re.compile(f.format(en=alt_en, zh=alt_zh), re.IGNORECASE))
                 for f in _REGION_NORMAL_FORMS)


_NORMAL_HINT = re.compile(r"normal|clear|unremarkable|intact|清晰|清楚|未见|正常", re.IGNORECASE)


@functools.lru_cache(maxsize=_STATIC_MEMO)
def _region_normal_matches(text: str, generation: tuple[object, ...]) -> tuple[tuple[int, int, _Term], ...]:
    """The "REGION is normal" mentions, looked for only around a normal word (the forms are long alternations)."""
    windows: list[list[int]] = []
    for m in _NORMAL_HINT.finditer(text):
        lo, hi = max(0, m.start() - 100), min(len(text), m.end() + 80)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = hi
        else:
            windows.append([lo, hi])
    terms = _region_normal_terms(generation)
    found = {(m.start(), m.end(), k) for lo, hi in windows for k, term in enumerate(terms)
             for m in term.pattern.finditer(text, lo, hi) if m.end() > m.start()}
    return tuple((s, e, terms[k]) for s, e, k in sorted(found))


# "ORGAN + abnormal state" (the organ-state reading): an organ of the vocabulary said to be enlarged, dilated,
# thickened, ... is a finding: "the heart is enlarged", "Ventricles look dilated", "| Spleen | enlarged |",
# "Heart: mildly enlarged", "dilated ventricles", "脾脏增大". Its value is the vocabulary's finding for that state of
# that organ ("enlarged spleen": splenomegaly), else "STATE ORGAN" (a finding the vocabulary does not know).
_STATES = {"enlarged": "enlargement", "dilated": "dilatation", "distended": "distension", "thickened": "thickening",
           "widened": "widening", "hypertrophied": "hypertrophy", "prominent": "prominence"}
_STATES_ZH = {"增大": "enlarged", "肿大": "enlarged", "扩大": "enlarged", "扩张": "dilated", "增厚": "thickened",
              "增宽": "widened"}
_STATE_EN = "|".join(_STATES)
_ORGAN_STATE_FORMS = (
    r"(?<![A-Za-z])(?:(?P<side>left|right)\s+)?(?P<o>{en})\s+(?:is|are|looks?|appears?|seems?)\s+"
    r"(?:(?:\w+ly|quite|very|a bit|slightly)\s+)?(?P<a>" + _STATE_EN + r")(?![\w-])",
    r"(?<![A-Za-z])(?P<o>{en})\**\s*[:：|]\s*\**\s*(?:(?:\w+ly|slightly)\s+)?(?P<a>" + _STATE_EN + r")(?![\w-])",
    r"(?<![A-Za-z])(?P<a>" + _STATE_EN + r")\s+(?:(?P<side>left|right)\s+)?(?P<o>{en})(?![\w-])",
    r"(?:(?P<side>[左右])侧?)?(?P<o>{zh})(?:影|明显|轻度|稍)?(?P<a>" + "|".join(_STATES_ZH) + r")",
)
_STATE_HINT = re.compile("|".join((*_STATES, *_STATES_ZH)), re.IGNORECASE)


@functools.lru_cache(maxsize=4)
def _organ_state_terms(generation: tuple[object, ...]) -> tuple[_Term, ...]:
    """Per vocabulary generation: the organ-state forms over every organ spelling."""
    en: list[str] = []
    zh: list[str] = []
    for c in clinical.vocabulary():
        if c.kind == "organ":
            en.extend(t for t in (c.label, *c.terms) if t.isascii() and len(t) > 3 and not t.isupper())
            zh.extend(t for t in c.terms if not t.isascii())
    alt_en = "|".join(r"[\s-]+".join(re.escape(w) for w in t.split()) for t in sorted(set(en), key=lambda t: -len(t)))
    alt_zh = "|".join(re.escape(t) for t in sorted(set(zh), key=lambda t: -len(t)))
    return tuple(_Term("organ_state", "", re.compile(f.format(en=alt_en, zh=alt_zh), re.IGNORECASE))
                 for f in _ORGAN_STATE_FORMS)


@functools.lru_cache(maxsize=_STATIC_MEMO)
def _organ_state_matches(text: str, generation: tuple[object, ...]) -> tuple[tuple[int, int, _Term], ...]:
    """The organ-state mentions, looked for only where a state word occurs."""
    if _STATE_HINT.search(text) is None:
        return ()
    return tuple((m.start(), m.end(), t) for t in _organ_state_terms(generation) for m in t.pattern.finditer(text)
                 if m.end() > m.start())


@functools.lru_cache(maxsize=1 << 10)
def _organ_state_finding(organ: str, state: str) -> tuple[str, str]:
    """(kind, value) of an organ said to be in a state: the vocabulary's finding or diagnosis named "STATE ORGAN"
    or "ORGAN STATE-NOUN" in any spelling of the organ ("enlarged heart": cardiomegaly), else a finding
    "STATE ORGAN"."""
    state = _STATES_ZH.get(state, state.lower())
    o = clinical.concept_of(organ, ("organ",))
    names = [organ] if o is None else [t for t in (o.label, *o.terms) if t.isascii()]
    for name in names:
        for said in (f"{state} {name}", f"{name} {_STATES[state]}"):
            c = clinical.concept_of(said, ("finding", "diagnosis"))
            if c is not None:
                return c.kind, c.label
    return "finding", f"{state} {o.label if o is not None else organ.lower()}"


def _organ_state_term(text: str, s: int, e: int, term: _Term) -> _Term:
    """The finding term an organ-state mention stands for."""
    m = term.pattern.match(text, s, e)
    if m is None:  # not reached: the span is the pattern's own match; an unnamed organ decides nothing
        return _Term("organ", "", term.pattern)
    kind, value = _organ_state_finding(m.group("o"), m.group("a"))
    return _Term(kind, value, term.pattern)


def _region_said(text: str, s: int, e: int, term: _Term) -> tuple[str, str | None]:
    """The region and side (None: no side, or both) a "REGION is normal" mention names."""
    m = term.pattern.match(text, s, e)
    if m is None:
        return "", None
    side = m.groupdict().get("side")
    return m.group("r"), _SIDE_WORDS.get(side.lower()) if side else None


def _mentions(text: str, truth: Truth) -> list[tuple[int, int, _Term]]:
    """Non-overlapping mentions, longest first (a "pleural effusion" is one mention, not two). The vocabulary's
    spellings fill what the case's labels and the hand lexicon leave (so "chest X-ray" stays a region and a
    modality), and replace finding, organ and body-region mentions they contain ("brain metastasis" is one mention,
    not "brain" and "metastasis"; "lung window" is a sequence, not the lung; "the image shows a lung carcinoma" is
    a lung carcinoma, not the lung as the region shown),
    except a count phrase ("multiple nodules" stays a count and a finding)."""
    found = _term_matches(text, _case_terms(truth))
    found.extend(_static_matches(text))
    found.extend(_region_normal_matches(text, clinical.generation()))
    found.extend(_organ_state_matches(text, clinical.generation()))
    found.sort(key=_longest_first)
    taken: dict[int, tuple[int, int, _Term]] = {}
    owner = [-1] * len(text)
    for s, e, t in found:
        if all(o < 0 for o in owner[s:e]):
            taken[s] = (s, e, t)
            owner[s:e] = [s] * (e - s)
    for s, e, t in sorted(_vocab_matches(text, clinical.generation()), key=_longest_first):
        inside = {o for o in owner[s:e] if o >= 0}
        if inside and (t.kind not in _PATHOLOGY_KINDS | {"sequence"} or _COUNT_LEAD.match(text, s) or any(
                taken[o][2].kind not in _REPLACEABLE or taken[o][0] < s or taken[o][1] > e
                or taken[o][1] - taken[o][0] >= e - s for o in inside)):
            continue
        for o in inside:
            del taken[o]
        taken[s] = (s, e, t)
        owner[s:e] = [s] * (e - s)
    return sorted(taken.values(), key=lambda t: t[0])


_PATHOLOGY_KINDS = frozenset({"finding", "diagnosis", "generic"})
_REPLACEABLE = _PATHOLOGY_KINDS | {"organ", "body_region"}  # mentions a longer vocabulary spelling may contain
_COUNT_LEAD = re.compile(r"(?:multiple|several|numerous|two|three|four|five|single|solitary)\b", re.IGNORECASE)


def _longest_first(t: tuple[int, int, _Term]) -> tuple[int, int, int]:
    return -(t[1] - t[0]), _KIND_ORDER.get(t[2].kind, 9), t[0]


def _sentences(text: str) -> list[tuple[int, int]]:
    bounds = [0, *sorted({m.start() for m in re.finditer(r"(?<=[.!?。！？\n])", text)
                          if not _no_break(text, m.start())}), len(text)]
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if text[a:b].strip(" \n*#-")]


# the value rule the verdicts, clause readers and entry points share
def _matches(value: str, label: str) -> bool:
    """Whether a claimed ``value`` is true of the ``label``: the same concept, a sub-type or a super-type of it
    in the clinical vocabulary; for labels it does not know, the same words or a subset of them."""
    a, b = _fold(value), _fold(label)
    if a == b:
        return True
    ca, cb = _concept(value), _concept(label)
    if ca is not None and cb is not None:
        return clinical.related(ca.label, cb.label) in ("same", "parent", "child")
    wa, wb = set(a.split()), set(b.split())
    return bool(wa) and bool(wb) and (wa <= wb or wb <= wa)
