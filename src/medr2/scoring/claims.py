"""Rationale audit: the claims a free-text rationale makes that a case's ground truth can decide (issue 19).

:func:`check_rationale` reads a rationale (the content before the final answer line, and the server's
separate reasoning text where it gave one) and returns one :class:`Claim` per mention of something the
ground truth (:class:`medr2.records.Case`) speaks about: modality, plane/view, MR/CT sequence, body region,
organs, findings (present or absent, with laterality, count, size and descriptors: margin, shape, intensity,
content, enhancement), a region or organ called normal, diagnosis and severity. Each claim is ``supported``,
``contradicted`` or ``unverifiable``, with the character span (in its source text) it came from.

Rules only, deliberately conservative (a wrong ``contradicted`` accuses a model of a false statement):

* the labels are the bench's own (:mod:`medr2.tasks.vocab`: built-in, per-region vocabularies, synonyms)
  plus the case's own labels; English (British and American spelling) and common Chinese terms;
* negation ("no effusion", "without", "absent", "is not seen", "ruled out", "unlikely", "未见", "无") turns
  a mention into a denial; a denial of what the case has is contradicted (*missed evidence*);
* weak hedges ("possible", "may", "cannot exclude", "differential", "or", "可能") and clauses that are not
  about this image (restating the question or options, planning "let me check", textbook statements
  "typically", conditionals "if", "would") make a mention ``unverifiable``; strong hedges ("likely",
  "consistent with", "考虑") still assert (``hedged=True``);
* a finding the case does not have is contradicted (*hallucinated finding*), and its denial supported, only
  where the case's truth states it absent (:func:`medr2.tasks.contract.states_absent`, the rule the tasks' "no"
  answers use): a negative label of the source (``Case.absent``) or a concept it is a sub-type of, a complete
  finding list (``meta.findings_complete``) that does not list it, or a finding that lies only in another body
  part; a finding merely unlisted on an incomplete list is ``unverifiable``; "normal" needs a complete list; an
  organ that is not annotated is never "absent" (only one of another body part is contradicted).

An optional judge (``medr2 score --judge SPEC --judge-claims``; ``medr2.scoring.scorer._judge_claims``) decides the
claims the rules leave ``unverifiable`` (asserted ones only); its share is reported in ``metrics.json`` ``claims``.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from medr2 import vocab as clinical
from medr2.tasks import contract, vocab
from medr2.vocab.context import (
    GENERIC as _VOCAB_SKIP,
    NOT_ABOUT_IMAGE as _NOT_ABOUT_IMAGE,
    PLANNED as _PLANNED,
    STRONG_HEDGE as _STRONG_HEDGE,
    WEAK_HEDGE as _WEAK_HEDGE,
    clauses as _clauses,
    found as _found,
    hedge_scope as _hedge_scope,
    negated as _negated,
    no_break as _no_break,
    uncertain as _uncertain,
)

ClaimVerdict = Literal["supported", "contradicted", "unverifiable"]
CLAIM_KINDS = ("modality", "plane", "sequence", "body_region", "organ", "finding", "diagnosis", "laterality",
               "count", "size", "attribute", "severity")
# v2: "absent", "X: no Y", part-level 正常, size cut-offs, retractions; v3: the clinical vocabulary (medr2.vocab:
# synonyms, sub-types, planes/views, modalities), laterality anywhere in the clause, counts only where the truth
# states one, hedged hallucinations counted; v4: "REGION is normal/clear" against where findings lie, descriptors and
# severity through the vocabulary (compare_values), sizes and counts in any spelling and field, every side word;
# v5: a weak hedge after a break ("X, which could suggest Y") leaves X asserted, attribute fields of a list or table
# said of the finding named elsewhere, body regions decided through part-of (vocab.overlap), sequences compared on a
# shared axis (contrast phase, CT window, weighting), co-occurring labels no hallucination, a descriptor anywhere in
# a sentence naming one finding; v6: the organ-state reading ("the spleen is enlarged", "| Heart | enlarged |"), table
# columns under an attribute's header and organ/site fields, a side word in a clause before the finding, the
# diagnosis standing for its findings' attributes, attributions (", typical of X") and answered questions ("X? None.")
# as statements, a bare grade sentence, a share (80 %) as a grade, vocabulary acronyms as a field's value; v7: image
# sides and the radiological convention are no side of the finding, a differential table's rows weighed, a row's
# label marks its value ("| Pneumothorax | none |"), plans ("建议CT随访") and "X over Y" alternatives no statement, a
# negation ending at ", so", "one ...; the other" no count, spelled-out sizes, a clause saying where a finding lies;
# v8: a hedge opening a "with" clause hedges it, "maybe" and "I'd", a grade or side compared ("more than mild", "右>左":
# both sides), a technique as the frame of a negation ("not visible on an AP"), a negation ending at "and the", a row
# label's gloss ("| Enhancing tumour (ET) |"), "bilateral" of a one-sided finding decided on complete lists only;
# v9: a side comparison grading a "bilateral" names the larger side only, a side said right after another mention is
# its ("an effusion on the right", "the heart is on the left"), a table cell of a row naming another finding is
# that finding's, an unticked checklist box denies, a one-sided denial of the other side is no missed finding, a
# focal-lesion word in the organ of the case's focal finding names it, "the radiograph shows the ankle" and
# "normal macular OCT" as claims
CHECKER_VERSION = "claims-v9"
HEDGED_HALLUCINATION = "hedged_hallucination"


@dataclass(frozen=True)
class Claim:
    kind: str
    value: str  # the canonical label the mention names
    text: str  # the mention as written
    start: int  # span in ``source`` text
    end: int
    source: str  # "content" or "reasoning"
    denied: bool  # the rationale says it is absent / not so
    hedged: bool  # asserted with a strong hedge ("likely", "consistent with")
    verdict: ClaimVerdict
    note: str = ""  # why: "hallucinated_finding", "missed_finding", "hedged", "not_asserted", ...


@dataclass(frozen=True)
class Truth:
    """What the checker reads of a case (built from a :class:`~medr2.records.Case` or a plain dict)."""

    modality: str | None = None
    plane: str | None = None
    sequence: str | None = None
    body_region: str | None = None
    structures: tuple[str, ...] = ()
    findings: tuple[Mapping[str, Any], ...] = ()  # {"label", "attributes": {laterality, size_mm, count, ...}}
    diagnosis: str | None = None
    severity: str | None = None
    mimics: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()  # the labels the source states absent (Case.absent)
    findings_complete: bool = False  # the source declares every finding labelled (Case.meta["findings_complete"])

    @classmethod
    def of(cls, case: Any) -> Truth:
        if isinstance(case, Truth):
            return case
        get = case.get if isinstance(case, Mapping) else (lambda k, d=None: getattr(case, k, d))
        structures = cast(tuple[str, ...], tuple(  # a structure's name is a required string of the case
            s if isinstance(s, str) else (s.get("name") if isinstance(s, Mapping) else s.name)
            for s in (get("structures") or ())))
        findings = []
        for f in get("findings") or ():
            if isinstance(f, str):
                findings.append({"label": f, "attributes": {}})
            elif isinstance(f, Mapping):
                findings.append({"label": f["label"], "attributes": dict(f.get("attributes") or {})})
            else:
                findings.append({"label": f.label, "attributes": dict(f.attributes)})
        meta = get("meta") or {}
        return cls(modality=get("modality"), plane=get("plane"), sequence=get("sequence"),
                   body_region=get("body_region"), structures=structures, findings=tuple(findings),
                   diagnosis=get("diagnosis"), severity=get("severity"), mimics=tuple(get("mimics") or ()),
                   absent=tuple(str(a) for a in get("absent") or ()),
                   findings_complete=isinstance(meta, Mapping) and meta.get("findings_complete") is True)

    @property
    def positives(self) -> list[str]:
        return list(self.stated.positives)

    @functools.cached_property
    def stated(self) -> contract.Stated:
        """What the truth states about presence, read by the one rule of absence
        (:func:`medr2.tasks.contract.states_absent`) and of normal (:func:`medr2.tasks.contract.abnormal_state`)."""
        labels = [str(f["label"]) for f in self.findings] + ([self.diagnosis] if self.diagnosis else [])
        return contract.Stated(positives=contract.positives(labels), absent=self.absent,
                               complete=self.findings_complete, modality=self.modality, body_region=self.body_region)

    @property
    def abnormal(self) -> bool | None:
        """Abnormal (a label present), normal (complete labels, none present) or None: unknown."""
        return contract.abnormal_state(self.stated)

    @property
    def is_normal(self) -> bool:
        """Known normal: complete finding labels, none of them present (no finding on an incomplete list is not)."""
        return self.abnormal is False


# --------------------------------------------------------------------------- lexicon
_CS = 0  # case-sensitive pattern flag marker
_SPELL = ((r"haem", "hem"), (r"oedema", "edema"), (r"tumour", "tumor"), (r"oesophag", "esophag"),
          (r"colour", "color"), (r"haemat", "hemat"))


def _fold(label: str) -> str:
    """Spelling-folded, normalised key (British/American spelling, plural ``s``)."""
    key = clinical.normalise(label)
    for a, b in _SPELL:
        key = key.replace(a, b)
    return re.sub(r"(?<=[a-z]{3})(es|s)\b", "", key) if not key.endswith(("sis", "us", "ss")) else key


def _concept(label: str) -> clinical.Concept | None:
    """The vocabulary concept a mention or label names (a plural folded to its singular)."""
    c = clinical.concept_of(label)
    if c is None:
        key = clinical.normalise(label)
        for cut in ("s", "es"):
            if c is None and key.endswith(cut) and len(key) > len(cut) + 3:
                c = clinical.concept_of(key[:-len(cut)])
    return c


def relation(value: str, truth: str) -> clinical.Relation:
    """How a claimed ``value`` relates to a ``truth`` label in the clinical vocabulary (``same``, ``child``: a
    sub-type or part of the truth, ``parent``, ``sibling``, ``unrelated``)."""
    a, b = _concept(value), _concept(truth)
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
_MODALITY_COMPATIBLE = {frozenset({"mammography", "X-ray"}), frozenset({"PET", "CT"}),
                        frozenset({"PET", "nuclear medicine"})}
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
_ANSWER_LINE = re.compile(r"^\s*(?:\**\s*)?(?:final answer|answer|the answer is|correct answer|答案|最终答案)\b"
                          r"|^\s*\\boxed", re.IGNORECASE | re.MULTILINE)
_THINK_TAG = re.compile(r"</?(?:think|thinking|reasoning|reflection|analysis)>|◁/?think▷", re.IGNORECASE)


def rationale_parts(raw: str | None, reasoning: str | None = None) -> list[tuple[str, str]]:
    """``(source, text)`` pairs to audit: the server's separate reasoning text, and the content up to its final
    answer line (reasoning tags are dropped, their text kept: a ``<think>`` block is part of the rationale)."""
    parts: list[tuple[str, str]] = []
    if reasoning and reasoning.strip():
        parts.append(("reasoning", reasoning))
    if raw and raw.strip():
        text = _THINK_TAG.sub(lambda m: " " * len(m.group(0)), raw)  # same offsets as the stored content
        answers = list(_ANSWER_LINE.finditer(text))
        if answers:
            text = text[:answers[-1].start()]
        if not _bare_answer(text):
            parts.append(("content", text))
    return parts


# has_rationale of a content without reasoning text: bare answers ("B", "yes") repeat across most rows of a run; at
# most _HAS_MAX entries (then cleared), content of at most _HAS_RAW_MAX characters (a longer one seldom repeats)
_HAS: dict[str | None, bool] = {}
_HAS_MAX = 1 << 16
_HAS_RAW_MAX = 256


def has_rationale(raw: str | None, reasoning: str | None = None) -> bool:
    """Whether :func:`rationale_parts` finds something to audit (memoised for short answers)."""
    if reasoning is None and (raw is None or len(raw) <= _HAS_RAW_MAX):
        got = _HAS.get(raw)
        if got is None:
            got = bool(rationale_parts(raw))
            if len(_HAS) >= _HAS_MAX:
                _HAS.clear()
            _HAS[raw] = got
        return got
    return bool(rationale_parts(raw, reasoning))


_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
_SENTENCE_GOES_ON = re.compile(r"[.。;；]\s*[^\W\d_]")


# a multi-select answer given as option letters ("A, C, D, E", "(A) and (B)"): each letter is a "word" to _WORD
_LETTER_LIST = re.compile(r"\(?[A-Z]\)?(?:\s*(?:[,;/&]|and)?\s*\(?[A-Z]\)?)*\s*\.?")


def _bare_answer(text: str) -> bool:
    """A content that is only an answer ("B", "yes", "[1, 2, 3, 4]", "A, C, D, E", "left lung"): no rationale to
    audit."""
    body = text.strip()
    if _LETTER_LIST.fullmatch(body):
        return True
    cjk = len(_CJK.findall(body))
    words = _WORD.findall(body)
    return not body or ("\n" not in body and len(words) < 4 and cjk < 6
                        and not _SENTENCE_GOES_ON.search(body))


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
    """The case's own labels (and mimics) as finding/diagnosis terms, so labels outside the built-ins match."""
    return _case_terms_of(tuple(str(f["label"]) for f in truth.findings), truth.diagnosis, truth.mimics,
                          truth.structures)


