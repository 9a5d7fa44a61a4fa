"""Source of ``rationale_heldout7.jsonl`` (issue 39, seventh set): a seventh fresh held-out set of hand-labelled
rationales, written in the heldout7 session by a helper who read neither the checker (``medr2.scoring.claims``),
its tests, its documentation nor held-out 6's rationales (only the corpus source for the format and labelling
rule, held-out 5's source for the format and held-out 6's *code* for the build mechanism). Every label was fixed
by hand before the checker was run on any of these texts; nothing was tuned on it. Same labelling rule as
``rationale_corpus_source.py``: ``{{...}}`` marks every statement about this image that the case's fields make
false (a plain statement or one with a strong hedge such as "likely", "consistent with", "考虑"; a statement the
model retracts a moment later is still marked, as in the corpus). As in held-out 4 to 6, ``[[...]]`` marks a
*hedged hallucination*: a finding or diagnosis the case does not have, put forward with a weak hedge ("may",
"possible", "could", "cannot exclude", "不除外") about this image; it is not a gold ``contradicted`` span.
Restated options, differentials being weighed, questions the model asks itself and textbook knowledge are never
marked. Sub-types and synonyms of a true finding or diagnosis (a hydrothorax, an intraparenchymal haematoma, a
Colles-type or tibial-plateau fracture, an astrocytoma or glioblastoma for a glioma, moderate NPDR, a pigmented
BCC) are supported and never marked.

Explicit absence. Each row's case carries ``meta.findings_complete``:

- the corpus's own cases (:data:`rationale_corpus_source.CASES`, which carry no ``meta``) are copied here with
  ``meta.findings_complete`` true (the corpus rule: a finding not listed is absent);
- :data:`NEW_CASES` are seven cases of this set whose finding lists are incomplete (``findings_complete`` false),
  each with the ``absent`` list its source states, after the label styles of: VinDr-CXR image labels (two local
  labels; global labels negative for pneumonia, tuberculosis and lung tumour), a CheXpert-style label table
  (cardiomegaly and oedema positive; pneumothorax, pleural effusion and consolidation negative), an MSD/BraTS
  partial segmentation slice (oedema and non-enhancing tumour drawn; the enhancing-tumour label empty on the
  slice), an IDRiD-style fundus grading image (DR grade 2, DME grade 0; no lesion masks), a knee radiograph from
  a fracture-detection set (a fracture box only), an ISIC 2019-style dermoscopy image (basal cell carcinoma; the
  seven other diagnoses absent) and a BUSI-style breast ultrasound (one benign mass mask).

  On these an invented finding that is not in ``absent`` cannot be decided and is left unmarked (a weakly hedged
  one is not a hedged hallucination either); one in ``absent``, or a sub-type of one (a subpulmonic effusion,
  lobar consolidation, clinically significant macular oedema, a seborrhoeic keratosis, a Spitz naevus, a cherry
  angioma, Bowen's disease, a central lung carcinoma, reactivation tuberculosis, an enhancing rim), is marked;
  weakly hedged, it is ``[[...]]``. Modality, plane, sequence, side, region, descriptors, grade, malignancy, the
  diagnosis, a denial of a listed finding and a normal-study claim are labelled as in the corpus.

The hallucinations are of varied kinds, as 2026 vision-language models write them: a side said away from the
finding word ("on the left side", "in the patient's left", "right > left", a side in a table row, Chinese 左/右
anywhere in the clause); counts in words, numerals and Chinese (三枚), "several", "bilateral"; sizes in mm, cm,
percent and Chinese units; wrong modality, plane, view, sequence, contrast phase, region and organ; wrong
descriptors (margin, shape, echo, signal); wrong grades and malignancy; invented findings in numbered lists,
Markdown tables, measurement lists, label tables and IMPRESSION lines; normal-study claims and denials; the wrong
sibling or the case's mimic; retracted statements; hedged ones. Texts are long thinking traces with
self-corrections, report-style FINDINGS/IMPRESSION sections, differentials, restated options, class-probability
tables and mixed Chinese/English. Row ids are ``u000`` on. Regenerate with
``python tests/data/rationale_heldout7_source.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import rationale_corpus_source as _src  # noqa: E402  (the corpus's cases and its one build/write)

_INCOMPLETE = {"findings_complete": False}

NEW_CASES: dict[str, dict] = {
    # VinDr-CXR style: one reader's local labels; the image-level (global) labels negative for these three
    "vindr_aorta_pleura": {"modality": "X-ray", "plane": "PA", "body_region": "chest", "structures": ["heart", "lung"],
                           "findings": [{"label": "aortic enlargement", "attributes": {}},
                                        {"label": "pleural thickening", "attributes": {"laterality": "right"}}],
                           "diagnosis": None, "meta": _INCOMPLETE,
                           "absent": ["pneumonia", "tuberculosis", "lung tumour"]},
    # CheXpert-style label table: positive 1.0 (cardiomegaly, edema), negative 0.0 (the absent ones), others blank
    "chexpert_cardiomegaly": {"modality": "X-ray", "plane": "AP", "body_region": "chest",
                              "structures": ["heart", "lung"],
                              "findings": [{"label": "cardiomegaly", "attributes": {}},
                                           {"label": "pulmonary oedema", "attributes": {"laterality": "bilateral"}}],
                              "diagnosis": None, "meta": _INCOMPLETE,
                              "absent": ["pneumothorax", "pleural effusion", "consolidation"]},
    # MSD Task01 / BraTS style slice: oedema and non-enhancing core drawn, the enhancing-tumour label empty here
    "brats_partial_flair": {"modality": "MRI", "plane": "axial", "sequence": "FLAIR", "body_region": "head",
                            "structures": ["brain"],
                            "findings": [{"label": "peritumoural oedema", "attributes": {
                                "laterality": "right", "intensity": "hyperintense"}},
                                         {"label": "non-enhancing tumour", "attributes": {"laterality": "right"}}],
                            "diagnosis": "glioma", "meta": _INCOMPLETE, "absent": ["enhancing tumour"]},
    # IDRiD-style disease grading: DR grade 2 (moderate NPDR), DME risk 0; no lesion masks for this image
    "idrid_grade2": {"modality": "fundus photography", "body_region": "eye", "structures": ["optic disc", "macula"],
                     "findings": [], "diagnosis": "diabetic retinopathy", "severity": "moderate",
                     "meta": _INCOMPLETE, "absent": ["macular oedema"]},
    # fracture-detection set: one fracture box per image, nothing else labelled
    "knee_fracture_box": {"modality": "X-ray", "plane": "AP", "body_region": "knee", "structures": [],
                          "findings": [{"label": "fracture", "attributes": {
                              "laterality": "right", "location": "tibial plateau"}}],
                          "diagnosis": None, "meta": _INCOMPLETE, "absent": []},
    # ISIC 2019 style classification: one of eight diagnoses, the other seven absent; no mask
    "isic_bcc": {"modality": "dermoscopy", "body_region": "skin", "structures": [], "findings": [],
                 "diagnosis": "basal cell carcinoma", "malignancy": "malignant", "meta": _INCOMPLETE,
                 "absent": ["melanoma", "melanocytic nevus", "benign keratosis", "dermatofibroma", "vascular lesion",
                            "actinic keratosis", "squamous cell carcinoma"]},
    # BUSI style breast ultrasound: class "benign", one mass mask; nothing else labelled
    "busi_benign_mass": {"modality": "ultrasound", "body_region": "breast", "structures": [],
                         "findings": [{"label": "mass", "attributes": {
                             "intensity": "hypoechoic", "margin": "well-defined", "shape": "oval"}}],
                         "diagnosis": None, "malignancy": "benign", "meta": _INCOMPLETE, "absent": []},
}

CASES: dict[str, dict] = {**{k: {**c, "meta": {"findings_complete": True}} for k, c in _src.CASES.items()},
                          **NEW_CASES}

ENTRIES: list[tuple[str, str, str]] = [
    # ---- cxr_left_effusion (X-ray, PA, chest; left pleural effusion, moderate; complete)
    ("cxr_left_effusion", "qwen3-thinking", "<think>\nAlright, let me go through this systematically. Technique "
     "first: a frontal chest film, the scapulae are rotated clear of the lung fields and the clavicles are "
     "horizontal, so PA rather than AP. The right lung is well aerated with normal vascular markings. On the left, "
     "the lower third of the hemithorax is homogeneously opaque with a concave upper border that climbs laterally, "
     "a meniscus. Hmm, could it be left lower lobe collapse instead? Collapse would give a triangular density "
     "behind the heart with volume loss; here the opacity layers and hides the hemidiaphragm. So a left pleural "
     "effusion. Volume: it reaches the lower hilum, so moderate.\n</think>\nThe radiograph shows a moderate "
     "left-sided hydrothorax.\n\nFinal answer: B"),
    ("cxr_left_effusion", "gpt-5", "FINDINGS:\n- Lines/tubes: none.\n- Lungs: {{patchy consolidation in the right "
     "mid zone}}.\n- Pleura: moderate left pleural effusion. No pneumothorax.\n- Heart and mediastinum: normal "
     "size and contour.\n\nIMPRESSION:\n1. Moderate left pleural effusion.\n2. {{Right mid-zone pneumonia}}.\n\n"
     "Final answer: C"),
    ("cxr_left_effusion", "chinese", "这是一张胸部正位片（PA view）。观察到{{右侧}}肋膈角消失，呈外高内低的弧形致密影，"
     "提示胸腔积液，量约为中等。心影大小正常，纵隔居中。\n答案：A"),
    ("cxr_left_effusion", "deepseek-r1", "<think>\nThe question: 'Which hemithorax contains the abnormality?' "
     "Options: A. right B. left C. both D. neither. The left hemidiaphragm is not visible and the opacity sits at "
     "the left base. Is there something on the right too? I check the right costophrenic angle: it is sharp, the "
     "faint density there is only a breast shadow. So the left side only.\n</think>\n**Answer: B**"),
    ("cxr_left_effusion", "markdown", "| Feature | Observation |\n|---|---|\n| Projection | PA |\n"
     "| Left hemithorax | moderate pleural effusion |\n| Right hemithorax | {{small effusion}} |\n"
     "| Cardiac silhouette | normal |\n\n**Answer:** C"),
    ("cxr_left_effusion", "gemini", "Looking at the radiograph, there is a {{massive}} left pleural effusion "
     "filling almost the whole left hemithorax. The right lung is clear.\n\n**Answer:** D"),
    ("cxr_left_effusion", "llava-med", "The chest X-ray shows a left pleural effusion; an underlying "
     "[[left basal lung mass]] cannot be excluded. Answer: B"),
    ("cxr_left_effusion", "qwen3-thinking", "<think>\n好的，先确定检查类型。This is a frontal chest radiograph "
     "and the scapulae are retracted, so PA. 左侧肋膈角消失，可见弧形上缘 (meniscus)... is that an air-fluid "
     "level? No, the upper border is curved, not straight, so no hydropneumothorax. The left heart border is "
     "partly hidden by the fluid, so I can't measure the CTR reliably. 右肺清晰。Options: A. pneumothorax "
     "B. pleural effusion C. consolidation D. cardiomegaly. B fits.\n</think>\n答案：B"),
    # ---- cxr_normal (X-ray, PA, chest; normal; complete)
    ("cxr_normal", "gpt-5", "Systematic review:\n1. Airway: trachea midline.\n2. Breathing: lungs clear, no focal "
     "opacity, no pneumothorax.\n3. Cardiac: cardiothoracic ratio about 0.45.\n4. Diaphragm: both hemidiaphragms "
     "well defined, costophrenic angles sharp.\n5. Everything else: no bony lesion.\n\nImpression: no acute "
     "cardiopulmonary abnormality.\n\nFinal answer: A"),
    ("cxr_normal", "qwen3-thinking", "<think>\nFirst, AP or PA? Clavicles horizontal, scapulae clear of the lungs: "
     "PA. Now the lungs... there's a faint rounded density in the left lower zone. Could be a nipple shadow: its "
     "margin fades laterally and there is a matching one on the right. Yes, nipple shadows. Heart normal. But the "
     "{{right hemidiaphragm is elevated}}, sitting about four centimetres above the left, which is more than "
     "usual.\n</think>\nFinal answer: C"),
    ("cxr_normal", "chinese", "胸部后前位片：双肺纹理清晰，未见实变及结节。{{双侧少量胸腔积液}}。心影不大。\n答案：C"),
    ("cxr_normal", "llava-med", "The chest X-ray shows clear lung fields; {{the mediastinum is prominent}}, "
     "which may indicate [[an aortic aneurysm]]. Answer: B"),
    ("cxr_normal", "markdown", "**Technique:** {{AP supine}} radiograph\n**Lungs:** clear\n**Heart:** normal "
     "size\n**Impression:** normal chest\n\nAnswer: A"),
    ("cxr_normal", "deepseek-r1", "<think>\nLet me scan the apices first. {{Two small calcified granulomas in "
     "the right upper zone}}, old healed infection probably. Otherwise the lungs are clear, the heart is not "
     "enlarged and the angles are sharp.\n</think>\nAnswer: B"),
    # ---- cxr_pneumonia (X-ray, AP, chest; right consolidation; pneumonia; complete)
    ("cxr_pneumonia", "gemini", "**Findings:** dense airspace consolidation in the right lower lobe with air "
     "bronchograms; the right heart border stays sharp, so it is lower rather than middle lobe.\n"
     "**Impression:** right lower lobe pneumonia, lobar pattern.\n**Answer:** B"),
    ("cxr_pneumonia", "gpt-5", "AP portable chest radiograph.\n\nFindings:\n- Consolidation: present, right lower "
     "zone.\n- Pleural spaces: {{bilateral small effusions}}.\n- Heart: normal size.\n\nImpression: right lower "
     "lobe pneumonia with {{parapneumonic effusions}}.\n\nFinal answer: B"),
    ("cxr_pneumonia", "qwen3-thinking", "<think>\nLet me orient myself with the side marker. The dense opacity "
     "sits on the {{left side}}, low down, and it silhouettes the hemidiaphragm. Hmm, AP films can be tricky, "
     "but I'll trust the marker. Air bronchograms are visible inside it, so consolidation, and with the clinical "
     "question that means pneumonia.\n</think>\nAnswer: A"),
    ("cxr_pneumonia", "chinese", "床旁前后位胸片。右下肺野大片实变影，其内可见支气管充气征，符合大叶性肺炎。另见"
     "{{左上肺空洞}}，[[不除外肺结核]]。\n答案：B"),
    ("cxr_pneumonia", "markdown", "1. Modality: chest radiograph, {{lateral}} projection\n2. Abnormality: right "
     "lower lobe consolidation\n3. Most likely diagnosis: bacterial pneumonia\n\nAnswer: C"),
    ("cxr_pneumonia", "llava-med", "The image shows a chest X-ray with {{no evidence of consolidation}}. The "
     "lungs are {{clear}}. Answer: D"),
    # ---- ct_nodule (CT, axial, lung window, chest; right nodule 14 mm, spiculated; complete)
    ("ct_nodule", "deepseek-r1", "<think>\nOkay, a CT slice. Which plane? The vertebral body is posterior and both "
     "lungs lie left and right of it, so axial. Window: lung parenchyma grey with visible vessels, mediastinum "
     "washed out, so lung window. The lesion: in the right upper lobe a solid nodule with radiating strands, "
     "spiculated. Size... is it closer to 2 cm? The scale bar says 14 mm. OK, 14 mm.\n</think>\nA 14 mm "
     "spiculated right upper lobe nodule.\n\nFinal answer: C"),
    ("ct_nodule", "gpt-5", "Axial CT, {{mediastinal window}}.\nFindings: right upper lobe nodule, "
     "{{smoothly marginated}}, measuring 14 mm, and a {{small right pleural effusion}}.\n\nFinal answer: B"),
    ("ct_nodule", "chinese", "胸部CT肺窗轴位：右肺上叶见一实性结节，直径约{{3.5厘米}}，边缘可见毛刺。\n答案：D"),
    ("ct_nodule", "markdown", "Measurements:\n- Long axis: 14 mm\n- Short axis: 11 mm\n- Location: {{left}} "
     "upper lobe\n- Margin: spiculated\n\nAnswer: B"),
    ("ct_nodule", "qwen3-thinking", "<think>\nAxial lung-window CT. There are {{three}} nodules in the right "
     "lung; the dominant one is 14 mm with spiculated margins, the others are tiny. The spiculation is the "
     "worrying feature.\n</think>\nFinal answer: B"),
    ("ct_nodule", "llava-med", "The CT image shows a spiculated nodule in the right lung, possibly with "
     "[[mediastinal lymphadenopathy]]. Answer: A"),
    ("ct_nodule", "gpt-5", "Reasoning summary\n\n1) Acquisition: axial CT through the upper chest, lung "
     "window (W 1500 / L -600).\n2) Lesion: solitary solid nodule, right upper lobe, posterior segment.\n"
     "3) Size: 14 x 12 mm.\n4) Morphology: spiculated margin, {{cavitation in its centre}}.\n5) Other: "
     "{{emphysema in both upper lobes}}; no effusion.\n\nImpression: suspicious right upper lobe nodule, "
     "Lung-RADS 4B.\n\nFinal answer: B"),
    # ---- mri_glioma (MRI, axial, T2-weighted, head; left mass, hyperintense; glioma; mimic meningioma; complete)
    ("mri_glioma", "qwen3-thinking", "<think>\nLet me identify the sequence. CSF in the ventricles is bright and "
     "FLAIR would suppress it, so this is T2-weighted, axial. There is a large hyperintense intra-axial mass in "
     "the left frontal lobe. Could it be a meningioma? There is no dural tail and no CSF cleft; it is centred in "
     "the white matter and infiltrative. So a glioma, perhaps a diffuse astrocytoma.\n</think>\nFinal answer: C"),
    ("mri_glioma", "gpt-5", "TECHNIQUE: Axial {{FLAIR}}.\nFINDINGS: Expansile hyperintense mass in the left "
     "cerebral hemisphere.\nIMPRESSION: {{meningioma}}.\n\nFinal answer: B"),
    ("mri_glioma", "chinese", "MRI T2WI轴位，病灶位于{{右侧}}额颞叶，呈高信号，边界不清，考虑弥漫性胶质瘤。\n答案：C"),
    ("mri_glioma", "deepseek-r1", "<think>\nHmm, a bright lesion on the left. Wait, is this actually a {{CT}}? "
     "The grey-white contrast is odd... no, CSF is bright, that's MR, T2. Intra-axial left mass, glioma.\n"
     "</think>\nAnswer: C"),
    ("mri_glioma", "markdown", "| Parameter | Value |\n|---|---|\n| Sequence | T2 |\n| Side | left |\n"
     "| Signal | {{hypointense}} |\n| Diagnosis | glioma |\n\n**Answer:** C"),
    ("mri_glioma", "llava-med", "The MRI shows a left hemispheric mass with {{surrounding vasogenic oedema}}, "
     "consistent with a high-grade glioma. Answer: C"),
    ("mri_glioma", "qwen3-thinking", "<think>\nThe question: 'Where is the lesion?' A. right frontal B. left "
     "frontal C. right occipital D. left occipital. Radiological convention: the patient's left is on the image "
     "right. The bright mass is on the image right and anterior, so the patient's left frontal lobe. Hmm, let me "
     "re-check the convention: axial images are viewed from the feet, image right = patient left. Yes. B.\n"
     "</think>\nB"),
    # ---- mri_meningioma (MRI, coronal, T1 post-contrast, head; right mass; meningioma; mimic glioma; complete)
    ("mri_meningioma", "gemini", "**Sequence and plane:** coronal T1 after gadolinium.\n**Finding:** "
     "homogeneously enhancing, broad-based dural mass over the right cerebral convexity with a dural tail.\n"
     "**Impression:** convexity meningioma.\n**Answer:** A"),
    ("mri_meningioma", "gpt-5", "Coronal post-contrast T1. Extra-axial enhancing lesion in the patient's "
     "{{left}} hemicranium. Diagnosis: meningioma.\n\nFinal answer: A"),
    ("mri_meningioma", "qwen3-thinking", "<think>\nOptions: A) meningioma B) glioma C) metastasis D) schwannoma. "
     "The mass enhances, but the enhancement is {{ring-like}} around a {{necrotic centre}}, and it seems to arise "
     "from the brain itself. So I'll go with B, a {{glioblastoma}}.\n</think>\nB"),
    ("mri_meningioma", "chinese", "冠状位T1增强：右侧大脑凸面见一宽基底脑外肿块，明显均匀强化，可见硬膜尾征，"
     "诊断脑膜瘤。\n答案：A"),
    ("mri_meningioma", "deepseek-r1", "<think>\nPlane first. I see both hemispheres with the ventricles in the "
     "middle... this is {{axial}}. Hmm, no: the temporal lobes sit below the Sylvian fissures in the same slice, "
     "so it is coronal. Right-sided dural-based enhancing mass: meningioma.\n</think>\nA"),
    ("mri_meningioma", "markdown", "- Modality: MRI\n- Sequence: {{T2-weighted}}\n- Location: right, "
     "extra-axial\n- Count: {{two}} masses\n\nAnswer: A"),
    # ---- mri_normal (MRI, axial, FLAIR, head; normal; complete)
    ("mri_normal", "gpt-5", "Axial T2-FLAIR image of the brain. Grey-white differentiation preserved; no "
     "parenchymal signal abnormality; ventricles and sulci appropriate for age; no midline shift. Normal "
     "study.\n\nFinal answer: D"),
    ("mri_normal", "qwen3-thinking", "<think>\nAxial FLAIR. Ventricles symmetric. Hmm, wait, there are "
     "{{a few punctate hyperintense foci in the periventricular white matter}}, likely "
     "{{small vessel ischaemic change}}. Not a tumour, though.\n</think>\nAnswer: D"),
    ("mri_normal", "chinese", "颅脑MRI {{T1加权}}轴位像，{{左侧基底节区小片状梗死灶}}。\n答案：B"),
    ("mri_normal", "llava-med", "The image is a {{sagittal}} MRI of the brain showing "
     "{{hydrocephalus with enlarged ventricles}}. Answer: A"),
    ("mri_normal", "markdown", "## Answer\n**D (no tumour)**\n\n### Why\n- No mass effect\n- No abnormal "
     "FLAIR signal\n- Ventricles normal in size"),
    ("mri_normal", "deepseek-r1", "<think>\nNo mass. There is possibly a [[small arachnoid cyst]] in the left "
     "middle cranial fossa? Not sure, it may be just CSF space.\n</think>\nD"),
    # ---- ct_haemorrhage (CT, axial, non-contrast, head; right haemorrhage 30 mm; severe; complete)
    ("ct_haemorrhage", "qwen3-thinking", "<think>\nNon-contrast head CT, axial. A hyperdense, well-defined "
     "collection in the right basal ganglia, about three centimetres, with mass effect. Could it be a calcified "
     "tumour? Its density is about 60 HU and it is homogeneous, typical of acute blood. So an acute right "
     "intraparenchymal haematoma.\n</think>\nFinal answer: B"),
    ("ct_haemorrhage", "gpt-5", "FINDINGS: Acute intraparenchymal haemorrhage in the right cerebral hemisphere, "
     "approximately 30 x 22 mm, {{with intraventricular extension}}.\nIMPRESSION: right-sided intracerebral "
     "bleed.\n\nFinal answer: B"),
    ("ct_haemorrhage", "chinese", "头颅CT平扫示右侧颞叶高密度灶，大小约{{1.2厘米}}，考虑{{少量}}出血。\n答案：A"),
    ("ct_haemorrhage", "markdown", "| Item | Value |\n|---|---|\n| Modality | CT, non-contrast |\n"
     "| Finding | haemorrhage, right |\n| Size | about 3 cm |\n| Severity | {{mild}} |\n\nAnswer: A"),
    ("ct_haemorrhage", "gemini", "**Side:** the hyperdense collection lies in the patient's {{left}} "
     "hemisphere, in the lentiform nucleus region.\n**Finding:** acute haematoma.\n**Answer:** C"),
    ("ct_haemorrhage", "deepseek-r1", "<think>\nThe scan is {{contrast-enhanced}}, the vessels look bright. "
     "The dense area on the right is about 30 mm, a bleed.\n</think>\nB"),
    ("ct_haemorrhage", "deepseek-r1", "<think>\nOptions: A. epidural haematoma B. subdural haematoma "
     "C. intraparenchymal haemorrhage D. subarachnoid haemorrhage. An epidural would be biconvex, a subdural "
     "crescentic along the convexity. This blood is within the parenchyma of the right hemisphere, roughly "
     "round, about 3 cm. So C. There is also {{blood in the basal cisterns}}, a subarachnoid component.\n"
     "</think>\nC"),
    # ---- fundus_dr (fundus photography, eye; hard exudates, microaneurysms; DR, moderate; complete)
    ("fundus_dr", "gemini", "**Image:** colour fundus photograph, macula-centred.\n**Lesions:** scattered "
     "microaneurysms; circinate hard exudates temporal to the fovea.\n**Grade:** moderate non-proliferative "
     "diabetic retinopathy.\n**Answer:** C"),
    ("fundus_dr", "gpt-5", "Findings: microaneurysms, hard exudates, {{flame-shaped haemorrhages}} and "
     "{{neovascularisation of the disc}}.\nGrade: {{proliferative}} DR.\n\nFinal answer: D"),
    ("fundus_dr", "chinese", "眼底彩照：后极部可见微血管瘤、硬性渗出及{{棉絮斑}}，诊断为糖尿病视网膜病变（{{重度}}"
     "非增殖期）。\n答案：D"),
    ("fundus_dr", "deepseek-r1", "<think>\nThe options are: A. no DR, B. mild, C. moderate, D. severe, "
     "E. proliferative. Mild would be microaneurysms only. I see microaneurysms plus hard exudates, so more than "
     "mild, but no venous beading and no IRMA, so not severe. Moderate.\n</think>\nC"),
    ("fundus_dr", "llava-med", "The fundus image shows signs of {{hypertensive retinopathy}} with "
     "{{arteriovenous nicking}}. Answer: A"),
    ("fundus_dr", "markdown", "1. Modality: {{OCT}} B-scan\n2. Lesions: hard exudates, microaneurysms\n"
     "3. Grade: moderate NPDR\n4. Macula: [[possible early macular oedema]]\n\nAnswer: C"),
    ("fundus_dr", "qwen3-thinking", "<think>\n先看图像：彩色眼底照片，视盘边界清，C/D约0.3。黄斑区颞侧可见"
     "黄白色硬性渗出，周围散在红色小点，microaneurysms。有没有出血？I see {{a few blot haemorrhages}} in the "
     "inferior arcade too. 没有新生血管。So NPDR, moderate.\n</think>\n答案：C"),
    # ---- us_liver_cyst (ultrasound, abdomen, liver; cyst 25 mm, anechoic; complete)
    ("us_liver_cyst", "qwen3-thinking", "<think>\nGreyscale ultrasound of the liver. There is a round anechoic "
     "lesion with a thin wall and posterior acoustic enhancement, a simple hepatic cyst of about 2.5 cm. Could "
     "it be a haemangioma? That would be echogenic. No.\n</think>\nA"),
    ("us_liver_cyst", "gpt-5", "Measurements:\n- Organ: {{spleen}}\n- Lesion: 25 x 22 mm\n- Echo pattern: "
     "anechoic\n\nImpression: simple cyst.\n\nFinal answer: A"),
    ("us_liver_cyst", "chinese", "腹部超声：肝右叶见一{{低回声}}团块，大小约2.5厘米，考虑{{肝血管瘤}}。\n答案：B"),
    ("us_liver_cyst", "gemini", "**Modality:** ultrasound.\n**Finding:** hepatic cyst of about {{8 mm}}.\n"
     "**Other:** {{gallstones}} in the gallbladder.\n**Answer:** A"),
    ("us_liver_cyst", "deepseek-r1", "<think>\nIs this CT or ultrasound? Sector-shaped field of view and "
     "speckle, so ultrasound. The cyst is anechoic, 25 millimetres. Maybe [[a small amount of perihepatic free "
     "fluid]] too.\n</think>\nA"),
    ("us_liver_cyst", "gpt-5", "Step by step:\n- Modality: B-mode ultrasound, curvilinear probe.\n- Organ: "
     "liver, right lobe.\n- Lesion: round, anechoic, imperceptible wall, posterior acoustic enhancement; 2.5 cm.\n"
     "- Vascularity: no internal flow in the colour box.\n- Classification: simple hepatic cyst.\n\n"
     "Final answer: A"),
    # ---- xray_wrist (X-ray, lateral, upper limb; left fracture; complete)
    ("xray_wrist", "gemini", "**View:** lateral radiograph of the left wrist.\n**Finding:** transverse fracture "
     "of the distal radial metaphysis with dorsal angulation (Colles-type).\n**Answer:** B"),
    ("xray_wrist", "gpt-5", "Two views? No, a single lateral projection. Findings: distal radius fracture "
     "{{with an associated ulnar styloid fracture}}. Side: left.\n\nFinal answer: B"),
    ("xray_wrist", "chinese", "{{右}}腕关节侧位片示桡骨远端骨折，断端向背侧成角。\n答案：B"),
    ("xray_wrist", "qwen3-thinking", "<think>\nThe radius and ulna overlap, so a lateral view. Is there a "
     "fracture? I don't see a clear cortical break and the trabecular pattern looks continuous. "
     "{{No fracture}}.\n</think>\nno"),
    ("xray_wrist", "markdown", "- Modality: X-ray\n- View: {{AP}}\n- Region: {{ankle}}\n- Finding: fracture\n\n"
     "Answer: B"),
    ("xray_wrist", "deepseek-r1", "<think>\nWhich bone? The fracture line crosses the larger forearm bone about "
     "2 cm proximal to the articular surface, so the distal radius. Is the ulnar styloid intact? Yes. Dorsal tilt "
     "about 20 degrees. So a Colles fracture of the left wrist.\n</think>\nyes"),
    # ---- cxr_pneumothorax (X-ray, PA, chest; right pneumothorax; mild; complete)
    ("cxr_pneumothorax", "qwen3-thinking", "<think>\nPA chest film. A visceral pleural line in the right upper "
     "zone, about 1.5 cm from the chest wall at the apex, so small. No mediastinal shift, so not tension.\n"
     "</think>\nA small right apical pneumothorax.\n\nFinal answer: A"),
    ("cxr_pneumothorax", "gpt-5", "Findings: {{large}} right pneumothorax of {{tension}} type.\n\n"
     "Final answer: D"),
    ("cxr_pneumothorax", "chinese", "胸部后前位片：{{左侧}}可见气胸线，肺组织压缩约{{60%}}。\n答案：B"),
    ("cxr_pneumothorax", "markdown", "| Finding | Side |\n|---|---|\n| Pneumothorax | right |\n"
     "| {{Rib fracture}} | right |\n| {{Subcutaneous emphysema}} | right |\n\n**Answer:** A"),
    ("cxr_pneumothorax", "deepseek-r1", "<think>\nCould it be a skin fold? Skin folds run beyond the chest wall; "
     "this line parallels the chest wall with no markings beyond it. Right side, mild. There might be "
     "[[a tiny left apical pneumothorax]] as well, I'm not convinced.\n</think>\nA"),
    ("cxr_pneumothorax", "gemini", "**Technique:** PA erect radiograph.\n**Pleura:** a thin visceral pleural "
     "line at the right apex with no lung markings beyond it; rim about 1.5 cm, so small.\n**Mediastinum:** "
     "central.\n**Lungs:** {{there is a left upper zone infiltrate}}.\n**Impression:** small right "
     "pneumothorax.\n**Answer:** A"),
    # ---- ct_abd_normal (CT, axial, abdomen; normal; complete)
    ("ct_abd_normal", "gemini", "**Plane:** axial.\n**Organs:** liver, spleen and both kidneys unremarkable; no "
     "free fluid; no lymphadenopathy.\n**Answer:** D"),
    ("ct_abd_normal", "gpt-5", "FINDINGS:\nLiver: normal.\nSpleen: {{enlarged, 16 cm craniocaudal}}.\nKidneys: "
     "{{a 2 cm simple cyst in the left kidney}}.\n\nIMPRESSION: {{splenomegaly}}; {{left renal cyst}}.\n\n"
     "Final answer: B"),
    ("ct_abd_normal", "chinese", "上腹部CT{{冠状位}}重建，肝、脾、双肾未见异常。\n答案：D"),
    ("ct_abd_normal", "deepseek-r1", "<think>\nLiver first: {{several small hypodense lesions}} scattered "
     "through both lobes, probably cysts. Spleen and kidneys are fine.\n</think>\nA"),
    ("ct_abd_normal", "llava-med", "The CT image of the {{chest}} shows {{bilateral pleural effusions}}. "
     "Answer: C"),
    # ---- mammo_mass (mammography, MLO, breast; left mass, spiculated; complete)
    ("mammo_mass", "qwen3-thinking", "<think>\nMLO view: the pectoralis muscle runs obliquely along the upper "
     "posterior edge. The marker reads L MLO, so the left breast. There is an irregular high-density mass with "
     "spiculated margins in the upper breast. Am I sure about the side? The marker says L. OK.\n</think>\nC"),
    ("mammo_mass", "gpt-5", "Findings: left breast, MLO: a spiculated mass with "
     "{{associated fine pleomorphic calcifications}} and {{overlying skin thickening}}.\n\nFinal answer: C"),
    ("mammo_mass", "chinese", "{{右乳}}{{CC位}}钼靶片示毛刺状肿块。\n答案：A"),
    ("mammo_mass", "markdown", "| Descriptor | Value |\n|---|---|\n| Shape | irregular |\n"
     "| Margin | {{circumscribed}} |\n| Side | left |\n\nAnswer: B"),
    ("mammo_mass", "gemini", "**Modality:** {{contrast-enhanced breast MRI}}.\n**Finding:** a spiculated mass "
     "in the left breast.\n**Answer:** C"),
    ("mammo_mass", "deepseek-r1", "<think>\nCC or MLO? The pectoral muscle is a triangle along the upper "
     "posterior edge reaching down to nipple level, so MLO. Left breast. The mass in the upper breast is "
     "irregular with spiculated margins. At the top of the image {{enlarged axillary lymph nodes}} are visible "
     "in the axilla.\n</think>\nAnswer: C"),
    # ---- ct_two_nodules (CT, axial, chest; two left nodules, 6 and 8 mm; complete)
    ("ct_two_nodules", "deepseek-r1", "<think>\nCount carefully: one nodule in the left upper lobe, about 6 mm; "
     "another in the left lower lobe, about 8 mm. Any on the right? I scan the right lung, nothing. So two.\n"
     "</think>\nB"),
    ("ct_two_nodules", "gpt-5", "Axial chest CT: multiple pulmonary nodules, {{right > left}}, the largest "
     "8 mm.\n\nFinal answer: C"),
    ("ct_two_nodules", "chinese", "胸部CT：左肺见{{三枚}}小结节，较大者约8毫米。\n答案：C"),
    ("ct_two_nodules", "markdown", "Nodule list:\n1. LUL, 6 mm\n2. LLL, {{18 mm}}\n\nAnswer: B"),
    ("ct_two_nodules", "gemini", "There are two nodules in the left lung, 6 and 8 mm, and "
     "{{a 12 mm nodule in the right middle lobe}}.\n\n**Answer:** C"),
    ("ct_two_nodules", "llava-med", "The CT shows two small nodules in the left lung; a [[small left hilar lymph "
     "node]] could also be present. Answer: B"),
    ("ct_two_nodules", "qwen3-thinking", "<think>\nLet me tabulate what I see.\n\n| # | Lobe | Size |\n"
     "|---|---|---|\n| 1 | left upper | 6 mm |\n| 2 | left lower | 8 mm |\n| 3 | {{right lower}} | 5 mm |\n\n"
     "Hmm, is #3 a vessel seen end-on? With one slice I can't follow it, so I'll keep it.\n</think>\n"
     "{{Three nodules}}, the largest 8 mm.\n\nFinal answer: C"),
    # ---- vindr_aorta_pleura (X-ray, PA, chest; aortic enlargement, right pleural thickening; incomplete;
    #      absent: pneumonia, tuberculosis, lung tumour)
    ("vindr_aorta_pleura", "qwen3-thinking", "<think>\nPA chest film of an adult. Mediastinum first: the aortic "
     "knob is prominent and the descending aorta bulges laterally, an unfolded, dilated aorta. Lungs: a thin "
     "smooth band of pleural thickening runs along the right lateral chest wall, probably old. At the bases there "
     "is a faint reticular pattern, maybe early fibrosis? Can't be sure. Heart size looks normal. No focal "
     "consolidation.\n</think>\nFinal answer: B"),
    ("vindr_aorta_pleura", "gpt-5", "FINDINGS:\n- Aorta: {{normal calibre}}.\n- Pleura: {{left}} apical pleural "
     "thickening.\n- Lungs: cavitating right upper lobe lesion, consistent with {{reactivation tuberculosis}}.\n\n"
     "IMPRESSION: {{post-primary TB}}; recommend sputum testing.\n\nFinal answer: C"),
    ("vindr_aorta_pleura", "chinese", "胸部正位片示主动脉结增宽，{{左侧}}胸膜增厚。双肺门影增大，考虑{{中央型肺癌}}。\n"
     "答案：D"),
    ("vindr_aorta_pleura", "markdown", "| Label | Present |\n|---|---|\n| Aortic enlargement | yes |\n"
     "| Pleural thickening | yes (right) |\n| Cardiomegaly | yes |\n| Pneumonia | {{yes}} |\n| Lung tumor | no |\n\n"
     "**Answer:** A"),
    ("vindr_aorta_pleura", "llava-med", "The chest X-ray shows {{no abnormality}}; {{the aorta and pleura are "
     "normal}}. Answer: D"),
    ("vindr_aorta_pleura", "deepseek-r1", "<think>\nUnfolded aorta, yes. Right lateral pleural thickening, old. "
     "The right costophrenic angle is a bit hazy, so there may be [[an early right basal pneumonia]]; I'd want a "
     "lateral view.\n</think>\nB"),
    ("vindr_aorta_pleura", "gemini", "**Mediastinum:** dilated aortic arch (aortic enlargement).\n**Pleura:** "
     "right lateral pleural thickening.\n**Lungs:** a 2 cm right upper lobe nodule.\n**Impression:** aortic "
     "ectasia; pleural thickening; the nodule needs follow-up.\n**Answer:** A"),
    # ---- chexpert_cardiomegaly (X-ray, AP, chest; cardiomegaly, bilateral pulmonary oedema; incomplete;
    #      absent: pneumothorax, pleural effusion, consolidation)
    ("chexpert_cardiomegaly", "gemini", "**View:** AP portable.\n**Heart:** enlarged cardiac silhouette, "
     "cardiothoracic ratio around 0.6.\n**Lungs:** perihilar haziness, upper-lobe vascular redistribution and "
     "Kerley B lines: interstitial pulmonary oedema.\n**Pleura:** no effusion; no pneumothorax.\n"
     "**Impression:** cardiomegaly with pulmonary oedema, congestive pattern.\n**Answer:** B"),
    ("chexpert_cardiomegaly", "gpt-5", "Label table (CheXpert-style):\n\n| Observation | Label |\n|---|---|\n"
     "| Cardiomegaly | positive |\n| Edema | positive |\n| Pleural Effusion | {{positive}} |\n"
     "| Pneumothorax | negative |\n| Consolidation | negative |\n| Atelectasis | positive |\n\nFinal answer: A"),
    ("chexpert_cardiomegaly", "chinese", "床旁胸片（{{后前位}}）：心影增大，双肺门影模糊，{{双侧少量胸腔积液}}，"
     "考虑心衰肺水肿。\n答案：C"),
    ("chexpert_cardiomegaly", "qwen3-thinking", "<think>\nSo the heart is big, okay. Lungs: bilateral hazy "
     "perihilar opacities in a batwing distribution, pulmonary oedema. Pneumothorax? Let me check the apices. I "
     "thought I saw {{a small right apical pneumothorax}}, but on closer look it is the medial border of the "
     "scapula. Is there right lower lobe consolidation? The right base is whiter than the left, but it fades "
     "gradually, more likely dependent oedema.\n</think>\nAnswer: B"),
    ("chexpert_cardiomegaly", "llava-med", "The chest X-ray shows an enlarged heart and a "
     "{{left-sided pleural effusion}}, possibly with [[a small pneumothorax]]. Answer: C"),
    ("chexpert_cardiomegaly", "markdown", "1. **Heart**: cardiomegaly\n2. **Lungs**: {{clear, no oedema}}\n"
     "3. **Pleura**: {{subpulmonic effusion on the right}}\n4. **Other**: degenerative changes of the thoracic "
     "spine\n\nAnswer: D"),
    ("chexpert_cardiomegaly", "deepseek-r1", "<think>\nEnlarged heart. Bilateral interstitial oedema. In "
     "addition there is {{dense lobar consolidation in the left lower lobe}} behind the heart, consistent with a "
     "superimposed infection.\n</think>\nC"),
    # ---- brats_partial_flair (MRI, axial, FLAIR, head; right peritumoural oedema (hyperintense) and right
    #      non-enhancing tumour; glioma; incomplete; absent: enhancing tumour)
    ("brats_partial_flair", "deepseek-r1", "<think>\nSequence: CSF is dark but the lesion is bright, so FLAIR. "
     "Axial plane. A large region of hyperintensity in the right temporal lobe with finger-like extension along "
     "the white matter: vasogenic oedema around a tumour. Centrally a less bright, more solid part, the "
     "non-enhancing tumour. There's mass effect on the right lateral ventricle. Differential: metastasis "
     "(grey-white junction, often multiple), lymphoma (periventricular), glioma. A single infiltrative lesion "
     "fits glioma best.\n</think>\nFinal answer: A"),
    ("brats_partial_flair", "gpt-5", "TECHNIQUE: Axial {{T1 post-contrast}}.\nFINDINGS: Right frontotemporal "
     "infiltrative lesion with {{an avidly enhancing rim}} and surrounding oedema.\nIMPRESSION: high-grade "
     "glioma (glioblastoma).\n\nFinal answer: A"),
    ("brats_partial_flair", "chinese", "MRI FLAIR轴位：{{左侧}}颞叶大片高信号水肿，内见肿瘤实性成分，考虑胶质瘤。"
     "另见脑室扩张。\n答案：A"),
    ("brats_partial_flair", "markdown", "| Label | On this slice |\n|---|---|\n| Oedema (ED) | present, right |\n"
     "| Non-enhancing core (NCR/NET) | present |\n| Enhancing tumour (ET) | {{present, ring-shaped}} |\n\n"
     "**Answer:** C"),
    ("brats_partial_flair", "llava-med", "The FLAIR image shows a right hemispheric tumour, most consistent "
     "with {{a meningioma}}. Answer: B"),
    ("brats_partial_flair", "gemini", "**Signal:** the peritumoural oedema is {{hypointense}} on this sequence, "
     "around a brighter central core.\n**Side:** right.\n**Answer:** A"),
    ("brats_partial_flair", "qwen3-thinking", "<think>\nFLAIR, axial. Right-sided tumour with a lot of "
     "surrounding oedema. The core could contain [[a small enhancing nodule]], but FLAIR cannot show "
     "enhancement; I'd need the post-contrast T1.\n</think>\nA"),
    # ---- idrid_grade2 (fundus photography, eye; no lesion labels; DR, moderate; incomplete;
    #      absent: macular oedema)
    ("idrid_grade2", "gemini", "**Image:** colour fundus photograph, macula-centred.\n**Lesions:** several "
     "microaneurysms, a few dot-blot haemorrhages, scattered hard exudates well away from the fovea.\n"
     "**Macula:** no exudates within one disc diameter of the fovea.\n**Grade:** moderate NPDR, no DME.\n"
     "**Answer:** C"),
    ("idrid_grade2", "gpt-5", "Findings: microaneurysms, intraretinal haemorrhages in all four quadrants and "
     "venous beading in two.\nGrade: {{severe}} NPDR.\n{{Clinically significant macular oedema}} with a "
     "circinate ring of exudates at the fovea.\n\nFinal answer: D"),
    ("idrid_grade2", "chinese", "眼底照片：可见微血管瘤及出血点，{{黄斑水肿}}，诊断为糖尿病视网膜病变{{增殖期}}。\n"
     "答案：E"),
    ("idrid_grade2", "qwen3-thinking", "<think>\nThe scale: 0 no DR, 1 mild, 2 moderate, 3 severe, "
     "4 proliferative. I see more than microaneurysms alone, a few haemorrhages and exudates, but no "
     "neovascularisation and far fewer than 20 haemorrhages per quadrant, so grade 2. DME risk: the exudates are "
     "far from the macula, grade 0.\n</think>\nAnswer: 2"),
    ("idrid_grade2", "llava-med", "The fundus photograph shows a {{normal}} retina with a healthy optic disc. "
     "Answer: A"),
    ("idrid_grade2", "markdown", "- Modality: fundus photography\n- DR: {{mild (grade 1)}}\n- DME: "
     "[[possible early diabetic macular edema]]\n\nAnswer: B"),
    ("idrid_grade2", "deepseek-r1", "<think>\nThis is a {{fluorescein angiogram}}... hmm, no, the vessels are red "
     "on an orange background, so a colour photograph. Microaneurysms and a few exudates: moderate NPDR.\n"
     "</think>\nC"),
    # ---- knee_fracture_box (X-ray, AP, knee; right fracture of the tibial plateau; incomplete; absent: none)
    ("knee_fracture_box", "qwen3-thinking", "<think>\nAP radiograph of the right knee, marker R. The tibial "
     "plateau: the lateral plateau is depressed with a vertical split line, a Schatzker II-type fracture. A "
     "fat-fluid level? Not visible on an AP. The medial joint space is narrowed, mild osteoarthritis.\n</think>\n"
     "Final answer: B"),
    ("knee_fracture_box", "gpt-5", "Single {{lateral}} radiograph of the {{left}} knee. "
     "{{No acute fracture or dislocation}}. Moderate joint effusion.\n\nFinal answer: A"),
    ("knee_fracture_box", "chinese", "右膝正位X线片示胫骨外侧平台塌陷骨折，关节间隙变窄，考虑合并骨关节炎。\n答案：B"),
    ("knee_fracture_box", "markdown", "| Item | Finding |\n|---|---|\n| Modality | {{MRI (coronal PD)}} |\n"
     "| Side | right |\n| Bone | tibial plateau fracture |\n| Soft tissue | ACL tear |\n\nAnswer: C"),
    ("knee_fracture_box", "gemini", "**Region:** {{hip}}, on an AP {{pelvis}} radiograph.\n**Finding:** fracture "
     "on the right.\n**Answer:** B"),
    ("knee_fracture_box", "deepseek-r1", "<think>\nIs there a fracture? I need to look at the plateau closely. "
     "There's a step-off in the lateral tibial plateau, so yes. Possibly a second fracture at the fibular head "
     "too, hard to say.\n</think>\nyes"),
    ("knee_fracture_box", "llava-med", "The X-ray of the knee shows a fracture; the {{left}} tibia is involved, "
     "with a depressed lateral plateau fragment. Answer: yes"),
    ("knee_fracture_box", "gpt-5", "FINDINGS:\n- Bones: depressed fracture of the lateral tibial plateau, "
     "about 6 mm of articular depression.\n- Joint: lipohaemarthrosis suspected.\n- Alignment: maintained.\n\n"
     "IMPRESSION: right tibial plateau fracture.\n\nFinal answer: B"),
    # ---- isic_bcc (dermoscopy, skin; basal cell carcinoma, malignant; incomplete; absent: melanoma, melanocytic
    #      nevus, benign keratosis, dermatofibroma, vascular lesion, actinic keratosis, squamous cell carcinoma)
    ("isic_bcc", "gemini", "**Modality:** dermoscopy.\n**Structures:** arborizing telangiectatic vessels, "
     "blue-grey ovoid nests, shiny white areas and a small ulceration.\n**Diagnosis:** pigmented basal cell "
     "carcinoma.\n**Malignancy:** malignant.\n**Answer:** C"),
    ("isic_bcc", "gpt-5", "Differential considered: melanoma, seborrheic keratosis, BCC. Dermoscopy shows an "
     "atypical network with irregular peripheral streaks and a blue-white veil, so the diagnosis is "
     "{{invasive melanoma}}.\n\nFinal answer: A"),
    ("isic_bcc", "chinese", "皮肤镜图像：见树枝状血管及蓝灰色卵圆巢，诊断为基底细胞癌，{{良性}}病变。\n答案：B"),
    ("isic_bcc", "qwen3-thinking", "<think>\nA stuck-on looking papule with milia-like cysts and comedo-like "
     "openings... that's {{a seborrheic keratosis}}. Hmm, wait. Those 'milia-like cysts' might be shiny white "
     "blotches, and there are arborizing vessels, classic for BCC. OK, BCC.\n</think>\nC"),
    ("isic_bcc", "markdown", "| Class | Probability |\n|---|---|\n| BCC | 0.62 |\n| MEL | 0.21 |\n| NV | 0.09 |\n"
     "| BKL | 0.05 |\n| other | 0.03 |\n\n**Prediction:** BCC\n**Note:** {{a cherry angioma}} sits at the edge "
     "of the field.\n\nAnswer: C"),
    ("isic_bcc", "llava-med", "The image is a {{histopathology slide}} showing {{a dermatofibroma}}. Answer: D"),
    ("isic_bcc", "deepseek-r1", "<think>\nArborizing vessels, ulceration, no pigment network: BCC features. It "
     "could also be [[Bowen's disease]] given a few glomerular vessels, but the arborizing pattern wins.\n"
     "</think>\nC"),
    ("isic_bcc", "chinese", "Dermoscopy 显示对称的球状模式（globular pattern），考虑{{Spitz痣}}（melanocytic "
     "lesion）。\n答案：B"),
    # ---- busi_benign_mass (ultrasound, breast; mass, hypoechoic, well-defined, oval; benign; incomplete;
    #      absent: none)
    ("busi_benign_mass", "qwen3-thinking", "<think>\nThis is a breast ultrasound. An oval, parallel, hypoechoic "
     "mass with circumscribed margins and mild posterior enhancement. Looks like a fibroadenoma. BI-RADS 3, "
     "benign.\n</think>\nFinal answer: A"),
    ("busi_benign_mass", "gpt-5", "Breast sonogram: an {{irregular}}, {{anechoic}} mass with {{spiculated}} "
     "margins and posterior shadowing.\nAssessment: {{BI-RADS 5, highly suspicious for invasive carcinoma}}.\n\n"
     "Final answer: B"),
    ("busi_benign_mass", "chinese", "乳腺超声：右乳低回声结节，边界清晰，形态规则，考虑纤维腺瘤。另见腋窝淋巴结肿大。\n"
     "答案：A"),
    ("busi_benign_mass", "markdown", "| Field | Value |\n|---|---|\n| Modality | {{mammography}} |\n"
     "| Finding | oval mass |\n| Margin | circumscribed |\n| Pathology | {{malignant}} |\n\n**Answer:** B"),
    ("busi_benign_mass", "gemini", "**Finding:** {{no discrete mass}}; {{normal fibroglandular tissue}} only.\n"
     "**Answer:** D"),
    ("busi_benign_mass", "deepseek-r1", "<think>\nOval, hypoechoic, circumscribed, parallel to the skin: benign "
     "features. There could be a small adjacent cyst, not sure. I'd say fibroadenoma, benign.\n</think>\nA"),
    ("busi_benign_mass", "llava-med", "The ultrasound shows a hypoechoic breast mass measuring 1.8 x 1.2 cm with "
     "{{ill-defined}} margins. Answer: B"),
]


def build() -> list[dict]:
    """The rows: the corpus's one ``build`` reads the markers, each row with this set's copy of its case
    (``meta.findings_complete``, and ``absent`` for :data:`NEW_CASES`, which the corpus's ``CASES`` lacks)."""
    return _src.build(ENTRIES, "u", hedged=True, cases=CASES)


if __name__ == "__main__":
    _src.write("rationale_heldout7.jsonl", build())
