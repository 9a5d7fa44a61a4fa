"""Source of ``rationale_heldout5.jsonl`` (issue 39, second round): a fifth fresh held-out set of hand-labelled
rationales, written in the claims39b session *before* any rule of the checker was changed for the misses the
fourth set recorded, and labelled before the checker was run on any of these. Same cases and labelling rule as
``rationale_corpus_source.py``: ``{{...}}`` marks every statement about this image that the case's fields make
false (a finding not listed is absent). It is scored twice only: once before the session's changes and once
after them (docs/metrics.md); nothing was tuned on it.

As in held-out 4, ``[[...]]`` marks a *hedged hallucination*: a finding or diagnosis the case does not have, put
forward with a weak hedge ("possible", "may", "could", "cannot exclude", "可能") about this image; it is not a gold
``contradicted`` span, and the test counts how many of these the checker notes ``hedged_hallucination``.

The hallucinations are of varied kinds on purpose, after what vision-language models write: wrong modality, plane,
view, sequence or CT window; wrong side (in prose, Chinese and table rows); wrong body region or organ; invented
findings (rib fractures, hydrocephalus, ascites, calcifications, retinal detachment, …); wrong counts, sizes (units,
languages, a percentage) and descriptors; wrong grades; the wrong diagnosis or the case's mimic; normal-study or
denial claims on abnormal cases; findings in Markdown tables and lists; Chinese; hedged ones. Regenerate with
``python tests/data/rationale_heldout5_source.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import rationale_corpus_source as _src  # noqa: E402  (the corpus's cases and its one build/write)

CASES = _src.CASES

ENTRIES: list[tuple[str, str, str]] = [
    # ---- cxr_left_effusion (X-ray, PA, chest; left pleural effusion, moderate)
    ("cxr_left_effusion", "gpt-5", "PA chest radiograph. Moderate left-sided pleural effusion obscuring the left "
     "hemidiaphragm. Cardiomediastinal silhouette within normal limits. No pneumothorax.\n\nFinal answer: B"),
    ("cxr_left_effusion", "qwen3-thinking", "<think>\nHmm, this is a chest X-ray in {{lateral}} projection. The "
     "fluid is on the left, moderate volume.\n</think>\nFinal answer: B"),
    ("cxr_left_effusion", "chinese", "胸部X线正位片示{{右侧}}胸腔积液，中等量。\n答案：A"),
    ("cxr_left_effusion", "markdown", "| Finding | Detail |\n|---|---|\n| Pleural effusion | left, moderate |\n"
     "| Heart | {{enlarged}} |\n| Lungs | {{right upper lobe mass}} |\n\n**Answer:** B"),
    ("cxr_left_effusion", "gemini", "This frontal chest radiograph demonstrates a {{massive}} left pleural "
     "effusion. The answer is B."),
    ("cxr_left_effusion", "deepseek-r1", "<think>\nOK. Effusion or consolidation? The meniscus favours effusion. "
     "Left side. Also I notice {{a few rib fractures on the left}}.\n</think>\nAnswer: B"),
    ("cxr_left_effusion", "llava-med", "The chest X-ray reveals a left pleural effusion, likely secondary to "
     "{{congestive heart failure}}. Answer: B"),
    ("cxr_left_effusion", "gpt-5", "Left pleural effusion, moderate. A [[left lower lobe pneumonia]] behind the "
     "effusion is possible.\n\nFinal answer: B"),
    # ---- cxr_normal (X-ray, PA, chest; normal)
    ("cxr_normal", "qwen3-thinking", "<think>\nPA film. Lungs clear. Heart not enlarged. Costophrenic angles "
     "sharp. No pneumothorax. This is normal.\n</think>\nFinal answer: D"),
    ("cxr_normal", "gpt-5", "Frontal chest radiograph demonstrates {{a right upper lobe cavitary lesion}}, "
     "suspicious for {{tuberculosis}}.\n\nFinal answer: C"),
    ("cxr_normal", "chinese", "胸部正位片，{{心影增大}}。\n答案：A"),
    ("cxr_normal", "markdown", "- View: {{lateral}}\n- Lungs: clear\n- Heart: normal\n- Impression: normal "
     "chest\n\nAnswer: D"),
    ("cxr_normal", "gemini", "The chest radiograph shows a {{left-sided pneumothorax}} with a visible pleural "
     "line. The answer is D."),
    ("cxr_normal", "deepseek-r1", "<think>\nLet me count ribs... ten posterior ribs, good inspiration. Lungs "
     "clear. But the {{right hilum is enlarged}}, hmm. Could be [[lymphadenopathy]].\n</think>\nAnswer: D"),
    ("cxr_normal", "llava-med", "The chest X-ray shows {{increased opacity in the left lower lobe}}, which may "
     "indicate [[pneumonia]]. Answer: B"),
    # ---- cxr_pneumonia (X-ray, AP, chest; right consolidation, pneumonia)
    ("cxr_pneumonia", "gpt-5", "AP portable radiograph. Right lower lobe airspace consolidation; no pleural "
     "effusion; heart size normal. Consistent with community-acquired pneumonia.\n\nFinal answer: A"),
    ("cxr_pneumonia", "qwen3-thinking", "<think>\nA plain radiograph, AP. The consolidation is in the {{left}} "
     "lower zone. Pneumonia.\n</think>\nFinal answer: B"),
    ("cxr_pneumonia", "chinese", "胸部X线片（{{后前位}}）：右下肺片状高密度影，考虑肺炎。\n答案：A"),
    ("cxr_pneumonia", "markdown", "**Findings**\n- Right lower zone: consolidation\n- Heart: normal\n"
     "- Pleura: {{small right effusion}}\n\n**Diagnosis:** pneumonia\n\nFinal answer: A"),
    ("cxr_pneumonia", "gemini", "There is a {{mass}} in the right lower lobe; {{lung cancer}} is the leading "
     "diagnosis. The answer is C."),
    ("cxr_pneumonia", "deepseek-r1", "<think>\nOpacity at the right base. Is it consolidation? Yes, air "
     "bronchograms. Pneumonia.\n</think>\nAnswer: A"),
    ("cxr_pneumonia", "llava-med", "The image is a chest {{CT}} showing right lower lobe consolidation consistent "
     "with pneumonia. Answer: A"),
    # ---- ct_nodule (CT, axial, lung window, chest; right nodule 14 mm, spiculated)
    ("ct_nodule", "qwen3-thinking", "<think>\nAxial CT slice, lung window. A single nodule in the right lung, "
     "spiculated edges, about 14 mm.\n</think>\nFinal answer: C"),
    ("ct_nodule", "gpt-5", "Axial CT in {{soft-tissue window}}: a 14 mm spiculated right upper lobe nodule.\n\n"
     "Final answer: C"),
    ("ct_nodule", "chinese", "胸部CT{{冠状位}}重建示右肺结节，约1.4厘米，{{边缘光滑}}。\n答案：B"),
    ("ct_nodule", "markdown", "1. Modality: CT\n2. Nodule: right upper lobe\n3. Size: {{28 mm}}\n"
     "4. Margin: spiculated\n\nAnswer: C"),
    ("ct_nodule", "gemini", "This CT shows {{three}} nodules in the right lung, all spiculated. The answer is A."),
    ("ct_nodule", "deepseek-r1", "<think>\nLung window CT. Right nodule, 14 mm, spiculated. There's also {{a small "
     "left pneumothorax}}.\n</think>\nAnswer: C"),
    ("ct_nodule", "llava-med", "The CT scan of the {{abdomen}} shows a nodule in the right lung. Answer: C"),
    # ---- mri_glioma (MRI, axial, T2, head; left mass hyperintense; glioma; mimic meningioma)
    ("mri_glioma", "gpt-5", "Axial T2-weighted MRI shows a heterogeneous hyperintense intra-axial mass in the left "
     "cerebral hemisphere. Findings favour glioma.\n\nFinal answer: A"),
    ("mri_glioma", "qwen3-thinking", "<think>\nMRI, axial. The lesion is in the {{right}} frontal lobe, T2 "
     "bright. Glioma.\n</think>\nFinal answer: A"),
    ("mri_glioma", "chinese", "{{矢状位}}T2加权像示左侧额叶高信号占位，考虑胶质瘤。\n答案：A"),
    ("mri_glioma", "markdown", "| Feature | Value |\n|---|---|\n| Modality | MRI |\n| Sequence | {{DWI}} |\n"
     "| Lesion | left, hyperintense |\n| Diagnosis | glioma |\n\n**Answer:** A"),
    ("mri_glioma", "gemini", "The axial MR image shows a left mass with a dural tail, typical of a "
     "{{meningioma}}. The answer is B."),
    ("mri_glioma", "deepseek-r1", "<think>\nT2 image. Left hemisphere mass, bright, with {{intratumoral "
     "haemorrhage}}. Glioblastoma.\n</think>\nAnswer: A"),
    ("mri_glioma", "llava-med", "The brain MRI is {{normal}} with {{no focal lesion}}. Answer: D"),
    # ---- mri_meningioma (MRI, coronal, T1 post-contrast, head; right mass; meningioma; mimic glioma)
    ("mri_meningioma", "gpt-5", "Coronal post-gadolinium T1: homogeneously enhancing extra-axial mass along the "
     "right convexity with a dural tail; meningioma.\n\nFinal answer: C"),
    ("mri_meningioma", "qwen3-thinking", "<think>\nThis is a {{non-contrast}} T1... the mass on the right is "
     "bright though. Meningioma.\n</think>\nFinal answer: C"),
    ("mri_meningioma", "chinese", "冠状位增强T1像示{{左侧}}脑膜瘤。\n答案：B"),
    ("mri_meningioma", "markdown", "- Plane: coronal\n- Sequence: T1 post-contrast\n- Location: right convexity\n"
     "- Diagnosis: {{glioblastoma}}\n\nAnswer: A"),
    ("mri_meningioma", "gemini", "Coronal MRI: a right-sided enhancing mass. There are also {{multiple smaller "
     "enhancing lesions}} suggestive of {{metastases}}. The answer is D."),
    ("mri_meningioma", "deepseek-r1", "<think>\nCoronal slice, enhanced. Right extra-axial mass. I also see "
     "{{hydrocephalus}} with dilated ventricles.\n</think>\nAnswer: C"),
    ("mri_meningioma", "llava-med", "The {{CT}} image shows a right-sided brain mass. Answer: C"),
    # ---- mri_normal (MRI, axial, FLAIR, head; normal)
    ("mri_normal", "gpt-5", "Axial FLAIR: no parenchymal signal abnormality, no mass or haemorrhage. Normal.\n\n"
     "Final answer: D"),
    ("mri_normal", "qwen3-thinking", "<think>\nAxial FLAIR. There's {{a bright lesion in the left temporal "
     "lobe}}... maybe [[encephalitis]]?\n</think>\nFinal answer: B"),
    ("mri_normal", "chinese", "轴位FLAIR像示{{右侧基底节区梗死灶}}。\n答案：B"),
    ("mri_normal", "markdown", "**Modality:** MRI\n**Plane:** {{sagittal}}\n**Findings:** none\n\n"
     "Final answer: D"),
    ("mri_normal", "gemini", "This {{T1-weighted}} axial image of the brain appears normal. The answer is D."),
    ("mri_normal", "deepseek-r1", "<think>\nIs this a CT? No, it's MRI, FLAIR. Ventricles look {{dilated}}, so "
     "[[normal pressure hydrocephalus]] could be considered.\n</think>\nAnswer: C"),
    ("mri_normal", "llava-med", "The MRI shows {{a large glioma}} in the right hemisphere. Answer: A"),
    # ---- ct_haemorrhage (CT, axial, non-contrast, head; right haemorrhage 30 mm, severe)
    ("ct_haemorrhage", "qwen3-thinking", "<think>\nNon-contrast CT. A right basal ganglia hyperdensity, about "
     "3 cm. Acute haemorrhage, severe.\n</think>\nFinal answer: B"),
    ("ct_haemorrhage", "gpt-5", "Axial {{contrast-enhanced}} CT of the head: right-sided intraparenchymal "
     "haemorrhage measuring 3 cm.\n\nFinal answer: B"),
    ("ct_haemorrhage", "chinese", "头颅CT平扫：{{左侧}}基底节区高密度影，考虑脑出血。\n答案：C"),
    ("ct_haemorrhage", "markdown", "| Finding | Value |\n|---|---|\n| Haemorrhage | right, {{12 mm}} |\n"
     "| Severity | severe |\n\n**Answer:** B"),
    ("ct_haemorrhage", "gemini", "This {{MRI}} of the brain shows a right hemorrhage. The answer is B."),
    ("ct_haemorrhage", "deepseek-r1", "<think>\nA dark area in the right hemisphere: an {{infarct}}, {{no "
     "haemorrhage}}.\n</think>\nAnswer: C"),
    ("ct_haemorrhage", "llava-med", "The CT image shows a {{mild}} haemorrhage on the right. Answer: B"),
    # ---- fundus_dr (fundus photography, eye; hard exudates + microaneurysms; DR moderate)
    ("fundus_dr", "gpt-5", "Fundus photograph: microaneurysms and hard exudates in the posterior pole, consistent "
     "with moderate non-proliferative diabetic retinopathy.\n\nFinal answer: C"),
    ("fundus_dr", "qwen3-thinking", "<think>\nFundus image. Microaneurysms, yes. Hard exudates near the macula. "
     "Is it severe? No, moderate. Also {{flame haemorrhages}}.\n</think>\nFinal answer: C"),
    ("fundus_dr", "chinese", "眼底彩照示{{视盘水肿}}。\n答案：A"),
    ("fundus_dr", "markdown", "- Modality: {{OCT}}\n- Findings: microaneurysms, hard exudates\n- Grade: moderate\n\n"
     "Answer: C"),
    ("fundus_dr", "gemini", "The fundus image shows {{severe}} diabetic retinopathy. The answer is D."),
    ("fundus_dr", "deepseek-r1", "<think>\nRetinal photograph. I see microaneurysms. Hard exudates? {{None}}. "
     "{{Mild}}.\n</think>\nAnswer: B"),
    ("fundus_dr", "llava-med", "The image shows a {{retinal detachment}}. Answer: B"),
    # ---- us_liver_cyst (ultrasound, abdomen, liver; cyst 25 mm anechoic)
    ("us_liver_cyst", "qwen3-thinking", "<think>\nGrey-scale ultrasound. Round anechoic lesion in the liver, 25 mm, "
     "posterior enhancement. Simple cyst.\n</think>\nFinal answer: A"),
    ("us_liver_cyst", "gpt-5", "Abdominal ultrasound: a {{hypoechoic}} 2.5 cm lesion in the liver.\n\n"
     "Final answer: B"),
    ("us_liver_cyst", "chinese", "超声示{{胆囊}}内无回声区，约25毫米。\n答案：A"),
    ("us_liver_cyst", "markdown", "| Feature | Value |\n|---|---|\n| Organ | {{kidney}} |\n| Content | cystic |\n"
     "| Size | 25 mm |\n\n**Answer:** A"),
    ("us_liver_cyst", "gemini", "This {{CT}} image shows a simple liver cyst. The answer is A."),
    ("us_liver_cyst", "deepseek-r1", "<think>\nUltrasound of the liver. {{Multiple}} cysts, the largest 25 mm.\n"
     "</think>\nAnswer: A"),
    ("us_liver_cyst", "llava-med", "The ultrasound shows an anechoic cyst of the liver with {{ascites}}. Answer: A"),
    # ---- xray_wrist (X-ray, lateral, upper limb; left fracture)
    ("xray_wrist", "gpt-5", "Lateral view of the left wrist: distal radial fracture with dorsal tilt.\n\n"
     "Final answer: A"),
    ("xray_wrist", "qwen3-thinking", "<think>\nX-ray, wrist. {{AP}} view. Fracture line in the distal radius, "
     "left.\n</think>\nFinal answer: A"),
    ("xray_wrist", "chinese", "左腕关节侧位X线片，{{未见骨折}}。\n答案：D"),
    ("xray_wrist", "markdown", "- Region: wrist\n- Side: {{right}}\n- Finding: distal radius fracture\n\nAnswer: A"),
    ("xray_wrist", "gemini", "The lateral radiograph of the left {{ankle}} shows a fracture. The answer is A."),
    ("xray_wrist", "llava-med", "The X-ray shows a {{dislocation}} of the wrist. Answer: B"),
    # ---- cxr_pneumothorax (X-ray, PA, chest; right pneumothorax, mild)
    ("cxr_pneumothorax", "qwen3-thinking", "<think>\nPA chest film. Thin pleural line at the right apex, no lung "
     "markings beyond. Small right pneumothorax.\n</think>\nFinal answer: B"),
    ("cxr_pneumothorax", "gpt-5", "PA radiograph: {{tension}} pneumothorax on the right with {{tracheal "
     "deviation}} to the left.\n\nFinal answer: C"),
    ("cxr_pneumothorax", "chinese", "胸片示右侧气胸，{{肺组织压缩约80%}}。\n答案：C"),
    ("cxr_pneumothorax", "markdown", "1. View: PA\n2. Finding: pneumothorax\n3. Side: right\n4. Also: {{rib "
     "fracture}}\n\nAnswer: B"),
    ("cxr_pneumothorax", "gemini", "The chest radiograph shows a right pneumothorax and a {{left pleural "
     "effusion}}. The answer is B."),
    ("cxr_pneumothorax", "deepseek-r1", "<think>\nFrontal film. Right-sided pneumothorax, {{moderate}} in size.\n"
     "</think>\nAnswer: B"),
    ("cxr_pneumothorax", "llava-med", "The chest X-ray shows {{a pneumothorax on the left side}}. Answer: C"),
    # ---- ct_abd_normal (CT, axial, abdomen; normal)
    ("ct_abd_normal", "qwen3-thinking", "<think>\nAxial abdominal CT. Liver homogeneous, spleen normal, kidneys "
     "enhance symmetrically. Nothing abnormal.\n</think>\nFinal answer: D"),
    ("ct_abd_normal", "gpt-5", "Axial CT abdomen: {{hepatomegaly}} with {{multiple hypodense liver lesions}}, "
     "likely {{metastases}}.\n\nFinal answer: B"),
    ("ct_abd_normal", "chinese", "腹部CT{{冠状位}}，肝脾肾未见异常。\n答案：D"),
    ("ct_abd_normal", "markdown", "| Organ | Finding |\n|---|---|\n| Liver | normal |\n| Spleen | {{enlarged}} |\n"
     "| Kidneys | normal |\n\n**Answer:** B"),
    ("ct_abd_normal", "gemini", "This is an {{MRI}} of the abdomen, which appears normal. The answer is D."),
    ("ct_abd_normal", "llava-med", "The CT scan shows {{kidney stones}} in the left kidney. Answer: A"),
    # ---- mammo_mass (mammography, MLO, breast; left mass spiculated)
    ("mammo_mass", "qwen3-thinking", "<think>\nMammogram, mediolateral oblique view. There's a spiculated mass in "
     "the left breast. Highly suspicious.\n</think>\nFinal answer: B"),
    ("mammo_mass", "gpt-5", "Left MLO mammogram: a round, {{circumscribed}} mass, likely a {{fibroadenoma}}.\n\n"
     "Final answer: A"),
    ("mammo_mass", "chinese", "左乳{{CC位}}钼靶示毛刺状肿块。\n答案：B"),
    ("mammo_mass", "markdown", "- View: MLO\n- Side: left\n- Margin: spiculated\n- Calcifications: {{clustered "
     "pleomorphic}}\n\nAnswer: B"),
    ("mammo_mass", "gemini", "The mammogram shows {{no suspicious mass}}; the breast tissue is dense. The answer "
     "is D."),
    ("mammo_mass", "llava-med", "The {{ultrasound}} shows a spiculated breast mass on the left. Answer: B"),
    ("mammo_mass", "deepseek-r1", "<think>\nLeft breast. Spiculated mass. Possibly [[axillary lymphadenopathy]] "
     "as well.\n</think>\nAnswer: B"),
    # ---- ct_two_nodules (CT, axial, chest; two left nodules, 6 and 8 mm)
    ("ct_two_nodules", "qwen3-thinking", "<think>\nAxial chest CT. Two nodules on the left, 6 and 8 millimetres. "
     "Small.\n</think>\nFinal answer: B"),
    ("ct_two_nodules", "gpt-5", "Axial CT: {{bilateral}} pulmonary nodules, the largest 8 mm.\n\nFinal answer: C"),
    ("ct_two_nodules", "chinese", "胸部CT示左肺两个结节，最大者约{{15毫米}}。\n答案：B"),
    ("ct_two_nodules", "markdown", "| Nodule | Side | Size |\n|---|---|---|\n| 1 | left | 6 mm |\n"
     "| 2 | {{right}} | 8 mm |\n\n**Answer:** B"),
    ("ct_two_nodules", "gemini", "The axial CT demonstrates {{a solitary}} left pulmonary nodule. The answer is A."),
    ("ct_two_nodules", "deepseek-r1", "<think>\nTwo left nodules. Also {{a large right pleural effusion}}.\n"
     "</think>\nAnswer: B"),
    ("ct_two_nodules", "llava-med", "The CT shows two nodules in the left lung, possibly [[metastases]]. Answer: B"),
]



def build() -> list[dict]:
    return _src.build(ENTRIES, "q", hedged=True)


if __name__ == "__main__":
    _src.write("rationale_heldout5.jsonl", build())
