"""Source of ``rationale_corpus.jsonl`` (issue 19): hand-written rationales in the styles of current models,
each with its case's ground truth; ``{{...}}`` marks, by hand, every statement about the image that the
ground truth makes false (the gold ``contradicted`` claims). Regenerate with
``python tests/data/rationale_corpus_source.py`` (writes the JSONL next to this file).

Labelling rule: a span is contradicted when the rationale states it about *this* image (plainly or with a
strong hedge such as "likely", "consistent with") and the case's fields make it false (the findings listed
are all the case has: a finding not listed is absent, which each case's truth states with
``meta.findings_complete``, set once below for every case of CASES); weak hedges
("possible", "cannot exclude"), restated questions, options being weighed and textbook knowledge are not
statements about the image and are never marked.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

CASES: dict[str, dict] = {
    "cxr_left_effusion": {"modality": "X-ray", "plane": "PA", "body_region": "chest", "structures": ["heart", "lung"],
                          "findings": [{"label": "pleural effusion", "attributes": {"laterality": "left"}}],
                          "diagnosis": "pleural effusion", "severity": "moderate"},
    "cxr_normal": {"modality": "X-ray", "plane": "PA", "body_region": "chest", "structures": ["heart", "lung"],
                   "findings": [], "diagnosis": "normal"},
    "cxr_pneumonia": {"modality": "X-ray", "plane": "AP", "body_region": "chest", "structures": ["lung"],
                      "findings": [{"label": "consolidation", "attributes": {"laterality": "right"}}],
                      "diagnosis": "pneumonia"},
    "ct_nodule": {"modality": "CT", "plane": "axial", "sequence": "lung window", "body_region": "chest",
                  "structures": ["lung"], "findings": [{"label": "nodule", "attributes": {
                      "laterality": "right", "size_mm": 14, "margin": "spiculated"}}], "diagnosis": None},
    "mri_glioma": {"modality": "MRI", "plane": "axial", "sequence": "T2-weighted", "body_region": "head",
                   "structures": ["brain"], "findings": [{"label": "mass", "attributes": {
                       "laterality": "left", "intensity": "hyperintense"}}], "diagnosis": "glioma",
                   "mimics": ["meningioma"]},
    "mri_meningioma": {"modality": "MRI", "plane": "coronal", "sequence": "T1 post-contrast", "body_region": "head",
                       "structures": ["brain"], "findings": [{"label": "mass", "attributes": {"laterality": "right"}}],
                       "diagnosis": "meningioma", "mimics": ["glioma"]},
    "mri_normal": {"modality": "MRI", "plane": "axial", "sequence": "FLAIR", "body_region": "head",
                   "structures": ["brain"], "findings": [], "diagnosis": "normal"},
    "ct_haemorrhage": {"modality": "CT", "plane": "axial", "sequence": "non-contrast", "body_region": "head",
                       "structures": ["brain"], "findings": [{"label": "haemorrhage", "attributes": {
                           "laterality": "right", "size_mm": 30}}], "diagnosis": None, "severity": "severe"},
    "fundus_dr": {"modality": "fundus photography", "body_region": "eye", "structures": ["optic disc", "macula"],
                  "findings": [{"label": "hard exudates", "attributes": {}},
                               {"label": "microaneurysms", "attributes": {}}],
                  "diagnosis": "diabetic retinopathy", "severity": "moderate"},
    "us_liver_cyst": {"modality": "ultrasound", "body_region": "abdomen", "structures": ["liver"],
                      "findings": [{"label": "cyst", "attributes": {"size_mm": 25, "intensity": "anechoic"}}],
                      "diagnosis": None},
    "xray_wrist": {"modality": "X-ray", "plane": "lateral", "body_region": "upper limb", "structures": [],
                   "findings": [{"label": "fracture", "attributes": {"laterality": "left"}}], "diagnosis": None},
    "cxr_pneumothorax": {"modality": "X-ray", "plane": "PA", "body_region": "chest", "structures": ["lung"],
                         "findings": [{"label": "pneumothorax", "attributes": {"laterality": "right"}}],
                         "diagnosis": "pneumothorax", "severity": "mild"},
    "ct_abd_normal": {"modality": "CT", "plane": "axial", "body_region": "abdomen",
                      "structures": ["liver", "spleen", "kidney"], "findings": [], "diagnosis": "normal"},
    "mammo_mass": {"modality": "mammography", "plane": "MLO", "body_region": "breast", "structures": [],
                   "findings": [{"label": "mass", "attributes": {"laterality": "left", "margin": "spiculated"}}],
                   "diagnosis": None},
    "ct_two_nodules": {"modality": "CT", "plane": "axial", "body_region": "chest", "structures": ["lung"],
                       "findings": [{"label": "nodule", "attributes": {"laterality": "left", "size_mm": 6}},
                                    {"label": "nodule", "attributes": {"laterality": "left", "size_mm": 8}}],
                       "diagnosis": None},
}
# the rule the sets were labelled under ("a finding not listed is absent"), stated in each case's truth: the checker
# infers no absence from an unlisted finding (medr2.tasks.contract.states_absent)
for _case in CASES.values():
    _case["meta"] = {"findings_complete": True}

# (case, style, text)
ENTRIES: list[tuple[str, str, str]] = [
    # ---- cxr_left_effusion
    ("cxr_left_effusion", "qwen3-thinking", "<think>\nOkay, let me look at this image. It is a PA chest radiograph. "
     "The left costophrenic angle is blunted with a meniscus sign, so there is a left pleural effusion. "
     "The right lung is clear. No pneumothorax is seen.\n</think>\nThe answer is B."),
    ("cxr_left_effusion", "qwen3-thinking", "<think>\nOkay, so the question asks which side the effusion is on. "
     "Looking at the radiograph, I see fluid layering at the base, there is a {{right}} pleural effusion with "
     "blunting of the right costophrenic angle.\n</think>\nAnswer: A"),
    ("cxr_left_effusion", "gpt-5", "This is a frontal chest X-ray. Findings: moderate left pleural effusion; "
     "no focal consolidation; heart size is within normal limits.\nFinal answer: C"),
    ("cxr_left_effusion", "gpt-5", "The image is an {{axial}} {{CT}} slice of the chest showing "
     "dependent fluid on the left. "
     "{{No pleural effusion}} is present otherwise.\nFinal answer: D"),
    ("cxr_left_effusion", "gemini", "**Image type:** Posteroanterior chest radiograph.\n**Findings:** There is a "
     "left-sided pleural effusion of moderate size. There is also a {{pneumothorax}} at the right apex.\n"
     "**Answer:** B"),
    ("cxr_left_effusion", "deepseek-r1", "<think>\nHmm, first the modality. This looks like an {{MRI}} of the chest. "
     "Wait, no, the bones are bright and it's a projection image, so it's actually a radiograph. There is a "
     "left pleural effusion.\n</think>\n**Answer: B**"),
    ("cxr_left_effusion", "llava-med", "The image is a chest X-ray showing a large {{right-sided}} pleural effusion "
     "with mediastinal shift. The findings are suggestive of a {{pneumonia}}."),
    ("cxr_left_effusion", "markdown", "- Modality: X-ray (PA)\n- Region: chest\n- Finding: pleural effusion, left\n"
     "- Severity: {{severe}}\n\nAnswer: A"),
    ("cxr_left_effusion", "chinese", "这是一张胸部X线片（PA位）。左侧肋膈角变钝，可见左侧胸腔积液。"
     "未见气胸。\n答案：B"),
    ("cxr_left_effusion", "chinese", "这是一张胸部CT图像吗？不，是X线片。{{未见胸腔积液}}，双肺清晰。\n答案：A"),
    ("cxr_left_effusion", "gpt-5", "Possible small pneumothorax cannot be excluded, but the main finding is a "
     "left pleural effusion. Final answer: B"),
    # ---- cxr_normal
    ("cxr_normal", "qwen3-thinking", "<think>\nAlright. This is a PA chest radiograph. The lungs are clear, no "
     "consolidation, no pleural effusion, no pneumothorax. The heart size is normal. The study is normal.\n"
     "</think>\nAnswer: A"),
    ("cxr_normal", "gpt-5", "Chest X-ray, PA view. There is a {{right lower lobe consolidation}} suggesting "
     "{{pneumonia}}.\nFinal answer: C"),
    ("cxr_normal", "gemini", "**Assessment.** The radiograph shows {{cardiomegaly}} and a {{left pleural effusion}}.\n"
     "**Answer:** D"),
    ("cxr_normal", "deepseek-r1", "<think>\nThe question asks if there is a pneumothorax. Let me check for a pleural "
     "line. I don't see one. There is no pneumothorax. The lungs look normal.\n</think>\nno"),
    ("cxr_normal", "llava-med", "The chest X-ray shows a {{nodule}} in the right upper lobe, which may represent a "
     "granuloma."),
    ("cxr_normal", "markdown", "1. Modality: radiograph\n2. View: {{AP}}\n3. Findings: none\n\nAnswer: B"),
    ("cxr_normal", "chinese", "胸部X线片，双肺纹理清晰，未见实变，未见胸腔积液，心影不大。未见明显异常。\n答案：A"),
    ("cxr_normal", "chinese", "胸片显示{{右肺结节}}，考虑{{肺结核}}。\n答案：C"),
    ("cxr_normal", "gpt-5", "No acute abnormality. Lungs clear bilaterally. Final answer: normal"),
    ("cxr_normal", "qwen3-thinking", "<think>\nOptions are A. pneumonia B. normal C. effusion D. pneumothorax. "
     "Pneumonia would show consolidation. I see clear lungs. So B.\n</think>\nB"),
    # ---- cxr_pneumonia
    ("cxr_pneumonia", "qwen3-thinking", "<think>\nThis is an AP chest radiograph. There is airspace consolidation in "
     "the right lower zone with air bronchograms, consistent with pneumonia.\n</think>\nAnswer: C"),
    ("cxr_pneumonia", "gpt-5", "AP portable chest X-ray: focal consolidation in the {{left}} lower lobe. Diagnosis: "
     "pneumonia.\nFinal answer: A"),
    ("cxr_pneumonia", "gemini", "**Findings:** Right lower lobe consolidation. {{No consolidation}} "
     "elsewhere is noted. "
     "**Impression:** pneumonia.\n**Answer:** B"),
    ("cxr_pneumonia", "deepseek-r1", "<think>\nHmm, the right lung base is opaque. It could be atelectasis or "
     "pneumonia. Given air bronchograms, I'd go with pneumonia.\n</think>\nB"),
    ("cxr_pneumonia", "llava-med", "The chest X-ray shows a {{large pleural effusion}} on the right side and "
     "{{cardiomegaly}}. This is consistent with {{heart failure}}."),
    ("cxr_pneumonia", "markdown", "### Reasoning\n- View: {{PA}} radiograph\n- Finding: right-sided consolidation\n- "
     "Diagnosis: pneumonia\n\n**Answer: C**"),
    ("cxr_pneumonia", "chinese", "床旁胸片（AP位），右下肺野可见斑片状实变影，考虑肺炎。\n答案：B"),
    ("cxr_pneumonia", "chinese", "胸部X线片示{{左下肺实变}}，符合肺炎表现。\n答案：A"),
    ("cxr_pneumonia", "gpt-5", "The right lower lobe shows consolidation. {{There is no pneumonia}}; the appearance "
     "is {{atelectasis}}. Final answer: D"),
    ("cxr_pneumonia", "gemini", "This is a chest radiograph. Pneumonia typically appears as consolidation. Here the "
     "right base is consolidated. **Answer:** A"),
    # ---- ct_nodule
    ("ct_nodule", "qwen3-thinking", "<think>\nOkay. This is an axial CT of the chest in lung window. There is a "
     "14 mm spiculated nodule in the right upper lobe.\n</think>\nAnswer: B"),
    ("ct_nodule", "gpt-5", "Axial chest CT: a solitary {{left}} upper lobe nodule measuring about {{4 cm}}.\n"
     "Final answer: D"),
    ("ct_nodule", "gemini", "**Modality:** CT, axial plane.\n**Finding:** a right lung nodule, approximately 15 mm, "
     "with {{smooth}} margins.\n**Answer:** A"),
    ("ct_nodule", "deepseek-r1", "<think>\nWait, is this a sagittal reconstruction? The slice shows both lungs side "
     "by side so it's axial. A right nodule is visible.\n</think>\nC"),
    ("ct_nodule", "llava-med", "The CT scan shows {{multiple}} nodules in the right lung and a {{pleural effusion}}."),
    ("ct_nodule", "markdown", "* Modality: {{MRI}}\n* Plane: axial\n* Lesion: right upper lobe nodule, 1.4 cm, "
     "spiculated\n\nAnswer: B"),
    ("ct_nodule", "chinese", "胸部CT轴位图像，右肺上叶可见一个结节，大小约14毫米，边缘毛刺。\n答案：B"),
    ("ct_nodule", "chinese", "CT显示{{左肺}}结节，{{未见结节}}于右肺。\n答案：D"),
    ("ct_nodule", "gpt-5", "There may be a small pleural effusion; the dominant finding is a right nodule. "
     "Final answer: B"),
    ("ct_nodule", "qwen3-thinking", "<think>\nThe options mention a nodule, a mass, a cyst and a calcification. "
     "A cyst would be fluid density. The lesion here is a solid right nodule with spiculated margins.\n</think>\nA"),
    # ---- mri_glioma
    ("mri_glioma", "qwen3-thinking", "<think>\nOkay, this is an axial T2-weighted MRI of the brain. There is a "
     "hyperintense mass in the left frontal lobe with surrounding signal change. This is likely a glioma.\n"
     "</think>\nAnswer: C"),
    ("mri_glioma", "gpt-5", "Axial T2-weighted MR image. A {{right}} hemispheric mass. Favour {{meningioma}} given "
     "the extra-axial appearance.\nFinal answer: B"),
    ("mri_glioma", "gemini", "**Sequence:** {{T1-weighted}} image.\n**Finding:** intra-axial left-sided mass.\n"
     "**Diagnosis:** glioma.\n**Answer:** A"),
    ("mri_glioma", "deepseek-r1", "<think>\nHmm, the differential includes glioma, meningioma, metastasis. "
     "Meningioma is usually extra-axial with a dural tail. This lesion is intra-axial in the left hemisphere, so "
     "glioma.\n</think>\nA"),
    ("mri_glioma", "llava-med", "The MRI shows a {{hypointense}} lesion in the left temporal lobe, consistent with "
     "{{an abscess}}."),
    ("mri_glioma", "markdown", "1. **Modality**: {{CT}}\n2. **Region**: brain\n3. **Finding**: left mass\n"
     "4. **Diagnosis**: glioma\n\nAnswer: D"),
    ("mri_glioma", "chinese", "颅脑MRI T2加权轴位像，左侧额叶可见高信号肿块，考虑胶质瘤。\n答案：C"),
    ("mri_glioma", "chinese", "头颅MRI示{{右侧}}占位，考虑{{脑膜瘤}}。\n答案：B"),
    ("mri_glioma", "gpt-5", "The brain MRI is {{unremarkable}}; {{no mass}} is identified. Final answer: A"),
    ("mri_glioma", "qwen3-thinking", "<think>\nLet me check whether this could be a metastasis. Metastases are "
     "often multiple. Here there is a single left-sided mass, so glioma fits.\n</think>\nC"),
    # ---- mri_meningioma
    ("mri_meningioma", "qwen3-thinking", "<think>\nThis is a coronal post-contrast T1 MRI of the brain. An "
     "extra-axial enhancing mass on the right with a dural tail: meningioma.\n</think>\nAnswer: A"),
    ("mri_meningioma", "gpt-5", "{{Axial}} MRI: an enhancing mass on the right convexity, meningioma.\n"
     "Final answer: A"),
    ("mri_meningioma", "gemini", "**Findings:** a {{left}} parafalcine enhancing mass.\n**Impression:** "
     "{{glioma}}.\n**Answer:** C"),
    ("mri_meningioma", "deepseek-r1", "<think>\nThe lesion is extra-axial, so glioma is unlikely. It's a "
     "meningioma on the right.\n</think>\nA"),
    ("mri_meningioma", "llava-med", "The MRI image shows a {{sagittal}} view of the brain with a large mass. The "
     "mass is likely a meningioma."),
    ("mri_meningioma", "markdown", "- Sequence: {{FLAIR}}\n- Plane: coronal\n- Finding: right extra-axial mass\n\n"
     "Answer: A"),
    ("mri_meningioma", "chinese", "冠状位增强T1 MRI，右侧可见均匀强化的脑外肿块，考虑脑膜瘤。\n答案：A"),
    ("mri_meningioma", "chinese", "该图像为{{CT}}，右侧可见肿块，考虑{{转移瘤}}。\n答案：D"),
    ("mri_meningioma", "gpt-5", "Coronal T1 post-contrast brain MRI. There is {{no enhancing lesion}}. "
     "Final answer: B"),
    ("mri_meningioma", "qwen3-thinking", "<think>\nOption B is glioma, option A meningioma. The dural tail favours "
     "A. The mass is on the right side.\n</think>\nA"),
    # ---- mri_normal
    ("mri_normal", "qwen3-thinking", "<think>\nAxial FLAIR MRI of the brain. No mass, no abnormal signal, no "
     "hydrocephalus. The brain appears normal.\n</think>\nAnswer: D"),
    ("mri_normal", "gpt-5", "Axial FLAIR image showing a {{left frontal mass}} with {{oedema}}, likely a {{glioma}}.\n"
     "Final answer: A"),
    ("mri_normal", "gemini", "**Sequence:** {{T1-weighted}}.\n**Findings:** no focal lesion.\n**Answer:** D"),
    ("mri_normal", "deepseek-r1", "<think>\nHmm, is there a tumor? I need to check for mass effect. The ventricles "
     "are symmetric, no midline shift. No tumor.\n</think>\nno tumor"),
    ("mri_normal", "llava-med", "The MRI shows {{multiple sclerosis}} plaques in the periventricular white matter."),
    ("mri_normal", "markdown", "- Modality: MRI\n- Plane: {{sagittal}}\n- Abnormality: none\n\nAnswer: D"),
    ("mri_normal", "chinese", "颅脑MRI FLAIR轴位像，脑实质信号未见异常，未见占位。\n答案：D"),
    ("mri_normal", "chinese", "MRI显示{{右侧额叶肿瘤}}，考虑{{胶质瘤}}。\n答案：A"),
    ("mri_normal", "gpt-5", "I cannot exclude a tiny infarct, but no definite abnormality is seen. Final answer: D"),
    ("mri_normal", "qwen3-thinking", "<think>\nThe question asks: glioma, meningioma, pituitary tumor or no tumor? "
     "Meningioma would be extra-axial. I see no lesion at all.\n</think>\nD"),
    # ---- ct_haemorrhage
    ("ct_haemorrhage", "qwen3-thinking", "<think>\nThis is a non-contrast axial CT of the head. There is a "
     "hyperdense collection in the right hemisphere, about 3 cm, an intraparenchymal haemorrhage. Severe mass "
     "effect.\n</think>\nAnswer: B"),
    ("ct_haemorrhage", "gpt-5", "Non-contrast head CT: acute {{left}} intraparenchymal hemorrhage, ~30 mm.\n"
     "Final answer: B"),
    ("ct_haemorrhage", "gemini", "**Modality:** {{MRI}}.\n**Finding:** right-sided bleed.\n**Answer:** C"),
    ("ct_haemorrhage", "deepseek-r1", "<think>\nHmm, the dense area could be calcification or blood. Its size and "
     "mass effect suggest haemorrhage on the right.\n</think>\nB"),
    ("ct_haemorrhage", "llava-med", "The CT scan of the brain shows {{an infarct}} in the right middle cerebral "
     "artery territory, {{no haemorrhage}} is seen."),
    ("ct_haemorrhage", "markdown", "1. Modality: CT\n2. Plane: {{coronal}}\n3. Finding: right haemorrhage, "
     "{{8 mm}}\n\nAnswer: A"),
    ("ct_haemorrhage", "chinese", "头颅CT平扫轴位像，右侧大脑半球可见高密度出血灶，约30毫米。\n答案：B"),
    ("ct_haemorrhage", "chinese", "头颅CT示{{左侧}}基底节区出血。\n答案：A"),
    ("ct_haemorrhage", "gpt-5", "Head CT {{without any hemorrhage}}; the brain is {{unremarkable}}. Final answer: D"),
    ("ct_haemorrhage", "qwen3-thinking", "<think>\nIf this were a subdural haematoma it would be crescentic. This one "
     "is intraparenchymal, severe, on the right.\n</think>\nC"),
    # ---- fundus_dr
    ("fundus_dr", "qwen3-thinking", "<think>\nThis is a colour fundus photograph. I see scattered microaneurysms and "
     "hard exudates near the macula. This is moderate diabetic retinopathy.\n</think>\nAnswer: C"),
    ("fundus_dr", "gpt-5", "Fundus photo: optic disc cupping consistent with {{glaucoma}}; {{no exudates}}.\n"
     "Final answer: A"),
    ("fundus_dr", "gemini", "**Findings:** hard exudates and microaneurysms.\n**Grade:** {{severe}} diabetic "
     "retinopathy.\n**Answer:** D"),
    ("fundus_dr", "deepseek-r1", "<think>\nHmm, are those drusen or exudates? They are sharp and yellow, so hard "
     "exudates. Diabetic retinopathy.\n</think>\nB"),
    ("fundus_dr", "llava-med", "The fundus image shows {{drusen}} at the macula, consistent with {{age-related macular "
     "degeneration}}."),
    ("fundus_dr", "markdown", "- Modality: fundus photography\n- Lesions: microaneurysms, hard exudates\n"
     "- Diagnosis: diabetic retinopathy (moderate)\n\nAnswer: C"),
    ("fundus_dr", "chinese", "眼底照片可见微血管瘤及硬性渗出，符合糖尿病视网膜病变（中度）。\n答案：C"),
    ("fundus_dr", "chinese", "眼底照片示视盘水肿，考虑{{青光眼}}。\n答案：A"),
    ("fundus_dr", "gpt-5", "The retina appears {{normal}} in this image. Final answer: A"),
    ("fundus_dr", "qwen3-thinking", "<think>\nThe question asks about the grade. Severe retinopathy would show many "
     "haemorrhages in four quadrants. Here I see exudates and microaneurysms only, so moderate.\n</think>\nB"),
    # ---- us_liver_cyst
    ("us_liver_cyst", "qwen3-thinking", "<think>\nThis is an ultrasound of the liver. There is an anechoic "
     "round lesion with posterior acoustic enhancement, about 2.5 cm: a simple cyst.\n</think>\nAnswer: A"),
    ("us_liver_cyst", "gpt-5", "Abdominal {{CT}}: a {{hyperechoic}} liver lesion, likely {{haemangioma}}.\n"
     "Final answer: B"),
    ("us_liver_cyst", "gemini", "**Modality:** ultrasound.\n**Finding:** anechoic hepatic cyst measuring "
     "{{6 cm}}.\n**Answer:** A"),
    ("us_liver_cyst", "deepseek-r1", "<think>\nHmm, is it solid? No, it is anechoic. It's a cyst, ~25 mm.\n"
     "</think>\nA"),
    ("us_liver_cyst", "llava-med", "The ultrasound image shows a cyst in the liver. There is also {{free "
     "fluid}} in the "
     "abdomen."),
    ("us_liver_cyst", "markdown", "* Modality: US\n* Organ: liver\n* Lesion: cyst, 25 mm\n\nAnswer: A"),
    ("us_liver_cyst", "chinese", "超声图像，肝内可见一无回声囊肿，大小约25毫米。\n答案：A"),
    ("us_liver_cyst", "chinese", "腹部超声示肝脏{{未见囊肿}}。\n答案：C"),
    ("us_liver_cyst", "gpt-5", "Ultrasound with a solid mass? No: the lesion is anechoic, a cyst. Final answer: A"),
    ("us_liver_cyst", "qwen3-thinking", "<think>\nOptions: cyst, abscess, haemangioma, metastasis. An abscess "
     "would have internal echoes. This is anechoic, so a cyst.\n</think>\nA"),
    # ---- xray_wrist
    ("xray_wrist", "qwen3-thinking", "<think>\nThis is a lateral radiograph of the left wrist. There is a fracture "
     "of the distal radius.\n</think>\nAnswer: B"),
    ("xray_wrist", "gpt-5", "Lateral X-ray of the {{right}} wrist: distal radius fracture.\nFinal answer: B"),
    ("xray_wrist", "gemini", "**View:** {{PA}}.\n**Finding:** distal radial fracture, left.\n**Answer:** B"),
    ("xray_wrist", "deepseek-r1", "<think>\nHmm, is there a fracture line? Yes, a transverse lucency through the "
     "distal radius. Fracture present.\n</think>\nyes"),
    ("xray_wrist", "llava-med", "The X-ray shows {{no fracture}} or dislocation of the wrist."),
    ("xray_wrist", "markdown", "- Modality: {{CT}}\n- Finding: fracture\n\nAnswer: B"),
    ("xray_wrist", "chinese", "左腕关节侧位X线片，桡骨远端骨折。\n答案：B"),
    ("xray_wrist", "chinese", "腕关节X线片{{未见骨折}}。\n答案：no"),
    ("xray_wrist", "gpt-5", "The radiograph shows a fracture of the distal radius. Final answer: yes"),
    ("xray_wrist", "qwen3-thinking", "<think>\nThe question asks whether there is a fracture. I should look for a "
     "cortical break. I see a cortical break in the distal radius.\n</think>\nyes"),
    # ---- cxr_pneumothorax
    ("cxr_pneumothorax", "qwen3-thinking", "<think>\nPA chest radiograph. A visceral pleural line is seen at the "
     "right apex with absent lung markings beyond it: a small right pneumothorax.\n</think>\nAnswer: A"),
    ("cxr_pneumothorax", "gpt-5", "PA chest X-ray: {{left}} apical pneumothorax, small.\nFinal answer: A"),
    ("cxr_pneumothorax", "gemini", "**Findings:** {{No pneumothorax}}. Clear lungs.\n**Answer:** B"),
    ("cxr_pneumothorax", "deepseek-r1", "<think>\nHmm, could that be a skin fold? No, the line continues beyond the "
     "chest wall... it's a pneumothorax on the right, mild.\n</think>\nA"),
    ("cxr_pneumothorax", "llava-med", "The chest X-ray shows a {{large}} right pneumothorax with "
     "{{pleural effusion}}."),
    ("cxr_pneumothorax", "markdown", "- View: PA\n- Finding: right pneumothorax\n- Size: mild\n\nAnswer: A"),
    ("cxr_pneumothorax", "chinese", "胸部X线片示右侧气胸（轻度），肺组织压缩约10%。\n答案：A"),
    ("cxr_pneumothorax", "chinese", "胸片示{{左侧}}气胸。\n答案：B"),
    ("cxr_pneumothorax", "gpt-5", "Small right pneumothorax. {{The heart is enlarged}}. Final answer: A"),
    ("cxr_pneumothorax", "qwen3-thinking", "<think>\nA tension pneumothorax would shift the mediastinum. There is no "
     "shift here. The pneumothorax is small and on the right.\n</think>\nA"),
    # ---- ct_abd_normal
    ("ct_abd_normal", "qwen3-thinking", "<think>\nAxial CT of the abdomen. The liver, spleen and kidneys appear "
     "normal. No free fluid, no mass.\n</think>\nAnswer: D"),
    ("ct_abd_normal", "gpt-5", "Axial abdominal CT with a {{hepatic mass}} suspicious for {{metastasis}}.\n"
     "Final answer: B"),
    ("ct_abd_normal", "gemini", "**Plane:** {{coronal}}.\n**Findings:** unremarkable abdomen.\n**Answer:** D"),
    ("ct_abd_normal", "deepseek-r1", "<think>\nHmm, is there a renal cyst? I don't see one. No abnormality.\n"
     "</think>\nD"),
    ("ct_abd_normal", "llava-med", "The CT scan shows {{free fluid}} in the abdomen and {{dilated bowel}} loops."),
    ("ct_abd_normal", "markdown", "- Modality: CT\n- Region: abdomen\n- Findings: none\n\nAnswer: D"),
    ("ct_abd_normal", "chinese", "腹部CT轴位像，肝、脾、双肾未见异常，未见腹水。\n答案：D"),
    ("ct_abd_normal", "chinese", "腹部CT示{{肝内占位}}，考虑{{血管瘤}}。\n答案：B"),
    ("ct_abd_normal", "gpt-5", "The image is an {{MRI}} of the abdomen; no lesion. Final answer: D"),
    ("ct_abd_normal", "qwen3-thinking", "<think>\nThe options are liver, spleen, kidney, pancreas. I need to find "
     "which organ is highlighted. The box covers the spleen.\n</think>\nB"),
    # ---- mammo_mass
    ("mammo_mass", "qwen3-thinking", "<think>\nThis is an MLO mammogram of the left breast. There is an irregular "
     "mass with spiculated margins in the upper outer quadrant.\n</think>\nAnswer: C"),
    ("mammo_mass", "gpt-5", "{{CC}} view mammogram, left breast: spiculated mass.\nFinal answer: C"),
    ("mammo_mass", "gemini", "**Finding:** a {{right}} breast mass with {{circumscribed}} margins.\n**Answer:** A"),
    ("mammo_mass", "deepseek-r1", "<think>\nHmm, is it a focal asymmetry or a mass? It has convex borders in this "
     "view, so a mass, spiculated.\n</think>\nC"),
    ("mammo_mass", "llava-med", "The mammogram shows {{no mass}} and scattered benign calcifications."),
    ("mammo_mass", "markdown", "- View: MLO\n- Side: left\n- Lesion: mass, spiculated margin\n\nAnswer: C"),
    ("mammo_mass", "chinese", "左乳MLO位钼靶片，可见毛刺状肿块。\n答案：C"),
    ("mammo_mass", "chinese", "钼靶示{{右乳}}肿块。\n答案：A"),
    ("mammo_mass", "gpt-5", "Mammography, left MLO. Spiculated mass. Final answer: C"),
    ("mammo_mass", "qwen3-thinking", "<think>\nThe question asks for the margin. Options: circumscribed, "
     "obscured, microlobulated, spiculated. The margin is spiculated.\n</think>\nD"),
    # ---- ct_two_nodules
    ("ct_two_nodules", "qwen3-thinking", "<think>\nAxial chest CT. There are two small nodules in the left lung, "
     "about 6 and 8 mm.\n</think>\nAnswer: B"),
    ("ct_two_nodules", "gpt-5", "Axial CT chest: a {{solitary}} left lung nodule.\nFinal answer: A"),
    ("ct_two_nodules", "gemini", "**Findings:** {{three}} nodules in the left lung.\n**Answer:** C"),
    ("ct_two_nodules", "deepseek-r1", "<think>\nHmm, how many nodules? I count two, both in the left lower lobe.\n"
     "</think>\nB"),
    ("ct_two_nodules", "llava-med", "The CT scan shows multiple nodules in the {{right}} lung."),
    ("ct_two_nodules", "markdown", "- Count: 2\n- Side: left\n- Size: under 10 mm\n\nAnswer: B"),
    ("ct_two_nodules", "chinese", "胸部CT轴位像，左肺可见两个小结节。\n答案：B"),
    ("ct_two_nodules", "chinese", "胸部CT示{{右肺}}多发结节。\n答案：D"),
    ("ct_two_nodules", "gpt-5", "Two left lung nodules, the larger about {{3 cm}}. Final answer: B"),
    ("ct_two_nodules", "qwen3-thinking", "<think>\nA single nodule would be option A. I count two nodules on the "
     "left.\n</think>\nB"),
]


# Held out: written after the rules above were tuned, measured once and reported as they came out (the checker
# was not changed after seeing them). Same cases and labelling rule.
HELDOUT: list[tuple[str, str, str]] = [
    ("cxr_left_effusion", "qwen3-thinking", "<think>\nLet me start with the acquisition. Frontal radiograph, PA "
     "projection. Anatomy: both lungs and the heart are included. Findings: there is homogeneous opacity at the "
     "left base obscuring the hemidiaphragm, which is a left-sided pleural effusion. The right side looks fine.\n"
     "</think>\nFinal answer: B"),
    ("cxr_left_effusion", "gpt-5", "Key observations:\n- {{Lateral}} projection\n- Fluid in the left pleural space\n"
     "- Mediastinum midline\nFinal answer: A"),
    ("cxr_left_effusion", "gemini", "Looking at the image, I can see a left pleural effusion. I do not see "
     "{{any effusion}} on the left, though. **Answer:** C"),
    ("cxr_left_effusion", "deepseek-r1", "<think>\nSo, the left costophrenic angle is blunted. The right one is "
     "sharp. That means left effusion. Hmm, also the heart border is a bit obscured, maybe atelectasis too.\n"
     "</think>\nB"),
    ("cxr_left_effusion", "chinese", "影像为后前位胸片。左侧可见中等量胸腔积液，右肺未见明显实变。\n答案：B"),
    ("cxr_normal", "gpt-5", "Stage 1: PA chest radiograph. Stage 2: lungs, heart and mediastinum visible. Stage 3: "
     "no consolidation, effusion or pneumothorax. Stage 4: normal study.\nFinal answer: B"),
    ("cxr_normal", "llava-med", "The image is a chest X-ray showing bilateral {{consolidation}} in the lower lobes, "
     "consistent with {{pneumonia}}."),
    ("cxr_normal", "deepseek-r1", "<think>\nOkay, there's a subtle {{nodule}} projecting over the left mid zone. "
     "Wait, maybe it's a nipple shadow. Not sure.\n</think>\nC"),
    ("cxr_normal", "chinese", "胸部正位片，心影{{增大}}，考虑心脏增大。\n答案：D"),
    ("cxr_pneumonia", "gemini", "**Step 1 — acquisition:** AP chest radiograph.\n**Step 3 — findings:** patchy "
     "consolidation in the right lower zone.\n**Step 4 — diagnosis:** community-acquired pneumonia.\n**Answer:** B"),
    ("cxr_pneumonia", "qwen3-thinking", "<think>\nThe opacity is at the {{left}} base. It silhouettes the left "
     "hemidiaphragm. Pneumonia seems likely.\n</think>\nA"),
    ("cxr_pneumonia", "gpt-5", "Right lower lobe airspace disease without effusion. Final answer: C"),
    ("ct_nodule", "deepseek-r1", "<think>\nAlright, CT, axial slice through the chest. A spiculated nodule sits in "
     "the right lung, roughly 1.5 cm. Spiculation suggests malignancy.\n</think>\nB"),
    ("ct_nodule", "gemini", "The image is a {{coronal}} CT. There is a {{left}} lower lobe nodule about 14 mm.\n"
     "**Answer:** D"),
    ("ct_nodule", "markdown", "| Step | Observation |\n|---|---|\n| Modality | CT |\n| Finding | nodule, right "
     "lung, spiculated |\n\nFinal answer: B"),
    ("ct_nodule", "chinese", "胸部CT示右肺结节，{{边缘光滑}}。\n答案：A"),
    ("mri_glioma", "gpt-5", "On this axial T2-weighted MRI there is an infiltrative hyperintense lesion in the left "
     "hemisphere. Most consistent with glioma.\nFinal answer: C"),
    ("mri_glioma", "deepseek-r1", "<think>\nHmm, is this T1 or T2? CSF is bright, so T2. The lesion is on the "
     "{{right}} side and bright.\n</think>\nB"),
    ("mri_glioma", "llava-med", "The brain MRI shows a {{ring-enhancing lesion}} with surrounding {{edema}}, "
     "suggestive of {{metastasis}}."),
    ("mri_glioma", "chinese", "MRI T2加权像示左侧大脑半球高信号占位，考虑胶质瘤。\n答案：C"),
    ("mri_meningioma", "qwen3-thinking", "<think>\nCoronal contrast-enhanced T1 image. Dural-based enhancing mass "
     "along the right convexity. Classic meningioma.\n</think>\nFinal answer: A"),
    ("mri_meningioma", "gpt-5", "The lesion is intra-axial and infiltrative, most likely a {{glioma}}. "
     "Final answer: C"),
    ("mri_meningioma", "markdown", "1. Acquisition: MRI, coronal\n2. Finding: mass, {{left}} side\n3. Diagnosis: "
     "meningioma\n\nAnswer: A"),
    ("mri_normal", "gemini", "**Findings:** No intracranial mass or haemorrhage. Ventricles normal.\n**Answer:** D"),
    ("mri_normal", "qwen3-thinking", "<think>\nAxial FLAIR. There is a small hyperintense {{infarct}} in the right "
     "frontal lobe.\n</think>\nA"),
    ("mri_normal", "chinese", "颅脑MRI未见明显异常信号。\n答案：D"),
    ("ct_haemorrhage", "gemini", "**Acquisition:** non-contrast CT, axial.\n**Finding:** a large right "
     "intraparenchymal haematoma with mass effect.\n**Answer:** B"),
    ("ct_haemorrhage", "deepseek-r1", "<think>\nThis dense lesion in the {{left}} hemisphere is a bleed.\n</think>\nA"),
    ("ct_haemorrhage", "llava-med", "The CT image shows a hyperdense area in the right hemisphere, likely "
     "representing a haemorrhage."),
    ("fundus_dr", "gemini", "**Observations:** microaneurysms and hard exudates in the posterior pole. "
     "**Diagnosis:** {{mild}} non-proliferative diabetic retinopathy.\n**Answer:** B"),
    ("fundus_dr", "llava-med", "The fundus photograph shows a {{normal}} retina with no signs of retinopathy."),
    ("fundus_dr", "chinese", "眼底照片可见硬性渗出和微血管瘤，诊断为糖尿病视网膜病变。\n答案：C"),
    ("us_liver_cyst", "gemini", "**Modality:** ultrasound of the liver.\n**Finding:** a {{hypoechoic}} lesion, "
     "2.5 cm.\n**Answer:** B"),
    ("us_liver_cyst", "deepseek-r1", "<think>\nThe lesion is anechoic with through transmission, so it's a cyst, "
     "about 24 mm.\n</think>\nA"),
    ("xray_wrist", "gemini", "**View:** lateral radiograph.\n**Finding:** fracture of the distal radius on the "
     "left.\n**Answer:** B"),
    ("xray_wrist", "llava-med", "The X-ray image shows a {{normal}} wrist with no bony abnormality."),
    ("cxr_pneumothorax", "gemini", "**Findings:** a small right apical pneumothorax; {{no}} other findings, "
     "{{large}} effusion absent.\n**Answer:** A"),
    ("cxr_pneumothorax", "qwen3-thinking", "<think>\nI see a thin pleural line at the right apex with no lung "
     "markings lateral to it. So a right pneumothorax.\n</think>\nFinal answer: A"),
    ("ct_abd_normal", "gemini", "**Findings:** the liver, spleen and kidneys are normal. No ascites.\n"
     "**Answer:** D"),
    ("ct_abd_normal", "llava-med", "The CT scan of the abdomen shows a {{large mass}} in the liver, likely a "
     "{{hepatocellular carcinoma}}."),
    ("mammo_mass", "gemini", "**View:** MLO.\n**Finding:** an irregular spiculated mass in the left breast.\n"
     "**Answer:** C"),
    ("ct_two_nodules", "gemini", "**Findings:** two nodules in the left lung, 6 and 8 mm.\n**Answer:** B"),
]


_MARKS = re.compile(r"\{\{(.*?)\}\}")
_MARKS_HEDGED = re.compile(r"\{\{(.*?)\}\}|\[\[(.*?)\]\]")


def build(entries: list[tuple[str, str, str]] | None = None, prefix: str = "r", *, hedged: bool = False,
          cases: dict[str, dict] | None = None) -> list[dict]:
    """The rows of a set: ``{{...}}`` spans are gold ``contradicted`` claims; with ``hedged`` (held-out 4 on),
    ``[[...]]`` spans are hedged hallucinations, listed under ``hedged``; ``cases``: the set's own cases by id
    (held-out 6 on: the corpus's and cases with incomplete lists), else :data:`CASES`."""
    known = CASES if cases is None else cases
    out = []
    for i, (case, style, marked) in enumerate(ENTRIES if entries is None else entries):
        text, spans, hedges, pos = "", [], [], 0
        for m in (_MARKS_HEDGED if hedged else _MARKS).finditer(marked):
            text += marked[pos:m.start()]
            said = m.group(1) if m.group(1) is not None else m.group(2)
            span = {"start": len(text), "end": len(text) + len(said), "text": said}
            if m.group(1) is not None:
                spans.append({**span, "verdict": "contradicted"})
            else:
                hedges.append({**span, "note": "hedged_hallucination"})
            text += said
            pos = m.end()
        text += marked[pos:]
        row = {"id": f"{prefix}{i:03d}", "style": style, "case_id": case, "case": known[case], "raw": text,
               "claims": spans}
        out.append({**row, "hedged": hedges} if hedged else row)
    return out


def write(name: str, rows: list[dict]) -> None:
    """``rows`` as JSON lines to ``tests/data/NAME`` (sorted keys, UTF-8)."""
    path = Path(__file__).with_name(name)
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
    print(f"{len(rows)} rationales -> {path}")


if __name__ == "__main__":
    write("rationale_corpus.jsonl", build())
    write("rationale_heldout.jsonl", build(HELDOUT, "h"))
