"""Source of ``rationale_heldout2.jsonl`` (issue 19): a second, fresh held-out set of hand-labelled rationales,
written in the fourth session *before* the checker was run on any of them (same cases and labelling rule as
``rationale_corpus_source.py``: ``{{...}}`` marks every statement about this image that the case's fields make
false). Not used to change the rules. One label was corrected later, where the rule had been misapplied (marked
below). Regenerate with ``python tests/data/rationale_heldout2_source.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import rationale_corpus_source as _src  # noqa: E402  (the corpus's cases and its one build/write)

CASES = _src.CASES

ENTRIES: list[tuple[str, str, str]] = [
    # ---- cxr_left_effusion (X-ray PA chest; left pleural effusion, moderate)
    ("cxr_left_effusion", "qwen3-thinking", "<think>\nAlright. First, what kind of image is this? A frontal chest "
     "radiograph, PA. The heart size looks normal. At the left base there is a dense opacity with a meniscus, "
     "which fits a pleural effusion on the left. I'd call it moderate in size.\n</think>\n\nFinal answer: C"),
    ("cxr_left_effusion", "gpt-5", "**Assessment**\n\n- Modality: chest radiograph (PA)\n- Key finding: "
     "{{right}}-sided pleural effusion, moderate\n- No pneumothorax\n\nFinal answer: B"),
    ("cxr_left_effusion", "gemini", "Looking at the image, this is an {{MRI}} of the chest showing fluid in the "
     "left pleural space. The answer is A."),
    ("cxr_left_effusion", "deepseek-r1", "<think>\nHmm, the options are left effusion, right effusion, "
     "pneumothorax, or normal. Let me check the image. The left costophrenic angle is blunted. The right "
     "side is clear. So left effusion.\n</think>\nAnswer: A"),
    ("cxr_left_effusion", "markdown", "### Findings\n1. Blunting of the left costophrenic angle\n2. "
     "{{Cardiomegaly}}\n3. No focal consolidation\n\n### Impression\nLeft pleural effusion.\n\n**Answer: D**"),
    ("cxr_left_effusion", "chinese", "这是一张胸部X线正位片。左侧肋膈角变钝，可见左侧胸腔积液，量为中等。"
     "心影大小正常。\n答案：B"),
    ("cxr_left_effusion", "llava-med", "The chest x-ray shows a small left... no wait. The chest x-ray "
     "demonstrates a {{severe}} left pleural effusion. Answer: C"),
    ("cxr_left_effusion", "gpt-5", "The projection is {{lateral}}; there is layering fluid posteriorly on the "
     "left, consistent with a pleural effusion.\nFinal answer: A"),
    # ---- cxr_normal (X-ray PA chest; normal)
    ("cxr_normal", "qwen3-thinking", "<think>\nThis is a PA chest X-ray. The lungs are clear, the heart is not "
     "enlarged, there is no effusion and no pneumothorax. Looks normal.\n</think>\nFinal answer: D"),
    ("cxr_normal", "gemini", "The chest radiograph shows a {{consolidation}} in the right lower lobe. "
     "The answer is B."),
    ("cxr_normal", "deepseek-r1", "<think>\nCould this be pneumonia? I don't see any consolidation. Could it be "
     "an effusion? The angles are sharp. No mass is seen. So it is a normal study.\n</think>\nAnswer: A"),
    ("cxr_normal", "markdown", "| Feature | Observation |\n|---|---|\n| Lungs | clear |\n| Heart | normal size |\n"
     "| Pleura | {{small left effusion}} |\n\nFinal answer: C"),
    ("cxr_normal", "chinese", "胸部X线片示双肺纹理清晰，未见实变，未见胸腔积液，心影不大。考虑正常胸片。\n最终答案：A"),
    ("cxr_normal", "llava-med", "The image is a chest x-ray which shows {{a nodule}} in the left upper lobe. "
     "Answer: B"),
    ("cxr_normal", "gpt-5", "No acute cardiopulmonary abnormality. Lungs clear bilaterally; no pleural "
     "effusion or pneumothorax.\n\nFinal answer: normal"),
    # ---- cxr_pneumonia (X-ray AP chest; right consolidation; pneumonia)
    ("cxr_pneumonia", "qwen3-thinking", "<think>\nAP portable chest film. There's an airspace opacity in the right "
     "lower zone, a consolidation, and the left lung is clear. That points to pneumonia.\n</think>\nAnswer: B"),
    ("cxr_pneumonia", "gpt-5", "Findings: dense consolidation in the {{left}} lower lobe with air bronchograms. "
     "Impression: lobar pneumonia.\n\nFinal answer: A"),
    # label corrected in issue 39 (claims39): "clear lungs" of a consolidation is a statement the case makes false
    # (held-out 3 marks "the lungs are clear" of the same case); it had been left unmarked
    ("cxr_pneumonia", "gemini", "This AP chest radiograph shows {{no consolidation}} and {{clear lungs}}, so the study "
     "is {{normal}}. The answer is D."),
    ("cxr_pneumonia", "markdown", "**Step 1 – acquisition:** AP chest radiograph.\n**Step 2 – findings:** "
     "right lower zone consolidation.\n**Step 3 – diagnosis:** pneumonia; an effusion cannot be excluded.\n\n"
     "Final answer: C"),
    ("cxr_pneumonia", "chinese", "右下肺可见片状实变影，考虑肺炎。左肺清晰。\n答案：A"),
    ("cxr_pneumonia", "deepseek-r1", "<think>\nThe question asks about the most likely diagnosis. Options: "
     "pneumonia, pneumothorax, effusion, normal. There's consolidation on the right. Pneumonia.\n</think>\n"
     "Final answer: A"),
    ("cxr_pneumonia", "llava-med", "The chest x-ray shows a large {{pneumothorax}} on the right side. Answer: B"),
    # ---- ct_nodule (CT axial lung window chest; right nodule 14 mm spiculated)
    ("ct_nodule", "qwen3-thinking", "<think>\nAxial CT in lung window. There is a solitary nodule in the right "
     "upper lobe, about 14 mm, with spiculated margins. Concerning.\n</think>\nFinal answer: B"),
    ("ct_nodule", "gpt-5", "Axial chest CT (lung window) shows a {{4 cm}} right upper lobe nodule with "
     "spiculated margins.\n\nFinal answer: C"),
    ("ct_nodule", "gemini", "This axial CT image shows a nodule in the {{left}} lung with {{smooth}} margins. "
     "The answer is A."),
    ("ct_nodule", "markdown", "- **Modality:** CT, axial\n- **Finding:** right lung nodule, ~1.5 cm, spiculated\n"
     "- **Other:** no pleural effusion\n\n**Final answer:** B"),
    ("ct_nodule", "chinese", "CT肺窗示右肺上叶结节，直径约14毫米，边缘毛刺。\n答案：C"),
    ("ct_nodule", "deepseek-r1", "<think>\nIs this a mass or a nodule? Under 3 cm, so nodule. It's on the right. "
     "Margins look spiculated. There's a cavitating mass too? No, I don't think so, just the nodule.\n"
     "</think>\nAnswer: D"),
    ("ct_nodule", "llava-med", "The CT scan of the chest shows {{multiple}} nodules in the right lung. Answer: A"),
    ("ct_nodule", "gpt-5", "Coronal reformat... actually this is an axial slice. A right-sided pulmonary nodule is "
     "present; no effusion, no lymphadenopathy is evident.\nFinal answer: B"),
    # ---- mri_glioma (MRI axial T2 head; left hyperintense mass; glioma; mimic meningioma)
    ("mri_glioma", "qwen3-thinking", "<think>\nAxial T2-weighted MRI of the brain. There's an ill-defined "
     "hyperintense mass in the left frontal lobe with surrounding edema. Intra-axial, so glioma rather than "
     "meningioma.\n</think>\nFinal answer: A"),
    ("mri_glioma", "gpt-5", "Axial T2 MRI shows an extra-axial dural-based mass on the left, most consistent "
     "with a {{meningioma}}.\n\nFinal answer: B"),
    ("mri_glioma", "gemini", "This is an axial {{CT}} of the head showing a left-sided hyperintense lesion. "
     "The answer is C."),
    ("mri_glioma", "markdown", "## Reasoning\n- Sequence: {{T1-weighted}}\n- Lesion: left hemisphere mass, "
     "hyperintense\n- Diagnosis: glioma\n\nAnswer: A"),
    ("mri_glioma", "chinese", "轴位T2加权磁共振示左侧额叶高信号肿块，考虑胶质瘤。\n答案：A"),
    ("mri_glioma", "llava-med", "The MRI shows a {{hypointense}} mass in the left hemisphere. Answer: D"),
    ("mri_glioma", "deepseek-r1", "<think>\nGlioma versus meningioma. Meningiomas are typically extra-axial and "
     "enhance homogeneously. Here the mass is intra-axial on the left. So glioma.\n</think>\nAnswer: A"),
    # ---- mri_meningioma (MRI coronal T1 post-contrast head; right mass; meningioma)
    ("mri_meningioma", "qwen3-thinking", "<think>\nCoronal post-contrast T1 MRI. An avidly enhancing, dural-based "
     "mass on the right convexity. That's a meningioma.\n</think>\nFinal answer: C"),
    ("mri_meningioma", "gpt-5", "Coronal contrast-enhanced T1 MRI demonstrates an enhancing extra-axial mass "
     "over the {{left}} convexity, consistent with meningioma.\n\nFinal answer: B"),
    ("mri_meningioma", "gemini", "The image is an {{axial}} MRI slice. There is a right-sided mass. The answer "
     "is A."),
    ("mri_meningioma", "markdown", "1. Plane: coronal\n2. Mass: right, extra-axial\n3. Diagnosis: "
     "{{glioma}}\n\nFinal answer: D"),
    ("mri_meningioma", "chinese", "冠状位增强T1示右侧脑膜瘤。\n最终答案：B"),
    ("mri_meningioma", "llava-med", "The brain MRI shows {{no mass}} and normal brain parenchyma. Answer: A"),
    # ---- mri_normal (MRI axial FLAIR head; normal)
    ("mri_normal", "qwen3-thinking", "<think>\nAxial FLAIR MRI of the brain. No abnormal signal, no mass, "
     "ventricles normal. Normal study.\n</think>\nFinal answer: D"),
    ("mri_normal", "gpt-5", "Axial FLAIR shows a {{hyperintense mass}} in the right temporal lobe.\n\n"
     "Final answer: A"),
    ("mri_normal", "gemini", "This is an axial MRI, likely FLAIR. I don't see any haemorrhage or mass effect. "
     "The answer is D."),
    ("mri_normal", "chinese", "轴位FLAIR磁共振未见异常信号，未见占位。\n答案：D"),
    ("mri_normal", "markdown", "**Sequence:** {{DWI}}\n**Findings:** none\n\nFinal answer: normal"),
    # ---- ct_haemorrhage (CT axial non-contrast head; right haemorrhage 30 mm; severe)
    ("ct_haemorrhage", "qwen3-thinking", "<think>\nNon-contrast axial CT head. A large hyperdense haemorrhage in "
     "the right basal ganglia, about 3 cm. Severe.\n</think>\nFinal answer: B"),
    ("ct_haemorrhage", "gpt-5", "Non-contrast CT head: acute intraparenchymal hemorrhage in the {{left}} "
     "basal ganglia measuring about 3 cm.\n\nFinal answer: A"),
    ("ct_haemorrhage", "gemini", "The non-contrast CT shows {{no hemorrhage}}. The brain appears {{normal}}. "
     "The answer is D."),
    ("ct_haemorrhage", "chinese", "头颅CT平扫示右侧基底节区高密度出血灶，约3厘米。\n答案：B"),
    ("ct_haemorrhage", "llava-med", "The CT scan shows a {{mild}} hemorrhage in the right hemisphere. Answer: C"),
    # ---- fundus_dr (fundus photo eye; hard exudates, microaneurysms; diabetic retinopathy moderate)
    ("fundus_dr", "qwen3-thinking", "<think>\nColour fundus photograph. I can see microaneurysms and hard "
     "exudates near the macula. Moderate non-proliferative diabetic retinopathy.\n</think>\nFinal answer: C"),
    ("fundus_dr", "gpt-5", "Fundus photograph: scattered microaneurysms and hard exudates; findings consistent "
     "with {{severe}} diabetic retinopathy.\n\nFinal answer: D"),
    ("fundus_dr", "chinese", "眼底照片可见微动脉瘤及硬性渗出，考虑糖尿病视网膜病变。\n答案：B"),
    ("fundus_dr", "gemini", "This fundus image looks {{normal}}, with {{no exudates}} or haemorrhages. "
     "The answer is A."),
    # ---- us_liver_cyst (ultrasound abdomen; anechoic cyst 25 mm)
    ("us_liver_cyst", "gpt-5", "Ultrasound of the liver shows an anechoic cyst, about 2.5 cm, with posterior "
     "acoustic enhancement.\n\nFinal answer: B"),
    ("us_liver_cyst", "markdown", "- Modality: {{CT}}\n- Finding: hepatic cyst, 25 mm\n\n**Answer:** A"),
    ("us_liver_cyst", "llava-med", "The ultrasound image shows a {{hyperechoic}} cyst in the liver. Answer: C"),
    # ---- xray_wrist (X-ray lateral upper limb; left fracture)
    ("xray_wrist", "gemini", "This lateral radiograph of the wrist shows a fracture of the distal radius. "
     "The answer is B."),
    ("xray_wrist", "gpt-5", "Lateral wrist X-ray: {{no fracture}} or dislocation is identified.\n\nFinal answer: A"),
    # ---- cxr_pneumothorax (X-ray PA chest; right pneumothorax, mild)
    ("cxr_pneumothorax", "qwen3-thinking", "<think>\nPA chest film. There's a thin visceral pleural line on the "
     "right with absent lung markings beyond it, a small right pneumothorax.\n</think>\nFinal answer: A"),
    ("cxr_pneumothorax", "chinese", "胸片示{{左侧}}气胸，肺组织压缩约20%。\n答案：C"),
    # ---- ct_abd_normal (CT axial abdomen; normal)
    ("ct_abd_normal", "gpt-5", "Axial CT abdomen: liver, spleen and kidneys unremarkable; no free fluid, no mass.\n\n"
     "Final answer: normal"),
    ("ct_abd_normal", "llava-med", "The CT scan of the abdomen shows a {{mass}} in the liver. Answer: B"),
    # ---- mammo_mass (mammography MLO breast; left spiculated mass)
    ("mammo_mass", "gemini", "This MLO mammogram shows a spiculated mass in the {{right}} breast. The answer is C."),
    ("mammo_mass", "markdown", "**View:** {{CC}}\n**Finding:** left breast mass with spiculated margins\n\n"
     "Final answer: B"),
    # ---- ct_two_nodules (CT axial chest; two left nodules 6 and 8 mm)
    ("ct_two_nodules", "gpt-5", "Axial chest CT: two small nodules in the left lower lobe, 6 and 8 mm.\n\n"
     "Final answer: A"),
    ("ct_two_nodules", "qwen3-thinking", "<think>\nI see {{a single}} nodule in the left lung, around 7 mm.\n"
     "</think>\nFinal answer: B"),
]


def build() -> list[dict]:
    return _src.build(ENTRIES, "k")


if __name__ == "__main__":
    _src.write("rationale_heldout2.jsonl", build())
