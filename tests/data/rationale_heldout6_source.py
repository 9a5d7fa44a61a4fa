"""Source of ``rationale_heldout6.jsonl`` (issue 39, sixth set): a sixth fresh held-out set of hand-labelled
rationales, written in the heldout6 session by a helper who neither read the checker (``medr2.scoring.claims``),
its tests nor its documentation, and labelled by hand before the checker was run on any of these; nothing was
tuned on it. Same labelling rule as ``rationale_corpus_source.py``: ``{{...}}`` marks every statement about this
image that the case's fields make false. As in held-out 4 and 5, ``[[...]]`` marks a *hedged hallucination*: a
finding or diagnosis the case does not have, put forward with a weak hedge ("possible", "may", "could", "cannot
be excluded", "可能") about this image; it is not a gold ``contradicted`` span.

New in this set, explicit absence. Each row's case carries ``meta.findings_complete`` and the cases added here
an ``absent`` list:

- the corpus's own cases (:data:`rationale_corpus_source.CASES`) are copied with ``meta.findings_complete`` true
  (the corpus rule: a finding not listed is absent);
- :data:`NEW_CASES` are seven cases whose finding lists are incomplete (``meta.findings_complete`` false), after
  real sources: an RSNA "No Lung Opacity / Not Normal" radiograph (absent: lung opacity, pneumonia), two chest
  radiographs labelled by text mining or a report (NIH ChestX-ray14 "Effusion"; an IU X-ray report with
  "no pneumothorax, effusion or consolidation"), an ISIC 2018 dermoscopy image without a mask (its other six
  diagnoses absent), a BraTS FLAIR slice, a Kvasir-SEG polyp and a CBIS-DDSM calcification. There an invented
  finding that is not in ``absent`` cannot be decided and is left unmarked (and a weakly hedged one is not a
  hedged hallucination); one in ``absent``, or a sub-type of one (consolidation and ground-glass opacity of lung
  opacity, viral pneumonia of pneumonia, seborrhoeic keratosis of benign keratosis, a cherry angioma of vascular
  lesion, a loculated effusion of pleural effusion ...), is marked; a parent of an absent label (an "opacity"
  where only consolidation is absent) is not. Modality, plane, sequence, side, region, a denial of the listed
  finding, a normal-study claim, the diagnosis and malignancy are labelled as in the corpus.

The hallucinations are of kinds a rule-based checker may miss: laterality said away from the finding word ("on
the right side there is ...", "right > left", "in the patient's left", a side in a table row, Chinese 左/右
anywhere in the clause); counts in words, numerals, Chinese and "bilateral"; sizes in mm, cm, words, percent and
Chinese units; wrong modality, plane, view, sequence, CT window, region and organ; descriptors (margin, echo,
signal); grades; invented findings in numbered lists, Markdown tables, measurement lists and IMPRESSION lines;
normal-study claims and denials; the wrong sibling or the mimic; one statement the model retracts a moment later
(marked, as the corpus marks its retracted "MRI"). Sub-types and synonyms of a case's true finding or diagnosis
(a subdural haematoma for a haemorrhage, a Colles fracture, a glioblastoma for a glioma, a blue nevus, a
lobar pneumonia, a hydrothorax) are supported and never marked. Texts are long 2026-style thinking traces with
self-corrections, differentials and restated options, report-style FINDINGS/IMPRESSION sections, tables and mixed
Chinese/English. Regenerate with ``python tests/data/rationale_heldout6_source.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import rationale_corpus_source as _src  # noqa: E402  (the corpus's cases and its one build/write)

_INCOMPLETE = {"findings_complete": False}

NEW_CASES: dict[str, dict] = {
    # RSNA Pneumonia Detection Challenge, class "No Lung Opacity / Not Normal"
    "rsna_not_normal": {"modality": "X-ray", "plane": "AP", "body_region": "chest", "structures": ["lung"],
                        "findings": [], "diagnosis": "not normal, no lung opacity", "meta": _INCOMPLETE,
                        "absent": ["lung opacity", "pneumonia"]},
    # NIH ChestX-ray14, image label "Effusion" (text-mined from the report) with its box on the right
    "nih_effusion": {"modality": "X-ray", "plane": "PA", "body_region": "chest", "structures": ["lung"],
                     "findings": [{"label": "pleural effusion", "attributes": {"laterality": "right"}}],
                     "diagnosis": "pleural effusion", "meta": _INCOMPLETE, "absent": []},
    # IU X-ray (Open-i), report: "The heart is enlarged. No pneumothorax, pleural effusion or focal consolidation."
    "iu_cardiomegaly": {"modality": "X-ray", "plane": "PA", "body_region": "chest", "structures": ["heart", "lung"],
                        "findings": [{"label": "cardiomegaly", "attributes": {}}], "diagnosis": None,
                        "meta": _INCOMPLETE, "absent": ["pneumothorax", "pleural effusion", "consolidation"]},
    # ISIC 2018 Task 3, NV, no Task 1 mask; the one-hot row states the other six diagnoses absent
    "isic_nevus": {"modality": "dermoscopy", "body_region": "back", "structures": [], "findings": [],
                   "diagnosis": "melanocytic nevus", "malignancy": "benign", "meta": _INCOMPLETE,
                   "absent": ["melanoma", "basal cell carcinoma", "actinic keratosis", "benign keratosis",
                              "dermatofibroma", "vascular lesion"]},
    # BraTS: the tumour is segmented, nothing else in the brain is labelled
    "brats_glioma": {"modality": "MRI", "plane": "axial", "sequence": "FLAIR", "body_region": "head",
                     "structures": ["brain"], "findings": [{"label": "mass", "attributes": {
                         "laterality": "right", "intensity": "hyperintense"}}], "diagnosis": "glioma",
                     "meta": _INCOMPLETE, "absent": []},
    # Kvasir-SEG: the polyp is segmented, other mucosal findings are not labelled
    "kvasir_polyp": {"modality": "endoscopy", "body_region": "colon", "structures": [],
                     "findings": [{"label": "polyp", "attributes": {}}], "diagnosis": None, "meta": _INCOMPLETE,
                     "absent": []},
    # CBIS-DDSM calcification ROI (pathology malignant); other abnormalities of the breast are not labelled
    "cbis_calcification": {"modality": "mammography", "plane": "CC", "body_region": "breast", "structures": [],
                           "findings": [{"label": "calcification", "attributes": {"laterality": "right"}}],
                           "diagnosis": None, "malignancy": "malignant", "meta": _INCOMPLETE, "absent": []},
}

CASES: dict[str, dict] = {**{k: {**c, "meta": {"findings_complete": True}} for k, c in _src.CASES.items()},
                          **NEW_CASES}

ENTRIES: list[tuple[str, str, str]] = [
    # ---- cxr_left_effusion (X-ray, PA, chest; left pleural effusion, moderate)
    ("cxr_left_effusion", "qwen3-thinking", "<think>\nOkay, let me work through this systematically. First, what "
     "kind of image is it? Bright ribs, a projection image, so a plain radiograph, and the scapulae are rotated "
     "out of the lung fields, so PA. Next, the lungs. The right lung is well aerated. On the left there is a "
     "homogeneous opacity at the base with a concave upper margin... that's a meniscus. Wait, could it be "
     "consolidation instead? No air bronchograms, and it tracks up the lateral chest wall, so it is fluid. How "
     "much? It reaches roughly the mid zone, so moderate rather than small.\n</think>\nModerate left pleural "
     "effusion.\n\nFinal answer: B"),
    ("cxr_left_effusion", "gpt-5", "Findings: On the {{right}} side there is blunting of the costophrenic angle "
     "with a fluid meniscus, consistent with a pleural effusion of moderate size. {{The left hemithorax is "
     "clear}}.\n\nFinal answer: A"),
    ("cxr_left_effusion", "gemini", "**Findings:** {{Bilateral}} pleural effusions, {{right > left}}, without "
     "pneumothorax.\n**Impression:** pleural effusions.\n**Answer:** C"),
    ("cxr_left_effusion", "chinese", "后前位胸片。胸腔积液，位于{{右侧}}胸腔下部，量中等，纵隔居中。\n答案：A"),
    ("cxr_left_effusion", "markdown", "| Structure | Finding |\n|---|---|\n| Left pleural space | moderate "
     "effusion |\n| Right lung | {{nodule, 12 mm}} |\n| Heart | normal size |\n| Ribs | {{old healed fracture of the "
     "left 6th rib}} |\n\n**Answer:** B"),
    ("cxr_left_effusion", "deepseek-r1", "<think>\nLet me estimate the volume. The fluid only just fills the "
     "lateral costophrenic recess on the left... I'll call it a {{small}} effusion. It doesn't reach the hilum "
     "anyway.\n</think>\nAnswer: A"),
    ("cxr_left_effusion", "llava-med", "The chest X-ray shows a left-sided pleural effusion. There may be a "
     "[[left lower lobe mass]] obscured by the fluid."),
    ("cxr_left_effusion", "gpt-5", "PA chest radiograph. {{No pleural effusion}} or pneumothorax.\nImpression: "
     "{{normal chest}}.\n\nFinal answer: D"),
    ("cxr_left_effusion", "gemini", "**Impression:** moderate left-sided hydrothorax (a layering pleural "
     "effusion); no mediastinal shift.\n**Answer:** B"),
    ("cxr_left_effusion", "chinese", "Frontal CXR (PA)：{{双侧}}肋膈角变钝，{{右>左}}，考虑胸腔积液"
     "（moderate）。\n答案：C"),
    # ---- cxr_normal (X-ray, PA, chest; normal)
    ("cxr_normal", "deepseek-r1", "<think>\nThe options are: A. pneumothorax, B. cardiomegaly, C. pleural effusion, "
     "D. no finding. Let me go through them. A pneumothorax would show a visceral pleural line; I don't see one "
     "at either apex. Cardiomegaly means a cardiothoracic ratio over 0.5; here it is roughly 0.45. An effusion "
     "would blunt the costophrenic angles; both are sharp. So nothing abnormal.\n</think>\nAnswer: D"),
    ("cxr_normal", "gpt-5", "1. Technique: PA, adequate inspiration.\n2. Lungs: {{patchy opacity in the left "
     "lower zone}}.\n3. Pleura: {{small right effusion}}.\n4. Heart: normal size.\n\nImpression: {{early left "
     "lower lobe pneumonia}}.\nFinal answer: A"),
    ("cxr_normal", "chinese", "这是一张chest X-ray, PA view。双肺纹理清晰，但{{右上肺可见一个约8 mm的结节}}，"
     "建议CT随访。\n答案：C"),
    ("cxr_normal", "gemini", "**Findings:** {{two calcified granulomas in the right upper lobe}}; otherwise clear "
     "lungs.\n**Answer:** D"),
    ("cxr_normal", "markdown", "| Item | Value |\n|---|---|\n| View | {{AP supine}} |\n| Lungs | clear |\n"
     "| Heart | normal |\n| Impression | normal |\n\n**Answer:** D"),
    ("cxr_normal", "llava-med", "The chest X-ray shows {{cardiomegaly}} with {{pulmonary vascular congestion}}, "
     "which could indicate [[early heart failure]]."),
    ("cxr_normal", "qwen3-thinking", "<think>\nPA film, good inspiration. Lungs look clear. There may be [[a small "
     "left hilar mass]], though a vessel seen end-on is also possible. Heart normal. I'll go with normal.\n"
     "</think>\nFinal answer: D"),
    # ---- cxr_pneumonia (X-ray, AP, chest; right consolidation; pneumonia)
    ("cxr_pneumonia", "gpt-5", "FINDINGS: AP portable view. Dense airspace consolidation in the right lower lobe "
     "with air bronchograms. No pleural effusion. No pneumothorax. Heart size normal.\nIMPRESSION: Right lower "
     "lobe lobar pneumonia.\n\nFinal answer: C"),
    ("cxr_pneumonia", "qwen3-thinking", "<think>\nOkay. AP chest film, portable. Now the lungs. On the {{left}} "
     "side there is an area of increased density in the lower zone... wait, I need to check the orientation. The "
     "R marker is on the viewer's left, so the patient's right is on the viewer's left, and the opacity is "
     "actually in the right lower zone. Good: right lower zone consolidation, pneumonia.\n</think>\nFinal answer: "
     "C"),
    ("cxr_pneumonia", "chinese", "床旁胸片（AP位）。{{左}}下肺野见大片实变影伴支气管充气征，符合肺炎。\n答案：C"),
    ("cxr_pneumonia", "gemini", "**Findings:** opacity at the right base.\n**Impression:** right lower lobe "
     "{{atelectasis}}, {{not pneumonia}}.\n**Answer:** D"),
    ("cxr_pneumonia", "markdown", "| Parameter | Value |\n|---|---|\n| View | AP |\n| Consolidation | right "
     "lower zone |\n| Pleural effusion | {{right, small}} |\n| Pneumothorax | none |\n\n**Answer:** C"),
    ("cxr_pneumonia", "deepseek-r1", "<think>\nConsolidation in the right lower lobe, so pneumonia. A "
     "[[parapneumonic effusion]] might be present too; hard to say on an AP film.\n</think>\nAnswer: C"),
    ("cxr_pneumonia", "llava-med", "The {{lateral}} chest radiograph demonstrates right lower lobe consolidation, "
     "consistent with pneumonia."),
    ("cxr_pneumonia", "gpt-5", "AP radiograph.\nImpression: {{bilateral}} lower lobe pneumonia.\n\nFinal answer: B"),
    # ---- ct_nodule (CT, axial, lung window, chest; right nodule 14 mm, spiculated)
    ("ct_nodule", "qwen3-thinking", "<think>\nAxial CT, lung window: the parenchyma is well displayed and the "
     "mediastinum is washed out. Let me measure the lesion: long axis about 14 mm, short axis about 11 mm. Margins "
     "are spiculated, with fine strands radiating into the adjacent lung. Location: right upper lobe. Is there a "
     "second lesion? This is a single slice and I see only one.\n</think>\nSolitary spiculated right upper lobe "
     "nodule, 14 mm.\nFinal answer: C"),
    ("ct_nodule", "gpt-5", "Measurements:\n- Long axis: {{32 mm}}\n- Short axis: {{24 mm}}\n- Location: right upper "
     "lobe\n- Margin: spiculated\n\nLung-RADS 4B.\nFinal answer: C"),
    ("ct_nodule", "chinese", "胸部CT肺窗轴位：右肺上叶见一结节，大小约{{3.5厘米}}，边缘见毛刺。\n答案：C"),
    ("ct_nodule", "gemini", "**Findings:** {{two}} spiculated nodules in the right upper lobe, the larger 14 mm.\n"
     "**Answer:** A"),
    ("ct_nodule", "markdown", "- Window: {{mediastinal}}\n- Plane: axial\n- Lesion: right lung nodule, 14 mm, "
     "spiculated\n\n**Answer:** C"),
    ("ct_nodule", "deepseek-r1", "<think>\nThe nodule is in the right lung. The margin... looks {{smooth and "
     "well-defined}}, more like a granuloma. Benign-appearing.\n</think>\nAnswer: A"),
    ("ct_nodule", "llava-med", "The CT image shows a nodule in the right lung with {{enlarged mediastinal lymph "
     "nodes}}."),
    ("ct_nodule", "gpt-5", "Axial CT through the {{upper abdomen}} showing a 14 mm spiculated nodule at the right "
     "lung base.\n\nFinal answer: C"),
    ("ct_nodule", "chinese", "胸部CT（肺窗，axial）：右肺上叶单发结节，直径1.4 cm，边缘毛刺，malignancy risk "
     "high。\n答案：C"),
    # ---- mri_glioma (MRI, axial, T2, head; left mass hyperintense; glioma; mimic meningioma)
    ("mri_glioma", "deepseek-r1", "<think>\nFirst the sequence: CSF is bright and fat is intermediate, so "
     "T2-weighted. Plane: axial. There is an expansile hyperintense lesion in the left frontal lobe, intra-axial. "
     "Differential: high-grade glioma, metastasis, abscess, lymphoma. Single lesion, infiltrative borders... a "
     "diffuse astrocytoma or a glioblastoma would fit.\n</think>\nMost likely glioma (astrocytoma).\nFinal "
     "answer: B"),
    ("mri_glioma", "gpt-5", "Axial T2 MRI. In the {{right}} cerebral hemisphere there is a hyperintense "
     "intra-axial mass; {{the left hemisphere is normal}}.\n\nFinal answer: B"),
    ("mri_glioma", "chinese", "MRI T2WI轴位，左侧额叶见{{低信号}}肿块，考虑glioma。\n答案：B"),
    ("mri_glioma", "markdown", "| Differential | Likelihood |\n|---|---|\n| Glioma | high |\n| Meningioma | low |\n"
     "| Metastasis | low |\n\nSequence: T2. Side: left.\n\n**Answer:** B"),
    ("mri_glioma", "gemini", "**Sequence:** {{post-contrast T1}}\n**Finding:** left-sided mass.\n**Impression:** "
     "{{meningioma}}.\n**Answer:** C"),
    ("mri_glioma", "llava-med", "The MRI image shows {{multiple}} lesions in the brain, suggestive of "
     "{{metastatic disease}}."),
    ("mri_glioma", "qwen3-thinking", "<think>\nThis is a {{coronal}} T2 slice through the frontal lobes. The lesion "
     "is on the left and bright. Glioma.\n</think>\nFinal answer: A"),
    ("mri_glioma", "gpt-5", "Left hyperintense mass consistent with glioma; [[intratumoral haemorrhage]] cannot be "
     "excluded.\n\nFinal answer: B"),
    ("mri_glioma", "markdown", "| Lesion | Side | Signal |\n|---|---|---|\n| Mass | {{Right}} | hyperintense |\n\n"
     "**Answer:** A"),
    # ---- mri_meningioma (MRI, coronal, T1 post-contrast, head; right mass; meningioma; mimic glioma)
    ("mri_meningioma", "gpt-5", "FINDINGS: Coronal post-contrast T1-weighted image shows a homogeneously enhancing, "
     "dural-based extra-axial mass over the right cerebral convexity with a dural tail.\nIMPRESSION: Right "
     "convexity meningioma.\n\nFinal answer: A"),
    ("mri_meningioma", "qwen3-thinking", "<think>\nCoronal T1 with gadolinium. There's a large enhancing mass. "
     "Which side? It sits on the viewer's right... and in radiological convention the patient's left is on the "
     "viewer's right, so the mass is in the patient's {{left}} hemisphere. Extra-axial, broad dural base: "
     "meningioma.\n</think>\nFinal answer: A"),
    ("mri_meningioma", "chinese", "冠状位T1增强：右侧凸面见均匀强化脑外肿块，可见脑膜尾征，诊断为{{胶质母细胞瘤}}。"
     "\n答案：C"),
    ("mri_meningioma", "markdown", "1. Modality: MRI\n2. Plane: coronal\n3. Sequence: {{T2 FLAIR}}\n4. Lesion: "
     "right extra-axial mass\n5. Diagnosis: meningioma\n\nAnswer: A"),
    ("mri_meningioma", "gemini", "**Findings:** right convexity meningioma with {{extensive vasogenic oedema}} and "
     "{{midline shift of 8 mm}}.\n**Answer:** A"),
    ("mri_meningioma", "deepseek-r1", "<think>\nCoronal T1 post-contrast. Right-sided mass. Is it intra- or "
     "extra-axial? There's a CSF cleft and a broad dural base, so extra-axial. Meningioma over glioma.\n</think>\nA"),
    ("mri_meningioma", "llava-med", "The MRI shows an enhancing mass in the right hemisphere, which could "
     "represent a [[glioma]]."),
    # ---- mri_normal (MRI, axial, FLAIR, head; normal)
    ("mri_normal", "qwen3-thinking", "<think>\nThis is an axial FLAIR image: CSF is dark. Periventricular white "
     "matter: no plaques. Cortex: no signal abnormality. Ventricles: normal size, symmetric. Midline: no shift. "
     "Extra-axial spaces: no collection. So this is a normal brain MRI.\n</think>\nFinal answer: D"),
    ("mri_normal", "gpt-5", "1. Sequence: FLAIR, axial.\n2. {{Multiple periventricular hyperintense lesions}}, "
     "ovoid, perpendicular to the ventricles ({{Dawson's fingers}}).\n3. Impression: {{demyelinating disease}}.\n\n"
     "Final answer: B"),
    ("mri_normal", "chinese", "头颅MRI FLAIR示{{双侧额叶多发高信号灶}}。\n答案：B"),
    ("mri_normal", "markdown", "| Item | Finding |\n|---|---|\n| Sequence | {{DWI}} |\n| Plane | axial |\n"
     "| Parenchyma | normal |\n\n**Answer:** D"),
    ("mri_normal", "gemini", "**Sequence:** FLAIR, axial.\n**Findings:** no signal abnormality, normal ventricles, "
     "no mass effect.\n**Answer:** D"),
    ("mri_normal", "llava-med", "The MRI of the brain shows an {{acute infarct in the left MCA territory}}."),
    ("mri_normal", "deepseek-r1", "<think>\nFLAIR, axial. Maybe a [[tiny white matter hyperintensity]] in the "
     "right frontal lobe; could be artefact. Overall normal.\n</think>\nAnswer: D"),
    ("mri_normal", "qwen3-thinking", "<think>\nThe question: which of these is present? A. glioma B. meningioma "
     "C. pituitary adenoma D. none. A glioma would be a FLAIR-bright intra-axial mass; I see nothing like that. A "
     "meningioma would be extra-axial; there is no such lesion. So D.\n</think>\nD"),
    # ---- ct_haemorrhage (CT, axial, non-contrast, head; right haemorrhage 30 mm, severe)
    ("ct_haemorrhage", "gpt-5", "Non-contrast axial head CT: a 3 cm right intraparenchymal haematoma, i.e. an "
     "acute intracerebral haemorrhage. Severe.\n\nFinal answer: B"),
    ("ct_haemorrhage", "qwen3-thinking", "<think>\nNon-contrast CT, axial. There's a hyperdense area... in "
     "radiological convention the left of the image is the patient's right, so this lesion is in the patient's "
     "right hemisphere. It measures roughly three centimetres. An acute bleed, severe given the size.\n"
     "</think>\nFinal answer: B"),
    ("ct_haemorrhage", "chinese", "头颅CT平扫示右侧脑实质内高密度血肿，大小约{{1厘米}}，{{轻度}}。\n答案：B"),
    ("ct_haemorrhage", "markdown", "| Measurement | Value |\n|---|---|\n| Haematoma diameter | 30 mm |\n"
     "| Volume (ABC/2) | ~14 mL |\n| Side | {{left}} |\n\n**Answer:** B"),
    ("ct_haemorrhage", "gemini", "**Finding:** crescentic hyperdense collection over the right hemisphere, maximal "
     "thickness about 30 mm.\n**Impression:** acute subdural haematoma, severe.\n**Answer:** C"),
    ("ct_haemorrhage", "llava-med", "The CT scan shows a lesion in the right hemisphere consistent with an "
     "{{ischemic stroke}}."),
    ("ct_haemorrhage", "deepseek-r1", "<think>\nI see {{two separate}} haemorrhages in the right hemisphere, the "
     "larger 30 mm.\n</think>\nB"),
    ("ct_haemorrhage", "gpt-5", "Axial {{CT angiogram}} of the head: right-sided acute haemorrhage, 3 cm.\n\n"
     "Final answer: B"),
    # ---- fundus_dr (fundus photography, eye; hard exudates + microaneurysms; diabetic retinopathy, moderate)
    ("fundus_dr", "qwen3-thinking", "<think>\nColour fundus photograph centred on the macula, optic disc visible "
     "nasally. I see several red dots, microaneurysms, scattered around the posterior pole, and yellow, "
     "well-demarcated deposits temporal to the fovea: hard exudates. Any neovascularisation? I don't see any at "
     "the disc or elsewhere. So non-proliferative diabetic retinopathy, moderate.\n</think>\nFinal answer: C"),
    ("fundus_dr", "gpt-5", "Findings: microaneurysms, hard exudates. Grade: {{proliferative diabetic "
     "retinopathy}} with {{neovascularisation of the disc}}.\n\nFinal answer: D"),
    ("fundus_dr", "chinese", "眼底彩照：可见微动脉瘤及硬性渗出，糖尿病视网膜病变（{{重度}}）。\n答案：D"),
    ("fundus_dr", "markdown", "- Microaneurysms: present\n- Hard exudates: present\n- {{Cotton-wool spots: "
     "present}}\n- {{Vitreous haemorrhage: present}}\n- Grade: moderate NPDR\n\nAnswer: C"),
    ("fundus_dr", "gemini", "**Modality:** {{fluorescein angiography}}\n**Findings:** microaneurysms and hard "
     "exudates.\n**Answer:** C"),
    ("fundus_dr", "llava-med", "The fundus photograph shows microaneurysms but {{no hard exudates}}."),
    ("fundus_dr", "deepseek-r1", "<think>\nMicroaneurysms and hard exudates: moderate NPDR. There could be "
     "[[early macular oedema]] given the exudates near the fovea.\n</think>\nAnswer: C"),
    # ---- us_liver_cyst (ultrasound, abdomen, liver; cyst 25 mm, anechoic)
    ("us_liver_cyst", "gpt-5", "Grey-scale ultrasound of the right upper quadrant: a well-defined anechoic simple "
     "hepatic cyst, 2.5 x 2.3 cm, with posterior acoustic enhancement.\n\nFinal answer: A"),
    ("us_liver_cyst", "chinese", "腹部超声：肝内见一{{高回声}}病灶，约25毫米，考虑{{血管瘤}}。\n答案：B"),
    ("us_liver_cyst", "markdown", "| Parameter | Value |\n|---|---|\n| Organ | liver |\n| Size | {{8.5 cm}} |\n"
     "| Echo | anechoic |\n| Septa | {{thick, multiple}} |\n\n**Answer:** A"),
    ("us_liver_cyst", "qwen3-thinking", "<think>\nUltrasound. Is this liver or kidney? The parenchyma is "
     "homogeneous, and I think I see renal sinus fat... so this is the {{right kidney}}, with an anechoic cyst "
     "about 25 mm. A simple {{renal cyst}}, Bosniak I.\n</think>\nFinal answer: A"),
    ("us_liver_cyst", "gemini", "**Findings:** {{several}} anechoic cysts in the liver, the largest 25 mm.\n"
     "**Answer:** A"),
    ("us_liver_cyst", "llava-med", "The {{MRI}} image shows a cyst in the liver."),
    ("us_liver_cyst", "deepseek-r1", "<think>\nAnechoic, thin wall, posterior enhancement: a simple cyst, about "
     "2.5 cm. There may also be [[a small adjacent haemangioma]].\n</think>\nA"),
    ("us_liver_cyst", "chinese", "超声：肝右叶无回声囊肿，大小约{{九厘米}}。\n答案：A"),
    # ---- xray_wrist (X-ray, lateral, upper limb; left fracture)
    ("xray_wrist", "gpt-5", "Lateral radiograph of the left wrist: a transverse fracture of the distal radial "
     "metaphysis with dorsal angulation, a Colles fracture.\n\nFinal answer: B"),
    ("xray_wrist", "qwen3-thinking", "<think>\nLet me check the side marker first... so this is the {{right}} "
     "wrist. Lateral view. There's a fracture through the distal radius.\n</think>\nB"),
    ("xray_wrist", "chinese", "左腕关节{{正位}}X线片示桡骨远端骨折。\n答案：B"),
    ("xray_wrist", "markdown", "- Region: {{foot}}\n- View: lateral\n- Finding: fracture\n\nAnswer: B"),
    ("xray_wrist", "gemini", "**Findings:** distal radius fracture with an associated {{ulnar styloid "
     "fracture}}.\n**Answer:** B"),
    ("xray_wrist", "llava-med", "The X-ray shows a fracture of the distal radius. There may be [[an associated "
     "dislocation of the carpal bones]]."),
    ("xray_wrist", "deepseek-r1", "<think>\nWrist radiograph, lateral. Looking at the cortex of the radius and "
     "ulna. {{No fracture}}.\n</think>\nAnswer: A"),
    # ---- cxr_pneumothorax (X-ray, PA, chest; right pneumothorax, mild)
    ("cxr_pneumothorax", "gemini", "**View:** PA erect.\n**Finding:** small right apical pneumothorax, about 10% "
     "by volume.\n**Answer:** A"),
    ("cxr_pneumothorax", "gpt-5", "PA chest X-ray: right pneumothorax with approximately {{70%}} lung collapse and "
     "{{mediastinal shift to the left}}.\n\nFinal answer: C"),
    ("cxr_pneumothorax", "chinese", "胸片（PA位）示气胸，位于{{左}}侧肺尖，肺压缩约15%。\n答案：B"),
    ("cxr_pneumothorax", "markdown", "- Pneumothorax: {{bilateral}}, small\n- Effusion: none\n- View: PA\n\n"
     "Answer: A"),
    ("cxr_pneumothorax", "qwen3-thinking", "<think>\nPA chest film. I'm looking for a pleural line. At the right "
     "apex there's a thin white line with no lung markings beyond it: a pneumothorax. Size: the rim is thin, less "
     "than 2 cm, so small. Any tension? Trachea central, no mediastinal shift. Small right pneumothorax.\n"
     "</think>\nFinal answer: A"),
    ("cxr_pneumothorax", "deepseek-r1", "<think>\nRight apical pneumothorax, mild. Also possible "
     "[[subcutaneous emphysema]] along the right chest wall.\n</think>\nA"),
    ("cxr_pneumothorax", "llava-med", "The chest X-ray shows a right pneumothorax and {{bilateral lower lobe "
     "infiltrates}}."),
    ("cxr_pneumothorax", "chinese", "胸片示右侧气胸，{{大量}}，肺组织压缩约{{60%}}。\n答案：C"),
    # ---- ct_abd_normal (CT, axial, abdomen; normal)
    ("ct_abd_normal", "qwen3-thinking", "<think>\nAxial CT at the level of the kidneys. Liver: homogeneous "
     "attenuation, no focal lesion. Spleen: normal size. Kidneys: symmetric, no hydronephrosis, no stones. No "
     "free fluid. A normal study.\n</think>\nFinal answer: D"),
    ("ct_abd_normal", "gpt-5", "FINDINGS:\n- Liver: {{a 3.2 cm hypodense lesion in segment VII}}.\n- Spleen: "
     "normal.\n- Kidneys: {{a 6 mm non-obstructing calculus in the left kidney}}.\nIMPRESSION: {{hepatic "
     "lesion}}, indeterminate; {{left nephrolithiasis}}.\n\nFinal answer: B"),
    ("ct_abd_normal", "chinese", "腹部CT{{矢状位}}重建，肝、脾、双肾未见异常。\n答案：D"),
    ("ct_abd_normal", "markdown", "| Organ | Status |\n|---|---|\n| Liver | normal |\n| Spleen | normal |\n"
     "| Kidneys | {{bilateral hydronephrosis}} |\n\n**Answer:** C"),
    ("ct_abd_normal", "gemini", "**Modality:** {{ultrasound}}\n**Findings:** liver, spleen and kidneys are "
     "normal.\n**Answer:** D"),
    ("ct_abd_normal", "llava-med", "The CT scan shows {{splenomegaly}}."),
    ("ct_abd_normal", "deepseek-r1", "<think>\nLiver, spleen, kidneys look fine. Possibly [[a small renal cyst]] on "
     "the left, too small to characterise. Normal.\n</think>\nD"),
    # ---- mammo_mass (mammography, MLO, breast; left mass, spiculated)
    ("mammo_mass", "gpt-5", "Left MLO mammogram: an irregular mass with spiculated margins in the upper breast. "
     "BI-RADS 5.\n\nFinal answer: C"),
    ("mammo_mass", "chinese", "MLO位钼靶，肿块位于{{右侧}}乳腺外上象限，边缘毛刺。\n答案：C"),
    ("mammo_mass", "markdown", "| Descriptor | Value |\n|---|---|\n| Shape | oval |\n| Margin | {{circumscribed}} "
     "|\n| Side | left |\n\n**Answer:** A"),
    ("mammo_mass", "qwen3-thinking", "<think>\nIs this the CC or the MLO view? The pectoralis muscle is a triangle "
     "along the upper posterior edge, so MLO. Left breast. I see {{two}} spiculated masses, one in the upper and "
     "one in the lower breast.\n</think>\nFinal answer: C"),
    ("mammo_mass", "gemini", "**Findings:** spiculated left breast mass with {{associated fine linear "
     "calcifications}} and {{skin thickening}}.\n**Answer:** C"),
    ("mammo_mass", "llava-med", "The mammogram shows {{normal fibroglandular tissue without any mass}}."),
    ("mammo_mass", "deepseek-r1", "<think>\nLeft MLO. Spiculated mass. There is possibly [[a second smaller mass]] "
     "posteriorly.\n</think>\nC"),
    # ---- ct_two_nodules (CT, axial, chest; two left nodules, 6 and 8 mm)
    ("ct_two_nodules", "deepseek-r1", "<think>\nLet me count carefully. One nodule in the left upper lobe... wait, "
     "is that a vessel? It's round and doesn't branch, so a nodule, about 8 mm. Another one lower down in the left "
     "lung, about 6 mm. Right lung: nothing. So two nodules, both left, both under 1 cm.\n</think>\nFinal answer: "
     "B"),
    ("ct_two_nodules", "gpt-5", "Axial chest CT: {{three}} small left pulmonary nodules.\n\nFinal answer: C"),
    ("ct_two_nodules", "chinese", "胸部CT轴位：左肺见{{一枚}}小结节，约8毫米。\n答案：A"),
    ("ct_two_nodules", "markdown", "| # | Location | Size |\n|---|---|---|\n| 1 | left upper lobe | 8 mm |\n"
     "| 2 | left lower lobe | {{18 mm}} |\n\n**Answer:** B"),
    ("ct_two_nodules", "gemini", "**Findings:** two nodules. On the {{right}} side, one nodule in the upper lobe; "
     "the other in the left lower lobe.\n**Answer:** B"),
    ("ct_two_nodules", "llava-med", "The CT scan shows multiple nodules in {{both lungs}}."),
    ("ct_two_nodules", "qwen3-thinking", "<think>\nAxial CT. 2 nodules, left lung, 6 mm and 8 mm. There might be "
     "a [[third tiny nodule]] on the right, but it could be a vessel.\n</think>\nB"),
    ("ct_two_nodules", "qwen3-thinking", "<think>\nCounting nodules... a pair of small nodules in the left lung, "
     "6 mm and 0.8 cm. Nothing on the right.\n</think>\nB"),
    ("ct_two_nodules", "gpt-5", "Impression: {{4}} nodules in the left lung, all under 1 cm.\n\nFinal answer: D"),
    # ==== cases with incomplete finding lists (NEW_CASES): only `absent` decides an invented finding
    # ---- rsna_not_normal (X-ray, AP, chest; no findings listed; not normal; absent: lung opacity, pneumonia)
    ("rsna_not_normal", "gpt-5", "AP portable chest radiograph. {{Right lower lobe consolidation}} with air "
     "bronchograms, consistent with {{pneumonia}}.\n\nFinal answer: A"),
    ("rsna_not_normal", "qwen3-thinking", "<think>\nAP film, portable. Lungs: no focal airspace opacity. The heart "
     "looks enlarged, but AP projection magnifies it... The left costophrenic angle is blunted, a small effusion "
     "maybe. There's a central venous line. Not normal, but no pneumonia.\n</think>\nFinal answer: B"),
    ("rsna_not_normal", "chinese", "床旁胸片（AP位）：{{双肺多发斑片状磨玻璃影}}，考虑{{病毒性肺炎}}。另见心影增大。"
     "\n答案：A"),
    ("rsna_not_normal", "markdown", "| Category | Assessment |\n|---|---|\n| View | {{PA}} |\n| Lung opacity | "
     "none |\n| Pleural effusion | small, right |\n| Impression | {{normal chest}} |\n\n**Answer:** D"),
    ("rsna_not_normal", "gemini", "**Findings:** no dense consolidation. There is possibly [[a subtle left lower "
     "lobe opacity]], which could represent early [[aspiration pneumonia]].\n**Answer:** C"),
    ("rsna_not_normal", "llava-med", "The chest X-ray shows {{bilateral patchy opacities}}, which are suggestive of "
     "{{pneumonia}}. There is also a nodule in the right upper lobe."),
    ("rsna_not_normal", "deepseek-r1", "<think>\nOpacity or not? I see no airspace opacity. But the image isn't "
     "normal: the mediastinum looks widened and there are sternotomy wires. Not normal, no opacity.\n</think>\nB"),
    # ---- nih_effusion (X-ray, PA, chest; right pleural effusion; NIH label, incomplete; absent: none)
    ("nih_effusion", "gpt-5", "PA chest radiograph: the pleural effusion is on the {{left}}; {{the right hemithorax "
     "is clear}}.\n\nFinal answer: B"),
    ("nih_effusion", "qwen3-thinking", "<think>\nPA radiograph. Blunting of the right costophrenic angle with a "
     "meniscus: right pleural effusion. The left heart border looks prominent, maybe cardiomegaly. There's also "
     "some linear atelectasis at the left base.\n</think>\nFinal answer: A"),
    ("nih_effusion", "chinese", "胸部{{CT}}示右侧胸腔积液，伴右下肺膨胀不全。\n答案：A"),
    ("nih_effusion", "markdown", "- Modality: X-ray\n- View: {{lateral}}\n- Findings: right pleural effusion; left "
     "upper lobe mass, 3 cm\n- Impression: effusion and mass\n\nAnswer: A"),
    ("nih_effusion", "llava-med", "The chest X-ray shows clear lungs with {{no pleural effusion}}; {{no acute "
     "abnormality}}."),
    ("nih_effusion", "gemini", "**Findings:** right pleural effusion, moderate; a small left effusion as well "
     "(bilateral, right > left).\n**Answer:** A"),
    ("nih_effusion", "deepseek-r1", "<think>\nRight effusion, yes. Possible small right pneumothorax as well? "
     "Can't exclude it.\n</think>\nA"),
    # ---- iu_cardiomegaly (X-ray, PA, chest; cardiomegaly; absent: pneumothorax, pleural effusion, consolidation)
    ("iu_cardiomegaly", "gpt-5", "FINDINGS: The cardiac silhouette is enlarged. {{Small bilateral pleural "
     "effusions, left greater than right}}. No pneumothorax. Mild pulmonary vascular congestion.\nIMPRESSION: "
     "Cardiomegaly with {{small bilateral effusions}} and mild congestion, suggesting early CHF.\n\n"
     "Final answer: B"),
    ("iu_cardiomegaly", "qwen3-thinking", "<think>\nPA view. The heart is enlarged, cardiothoracic ratio about "
     "0.6: cardiomegaly. Lungs: {{lobar consolidation in the right lower lobe}}. Pleura: {{a small left apical "
     "pneumothorax}}. Also a patchy opacity in the left mid zone, nonspecific.\n</think>\nFinal answer: C"),
    ("iu_cardiomegaly", "chinese", "胸部正位片：心影增大，{{右侧少量胸腔积液}}，左下肺小结节。\n答案：B"),
    ("iu_cardiomegaly", "markdown", "| Finding | Status |\n|---|---|\n| Cardiomegaly | {{absent}} |\n"
     "| Pneumothorax | absent |\n| Effusion | absent |\n| Hilar adenopathy | present |\n\n**Answer:** A"),
    ("iu_cardiomegaly", "deepseek-r1", "<think>\nEnlarged cardiac silhouette: cardiomegaly. The angles look fairly "
     "sharp, though a [[small left pleural effusion]] cannot be excluded. Possible mild interstitial oedema.\n"
     "</think>\nAnswer: B"),
    ("iu_cardiomegaly", "gemini", "**Findings:** enlarged heart; no pneumothorax.\n**Impression:** cardiomegaly "
     "with a {{loculated right pleural effusion}}.\n**Answer:** B"),
    ("iu_cardiomegaly", "gpt-5", "Impression: cardiomegaly. No pneumothorax; {{patchy consolidation at the left "
     "base}}.\n\nFinal answer: C"),
    # ---- isic_nevus (dermoscopy, back; melanocytic nevus, benign; absent: the other six ISIC 2018 diagnoses)
    ("isic_nevus", "gpt-5", "Dermoscopy of a lesion on the back: symmetric reticular pigment network, regular "
     "globules, no regression structures. Benign compound melanocytic nevus.\n\nFinal answer: B"),
    ("isic_nevus", "qwen3-thinking", "<think>\nDermoscopic image. Let me apply ABCD: asymmetry in two axes, "
     "irregular border, several colours, a blue-white veil... the TDS is above 5.45, so this is a {{melanoma}}, "
     "probably a {{superficial spreading melanoma}}. Hmm, but the network is fairly regular... I'll still call "
     "it {{malignant}}.\n</think>\nFinal answer: A"),
    ("isic_nevus", "chinese", "皮肤镜图像：病灶位于{{面部}}，可见树枝状血管，考虑{{基底细胞癌}}。\n答案：C"),
    ("isic_nevus", "markdown", "| Feature | Observation |\n|---|---|\n| Modality | dermoscopy |\n| Pattern | "
     "milia-like cysts, comedo-like openings |\n| Diagnosis | {{seborrhoeic keratosis}} |\n| Malignancy | benign "
     "|\n\n**Answer:** C"),
    ("isic_nevus", "gemini", "**Findings:** central white scar-like patch with a delicate peripheral network.\n"
     "**Impression:** {{dermatofibroma}}.\n**Answer:** D"),
    ("isic_nevus", "llava-med", "The dermoscopic image shows a pigmented lesion, which may be [[a melanoma in "
     "situ]]."),
    ("isic_nevus", "deepseek-r1", "<think>\nDermoscopy. Red-purple lacunae? No. Homogeneous steel-blue "
     "pigmentation without network... that's a blue nevus.\n</think>\nAnswer: B"),
    ("isic_nevus", "gpt-5", "Dermoscopy shows well-demarcated red lacunae: a {{cherry angioma}}.\n\nFinal answer: D"),
    ("isic_nevus", "markdown", "| Option | Fits? |\n|---|---|\n| Melanoma | no |\n| Melanocytic nevus | yes |\n"
     "| Seborrhoeic keratosis | no |\n\n**Answer:** B"),
    # ---- brats_glioma (MRI, axial, FLAIR, head; right mass hyperintense; glioma; incomplete; absent: none)
    ("brats_glioma", "gpt-5", "Axial FLAIR: a large hyperintense infiltrative mass in the right temporal lobe with "
     "mass effect on the right lateral ventricle. Glioblastoma favoured.\n\nFinal answer: A"),
    ("brats_glioma", "qwen3-thinking", "<think>\nFLAIR, axial. Right hemisphere hyperintense mass. There are also "
     "scattered small periventricular white-matter hyperintensities on both sides, probably small-vessel change.\n"
     "</think>\nFinal answer: A"),
    ("brats_glioma", "chinese", "MRI {{T1增强}}轴位：右侧颞叶占位，考虑{{脑膜瘤}}。\n答案：B"),
    ("brats_glioma", "markdown", "1. Sequence: FLAIR\n2. Plane: {{sagittal}}\n3. Lesion: right, hyperintense\n"
     "4. Additional: small left subdural collection\n\nAnswer: A"),
    ("brats_glioma", "llava-med", "The brain MRI shows a {{hypointense}} lesion in the right hemisphere with "
     "surrounding oedema."),
    ("brats_glioma", "deepseek-r1", "<think>\nRight hemisphere FLAIR-bright mass: glioma. Possibly some "
     "leptomeningeal spread, can't tell on FLAIR alone.\n</think>\nAnswer: A"),
    ("brats_glioma", "gpt-5", "Axial FLAIR: {{no mass}}; {{the brain is normal}}.\n\nFinal answer: D"),
    # ---- kvasir_polyp (endoscopy, colon; polyp; incomplete; absent: none)
    ("kvasir_polyp", "gpt-5", "Colonoscopy image: a sessile polyp with a regular pit pattern (NICE type 2), likely "
     "an adenoma.\n\nFinal answer: B"),
    ("kvasir_polyp", "chinese", "{{胃镜}}图像：{{胃窦}}可见一隆起性息肉。\n答案：B"),
    ("kvasir_polyp", "markdown", "- Modality: {{CT colonography}}\n- Finding: polyp\n- Also: diverticula in the "
     "sigmoid\n\nAnswer: B"),
    ("kvasir_polyp", "llava-med", "The endoscopic image shows colonic mucosa with {{no polyps}}."),
    ("kvasir_polyp", "qwen3-thinking", "<think>\nWhite-light colonoscopy frame. There's a raised lesion on a stalk: "
     "a pedunculated polyp. Also some blood in the lumen and a small ulcer nearby.\n</think>\nFinal answer: A"),
    # ---- cbis_calcification (mammography, CC, breast; right calcification; malignant; incomplete; absent: none)
    ("cbis_calcification", "gpt-5", "Right CC mammogram: a cluster of fine pleomorphic calcifications in the outer "
     "breast. BI-RADS 4C, suspicious for DCIS.\n\nFinal answer: C"),
    ("cbis_calcification", "chinese", "{{左乳}}CC位钼靶：可见簇状细小钙化，考虑恶性。\n答案：C"),
    ("cbis_calcification", "markdown", "| Item | Value |\n|---|---|\n| View | {{MLO}} |\n| Side | right |\n"
     "| Calcifications | fine linear branching |\n| Mass | irregular, 12 mm |\n| Assessment | {{benign}} |\n\n"
     "**Answer:** A"),
    ("cbis_calcification", "gemini", "**Findings:** {{no calcifications}}; a spiculated mass in the right breast.\n"
     "**Answer:** A"),
]


def build() -> list[dict]:
    """The rows: the corpus's one ``build`` reads the markers, each row with this set's copy of its case
    (``meta.findings_complete``, and ``absent`` for :data:`NEW_CASES`, which the corpus's ``CASES`` lacks)."""
    return _src.build(ENTRIES, "s", hedged=True, cases=CASES)


if __name__ == "__main__":
    _src.write("rationale_heldout6.jsonl", build())
