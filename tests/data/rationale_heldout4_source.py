"""Source of ``rationale_heldout4.jsonl`` (issue 39): a fourth fresh held-out set of hand-labelled rationales,
written in the claims39 session *before* any rule of the checker was changed for the misses the third set
recorded, and labelled before the checker was run on any of these. Same cases and labelling rule as
``rationale_corpus_source.py``: ``{{...}}`` marks every statement about this image that the case's fields make
false (a finding not listed is absent). It is scored twice only: once before the session's changes and once
after them (docs/metrics.md); nothing was tuned on it.

One addition: ``[[...]]`` marks a *hedged hallucination*: a finding or diagnosis the case does not have, put
forward with a weak hedge ("possible", "may", "cannot exclude", "可能") about this image. It is not a statement
the case makes false (the rule above leaves weak hedges unmarked), so it is not a gold ``contradicted`` span;
the test counts how many of these the checker notes ``hedged_hallucination``. Alternatives weighed against each
other ("A or B", "differential: A vs B") and restated options are not marked.

The hallucinations are of varied kinds on purpose: side, size (units and languages), count, margin, echogenicity,
density, severity, plane, view, sequence, modality, body region, a region or organ called normal that holds the
finding, a finding the case lacks, a finding the case has denied, the wrong diagnosis, a normal study of an
abnormal case. Regenerate with ``python tests/data/rationale_heldout4_source.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import rationale_corpus_source as _src  # noqa: E402  (the corpus's cases and its one build/write)

CASES = _src.CASES

ENTRIES: list[tuple[str, str, str]] = [
    # ---- cxr_left_effusion (X-ray, PA, chest; left pleural effusion, moderate)
    ("cxr_left_effusion", "gpt-5", "Findings: PA chest radiograph. Blunting of the left costophrenic angle with a "
     "meniscus; moderate left pleural effusion. The right lung is clear. {{The heart is enlarged}}.\n\n"
     "Final answer: B"),
    ("cxr_left_effusion", "qwen3-thinking", "<think>\nOkay, a frontal chest film. The left base is hazy, that's "
     "fluid. Compare both sides: the left hemithorax shows the effusion, and the right side also has a "
     "small effusion? No, the right angle is sharp. Hmm, wait, actually I think there's a tiny [[pneumothorax]] "
     "possibly at the left apex.\n</think>\nFinal answer: B"),
    ("cxr_left_effusion", "chinese", "胸部正位片：左侧{{少量}}胸腔积液，右肺清晰。\n答案：B"),
    ("cxr_left_effusion", "markdown", "### Observations\n| Feature | Finding |\n|---|---|\n| View | PA |\n"
     "| Side | {{Right}} |\n| Finding | pleural effusion |\n\n**Answer:** A"),
    ("cxr_left_effusion", "gemini", "This appears to be an {{AP}} supine radiograph. The left lower zone shows a "
     "layering effusion with {{mediastinal shift}} to the right. The answer is B."),
    ("cxr_left_effusion", "deepseek-r1", "<think>\nLet me think. Blunted left angle. Effusion on the left. Severity? "
     "It reaches the mid zone, so moderate. There may also be [[consolidation]] behind it.\n</think>\n"
     "Answer: B"),
    ("cxr_left_effusion", "llava-med", "The {{CT scan}} shows a left-sided pleural effusion with {{a "
     "pneumothorax}}. Answer: C"),
    ("cxr_left_effusion", "gpt-5", "Frontal chest radiograph with a {{severe}} left pleural effusion; an "
     "underlying [[mass]] cannot be excluded.\n\nFinal answer: B"),
    # ---- cxr_normal (X-ray, PA, chest; normal)
    ("cxr_normal", "gpt-5", "PA chest X-ray. Lungs are clear bilaterally. Heart size normal. No pleural effusion "
     "or pneumothorax. Impression: no acute cardiopulmonary abnormality.\n\nFinal answer: D"),
    ("cxr_normal", "qwen3-thinking", "<think>\nSo the heart. The cardiothoracic ratio looks more than half, "
     "so {{cardiomegaly}}. Lungs clear otherwise.\n</think>\nFinal answer: A"),
    ("cxr_normal", "chinese", "胸部后前位片，{{左下肺可见斑片状实变}}，考虑{{肺炎}}。\n答案：B"),
    ("cxr_normal", "markdown", "**Findings**\n1. Lungs: clear\n2. Pleura: no effusion\n3. Heart: normal size\n"
     "4. Bones: {{a fracture of the right 6th rib}}\n\n**Answer:** D"),
    ("cxr_normal", "gemini", "The radiograph appears normal, though a [[small nodule]] in the right upper zone "
     "cannot be excluded. The answer is D."),
    ("cxr_normal", "deepseek-r1", "<think>\nCostophrenic angles: sharp. Lung markings to the edge, no "
     "pneumothorax. Heart normal. Normal chest.\n</think>\nAnswer: D"),
    ("cxr_normal", "llava-med", "The chest x-ray shows {{bilateral pleural effusions}}. Answer: B"),
    # ---- cxr_pneumonia (X-ray, AP, chest; right consolidation, pneumonia)
    ("cxr_pneumonia", "gpt-5", "Portable AP chest film. Dense right lower zone consolidation with air "
     "bronchograms; the left lung is clear. Consistent with right lower lobe pneumonia.\n\nFinal answer: A"),
    ("cxr_pneumonia", "qwen3-thinking", "<think>\nThis seems to be a {{lateral}} radiograph... The opacity is in "
     "the right lower lobe. It's consolidation, pneumonia.\n</think>\nFinal answer: A"),
    ("cxr_pneumonia", "chinese", "床旁胸片示右下肺实变，伴{{右侧胸腔积液}}，考虑肺炎。\n答案：A"),
    ("cxr_pneumonia", "markdown", "- **Modality:** chest radiograph\n- **Finding:** consolidation in the {{left "
     "lower lobe}}\n- **Impression:** pneumonia\n\nFinal answer: B"),
    ("cxr_pneumonia", "gemini", "The {{right lung is clear}}; the findings point to {{pulmonary oedema}} rather "
     "than {{infection}}. The answer is C."),
    ("cxr_pneumonia", "deepseek-r1", "<think>\nRight-sided airspace opacity. Could be [[atelectasis]] too, "
     "maybe. But air bronchograms favour pneumonia.\n</think>\nAnswer: A"),
    ("cxr_pneumonia", "llava-med", "The chest x-ray is {{unremarkable}}. Answer: D"),
    ("cxr_pneumonia", "chinese", "胸片示{{双肺清晰}}，{{未见实变}}。\n答案：D"),
    # ---- ct_nodule (CT, axial, lung window, chest; right nodule 14 mm, spiculated)
    ("ct_nodule", "gpt-5", "Axial chest CT in lung window: a 1.4 cm spiculated nodule in the right upper lobe. "
     "No pleural effusion, no lymphadenopathy.\n\nFinal answer: C"),
    ("ct_nodule", "qwen3-thinking", "<think>\nCT of the chest. The nodule, right side, measures roughly "
     "{{4 centimetres}}, and its margins look {{smooth}}.\n</think>\nFinal answer: B"),
    ("ct_nodule", "chinese", "胸部CT示右肺上叶结节，直径约14毫米，边缘可见毛刺。\n答案：C"),
    ("ct_nodule", "markdown", "| Feature | Value |\n|---|---|\n| Count | 1 |\n| Size | 14 mm |\n"
     "| Margin | {{circumscribed}} |\n\n**Answer:** C"),
    ("ct_nodule", "gemini", "This {{coronal}} CT reconstruction shows a right lung nodule of about 14 mm with "
     "{{calcified}} content. The answer is A."),
    ("ct_nodule", "deepseek-r1", "<think>\nIs this MRI or CT? The lung parenchyma is black and vessels are white: "
     "CT. The nodule is spiculated, right lung. Suspicious for malignancy.\n</think>\nAnswer: C"),
    ("ct_nodule", "llava-med", "The CT image shows a {{left}} lung nodule with a small [[pleural effusion]], "
     "possibly. Answer: B"),
    # ---- mri_glioma (MRI, axial, T2, head; left mass hyperintense; glioma; mimic meningioma)
    ("mri_glioma", "gpt-5", "Axial T2-weighted MR image: a large hyperintense infiltrative mass in the left "
     "hemisphere with surrounding {{oedema}}, most likely a high-grade glioma.\n\nFinal answer: A"),
    ("mri_glioma", "qwen3-thinking", "<think>\nThe sequence appears to be {{T1-weighted}} because... hmm. The "
     "lesion is left-sided and bright. Glioma.\n</think>\nFinal answer: A"),
    ("mri_glioma", "chinese", "轴位T2加权像示左侧大脑半球{{低信号}}肿块，考虑胶质瘤。\n答案：A"),
    ("mri_glioma", "markdown", "1. **Plane:** axial\n2. **Side:** left\n3. **Signal:** hyperintense\n"
     "4. **Diagnosis:** glioma\n\nFinal answer: A"),
    ("mri_glioma", "gemini", "This is an axial {{CT}} of the head showing a left frontal mass, consistent with "
     "{{meningioma}}. The answer is B."),
    ("mri_glioma", "deepseek-r1", "<think>\nLeft intra-axial T2-bright mass. Rest of the brain: the {{right "
     "hemisphere shows a second smaller lesion}}. Glioma.\n</think>\nAnswer: A"),
    ("mri_glioma", "llava-med", "The MRI shows a left-sided brain mass, and [[abscess]] may be considered. "
     "Answer: A"),
    # ---- mri_meningioma (MRI, coronal, T1 post-contrast, head; right mass; meningioma; mimic glioma)
    ("mri_meningioma", "gpt-5", "Coronal contrast-enhanced T1 MRI: avidly enhancing extra-axial mass over the "
     "right convexity, broad dural base. Meningioma.\n\nFinal answer: C"),
    ("mri_meningioma", "qwen3-thinking", "<think>\nPlane: this looks {{axial}}. A mass on the right, enhancing. "
     "Meningioma.\n</think>\nFinal answer: C"),
    ("mri_meningioma", "chinese", "冠状位{{T2加权}}像示右侧脑外肿块，考虑脑膜瘤。\n答案：C"),
    ("mri_meningioma", "markdown", "- Sequence: {{FLAIR}}\n- Lesion: right extra-axial mass\n- Diagnosis: "
     "meningioma\n\nAnswer: C"),
    ("mri_meningioma", "gemini", "The image shows a right-sided intra-axial tumour, consistent with a {{glioma}}. "
     "The answer is A."),
    ("mri_meningioma", "llava-med", "The MRI of the brain is {{normal}}. Answer: D"),
    # ---- mri_normal (MRI, axial, FLAIR, head; normal)
    ("mri_normal", "gpt-5", "Axial FLAIR MRI: no abnormal parenchymal signal, ventricles normal in size, no mass "
     "effect. Normal study.\n\nFinal answer: D"),
    ("mri_normal", "qwen3-thinking", "<think>\nFLAIR. There are several {{periventricular white matter "
     "lesions}}, which could suggest [[MS]].\n</think>\nFinal answer: B"),
    ("mri_normal", "chinese", "轴位FLAIR像，{{右侧额叶可见肿块}}。\n答案：A"),
    ("mri_normal", "markdown", "**Findings:** no mass, no haemorrhage\n**Sequence:** {{T1-weighted}}\n"
     "**Impression:** normal\n\nFinal answer: D"),
    ("mri_normal", "gemini", "This axial MRI is largely normal, but a [[small infarct]] in the left basal "
     "ganglia is possible. The answer is D."),
    ("mri_normal", "deepseek-r1", "<think>\nCSF is dark, grey-white differentiation preserved. No lesion. "
     "Normal brain.\n</think>\nAnswer: D"),
    # ---- ct_haemorrhage (CT, axial, non-contrast, head; right haemorrhage 30 mm, severe)
    ("ct_haemorrhage", "gpt-5", "Non-contrast axial head CT: a 3 cm hyperdense intraparenchymal haemorrhage in "
     "the right basal ganglia with mass effect; severe.\n\nFinal answer: B"),
    ("ct_haemorrhage", "qwen3-thinking", "<think>\nHead CT without contrast. Right-sided hyperdense blood. "
     "The haemorrhage is {{mild}}, I think.\n</think>\nFinal answer: B"),
    ("ct_haemorrhage", "chinese", "头颅CT平扫示右侧基底节区出血，大小约{{8毫米}}。\n答案：B"),
    ("ct_haemorrhage", "markdown", "| Item | Value |\n|---|---|\n| Modality | CT |\n| Sequence | "
     "{{contrast-enhanced}} |\n| Side | right |\n\n**Answer:** B"),
    ("ct_haemorrhage", "gemini", "The CT shows a right-sided acute haemorrhage with {{hydrocephalus}}. "
     "The answer is B."),
    ("ct_haemorrhage", "llava-med", "The CT scan of the head shows {{no acute haemorrhage}}. Answer: D"),
    ("ct_haemorrhage", "deepseek-r1", "<think>\nHead CT. The {{brain parenchyma is unremarkable}}, "
     "ventricles normal.\n</think>\nAnswer: D"),
    # ---- fundus_dr (fundus photography, eye; hard exudates + microaneurysms; DR moderate)
    ("fundus_dr", "gpt-5", "Colour fundus photograph: scattered microaneurysms and hard exudates; moderate "
     "non-proliferative diabetic retinopathy.\n\nFinal answer: C"),
    ("fundus_dr", "qwen3-thinking", "<think>\nRetina image. I see {{drusen}} near the macula, suggesting "
     "{{macular degeneration}}.\n</think>\nFinal answer: A"),
    ("fundus_dr", "chinese", "眼底照片示微血管瘤及硬性渗出，{{轻度}}糖尿病视网膜病变。\n答案：B"),
    ("fundus_dr", "markdown", "- Findings: microaneurysms, {{cotton-wool spots}}\n- Grade: moderate\n\n"
     "Final answer: C"),
    ("fundus_dr", "gemini", "The fundus image shows {{no microaneurysms}}; possibly early [[glaucoma]]. "
     "The answer is D."),
    ("fundus_dr", "deepseek-r1", "<think>\nFundus. Microaneurysms, hard exudates. Also "
     "{{neovascularisation}} at the disc, so proliferative.\n</think>\nAnswer: D"),
    # ---- us_liver_cyst (ultrasound, abdomen, liver; cyst 25 mm anechoic)
    ("us_liver_cyst", "gpt-5", "Ultrasound of the liver: a 2.5 cm anechoic, thin-walled lesion with posterior "
     "acoustic enhancement, a simple hepatic cyst.\n\nFinal answer: A"),
    ("us_liver_cyst", "qwen3-thinking", "<think>\nUltrasound. The lesion looks {{hyperechoic}}, so likely a "
     "{{haemangioma}}.\n</think>\nFinal answer: C"),
    ("us_liver_cyst", "chinese", "肝脏超声示无回声病灶，约2.5厘米，考虑肝囊肿。\n答案：A"),
    ("us_liver_cyst", "markdown", "**Modality:** {{CT}}\n**Lesion:** liver cyst, 25 mm\n\n**Answer:** A"),
    ("us_liver_cyst", "llava-med", "The ultrasound image shows a liver cyst measuring about {{10 cm}}. Answer: A"),
    ("us_liver_cyst", "gemini", "Ultrasound: a ~25 mm {{solid}} lesion within the liver, possibly a "
     "[[metastasis]]. The answer is C."),
    # ---- xray_wrist (X-ray, lateral, upper limb; left fracture)
    ("xray_wrist", "gpt-5", "Lateral radiograph of the left wrist: a transverse fracture of the distal radius "
     "with dorsal angulation.\n\nFinal answer: A"),
    ("xray_wrist", "gemini", "This {{PA}} view of the wrist shows {{no fracture}}. The answer is D."),
    ("xray_wrist", "chinese", "{{右}}腕关节侧位片示桡骨远端骨折。\n答案：A"),
    ("xray_wrist", "deepseek-r1", "<think>\nLateral X-ray of the {{knee}}. There's a break in the cortex, a "
     "fracture.\n</think>\nAnswer: A"),
    # ---- cxr_pneumothorax (X-ray, PA, chest; right pneumothorax, mild)
    ("cxr_pneumothorax", "gpt-5", "PA chest radiograph: a small right apical pneumothorax; visible visceral "
     "pleural line; no mediastinal shift.\n\nFinal answer: B"),
    ("cxr_pneumothorax", "qwen3-thinking", "<think>\nLooking at the right apex... and the left apex. There is a "
     "{{left}} pneumothorax, with a {{severe}} degree of collapse.\n</think>\nFinal answer: C"),
    ("cxr_pneumothorax", "chinese", "胸片示右侧少量气胸，肺组织压缩约10%。\n答案：B"),
    ("cxr_pneumothorax", "markdown", "- Finding: right pneumothorax\n- Size: {{large}}\n- Mediastinum: "
     "{{shifted to the left}}\n\nAnswer: C"),
    # ---- ct_abd_normal (CT, axial, abdomen; normal)
    ("ct_abd_normal", "gpt-5", "Axial contrast CT of the abdomen: liver, spleen, pancreas and kidneys are "
     "unremarkable. No free fluid.\n\nFinal answer: D"),
    ("ct_abd_normal", "gemini", "The axial CT shows a {{2 cm cyst in the right kidney}}. The answer is B."),
    ("ct_abd_normal", "llava-med", "The CT image of the {{chest}} shows normal lungs. Answer: D"),
    ("ct_abd_normal", "deepseek-r1", "<think>\nAbdomen CT. Liver fine. Hmm, there may be a little [[free "
     "fluid]] in the pelvis. Otherwise normal.\n</think>\nAnswer: D"),
    # ---- mammo_mass (mammography, MLO, breast; left mass spiculated)
    ("mammo_mass", "gpt-5", "Left MLO mammogram: an irregular spiculated mass in the upper outer quadrant. "
     "BI-RADS 5.\n\nFinal answer: B"),
    ("mammo_mass", "chinese", "{{右}}乳MLO位钼靶示毛刺状肿块。\n答案：B"),
    ("mammo_mass", "markdown", "| View | {{CC}} |\n|---|---|\n| Mass | left, spiculated |\n\n**Answer:** B"),
    ("mammo_mass", "llava-med", "The mammogram shows a {{well-circumscribed}} mass in the left breast, probably "
     "benign. Answer: A"),
    ("mammo_mass", "deepseek-r1", "<think>\nMammogram, MLO. Left breast mass with spiculated margins; "
     "[[microcalcifications]] may be present too.\n</think>\nAnswer: B"),
    # ---- ct_two_nodules (CT, axial, chest; two left nodules, 6 and 8 mm)
    ("ct_two_nodules", "gpt-5", "Axial CT: two small nodules in the left lung, 6 mm and 8 mm.\n\nFinal answer: B"),
    ("ct_two_nodules", "qwen3-thinking", "<think>\nCount the nodules: I see {{a single}} nodule in the left lower "
     "lobe, about {{2 cm}}.\n</think>\nFinal answer: A"),
    ("ct_two_nodules", "chinese", "胸部CT示左肺{{三个}}结节。\n答案：C"),
    ("ct_two_nodules", "markdown", "1. Nodules: 2\n2. Side: {{bilateral}}\n3. Sizes: 6 mm, 8 mm\n\nAnswer: B"),
    ("ct_two_nodules", "gemini", "Axial CT: nodules in the left lung measuring 0.6 and {{1.8 cm}}. The answer is "
     "B."),
]



def build() -> list[dict]:
    return _src.build(ENTRIES, "q", hedged=True)


if __name__ == "__main__":
    _src.write("rationale_heldout4.jsonl", build())