@functools.lru_cache(maxsize=1 << 12)  # a case's rationales (one per item and mode) share its terms
def _case_terms_of(labels: tuple[str, ...], diagnosis: str | None, mimics: tuple[str, ...],
                   structures: tuple[str, ...]) -> tuple[_Term, ...]:
    out = []
    for label in labels:
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


# --------------------------------------------------------------------------- verdicts
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


def _region(raw: str | None) -> str | None:
    if not raw:
        return None
    canon = vocab.canonical_region(raw)
    if canon:
        return canon
    key = raw.strip().lower()
    if key in ("eye", "retina", "fundus"):
        return "eye"
    c = clinical.concept_of(key, ["body_region", "organ"])
    # a part of a limb is that limb's region ("knee": lower limb); other parts, and the hip (also pelvis), stay
    if c is not None and clinical.related(c.label, "pelvis") != "child":
        for limb in ("upper limb", "lower limb"):
            if clinical.related(c.label, limb) == "child":
                return limb
    return key


def _modality_of(raw: str | None) -> str | None:
    if not raw:
        return None
    if "mammo" in raw.lower():
        return "mammography"
    return vocab.canonical_modality(raw) or raw


def _decide(kind: str, value: str, denied: bool, truth: Truth) -> tuple[ClaimVerdict, str]:
    """Verdict of a plain (not hedged away) mention."""
    if kind == "modality":
        actual = _modality_of(truth.modality)
        if actual is None:
            return "unverifiable", "modality unknown"
        rel = relation(value, actual)
        if rel == "child":  # "mammography" said of an X-ray: more than the truth says
            return "unverifiable", "sub-type of the modality"
        same = rel in ("same", "parent")  # "microscopy" for a fluorescence microscopy image
        if not same and frozenset({actual, value}) in _MODALITY_COMPATIBLE:
            return "unverifiable", "compatible modality"
        return ("contradicted" if same == denied else "supported"), ""
    if kind == "plane":
        if not truth.plane:
            return "unverifiable", "plane unknown"
        rel = relation(value, truth.plane)  # "frontal" for a PA view: its parent; "craniocaudal" is "CC"
        if rel == "child":
            return "unverifiable", "sub-type of the plane"
        same = rel in ("same", "parent")
        return ("contradicted" if same == denied else "supported"), ""
    if kind == "sequence":
        if not truth.sequence:
            return "unverifiable", "sequence unknown"
        actual = next((k for k, ps in _SEQUENCE_TERMS.items()
                       if vocab.same(k, truth.sequence) or any(_compile(p).fullmatch(truth.sequence) for p in ps)),
                      truth.sequence)
        if not _sequence_axes(value) & _sequence_axes(actual):
            return "unverifiable", "another sequence axis"  # "contrast-enhanced" of a lung-window image
        rel = relation(value, actual)
        if rel == "same":
            return ("contradicted" if denied else "supported"), ""
        fam = _SEQUENCE_FAMILY.get(actual)
        if rel in ("parent", "child") or (fam is not None and fam == _SEQUENCE_FAMILY.get(value)):
            return "unverifiable", "same sequence family"
        return ("supported" if denied else "contradicted"), ""
    if kind == "body_region":
        actual = _region(truth.body_region)
        if actual is None:
            return "unverifiable", "region unknown"
        if actual == value or vocab.region_related(actual, value) or relation(value, actual) != "unrelated" and \
                relation(value, actual) != "sibling":
            return ("contradicted" if denied else "supported"), ""
        if clinical.overlap(value, actual) is not False:  # unknown, or sharing a part: "chest" and "abdomen"
            return "unverifiable", "overlapping region"
        return ("supported" if denied else "contradicted"), ""  # two places: "knee" for a wrist
    if kind == "organ":  # an organ is only "absent" in words that say so of the organ; denials stay undecided
        if any(_matches(value, s) for s in truth.structures) and not denied:
            return "supported", ""
        zone = _REGION_ZONE.get(_region(truth.body_region) or "")
        organ_zone = _ORGAN_REGION.get(value)
        if not denied and zone and organ_zone and zone != organ_zone:
            return "contradicted", "organ of another body part"
        return "unverifiable", "organ not annotated" if not denied else "organ denial not decided"
    if kind in ("normal", "generic"):  # "normal study" / "an abnormality": the one definition of normal
        abnormal = truth.abnormal
        if abnormal is None:
            return "unverifiable", "normal state unknown"
        said_abnormal = denied if kind == "normal" else not denied
        if said_abnormal == abnormal:
            return "supported", ""
        return "contradicted", "hallucinated_finding" if said_abnormal else "missed_finding"
    # finding / diagnosis: absent only where the truth states it (medr2.tasks.contract.states_absent)
    present = any(_matches(value, p) for p in truth.positives)
    if present:
        return ("contradicted", "missed_finding") if denied else ("supported", "")
    absent = contract.states_absent(truth.stated, value)
    if denied:
        return ("supported", "") if absent else ("unverifiable", "absence not stated")
    mimic = any(_matches(value, m) for m in truth.mimics)
    if mimic or absent:
        return "contradicted", "hallucinated_finding"
    return "unverifiable", "label not decidable"


# the vocabulary's sequence concepts that group the values of one axis of their own (concepts.txt): a contrast
# phase and a CT window are said of an image beside its MR weighting, not instead of it
_SEQUENCE_AXES = ("contrast phase", "CT window")


@functools.lru_cache(maxsize=256)
def _sequence_axes_of(label: str, generation: tuple[object, ...]) -> frozenset[str]:
    v = clinical.vocabulary()
    c = v.concept_of(label, ("sequence",))
    if c is None:
        return frozenset({"weighting"})  # a sequence the vocabulary lacks: compared as a weighting
    chain = [c.label, *(a.label for i in v.ancestors(c.label) if (a := v.get(i)) is not None)]
    axes = {a for a in _SEQUENCE_AXES if a in chain}
    if any(x not in _SEQUENCE_AXES and not any(v.is_a(x, a) for a in _SEQUENCE_AXES) for x in chain):
        axes.add("weighting")  # an MR weighting, or under one ("T1 post-contrast": a T1 weighting and a phase)
    return frozenset(axes)


def _sequence_axes(label: str) -> frozenset[str]:
    """The axes a sequence value lies on: ``contrast phase``, ``CT window`` (the vocabulary's grouping concepts it
    is a sub-type of), ``weighting`` (any other: T1, T2, FLAIR, DWI, ...). Two sequences are compared only on an
    axis they share."""
    return _sequence_axes_of(label, clinical.generation())


_ALTERNATIVES = re.compile(r"\bdifferential\b|\bvs\.?(?!\w)|\bversus\b|\bor\b|\brather than\b|鉴别|或", re.IGNORECASE)


def _hedged_note(kind: str, value: str, truth: Truth, clause: str) -> str:
    """``hedged_hallucination`` for a hedged mention ("possibly X", "cannot exclude X") of a finding that would be
    a hallucinated finding asserted plainly; else ``hedged``. Such claims stay unverifiable (a hedge is no
    statement) but are counted on their own (``rat_hedged``, the hedged-hallucination rate). Alternatives weighed
    against each other ("a differential of A vs B", "A or B") are reasoning, not a hedge towards one of them."""
    if kind in ("finding", "diagnosis", "generic") and not _ALTERNATIVES.search(clause):
        verdict, note = _decide(kind, value, False, truth)
        if verdict == "contradicted" and note == "hallucinated_finding":
            return HEDGED_HALLUCINATION
    return "hedged"


