"""Source of ``rationale_heldout3.jsonl`` (issue 19): a third fresh held-out set of hand-labelled rationales,
written in the fourth session after the rules were changed for the error classes the second held-out set showed
(so that set is no longer held out) and *before* the checker was run on any of these. Same cases and labelling
rule as ``rationale_corpus_source.py`` (``{{...}}`` marks every statement about this image that the case's
fields make false; a finding not listed is absent). Regenerate with
``python tests/data/rationale_heldout3_source.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import rationale_corpus_source as _src  # noqa: E402  (the corpus's cases and its one build/write)

CASES = _src.CASES

ENTRIES: list[tuple[str, str, str]] = [
    # ---- cxr_left_effusion
    ("cxr_left_effusion", "gpt-5", "Reasoning: PA chest film. Homogeneous opacification of the left lower "
     "hemithorax with a concave upper border (meniscus). This is a pleural effusion of moderate size.\n\n"
     "Final answer: B"),
    ("cxr_left_effusion", "qwen3-thinking", "<think>\nThe image: chest X-ray, frontal. Hmm, I see a {{right}} "
     "basal opacity, probably fluid, a {{right}} pleural effusion. The heart border is preserved.\n</think>\n"
     "Final answer: A"),
    ("cxr_left_effusion", "chinese", "该胸片为后前位。左侧胸腔可见中等量积液，右肺野清晰，未见气胸。\n答案：C"),
    ("cxr_left_effusion", "markdown", "**Acquisition:** {{CT}} of the chest\n**Finding:** left pleural effusion\n\n"
     "**Answer:** B"),
    ("cxr_left_effusion", "gemini", "The radiograph shows {{no pleural effusion}}; the costophrenic angles are "
     "sharp. The answer is D."),
    ("cxr_left_effusion", "deepseek-r1", "<think>\nFirst the projection. It's PA. Then the lungs: left base "
     "opacity. Effusion vs consolidation? The meniscus favours effusion. Left pleural effusion it is.\n</think>\n"
     "Answer: A"),
    ("cxr_left_effusion", "llava-med", "The chest x-ray reveals a {{mild}} left pleural effusion. Answer: B"),
    # ---- cxr_normal
    ("cxr_normal", "gpt-5", "PA chest radiograph. Clear lungs, normal cardiomediastinal silhouette, no effusion, "
     "no pneumothorax. Impression: normal chest.\n\nFinal answer: D"),
    ("cxr_normal", "qwen3-thinking", "<think>\nLooking at the lungs... there is a {{right pleural effusion}} "
     "blunting the angle.\n</think>\nFinal answer: B"),
    ("cxr_normal", "chinese", "胸部正位片：双肺未见实变及结节，心影不大，双侧肋膈角锐利。印象：未见异常。\n答案：D"),
    ("cxr_normal", "markdown", "## Findings\n- {{Cardiomegaly}}\n- Lungs clear\n\n## Answer\nC"),
    ("cxr_normal", "gemini", "This {{lateral}} chest radiograph appears unremarkable. The answer is A."),
    ("cxr_normal", "deepseek-r1", "<think>\nThe options mention pneumothorax. Is there a pleural line? No. "
     "Lung markings extend to the periphery. No pneumothorax. Normal.\n</think>\nAnswer: D"),
    # ---- cxr_pneumonia
    ("cxr_pneumonia", "gpt-5", "AP chest radiograph with right lower lobe consolidation and air bronchograms, "
     "consistent with pneumonia.\n\nFinal answer: A"),
    ("cxr_pneumonia", "qwen3-thinking", "<think>\nThis is a PA film... no, it's an AP portable. There is "
     "consolidation in the right lung.\n</think>\nFinal answer: A"),
    ("cxr_pneumonia", "chinese", "床旁前后位胸片示{{左}}下肺实变，考虑肺炎。\n答案：B"),
    ("cxr_pneumonia", "markdown", "- **View:** {{PA}}\n- **Finding:** right lower zone consolidation\n- "
     "**Diagnosis:** pneumonia\n\nFinal answer: A"),
    ("cxr_pneumonia", "llava-med", "The chest x-ray shows {{bilateral}} consolidation. Answer: C"),
    ("cxr_pneumonia", "gemini", "The {{lungs are clear}} and there is {{a large pleural effusion}} on the right. "
     "The answer is B."),
    # ---- ct_nodule
    ("ct_nodule", "gpt-5", "Axial CT, lung window: a 14 mm spiculated nodule in the right upper lobe. No "
     "effusion. Findings suspicious for malignancy.\n\nFinal answer: C"),
    ("ct_nodule", "qwen3-thinking", "<think>\nCT chest, axial. The nodule is in the {{left}} upper lobe and "
     "measures about 14 mm.\n</think>\nFinal answer: B"),
    ("ct_nodule", "chinese", "胸部CT轴位示右肺结节，{{边缘光整}}，约{{5厘米}}。\n答案：A"),
    ("ct_nodule", "markdown", "| Item | Value |\n|---|---|\n| Plane | {{sagittal}} |\n| Nodule | right, 14 mm |\n\n"
     "**Answer:** D"),
    ("ct_nodule", "deepseek-r1", "<think>\nNodules larger than 8 mm warrant follow-up. This one is about 1.4 cm on "
     "the right. Spiculated.\n</think>\nAnswer: C"),
    ("ct_nodule", "llava-med", "The CT image shows a right lung nodule with {{well-circumscribed}} margins. "
     "Answer: B"),
    # ---- mri_glioma
    ("mri_glioma", "gpt-5", "Axial T2-weighted MRI: heterogeneous hyperintense intra-axial mass in the left "
     "cerebral hemisphere. Most likely glioma.\n\nFinal answer: A"),
    ("mri_glioma", "qwen3-thinking", "<think>\nSequence first: this looks like {{FLAIR}}. The mass is on the "
     "left and is bright.\n</think>\nFinal answer: C"),
    ("mri_glioma", "chinese", "磁共振T2加权像示{{右侧}}额叶高信号占位。\n答案：B"),
    ("mri_glioma", "markdown", "**Plane:** axial\n**Lesion:** left hemispheric mass\n**Diagnosis:** "
     "{{meningioma}}\n\nFinal answer: B"),
    ("mri_glioma", "gemini", "This is a {{coronal}} MRI of the brain with a left-sided mass. The answer is A."),
    ("mri_glioma", "deepseek-r1", "<think>\nThe question is glioma vs meningioma vs abscess vs normal. The "
     "mass is intra-axial and T2 bright on the left. Glioma.\n</think>\nAnswer: A"),
    # ---- mri_meningioma
    ("mri_meningioma", "gpt-5", "Coronal post-contrast T1: homogeneously enhancing extra-axial mass along the "
     "right convexity with a dural tail. Meningioma.\n\nFinal answer: C"),
    ("mri_meningioma", "qwen3-thinking", "<think>\nIt's a {{T2-weighted}} image in the coronal plane. Right "
     "extra-axial mass.\n</think>\nFinal answer: C"),
    ("mri_meningioma", "chinese", "冠状位增强T1示右侧脑外肿块，考虑脑膜瘤。\n答案：C"),
    ("mri_meningioma", "llava-med", "The MRI shows a {{left}} frontal mass. Answer: A"),
    ("mri_meningioma", "markdown", "1. Modality: MRI\n2. Finding: {{no mass}}\n3. Impression: {{normal}}\n\n"
     "Final answer: D"),
    # ---- mri_normal
    ("mri_normal", "gpt-5", "Axial FLAIR: no parenchymal signal abnormality, no mass, no hydrocephalus. "
     "Normal brain MRI.\n\nFinal answer: D"),
    ("mri_normal", "qwen3-thinking", "<think>\nAxial FLAIR. There is a {{hyperintense lesion}} in the left "
     "periventricular white matter.\n</think>\nFinal answer: B"),
    ("mri_normal", "chinese", "轴位FLAIR序列，脑实质信号未见异常。\n答案：D"),
    ("mri_normal", "gemini", "This {{sagittal}} MRI slice shows a normal brain. The answer is D."),
    ("mri_normal", "deepseek-r1", "<think>\nWhich sequence? CSF is dark, so FLAIR. No lesion visible. "
     "Normal.\n</think>\nAnswer: D"),
    # ---- ct_haemorrhage
    ("ct_haemorrhage", "gpt-5", "Non-contrast axial CT: hyperdense intraparenchymal haematoma in the right "
     "hemisphere, ~30 mm, with mass effect. Severe.\n\nFinal answer: B"),
    ("ct_haemorrhage", "qwen3-thinking", "<think>\nNon-contrast CT head. I see a hyperdense area on the right, "
     "an acute bleed, roughly {{1 cm}}.\n</think>\nFinal answer: B"),
    ("ct_haemorrhage", "chinese", "头颅CT平扫示{{左侧}}脑实质内出血。\n答案：A"),
    ("ct_haemorrhage", "markdown", "- **Modality:** {{MRI}}\n- **Finding:** right-sided haemorrhage\n\n"
     "**Answer:** B"),
    ("ct_haemorrhage", "llava-med", "The CT scan of the brain is {{normal}}. Answer: D"),
    # ---- fundus_dr
    ("fundus_dr", "gpt-5", "Fundus photograph showing microaneurysms and hard exudates; moderate "
     "non-proliferative diabetic retinopathy.\n\nFinal answer: C"),
    ("fundus_dr", "qwen3-thinking", "<think>\nRetinal photo. I can see microaneurysms but {{no hard exudates}}.\n"
     "</think>\nFinal answer: B"),
    ("fundus_dr", "chinese", "眼底照相示视网膜可见微血管瘤和硬性渗出，为{{重度}}糖尿病视网膜病变。\n答案：D"),
    ("fundus_dr", "markdown", "**Findings:** hard exudates, microaneurysms\n**Grade:** moderate\n\nFinal answer: C"),
    # ---- us_liver_cyst
    ("us_liver_cyst", "gpt-5", "Abdominal ultrasound: a 25 mm anechoic lesion in the liver with posterior "
     "enhancement, a simple cyst.\n\nFinal answer: A"),
    ("us_liver_cyst", "gemini", "This ultrasound shows a {{solid}} {{hypoechoic}} {{mass}} in the liver. "
     "The answer is C."),
    ("us_liver_cyst", "chinese", "超声示肝内无回声囊肿，大小约{{6厘米}}。\n答案：B"),
    # ---- xray_wrist
    ("xray_wrist", "qwen3-thinking", "<think>\nLateral view of the wrist. There's a fracture line through the "
     "distal radius.\n</think>\nFinal answer: A"),
    ("xray_wrist", "llava-med", "The {{MRI}} of the wrist shows a fracture. Answer: B"),
    # ---- cxr_pneumothorax
    ("cxr_pneumothorax", "gpt-5", "PA chest X-ray: small right apical pneumothorax with a visible pleural "
     "line.\n\nFinal answer: B"),
    ("cxr_pneumothorax", "gemini", "The radiograph shows a {{large}} right pneumothorax. The answer is C."),
    # ---- ct_abd_normal
    ("ct_abd_normal", "qwen3-thinking", "<think>\nAxial CT of the abdomen. Liver, spleen, kidneys look normal. "
     "No free fluid.\n</think>\nFinal answer: D"),
    ("ct_abd_normal", "chinese", "腹部CT示肝内{{多发结节}}。\n答案：B"),
    # ---- mammo_mass
    ("mammo_mass", "gpt-5", "MLO mammogram: spiculated mass in the left breast, highly suspicious.\n\n"
     "Final answer: B"),
    ("mammo_mass", "qwen3-thinking", "<think>\nMLO view. A mass in the left breast with {{smooth}} margins.\n"
     "</think>\nFinal answer: A"),
    # ---- ct_two_nodules
    ("ct_two_nodules", "gemini", "Axial CT shows two left lung nodules measuring 6 and 8 mm. The answer is B."),
    ("ct_two_nodules", "markdown", "- Nodules: {{three}}\n- Side: left\n\nFinal answer: C"),
]


def build() -> list[dict]:
    return _src.build(ENTRIES, "m")


if __name__ == "__main__":
    _src.write("rationale_heldout3.jsonl", build())
