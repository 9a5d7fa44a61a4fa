"""Source of ``rationale_heldout8.jsonl`` (issue 39, eighth set): an eighth fresh held-out set of hand-labelled
rationales, written in the heldout8 session (December 2026) by a helper who read neither the checker
(``medr2.scoring.claims``), its tests, its documentation nor the rationales of held-outs 6 and 7 (only the corpus
source for the format and the labelling rule, held-out 5's source for the format, and held-out 6's *code* for the
build mechanism). Every label was fixed by hand, and re-checked against the case's fields, before the checker was
run on any of these texts; nothing was tuned on it. Same labelling rule as ``rationale_corpus_source.py``:
``{{...}}`` marks every statement about this image that the case's fields make false (plainly or with a strong
hedge: "likely", "consistent with", "suggesting"; a statement the model retracts a moment later is marked, as the
corpus marks its retracted "MRI"). As in held-outs 4 to 7, ``[[...]]`` marks a *hedged hallucination*: a finding
or diagnosis the case does not have, put forward with a weak hedge ("possible", "may", "might", "could",
"cannot be excluded", "可能") about this image; it is not a gold ``contradicted`` span. Restated options,
differentials weighed and textbook knowledge are never marked.

Explicit absence. Each row's case carries ``meta.findings_complete``:

- the corpus's own cases (:data:`rationale_corpus_source.CASES`) already carry ``meta.findings_complete`` true
  (the corpus rule: a finding not listed is absent) and are used as they are;
- :data:`NEW_CASES` are six cases of this set whose finding lists are incomplete (``findings_complete`` false),
  after other sources than held-outs 6 and 7 used: a PadChest radiograph (labels mined from a Spanish report that
  negates effusion, pneumothorax and cardiomegaly), a MIMIC-CXR-JPG label row (CheXpert labeller: atelectasis and
  effusion 1, oedema, pneumonia and pneumothorax 0, the rest blank), an LIDC-IDRI nodule (readers mark nodules,
  nothing else), an INbreast mass (BI-RADS 4; calcifications and distortions are annotated exhaustively there,
  so both are stated absent), a Kermany OCT2017 B-scan (one-hot DME among CNV, DME, drusen, normal) and an RSNA
  bone-age hand radiograph (no finding labels at all). There an invented finding that is not in ``absent`` cannot
  be decided and is left unmarked (and a weakly hedged one is not a hedged hallucination); one in ``absent``, or
  a sub-type of one (interstitial oedema, aspiration pneumonia, soft drusen, pleomorphic calcifications, a
  tension pneumothorax ...), is marked. Modality, plane, sequence, window, side, region, the listed findings'
  attributes, a denial of a listed finding, a normal-study claim on an abnormal case, the diagnosis and the grade
  are labelled as in the corpus.

Kinds held: laterality away from the finding word ("on the right side there is ...", "the image's left is the
patient's right", a side in a table row, Chinese 左/右 inside the clause, "bilateral"); counts in words, numerals,
Chinese and "more than five"; sizes in mm, cm, words, percent and Chinese units; wrong modality, plane, view,
sequence, CT window, region and organ; margins, shapes, echo and signal descriptors; grades (severity, NPDR
stage, BI-RADS category); invented findings in numbered lists, Markdown tables, label tables, measurement lists,
checklists and IMPRESSION lines; normal-study claims and denials; the wrong sibling or the mimic; retracted
statements. Sub-types and synonyms of a case's true finding or diagnosis (an intracerebral haematoma, a
Colles-type fracture, a low-grade astrocytoma, a lobar pneumonia, bullous emphysema, a simple hepatic cyst) are
supported and never marked. Texts are long 2026-style thinking traces with self-corrections, differentials and
restated options, report-style FINDINGS/IMPRESSION sections, tables and mixed Chinese/English. Regenerate with
``python tests/data/rationale_heldout8_source.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import rationale_corpus_source as _src  # noqa: E402  (the corpus's cases and its one build/write)

_INCOMPLETE = {"findings_complete": False}

NEW_CASES: dict[str, dict] = {
    # PadChest: labels mined from the Spanish report ("enfisema; granuloma calcificado LSI; sin derrame pleural ni
    # neumotórax; ICT normal"); only what the report names is labelled
    "padchest_emphysema": {"modality": "X-ray", "plane": "PA", "body_region": "chest", "structures": ["heart", "lung"],
                           "findings": [{"label": "emphysema", "attributes": {"laterality": "bilateral"}},
                                        {"label": "calcified granuloma", "attributes": {"laterality": "left"}}],
                           "diagnosis": "COPD", "meta": _INCOMPLETE,
                           "absent": ["pleural effusion", "pneumothorax", "cardiomegaly"]},
    # MIMIC-CXR-JPG row (CheXpert labeller on the report): Atelectasis 1, Pleural Effusion 1, Edema 0, Pneumonia 0,
    # Pneumothorax 0, every other column blank
    "mimic_atelectasis": {"modality": "X-ray", "plane": "AP", "body_region": "chest", "structures": ["heart", "lung"],
                          "findings": [{"label": "atelectasis", "attributes": {
                              "laterality": "left", "location": "lower lobe"}},
                                       {"label": "pleural effusion", "attributes": {"laterality": "left"}}],
                          "diagnosis": None, "meta": _INCOMPLETE,
                          "absent": ["pneumothorax", "pulmonary oedema", "pneumonia"]},
    # LIDC-IDRI: the readers mark nodules (with their characteristics) and nothing else of the chest
    "lidc_nodule": {"modality": "CT", "plane": "axial", "sequence": "lung window", "body_region": "chest",
                    "structures": ["lung"], "findings": [{"label": "nodule", "attributes": {
                        "laterality": "left", "location": "lower lobe", "size_mm": 9, "margin": "lobulated"}}],
                    "diagnosis": None, "meta": _INCOMPLETE, "absent": []},
    # INbreast: a mass contour with its BI-RADS category; calcifications and distortions are annotated exhaustively
    # in that set, so on this image they are stated absent; other findings are not labelled
    "inbreast_mass": {"modality": "mammography", "plane": "CC", "body_region": "breast", "structures": [],
                      "findings": [{"label": "mass", "attributes": {
                          "laterality": "right", "shape": "irregular", "margin": "indistinct"}}],
                      "diagnosis": None, "severity": "BI-RADS 4", "meta": _INCOMPLETE,
                      "absent": ["calcification", "architectural distortion"]},
    # Kermany OCT2017: one class of four (CNV, DME, DRUSEN, NORMAL) per B-scan; no lesion labels
    "oct_dme": {"modality": "OCT", "body_region": "eye", "structures": ["retina", "macula"], "findings": [],
                "diagnosis": "diabetic macular oedema", "meta": _INCOMPLETE,
                "absent": ["choroidal neovascularisation", "drusen"]},
    # RSNA Pediatric Bone Age: a hand radiograph with the bone age and sex only; no finding labels, no side field
    "rsna_boneage": {"modality": "X-ray", "plane": "PA", "body_region": "hand", "structures": [], "findings": [],
                     "diagnosis": None, "meta": _INCOMPLETE, "absent": []},
}

CASES: dict[str, dict] = {**_src.CASES, **NEW_CASES}

ENTRIES: list[tuple[str, str, str]] = [
    # ---- cxr_left_effusion (X-ray, PA, chest; left pleural effusion, moderate)
    ("cxr_left_effusion", "qwen3-thinking", "<think>\nLet me go through this systematically. Projection first: the "
     "scapulae are rotated clear of the lung fields and the clavicles are horizontal, so posteroanterior. Which side "
     "is abnormal? I need the side marker before I say anything... the 'L' marker sits on the side of the opacity, "
     "so it is the left hemithorax. There is a homogeneous density at the base with a concave upper border climbing "
     "the lateral chest wall, a meniscus. Pleural effusion, roughly a third of the hemithorax, so moderate. The right "
     "costophrenic angle is sharp. Heart size looks normal.\n\nOptions: A. pneumothorax B. pleural effusion "
     "C. consolidation D. normal. Consolidation would give air bronchograms, which I don't see.\n</think>\n\n"
     "Final answer: B"),
    ("cxr_left_effusion", "gpt-5", "FINDINGS:\n- Lines/tubes: none.\n- Pleura: {{On the right side}} there is a "
     "moderate pleural effusion layering along the lateral chest wall. No pneumothorax.\n- Heart/mediastinum: normal "
     "size and contour.\n\nIMPRESSION: Moderate pleural effusion, {{right}}.\n\nFinal answer: B"),
    ("cxr_left_effusion", "chinese", "这是一张后前位胸片 (PA chest radiograph)。"
     "左侧肋膈角消失，左下肺野见大片均匀致密影，上缘呈外高内低的弧形，为典型的胸腔积液征象，量为中等。另外{{右肺上叶可见一厚壁空洞}}，[[结核可能]]。\n答案：B"),
    ("cxr_left_effusion", "markdown", "| Feature | Assessment |\n|---|---|\n| Projection | PA |\n"
     "| Effusion | yes, left |\n| Volume | {{small, about 10% of the hemithorax}} |\n"
     "| Mediastinal shift | {{toward the right}} |\n| Other | {{left lower lobe collapse}} |\n\n**Answer:** B"),
    ("cxr_left_effusion", "deepseek-r1", "<think>\nHmm, is this AP or PA? The scapulae are out of the way, PA then. "
     "The left hemidiaphragm is obscured and there is fluid tracking up laterally. How much? Up to about the level "
     "of the hilum... moderate, I'd say. Anything else? The right heart border is crisp. I also notice {{a calcified "
     "granuloma in the right mid zone}}, incidental.\n\nThe options again: A. consolidation B. pneumothorax "
     "C. pleural effusion D. mass. Option C fits.\n</think>\n\n**Answer: C**"),
    ("cxr_left_effusion", "gemini", "**Analysis**\n1. **Modality & view:** Chest radiograph, PA.\n2. **Key finding:** "
     "{{bilateral}} pleural effusions, left greater than right.\n3. **Severity:** moderate on the left.\n"
     "4. **Cause:** [[an underlying lung mass]] cannot be excluded on a single view.\n\n**Answer:** B"),
    ("cxr_left_effusion", "llava-med", "The chest X-ray shows a pleural effusion on the left side. The effusion "
     "appears moderate in size. The lungs show {{diffuse interstitial markings}}, which could suggest "
     "[[pulmonary fibrosis]]."),
    # ---- cxr_normal (X-ray, PA, chest; normal)
    ("cxr_normal", "gpt-5", "Step-by-step:\n1. Technique: PA chest radiograph, adequate inspiration (10 posterior "
     "ribs), no rotation.\n2. Airway: trachea midline.\n3. Lungs: clear, no focal opacity.\n4. Pleura: no effusion "
     "or pneumothorax.\n5. Heart: cardiothoracic ratio under 0.5.\n6. Bones and soft tissues: unremarkable.\n\n"
     "Impression: no acute cardiopulmonary abnormality.\n\nFinal answer: A"),
    ("cxr_normal", "qwen3-thinking", "<think>\nThe question asks which finding is present: A. nodule B. effusion "
     "C. pneumothorax D. none. Let me scan zone by zone. Right upper zone... there's a round density. Actually I see "
     "{{two small nodules in the right upper zone, each about 8 mm}}. Could they be nipple shadows? Nipple shadows "
     "sit in the lower zones and usually come in pairs, one on each side. These are higher. So nodules.\n</think>\n"
     "Final answer: A"),
    ("cxr_normal", "chinese", "后前位胸片。双肺野透亮度{{增高}}，膈肌低平，"
     "符合{{肺气肿}}表现。心影{{呈靴形}}。\n答案：C"),
    ("cxr_normal", "markdown", "### Findings\n- **Lungs:** clear\n- **Pleura:** {{small left effusion}} (blunted "
     "left costophrenic angle)\n- **Heart:** normal\n- **Bones:** {{old healed fracture of the right sixth rib}}\n\n"
     "### Impression\n{{Abnormal}} study.\n\n**Answer:** B"),
    ("cxr_normal", "deepseek-r1", "<think>\nHmm. PA film. I'll check the hidden areas: apices, behind the heart, "
     "below the diaphragm. Behind the heart I can't really tell, a [[retrocardiac consolidation]] might be hiding "
     "there, hard to exclude on one view. Everything else is clear. I'd call it normal.\n</think>\nAnswer: D"),
    ("cxr_normal", "gemini", "**View:** {{AP}} supine portable radiograph.\n**Findings:** Lungs clear, normal "
     "cardiomediastinal contour, no effusion.\n**Impression:** Normal chest.\n**Answer:** D"),
    ("cxr_normal", "llava-med", "The image is a chest X-ray of a patient with {{cardiomegaly}} and {{pulmonary "
     "edema}}. There is {{bilateral pleural effusion}}."),
    # ---- cxr_pneumonia (X-ray, AP, chest; right consolidation; pneumonia)
    ("cxr_pneumonia", "gpt-5", "Reasoning:\n- Projection: AP (portable; the scapulae overlie the lungs).\n- Dense "
     "airspace opacity in the right lower zone with air bronchograms, silhouetting the right hemidiaphragm but "
     "sparing the right heart border: right lower lobe.\n- No large effusion.\n- Favoured diagnosis: lobar "
     "(bacterial) pneumonia.\nDifferential: atelectasis (less likely, no volume loss), aspiration.\n\n"
     "Final answer: C"),
    ("cxr_pneumonia", "qwen3-thinking", "<think>\nFirst the view. It's {{PA}}... hmm, actually the scapulae overlap "
     "the lung fields and the heart looks magnified, so this is AP. OK, AP.\nThe consolidation: on the patient's "
     "right there is patchy airspace disease in the lower zone. The left lower zone shows {{a similar patchy "
     "opacity}} too, so this is {{bilateral}} pneumonia.\n</think>\nFinal answer: B"),
    ("cxr_pneumonia", "chinese", "床边胸片 AP 位。右肺中下野见片状实变影，内见支气管充气征 (air bronchogram)。"
     "另见{{左侧少量胸腔积液}}。诊断：右下肺炎。\n答案：A"),
    ("cxr_pneumonia", "markdown", "1. **Technique:** AP portable\n2. **Right lung:** lower-zone consolidation\n"
     "3. **Left lung:** clear\n4. **Heart size:** {{enlarged (CTR about 0.6)}}\n5. **Devices:** {{right internal "
     "jugular central line, tip in the SVC}}\n\n**Diagnosis:** pneumonia\n\nAnswer: C"),
    ("cxr_pneumonia", "gemini", "**Interpretation:** Right lower lobe consolidation. Within it there is {{a cavity "
     "with an air-fluid level}}, suggesting {{lung abscess}} formation.\n**Answer:** D"),
    ("cxr_pneumonia", "deepseek-r1", "<think>\nWhere's the opacity... on the left side? No: the heart is on the left "
     "and the opacity is on the opposite side, so right. Right lower zone, with air bronchograms. Pneumonia. Could "
     "there be [[a right lower lobe mass]] behind it with post-obstructive change? Possible, can't exclude without "
     "CT.\n</think>\nAnswer: C"),
    ("cxr_pneumonia", "llava-med", "The chest x-ray shows an opacity in the right lung, which could be indicative "
     "of pneumonia. The heart size is normal."),
    # ---- ct_nodule (CT, axial, lung window, chest; right nodule 14 mm, spiculated)
    ("ct_nodule", "gpt-5", "Measurements:\n- Nodule: right lung, 14 x 11 mm, spiculated margin\n- {{Second nodule: "
     "left upper lobe, 5 mm}}\n- Mediastinal nodes: {{12 mm short axis (subcarinal)}}\n\nLung-RADS: 4B\n\n"
     "Final answer: B"),
    ("ct_nodule", "qwen3-thinking", "<think>\nOkay, axial slice in lung window: parenchyma grey, vessels visible, "
     "mediastinum saturated white. One lesion in the right lung, irregular, with spicules radiating out. Size from "
     "the scale bar is about 1.4 cm. Posteriorly there is also {{a small right pleural effusion}}.\n"
     "Options: A. ground-glass nodule B. spiculated solid nodule C. calcified granuloma D. cavity. B.\n</think>\n"
     "Final answer: B"),
    ("ct_nodule", "chinese", "胸部CT肺窗轴位：上叶尖后段见一毛刺状结节，直径约1.4 cm，结节位于{{左侧}}。\n答案：B"),
    ("ct_nodule", "markdown", "| Parameter | Value |\n|---|---|\n| Modality | CT |\n| Plane | {{coronal}} |\n"
     "| Window | {{mediastinal}} |\n| Lesion | nodule, right |\n| Margin | spiculated |\n| Size | {{about 3 mm}} |\n\n"
     "**Answer:** B"),
    ("ct_nodule", "deepseek-r1", "<think>\nThe question: is the margin smooth? The edge has fine linear strands, "
     "spiculation, not smooth. So the answer is no. Side: the lesion is in the right lung. Also the {{left lung shows "
     "extensive emphysema}}.\n</think>\nno"),
    ("ct_nodule", "gemini", "**Window:** lung\n**Plane:** axial\n**Finding:** a solitary pulmonary nodule in the "
     "right lower lobe with spiculated margins, measuring {{about four millimetres}}.\n**Answer:** B"),
    ("ct_nodule", "llava-med", "The CT image shows a {{large mass}} in the right lung {{with cavitation}}. "
     "Answer: A"),
    # ---- mri_glioma (MRI, axial, T2, head; left mass, hyperintense; glioma; mimic meningioma)
    ("mri_glioma", "gpt-5", "TECHNIQUE: Axial T2-weighted MRI of the brain.\nFINDINGS: Infiltrative T2-hyperintense "
     "intra-axial mass centred in the left frontal lobe.\nIMPRESSION: Diffuse glioma, likely a low-grade "
     "astrocytoma.\n\nFinal answer: B"),
    ("mri_glioma", "qwen3-thinking", "<think>\nLet me figure out the sequence. CSF is bright, so T2. The lesion: in "
     "radiological convention the patient's left is on the image right. The abnormal signal is on the image left, "
     "which means the patient's {{right}} hemisphere. So a frontal mass, T2 hyperintense. Glioma vs meningioma: it is "
     "intra-axial, so glioma.\n</think>\nFinal answer: C"),
    ("mri_glioma", "chinese", "MRI T2WI 轴位：{{右侧}}额颞叶见团块状长T2信号影，边界欠清，考虑胶质瘤。\n答案：A"),
    ("mri_glioma", "markdown", "1. Modality: MRI\n2. Sequence: T2\n3. Plane: axial\n4. Lesion: left hemisphere, "
     "{{hypointense}}\n5. Enhancement: {{avid ring enhancement}}\n6. Dx: glioma\n\nAnswer: A"),
    ("mri_glioma", "deepseek-r1", "<think>\nExtra-axial or intra-axial? I see a CSF cleft and a broad dural base. "
     "So extra-axial: {{meningioma}}. Hmm, but the T2 brightness... meningiomas can be iso- to hyperintense on T2. "
     "I'll go with meningioma.\n</think>\nAnswer: D"),
    ("mri_glioma", "gemini", "**Findings:** A large heterogeneous T2-hyperintense mass in the left hemisphere with "
     "{{a 12 mm rightward midline shift}}.\n**Impression:** Glioblastoma.\n**Answer:** A"),
    ("mri_glioma", "llava-med", "The image is a {{CT scan}} of the brain showing a lesion in the left hemisphere, "
     "likely a glioma."),
    # ---- mri_meningioma (MRI, coronal, T1 post-contrast, head; right mass; meningioma; mimic glioma)
    ("mri_meningioma", "gpt-5", "Coronal T1 post-gadolinium image: a dural-based, homogeneously enhancing "
     "extra-axial mass over the right cerebral convexity with a dural tail and a CSF cleft. Classic convexity "
     "meningioma (most likely WHO grade 1).\n\nFinal answer: B"),
    ("mri_meningioma", "qwen3-thinking", "<think>\nPlane? Both hemispheres and both temporal lobes are cut across "
     "together, so coronal. Sequence: fat bright and the vessels enhance, so post-contrast T1. The mass lies along "
     "the falx and extends to {{both sides}}, larger on the right. Meningioma.\n</think>\nFinal answer: B"),
    ("mri_meningioma", "chinese", "冠状位T1增强：右侧大脑凸面见一明显均匀强化的脑外占位，可见脑膜尾征，考虑脑膜瘤。"
     "{{邻近颅骨明显破坏}}。\n答案：B"),
    ("mri_meningioma", "markdown", "| Item | Value |\n|---|---|\n| Plane | coronal |\n| Sequence | {{T2 FLAIR}} |\n"
     "| Side | right |\n| Enhancement | homogeneous |\n| Diagnosis | meningioma |\n\nAnswer: B"),
    ("mri_meningioma", "deepseek-r1", "<think>\nRight-sided mass... is it really extra-axial? I'm not sure I see a "
     "CSF cleft, and the adjacent white matter looks involved. Let me reconsider intra-axial versus extra-axial. "
     "I think {{glioma}} is the better answer here.\n</think>\nAnswer: C"),
    ("mri_meningioma", "gemini", "**Modality:** MRI, {{sagittal}} T1 with contrast.\n**Findings:** a right "
     "parasagittal enhancing mass of about 3 cm, and {{multiple smaller dural-based lesions}} along the falx.\n"
     "**Answer:** B"),
    ("mri_meningioma", "llava-med", "The MRI shows a large, enhancing mass on the right side of the brain, "
     "possibly a [[metastasis]] or a meningioma."),
    # ---- mri_normal (MRI, axial, FLAIR, head; normal)
    ("mri_normal", "gpt-5", "Axial FLAIR MRI of the brain. No abnormal parenchymal FLAIR signal; ventricles and "
     "sulci appropriate for age; no mass effect; no extra-axial collection. Normal study.\n\nFinal answer: D"),
    ("mri_normal", "qwen3-thinking", "<think>\nThe sequence: CSF is dark but the brain has T2 weighting, so FLAIR. "
     "Are there periventricular lesions? I see {{several ovoid periventricular hyperintensities}} perpendicular to "
     "the ventricles, Dawson's fingers, so {{multiple sclerosis}}.\n</think>\nFinal answer: B"),
    ("mri_normal", "chinese", "颅脑MRI FLAIR 轴位：{{双侧半卵圆中心多发斑点状高信号}}，考虑{{脑小血管病}}。\n答案：C"),
    ("mri_normal", "markdown", "**Checklist**\n- [x] Modality: MRI\n- [x] Sequence: FLAIR\n- [x] Plane: "
     "{{coronal}}\n- [ ] Mass\n- [ ] Haemorrhage\n- [x] Normal\n\n**Answer:** D"),
    ("mri_normal", "deepseek-r1", "<think>\nFLAIR image. Everything looks symmetric. The hippocampi... the left one "
     "seems a touch bright? Could be [[mesial temporal sclerosis]], but it is subtle and probably normal variation. "
     "I'll call it normal.\n</think>\nAnswer: D"),
    ("mri_normal", "llava-med", "The brain MRI shows {{a ring-enhancing lesion in the left parietal lobe}}. "
     "Answer: A"),
    # ---- ct_haemorrhage (CT, axial, non-contrast, head; right haemorrhage 30 mm; severe)
    ("ct_haemorrhage", "gpt-5", "FINDINGS: Non-contrast axial CT. A 3.0 x 2.4 cm hyperdense intraparenchymal "
     "haematoma in the right basal ganglia. {{Intraventricular extension into the left lateral ventricle}}.\n"
     "IMPRESSION: Large right hypertensive intracerebral haemorrhage.\n\nFinal answer: A"),
    ("ct_haemorrhage", "qwen3-thinking", "<think>\nNon-contrast axial head CT, brain window. The hyperdensity is in "
     "the right hemisphere, about thirty millimetres across. Acute bleed. Severity: large, so severe.\n"
     "Options: A. ischaemic stroke B. haemorrhage C. tumour D. normal. B.\n</think>\nFinal answer: B"),
    ("ct_haemorrhage", "chinese", "头颅CT平扫轴位：右侧颞顶叶见一高密度影，"
     "大小约{{5×4厘米}}，CT值约65HU，考虑急性脑出血。{{中线结构向左移位约8毫米}}。\n答案：B"),
    ("ct_haemorrhage", "markdown", "| Finding | Side | Size | Acuity |\n|---|---|---|---|\n"
     "| Intraparenchymal haemorrhage | right | 30 mm | acute |\n| {{Hydrocephalus}} | bilateral | n/a | acute |\n\n"
     "**Severity:** {{moderate}}\n\n**Answer:** B"),
    ("ct_haemorrhage", "deepseek-r1", "<think>\nThis scan is {{contrast-enhanced}}... no wait, the vessels aren't "
     "bright and the choroid plexus isn't enhancing, so it's non-contrast. On the right side there is a hyperdense "
     "intracerebral haematoma, about 3 cm. Severe.\n</think>\nAnswer: B"),
    ("ct_haemorrhage", "gemini", "**Location:** In the {{left}} hemisphere, deep grey matter, there is an acute "
     "hyperdense haemorrhage of about 30 mm.\n**Severity:** severe.\n**Answer:** B"),
    ("ct_haemorrhage", "llava-med", "The CT scan shows an {{ischemic stroke}} in the right middle cerebral artery "
     "territory. Answer: A"),
    # ---- fundus_dr (fundus photography, eye; hard exudates + microaneurysms; DR, moderate)
    ("fundus_dr", "gpt-5", "Colour fundus photograph, macula-centred. Scattered microaneurysms and {{dot-blot "
     "haemorrhages}}, with a circinate ring of hard exudates temporal to the fovea. Grade: moderate NPDR.\n\n"
     "Final answer: C"),
    ("fundus_dr", "qwen3-thinking", "<think>\nFundus photograph. Let me list the lesions: tiny red dots near the "
     "macula, microaneurysms; yellow waxy deposits, hard exudates. No neovascularisation at the disc. Could this be "
     "severe NPDR by the 4-2-1 rule? I don't see venous beading or IRMA, so no. Moderate.\n</think>\n"
     "Final answer: C"),
    ("fundus_dr", "chinese", "彩色眼底照相：后极部见散在微血管瘤及硬性渗出，{{黄斑区可见视网膜前出血}}，"
     "诊断为{{增殖期}}糖尿病视网膜病变。\n答案：D"),
    ("fundus_dr", "markdown", "| Lesion | Present |\n|---|---|\n| Microaneurysms | yes |\n| Hard exudates | {{no}} |\n"
     "| Cotton-wool spots | {{yes}} |\n| Neovascularisation | no |\n\n**Grade:** moderate NPDR\n\nAnswer: C"),
    ("fundus_dr", "gemini", "**Modality:** {{fluorescein angiography}} (late phase).\n**Findings:** microaneurysms "
     "and hard exudates.\n**Diagnosis:** diabetic retinopathy, moderate.\n**Answer:** C"),
    ("fundus_dr", "llava-med", "The fundus image shows signs of {{glaucoma}} with an {{enlarged cup-to-disc ratio}}. "
     "Answer: A"),
    # ---- us_liver_cyst (ultrasound, abdomen, liver; cyst 25 mm, anechoic)
    ("us_liver_cyst", "gpt-5", "Measurements:\n- Lesion: right hepatic lobe, 25 x 22 mm\n- Echogenicity: anechoic\n"
     "- Posterior acoustic enhancement: present\n- Wall: thin, no septations\n\nImpression: simple hepatic cyst.\n\n"
     "Final answer: A"),
    ("us_liver_cyst", "qwen3-thinking", "<think>\nUltrasound. A round, thin-walled liver lesion. Size: the calipers "
     "read {{4.8 cm}}. Internal echoes? None, it's anechoic. Posterior enhancement behind it. Simple cyst.\n"
     "</think>\nFinal answer: A"),
    ("us_liver_cyst", "chinese", "腹部超声：肝右叶见一{{低回声}}结节，"
     "大小约2.5厘米，边界清，{{内见血流信号}}。\n答案：C"),
    ("us_liver_cyst", "markdown", "- **Modality:** ultrasound (sector probe)\n- **Organ:** {{spleen}}\n"
     "- **Lesion:** anechoic cyst, 2.5 cm\n- **Other:** {{gallstones with acoustic shadowing}}\n\nAnswer: A"),
    ("us_liver_cyst", "deepseek-r1", "<think>\nOK, the dark round lesion... is it in the kidney? No, it's inside the "
     "liver parenchyma, above the kidney. Cyst, about 25 mm. Is there [[a second smaller cyst]] near the dome? "
     "Maybe, hard to tell.\n</think>\nAnswer: A"),
    ("us_liver_cyst", "llava-med", "The ultrasound image shows a large {{solid}} mass in the liver, likely "
     "{{hepatocellular carcinoma}}."),
    # ---- xray_wrist (X-ray, lateral, upper limb; left fracture)
    ("xray_wrist", "gpt-5", "Lateral radiograph of the left wrist: transverse fracture of the distal radial "
     "metaphysis with dorsal angulation (Colles-type). No carpal dislocation.\n\nFinal answer: B"),
    ("xray_wrist", "qwen3-thinking", "<think>\nThe view: radius and ulna are superimposed, so lateral. Side: the "
     "marker says R, so this is the {{right}} wrist. There's a cortical break in the distal radius.\n</think>\n"
     "Final answer: B"),
    ("xray_wrist", "chinese", "左腕关节{{正位}}X线片：桡骨远端骨折，{{腕关节脱位}}。\n答案：A"),
    ("xray_wrist", "markdown", "| View | Side | Finding |\n|---|---|---|\n| lateral | left | distal radius fracture |\n"
     "| n/a | n/a | {{soft-tissue gas}} |\n\nAnswer: B"),
    ("xray_wrist", "deepseek-r1", "<think>\nThis radiograph shows {{the ankle}}: the bones look like tibia and "
     "fibula... no, wait, there are carpal bones, it's a wrist. Fracture of the distal radius, left side.\n"
     "</think>\nAnswer: B"),
    ("xray_wrist", "llava-med", "The X-ray image shows a fracture of the wrist with {{severe osteoarthritis}}."),
    # ---- cxr_pneumothorax (X-ray, PA, chest; right pneumothorax, mild)
    ("cxr_pneumothorax", "gpt-5", "PA chest radiograph. A thin visceral pleural line parallels the right apical "
     "chest wall with no lung markings peripheral to it; interpleural distance at the apex about 2 cm: small right "
     "pneumothorax. No mediastinal shift.\n\nFinal answer: A"),
    ("cxr_pneumothorax", "qwen3-thinking", "<think>\nPleural line at the right apex. Let me estimate the collapse "
     "with Light's index: about {{60%}}. That's {{large}}.\n</think>\nFinal answer: C"),
    ("cxr_pneumothorax", "chinese", "胸部正位片：{{左侧}}肺尖部可见脏层胸膜线，其外侧透亮无肺纹理，肺组织压缩约15%，"
     "考虑少量气胸。\n答案：A"),
    ("cxr_pneumothorax", "markdown", "1. Projection: PA\n2. Pneumothorax: right, small\n3. Rib fractures: {{right "
     "4th to 6th ribs}}\n4. Subcutaneous emphysema: {{extensive over the right chest wall}}\n\nAnswer: A"),
    ("cxr_pneumothorax", "deepseek-r1", "<think>\nIs there a pneumothorax? I look at the apices. At the right apex "
     "there might be a line, but it could be the scapular edge. Hmm. I think it's the scapula. {{No "
     "pneumothorax}}.\n</think>\nno"),
    ("cxr_pneumothorax", "gemini", "**Findings:** Small right apical pneumothorax. {{Bilateral upper-zone "
     "bullae}}.\n**Answer:** A"),
    ("cxr_pneumothorax", "llava-med", "The chest X-ray shows a right-sided pneumothorax and possibly [[a left lower "
     "lobe pneumonia]]."),
    # ---- ct_abd_normal (CT, axial, abdomen; liver, spleen, kidney; normal)
    ("ct_abd_normal", "gpt-5", "Axial contrast-enhanced CT of the abdomen (portal venous phase). Liver, spleen, "
     "pancreas, adrenals and kidneys are unremarkable. No lymphadenopathy, free fluid or free air.\n\n"
     "IMPRESSION: Normal CT abdomen.\n\nFinal answer: D"),
    ("ct_abd_normal", "qwen3-thinking", "<think>\nAxial CT. The liver has {{a 2 cm hypodense lesion in segment "
     "VII}}. Kidneys: {{right-sided hydronephrosis}}. So abnormal.\n</think>\nFinal answer: B"),
    ("ct_abd_normal", "chinese", "上腹部CT轴位：肝脏{{体积增大}}，脾脏{{多发低密度灶}}，双肾未见异常。\n答案：B"),
    ("ct_abd_normal", "markdown", "| Organ | Finding |\n|---|---|\n| Liver | normal attenuation |\n"
     "| Spleen | normal |\n| Kidneys | {{12 mm calculus in the left renal pelvis}} |\n"
     "| Aorta | {{aneurysmal, 4.5 cm}} |\n\n**Answer:** C"),
    ("ct_abd_normal", "gemini", "**Plane:** axial.\n**Region:** {{pelvis}}.\n**Findings:** no acute abnormality.\n"
     "**Answer:** D"),
    ("ct_abd_normal", "deepseek-r1", "<think>\nAbdominal CT. Organs look normal. The pancreatic tail is maybe "
     "slightly bulky; could be [[early pancreatitis]], but probably normal.\n</think>\nAnswer: D"),
    # ---- mammo_mass (mammography, MLO, breast; left mass, spiculated)
    ("mammo_mass", "gpt-5", "Left MLO mammogram: an irregular high-density mass with spiculated margins in the upper "
     "breast; no associated calcifications. BI-RADS 5, highly suggestive of malignancy.\n\nFinal answer: C"),
    ("mammo_mass", "qwen3-thinking", "<think>\nWhich breast? On an MLO the pectoralis is at the chest-wall side. The "
     "chest wall is on the right of the image, so this is the {{right}} breast. The mass has spiculated margins.\n"
     "</think>\nFinal answer: A"),
    ("mammo_mass", "chinese", "{{右乳}}MLO位钼靶：外上象限见一不规则肿块，"
     "边缘毛刺，{{伴簇状细小钙化}}。BI-RADS 5。\n答案：C"),
    ("mammo_mass", "markdown", "| Descriptor | Value |\n|---|---|\n| View | {{CC}} |\n| Shape | irregular |\n"
     "| Margin | {{obscured}} |\n| Density | high |\n| Associated | {{skin thickening}} |\n\nAnswer: C"),
    ("mammo_mass", "gemini", "**Findings:** A spiculated mass in the left breast.\n**Axilla:** {{an enlarged, "
     "rounded lymph node with loss of the fatty hilum}}.\n**Answer:** C"),
    ("mammo_mass", "llava-med", "The mammogram shows a {{well-circumscribed}} mass in the left breast, likely a "
     "{{cyst}}."),
    # ---- ct_two_nodules (CT, axial, chest; two left nodules, 6 and 8 mm)
    ("ct_two_nodules", "gpt-5", "Axial chest CT: 2 solid pulmonary nodules in the left lung, 6 mm (lingula) and 8 mm "
     "(left lower lobe). No right-sided nodules. Fleischner: follow-up CT at 6 to 12 months.\n\nFinal answer: B"),
    ("ct_two_nodules", "qwen3-thinking", "<think>\nCounting: one nodule in the left upper lobe, another in the left "
     "lower lobe, and {{a third on the right}}. So {{three}} nodules in total.\n</think>\nFinal answer: C"),
    ("ct_two_nodules", "chinese", "胸部CT轴位：左肺见{{3个}}小结节，最大径约8毫米。\n答案：C"),
    ("ct_two_nodules", "markdown", "| # | Lobe | Size (mm) |\n|---|---|---|\n| 1 | LUL | 6 |\n| 2 | LLL | {{18}} |\n\n"
     "**Answer:** B"),
    ("ct_two_nodules", "gemini", "**Findings:** Multiple ({{more than five}}) tiny nodules scattered through the "
     "left lung, the largest 8 mm.\n**Answer:** D"),
    ("ct_two_nodules", "deepseek-r1", "<think>\nTwo nodules, left, 6 and 8 mm. Also there's {{a 2 cm right hilar "
     "mass}}: the right hilum looks bulky.\n</think>\nAnswer: B"),
    ("ct_two_nodules", "llava-med", "The CT image shows {{bilateral}} lung nodules, which could be [[metastases]]. "
     "Answer: C"),
    # ==== NEW_CASES (incomplete finding lists)
    # ---- padchest_emphysema (X-ray, PA, chest; bilateral emphysema, left calcified granuloma; COPD;
    #      absent: pleural effusion, pneumothorax, cardiomegaly)
    ("padchest_emphysema", "gpt-5", "FINDINGS: Hyperinflated lungs with flattened hemidiaphragms and bilateral "
     "upper-zone lucency, consistent with emphysema. Small calcified granuloma in the left mid zone. Heart size "
     "normal. No pleural effusion or pneumothorax.\nIMPRESSION: COPD changes; old granulomatous disease.\n\n"
     "Final answer: A"),
    ("padchest_emphysema", "qwen3-thinking", "<think>\nHyperlucent lungs, low flat diaphragms, large apical bullae: "
     "bullous emphysema. The calcified nodule, which side? It sits lateral to the {{right}} hilum, so a right mid "
     "zone granuloma. The heart looks big too, cardiothoracic ratio about 0.58, so {{cardiomegaly}}.\n</think>\n"
     "Final answer: B"),
    ("padchest_emphysema", "chinese", "胸部正位片：双肺透亮度增高，肺纹理稀疏，膈肌低平，"
     "符合肺气肿。左肺中野见一钙化结节，考虑陈旧性肉芽肿。{{右侧少量胸腔积液}}。\n答案：B"),
    ("padchest_emphysema", "markdown", "| Label | Present |\n|---|---|\n| emphysema | yes |\n"
     "| calcified granuloma | yes (left) |\n| pleural effusion | no |\n| {{pneumothorax | yes (small, right apex)}} |\n"
     "| interstitial pattern | yes |\n\nAnswer: C"),
    ("padchest_emphysema", "deepseek-r1", "<think>\nHyperlucent lungs on both sides: emphysema. Is there a small "
     "apical pneumothorax on the left? I can't be sure; [[a tiny left apical pneumothorax]] cannot be excluded. A "
     "right hilar mass might also be present, the hilum is a bit full.\n</think>\nAnswer: A"),
    ("padchest_emphysema", "gemini", "**View:** {{lateral}}\n**Lungs:** emphysema, upper-lobe predominant, "
     "{{confined to the right lung}}.\n**Other:** calcified granuloma on the left.\n**Diagnosis:** COPD.\n"
     "**Answer:** A"),
    ("padchest_emphysema", "llava-med", "The chest X-ray shows {{a normal chest with no significant "
     "abnormalities}}."),
    # ---- mimic_atelectasis (X-ray, AP, chest; left lower lobe atelectasis, left pleural effusion;
    #      absent: pneumothorax, pulmonary oedema, pneumonia)
    ("mimic_atelectasis", "gpt-5", "FINDINGS: Portable AP upright chest radiograph. Small left pleural effusion with "
     "adjacent left basilar atelectasis. No pulmonary vascular congestion or edema. No pneumothorax. Heart size "
     "top-normal.\nIMPRESSION: Small left effusion and basilar atelectasis; pneumonia is not suspected.\n\n"
     "Final answer: B"),
    ("mimic_atelectasis", "qwen3-thinking", "<think>\nLet me read this like a label set. Opacity at the left base: "
     "atelectasis or pneumonia? There is volume loss, so atelectasis. Plus the effusion on the same side. I also see "
     "Kerley B lines and perihilar haziness, so {{interstitial pulmonary edema}} as well.\n</think>\n"
     "Final answer: C"),
    ("mimic_atelectasis", "chinese", "床旁胸片（AP）：{{右}}下肺盘状肺不张，左侧少量胸腔积液。\n答案：B"),
    ("mimic_atelectasis", "markdown", "| Observation | Label |\n|---|---|\n| Atelectasis | 1 |\n"
     "| Pleural Effusion | 1 |\n| Edema | 0 |\n| {{Pneumonia | 1}} |\n| Pneumothorax | 0 |\n| Cardiomegaly | 1 |\n\n"
     "Answer: D"),
    ("mimic_atelectasis", "deepseek-r1", "<think>\nAP film, probably an ICU patient. Left base opacity... could this "
     "be [[aspiration pneumonia]]? Possibly. The effusion is on the left, small. Hmm, there's also {{a small right "
     "apical pneumothorax}}, yes, I see a pleural line.\n</think>\nAnswer: A"),
    ("mimic_atelectasis", "gemini", "**Projection:** {{PA}} erect.\n**Findings:** left lower lobe collapse (sail "
     "sign behind the heart) with a left effusion.\n**Impression:** {{left lower lobe pneumonia}}.\n**Answer:** C"),
    ("mimic_atelectasis", "llava-med", "The chest X-ray shows bilateral {{pulmonary edema}} and a left pleural "
     "effusion."),
    # ---- lidc_nodule (CT, axial, lung window, chest; left lower lobe nodule 9 mm, lobulated; absent: none)
    ("lidc_nodule", "gpt-5", "Axial CT, lung window. A 9 mm solid nodule with a lobulated contour in the left lower "
     "lobe. Mild centrilobular emphysema in the upper lobes. Lung-RADS 4A.\n\nFinal answer: B"),
    ("lidc_nodule", "qwen3-thinking", "<think>\nLung window, axial. One nodule. Side: it lies on the image's left; "
     "by radiological convention the nodule is therefore in the patient's {{right}} lung. So {{right}} lower lobe, "
     "about 9 mm, lobulated.\n</think>\nFinal answer: B"),
    ("lidc_nodule", "chinese", "胸部CT肺窗轴位：左肺下叶见一分叶状实性结节，"
     "大小约{{2.3厘米}}。另见右肺上叶多发磨玻璃影。\n答案：B"),
    ("lidc_nodule", "markdown", "| Field | Value |\n|---|---|\n| Modality | CT |\n| Plane | {{sagittal}} |\n"
     "| Window | {{bone}} |\n| Nodule | LLL, 9 mm, lobulated |\n| Calcification | none |\n"
     "| Other | mild emphysema |\n\n**Answer:** B"),
    ("lidc_nodule", "deepseek-r1", "<think>\nThe nodule is in the left lower lobe, roughly 9 mm. Margin: {{smooth "
     "and well circumscribed}}, so likely benign, maybe a hamartoma? Popcorn calcification may be there.\n</think>\n"
     "Answer: A"),
    ("lidc_nodule", "gemini", "**Modality:** {{MRI}} of the chest.\n**Finding:** left lower lobe nodule, 0.9 cm, "
     "lobulated.\n**Answer:** B"),
    ("lidc_nodule", "llava-med", "The CT image shows a small nodule in the left lower lung and a pleural effusion on "
     "the right."),
    # ---- inbreast_mass (mammography, CC, breast; right mass, irregular, indistinct; BI-RADS 4;
    #      absent: calcification, architectural distortion)
    ("inbreast_mass", "gpt-5", "Right CC view: an irregular mass with indistinct margins in the outer breast, about "
     "15 mm. No suspicious calcifications, no architectural distortion. Skin and nipple normal. BI-RADS 4, "
     "suspicious; biopsy recommended.\n\nFinal answer: C"),
    ("inbreast_mass", "qwen3-thinking", "<think>\nThe view is CC. The mass is in the {{left}} breast, irregular. "
     "Margins are {{circumscribed}}, fairly sharp. Associated findings: [[faint amorphous calcifications]] may be "
     "present around it. So {{BI-RADS 3}}.\n</think>\nFinal answer: A"),
    ("inbreast_mass", "chinese", "右乳CC位：外侧见不规则形肿块，边缘模糊，{{伴周围结构扭曲}}，{{可见细小多形性钙化}}。"
     "BI-RADS 4。\n答案：C"),
    ("inbreast_mass", "markdown", "| BI-RADS lexicon | Finding |\n|---|---|\n| Laterality | {{left}} |\n"
     "| Shape | {{round}} |\n| Margin | indistinct |\n| Density | high |\n| Calcifications | none |\n"
     "| Associated features | nipple retraction |\n| Category | 4 |\n\n**Answer:** C"),
    ("inbreast_mass", "deepseek-r1", "<think>\nRight breast, CC. Is this a mass or a focal asymmetry? It has convex "
     "outward borders, so I'll call it a mass. Margins are blurred, so indistinct. Calcifications? None seen. "
     "Category 4.\n</think>\nAnswer: C"),
    ("inbreast_mass", "gemini", "**Modality:** {{breast ultrasound}}\n**Laterality:** right\n**Finding:** irregular "
     "mass; {{segmental fine-linear branching calcifications}} extending toward the nipple.\n**Assessment:** "
     "{{BI-RADS 5}}\n**Answer:** D"),
    ("inbreast_mass", "llava-med", "The mammogram image shows {{a normal breast}} with no signs of malignancy."),
    # ---- oct_dme (OCT, eye; no finding labels; diabetic macular oedema; absent: CNV, drusen)
    ("oct_dme", "gpt-5", "Macular OCT B-scan: increased central retinal thickness with intraretinal hyporeflective "
     "cystoid spaces and scattered hyperreflective foci (hard exudates); the RPE line is intact. Consistent with "
     "diabetic macular edema.\n\nFinal answer: B"),
    ("oct_dme", "qwen3-thinking", "<think>\nOCT options: A. CNV B. DME C. drusen D. normal. I see fluid and an "
     "irregular RPE elevation with a fibrovascular look, so {{choroidal neovascularization}}. There are cystoid "
     "spaces too, but CNV explains both.\n</think>\nFinal answer: A"),
    ("oct_dme", "chinese", "OCT黄斑区扫描：视网膜层间见多个囊样低反射腔，黄斑中心凹增厚，"
     "RPE层下见{{多个圆顶状隆起（玻璃膜疣）}}。诊断：糖尿病性黄斑水肿。\n答案：B"),
    ("oct_dme", "markdown", "- **Modality:** {{fundus autofluorescence}}\n- **Findings:** cystoid intraretinal "
     "fluid, retinal thickening\n- **Diagnosis:** DME\n\n**Answer:** B"),
    ("oct_dme", "deepseek-r1", "<think>\nThe retina is thick with cysts: DME. Could there be [[soft drusen]] under "
     "the RPE as well? The RPE is a bit wavy, possibly. I'll keep DME.\n</think>\nAnswer: B"),
    ("oct_dme", "gemini", "**Findings:** Foveal depression preserved; retinal layers well delineated.\n"
     "**Impression:** {{Normal macular OCT}}.\n**Answer:** D"),
    ("oct_dme", "llava-med", "The OCT image shows a full-thickness macular hole with surrounding cystic changes. "
     "Answer: C"),
    ("oct_dme", "gpt-5", "OCT: a dome-shaped serous detachment of the neurosensory retina with clear subretinal "
     "fluid. Most consistent with {{central serous chorioretinopathy}}.\n\nFinal answer: D"),
    # ---- rsna_boneage (X-ray, PA, hand; no finding labels; absent: none)
    ("rsna_boneage", "gpt-5", "PA radiograph of the left hand and wrist of a child. Open physes at the distal radius, "
     "ulna, metacarpals and phalanges; the epiphyses of the middle phalanges are as wide as their metaphyses and the "
     "hook of the hamate is visible. Greulich-Pyle estimate: about 11 to 12 years. No fracture or focal bone "
     "lesion.\n\nFinal answer: C"),
    ("rsna_boneage", "qwen3-thinking", "<think>\nFirst: {{a foot radiograph}}... no, wait, there is an opposable "
     "thumb and carpal bones, so it's a hand. PA view. Physes open. Bone age around 10 to 11 years.\n</think>\n"
     "Final answer: B"),
    ("rsna_boneage", "chinese", "左手{{侧位}}X线片：各骨骺未闭合，腕骨骨化中心7枚，骨龄约11岁。\n答案：B"),
    ("rsna_boneage", "markdown", "| Item | Value |\n|---|---|\n| Modality | {{CT}} |\n| Region | hand/wrist |\n"
     "| Physes | open |\n| Bone age | about 11 y |\n| Findings | old fifth metacarpal fracture |\n\nAnswer: B"),
    ("rsna_boneage", "deepseek-r1", "<think>\nHand X-ray. Phalangeal physes are open; capping of the epiphyses is "
     "starting. Bone age about 12 years. I notice a subtle buckle fracture of the distal radius? Possibly. Soft "
     "tissues normal.\n</think>\nAnswer: B"),
    ("rsna_boneage", "gemini", "**Modality:** {{MRI}} (T1)\n**Region:** left hand\n**Assessment:** open growth "
     "plates; bone age about 11 years.\n**Answer:** B"),
    ("rsna_boneage", "llava-med", "The X-ray image shows {{the chest}} of a child with no abnormalities."),
]


def build() -> list[dict]:
    """The rows: the corpus's one ``build`` reads the markers, each row with this set's case (the corpus's
    own, or one of :data:`NEW_CASES` with its ``absent`` list, which the corpus's ``CASES`` lacks)."""
    return _src.build(ENTRIES, "w", hedged=True, cases=CASES)


if __name__ == "__main__":
    _src.write("rationale_heldout8.jsonl", build())