def _near(text: str, lo: int, hi: int, patterns: Mapping[str, Sequence[str]]) -> list[tuple[int, int, str]]:
    out = []
    for value, ps in patterns.items():
        for p in ps:
            for m in _compile(p).finditer(text, lo, hi):
                out.append((m.start(), m.end(), value))
    return out


def _attribute_claims(text: str, s: int, e: int, clause: tuple[int, int], sentence: tuple[int, int], value: str,
                      truth: Truth, source: str, owned: Sequence[tuple[int, int]],
                      generic: bool = False, alone: bool = False, lead: tuple[int, int] | None = None,
                      taken: Mapping[int, bool] | None = None) -> list[Claim]:
    """Laterality, count, size and descriptors (margin, shape, intensity, content, enhancement) said of a finding
    the case has (a generic "lesion": of any of its findings; the case's diagnosis: of all of them, what they
    are). ``owned``: spans of the other mentions of the sentence that take a side word of their own (anatomy,
    another decided finding); ``alone``: no other pathology is named in the sentence; ``lead``: the part of the
    sentence before the clause where no pathology is named before this one; ``taken``: side words another mention
    takes (:func:`_laterality_claims`)."""
    matching = list(truth.findings) if generic else [f for f in truth.findings if _matches(value, str(f["label"]))]
    if not matching and truth.diagnosis and not vocab.is_normal(truth.diagnosis) and _matches(value, truth.diagnosis):
        matching = list(truth.findings)  # "左侧脑膜瘤" of a meningioma case: the diagnosis is what its findings are
    if not matching:
        return []
    out: list[Claim] = []
    out.extend(_laterality_claims(text, s, e, clause, matching, source, owned, lead, truth.findings_complete, taken))
    out.extend(_count_claims(text, s, e, clause, matching, source, generic))
    # sizes and descriptors: anywhere near in the sentence (a Chinese comma ends a clause, not the description), or
    # anywhere in it where it names no other pathology ("the nodule measures 4 cm, and its margins look smooth")
    lo, hi = sentence if alone else (max(sentence[0], s - 60), min(sentence[1], e + 60))
    out.extend(_size_claims(text, lo, hi, matching, source))
    out.extend(_descriptor_claims(text, lo, hi, matching, source))
    out.extend(_share_claims(text, lo, hi, value, truth, source))
    return out


# a share of the organ a finding takes ("肺组织压缩约80%", "about 30% collapse") states its grade roughly: the grade
# whose upper bound it does not exceed (decided like a size word: only two grades or more from the truth)
_SHARE = re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)\s*(?:%|％|percent\b|per cent\b)", re.IGNORECASE)
_SHARE_GRADES = ((5.0, "minimal"), (20.0, "mild"), (40.0, "moderate"), (100.0, "severe"))
# a percentage that is the writer's confidence or a probability, not a share of the organ ("80% sure")
_NOT_A_SHARE = re.compile(r"confiden|\bsure\b|certain|likel|probab|chance|odds|信心|把握|可能|概率", re.IGNORECASE)


def _share_claims(text: str, lo: int, hi: int, label: str, truth: Truth, source: str) -> list[Claim]:
    """Severity stated as a share (:data:`_SHARE`) said of a finding that carries a severity."""
    if not truth.severity or not clinical.carries(label, SEVERITY):
        return []
    true_grade = truth.severity.strip().lower()
    out = []
    for m in _SHARE.finditer(text, lo, hi):
        if _THRESHOLD.search(text[max(0, m.start() - 16):m.start()]) or float(m.group(1)) > 100 or \
                _NOT_A_SHARE.search(text, max(lo, m.start() - 30), min(hi, m.end() + 30)):
            continue
        grade = next(g for top, g in _SHARE_GRADES if float(m.group(1)) <= top)
        rel = clinical.compare_values(grade, true_grade)
        if rel == "unrelated" or (rel == "excludes" and _grade_steps(grade, true_grade) < 2):
            continue
        out.append(Claim("severity", grade, m.group(0), m.start(), m.end(), source, False, False,
                         "supported" if rel == "same" else "contradicted"))
    return out


# a side of the image, not of the patient ("the viewer's right", "the left of the image", "图像左侧"), and the
# radiological convention that maps one onto the other ("the patient's left is on the viewer's right", "the left
# of the image is the patient's right"): a side word inside one says nothing of where the finding lies
_SIDE_WORD = r"(?:left|right)"
_IMAGE_SIDE = (rf"(?:the\s+)?(?:viewer|reader|observer|image|screen|film|monitor|display)'?s\s+{_SIDE_WORD}|"
               rf"(?:the\s+)?{_SIDE_WORD}(?:[\s-]+(?:hand\s+)?side)?\s+of\s+(?:the\s+)?"
               rf"(?:image|screen|film|monitor|display|picture|viewer)\b|\bimage\s+{_SIDE_WORD}|"
               rf"(?:图像|影像|画面|屏幕|图片)(?:的)?[左右](?:侧|边)?")
_PATIENT_SIDE = rf"(?:the\s+)?patient'?s\s+{_SIDE_WORD}|(?:患者|病人)(?:的)?[左右](?:侧|边)?"
_IMAGE_SIDES = re.compile(
    rf"(?:{_PATIENT_SIDE})\s*(?:is|are|appears?|lies|(?:is\s+)?(?:displayed|shown))?\s*(?:on\s+|at\s+|在|为|是)?"
    rf"(?:{_IMAGE_SIDE})|(?:{_IMAGE_SIDE})\s*(?:is|=|represents|corresponds\s+to|为|是|即)\s*(?:{_PATIENT_SIDE})|"
    rf"{_IMAGE_SIDE}", re.IGNORECASE)


