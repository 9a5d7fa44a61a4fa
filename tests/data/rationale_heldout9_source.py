"""Source of ``rationale_heldout9.jsonl`` (issue 39, ninth set): a ninth fresh held-out set of hand-labelled
rationales, written in the heldout9 session (December 2026) by a helper who read neither the checker
(``medr2.scoring.claims``), its vocabulary data, its tests, its documentation nor the rationales of held-outs 6, 7
and 8 (only the corpus source for the format and the labelling rule, and held-out 8's docstring and its
``NEW_CASES``/``build`` code for the mechanism; held-outs 6 and 7 were opened only for their case ids and source
comments, to pick sources they had not used). Every label was fixed by hand, and re-checked against the case's
fields, before the checker was run on any of these texts; nothing was tuned on it. Same labelling rule as
``rationale_corpus_source.py``: ``{{...}}`` marks every statement about this image that the case's fields make
false (plainly or with a strong hedge: "likely", "consistent with", "考虑"; a statement the model retracts a moment
later is marked, as the corpus marks its retracted "MRI"). As in held-outs 4 to 8, ``[[...]]`` marks a *hedged
hallucination*: a finding or diagnosis the case does not have, put forward with a weak hedge ("possible", "may",
"might", "could", "cannot be excluded") about this image; it is not a gold ``contradicted`` span. Restated options,
differentials weighed and textbook knowledge are never marked.

Explicit absence. Each row's case carries ``meta.findings_complete``:

- the corpus's own cases (:data:`rationale_corpus_source.CASES`) carry ``meta.findings_complete`` true (the corpus
  rule: a finding not listed is absent) and are used as they are;
- :data:`NEW_CASES` are seven cases of this set whose finding lists are incomplete (``findings_complete`` false),
  after sources none of held-outs 6 to 8 used: an RSNA pulmonary-embolism CT (RSPECT exam labels: right-sided PE
  1; central PE, chronic PE and RV/LV ratio >= 1 all 0), an MRNet knee MRI (abnormal 1, ACL tear 1, meniscal tear
  0), an RSNA 2022 cervical-spine fracture CT (C2 1, C1 and C3 to C7 0), a thyroid ultrasound nodule scored with
  ACR TI-RADS (TR4, no echogenic foci), a DENTEX-style dental panoramic radiograph (one impacted tooth; no caries
  and no periapical lesion boxes), a CAMELYON16-style H&E lymph-node tile inside a tumour annotation, and an RSNA
  intracranial-haemorrhage slice (subdural 1, the other four sub-types 0). There an invented finding that is not
  in ``absent`` cannot be decided and is left unmarked (infarct, effusions, a nodule, emphysema, joint effusion,
  bone marrow oedema, a PCL injury, prevertebral swelling, lymph nodes, restorations, bone loss, necrosis,
  extranodal extension, midline shift; a weakly hedged one is not a hedged hallucination either); one in
  ``absent``, or a sub-type of one (a saddle embolus, right heart strain, a bucket-handle tear, a
  Jefferson fracture, microcalcifications, deep caries, a periapical radiolucency ...) is marked, with
  ``[[...]]`` where weakly hedged (a chronic web, a haemorrhagic contusion). Modality, plane, sequence, stain,
  window, side, region, organ, the listed findings' attributes and location, a denial of a listed finding, a
  normal-study claim on an abnormal case, the diagnosis and the grade are labelled as in the corpus.

Kinds held: laterality away from the finding word (the image's side against the patient's, a side marker, a side
in a table row or a JSON field, Chinese 左/右 inside the clause, "both", "bilateral"); counts in words, numerals,
"multiple", "single"/"solitary"; sizes in mm, cm, Chinese units and words (small, large, 少量); wrong modality,
plane, view, sequence, stain, window, region and organ; margins, echo and signal descriptors; grades (severity,
NPDR stage, TI-RADS category); invented findings in numbered lists, Markdown tables, label tables, measurement
lists, checklists, JSON and IMPRESSION lines; normal-study claims and denials; the wrong sibling or the mimic;
retracted statements. Sub-types and synonyms of a case's true finding or diagnosis (a lobar or bacterial
pneumonia, a high-grade glioma, a diffuse astrocytoma, a Colles-type fracture, a simple or complex hepatic cyst, a
complete ACL tear, a type II odontoid or hangman's fracture, an acute subdural haematoma, a mesioangular
impaction) are supported and never marked. Texts are 2026-style thinking traces with self-corrections,
differentials and restated options, report-style FINDINGS/IMPRESSION sections, tables, checklists, JSON and mixed
Chinese/English, in the styles of the earlier sets and of two more (claude, medgemma); the last 22 rows are long,
claim-dense reports with nothing false in them (one per case), so that false accusations weigh as in real output,
where most claims are right. Regenerate with
``python tests/data/rationale_heldout9_source.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import rationale_corpus_source as _src  # noqa: E402  (the corpus's cases and its one build/write)

_INCOMPLETE = {"findings_complete": False}

NEW_CASES: dict[str, dict] = {
    # RSNA STR Pulmonary Embolism Detection (RSPECT), exam labels: negative_exam_for_pe 0, rightsided_pe 1,
    # leftsided_pe 0, central_pe 0, chronic_pe 0, acute_and_chronic_pe 0, rv_lv_ratio_gte_1 0; nothing else of
    # the chest is labelled
    "rspect_pe": {"modality": "CT", "plane": "axial", "sequence": "contrast-enhanced", "body_region": "chest",
                  "structures": ["lung", "pulmonary artery"],
                  "findings": [{"label": "pulmonary embolism", "attributes": {"laterality": "right"}}],
                  "diagnosis": "pulmonary embolism", "meta": _INCOMPLETE,
                  "absent": ["central pulmonary embolism", "chronic pulmonary embolism", "right ventricular strain"]},
    # MRNet, sagittal T2 series: abnormal 1, ACL tear 1, meniscal tear 0; no side, nothing else labelled
    "mrnet_acl": {"modality": "MRI", "plane": "sagittal", "sequence": "T2-weighted", "body_region": "knee",
                  "structures": ["anterior cruciate ligament", "meniscus"],
                  "findings": [{"label": "ACL tear", "attributes": {}}], "diagnosis": None, "meta": _INCOMPLETE,
                  "absent": ["meniscal tear"]},
    # RSNA 2022 Cervical Spine Fracture Detection: patient_overall 1, C2 1, C1 and C3-C7 0 (sagittal bone-window
    # reformat); nothing else of the spine is labelled
    "rsna_cspine": {"modality": "CT", "plane": "sagittal", "sequence": "bone window", "body_region": "cervical spine",
                    "structures": ["vertebra"], "findings": [{"label": "fracture", "attributes": {"location": "C2"}}],
                    "diagnosis": None, "meta": _INCOMPLETE,
                    "absent": ["C1 fracture", "C3 fracture", "C4 fracture", "C5 fracture", "C6 fracture",
                               "C7 fracture"]},
    # thyroid ultrasound nodule scored with ACR TI-RADS: solid 2, hypoechoic 2, wider-than-tall 0, smooth 0,
    # echogenic foci none 0 -> 4 points, TR4; no cytology, nothing else of the neck labelled
    "thyroid_tirads": {"modality": "ultrasound", "plane": "transverse", "body_region": "neck",
                       "structures": ["thyroid"],
                       "findings": [{"label": "nodule", "attributes": {
                           "laterality": "right", "size_mm": 18, "intensity": "hypoechoic", "margin": "smooth",
                           "composition": "solid", "shape": "wider-than-tall"}}],
                       "diagnosis": None, "severity": "TI-RADS 4", "meta": _INCOMPLETE, "absent": ["calcification"]},
    # DENTEX-style panoramic radiograph: boxes of four classes (caries, deep caries, periapical lesion, impacted
    # tooth); this image has one impacted tooth (38) and no caries or periapical boxes; restorations, missing teeth
    # and bone levels are not labelled
    "dental_pano": {"modality": "X-ray", "plane": "panoramic", "body_region": "jaw",
                    "structures": ["teeth", "mandible", "maxilla"],
                    "findings": [{"label": "impacted tooth", "attributes": {
                        "laterality": "left", "location": "mandibular third molar"}}],
                    "diagnosis": None, "meta": _INCOMPLETE, "absent": ["caries", "periapical lesion"]},
    # CAMELYON16-style tile: an H&E tile of a sentinel lymph node inside a tumour annotation (breast cancer
    # metastasis); no other tissue label
    "camelyon_tile": {"modality": "histopathology", "sequence": "H&E", "body_region": "lymph node", "structures": [],
                      "findings": [{"label": "metastasis", "attributes": {}}],
                      "diagnosis": "metastatic breast carcinoma", "meta": _INCOMPLETE, "absent": []},
    # RSNA Intracranial Hemorrhage Detection, slice labels: any 1, subdural 1, epidural 0, intraparenchymal 0,
    # intraventricular 0, subarachnoid 0; no side, nothing else labelled
    "rsna_ich_subdural": {"modality": "CT", "plane": "axial", "sequence": "non-contrast", "body_region": "head",
                          "structures": ["brain"], "findings": [{"label": "subdural haemorrhage", "attributes": {}}],
                          "diagnosis": None, "meta": _INCOMPLETE,
                          "absent": ["epidural haemorrhage", "intraparenchymal haemorrhage",
                                     "intraventricular haemorrhage", "subarachnoid haemorrhage"]},
}

CASES: dict[str, dict] = {**_src.CASES, **NEW_CASES}

# (case, style, text)
ENTRIES: list[tuple[str, str, str]] = [
    # ---- cxr_left_effusion (X-ray, PA, chest; left pleural effusion, moderate; complete)
    ("cxr_left_effusion", "qwen3-thinking",
     "<think>\nOkay, the user wants the main abnormality. Let me go through it systematically. First, the "
     "projection: the scapulae are rotated off the lung fields and the heart is not magnified, so this is "
     "a PA film, not AP. Airway: the trachea is central. Breathing: the right lung is clear, with normal "
     "vascular markings. On the left there is a homogeneous opacity in the lower zone with a concave upper "
     "border that rises laterally, a meniscus. The left costophrenic angle is obliterated. Hmm, could this "
     "be left lower lobe collapse instead? Collapse would give a sharp triangular density behind the heart "
     "with volume loss, and the hilum is not pulled down. So it is an effusion. Circulation: the cardiothoracic "
     "ratio looks under 0.5. Diaphragm: the right hemidiaphragm is clear; the left one is obscured by the "
     "fluid. Size: it reaches about a third of the way up the hemithorax, so moderate.\n"
     "</think>\nThe film shows a moderate left pleural effusion.\n"
     "\nAnswer: C"),
    ("cxr_left_effusion", "gpt-5",
     "FINDINGS:\n- Technique: frontal (PA) radiograph of the chest, adequate inspiration.\n"
     "- Left hemithorax: meniscus-shaped opacity at the base with loss of the costophrenic angle.\n"
     "- Right hemithorax: {{patchy airspace consolidation}} in the right lower zone.\n"
     "- Heart size normal; mediastinum central.\n"
     "- No pneumothorax.\n\nIMPRESSION:\n1. Moderate left pleural effusion.\n"
     "2. {{Right lower lobe pneumonia}}.\n\nFinal answer: B"),
    ("cxr_left_effusion", "deepseek-r1",
     "<think>\nHmm, the opacity sits on the image's right side... wait, by radiographic convention the image's "
     "right is the patient's left, and the side marker confirms it. So the effusion is on the patient's left. "
     "That fits the blunted left costophrenic angle. Is it small? It extends up towards the mid zone, so "
     "I'd call it moderate rather than small. No air-fluid level, so no hydropneumothorax.\n"
     "</think>\n**Answer: A**: left pleural effusion, moderate."),
    ("cxr_left_effusion", "chinese", "**分析 / Analysis**\n1. 影像类型：胸部正位片（PA）。\n"
     "2. 左侧肋膈角消失，左下肺野见密度增高影，上缘呈弧形，consistent with a left pleural effusion。\n"
     "3. 心影大小正常，纵隔居中。\n4. 另见{{右侧少量气胸}}。\n5. 积液量：{{大量}}。\n"
     "\n答案：D"),
    ("cxr_left_effusion", "llava-med",
     "The image is a chest X-ray taken in the posteroanterior view. There is blunting of the left costophrenic "
     "angle, suggestive of a left pleural effusion. There is also a {{cavitary lesion}} in the left upper "
     "lobe. The heart size appears normal."),
    ("cxr_left_effusion", "gemini", "**Image:** Frontal chest radiograph (PA).\n"
     "**Key finding:** Left-sided pleural effusion, moderate volume, with a meniscus.\n"
     "**Other:** Heart and mediastinum within normal limits. The right lung is clear. There may be [[underlying "
     "consolidation]] at the left base, masked by the fluid.\n"
     "**Answer:** B"),
    ("cxr_left_effusion", "medgemma",
     "Chest X-ray, PA projection.\nFindings: There is a moderate left pleural effusion. The lungs are otherwise "
     "clear. No pneumothorax. The cardiomediastinal silhouette is within normal limits.\n"
     "Impression: Moderate left pleural effusion."),
    ("cxr_left_effusion", "claude", "Looking at this image, I'll work through it step by step.\n"
     "\n**Modality and view.** This is a plain chest radiograph in {{lateral}} projection. Hmm, actually "
     "both lungs are projected side by side, so let me reconsider: it's a frontal PA view.\n"
     "\n**Findings.** The left hemidiaphragm and costophrenic angle are obscured by a dependent fluid density "
     "with a meniscus; this is a left pleural effusion of moderate size. The right costophrenic angle is "
     "sharp. The cardiac silhouette is not enlarged.\n"
     "\n**Answer:** B"),
    # ---- cxr_normal (X-ray, PA, chest; normal; complete)
    ("cxr_normal", "gpt-5", "Checklist:\n[x] Projection: PA\n[x] Lungs: clear, no focal opacity\n"
     "[x] Pleura: no effusion, no pneumothorax\n"
     "[x] Heart: normal size\n[x] Mediastinum: not widened\n"
     "[x] Bones: intact\nConclusion: normal chest radiograph.\n"
     "Final answer: A"),
    ("cxr_normal", "qwen3-thinking",
     "<think>\nLet me look carefully, because 'normal' questions are often traps. PA chest film. Lung fields: "
     "symmetric lucency. Hmm, the right hilum looks a little bulky; it could be [[hilar lymph node enlargement]], "
     "or just a vessel seen end-on. Vessels seen end-on are common and this has the same density as the neighbourin"
     "g vessels, so probably a vessel. Costophrenic angles are sharp. Heart size is normal. I'll go with "
     "normal.\n</think>\nAnswer: B (normal)"),
    ("cxr_normal", "markdown", "| Feature | Observation |\n|---|---|\n| Modality | Chest radiograph |\n"
     "| View | PA |\n| Heart | {{Enlarged}}, CTR about 0.6 |\n"
     "| Lungs | Clear |\n| Pleura | {{small left effusion}} |\n"
     "| Impression | {{cardiomegaly}} with {{small left effusion}} |\n"
     "\n**Answer: C**"),
    ("cxr_normal", "chinese",
     "思考：这是一张后前位胸片。双肺野透亮度对称，肺纹理走行自然；双侧肋膈角锐利；心影大小形态正常；纵隔无增宽；"
     "所见骨质未见骨折。\n结论：正常胸片，未见明显异常。\n答案：A"),
    ("cxr_normal", "llava-med",
     "The chest X-ray shows {{bilateral hilar lymphadenopathy}}, which could be related to [[sarcoidosis]]. "
     "The lungs are otherwise clear."),
    ("cxr_normal", "deepseek-r1",
     "<think>\nThe scapulae overlap the lungs and the heart looks magnified, so I think this is an {{AP}} "
     "supine film. Nothing else stands out: no consolidation, no effusion, no pneumothorax.\n"
     "</think>\n```json\n{\"view\": \"{{AP}}\", \"abnormal\": false, \"findings\": []}\n"
     "```\nAnswer: normal"),
    ("cxr_normal", "gemini",
     "**Question restated:** Which of the following best describes the study? (A) normal (B) pneumonia (C) "
     "pleural effusion (D) pneumothorax.\n**Reasoning:** Pneumonia would show consolidation, an effusion "
     "would blunt the angles and a pneumothorax would show a pleural line. None of these is present: the "
     "lungs are clear, the costophrenic angles are sharp and there is no pleural line.\n"
     "**Answer:** A"),
    # ---- cxr_pneumonia (X-ray, AP, chest; right consolidation; pneumonia; complete)
    ("cxr_pneumonia", "gpt-5", "Technique: portable AP chest radiograph.\n"
     "Findings: There is dense airspace opacification in the right lower zone with air bronchograms, obscuring "
     "the right hemidiaphragm. The left lung is clear. No pleural effusion. The cardiac silhouette is not "
     "enlarged for an AP projection. No pneumothorax.\n"
     "Impression: Right lower lobe consolidation, most consistent with lobar pneumonia.\n"
     "Final answer: B"),
    ("cxr_pneumonia", "medgemma", "AP chest radiograph.\nFindings by zone:\n"
     "- Right upper zone: clear\n- Right lower zone: {{clear}}\n"
     "- Left upper zone: clear\n- {{Left lower zone}}: consolidation with air bronchograms\n"
     "- Heart size: normal\nImpression: {{left}} lower lobe pneumonia."),
    ("cxr_pneumonia", "deepseek-r1",
     "<think>\nFirst, the projection. The label says 'portable' and the scapulae project over the lungs, "
     "so it's AP, not PA. OK. Now the lungs: the right lower zone is white with air bronchograms; the right "
     "heart border is preserved but the right hemidiaphragm is lost, so it's the right lower lobe. Could "
     "it be an effusion instead? No meniscus, and air bronchograms mean airspace disease. So consolidation. "
     "With fever in the stem, pneumonia. Let me double-check the left side... clear. Is there a small [[parapneumon"
     "ic effusion]]? The right costophrenic angle might be slightly blunted, but I can't be sure.\n"
     "</think>\nRight lower lobe pneumonia. Answer: D"),
    ("cxr_pneumonia", "chinese",
     "床旁AP位胸片。右下肺野见大片实变影，其内可见{{空洞}}及{{气液平面}}，考虑{{肺脓肿}}。左肺清晰。\n"
     "答案：C"),
    ("cxr_pneumonia", "gemini", "**1. Acquisition**: AP portable chest film.\n"
     "**2. Findings**: focal consolidation in the right lower lobe; air bronchograms present; no effusion; "
     "no pneumothorax.\n**3. Diagnosis**: bacterial pneumonia.\n"
     "**Answer:** A"),
    ("cxr_pneumonia", "claude",
     "The study is a portable AP chest radiograph. I can see airspace opacities in {{both}} lower zones, "
     "more confluent on the right, with air bronchograms. The cardiomediastinal contour is normal. Taken "
     "together this represents pneumonia.\n\n"
     "Answer: B"),
    ("cxr_pneumonia", "llava-med",
     "The chest X-ray shows a right lower lobe consolidation consistent with pneumonia. There is also a {{small "
     "right pleural effusion}}, and the heart is normal in size."),
    # ---- ct_nodule (CT, axial, lung window, chest; right nodule 14 mm, spiculated; complete)
    ("ct_nodule", "gpt-5", "Nodule summary:\n- Location: right lung, upper lobe\n"
     "- Type: solid\n- Diameter: 14 mm (1.4 cm)\n"
     "- Margin: spiculated\n- Additional nodules: none\n"
     "- Lymph nodes: {{enlarged right hilar node}}, 16 mm\n"
     "\nWindow: lung. Plane: axial.\nFinal answer: C"),
    ("ct_nodule", "qwen3-thinking",
     "<think>\nAxial CT, lung window. Right lung: there's a nodule with spiculated margins. Size: against "
     "the scale bar it is about 14 millimetres. Wait, is it in the left lung? No: by convention the patient's "
     "right is on the image left, and the liver dome is below it on that side. So right lung. Spiculation "
     "raises concern for malignancy, but the question only asks about the margin.\n"
     "</think>\nAnswer: D (spiculated)"),
    ("ct_nodule", "deepseek-r1",
     "<think>\nThis looks like a {{mediastinal window}}... hmm, no, the lung parenchyma is visible with fine "
     "vessels, so it must be a lung window after all. The nodule is right-sided, spiculated, and measures "
     "about {{3.5 cm}}. That size would make it a mass rather than a nodule, hmm.\n"
     "</think>\nB"),
    ("ct_nodule", "chinese",
     "Step 1：CT轴位，肺窗。\nStep 2：右肺上叶见一实性结节，直径约1.4 cm，边缘毛刺征（spiculation）。\n"
     "Step 3：{{纵隔淋巴结肿大}}，{{右侧胸腔积液}}。\nStep 4：结论：右肺毛刺结节。\n"
     "答案：A"),
    ("ct_nodule", "llava-med", "This is a chest {{X-ray}} showing a nodule in the right lung with spiculated margins."),
    ("ct_nodule", "markdown",
     "```json\n{\"modality\": \"CT\", \"plane\": \"axial\", \"window\": \"lung\", \"finding\": {\"type\": "
     "\"nodule\", \"side\": \"{{left}}\", \"size_mm\": 14, \"margin\": \"spiculated\"}}\n"
     "```\nAnswer: B"),
    ("ct_nodule", "gemini",
     "**Findings:** A solitary spiculated nodule in the right upper lobe, about 14 mm, on an axial lung-window "
     "CT. [[Pleural retraction]] may be present next to it. No other nodule on this slice.\n"
     "**Answer:** C"),
    # ---- mri_glioma (MRI, axial, T2-weighted, head; left mass, hyperintense; glioma; mimic meningioma; complete)
    ("mri_glioma", "claude", "Let me work through this carefully.\n\n"
     "1. **Sequence and plane.** CSF in the ventricles is bright, so this is T2-weighted; the slice is axial.\n"
     "2. **Lesion.** There is an ill-defined, hyperintense intra-axial mass in the left cerebral hemisphere, "
     "centred in the white matter.\n3. **Differential.** Meningioma is extra-axial with a CSF cleft and a "
     "dural tail, not seen here. Metastases are usually multiple and sit at the grey-white junction. An abscess "
     "typically has a smooth rim. A diffuse glioma fits best.\n"
     "\n**Answer:** C (glioma)"),
    ("mri_glioma", "gpt-5", "Key imaging features:\n1. Sequence: {{T1 post-contrast}}\n"
     "2. Plane: axial\n3. Lesion: left hemispheric, hyperintense\n"
     "4. {{Intralesional haemorrhage}}\n5. Diagnosis: high-grade glioma\n"
     "Final answer: A"),
    ("mri_glioma", "chinese",
     "头颅MRI，T2WI轴位。左侧额颞叶见团块状高信号，边界不清，考虑{{脑膜瘤}}，需与胶质瘤鉴别。\n"
     "答案：B"),
    ("mri_glioma", "qwen3-thinking",
     "<think>\nOkay. Axial T2 MRI of the head. I see a bright mass... on which side? The image's right is "
     "the patient's left, and the lesion is on the image right, so patient left. There are {{two}} separate "
     "lesions though, one frontal and one parietal, which makes me think of metastases... but the second "
     "'lesion' is really just the trigone of the lateral ventricle. So a single left-hemisphere mass, hyperintense."
     " Glioma.\n</think>\nAnswer: C"),
    ("mri_glioma", "llava-med",
     "The MRI image shows a {{hypointense}} mass in the left hemisphere, which might be a [[lymphoma]]."),
    ("mri_glioma", "medgemma",
     "Findings: Axial T2-weighted MRI of the brain demonstrates a hyperintense, infiltrative mass lesion "
     "in the left cerebral hemisphere. No extra-axial collection.\n"
     "Impression: Findings are most consistent with a glioma (diffuse astrocytoma)."),
    ("mri_glioma", "gemini", "**Plane:** {{sagittal}}\n**Sequence:** T2\n"
     "**Lesion:** left-sided, T2-hyperintense mass\n"
     "**Impression:** glioma\n**Answer:** C"),
    # ---- mri_meningioma (MRI, coronal, T1 post-contrast, head; right mass; meningioma; mimic glioma; complete)
    ("mri_meningioma", "gpt-5",
     "FINDINGS: Coronal post-contrast T1-weighted image shows a homogeneously enhancing, extra-axial, dural-based "
     "mass over the right cerebral convexity with a dural tail. The adjacent brain is displaced without infiltratio"
     "n.\nIMPRESSION: Right convexity meningioma.\n"
     "Final answer: A"),
    ("mri_meningioma", "deepseek-r1",
     "<think>\nThe fat is bright and CSF is dark... so T1. The enhancement means contrast was given. Hmm, "
     "but the lesion is very bright; could this be T2 instead? I'll go with {{T2}}. Extra-axial right-sided "
     "mass with a broad dural base. Meningioma.\n"
     "</think>\nA"),
    ("mri_meningioma", "chinese", "| 项目 | 所见 |\n|---|---|\n| 序列 | T1增强 |\n"
     "| 层面 | 冠状位 |\n| 部位 | {{左侧}}大脑凸面 |\n| 诊断 | 脑膜瘤 |\n"
     "\n答案：A"),
    ("mri_meningioma", "llava-med",
     "The MRI scan shows a large heterogeneous mass in the right frontal lobe with {{surrounding edema}}, "
     "consistent with {{glioblastoma}}."),
    ("mri_meningioma", "qwen3-thinking",
     "<think>\nCoronal T1 with gadolinium. A well-circumscribed, avidly enhancing mass abuts the dura on "
     "the right, with a dural tail. There could be some [[hyperostosis]] of the adjacent skull. Meningioma "
     "is the classic answer; the options also include glioma, schwannoma and metastasis, but the dural tail "
     "and the extra-axial location favour meningioma.\n"
     "</think>\nAnswer: A"),
    ("mri_meningioma", "claude",
     "This is a coronal contrast-enhanced T1-weighted MR image of the brain. There are {{multiple}} dural-based "
     "enhancing masses, the dominant one over the right convexity. These are meningiomas.\n"
     "\nAnswer: A"),
    ("mri_meningioma", "medgemma",
     "Findings: {{CT}} of the head with contrast shows an extra-axial enhancing mass in the right hemisphere.\n"
     "Impression: Meningioma."),
    # ---- mri_normal (MRI, axial, FLAIR, head; normal; complete)
    ("mri_normal", "qwen3-thinking",
     "<think>\nAxial FLAIR: CSF is dark but the image looks T2-ish, so fluid-suppressed T2, i.e. FLAIR. Let "
     "me scan: periventricular white matter, no hyperintense lesions. Cortex, no swelling. Ventricles, normal "
     "size and symmetric. Midline, no shift. Extra-axial spaces, no collection. Options: A glioma, B meningioma, "
     "C pituitary tumour, D no tumour. Nothing here.\n"
     "</think>\nAnswer: D"),
    ("mri_normal", "gpt-5", "Systematic review:\n1. Ventricles: normal\n"
     "2. White matter: {{scattered periventricular hyperintensities}}, likely {{small-vessel ischaemic change}}\n"
     "3. Grey matter: normal\n4. Extra-axial spaces: no collection\n"
     "Impression: {{chronic microvascular ischaemic disease}}, otherwise normal.\n"
     "Final answer: D"),
    ("mri_normal", "chinese",
     "颅脑MRI FLAIR序列轴位：双侧大脑半球对称，脑室系统无扩大，中线结构居中，脑实质内未见异常高信号，未见占位效应。"
     "\n印象：颅脑MRI平扫未见明显异常。\n答案：D"),
    ("mri_normal", "llava-med",
     "The image is a {{T1-weighted}} MRI of the brain showing a {{pituitary macroadenoma}}."),
    ("mri_normal", "gemini",
     "**Sequence:** FLAIR, axial.\n**Findings:** No mass, no haemorrhage, no midline shift. There may be "
     "a [[tiny demyelinating plaque]] in the left frontal white matter, but I would not call it.\n"
     "**Answer:** D"),
    ("mri_normal", "deepseek-r1",
     "<think>\nHmm, I can see the corpus callosum along its length and the brainstem, so this is a {{sagittal}} "
     "slice. Signal is normal throughout. No tumour.\n"
     "</think>\nno tumor"),
    # ---- ct_haemorrhage (CT, axial, non-contrast, head; right haemorrhage 30 mm; severe; complete)
    ("ct_haemorrhage", "gpt-5",
     "Non-contrast axial CT of the head demonstrates an acute hyperdense intraparenchymal haematoma in the "
     "right basal ganglia region measuring approximately 3.0 cm, with surrounding mass effect and effacement "
     "of the right lateral ventricle. Severity: severe.\n"
     "Final answer: B"),
    ("ct_haemorrhage", "deepseek-r1",
     "<think>\nA dense blob in the right hemisphere. Blood, not calcification, because it's lobulated and "
     "large. How big? Maybe {{8 mm}}... no wait, against the skull it is roughly a third of the hemisphere, "
     "maybe 3 cm. OK, 3 cm. There is no intraventricular extension.\n"
     "</think>\nB"),
    ("ct_haemorrhage", "chinese", "头颅CT平扫（轴位）：右侧颞顶叶见团片状高密度影，CT值约65 HU，大小约3.0×2.5 cm。\n"
     "诊断：右侧脑出血，{{少量}}出血，病情{{轻度}}。\n答案：C"),
    ("ct_haemorrhage", "llava-med",
     "The CT scan of the head shows a large hyperdense area in the {{left}} cerebral hemisphere, representing "
     "an acute haemorrhage."),
    ("ct_haemorrhage", "gemini", "**Modality:** CT, non-contrast, axial.\n"
     "**Findings:** Right intraparenchymal haemorrhage, about 30 mm; severe. A possible underlying [[arteriovenous "
     "malformation]] cannot be excluded.\n**Answer:** B"),
    ("ct_haemorrhage", "claude",
     "I'll go region by region. This is an unenhanced axial CT of the head, viewed in a brain window. The "
     "right cerebral hemisphere contains a large, well-defined hyperdense lesion, acute blood, about 30 mm "
     "across. The ventricle is compressed on that side. The left hemisphere is normal. There is {{a fracture "
     "of the right temporal bone}} as well.\n"
     "\nAnswer: A"),
    ("ct_haemorrhage", "markdown", "### Summary\n- Modality: {{MRI (SWI)}}\n"
     "- Plane: axial\n- Lesion: right-sided haemorrhage, 3 cm, severe\n"
     "\n**Answer: B**"),
    # ---- fundus_dr (fundus photography, eye; hard exudates, microaneurysms; diabetic retinopathy, moderate; complete)
    ("fundus_dr", "qwen3-thinking",
     "<think>\nColour fundus photo of the posterior pole centred on the macula; the optic disc is visible "
     "nasally. I can see several small red dots, microaneurysms, and clusters of yellow, sharply demarcated "
     "deposits temporal to the fovea: hard exudates. Options: A no DR, B mild NPDR, C moderate NPDR, D proliferativ"
     "e DR. Mild NPDR is microaneurysms only; here there are exudates too, and no new vessels, so moderate.\n"
     "</think>\nAnswer: C"),
    ("fundus_dr", "gpt-5", "| Lesion | Present |\n|---|---|\n| Microaneurysms | yes |\n"
     "| Hard exudates | yes |\n| {{Cotton-wool spots}} | yes |\n"
     "| Neovascularisation | no |\n| Vitreous haemorrhage | no |\n"
     "\nGrade: moderate NPDR.\nFinal answer: C"),
    ("fundus_dr", "chinese",
     "眼底彩照：后极部可见散在微动脉瘤及硬性渗出，黄斑区{{水肿}}。\n分级：{{重度}}非增殖期糖尿病视网膜病变。"
     "\n答案：D"),
    ("fundus_dr", "llava-med",
     "The image is an {{optical coherence tomography}} scan showing diabetic retinopathy with exudates."),
    ("fundus_dr", "deepseek-r1",
     "<think>\nLots of yellow spots; are they drusen? Drusen are softer-edged and sit deeper; these are crisp "
     "and waxy, and they form a circinate pattern around microaneurysms. So hard exudates. There might be "
     "[[early neovascularisation at the disc]], the vessels there look a bit tangled... but I'm not confident. "
     "I'll grade it moderate NPDR.\n</think>\n"
     "C"),
    ("fundus_dr", "medgemma",
     "Fundus photograph.\nFindings: Microaneurysms and hard exudates in the posterior pole. The optic disc "
     "appears normal.\nImpression: Moderate non-proliferative diabetic retinopathy."),
    ("fundus_dr", "markdown", "- Microaneurysms ✔\n- Hard exudates ✔\n"
     "- {{Dot-blot haemorrhages}} ✔ (in all four quadrants)\n"
     "- Grade: moderate NPDR\n\nAnswer: C"),
    # ---- us_liver_cyst (ultrasound, abdomen, liver; cyst 25 mm, anechoic; complete)
    ("us_liver_cyst", "gemini", "**Modality:** B-mode ultrasound, right upper quadrant.\n"
     "**Organ:** liver.\n**Lesion:** round, anechoic, thin-walled, with posterior acoustic enhancement; 2.5 "
     "cm.\n**Impression:** simple hepatic cyst.\n"
     "**Answer:** A"),
    ("us_liver_cyst", "gpt-5", "Sonographic findings:\n- Hepatic lesion, anechoic\n"
     "- Size: {{45 mm}}\n- {{Thick internal septations}}\n"
     "- No internal vascularity on colour Doppler\n"
     "Impression: complex cyst.\nFinal answer: B"),
    ("us_liver_cyst", "chinese", "超声：{{右肾}}可见一无回声区，边界清，后方回声增强，大小约2.5 cm，考虑单纯囊肿。\n"
     "答案：A"),
    ("us_liver_cyst", "qwen3-thinking",
     "<think>\nUltrasound of the liver. A round anechoic lesion, about 25 mm, with posterior enhancement: "
     "a simple cyst. There may be a [[small echogenic focus]] along the wall, perhaps a tiny calcification, "
     "but it may be artefact.\n</think>\nAnswer: A"),
    ("us_liver_cyst", "llava-med",
     "The ultrasound image shows a {{hyperechoic}} lesion in the liver, which is likely a {{hemangioma}}."),
    ("us_liver_cyst", "deepseek-r1",
     "<think>\nIs this CT? No, there's a sector-shaped field of view and speckle, so ultrasound. The lesion "
     "is anechoic, 24 × 25 mm, with through-transmission. No solid component, no septa. Bosniak is for kidneys, "
     "not relevant here. Simple liver cyst.\n"
     "</think>\nA"),
    ("us_liver_cyst", "medgemma",
     "Findings: Liver ultrasound demonstrates an anechoic cyst measuring 2.5 cm. The gallbladder contains "
     "{{multiple echogenic calculi}} with acoustic shadowing.\n"
     "Impression: Simple hepatic cyst; {{cholelithiasis}}."),
    # ---- xray_wrist (X-ray, lateral, upper limb; left fracture; complete)
    ("xray_wrist", "gpt-5",
     "Lateral radiograph of the left wrist. There is a transverse fracture of the distal radial metaphysis "
     "with dorsal angulation of the distal fragment, in keeping with a Colles-type fracture. Carpal alignment "
     "is maintained.\nFinal answer: B"),
    ("xray_wrist", "qwen3-thinking",
     "<think>\nLet me check the side marker: it reads 'R'. So it's the {{right}} wrist. Lateral view. There "
     "is a cortical break in the distal radius. Fracture.\n"
     "</think>\nAnswer: yes"),
    ("xray_wrist", "chinese", "左腕关节{{正位}}片：桡骨远端骨皮质不连续，可见骨折线。\n答案：B"),
    ("xray_wrist", "llava-med", "The X-ray image shows a fracture of the {{ankle}}."),
    ("xray_wrist", "deepseek-r1",
     "<think>\nLateral view, left wrist. The distal radius has a clear fracture line. The carpal bones line "
     "up... though there could be a [[dislocation of the distal radioulnar joint]] that this single view "
     "can't exclude.\n</think>\nyes"),
    ("xray_wrist", "markdown", "1. View: lateral\n2. Side: left\n3. Bone: distal radius\n"
     "4. Finding: fracture, dorsally angulated\n"
     "\nAnswer: yes"),
    ("xray_wrist", "gemini",
     "**View:** lateral.\n**Finding:** The cortex is smooth; {{no fracture line}} is seen. The apparent lucency "
     "is a nutrient canal.\n**Answer:** no"),
    # ---- cxr_pneumothorax (X-ray, PA, chest; right pneumothorax; mild; complete)
    ("cxr_pneumothorax", "claude", "Working through the radiograph:\n\n- **Projection:** PA, erect.\n"
     "- **Pleura:** a thin visceral pleural line is visible at the right apex, with no lung markings peripheral "
     "to it: a right pneumothorax. The rim is narrow, so it is small.\n"
     "- **Mediastinum:** central, no shift, so no tension physiology.\n"
     "- **Lungs:** otherwise clear; no effusion.\n"
     "\nAnswer: A (right pneumothorax)"),
    ("cxr_pneumothorax", "gpt-5",
     "PA chest radiograph: right-sided pneumothorax, {{large}} (more than 50% of the hemithorax), with {{mediastina"
     "l shift to the left}}.\nFinal answer: C"),
    ("cxr_pneumothorax", "chinese",
     "后前位胸片：右肺尖可见脏层胸膜线，其外侧无肺纹理，肺组织压缩约15%，为右侧少量气胸。纵隔无移位，双侧肋膈角锐利"
     "。\n答案：A"),
    ("cxr_pneumothorax", "qwen3-thinking",
     "<think>\nPA film. There's a pleural line at the right apex. Let me check the left apex too... there "
     "might be a [[tiny left apical pneumothorax]] as well, but it could just be the edge of the scapula. "
     "The right side is definite and small.\n"
     "</think>\nAnswer: A"),
    ("cxr_pneumothorax", "llava-med",
     "The chest X-ray appears {{normal}}, with {{no evidence of pneumothorax}} or pleural effusion."),
    ("cxr_pneumothorax", "markdown", "| Item | Value |\n|---|---|\n| Modality | X-ray |\n"
     "| View | {{AP}} supine |\n| Side | right |\n"
     "| Size | small |\n| Answer | A |"),
    ("cxr_pneumothorax", "medgemma",
     "Findings: PA chest radiograph. Small right apical pneumothorax. No mediastinal shift. The lungs are "
     "otherwise clear.\nImpression: Small right pneumothorax."),
    # ---- ct_abd_normal (CT, axial, abdomen; liver, spleen, kidney; normal; complete)
    ("ct_abd_normal", "qwen3-thinking",
     "<think>\nAxial CT through the upper abdomen. Liver: homogeneous attenuation, smooth contour, no focal "
     "lesion. Spleen: normal size. Kidneys: both enhance symmetrically, no hydronephrosis, no stones visible "
     "at this level. No free fluid. No lymphadenopathy. Bowel loops are not dilated. The question asks which "
     "organ lies posteriorly to the patient's left of the aorta... that's the left kidney. Everything looks "
     "normal otherwise.\n</think>\nAnswer: C"),
    ("ct_abd_normal", "gpt-5", "FINDINGS:\n- Liver: {{multiple hypodense lesions}}, the largest 2 cm in segment VII\n"
     "- Spleen: normal\n- Kidneys: normal, no hydronephrosis\n"
     "- Free fluid: none\nIMPRESSION: {{hepatic metastases}}.\n"
     "Final answer: B"),
    ("ct_abd_normal", "chinese",
     "Axial CT 腹部：肝脏形态、密度正常；脾不大；双肾未见积水及结石；腹腔未见积液；腹膜后未见肿大淋巴结。"
     "\nImpression：未见明显异常 (normal study)。\n答案：D"),
    ("ct_abd_normal", "llava-med", "This is a {{coronal}} CT image of the abdomen showing {{an enlarged spleen}}."),
    ("ct_abd_normal", "gemini",
     "**Plane:** axial CT of the abdomen.\n**Organs:** liver, spleen and both kidneys unremarkable. There "
     "may be a [[tiny simple renal cyst]] on the right, too small to characterise.\n"
     "**Answer:** D"),
    ("ct_abd_normal", "deepseek-r1",
     "<think>\nThe fat is bright... so this is a {{T1-weighted MRI}}. Hmm, actually the bones are bright "
     "white and there is no chemical-shift artefact, so CT. OK, CT. No masses, organs normal.\n"
     "</think>\nD"),
    ("ct_abd_normal", "markdown",
     "```json\n{\"modality\": \"CT\", \"plane\": \"axial\", \"region\": \"abdomen\", \"organs\": {\"liver\": "
     "\"normal\", \"spleen\": \"normal\", \"kidneys\": \"normal\"}, \"impression\": \"no acute abnormality\"}\n"
     "```\nAnswer: D"),
    # ---- mammo_mass (mammography, MLO, breast; left mass, spiculated; complete)
    ("mammo_mass", "gpt-5",
     "Left MLO mammogram. There is an irregular high-density mass with spiculated margins in the upper breast "
     "at posterior depth. No associated calcifications are seen on this view. The skin and nipple are normal.\n"
     "Final answer: C"),
    ("mammo_mass", "chinese",
     "左乳MLO位：外上象限见不规则肿块，边缘毛刺，其内见{{多形性微钙化}}，{{左腋下淋巴结肿大}}。\n"
     "答案：C"),
    ("mammo_mass", "qwen3-thinking",
     "<think>\nThe pectoralis muscle is seen as a triangle along the upper posterior edge, so this is an "
     "MLO view. Which breast? The label reads LMLO, so the left breast. The mass has spiculated margins. "
     "The other breast is not shown, so I can't compare.\n"
     "</think>\nAnswer: C"),
    ("mammo_mass", "llava-med",
     "The mammogram shows a {{well-circumscribed}} oval mass in the left breast. There are no calcifications."),
    ("mammo_mass", "gemini", "**View:** {{craniocaudal (CC)}}.\n**Laterality:** left.\n"
     "**Finding:** spiculated mass.\n**Answer:** C"),
    ("mammo_mass", "deepseek-r1",
     "<think>\nMLO view. The mass is in the... the label is hard to read. The pectoralis is on the left side "
     "of the image, which for an MLO means it's the {{right}} breast. Spiculated margins. There might be "
     "[[architectural distortion]] around it too.\n"
     "</think>\nC"),
    ("mammo_mass", "markdown", "- [x] Modality: mammography\n- [x] View: MLO\n"
     "- [x] Side: left\n- [x] Lesion: mass\n- [x] Margin: spiculated\n"
     "- [ ] Calcifications: none\n\nAnswer: C"),
    # ---- ct_two_nodules (CT, axial, chest; two left nodules, 6 and 8 mm; complete)
    ("ct_two_nodules", "gpt-5", "Nodule inventory (axial CT):\n1. Left lower lobe, 8 mm, solid\n"
     "2. Left lower lobe, 6 mm, solid\nTotal: two nodules, both left-sided. No nodules on the right.\n"
     "Final answer: B"),
    ("ct_two_nodules", "qwen3-thinking",
     "<think>\nAxial chest CT. Counting nodules: one in the left upper lobe, one in the left lower lobe... "
     "and a third one in the right middle lobe? Let me look again. Yes, there's a small {{right middle lobe "
     "nodule}} too. So {{three}} nodules in total.\n"
     "</think>\nAnswer: C"),
    ("ct_two_nodules", "chinese", "胸部CT轴位：左肺见两枚结节，大小分别约{{1.5 cm}}和{{2.2 cm}}。\n"
     "答案：B"),
    ("ct_two_nodules", "llava-med", "The CT scan shows {{bilateral}} pulmonary nodules. No pleural effusion is seen."),
    ("ct_two_nodules", "gemini",
     "**Findings:** two small left-sided nodules (6 mm and 8 mm). A possible [[tiny ground-glass opacity]] "
     "in the right upper lobe.\n**Answer:** B"),
    ("ct_two_nodules", "deepseek-r1",
     "<think>\nHow many? Going across the slice: the left lung has two round opacities, about 6 and 8 millimetres. "
     "The right lung is clear. Two is the answer.\n"
     "</think>\nB"),
    ("ct_two_nodules", "medgemma",
     "Findings: Axial CT of the chest. A {{single}} 8 mm nodule in the left lung. {{No other nodules}}.\n"
     "Impression: {{Solitary}} pulmonary nodule."),
    # ==== NEW_CASES (incomplete finding lists; an invented finding not in ``absent`` is left unmarked)
    # ---- rspect_pe (CT, axial, contrast, chest; right PE; absent: central PE, chronic PE, RV strain)
    ("rspect_pe", "gpt-5",
     "CT PULMONARY ANGIOGRAM\nFINDINGS: Axial contrast-enhanced images show filling defects in the right "
     "lower lobe segmental pulmonary arteries, consistent with acute pulmonary embolism. The main pulmonary "
     "artery and the left-sided branches opacify normally. The RV/LV ratio is below 1; no right heart strain.\n"
     "IMPRESSION: Acute right-sided segmental pulmonary embolism without right ventricular strain.\n"
     "Final answer: B"),
    ("rspect_pe", "qwen3-thinking",
     "<think>\nThis is a CTPA, axial. Contrast fills the pulmonary arteries. There's a large filling defect "
     "straddling the bifurcation of the main pulmonary artery, a {{saddle embolus}}, extending into the right "
     "main pulmonary artery. The right ventricle looks {{dilated}} next to the left, so there is {{right "
     "heart strain}}. Hmm, that's a lot; let me stay with the main question: PE present.\n"
     "</think>\nAnswer: A"),
    ("rspect_pe", "chinese",
     "CTPA轴位增强：{{左}}下肺动脉分支内见充盈缺损，考虑急性肺栓塞。右下肺见楔形实变影，考虑肺梗死。\n"
     "答案：B"),
    ("rspect_pe", "deepseek-r1",
     "<think>\nContrast-enhanced axial CT of the chest. Filling defects in the right lower lobe arteries. "
     "Acute or chronic? Acute clots sit centrally in the lumen with a rim of contrast; chronic ones are eccentric "
     "and web-like. These look central... though there might be a [[chronic web]] in one segmental branch. "
     "Small bilateral pleural effusions. I'll say acute PE.\n"
     "</think>\nA"),
    ("rspect_pe", "llava-med",
     "This is a {{non-contrast}} CT of the chest. The pulmonary arteries are {{normal, with no filling defects}}."),
    ("rspect_pe", "markdown", "| Label | Value |\n|---|---|\n| negative_exam_for_pe | 0 |\n"
     "| rightsided_pe | 1 |\n| leftsided_pe | 0 |\n"
     "| central_pe | {{1}} |\n| rv_lv_ratio_gte_1 | 0 |\n"
     "| chronic_pe | 0 |\n\nAnswer: A"),
    ("rspect_pe", "claude",
     "Reviewing this axial CT pulmonary angiogram: there is an occlusive filling defect in the right lower "
     "lobe pulmonary artery extending into its segmental branches, an acute pulmonary embolus. The left-sided "
     "branches are patent. The right ventricle is not enlarged. Incidentally, there is a 5 mm nodule in the "
     "right upper lobe and mild centrilobular emphysema.\n"
     "\nAnswer: B"),
    # ---- mrnet_acl (MRI, sagittal, T2-weighted, knee; ACL tear; absent: meniscal tear)
    ("mrnet_acl", "gpt-5",
     "Sagittal T2-weighted MRI of the knee. The anterior cruciate ligament is discontinuous, with wavy fibres "
     "that are not seen at the femoral attachment, consistent with a complete ACL tear. The posterior horn "
     "of the medial meniscus is normal in signal and morphology. There is a moderate joint effusion.\n"
     "Final answer: B"),
    ("mrnet_acl", "qwen3-thinking",
     "<think>\nSagittal slice through the intercondylar notch, {{proton-density}} fat-sat... ACL: the fibres "
     "are not continuous, so torn. Menisci: there's linear high signal reaching the inferior articular surface "
     "of the posterior horn of the medial meniscus; that's a {{meniscal tear}}. Also bone marrow oedema in "
     "the lateral femoral condyle and the posterolateral tibial plateau, the classic pivot-shift pattern.\n"
     "</think>\nAnswer: C"),
    ("mrnet_acl", "chinese",
     "膝关节MRI矢状位T2WI：前交叉韧带走行连续，信号{{未见异常}}；内外侧半月板形态、信号正常；关节腔少量积液。"
     "\n印象：{{膝关节MRI未见明显异常}}。\n答案：A"),
    ("mrnet_acl", "deepseek-r1",
     "<think>\nThis is a {{coronal}} image... no wait, I can see the patella anteriorly and the posterior "
     "capsule, so it's sagittal. The ACL is not visible as a continuous band: torn. There may be a [[small "
     "lateral meniscal tear]] in the posterior horn; there's some intermediate signal, but it doesn't clearly "
     "reach the surface.\n</think>\nB"),
    ("mrnet_acl", "markdown", "### MRNet-style labels\n- abnormal: yes\n"
     "- ACL tear: yes (complete)\n- meniscal tear: no\n"
     "\n### Notes\n- Plane: sagittal, T2\n- Region: knee\n"
     "\nAnswer: B"),
    ("mrnet_acl", "llava-med",
     "The MRI image shows a {{bucket-handle tear of the medial meniscus}} with a double PCL sign. The anterior "
     "cruciate ligament is torn."),
    ("mrnet_acl", "gemini", "**Sequence/plane:** T2-weighted, sagittal.\n"
     "**ACL:** torn (non-visualised fibres, empty notch).\n"
     "**PCL:** buckled, possibly partially injured.\n"
     "**Menisci:** intact.\n**Answer:** B"),
    # ---- rsna_cspine (CT, sagittal, bone window, cervical spine; fracture at C2; absent: fractures of C1 and C3 to C7)
    ("rsna_cspine", "gpt-5",
     "CT cervical spine, sagittal reformat in bone window: there is a fracture through the base of the odontoid "
     "process of C2 (type II). Vertebral body heights are otherwise maintained from C3 to C7. The prevertebral "
     "soft tissues are mildly thickened at C2.\n"
     "Final answer: A"),
    ("rsna_cspine", "qwen3-thinking",
     "<think>\nSagittal CT, bone window. Counting down from the top... there's a cortical break and loss "
     "of height at {{C5}}, a compression fracture. Let me recount from C2, the one with the dens... yes, "
     "same level. The rest of the column is aligned.\n"
     "</think>\nAnswer: C"),
    ("rsna_cspine", "chinese",
     "颈椎CT矢状位骨窗：{{寰椎前后弓骨折}}，考虑{{Jefferson骨折}}（C1）。{{枢椎未见骨折}}。\n"
     "答案：B"),
    ("rsna_cspine", "llava-med",
     "This is a lateral cervical spine {{X-ray}}. The vertebral alignment is normal and {{no fracture is "
     "seen}}."),
    ("rsna_cspine", "deepseek-r1",
     "<think>\nSagittal bone-window CT of the cervical spine. C2 shows a fracture line through the pars interarticu"
     "laris; could be a hangman's fracture. There is mild anterolisthesis of C2 on C3. The spinal canal looks "
     "adequate. Ligamentous injury can't be assessed on CT.\n"
     "</think>\nA"),
    ("rsna_cspine", "markdown", "| Level | Fracture |\n|---|---|\n| C1 | no |\n"
     "| C2 | {{no}} |\n| C3 | no |\n| C4 | no |\n"
     "| C5 | no |\n| C6 | {{yes}} |\n| C7 | no |\n"
     "\npatient_overall: 1\nAnswer: B"),
    ("rsna_cspine", "medgemma",
     "Findings: {{Axial}} CT image of the cervical spine in bone window demonstrates a fracture of C2.\n"
     "Impression: C2 fracture."),
    # ---- thyroid_tirads (US, transverse, neck; right nodule 18 mm, solid, hypoechoic; TR4; absent: calcification)
    ("thyroid_tirads", "gpt-5", "ACR TI-RADS scoring of the right thyroid nodule (transverse view):\n"
     "- Composition: solid (2)\n- Echogenicity: hypoechoic (2)\n"
     "- Shape: wider-than-tall (0)\n- Margin: smooth (0)\n"
     "- Echogenic foci: none (0)\nTotal 4 points, TR4 (moderately suspicious). Size 1.8 cm, at least 1.5 "
     "cm, so FNA is recommended.\nFinal answer: C"),
    ("thyroid_tirads", "qwen3-thinking",
     "<think>\nThyroid ultrasound, transverse. A right lobe nodule, solid, hypoechoic, about 18 mm. I see "
     "{{punctate echogenic foci}}, {{microcalcifications}}, which add 3 points. So 2 + 2 + 3 = 7, that's "
     "{{TR5}}.\n</think>\nAnswer: D"),
    ("thyroid_tirads", "chinese",
     "甲状腺超声横切面：{{左叶}}见一实性低回声结节，大小约18 mm，边界清，{{纵横比>1}}。\n"
     "TI-RADS：{{5类}}。\n答案：D"),
    ("thyroid_tirads", "llava-med",
     "The ultrasound image shows an {{isoechoic}} nodule in the right lobe of the thyroid gland with a halo. "
     "There are enlarged cervical lymph nodes."),
    ("thyroid_tirads", "deepseek-r1",
     "<think>\nA right thyroid nodule on a transverse sweep. Solid and darker than the surrounding gland. "
     "It measures about 1.8 cm. Margins smooth. There could be a [[tiny peripheral calcification]] at the "
     "posterior edge, or that's just reverberation artefact. If it's artefact, TR4.\n"
     "</think>\nC"),
    ("thyroid_tirads", "gemini",
     "**View:** {{longitudinal}}.\n**Nodule:** right lobe, solid, hypoechoic, smooth margins, {{3.5 cm}}.\n"
     "**TI-RADS:** TR4.\n**Answer:** C"),
    ("thyroid_tirads", "markdown",
     "```json\n{\"organ\": \"thyroid\", \"side\": \"right\", \"composition\": \"solid\", \"echogenicity\": "
     "\"hypoechoic\", \"shape\": \"wider-than-tall\", \"margin\": \"smooth\", \"echogenic_foci\": \"none\", "
     "\"size_mm\": 18, \"tirads\": \"TR4\"}\n"
     "```\nAnswer: C"),
    # ---- dental_pano (X-ray, panoramic, jaw; impacted left mandibular third molar; absent: caries, periapical lesion)
    ("dental_pano", "gpt-5",
     "Panoramic radiograph (OPG) of the jaws. Tooth 38, the lower left third molar, is mesioangularly impacted "
     "against the distal surface of 37. The remaining dentition shows several amalgam restorations. The inferior "
     "alveolar canal runs close to the roots of 38. No periapical radiolucencies. No carious lesions identified.\n"
     "Final answer: B"),
    ("dental_pano", "qwen3-thinking",
     "<think>\nOPG. Let me go quadrant by quadrant. Q1: 16 has a large radiolucency under the occlusal restoration "
     "reaching the pulp, {{deep caries}}. Q2: fine. Q3: 38 is impacted, lying horizontally. Q4: 48 is impacted "
     "as well... hmm, actually 48 looks fully erupted. So one impacted tooth. 46 has a {{periapical radiolucency}} "
     "at the mesial root.\n</think>\nAnswer: C"),
    ("dental_pano", "chinese",
     "全景片（曲面断层）：仅见一颗阻生齿，为{{右侧上颌}}第三磨牙，近中倾斜。余牙未见龋坏，根尖周未见低密度影。"
     "\n答案：A"),
    ("dental_pano", "llava-med",
     "This is a {{cone-beam CT}} image of the mandible showing an impacted left lower third molar."),
    ("dental_pano", "deepseek-r1",
     "<think>\nPanoramic X-ray. The lower left wisdom tooth is impacted under the second molar. Generalised "
     "horizontal bone loss, so periodontitis. Near the apex of 36 there might be a [[small periapical lesion]]; "
     "the lamina dura is hard to follow.\n</think>\n"
     "B"),
    ("dental_pano", "markdown", "| Tooth | Finding |\n|---|---|\n| 38 | impacted |\n"
     "| 36 | {{caries}} |\n| 47 | {{periapical lesion}} |\n"
     "| 18 | missing |\n\nAnswer: D"),
    ("dental_pano", "gemini", "**Projection:** {{bitewing}}.\n**Finding:** impacted lower left third molar.\n"
     "**Answer:** B"),
    # ---- camelyon_tile (histopathology, H&E, lymph node; metastasis; metastatic breast carcinoma; absent: none listed)
    ("camelyon_tile", "gpt-5",
     "H&E-stained section of a lymph node. The tile shows sheets of large atypical epithelial cells with "
     "pleomorphic nuclei and prominent nucleoli, forming cohesive nests that efface the nodal architecture: "
     "metastatic carcinoma, consistent with the breast primary. Residual lymphocytes are seen at the edge.\n"
     "Final answer: B (tumour)"),
    ("camelyon_tile", "qwen3-thinking",
     "<think>\nH&E, lymph node tissue. Lots of cells... are they lymphocytes? They're larger, with vesicular "
     "nuclei. Could be large cell lymphoma or carcinoma. They form cohesive clusters, which favours carcinoma "
     "over lymphoma. Metastatic breast carcinoma, then.\n"
     "</think>\nAnswer: B"),
    ("camelyon_tile", "chinese",
     "病理切片（HE染色）：淋巴结结构完整，可见淋巴滤泡及生发中心，{{未见肿瘤细胞}}，考虑{{反应性增生}}。\n"
     "答案：A"),
    ("camelyon_tile", "llava-med",
     "This {{immunohistochemistry}} image shows cytokeratin-positive tumor cells in the {{liver}}."),
    ("camelyon_tile", "deepseek-r1",
     "<think>\nH&E lymph node tile. There's a population of atypical cells with prominent nucleoli; they "
     "might be a [[melanoma metastasis]], but there's no pigment. Let me go with metastatic carcinoma from "
     "the breast, which is the setting of this dataset.\n"
     "</think>\nB"),
    ("camelyon_tile", "markdown", "- Stain: H&E\n- Tissue: lymph node\n- Tumour: present (metastatic carcinoma)\n"
     "- Necrosis: present, focal\n- Extranodal extension: present\n"
     "\nAnswer: B"),
    ("camelyon_tile", "gemini", "**Modality:** {{cytology smear (Papanicolaou)}}.\n"
     "**Finding:** clusters of malignant epithelial cells, metastatic breast carcinoma.\n"
     "**Answer:** B"),
    # ---- rsna_ich_subdural (CT, axial, non-contrast, head; subdural haemorrhage; absent: the four other sub-types)
    ("rsna_ich_subdural", "gpt-5",
     "Non-contrast axial head CT: a crescentic hyperdense extra-axial collection along the convexity, crossing "
     "suture lines, consistent with an acute subdural haematoma. No epidural, intraventricular or subarachnoid "
     "blood. The brain parenchyma shows no intraparenchymal haemorrhage.\n"
     "Final answer: subdural"),
    ("rsna_ich_subdural", "qwen3-thinking",
     "<think>\nHead CT, no contrast. There's a hyperdense collection over the convexity... is it crescentic "
     "or biconvex? It looks lens-shaped and doesn't cross the sutures, so it's an {{epidural haematoma}}. "
     "There's also blood in the sulci, a {{subarachnoid haemorrhage}}.\n"
     "</think>\nAnswer: B"),
    ("rsna_ich_subdural", "chinese",
     "头颅CT平扫轴位：左侧额颞部颅骨内板下见新月形高密度影，考虑急性硬膜下血肿；{{双侧侧脑室内见积血}}；中线结构右移"
     "约5 mm。\n答案：A"),
    ("rsna_ich_subdural", "llava-med",
     "The CT scan of the brain appears {{normal}}, with {{no evidence of intracranial hemorrhage}}."),
    ("rsna_ich_subdural", "deepseek-r1",
     "<think>\nAxial non-contrast CT in a subdural window. There's a thin crescentic hyperdensity layering "
     "along the right tentorium and convexity: subdural. Hmm, the sylvian fissure could contain a little "
     "[[subarachnoid blood]] as well, hard to say. And a small [[haemorrhagic contusion]] in the frontal "
     "lobe is possible.\n</think>\nA"),
    ("rsna_ich_subdural", "markdown", "| Subtype | Label |\n|---|---|\n| any | 1 |\n"
     "| epidural | 0 |\n| intraparenchymal | {{1}} |\n"
     "| intraventricular | 0 |\n| subarachnoid | 0 |\n"
     "| subdural | 1 |\n\nAnswer: A"),
    ("rsna_ich_subdural", "medgemma",
     "Findings: {{MRI}} of the brain, axial {{FLAIR}}, shows an extra-axial subdural collection.\n"
     "Impression: Subdural hematoma."),
    # ==== long reports, mostly right (most claims in real rationales are true: these measure false accusations)
    ("cxr_left_effusion", "gpt-5",
     "Step-by-step read:\n1. Acquisition: PA chest radiograph, erect, adequate inspiration, no rotation.\n"
     "2. Trachea: midline.\n3. Right lung: clear; right costophrenic angle sharp.\n"
     "4. Left hemithorax: moderate pleural effusion with a meniscus, obscuring the left hemidiaphragm and "
     "costophrenic angle.\n5. Heart: normal size; mediastinum not shifted.\n"
     "6. Pleura elsewhere: no pneumothorax.\n"
     "7. Bones: no rib fracture seen.\nIMPRESSION: Moderate left pleural effusion; no other acute abnormality.\n"
     "Final answer: B"),
    ("cxr_normal", "claude", "Let me go through this radiograph systematically before choosing.\n"
     "\n- **Technique:** a PA chest film with good inspiration; the clavicles are symmetric about the spinous "
     "processes, so there is no rotation.\n- **Lungs:** both lungs are clear, with normal vascular markings "
     "out to the periphery.\n- **Pleura:** the costophrenic angles are sharp on both sides and no pleural "
     "line is seen at either apex.\n- **Heart and mediastinum:** the cardiac silhouette is normal in size "
     "and the mediastinum is not widened.\n- **Diaphragm and below:** both hemidiaphragms are smooth; no "
     "free air beneath them.\n\nNothing abnormal, so this is a normal chest radiograph.\n"
     "\n**Answer:** A"),
    ("cxr_pneumonia", "qwen3-thinking",
     "<think>\nLet me restate: the question asks for the most likely diagnosis, options A. pulmonary oedema "
     "B. pneumonia C. pleural effusion D. pneumothorax. Projection first: AP, portable; the heart can't be "
     "judged for size reliably but looks normal anyway. The right lower zone shows confluent airspace opacity "
     "with air bronchograms; the right hemidiaphragm is silhouetted, so the right lower lobe. The left lung "
     "is clear. No Kerley lines, no upper lobe diversion, so not oedema. No meniscus, so not an effusion. "
     "No pleural line, so not a pneumothorax. Right lower lobe pneumonia.\n"
     "</think>\nAnswer: B"),
    ("ct_nodule", "medgemma",
     "Findings: Axial CT of the chest displayed in lung window. There is a 14 mm solid nodule in the right "
     "upper lobe with spiculated margins. No other pulmonary nodules are seen. No pleural effusion. No pneumothorax"
     ". The airways are patent.\nImpression: Spiculated right upper lobe nodule measuring 14 mm."),
    ("mri_glioma", "deepseek-r1",
     "<think>\nRight, what do I have. MRI, axial plane, CSF bright, so T2-weighted. There's a large hyperintense "
     "lesion in the left hemisphere. Is it intra- or extra-axial? No CSF cleft, no dural tail, and it expands "
     "the white matter, so intra-axial. Single lesion. The options: glioma, meningioma, pituitary adenoma, "
     "no tumour. Pituitary adenoma would be in the sella, meningioma extra-axial. So glioma. Let me double-check "
     "the side: the lesion is on the image right, which is the patient's left. Yes, left.\n"
     "</think>\nAnswer: A (glioma)"),
    ("mri_meningioma", "gemini", "**Step 1: Acquisition.** MRI, coronal plane, T1-weighted after gadolinium.\n"
     "**Step 2: Location.** Right cerebral convexity, extra-axial, with a broad dural base.\n"
     "**Step 3: Appearance.** Homogeneous avid enhancement; a dural tail; a CSF cleft between the mass and "
     "the cortex.\n**Step 4: Diagnosis.** Meningioma (WHO grade 1 appearance).\n"
     "**Answer:** A"),
    ("mri_normal", "medgemma",
     "Findings: Axial FLAIR MRI of the brain. The ventricles and sulci are normal in size for age. No abnormal "
     "parenchymal signal. No mass, mass effect or midline shift. No extra-axial collection.\n"
     "Impression: Normal MRI of the brain."),
    ("ct_haemorrhage", "qwen3-thinking",
     "<think>\nOkay. Non-contrast CT of the head, axial. A hyperdense lesion, round, in the right cerebral "
     "hemisphere, about 30 mm. Hyperdense on non-contrast CT means acute blood. It's intraparenchymal, not "
     "extra-axial. The right lateral ventricle is compressed, so significant mass effect: severe. Options "
     "are A. ischaemic stroke B. haemorrhage C. tumour D. normal. An acute ischaemic stroke would be hypodense "
     "or normal early on. So B.\n</think>\nAnswer: B"),
    ("fundus_dr", "claude",
     "Here's my reasoning.\n\n1. **Image type:** a colour fundus photograph centred on the macula; the optic "
     "disc is at the nasal edge.\n2. **Red lesions:** multiple tiny round red dots at the posterior pole, "
     "typical of microaneurysms.\n3. **Yellow lesions:** discrete, glistening yellow deposits with sharp "
     "borders near the macula, hard exudates.\n"
     "4. **What's absent:** no neovascularisation at the disc or elsewhere, no preretinal or vitreous haemorrhage.\n"
     "5. **Grade:** microaneurysms with hard exudates and no proliferative signs fit moderate non-proliferative "
     "diabetic retinopathy.\n\n**Answer:** C"),
    ("us_liver_cyst", "markdown", "| Feature | Observation |\n|---|---|\n| Modality | Ultrasound (B-mode) |\n"
     "| Organ | Liver |\n| Echogenicity | Anechoic |\n"
     "| Wall | Thin, imperceptible |\n| Posterior features | Acoustic enhancement |\n"
     "| Size | 25 mm |\n| Internal septa | None |\n"
     "| Impression | Simple hepatic cyst |\n\n"
     "**Answer:** A"),
    ("xray_wrist", "claude",
     "Let me look at this carefully.\n\nThis is a lateral radiograph of the left wrist (the 'L' marker is "
     "on the film). The distal radius shows a transverse lucent line through the metaphysis with a break "
     "in the dorsal cortex, so there is a fracture. The distal fragment is tilted dorsally. The carpal bones "
     "are aligned with the radius and there is no dislocation of the lunate.\n"
     "\n**Answer:** yes (fracture of the distal radius)"),
    ("cxr_pneumothorax", "gemini", "**1. Modality & view:** PA chest radiograph.\n"
     "**2. Pleura:** visceral pleural line at the right apex; no lung markings beyond it.\n"
     "**3. Size:** small rim, mild.\n**4. Mediastinum:** central; no tension.\n"
     "**5. Lungs otherwise:** clear, no effusion, no consolidation.\n"
     "**Answer:** A"),
    ("ct_abd_normal", "claude", "Going organ by organ on this axial abdominal CT:\n"
     "\n- **Liver:** normal size, homogeneous, no focal lesion.\n"
     "- **Spleen:** normal size and density.\n"
     "- **Kidneys:** both normal in size, no hydronephrosis, no renal mass.\n"
     "- **Peritoneum:** no free fluid, no free air.\n"
     "- **Vessels:** the aorta is normal in calibre.\n"
     "\nThis is a normal study, so the answer is the option stating no abnormality.\n"
     "\n**Answer:** D"),
    ("mammo_mass", "medgemma",
     "Findings: Left mediolateral oblique mammogram. There is an irregular mass with spiculated margins. "
     "No suspicious calcifications. The skin is not thickened.\n"
     "Impression: Spiculated mass in the left breast; further assessment recommended."),
    ("ct_two_nodules", "claude", "Counting carefully on this axial chest CT:\n"
     "\n1. A nodule in the left lower lobe measuring about 8 mm.\n"
     "2. A second nodule in the left lung measuring about 6 mm.\n"
     "\nThe right lung is clear, there is no pleural effusion and no mediastinal mass. So there are two nodules, "
     "both in the left lung, both under 1 cm.\n"
     "\n**Answer:** B"),
    ("rspect_pe", "medgemma",
     "Findings: CT pulmonary angiography, axial contrast-enhanced images. Filling defects are present in "
     "the right lower lobe segmental and subsegmental arteries. The main pulmonary artery is patent. No right "
     "ventricular dilatation.\nImpression: Right-sided pulmonary embolism without right heart strain."),
    ("mrnet_acl", "claude",
     "Let me walk through this knee MRI.\n\n- **Sequence/plane:** sagittal T2-weighted, through the intercondylar "
     "notch.\n- **ACL:** the normal taut low-signal band is absent; fibres are discontinuous and lax, so "
     "a full-thickness ACL tear.\n- **Menisci:** the medial and lateral menisci are triangular with low signal "
     "and no surface-reaching line, so no meniscal tear.\n"
     "- **Other:** the extensor mechanism is intact on this slice.\n"
     "\n**Answer:** B (ACL tear, menisci intact)"),
    ("rsna_cspine", "claude", "Reviewing the sagittal CT of the cervical spine in bone window, level by level:\n"
     "\n- **C1:** anterior arch intact.\n- **C2:** a lucent fracture line crosses the base of the dens.\n"
     "- **C3 to C7:** vertebral body heights and alignment are preserved, no fracture.\n"
     "\nSo the single fracture is at C2, an odontoid fracture.\n"
     "\n**Answer:** A"),
    ("thyroid_tirads", "claude", "Working through ACR TI-RADS on this transverse thyroid ultrasound:\n"
     "\n- **Location:** right lobe.\n- **Composition:** solid (2 points).\n"
     "- **Echogenicity:** hypoechoic relative to the gland (2 points).\n"
     "- **Shape:** wider than tall (0 points).\n"
     "- **Margin:** smooth (0 points).\n- **Echogenic foci:** none (0 points).\n"
     "\nThat totals 4 points, TR4. At 18 mm it meets the size threshold for fine-needle aspiration.\n"
     "\n**Answer:** C"),
    ("dental_pano", "claude", "Looking at this panoramic radiograph tooth by tooth:\n"
     "\n- The lower left third molar (38) is impacted, angled mesially against 37.\n"
     "- The other third molars are either erupted or absent.\n"
     "- I don't see any carious radiolucencies in the crowns.\n"
     "- The periapical regions look healthy, with intact lamina dura.\n"
     "\nSo the only finding is the impacted 38.\n"
     "\n**Answer:** B"),
    ("camelyon_tile", "claude",
     "This is an H&E-stained tile from a lymph node. Most of the field is replaced by cohesive nests of large, "
     "pleomorphic epithelial cells with abundant cytoplasm and prominent nucleoli, which don't belong in "
     "a node. A rim of small mature lymphocytes remains at one edge. In a sentinel node this is metastatic "
     "carcinoma, in keeping with breast cancer.\n"
     "\n**Answer:** B (tumour present)"),
    ("rsna_ich_subdural", "claude", "Reviewing this axial non-contrast head CT:\n"
     "\n- **Extra-axial:** a crescent of hyperdense blood along the convexity that crosses the suture lines, "
     "an acute subdural haematoma.\n- **Epidural space:** no lentiform collection.\n"
     "- **Subarachnoid spaces:** the sulci and basal cisterns are free of blood.\n"
     "- **Ventricles:** no intraventricular blood.\n"
     "- **Parenchyma:** no intraparenchymal haemorrhage.\n"
     "\n**Answer:** subdural haemorrhage"),
]


def build() -> list[dict]:
    """The rows: the corpus's one ``build`` reads the markers, each row with this set's case (the corpus's
    own, or one of :data:`NEW_CASES` with its ``absent`` list, which the corpus's ``CASES`` lacks)."""
    return _src.build(ENTRIES, "n", hedged=True, cases=CASES)


if __name__ == "__main__":
    _src.write("rationale_heldout9.jsonl", build())