def _patient_sides(text: str, sides: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The side words of ``sides`` said of the patient: those inside an image side or a convention
    (:data:`_IMAGE_SIDES`) left out."""
    if not sides:
        return []
    lo, hi = min(a for a, _, _ in sides), max(b for _, b, _ in sides)
    spans = [m.span() for m in _IMAGE_SIDES.finditer(text, max(0, lo - 40), min(len(text), hi + 40))]
    return [t for t in sides if not any(a <= t[0] and t[1] <= b for a, b in spans)]


# the side a comparison is made against ("whiter than the left", "右>左"; :func:`_compared_sides`)
_COMPARED_SIDE = re.compile(r"(?:\bthan\s+(?:(?:on|in|at)\s+)?(?:the\s+)?|[>＞<＜]\s*|"
                            r"多于|大于|重于|甚于|少于|小于|轻于|较)$", re.IGNORECASE)


def _laterality_claims(text: str, s: int, e: int, clause: tuple[int, int], matching: Sequence[Mapping[str, Any]],
                       source: str, owned: Sequence[tuple[int, int]], lead: tuple[int, int] | None = None,
                       complete: bool = True, taken: Mapping[int, bool] | None = None) -> list[Claim]:
    """Every side word of the clause said of the finding: the one nearest to the mention, and each other one
    that no other mention takes (a side word belongs to the next mention after it within a few words: "right"
    in "the right lung is clear" is the lung's, unless that anatomy leads straight into this finding, "right
    lung nodule"). Where the clause has none, the side words of ``lead`` (the sentence before it, naming no
    other pathology) that no mention takes: "左侧基底节区高密度影，考虑脑出血". "Bilateral" of a one-sided finding
    is decided only on a complete finding list (``complete``): elsewhere the other side may hold one unlabelled.
    ``taken``: starts of the side words said of a mention right before them (:func:`_sides_said_after`) -> whether
    that is another mention (never this finding's side, nearest or not) or this one (always its side)."""
    taken = taken or {}
    truth_sides = {str(f["attributes"].get("laterality") or "").lower() for f in matching} - {""}
    sides = _patient_sides(text, _near(text, clause[0], clause[1], _LATERALITY))
    nearest: tuple[int, int, str] | None = None
    if not sides and lead is not None:
        sides = _patient_sides(text, _near(text, lead[0], lead[1], _LATERALITY))
    elif sides:
        nearest = min(sides, key=lambda t: min(abs(t[0] - e), abs(t[1] - s)))
    if not truth_sides or not sides:
        return []
    compared = _compared_sides(text, sides)
    out = []
    for ss, se, side in sorted(set(sides)):
        mine = taken.get(ss)  # said right after this mention (False) or after another one (True)
        if mine or compared.get((ss, se)) == "" or mine is None and (ss, se, side) != nearest and _side_owned(
                text, se, s, owned):
            continue
        side = compared.get((ss, se), side)
        ok = side in truth_sides
        if side == "bilateral" and not ok and not complete:
            out.append(Claim("laterality", side, text[ss:se], ss, se, source, False, False, "unverifiable",
                             "absence not stated"))
            continue
        out.append(Claim("laterality", side, text[ss:se], ss, se, source, False, False,
                         "supported" if ok else "contradicted", "" if ok else "wrong_side"))
    return out


def _compared_sides(text: str, sides: Sequence[tuple[int, int, str]]) -> dict[tuple[int, int], str]:
    """The side words of a comparison of the two sides (:data:`_COMPARED_SIDE`): "the right base is whiter than the
    left", "右>左" state both sides, so each of the pair is said as ``bilateral``; the side compared against with
    no other side before it ("larger than on the left") is no side of the finding (``""``). A pair that grades a
    "bilateral" said before it ("bilateral effusions, left greater than right", "双侧积液，右>左") says which side
    is the larger: that side word is said as its own side, the other is no side (``""``): the "bilateral" is the
    claim of both sides."""
    out: dict[tuple[int, int], str] = {}
    for a, b, side in sides:
        if _COMPARED_SIDE.search(text, max(0, a - 16), a) is None:
            continue
        other = [t for t in sides if t[1] <= a and a - t[1] <= 60 and t[2] not in (side, "bilateral")]
        if not other:
            out[(a, b)] = ""
            continue
        first = max(other)
        if any(t[2] == "bilateral" and t[1] <= first[0] for t in sides):
            less = _LESSER.search(text, first[1], a) is not None
            out[first[:2]], out[(a, b)] = ("", side) if less else (first[2], "")
        else:
            out[first[:2]] = out[(a, b)] = "bilateral"
    return out


_LESSER = re.compile(r"\b(?:less|smaller|fewer|milder|lower)\b|[<＜]|少于|小于|轻于", re.IGNORECASE)

# a side said of a mention after it, as where it lies: "a pleural effusion on the right" (any pathology, decided or
# not), "the heart is on the left" (anatomy, with a verb)
_SAID_AFTER = {True: re.compile(r"[ \t]+(?:(?:is|are|was|were|lies|lie|sits|sit|seen|located|situated)[ \t]+)?"
                                r"(?:on|in|at|to)[ \t]+the[ \t]+(?=(?:left|right)\b)", re.IGNORECASE),
               False: re.compile(r"[ \t]+(?:is|are|was|were|lies|lie|sits|sit)[ \t]+(?:on|in|to)[ \t]+the[ \t]+"
                                 r"(?=(?:left|right)\b)", re.IGNORECASE)}


def _sides_said_after(text: str, mentions: Sequence[tuple[int, int, _Term]]) -> dict[int, tuple[int, int]]:
    """Start of each side word said of the mention right before it (:data:`_SAID_AFTER`) -> that mention's span:
    the side is that mention's, not a side of another finding of the sentence."""
    out: dict[int, tuple[int, int]] = {}
    for a, b, t in mentions:
        pathology = t.kind in _PATHOLOGY_KINDS
        if pathology or t.kind in ("organ", "body_region"):
            m = _SAID_AFTER[pathology].match(text, b)
            if m is not None:
                out.setdefault(m.end(), (a, b))
    return out


def _side_owned(text: str, side_end: int, s: int, owned: Sequence[tuple[int, int]]) -> bool:
    """Whether the side word ending at ``side_end`` belongs to another mention: the first owned mention that
    starts within 24 characters after it, unless it runs straight (words only) into this finding at ``s``."""
    for a, b in sorted(owned):
        if a < side_end <= b:
            return True  # inside it: "the right lung is clear"
        if side_end <= a <= side_end + 24 and re.fullmatch(r"[\s\w-]*", text[side_end:a]):
            return not (b <= s and re.fullmatch(r"[\s\w-]{0,12}", text[b:s]) is not None)
    return False


def _count_claims(text: str, s: int, e: int, clause: tuple[int, int], matching: Sequence[Mapping[str, Any]],
                  source: str, generic: bool) -> list[Claim]:
    """A count said before the mention ("two nodules", "三个结节") or as its field's value ("Nodules: three",
    "| Nodules | 3 |"); compared only where the truth states one: a count attribute, or several instances."""
    if generic:
        return []
    n_true = _true_count(matching)
    b0 = max(clause[0], s - 30)
    before = text[b0:s].lower()
    gap = r"(?:\s+(?:small|tiny|large|left|right|upper|lower|lobe|lung|pulmonary|[a-z]+ly))*\s*$"
    cm = re.search(r"(?<![a-z])(a single|single|solitary|one|two|three|four|five|[2-5]|一个|单发|两个|三个)" + gap,
                   before)
    field = _COUNT_FIELD.match(text, e)
    if cm is None and field is not None:
        a, word = field.start(1), field.group(1).lower()
    elif cm is not None:
        a, word = b0 + cm.start(1), cm.group(1)
    else:
        multi = re.search(r"(" + "|".join(_MULTIPLE) + r")" + gap, before)
        if multi is None:
            return []
        a = b0 + multi.start(1)
        return [Claim("count", "multiple", multi.group(1), a, a + len(multi.group(1)), source, False, False,
                      *_count_verdict(n_true, n_true is not None and n_true >= 2))]
    if word in _COUNT_WORDS:
        n = _COUNT_WORDS[word]
        if n == 1 and _ENUMERATED.search(text, e, min(len(text), e + 120)):
            return []  # "one nodule in the upper lobe; the other in the lower lobe": the first of several
        return [Claim("count", str(n), text[a:a + len(word)], a, a + len(word), source, False, False,
                      *_count_verdict(n_true, n == n_true))]
    return [Claim("count", "multiple", text[a:a + len(word)], a, a + len(word), source, False, False,
                  *_count_verdict(n_true, n_true is not None and n_true >= 2))]


# "one" that opens an enumeration, not a count: another of the same follows ("one ...; the other ...", "一个…另一个")
_ENUMERATED = re.compile(r"\b(?:the other|another|the second|a second|the rest)\b|另一|其余", re.IGNORECASE)


def _true_count(matching: Sequence[Mapping[str, Any]]) -> int | None:
    """The count the truth states of these findings: a count attribute, or several instances; else None."""
    stated = [f["attributes"].get("count") for f in matching if f["attributes"].get("count")]
    return int(stated[0]) if stated else (len(matching) if len(matching) >= 2 else None)


def _size_claims(text: str, lo: int, hi: int, matching: Sequence[Mapping[str, Any]], source: str) -> list[Claim]:
    sizes = [float(f["attributes"]["size_mm"]) for f in matching if f["attributes"].get("size_mm")]
    out: list[Claim] = []
    for m in _SIZE.finditer(text, lo, hi) if sizes else ():
        if _THRESHOLD.search(text[max(0, m.start() - 16):m.start()]):
            continue
        k = 10.0 if m.group(3).lower().startswith(_CM) else 1.0
        said = max(_number(m.group(1)), _number(m.group(2) or "0")) * k
        best = min(sizes, key=lambda x: abs(x - said))
        d = abs(best - said)
        verdict: ClaimVerdict = ("supported" if d <= max(2.0, 0.25 * best) else
                                 "contradicted" if d > max(3.0, 0.4 * best) else "unverifiable")
        out.append(Claim("size", f"{said:g} mm", m.group(0), m.start(), m.end(), source, False, False, verdict))
    return out


def _number(word: str) -> float:
    """A number said in digits or spelled out (:data:`_NUMBER_WORDS`)."""
    return float(_NUMBER_WORDS.get(word.lower(), 0)) or float(word)


def _descriptor_claims(text: str, lo: int, hi: int, matching: Sequence[Mapping[str, Any]],
                       source: str) -> list[Claim]:
    """Margin, shape, intensity, content, enhancement words compared with the finding's stated values and the
    values its concept always carries (:func:`medr2.vocab.compare_values`: one concept supported, two values of
    one attribute contradicted, anything else not a claim)."""
    truth_vals = [str(v) for f in matching for k, v in f["attributes"].items()
                  if v and k not in _NOT_DESCRIPTORS and isinstance(v, str)]
    truth_vals += [c.label for f in matching for c in clinical.implied(str(f["label"])) if c.kind == "attribute"]
    if not truth_vals:
        return []
    values, _, _ = _descriptors(clinical.generation())
    out = []
    for m in values.finditer(text, lo, hi):
        if re.search(r"\b(?:not|non|no)[\s-]*$", text[max(0, m.start() - 5):m.start()]):
            continue
        c = clinical.concept_of(m.group(0), ("attribute",))
        if c is None:
            continue
        rels = {clinical.compare_values(c.label, t) for t in truth_vals}
        if "same" in rels or "excludes" in rels:
            out.append(Claim("attribute", f"{_attribute_name(c)}={c.label}", m.group(0), m.start(), m.end(), source,
                             False, False, "supported" if "same" in rels else "contradicted"))
    return out


_COPULA = re.compile(r"\s*(?:is|are|was|appears?|looks?|seems?)(?: (?:quite|very|rather|relatively))?\s*",
                     re.IGNORECASE)
_NOT_DESCRIPTORS = frozenset({"laterality", "size_mm", "size", "count", "location", "grade", "severity"})
_COUNT_FIELD = re.compile(r"\s*\**\s*[:：|=(]\s*\**\s*(a single|single|solitary|one|two|three|four|five|[1-5]|"
                          r"multiple|several|numerous)\b", re.IGNORECASE)


def _attribute_name(c: clinical.Concept) -> str:
    """The attribute a value belongs to: its topmost is-a ancestor ("intensity" for "anechoic")."""
    v = clinical.vocabulary()
    while c.is_a and (parent := v.get(c.is_a[0])) is not None:
        c = parent
    return c.label


def _term_alternation(terms: Iterable[str]) -> str:
    """One pattern for many vocabulary spellings, longest first; ASCII ones at word edges, hyphen or space
    between words."""
    alts = []
    for t in sorted(set(terms), key=lambda t: (-len(t), t)):
        if t.isascii():
            words = [re.escape(w) for w in re.split(r"[\s_\-]+", t.strip()) if w]
            alts.append(r"(?<![A-Za-z0-9-])" + r"[\s-]+".join(words) + r"(?![A-Za-z0-9])")
        else:
            alts.append(re.escape(t))
    return "|".join(alts) or r"(?!x)x"


@functools.lru_cache(maxsize=4)
def _descriptors(generation: tuple[object, ...]) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Per vocabulary generation: every spelling of a descriptor value (an attribute concept under an attribute,
    severity grades aside); the grade words read anywhere in a clause (a grade's name, its non-English
    spellings); the size words that state a grade only said of a finding that carries a severity ("small",
    "large")."""
    v = clinical.vocabulary()
    grade_ids = v.descendants(SEVERITY)
    values: list[str] = []
    grades: list[str] = []
    size_words: list[str] = []
    for c in v:
        if c.kind != "attribute" or not c.is_a:
            continue
        if c.id in grade_ids:  # a grade (directly under severity) or a size word (under a grade)
            (grades if c.label in vocab.SEVERITY_ORDER else size_words).extend(c.terms)
        elif not v.descendants(c.label):
            values.extend(c.terms)
    return (re.compile(_term_alternation(values), re.IGNORECASE), re.compile(_term_alternation(grades), re.IGNORECASE),
            re.compile(_term_alternation(size_words), re.IGNORECASE))


def _grade_of(c: clinical.Concept) -> str:
    """The grade a severity word names: itself, or the grade a size word is a sub-type of ("large": severe)."""
    v = clinical.vocabulary()
    return next((g.label for i in c.is_a if (g := v.get(i)) is not None and g.label in vocab.SEVERITY_ORDER),
                c.label)


def _grade_steps(grade: str, true_grade: str) -> int:
    """How many grades of :data:`medr2.tasks.vocab.SEVERITY_ORDER` lie between two grades."""
    order = vocab.SEVERITY_ORDER
    return abs(order.index(grade) - order.index(true_grade)) if grade in order and true_grade in order else 0


def _count_verdict(n_true: int | None, agrees: bool) -> tuple[ClaimVerdict, str]:
    if n_true is None:
        return "unverifiable", "count not stated"
    return ("supported", "") if agrees else ("contradicted", "")


def _severity_claims(text: str, clause: tuple[int, int], truth: Truth, source: str,
                     mention: tuple[int, int, str] | None = None, field: bool = False) -> list[Claim]:
    """Severity stated in a clause, compared with the case's grade (:func:`medr2.vocab.compare_values`): a grade
    word anywhere in the clause (``mention`` None), or a size word said of the ``mention`` (start, end, label)
    of a finding that carries a severity ("a small effusion", "the haemorrhage is large"; ``field``: the clause is
    the value of a size field of the rationale's finding, "- Size: large")."""
    if not truth.severity:
        return []
    _, grades, size_words = _descriptors(clinical.generation())
    if mention is None:
        found = [(m.start(), m.end()) for m in grades.finditer(text, clause[0], clause[1])]
    else:
        s, e, label = mention
        if not clinical.carries(label, SEVERITY):
            return []
        found = [(m.start(), m.end()) for m in size_words.finditer(text, clause[0], clause[1])] if field else [
            (m.start(), m.end()) for m in size_words.finditer(text, max(clause[0], s - 24), min(clause[1], e + 24))
            if (m.end() <= s and re.fullmatch(r"[\s\w-]*", text[m.end():s]))
            or (m.start() >= e and _COPULA.fullmatch(text[e:m.start()]))]
    out = []
    true_grade = truth.severity.strip().lower()
    for a, b in found:
        if re.search(r"(?:-|to )\s*$", text[clause[0]:a]) or re.match(r"\s*(?:-|to )", text[b:clause[1]]):
            continue  # "moderate-to-severe": a range
        if _found(_COMPARED, text[max(clause[0], a - 40):a]):
            continue  # "more than mild", "at least moderate", "worse than severe": a cut-off, no grade
        c = clinical.concept_of(text[a:b], ("attribute",))
        if c is None:
            continue
        grade = _grade_of(c)
        rel = clinical.compare_values(grade, true_grade)
        if rel == "unrelated" or (rel == "excludes" and mention is not None and _grade_steps(grade, true_grade) < 2):
            continue  # a size word states a grade roughly: "large" of a moderate effusion is not decided
        out.append(Claim("severity", grade, text[a:b], a, b, source, False, False,
                         "supported" if rel == "same" else "contradicted"))
    return out


def _span_at(spans: Sequence[tuple[int, int]], starts: Sequence[int], pos: int) -> tuple[int, int] | None:
    """The span of sorted, non-overlapping ``spans`` holding ``pos`` (bisect)."""
    i = bisect.bisect_right(starts, pos) - 1
    return spans[i] if i >= 0 and spans[i][0] <= pos < spans[i][1] else None


def _blanked(text: str, span: tuple[int, int], s: int, e: int) -> str:
    """``text[span]`` with the mention ``text[s:e]`` replaced by spaces (same length, same positions)."""
    a, b = span
    lo, hi = min(max(s, a), b), max(min(e, b), a)
    return text[a:lo] + " " * (hi - lo) + text[hi:b]


# framing that is no framing: a judgement said of what was just described ("a mass with a dural tail, typical of a
# meningioma": asserted, with a strong hedge), and a short question the rationale answers at once ("Hard exudates?
# None.", "Effusion? Yes.", "积液？无。": a statement, the answer its polarity)
_ATTRIBUTED = re.compile(r"(?:,|—|–|\(|\bwhich (?:is|are))\s*(?:most |very |quite |fairly )?"
                         r"(?:typical|characteristic|classic|pathognomonic|diagnostic)(?:ally)?\s+(?:of|for)\b",
                         re.IGNORECASE)
_ANSWERED = re.compile(r"[ \t]*(?P<a>none|no|nil|absent|negative|not seen|yes|present|seen|无|未见|有)[ \t]*"
                       r"(?:[.。!！;；\n]|$)", re.IGNORECASE)
_NO_ANSWERS = frozenset({"none", "no", "nil", "absent", "negative", "not seen", "无", "未见"})
_QUESTION_WORDS = 8  # at most so many words before the "?": a fragment, not a question to the reader


# a sentence that is a grade alone ("Mild.", "Overall: severe.", "中度。"): a severity said of the case
_BARE_GRADE = re.compile(r"\s*(?:(?:overall|grade|severity)\s*[,:：]?\s*)?[^\s.。!！:：,，]{1,12}\s*[.。!！]?\s*",
                         re.IGNORECASE)


# a row whose label is the mention and whose value is what is said of it: a table row ("| Pneumothorax | none |") or
# a list field ("- Effusion: right, small"); the label marks the value
_ROW = re.compile(r"[ \t]*(?:\|[ \t]*(?P<tkey>[^|\n]+?)[ \t]*\|[ \t]*(?P<tval>[^|\n]*?)[ \t]*\|[^\n]*"
                  r"|(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?P<key>[^:：|\n]{1,40}?)[ \t]*[:：][ \t]*(?P<val>[^\n]*?))"
                  r"[ \t]*\n?")
_GLOSS = re.compile(r"\s*[(（][^()（）\n]{1,24}[)）][\s*]*$")
_ROW_VALUE_WORDS = 6  # at most so many words in a row's value: a value, not a sentence of its own
# a table header that weighs alternatives ("| Differential | Likelihood |"): its rows are reasoning, not findings
_WEIGHED = re.compile(r"\bdifferential|\bddx\b|\blikelihood\b|\bprobability\b|鉴别|可能性", re.IGNORECASE)


def _answer(text: str, sentence: tuple[int, int], s: int, e: int, row: bool) -> tuple[str, int] | None:
    """What is said of the mention ``text[s:e]`` as an answer, lower-cased, and where it ends: the answer right after
    a sentence that is a short question ("Hard exudates? None."), or (``row``: a pathology mention) the value of the
    row whose label is the mention (:data:`_ROW`: "| Pneumothorax | none |", "- Effusion: right, small")."""
    body = text[sentence[0]:sentence[1]].rstrip()
    if body.endswith(("?", "？")) and len(_WORD.findall(body)) <= _QUESTION_WORDS:
        m = _ANSWERED.match(text, sentence[1])
        return (m.group("a").lower(), m.end("a")) if m is not None else None
    line = _line(text, sentence[0])
    got = _ROW.fullmatch(text, *line) if row else None
    if got is None or _TABLE_RULE.fullmatch(text, *line):
        return None
    key, val = ("tkey", "tval") if got.group("tkey") is not None else ("key", "val")
    value = got.group(val).strip(" *.;。")
    # the label, less an abbreviation or gloss after it: "| Enhancing tumour (ET) |", "- Effusion (pleural): none"
    key_end = got.start(key) + len(_GLOSS.sub("", text[got.start(key):got.end(key)]))
    label = text[got.start(key):key_end].strip(" *")
    if text[got.start(key):key_end].lstrip(" *") != text[s:key_end] or len(label) != e - s \
            or not value or len(value.split()) > _ROW_VALUE_WORDS or _header_row(text, got.start()):
        return None
    return value.lower(), got.start(val) + len(got.group(val).rstrip(" *.;。"))


def _line(text: str, pos: int) -> tuple[int, int]:
    """The line holding ``pos``, without its newline."""
    a = text.rfind("\n", 0, pos) + 1
    b = text.find("\n", pos)
    return a, len(text) if b < 0 else b


def _header_row(text: str, pos: int) -> bool:
    """Whether the line at ``pos`` is a table's header: the next line is its rule ("|---|---|")."""
    _, b = _line(text, pos)
    return b < len(text) and _TABLE_RULE.fullmatch(text, *_line(text, b + 1)) is not None


def _table_header(text: str, pos: int) -> str:
    """The header row of the table whose body row holds ``pos`` ("" outside a table body)."""
    a, b = _line(text, pos)
    while text[a:b].lstrip().startswith("|") and a > 0:
        rule = _line(text, a - 1)
        if _TABLE_RULE.fullmatch(text, *rule):
            return text[slice(*_line(text, rule[0] - 1))] if rule[0] > 0 else ""
        a, b = rule
    return ""


def _framed(text: str, span: tuple[int, int], s: int, e: int, answered: bool) -> str:
    """``text[span]`` as its framing words are looked for: the mention blanked (:func:`_blanked`), an attribution
    of what was described (:data:`_ATTRIBUTED`) and the question mark of an answered question too."""
    out = _blanked(text, span, s, e)
    out = _ATTRIBUTED.sub(lambda m: " " * len(m.group(0)), out)
    return re.sub(r"[?？]\s*$", " ", out) if answered else out


def _side_owners(mentions: Sequence[tuple[int, int, _Term]], truth: Truth) -> list[tuple[int, int]]:
    """Spans of the mentions that take a side word of their own: anatomy, and findings the truth decides (a
    side before an undecidable word, "a right basal opacity", may be the finding's own)."""
    return [(s, e) for s, e, t in mentions if t.kind in ("organ", "body_region", "region_normal") or (
        t.kind in ("finding", "diagnosis") and _decide(t.kind, t.value, False, truth)[0] != "unverifiable")]


def _region_value(region: str, side: str | None) -> str:
    c = clinical.concept_of(region, ("organ", "body_region"))
    return " ".join(w for w in ("normal", side, c.label if c is not None else region.lower()) if w)


def _finding_sites(label: str, attributes: Mapping[str, Any], truth: Truth) -> list[clinical.Concept]:
    """Where a finding of the case lies: its own ``location`` attribute, else the location its concept always
    carries (``@ location=...``, concepts.txt), else the case's one annotated structure; none where unknown."""
    loc = attributes.get("location")
    if isinstance(loc, str) and loc.strip():
        c = clinical.concept_of(clinical.split_side(loc)[1], ("organ", "body_region"))
        return [c] if c is not None else []
    implied = [c for c in clinical.implied(label, "location")]
    if implied:
        return implied
    if len(truth.structures) == 1:
        c = clinical.concept_of(truth.structures[0], ("organ", "body_region"))
        return [c] if c is not None else []
    return []


def _decide_region(region: str, side: str | None, truth: Truth) -> tuple[ClaimVerdict, str]:
    """A region or organ called normal/clear: contradicted (missed evidence) where a finding of the case lies in
    it (on that side, where one is said), supported where every finding is known to lie elsewhere."""
    r = clinical.concept_of(region, ("organ", "body_region"))
    if r is None:
        return "unverifiable", "region unknown"
    if truth.abnormal is None:
        return "unverifiable", "normal state unknown"
    if truth.is_normal:
        return "supported", ""
    if r.kind == "body_region" and truth.body_region and side is None and (
            _region(r.label) == _region(truth.body_region) or clinical.part_of(truth.body_region, r.label)):
        return "contradicted", "missed_finding"  # the imaged region itself ("a normal wrist" of a wrist fracture)
    v = clinical.vocabulary()
    pathology = [(str(f["label"]), f["attributes"]) for f in truth.findings]
    if truth.diagnosis and not vocab.is_normal(truth.diagnosis):
        pathology.append((truth.diagnosis, {}))
    unknown = False
    for label, attributes in pathology:
        sites = _finding_sites(label, attributes, truth)
        inside = any(c.id == r.id or v.part_of(c.label, r.label) for c in sites)
        if not inside:
            unknown = unknown or not sites or any(v.part_of(r.label, c.label) for c in sites)
            continue
        finding_side = str(attributes.get("laterality") or "").lower()
        if side is None or finding_side in (side, "bilateral"):
            return "contradicted", "missed_finding"
        unknown = unknown or not finding_side
    if not truth.findings_complete:  # an unlisted finding may lie in it
        return "unverifiable", "region not decidable"
    return ("unverifiable", "region not decidable") if unknown else ("supported", "")


# a field of a Markdown list or table whose key names an attribute ("- Side: right", "**Margin:** smooth",
# "| Size | large |"): its value is said of the finding the rationale describes in its other rows or its prose
_FIELD_ROW = re.compile(
    r"^[ \t]*(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?:\*\*)?[ \t]*(?P<key>[A-Za-z][A-Za-z ]{1,20}?)[ \t]*(?:\*\*)?"
    r"(?P<sep>[:：])[ \t]*(?:\*\*)?(?P<val>[^\n]*)"
    r"|^[ \t]*(?P<tsep>\|)[ \t]*(?:\*\*)?(?P<tkey>[A-Za-z][A-Za-z ]{1,20}?)(?:\*\*)?[ \t]*\|(?P<tval>[^|\n]*)\|",
    re.MULTILINE)
_FIELD_KEYS = {"side": "laterality", "sides": "laterality", "laterality": "laterality", "size": "size",
               "sizes": "size", "long axis": "size", "short axis": "size", "diameter": "size", "dimensions": "size",
               "dimension": "size", "measurement": "size", "measurements": "size", "length": "size",
               "count": "count", "number": "count", "margin": "descriptor", "margins": "descriptor",
               "shape": "descriptor", "signal": "descriptor", "intensity": "descriptor", "density": "descriptor",
               "attenuation": "descriptor", "echogenicity": "descriptor", "echo": "descriptor",
               "content": "descriptor", "enhancement": "descriptor", "organ": "site", "site": "site",
               "location": "site"}
_TABLE = re.compile(r"(?:^[ \t]*\|[^\n]*\|[ \t]*(?:\n|$))+", re.MULTILINE)
_TABLE_RULE = re.compile(r"[ \t]*\|(?:[ \t]*:?-{2,}:?[ \t]*\|)+[ \t]*")


def _cells(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The cells of the table row ``text[lo:hi]`` ("| a | b |"), each span stripped of blanks and ``**``."""
    bars = [i for i in range(lo, hi) if text[i] == "|"]
    out = []
    for a, b in zip(bars, bars[1:], strict=False):
        while a + 1 < b and text[a + 1] in " \t*":
            a += 1
        while b - 1 > a + 1 and text[b - 1] in " \t*":
            b -= 1
        out.append((a + 1, b))
    return out


def _fields(text: str) -> list[tuple[str, int, int, int, tuple[int, int]]]:
    """``(key, value start, value end, separator, row)`` of every attribute field of a rationale: a key and its
    value in one list item or table row ("- Side: right", "| Size | large |"; the row is the value), and a table's
    cells under a header that names an attribute ("| Nodule | Side | Size |" over "| 2 | right | 8 mm |"; the row
    is the table row, whose other cells may name what the cell is said of)."""
    out = []
    for m in _FIELD_ROW.finditer(text):
        table = m.group("tkey") is not None
        key = (m.group("tkey") if table else m.group("key")).strip().lower()
        if key in _FIELD_KEYS:
            lo, hi = (m.start("tval"), m.end("tval")) if table else (m.start("val"), m.end("val"))
            out.append((key, lo, hi, m.start("tsep") if table else m.start("sep"), (lo, hi)))
    for t in _TABLE.finditer(text):
        rows = [(a.start(), a.end()) for a in re.finditer(r"[^\n]+", text[t.start():t.end()])]
        rows = [(t.start() + a, t.start() + b) for a, b in rows]
        if len(rows) < 3 or not _TABLE_RULE.fullmatch(text, *rows[1]):
            continue
        keys = [text[a:b].strip().lower() for a, b in _cells(text, *rows[0])]
        for lo, hi in rows[2:]:
            for key, (a, b) in zip(keys, _cells(text, lo, hi), strict=False):
                if key in _FIELD_KEYS and b > a:
                    out.append((key, a, b, a - 1, (lo, hi)))
    return out


def _field_claims(text: str, mentions: Sequence[tuple[int, int, _Term]], said: Sequence[Claim], truth: Truth,
                  source: str) -> list[Claim]:
    """Attribute fields of a list or table (:func:`_fields`: a key and its value in one row, or a table column
    under an attribute's header) whose value names no finding, said of the findings the rationale asserts
    elsewhere (those of the case its supported finding mentions match; a generic "lesion": all of them): side,
    size (a measure, or a size word of a finding that carries a severity), count, descriptors and the organ or
    site, decided as beside the finding itself."""
    pathology = [c for c in said if c.kind in ("finding", "diagnosis") and not c.value.startswith("normal")]
    asserted = [c for c in pathology if c.verdict == "supported" and not c.denied]
    generic = any(c.value == "lesion" for c in asserted)
    all_matching = [f for f in truth.findings
                    if generic or any(_matches(c.value, str(f["label"])) for c in asserted)]
    if not pathology and len({_fold(str(f["label"])) for f in truth.findings}) == 1:
        all_matching = list(truth.findings)  # no finding named at all: the fields describe the case's one finding
    out: list[Claim] = []
    for key, lo, hi, sep, row in _fields(text):
        what = _FIELD_KEYS[key]
        if any(lo <= a < hi and t.kind in _PATHOLOGY_KINDS for a, _, t in mentions):
            continue
        of_row = _row_findings(row, (lo, hi), mentions, truth)
        matching = all_matching if of_row is None else of_row
        if not matching:
            continue
        if what == "laterality":
            out.extend(_laterality_claims(text, lo, lo, (lo, hi), matching, source, (),
                                          complete=truth.findings_complete))
        elif what == "descriptor":
            out.extend(_descriptor_claims(text, lo, hi, matching, source))
        elif what == "site":
            out.extend(_site_claims(text, lo, hi, [(a, b) for a, b, t in mentions if lo <= a < hi
                                                   and t.kind in ("organ", "body_region")], matching, truth, source))
        elif what == "count":
            got = _COUNT_FIELD.match(text, sep)
            if got is not None:
                word, n_true = got.group(1).lower(), _true_count(matching)
                agrees = _COUNT_WORDS[word] == n_true if word in _COUNT_WORDS else (n_true or 0) >= 2
                out.append(Claim("count", str(_COUNT_WORDS.get(word, "multiple")), got.group(1), got.start(1),
                                 got.end(1), source, False, False, *_count_verdict(n_true, agrees)))
        else:
            out.extend(_size_claims(text, lo, hi, matching, source))
            for f in matching[:1]:
                out.extend(_severity_claims(text, (lo, hi), truth, source, (hi, hi, str(f["label"])), field=True))
    return out


def _row_findings(row: tuple[int, int], cell: tuple[int, int], mentions: Sequence[tuple[int, int, _Term]],
                  truth: Truth) -> list[Mapping[str, Any]] | None:
    """The case's findings a table row's cell is said of where another cell of its row names a finding ("| Hydrocephalus
    | bilateral |" under "| Finding | Side |"): those its mentions match (none for a finding the case lacks: its
    side is no side of the case's findings); ``None`` where the row names none (the rationale's findings)."""
    named = [t for a, _, t in mentions if row[0] <= a < row[1] and not cell[0] <= a < cell[1]
             and t.kind in _PATHOLOGY_KINDS]
    if not named:
        return None
    if any(t.kind == "generic" for t in named):
        return list(truth.findings)
    return [f for f in truth.findings if any(_matches(t.value, str(f["label"])) for t in named)]


def _site_claims(text: str, lo: int, hi: int, said: Sequence[tuple[int, int]], matching: Sequence[Mapping[str, Any]],
                 truth: Truth, source: str) -> list[Claim]:
    """An organ or region named as the site of the case's finding ("| Organ | kidney |", "- Location: gastric"; the
    organ and region mentions of the value, else the whole value as a spelling of one): supported where it is where
    the finding lies (:func:`_finding_sites`: the same, a part or a whole of it), contradicted where every finding
    is known to lie in another, undecided where a site is unknown."""
    v = clinical.vocabulary()
    sites = [_finding_sites(str(f["label"]), f["attributes"], truth) for f in matching]
    value = text[lo:hi].rstrip(" .;*")
    if not said and value:
        said = [(lo, lo + len(value))]
    out = []
    for a, b in said:
        c = clinical.concept_of(clinical.split_side(text[a:b])[1], ("organ", "body_region"))
        if c is None or not sites or not all(sites):
            continue
        inside = any(x.id == c.id or v.part_of(x.label, c.label) or v.part_of(c.label, x.label)
                     for row in sites for x in row)
        out.append(Claim("organ", c.label, text[a:b], a, b, source, False, False,
                         "supported" if inside else "contradicted", "" if inside else "wrong_site"))
    return out


# a clause that only says where the finding just named lies ("气胸，位于左侧肺尖", "an effusion, located on the right")
_LOCATED = re.compile(r"[,，]\s*(?:位于|见于|(?:located|situated|lying|seen)\b)", re.IGNORECASE)


_TECHNIQUES = frozenset({"modality", "plane", "sequence"})
# a technique named as where something is looked at ("on an AP", "in the T2 image") or as the kind of a signal
# ("FLAIR signal", "T2 hyperintensity"): a negation in its clause denies what is seen, not the technique
_FRAME_BEFORE = re.compile(r"\b(?:on|in)\s+(?:(?:an?|the|this|these|its)\s+)?$", re.IGNORECASE)
_FRAME_AFTER = re.compile(r"[\s-]*(?:weighted\s+)?(?:images?\s+)?(?:signal|hyper\w*|hypo\w*|intensit\w*|bright\w*|"
                          r"abnormalit\w*|changes?)\b|[\s-]*(?:上|像上|图像上|序列上)", re.IGNORECASE)


def _technique_framed(text: str, s: int, e: int) -> bool:
    """Whether the technique mention ``text[s:e]`` is the frame of what is said (:data:`_FRAME_BEFORE`,
    :data:`_FRAME_AFTER`) rather than what is said."""
    return _found(_FRAME_BEFORE, text[max(0, s - 12):s]) or _FRAME_AFTER.match(text, e) is not None


_FOCAL = "nodule/mass"  # the vocabulary's focal-lesion words ("nodule", "mass", "结节", "肿块", "占位")


def _names_case_lesion(text: str, sentence: tuple[int, int], value: str, mentions: Sequence[tuple[int, int, _Term]],
                       truth: Truth) -> bool:
    """Whether a focal-lesion word (:data:`_FOCAL` or a sub-type of it) names the case's focal finding of another
    kind in the organ where it lies ("肝右叶见一低回声结节" or "a solid mass in the liver" of a liver cyst): the
    sentence names that organ and no finding of the case (a nodule beside a mass stays two findings). It is read
    as the generic "lesion" there (its descriptors are what is said of the case's finding); anywhere else it
    stays the finding it names."""
    if relation(value, _FOCAL) not in ("same", "child") or any(
            _matches(t.value, str(f["label"])) for a, _, t in mentions if sentence[0] <= a < sentence[1]
            and t.kind in _PATHOLOGY_KINDS for f in truth.findings):
        return False  # it is a finding of the case, or the sentence names the case's finding itself
    organs = [clinical.concept_of(t.value, ("organ", "body_region")) for a, _, t in mentions
              if sentence[0] <= a < sentence[1] and t.kind == "organ"]
    sites = [x for f in truth.findings if relation(str(f["label"]), _FOCAL) == "unrelated"
             for x in _finding_sites(str(f["label"]), f["attributes"], truth)]
    v = clinical.vocabulary()
    return any(o is not None and (x.id == o.id or v.part_of(o.label, x.label)) for o in organs for x in sites)


def _denied_elsewhere(text: str, clause: tuple[int, int], value: str, truth: Truth) -> bool:
    """Whether a denial of a finding the case has is said of one side only, where the case has none of it ("no
    right-sided nodules" of left nodules; as :func:`medr2.vocab.context.stated_absent` reads a side in a negated
    clause as a partial denial): every finding of that label lies on a known side the clause does not name."""
    said = {side for _, _, side in _patient_sides(text, _near(text, clause[0], clause[1], _LATERALITY))}
    sides = [str(f["attributes"].get("laterality") or "").lower() for f in truth.findings
             if _matches(value, str(f["label"]))]
    return bool(said) and bool(sides) and "bilateral" not in said and all(
        side in ("left", "right") and side not in said for side in sides)


@functools.lru_cache(maxsize=4)
def _sided_regions(generation: tuple[object, ...]) -> re.Pattern[str]:
    """Per vocabulary generation: a side word before a spelling of a body region that has a side (``@ laterality``
    in concepts.txt: a limb or a part of one, the breast, the eye): "the right wrist", "left breast", "右侧乳腺"."""
    en: list[str] = []
    zh: list[str] = []
    for c in clinical.vocabulary():
        if c.kind == "body_region" and "laterality" in c.attributes:
            en.extend(t for t in c.terms if t.isascii() and len(t) > 2)
            zh.extend(t for t in c.terms if not t.isascii())
    alt_en = "|".join(r"[\s-]+".join(re.escape(w) for w in t.split()) for t in sorted(set(en), key=lambda t: -len(t)))
    alt_zh = "|".join(re.escape(t) for t in sorted(set(zh), key=lambda t: -len(t)))
    forms = [rf"(?<![A-Za-z])(?P<side>left|right)[\s-]+(?:sided[\s-]+)?(?P<r>{alt_en})(?![A-Za-z])"] if alt_en else []
    forms += [rf"(?P<zside>[左右])侧?(?P<zr>{alt_zh})"] if alt_zh else []
    return re.compile("|".join(forms) or r"(?!)", re.IGNORECASE)


def _study_side_claims(text: str, truth: Truth, said: Sequence[Claim], clauses: Sequence[tuple[int, int]],
                       source: str) -> list[Claim]:
    """The side of the imaged region said of the image ("so this is the right wrist", "the left breast" of a
    mammogram): a region with a side (:func:`_sided_regions`) that is the case's region, a part or a whole of it, is
    imaged on one side, the side of the case's findings: supported where a finding lies on it (or both), contradicted
    where every finding lies on a known other side; no claim on a case without sided findings, in a clause that
    denies, hedges or is not about the image, or where a finding already takes the side word."""
    actual = _region(truth.body_region)
    sides = {str(f["attributes"].get("laterality") or "").lower() for f in truth.findings}
    if actual is None or not truth.findings or "" in sides:
        return []
    v = clinical.vocabulary()
    starts = [a for a, _ in clauses]
    taken = {(c.start, c.end) for c in said if c.kind == "laterality"}
    out = []
    for m in _sided_regions(clinical.generation()).finditer(text):
        side_group = "side" if m.group("side") else "zside"
        ss, se = m.span(side_group)
        region = clinical.concept_of(m.group("r") or m.group("zr"), ("body_region",))
        clause = _span_at(clauses, starts, ss) or (0, len(text))
        ctext = text[clause[0]:clause[1]]
        if region is None or (ss, se) in taken or not _patient_sides(text, [(ss, se, "")]) or not (
                region.label == actual or v.part_of(region.label, actual) or v.part_of(actual, region.label)) \
                or _negated(text, clause, ss, m.end()) or _uncertain(ctext, False) or _found(_NOT_ABOUT_IMAGE, ctext):
            continue
        side = _SIDE_WORDS.get(m.group(side_group).lower(), m.group(side_group).lower())
        ok = side in sides or "bilateral" in sides
        out.append(Claim("laterality", side, text[ss:se], ss, se, source, False, False,
                         "supported" if ok else "contradicted", "" if ok else "wrong_side"))
    return out


def check_text(text: str, case: Any, source: str = "content") -> list[Claim]:
    """The claims of one rationale text about ``case`` (a Case, a :class:`Truth`, or a dict of Case fields)."""
    truth = Truth.of(case)
    clauses = _clauses(text)
    sentences = _sentences(text)
    clause_starts, sentence_starts = [a for a, _ in clauses], [a for a, _ in sentences]
    out: list[Claim] = []
    severity_done: set[tuple[int, int]] = set()
    mentions = _mentions(text, truth)
    owners = _side_owners(mentions, truth)
    said_after = _sides_said_after(text, mentions)
    for s, e, term in mentions:
        if term.kind == "organ_state":
            term = _organ_state_term(text, s, e, term)
        clause = _span_at(clauses, clause_starts, s) or (0, len(text))
        sentence = _span_at(sentences, sentence_starts, s) or clause
        if term.kind == "finding" and _names_case_lesion(text, sentence, term.value, mentions, truth):
            term = _Term("generic", term.value, term.pattern)
        whole = text[sentence[0]:sentence[1]]
        answered = _answer(text, sentence, s, e, term.kind in _PATHOLOGY_KINDS)
        answer = answered[0] if answered is not None else None
        denied = _negated(text, clause, s, e) or answer in _NO_ANSWERS
        if term.kind in ("normal", "region_normal"):
            denied = False  # "no abnormality" is itself the statement
        elif denied and term.kind in _TECHNIQUES and _technique_framed(text, s, e):
            denied = False  # "not visible on an AP", "no abnormal FLAIR signal": what is seen is denied, not the view
        mention = text[s:e]
        if answered is not None:  # the claim is the question or label and its answer: "Hard exudates? None"
            mention = text[s:answered[1]]
        value = term.value
        if term.kind == "region_normal":
            region, side = _region_said(text, s, e, term)
            value = _region_value(region, side)
        claim_base = dict(kind=term.kind, value=value, text=mention, start=s, end=s + len(mention), source=source,
                          denied=denied)
        kind = {"generic": "finding", "normal": "diagnosis", "region_normal": "finding"}.get(term.kind, term.kind)
        claim_base["kind"] = kind
        # the framing words are looked for around the mention, not inside it ("primary CNS lymphoma" is a name)
        if _found(_NOT_ABOUT_IMAGE, _framed(text, sentence, s, e, answer is not None)) and term.kind not in (
                "modality", "plane", "sequence"):
            out.append(Claim(**claim_base, hedged=False, verdict="unverifiable", note="not_asserted"))  # type: ignore[arg-type]
            continue
        framed = _framed(text, clause, s, e, answer is not None)
        if _found(_NOT_ABOUT_IMAGE, framed) or _found(_PLANNED, framed):
            out.append(Claim(**claim_base, hedged=False, verdict="unverifiable", note="not_asserted"))  # type: ignore[arg-type]
            continue
        scope = _hedge_scope(text, clause, e)
        clause_text = text[clause[0]:scope]
        if _found(_RETRACTED, text[e:sentence[1] + 40]):
            out.append(Claim(**claim_base, hedged=False, verdict="unverifiable", note="retracted"))  # type: ignore[arg-type]
            continue
        if _found(_WEIGHED, _table_header(text, s)):  # a row of a differential table: an alternative weighed
            out.append(Claim(**claim_base, hedged=True, verdict="unverifiable", note="hedged"))  # type: ignore[arg-type]
            continue
        if _uncertain(clause_text, denied):
            out.append(Claim(**claim_base, hedged=True, verdict="unverifiable",  # type: ignore[arg-type]
                             note=_hedged_note(term.kind, term.value, truth, clause_text)))
            continue
        hedged = _found(_STRONG_HEDGE, whole) or _found(_ATTRIBUTED, whole)
        if term.kind == "organ" and not denied and not _found(_VISUAL, whole):
            out.append(Claim(**claim_base, hedged=hedged, verdict="unverifiable", note="not_asserted"))  # type: ignore[arg-type]
            continue
        if term.kind == "region_normal":
            verdict, note = _decide_region(region, side, truth)
        else:
            verdict, note = _decide(term.kind, term.value, denied, truth)
        if note == "missed_finding" and term.kind != "generic" and _denied_elsewhere(text, clause, term.value, truth):
            verdict, note = ("supported", "") if truth.findings_complete else ("unverifiable", "absence not stated")
        out.append(Claim(**claim_base, hedged=hedged, verdict=verdict, note=note))  # type: ignore[arg-type]
        if term.kind in ("finding", "diagnosis", "generic") and verdict == "supported" and not denied:
            owned = [(a, b) for a, b in owners if sentence[0] <= a < sentence[1] and (a, b) != (s, e)]
            alone = not any(sentence[0] <= a < sentence[1] and (a, b) != (s, e) and t.kind in _PATHOLOGY_KINDS
                            for a, b, t in mentions)
            first = not any(sentence[0] <= a < s and t.kind in _PATHOLOGY_KINDS for a, _, t in mentions)
            cut = _hedge_scope(text, sentence, e)  # what a hedge after a break says of it is no description
            if not _found(_WEAK_HEDGE, text[cut:sentence[1]]):
                cut = sentence[1]
            located = _span_at(clauses, clause_starts, clause[1]) if clause[1] < sentence[1] else None
            said_at = clause if located is None or not _LOCATED.match(text, *located) else (clause[0], located[1])
            out.extend(_attribute_claims(text, s, e, said_at, (sentence[0], cut),
                                         term.value, truth, source, owned, generic=term.kind == "generic",
                                         alone=alone, lead=(sentence[0], clause[0]) if first else None,
                                         taken={a: by != (s, e) for a, by in said_after.items()}))
            out.extend(c for c in _severity_claims(text, clause, truth, source, (s, e, term.value))
                       if (c.start, c.end) not in {(o.start, o.end) for o in out if o.kind == "severity"})
        if term.kind in ("finding", "diagnosis", "generic", "normal") and clause not in severity_done \
                and not denied and verdict != "contradicted":
            severity_done.add(clause)
            out.extend(_severity_claims(text, clause, truth, source))
    out.extend(_study_side_claims(text, truth, out, clauses, source))
    fields = _field_claims(text, mentions, out, truth, source)
    decided = {(c.start, c.end, c.kind) for c in fields if c.verdict != "unverifiable"}
    out = [c for c in out if c.verdict != "unverifiable" or (c.start, c.end, c.kind) not in decided] + fields
    graded = [m.start() for m in re.finditer(r"(?:severity|grade)\s*[:：]", text, re.IGNORECASE)]
    # "Mild." said of the case, as a sentence or a clause of its own ("右侧脑实质内血肿，轻度。")
    graded += [a for a, b in (*sentences, *clauses) if _BARE_GRADE.fullmatch(text, a + (text[a] in ",，"), b)]
    for pos in graded:
        span = _span_at(clauses, clause_starts, pos)
        if span is not None and span not in severity_done:
            severity_done.add(span)
            out.extend(_severity_claims(text, span, truth, source))
    out.sort(key=lambda c: (c.start, c.end, c.kind))
    return list(dict.fromkeys(out))  # one side word said of two mentions of one finding is one claim


def check_rationale(raw: str | None, case: Any, reasoning: str | None = None) -> list[Claim]:
    """Every claim of a stored prediction's rationale: its reasoning text and its content before the answer."""
    claims: list[Claim] = []
    for source, text in rationale_parts(raw, reasoning):
        claims.extend(check_text(text, case, source))
    return claims


@dataclass(frozen=True)
class Audit:
    """Per-prediction summary the metrics read."""

    n_claims: int
    n_supported: int
    n_contradicted: int
    n_hallucinated: int  # asserts a finding the case does not have
    n_missed: int  # denies a finding the case has
    n_hedged_hallucinated: int  # hedges towards a finding the case does not have ("possibly X")
    n_sentences: int
    n_checkable_sentences: int  # sentences with at least one decided claim


def audit(raw: str | None, case: Any, reasoning: str | None = None, claims: list[Claim] | None = None) -> Audit:
    """Counts of one rationale's claims (``claims``: already checked, else checked here)."""
    if claims is None:
        claims = check_rationale(raw, case, reasoning)
    n_sent = checkable = 0
    for source, text in rationale_parts(raw, reasoning):
        sentences = _sentences(text)
        starts = [a for a, _ in sentences]
        decided = {_span_at(sentences, starts, c.start) for c in claims
                   if c.source == source and c.verdict != "unverifiable"}
        n_sent += len(sentences)
        checkable += len(decided - {None})
    return Audit(
        n_claims=len(claims), n_supported=sum(c.verdict == "supported" for c in claims),
        n_contradicted=sum(c.verdict == "contradicted" for c in claims),
        n_hallucinated=sum(c.verdict == "contradicted" and c.note == "hallucinated_finding" for c in claims),
        n_missed=sum(c.verdict == "contradicted" and c.note == "missed_finding" for c in claims),
        n_hedged_hallucinated=sum(c.note == HEDGED_HALLUCINATION for c in claims),
        n_sentences=n_sent, n_checkable_sentences=checkable)


# --------------------------------------------------------------------------- scoring hook
AUDIT_COLUMNS = ("rat_sentences", "rat_checkable", "rat_claims", "rat_contradicted", "rat_hallucinated", "rat_missed",
                 "rat_lure", "rat_hedged")
# the audit columns of a row without a rationale: no sentences, no claims, no lure, no hedged hallucination
NO_RATIONALE = (0, 0, 0, 0, 0, 0, -1, 0)


def adopts(claims: Iterable[Claim], fact: str) -> bool:
    """Whether the rationale asserts ``fact`` (a lure's option text): a mention of it that is neither denied,
    hedged away nor outside a statement about the image."""
    return any(not c.denied and c.note not in ("hedged", HEDGED_HALLUCINATION, "not_asserted") and c.kind not in (
               "laterality", "count", "size", "attribute", "severity")
               and (_matches(c.value, fact) or _matches(c.text, fact)) for c in claims)


def check_rows(case_ids: Sequence[str], raws: Sequence[str | None], reasonings: Sequence[str | None],
               cases: Mapping[str, Any]) -> list[list[Claim] | None]:
    """Per scored row, its rationale's claims; None for a row without a rationale or whose case is unknown."""
    return [check_rationale(raw, cases[case_id], reasoning)
            if case_id in cases and rationale_parts(raw, reasoning) else None
            for case_id, raw, reasoning in zip(case_ids, raws, reasonings, strict=True)]


def audit_columns(case_ids: Sequence[str], raws: Sequence[str | None], reasonings: Sequence[str | None],
                  cases: Mapping[str, Any], lures: Sequence[str | None] | None = None,
                  checked: Sequence[list[Claim] | None] | None = None) -> dict[str, list[int]]:
    """Per scored row, the counts the ``rationale`` metric group reads (:data:`AUDIT_COLUMNS`); a row without a
    rationale (a bare answer, an error) or whose case is unknown has 0 sentences and is left out of it.
    ``checked`` (aligned, from :func:`check_rows`, possibly with judge verdicts) saves checking again.
    ``lures`` (aligned) is the false fact a variant offers (a lure's option text) or None: ``rat_lure`` is 1
    when the rationale asserts it, 0 when not, -1 without a lure."""
    if checked is None:
        checked = check_rows(case_ids, raws, reasonings, cases)
    out: dict[str, list[int]] = {c: [] for c in AUDIT_COLUMNS}
    for k, (case_id, raw, reasoning) in enumerate(zip(case_ids, raws, reasonings, strict=True)):
        case = cases.get(case_id)
        lure = lures[k] if lures is not None else None
        claims = checked[k]
        if claims is None:
            vals = NO_RATIONALE
        else:
            a = audit(raw, case, reasoning, claims)
            vals = (a.n_sentences, a.n_checkable_sentences, a.n_claims, a.n_contradicted, a.n_hallucinated,
                    a.n_missed, -1 if not lure else int(adopts(claims, lure)), a.n_hedged_hallucinated)
        for c, v in zip(AUDIT_COLUMNS, vals, strict=True):
            out[c].append(v)
    return out


# --------------------------------------------------------------------------- stored verdicts
CLAIMS_FILE = "claims.parquet"
CLAIM_COLUMNS = ("item_id", "model_key", "mode", "case_id", "source", "start", "end", "text", "kind", "value",
                 "denied", "hedged", "verdict", "note", "decided_by")


def claims_table(keys: Sequence[tuple[str, str, str, str]], checked: Sequence[list[Claim] | None],
                 decided_by: Sequence[Sequence[str] | None] | None = None) -> Any:
    """The ``claims.parquet`` table: one row per claim of each scored row's rationale, keyed by
    ``(item_id, model_key, mode, case_id)``; ``start``/``end`` index the claim's ``source`` text (``content``: the
    stored response, ``reasoning``: the server's reasoning text); ``decided_by`` is ``rules`` or ``judge``.
    Rows sorted by (mode, item_id, source, start, end, kind): the same claims give the same bytes."""
    import pyarrow as pa

    cols: list[list[Any]] = [[] for _ in CLAIM_COLUMNS]
    order = sorted((k for k, c in enumerate(checked) if c), key=lambda k: (keys[k][2], keys[k][0]))
    for k in order:
        claims = checked[k] or []
        by = decided_by[k] if decided_by is not None and decided_by[k] is not None else None
        for j in sorted(range(len(claims)), key=lambda j: (claims[j].source, claims[j].start, claims[j].end,
                                                             claims[j].kind)):
            c = claims[j]
            for col, v in zip(cols, (*keys[k], c.source, c.start, c.end, c.text, c.kind, c.value, c.denied,
                                     c.hedged, c.verdict, c.note, "rules" if by is None else by[j]), strict=True):
                col.append(v)
    types = (pa.string(), pa.string(), pa.string(), pa.string(), pa.string(), pa.int32(), pa.int32(), pa.string(),
             pa.string(), pa.string(), pa.bool_(), pa.bool_(), pa.string(), pa.string(), pa.string())
    schema = pa.schema(list(zip(CLAIM_COLUMNS, types, strict=True)))
    return pa.table([pa.array(col, type=t) for col, t in zip(cols, types, strict=True)], schema=schema)
