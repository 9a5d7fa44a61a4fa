"""Source of ``rationale_heldout10.jsonl`` (issue 39, tenth set): a tenth fresh held-out set of hand-labelled
rationales, written blind in the heldout10 session of 2026-12-07 by a helper who read neither the checker
(``medr2.scoring``), its vocabulary (``medr2.vocab`` and its data files), its tests, ``docs/metrics.md`` nor the
rationale texts of held-outs 2 to 9. Read: ``rationale_corpus_source.py`` for the format, the cases, the labelling
rule and its ``build``/``write`` (printing that file whole also showed its ``HELDOUT`` list, the texts of the first
held-out set; none of its phrasings was reused), held-out 9's module docstring and its ``NEW_CASES``/``build`` code
for the mechanism, and only the ``NEW_CASES`` keys and source comments of held-outs 6 to 8, to pick sources none of
held-outs 6 to 9 used. Every label was fixed by hand and re-checked against the case's fields before anything was
scored; the checker was not run on these texts by their author (the lead measures them).

Labelling rule (the corpus's and held-out 9's): ``{{...}}`` marks every statement about this image that the case's
fields make false, plainly or with a strong hedge ("likely", "most consistent with", "in keeping with", "favour",
"考虑", "符合"); a statement the model retracts a moment later is still marked. ``[[...]]`` marks a *hedged
hallucination*: a finding or diagnosis the case does not have, put forward about this image with a weak hedge
("possible", "may", "might", "could", "cannot be excluded", "可能", "不除外"); it is not a gold ``contradicted`` span.
Restated options, differentials weighed and textbook knowledge are never marked. Sub-types and synonyms of a true
finding or diagnosis are supported and never marked.

Explicit absence. Each row's case carries ``meta.findings_complete``:

- the corpus's own cases (:data:`rationale_corpus_source.CASES`) carry it true (a finding not listed is absent) and
  are used as they are;
- :data:`NEW_CASES` are seven cases whose finding lists are incomplete (``findings_complete`` false), after public
  sources none of held-outs 6 to 9 used: a KiTS21 kidney-tumour CT (tumour in the left kidney, no cyst label), an
  ACDC cardiac cine MRI (class DCM, so not MINF/HCM), a BreakHis breast biopsy (class fibroadenoma, so none of the
  other seven BreakHis classes), a PI-CAI prostate bpMRI (csPCa lesion, case ISUP 3), a CQ500 head CT (the
  radiologists' read: EDH, left, calvarial fracture, mass effect; IPH, IVH, SDH, SAH, midline shift and chronic
  bleed 0), a VinDr-SpineXR lumbar radiograph (spondylolisthesis and osteophyte boxes; no box of vertebral
  collapse, surgical implant, foraminal stenosis or disc space narrowing) and an RFMiD fundus photograph (ODC 1,
  every other RFMiD disease column 0). There an invented finding that is not in ``absent`` cannot be decided and
  is left unmarked, hedged or not (gallstones, hydronephrosis, a pericardial effusion, benign prostatic
  hyperplasia, extraprostatic extension, seminal vesicle invasion, a PI-RADS score, a Meyerding grade, a pars
  defect, a scalp haematoma, global hypokinesis, glaucoma); one in ``absent`` or a sub-type of one (a simple renal
  cyst, an infarct scar, HCM, a phyllodes or tubular adenoma class, invasive ductal or mucinous carcinoma, a
  subdural or subarachnoid bleed, a haemorrhagic contusion, midline shift, a compression fracture, pedicle screws,
  disc narrowing, drusen, a tessellated or myopic fundus, papilloedema, a pale disc, cotton-wool spots) is marked,
  with ``[[...]]`` where weakly hedged. Modality, plane, view, sequence, phase, stain, region, organ, the
  listed findings' side, size and location, a denial of a listed finding, a normal-study claim on an abnormal case,
  the diagnosis and the grade are labelled as in the corpus.

Kinds held: laterality anywhere in a clause (the side after the finding, a side in a table cell, a JSON field, a
side marker, Chinese 左/右 before the organ, "both"/"bilateral", the viewer's right against the patient's left,
unmarked); counts in words and numerals, "single", "solitary", "a pair"; sizes in mm, cm and Chinese units, and
severity words (small, moderate-to-large, 少量); wrong modality, plane, view, sequence, contrast phase, window,
stain, region and organ; margins, echo and signal descriptors; grades (NPDR stage, Gleason/ISUP, severity);
invented findings in numbered lists, checklists, Markdown tables, JSON and IMPRESSION lines; normal-study claims
and denials of listed findings; the wrong sibling or the mimic; retracted statements; hedged hallucinations;
undecidable claims left unmarked; sub-types and synonyms of the truth (lobar pneumonia, oligodendroglioma, a Smith
fracture, clear-cell RCC, an extradural haematoma, an intracanalicular fibroadenoma, degenerative anterolisthesis,
glaucomatous cupping, prostate adenocarcinoma), supported. Styles: qwen3-thinking, gpt-5, gemini, deepseek-r1,
llava-med, markdown, chinese, claude, medgemma. The last 22 rows are long, claim-dense reports with nothing false
in them (one per case), so that false accusations weigh as in real output. Regenerate with
``python tests/data/rationale_heldout10_source.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import rationale_corpus_source as _src  # noqa: E402  (the corpus's cases and its one build/write)

_INCOMPLETE = {"findings_complete": False}

NEW_CASES: dict[str, dict] = {
    # KiTS21 (kidney and kidney-tumour segmentation challenge 2021): kidney, tumour and cyst regions are drawn on
    # every slice; this case has one tumour, in the left kidney (about 45 mm on this axial slice), and no cyst
    # region; clinical data: malignant, clear-cell RCC; nothing outside the kidneys is labelled
    "kits21_rcc": {"modality": "CT", "plane": "axial", "sequence": "contrast-enhanced", "body_region": "abdomen",
                   "structures": ["kidney"],
                   "findings": [{"label": "mass", "attributes": {"laterality": "left", "size_mm": 45}}],
                   "diagnosis": "renal cell carcinoma", "meta": _INCOMPLETE, "absent": ["renal cyst"]},
    # ACDC (Automated Cardiac Diagnosis Challenge): one class of five per patient (NOR, MINF, DCM, HCM, ARV); this
    # patient is DCM (LV dilated, EF < 40 %), so not MINF and not HCM; a short-axis cine SSFP slice, LV/RV/myocardium
    # masks only
    "acdc_dcm": {"modality": "MRI", "plane": "short-axis", "sequence": "cine SSFP", "body_region": "chest",
                 "structures": ["heart", "left ventricle", "right ventricle", "myocardium"],
                 "findings": [{"label": "left ventricular dilatation", "attributes": {}}],
                 "diagnosis": "dilated cardiomyopathy", "meta": _INCOMPLETE,
                 "absent": ["myocardial infarction", "hypertrophic cardiomyopathy"]},
    # BreakHis: H&E breast-biopsy images at 40x-400x (this one 100x), one class of eight per patient (adenosis,
    # fibroadenoma, phyllodes tumour, tubular adenoma; ductal, lobular, mucinous, papillary carcinoma); this one is
    # fibroadenoma, so the other seven are absent
    "breakhis_fibroadenoma": {"modality": "histopathology", "sequence": "H&E", "body_region": "breast",
                              "structures": [], "findings": [], "diagnosis": "fibroadenoma", "meta": _INCOMPLETE,
                              "absent": ["adenosis", "phyllodes tumour", "tubular adenoma", "ductal carcinoma",
                                         "lobular carcinoma", "mucinous carcinoma", "papillary carcinoma"]},
    # PI-CAI (prostate cancer AI challenge), public training marksheet: case_csPCa YES, case_ISUP 3 (lesion_GS 4+3);
    # the csPCa lesion mask lies in the left peripheral zone of this axial T2W slice; no other label (no PI-RADS,
    # no benign findings), so the absent list is empty
    "picai_cspca": {"modality": "MRI", "plane": "axial", "sequence": "T2-weighted", "body_region": "pelvis",
                    "structures": ["prostate"],
                    "findings": [{"label": "lesion", "attributes": {"laterality": "left",
                                                                    "location": "peripheral zone"}}],
                    "diagnosis": "prostate cancer", "severity": "ISUP grade 3", "meta": _INCOMPLETE, "absent": []},
    # CQ500 (qure.ai head CT), majority of the three readers: ICH 1, EDH 1, IPH 0, IVH 0, SDH 0, SAH 0,
    # BleedLocation-Left 1, BleedLocation-Right 0, ChronicBleed 0, Fracture 1, CalvarialFracture 1, MassEffect 1,
    # MidlineShift 0; nothing else of the head is read
    "cq500_edh": {"modality": "CT", "plane": "axial", "sequence": "non-contrast", "body_region": "head",
                  "structures": ["brain", "skull"],
                  "findings": [{"label": "epidural haemorrhage", "attributes": {"laterality": "left"}},
                               {"label": "fracture", "attributes": {"location": "calvarium"}},
                               {"label": "mass effect", "attributes": {}}],
                  "diagnosis": None, "meta": _INCOMPLETE,
                  "absent": ["intraparenchymal haemorrhage", "intraventricular haemorrhage", "subdural haemorrhage",
                             "subarachnoid haemorrhage", "midline shift", "chronic haemorrhage"]},
    # VinDr-SpineXR: boxes of seven lesion types (osteophytes, disc space narrowing, surgical implant, foraminal
    # stenosis, spondylolysthesis, vertebral collapse, other lesions) by one radiologist per image; this lateral
    # lumbar image has spondylolisthesis (L4) and osteophyte boxes only; "other lesions" leaves the rest undecided
    "vindr_spine_listhesis": {"modality": "X-ray", "plane": "lateral", "body_region": "lumbar spine",
                              "structures": ["vertebra"],
                              "findings": [{"label": "spondylolisthesis", "attributes": {"location": "L4"}},
                                           {"label": "osteophyte", "attributes": {}}],
                              "diagnosis": None, "meta": _INCOMPLETE,
                              "absent": ["vertebral collapse", "surgical implant", "foraminal stenosis",
                                         "disc space narrowing"]},
    # RFMiD (Retinal Fundus Multi-disease Image Dataset), one row of 46 binary columns: Disease_Risk 1, ODC (optic
    # disc cupping) 1, every other column 0 (those named below among them); no glaucoma column, no side
    "rfmid_cupping": {"modality": "fundus photography", "body_region": "eye",
                      "structures": ["optic disc", "macula"],
                      "findings": [{"label": "optic disc cupping", "attributes": {}}], "diagnosis": None,
                      "meta": _INCOMPLETE,
                      "absent": ["diabetic retinopathy", "age-related macular degeneration", "drusen", "media haze",
                                 "myopia", "tessellation", "branch retinal vein occlusion",
                                 "central retinal vein occlusion", "epiretinal membrane", "laser scars",
                                 "macular scar", "central serous retinopathy", "optic disc oedema",
                                 "optic disc pallor", "macular hole", "cotton wool spots", "retinitis pigmentosa",
                                 "haemorrhagic retinopathy", "vitreous haemorrhage"]},
}

CASES: dict[str, dict] = {**_src.CASES, **NEW_CASES}

# (case, style, text)
ENTRIES: list[tuple[str, str, str]] = [
    # ---- laterality anywhere in a clause
    ("cxr_left_effusion", "claude", "Looking at this PA chest film, the dominant abnormality is fluid in the pleural "
     "space. It sits on the {{right}}, blunting the costophrenic angle, and it is of moderate volume. The cardiac "
     "silhouette is not enlarged.\n\nAnswer: B"),
    ("cxr_left_effusion", "chinese", "后前位胸片：心影大小正常；{{右侧}}肋膈角消失，可见中等量胸腔积液。\n答案：A"),
    ("cxr_pneumothorax", "medgemma", "Findings: A thin visceral pleural line is seen with absent peripheral lung "
     "markings at the apex of the {{left}} hemithorax, consistent with a small pneumothorax. No mediastinal shift.\n"
     "Impression: Small pneumothorax."),
    ("mri_glioma", "gemini", "**Location:** the lesion is centred in the frontal white matter of the {{right}} "
     "cerebral hemisphere.\n**Signal:** hyperintense on this T2-weighted image.\n**Most likely diagnosis:** glioma.\n"
     "**Answer:** C"),
    ("mri_glioma", "llava-med", "The axial T2 MRI shows a hyperintense mass crossing the corpus callosum into "
     "{{both}} hemispheres, suggestive of a butterfly glioma."),
    ("mammo_mass", "gpt-5", "MLO projection. A spiculated mass projects over the upper breast; the lead marker "
     "places it in the {{right}} breast.\nFinal answer: C"),
    ("ct_two_nodules", "deepseek-r1", "<think>\nOkay, two nodules. Which lung? On axial images the patient's left is "
     "displayed on the viewer's right. Both nodules are on the viewer's right side, so they are in the patient's "
     "left lung. Sizes roughly 6 and 8 mm.\n</think>\nB"),
    ("ct_haemorrhage", "chinese", "头颅CT平扫轴位像：出血灶位于{{左}}侧颞顶叶，最大径约3厘米。\n答案：B"),
    ("xray_wrist", "llava-med", "The lateral radiograph of the {{right}} wrist demonstrates a fracture of the "
     "distal radius with dorsal angulation of the distal fragment."),
    ("mri_meningioma", "qwen3-thinking", "<think>\nCoronal T1 with contrast. An avidly enhancing extra-axial mass "
     "abuts the falx and bulges into the {{left}} hemisphere. The dural tail makes this a meningioma.\n</think>\nA"),
    ("cxr_pneumonia", "markdown", "| Field | Value |\n|---|---|\n| Projection | AP |\n| Opacity | consolidation |\n"
     "| Side | {{left}} |\n| Impression | pneumonia |\n\n**Answer: A**"),
    ("ct_nodule", "gemini", "```json\n{\"modality\": \"CT\", \"plane\": \"axial\", \"window\": \"lung\", "
     "\"lesion\": {\"type\": \"nodule\", \"side\": \"{{left}}\", \"size_mm\": 14, \"margin\": \"spiculated\"}}\n```\n"
     "**Answer:** B"),
    ("kits21_rcc", "claude", "This axial contrast-enhanced CT shows an exophytic, heterogeneously enhancing mass "
     "arising from the {{right}} kidney, about 4.5 cm across. The appearance is most in keeping with a renal cell "
     "carcinoma.\n\nAnswer: C"),
    ("picai_cspca", "gpt-5", "Axial T2-weighted prostate MRI: a homogeneous hypointense lesion in the peripheral "
     "zone on the {{right}} side, consistent with clinically significant cancer.\nFinal answer: B"),
    ("cq500_edh", "medgemma", "Non-contrast head CT demonstrates a biconvex hyperdense extra-axial collection over "
     "the {{right}} convexity with an overlying skull fracture. Findings are consistent with an acute epidural "
     "hematoma."),
    ("kits21_rcc", "gpt-5", "Contrast CT of the abdomen: {{bilateral}} solid renal masses, the left one about "
     "45 mm.\nFinal answer: D"),
    # ---- counts in words and numerals
    ("ct_two_nodules", "gpt-5", "Axial chest CT. I count {{three}} small pulmonary nodules, all in the left lung, "
     "the largest 8 mm.\nFinal answer: C"),
    ("ct_two_nodules", "chinese", "胸部CT轴位：左肺见2枚小结节，分别约6毫米和8毫米。\n答案：B"),
    ("ct_two_nodules", "medgemma", "There is a {{single}} 8 mm nodule in the left lower lobe. {{No additional "
     "nodules}} are seen."),
    ("ct_two_nodules", "markdown", "- Nodules: {{4}}\n- Side: left\n- Largest: 8 mm\n\nAnswer: D"),
    ("ct_two_nodules", "claude", "A pair of small left-lung nodules is visible, measuring roughly 0.6 and 0.8 cm. "
     "Neither is calcified.\n\nAnswer: B"),
    ("ct_nodule", "claude", "On this lung-window axial CT there are {{two}} spiculated nodules in the right upper "
     "lobe, the larger measuring 14 mm.\n\nAnswer: C"),
    ("ct_nodule", "qwen3-thinking", "<think>\nHow many lesions? Just one: a solitary spiculated nodule on the right, "
     "about 1.4 cm. A single lesion, so multiple metastases are less likely.\n</think>\nA"),
    ("ct_nodule", "chinese", "胸部CT肺窗：右肺上叶见{{三个}}结节，最大者约14毫米，边缘毛刺。\n答案：C"),
    # ---- sizes and units, severity words
    ("us_liver_cyst", "medgemma", "Ultrasound of the liver demonstrates a well-circumscribed anechoic cyst "
     "measuring {{9 mm}} with posterior acoustic enhancement."),
    ("us_liver_cyst", "chinese", "肝右叶见一无回声区，大小约{{8厘米}}，边界清，后方回声增强，考虑肝囊肿。\n答案：A"),
    ("ct_haemorrhage", "gpt-5", "Non-contrast axial head CT: right-sided intraparenchymal haematoma measuring "
     "{{0.9 cm}} in greatest dimension.\nFinal answer: A"),
    ("ct_nodule", "markdown", "| Measurement | Value |\n|---|---|\n| Long axis | {{32 mm}} |\n| Margin | spiculated |"
     "\n| Side | right |\n\nFinal answer: D"),
    ("kits21_rcc", "deepseek-r1", "<think>\nLet me measure the renal lesion... it spans about {{9 cm}} across. "
     "Wait, I read the wrong scale: it is about 4.5 cm. Left kidney, enhancing, solid. RCC.\n</think>\nB"),
    ("ct_two_nodules", "gemini", "**Sizes:** 0.6 cm and 0.8 cm.\n**Side:** left.\n**Answer:** B"),
    ("cxr_left_effusion", "gpt-5", "Frontal (PA) chest radiograph with a {{small}} left pleural effusion that only "
     "just blunts the angle.\nFinal answer: B"),
    ("cxr_pneumothorax", "gpt-5", "PA film: right pneumothorax, {{moderate-to-large}} in size.\nFinal answer: A"),
    ("cxr_pneumothorax", "chinese", "胸部正位片（PA）：右侧少量气胸，肺尖可见脏层胸膜线。\n答案：A"),
    ("ct_haemorrhage", "chinese", "头颅CT平扫：右侧脑实质{{少量}}出血。\n答案：C"),
    # ---- wrong modality, plane, view, sequence, phase, window, stain, region, organ
    ("cxr_normal", "claude", "This appears to be a {{lateral}} chest radiograph. The lungs are clear and there is no "
     "effusion. Normal study.\n\nAnswer: B"),
    ("mri_normal", "deepseek-r1", "<think>\nCSF is dark, so this is a {{T1-weighted}} image. Hmm, no: the cortex and "
     "white matter contrast plus bright periventricular tissue without bright CSF means FLAIR. Axial FLAIR then. "
     "Nothing abnormal.\n</think>\nD"),
    ("ct_nodule", "gpt-5", "Axial CT displayed in a {{soft-tissue window}}; a 14 mm spiculated right nodule.\n"
     "Final answer: B"),
    ("ct_abd_normal", "chinese", "{{冠状位}}腹部CT，肝、脾、双肾未见异常。\n答案：D"),
    ("mri_meningioma", "medgemma", "{{Sagittal}} {{T2-weighted}} MRI of the brain shows an extra-axial mass along "
     "the right convexity, consistent with meningioma."),
    ("fundus_dr", "llava-med", "This {{optical coherence tomography}} image shows hard exudates and microaneurysms, "
     "consistent with diabetic retinopathy."),
    ("us_liver_cyst", "gemini", "**Organ:** {{kidney}}.\n**Lesion:** anechoic simple cyst, 2.5 cm.\n**Answer:** C"),
    ("xray_wrist", "qwen3-thinking", "<think>\nThis is a lateral radiograph of the {{ankle}}. Hmm, no, those are the "
     "radius and the carpal bones, so it is the wrist. Left side. A fracture is present.\n</think>\nyes"),
    ("mammo_mass", "claude", "On this {{craniocaudal}} view of the left breast there is a mass with spiculated "
     "margins.\n\nAnswer: C"),
    ("acdc_dcm", "gemini", "**Sequence:** {{late gadolinium enhancement}}\n**Plane:** {{four-chamber}}\n"
     "**Finding:** dilated left ventricle with global hypokinesis\n**Diagnosis:** dilated cardiomyopathy\n"
     "**Answer:** B"),
    ("picai_cspca", "chinese", "前列腺MRI {{DWI}}序列轴位像，左侧外周带见局灶性病变，"
     "考虑临床显著性前列腺癌。\n答案：C"),
    ("breakhis_fibroadenoma", "medgemma", "This {{immunohistochemical}} stain of breast tissue shows a biphasic "
     "lesion with proliferating stroma compressing the ducts, consistent with fibroadenoma."),
    ("cq500_edh", "gpt-5", "Axial {{contrast-enhanced}} head CT: left-sided lentiform extra-axial haematoma with "
     "an overlying calvarial fracture.\nFinal answer: A"),
    ("vindr_spine_listhesis", "llava-med", "The {{AP}} radiograph of the lumbar spine shows anterior slippage of "
     "L4 on L5 with marginal osteophytes."),
    ("vindr_spine_listhesis", "chinese", "{{颈椎}}侧位X线片：椎体前缘骨赘形成，L4椎体向前滑移。\n答案：B"),
    ("rfmid_cupping", "deepseek-r1", "<think>\nThis looks like a {{fluorescein angiogram}}. No wait, there is no "
     "dye and the vessels are red on an orange background, so it is a colour fundus photograph. The cup "
     "is large relative to the disc.\n</think>\nC"),
    ("kits21_rcc", "markdown", "1. Modality: {{MRI}}\n2. Phase: post-contrast\n3. Organ: left kidney\n"
     "4. Lesion: solid mass, 45 mm\n5. Diagnosis: RCC\n\nAnswer: B"),
    ("kits21_rcc", "medgemma", "{{Unenhanced}} CT of the abdomen: a 4.5 cm solid mass in the left kidney, "
     "suspicious for renal cell carcinoma."),
    ("cxr_pneumonia", "llava-med", "The {{posteroanterior}} chest X-ray shows right lower lobe consolidation, "
     "consistent with pneumonia."),
    ("ct_haemorrhage", "markdown", "- Acquisition: CT, axial, {{post-contrast}}\n- Finding: right haemorrhage, "
     "30 mm\n- Severity: severe\n\nAnswer: B"),
    ("mri_glioma", "chinese", "颅脑MRI轴位{{FLAIR}}像示左额叶高信号肿块，考虑胶质瘤。\n答案：C"),
    ("ct_abd_normal", "llava-med", "This is a {{sagittal}} {{ultrasound}} image of the abdomen showing a normal "
     "liver and kidney."),
    ("breakhis_fibroadenoma", "gpt-5", "H&E section of {{lymph node}} tissue with a well-circumscribed biphasic "
     "lesion; fibroadenoma.\nFinal answer: A"),
    ("acdc_dcm", "claude", "This is a {{CT coronary angiogram}}; the left ventricle is markedly dilated.\n\n"
     "Answer: B"),
    # ---- descriptors and grades
    ("mammo_mass", "chinese", "左乳MLO位：见一{{边缘清晰}}的肿块。\n答案：A"),
    ("mri_glioma", "claude", "The lesion is {{hypointense}} on this T2-weighted axial slice and sits in the left "
     "hemisphere, which would fit a glioma.\n\nAnswer: C"),
    ("us_liver_cyst", "deepseek-r1", "<think>\nAny internal echoes? No, it is purely anechoic with posterior "
     "enhancement. A simple hepatic cyst, 2.5 cm.\n</think>\nA"),
    ("us_liver_cyst", "llava-med", "The ultrasound image shows a {{hyperechoic}} lesion in the liver, "
     "measuring approximately 2.5 cm."),
    ("ct_nodule", "medgemma", "CT chest (lung window): 14 mm right upper lobe nodule with {{smooth, well-defined}} "
     "margins and {{no spiculation}}."),
    ("fundus_dr", "medgemma", "Colour fundus photograph showing microaneurysms and hard exudates.\nImpression: "
     "{{proliferative}} diabetic retinopathy."),
    ("fundus_dr", "chinese", "眼底彩照：微动脉瘤、硬性渗出。诊断：糖尿病视网膜病变，{{轻度}}非增殖期。\n答案：A"),
    ("fundus_dr", "claude", "Scattered microaneurysms and hard exudates without venous beading or new vessels: "
     "moderate non-proliferative diabetic retinopathy.\n\nAnswer: C"),
    ("picai_cspca", "gemini", "**Lesion:** left peripheral zone, focal.\n**Grade:** {{Gleason 3+3 (ISUP 1)}}\n"
     "**Also:** possible extraprostatic extension.\n**Answer:** A"),
    ("picai_cspca", "deepseek-r1", "<think>\nThe marksheet-style question asks for the grade group. Gleason 4+3 is "
     "grade group 3, Gleason 3+4 is grade group 2. The answer options list 3+4... I'd say this lesion is "
     "{{Gleason 3+4}}, {{grade group 2}}.\n</think>\nB"),
    ("mri_meningioma", "gpt-5", "Coronal post-contrast T1: homogeneously enhancing, broad-based dural mass over "
     "the right convexity. WHO grade is not determinable from imaging.\nFinal answer: A"),
    ("ct_haemorrhage", "claude", "There is a right-hemispheric haemorrhage of about 3 cm; I would grade this as "
     "{{mild}}.\n\nAnswer: A"),
    # ---- invented findings in lists, tables, JSON, IMPRESSION lines
    ("cxr_normal", "markdown", "- [x] Lungs clear\n- [x] {{Cardiomegaly}}\n- [ ] Pleural effusion\n"
     "- [ ] Pneumothorax\n\nAnswer: C"),
    ("ct_abd_normal", "gemini", "```json\n{\"organs\": [\"liver\", \"spleen\", \"kidneys\"], \"findings\": "
     "[\"{{splenomegaly}}\", \"{{renal calculus}}\"], \"impression\": \"{{abnormal}}\"}\n```"),
    ("mri_normal", "medgemma", "FINDINGS: Normal grey-white matter differentiation. Ventricles normal in size.\n"
     "IMPRESSION: {{Chronic small-vessel ischaemic change}}."),
    ("cxr_pneumonia", "claude", "Findings, in order:\n1. Right lower zone consolidation with air bronchograms\n"
     "2. {{Small right pleural effusion}}\n3. Normal heart size\n\nMost likely pneumonia. Answer: B"),
    ("us_liver_cyst", "markdown", "| Structure | Finding |\n|---|---|\n| Liver | 25 mm anechoic cyst |\n"
     "| Gallbladder | {{gallstones}} |\n\nAnswer: A"),
    ("fundus_dr", "gpt-5", "Findings: microaneurysms; hard exudates; {{neovascularisation of the disc}}.\n"
     "Final answer: D"),
    ("ct_haemorrhage", "medgemma", "{\"modality\": \"CT\", \"finding\": \"intraparenchymal haemorrhage\", "
     "\"side\": \"right\", \"size_mm\": 30, \"additional\": [\"{{hydrocephalus}}\"]}"),
    ("mammo_mass", "gpt-5", "FINDINGS: Left breast, MLO: spiculated mass. {{Clustered pleomorphic "
     "microcalcifications}} nearby.\nIMPRESSION: highly suspicious.\nFinal answer: C"),
    ("xray_wrist", "claude", "Key findings:\n- Fracture of the distal radius, left\n- {{Dislocation of the "
     "radiocarpal joint}}\n\nAnswer: B"),
    ("kits21_rcc", "gemini", "| Kidney | Finding |\n|---|---|\n| Left | enhancing solid mass, 45 mm |\n"
     "| Right | {{simple cyst}} |\n\n**Answer:** B"),
    ("kits21_rcc", "llava-med", "The CT scan shows a mass in the left kidney and a few gallstones in the "
     "gallbladder. The mass is likely a renal cell carcinoma."),
    ("cq500_edh", "medgemma", "IMPRESSION:\n1. Acute left epidural haematoma with local mass effect.\n"
     "2. Calvarial fracture.\n3. {{Thin subdural component along the tentorium}}.\n"
     "4. {{Traumatic subarachnoid haemorrhage}} in the sylvian fissure."),
    ("vindr_spine_listhesis", "qwen3-thinking", "<think>\nLet me structure it: {\"view\": \"lateral\", \"level\": "
     "\"L4-L5\", \"findings\": [\"anterolisthesis\", \"osteophytes\", \"{{disc space narrowing}}\", "
     "\"{{pedicle screws}}\"]}\n</think>\nB"),
    ("rfmid_cupping", "gpt-5", "Findings:\n- Enlarged optic cup\n- {{Drusen}} at the macula\n- {{Tessellated}} "
     "background\nFinal answer: B"),
    ("breakhis_fibroadenoma", "markdown", "- Stain: H&E\n- Architecture: fibroepithelial, intracanalicular "
     "pattern\n- Diagnosis: {{phyllodes tumour}}\n\nAnswer: C"),
    ("acdc_dcm", "claude", "IMPRESSION: dilated left ventricle with thinned walls; {{inferolateral infarct "
     "scar}}.\n\nAnswer: C"),
    ("picai_cspca", "medgemma", "Axial T2WI: focal hypointense lesion in the left peripheral zone; the transition "
     "zone is enlarged, consistent with benign prostatic hyperplasia.\nImpression: clinically significant prostate "
     "cancer."),
    ("cxr_left_effusion", "markdown", "### Findings\n| # | Finding | Side |\n|---|---|---|\n| 1 | pleural effusion "
     "| left |\n| 2 | {{rib fracture}} | left |\n\n**Answer: B**"),
    ("ct_two_nodules", "gemini", "**Impression:** two left pulmonary nodules (6 and 8 mm); {{mediastinal "
     "lymphadenopathy}}.\n**Answer:** B"),
    # ---- normal-study claims and denials
    ("cxr_pneumothorax", "llava-med", "The chest radiograph is {{within normal limits}}. The heart and "
     "mediastinum are normal in contour."),
    ("mri_glioma", "chinese", "颅脑MRI{{未见明显异常}}。\n答案：D"),
    ("mammo_mass", "qwen3-thinking", "<think>\nLeft MLO. Scanning the fibroglandular tissue, {{I don't see any "
     "mass}} or distortion; {{the breast looks normal}}. Wait, the upper outer quadrant has a spiculated density. "
     "Yes, a spiculated mass.\n</think>\nC"),
    ("ct_abd_normal", "deepseek-r1", "<think>\nLiver homogeneous, no focal lesion. Spleen normal in size. Both "
     "kidneys enhance symmetrically, no hydronephrosis, no stones. No free fluid. Normal.\n</think>\nD"),
    ("cxr_normal", "chinese", "胸片未见气胸、积液及实变，心胸比正常，但{{右下肺可见小结节}}。\n答案：C"),
    ("fundus_dr", "claude", "The macula shows {{no hard exudates}}; only a few microaneurysms are present.\n\n"
     "Answer: B"),
    ("kits21_rcc", "gpt-5", "Both kidneys enhance normally with {{no focal renal mass}}; no hydronephrosis.\n"
     "Final answer: D"),
    ("breakhis_fibroadenoma", "chinese", "乳腺组织HE染色，间质与导管成分增生，"
     "{{未见肿瘤性病变}}，为{{正常乳腺组织}}。\n答案：D"),
    ("cq500_edh", "deepseek-r1", "<think>\nA lens-shaped bleed on the left with a fracture line above it. Is there "
     "midline shift? The septum pellucidum is midline, so no shift. Mass effect? The adjacent sulci are effaced, so "
     "yes, some local mass effect.\n</think>\nA"),
    ("cq500_edh", "chinese", "头颅CT平扫：左侧颞部梭形高密度影，考虑急性硬膜外血肿，"
     "伴颅骨骨折；{{无占位效应}}，中线居中。\n答案：B"),
    ("vindr_spine_listhesis", "claude", "Lateral lumbar radiograph. Vertebral alignment is {{normal}}, with "
     "{{no listhesis}}; small anterior osteophytes are present at L3 and L4.\n\nAnswer: A"),
    ("rfmid_cupping", "llava-med", "The fundus photograph shows a {{normal optic disc}} and a normal macula."),
    ("acdc_dcm", "medgemma", "Short-axis cine SSFP image. Biventricular size and systolic function are "
     "{{normal}}."),
    ("picai_cspca", "llava-med", "The MRI of the prostate shows a {{normal}} gland with {{no suspicious lesion}}."),
    ("ct_haemorrhage", "gpt-5", "Head CT {{without acute intracranial abnormality}}.\nFinal answer: D"),
    ("xray_wrist", "gemini", "**Cortex:** {{intact throughout}}; {{no fracture line}} is identified.\n**Answer:** A"),
    # ---- the wrong sibling or the mimic
    ("mri_glioma", "medgemma", "Findings favour an extra-axial {{meningioma}} along the left frontal convexity."),
    ("mri_meningioma", "claude", "I think the imaging favours a {{high-grade glioma}} rather than a meningioma, as "
     "the mass looks intra-axial.\n\nAnswer: B"),
    ("cxr_pneumonia", "deepseek-r1", "<think>\nConsolidation at the right base. Could this be atelectasis? No "
     "volume loss. Pneumonia versus aspiration... I'll go with right lower lobe pneumonia.\n</think>\nB"),
    ("kits21_rcc", "gpt-5", "Fat-containing left renal lesion, most consistent with {{angiomyolipoma}}.\n"
     "Final answer: A"),
    ("breakhis_fibroadenoma", "gemini", "**Architecture:** leaf-like stromal fronds with stromal hypercellularity."
     "\n**Diagnosis:** {{benign phyllodes tumour}}.\n**Answer:** B"),
    ("breakhis_fibroadenoma", "claude", "The field is dominated by closely packed small tubules with scant stroma; "
     "this pattern is that of a {{tubular adenoma}}.\n\nAnswer: D"),
    ("cq500_edh", "gpt-5", "Crescentic extra-axial collection on the left that crosses the sutures: acute "
     "{{subdural haematoma}}.\nFinal answer: C"),
    ("acdc_dcm", "chinese", "短轴电影序列：左室壁明显增厚，考虑{{肥厚型心肌病}}。\n答案：C"),
    ("rfmid_cupping", "claude", "The disc margins look blurred and elevated, which I read as {{papilloedema}}.\n\n"
     "Answer: D"),
    ("fundus_dr", "deepseek-r1", "<think>\nYellow deposits: drusen or exudates? They are waxy with sharp margins "
     "in a circinate pattern, so hard exudates. Plus red dots, microaneurysms. DR, moderate.\n</think>\nC"),
    ("vindr_spine_listhesis", "gemini", "**Finding:** {{anterior wedging of L4}}, an osteoporotic {{compression "
     "fracture}}.\n**Answer:** C"),
    ("picai_cspca", "gpt-5", "Wedge-shaped T2 hypointensity in the left peripheral zone, more in keeping with "
     "{{prostatitis}} than tumour.\nFinal answer: D"),
    ("ct_abd_normal", "medgemma", "Axial CT abdomen: the liver contains a {{hypervascular lesion}} most "
     "consistent with {{focal nodular hyperplasia}}."),
    ("mri_normal", "gemini", "**Finding:** {{periventricular ovoid lesions}} perpendicular to the ventricles.\n"
     "**Diagnosis:** {{multiple sclerosis}}.\n**Answer:** B"),
    # ---- hedged hallucinations
    ("cxr_left_effusion", "gpt-5", "Moderate left pleural effusion. There may be some [[underlying collapse]] of "
     "the left lower lobe.\nFinal answer: B"),
    ("cxr_normal", "medgemma", "Lungs are clear. A [[tiny apical pneumothorax]] cannot be excluded."),
    ("mri_normal", "chinese", "颅脑MRI FLAIR轴位像未见明确异常，[[不除外少许腔隙性梗死灶]]。\n答案：D"),
    ("ct_abd_normal", "claude", "Everything looks unremarkable, although a [[small hepatic cyst]] might be present "
     "near the dome.\n\nAnswer: D"),
    ("kits21_rcc", "qwen3-thinking", "<think>\nLeft renal mass, 4.5 cm, enhancing, so RCC. The right kidney "
     "possibly has a [[small cyst]] at the lower pole too.\n</think>\nB"),
    ("cq500_edh", "llava-med", "There is an epidural haematoma on the left side with a skull fracture. There could "
     "be some [[subarachnoid blood]] in the sulci."),
    ("rfmid_cupping", "medgemma", "Impression: increased cup-to-disc ratio; possible [[early drusen]] near the "
     "fovea."),
    ("vindr_spine_listhesis", "chinese", "腰椎侧位片：L4椎体向前滑脱，椎体缘骨质增生；"
     "[[L4/5椎间隙可能变窄]]。\n答案：B"),
    ("acdc_dcm", "deepseek-r1", "<think>\nDilated LV, thin walls. Maybe an [[old infarct]] explains the thin "
     "septal segment? Hard to say on cine. Overall the DCM pattern.\n</think>\nB"),
    ("breakhis_fibroadenoma", "qwen3-thinking", "<think>\nBiphasic, well circumscribed, pericanalicular stroma: "
     "fibroadenoma. A small focus of [[invasive ductal carcinoma]] might be present at the edge of the field.\n"
     "</think>\nA"),
    ("ct_nodule", "chinese", "右肺上叶结节，约14毫米，毛刺状；[[纵隔淋巴结可能肿大]]。\n答案：B"),
    ("mammo_mass", "deepseek-r1", "<think>\nLeft MLO, spiculated mass, upper breast. The axilla is partly included; "
     "there is possibly [[axillary lymphadenopathy]].\n</think>\nC"),
    ("ct_haemorrhage", "gemini", "**Main finding:** right intraparenchymal haemorrhage, ~3 cm, severe.\n"
     "**Also:** a possible [[skull fracture]].\n**Answer:** B"),
    ("picai_cspca", "claude", "The left peripheral-zone lesion is the index lesion. Seminal vesicle invasion might "
     "be present, but I cannot judge that on one slice.\n\nAnswer: B"),
    ("xray_wrist", "medgemma", "Lateral view of the left wrist: distal radial fracture. Possible [[perilunate "
     "dislocation]] as well."),
    ("fundus_dr", "gemini", "**Lesions:** microaneurysms, hard exudates.\n**Possible:** [[branch retinal vein "
     "occlusion]].\n**Answer:** C"),
    # ---- synonyms and sub-types of the truth (supported)
    ("cxr_pneumonia", "medgemma", "AP chest radiograph. Right lower lobe airspace opacity with air bronchograms, in "
     "keeping with lobar pneumonia."),
    ("mri_glioma", "qwen3-thinking", "<think>\nAxial T2. A left frontal hyperintense infiltrative lesion. It could "
     "be an oligodendroglioma, which is a glioma.\n</think>\nC"),
    ("xray_wrist", "chinese", "左腕关节侧位片：桡骨远端骨折，远折端向掌侧移位，符合Smith骨折。\n答案：B"),
    ("kits21_rcc", "chinese", "腹部增强CT轴位：左肾实性强化肿块，约4.5厘米，考虑透明细胞性肾细胞癌。\n答案：B"),
    ("cq500_edh", "claude", "Left-sided acute extradural haematoma with a fracture of the overlying calvarium and "
     "some local sulcal effacement. The midline is preserved.\n\nAnswer: A"),
    ("breakhis_fibroadenoma", "gpt-5", "H&E, breast: a benign fibroepithelial lesion with an intracanalicular "
     "growth pattern, i.e. an intracanalicular fibroadenoma.\nFinal answer: B"),
    ("acdc_dcm", "gpt-5", "Short-axis cine MRI: DCM, with eccentric remodelling of a dilated LV.\nFinal answer: B"),
    ("vindr_spine_listhesis", "medgemma", "Lateral lumbar spine: degenerative anterolisthesis of L4 on L5 with "
     "anterior spondylophytes."),
    ("rfmid_cupping", "chinese", "彩色眼底照相：视杯扩大，杯盘比增大，呈青光眼性视杯凹陷改变。\n答案：B"),
    ("picai_cspca", "qwen3-thinking", "<think>\nAxial T2W from a biparametric study. Left PZ lesion. This is "
     "adenocarcinoma of the prostate, ISUP grade group 3.\n</think>\nC"),
    ("cxr_pneumothorax", "claude", "There is a small right apical PTX; the rest of the right lung is expanded.\n\n"
     "Answer: A"),
    ("ct_haemorrhage", "qwen3-thinking", "<think>\nAxial non-contrast head CT. A large hyperdense intracerebral "
     "haematoma on the right, about 30 mm. Severe.\n</think>\nB"),
    ("us_liver_cyst", "claude", "Sonographically this is a benign simple hepatic cyst: anechoic, thin-walled, with "
     "through transmission, 25 mm.\n\nAnswer: A"),
    ("cxr_left_effusion", "medgemma", "PA chest radiograph: moderate left-sided pleural fluid with a meniscus. "
     "Impression: left hydrothorax."),
    # ---- retractions, restated options, undecidable claims left unmarked
    ("cq500_edh", "qwen3-thinking", "<think>\nThe hyperdense collection is crescent-shaped, so a {{subdural "
     "haematoma}}... no, it is biconvex and stops at the sutures: epidural, on the left. Fracture above it. Some mass "
     "effect.\n</think>\nA"),
    ("vindr_spine_listhesis", "gpt-5", "Lateral lumbar radiograph: grade 1 (Meyerding) anterolisthesis of L4 on L5 "
     "with a possible pars defect; osteophytes at several levels.\nFinal answer: B"),
    ("picai_cspca", "markdown", "- Sequence: T2W\n- Plane: {{coronal}}\n- Lesion: left PZ\n- PI-RADS: 5\n"
     "- ISUP: 3\n\nAnswer: C"),
    ("rfmid_cupping", "gemini", "**Disc:** vertical cup-to-disc ratio about 0.8 with inferior rim thinning.\n"
     "**Impression:** glaucomatous optic neuropathy; glaucoma likely.\n**Answer:** A"),
    ("kits21_rcc", "qwen3-thinking", "<think>\nOptions: A angiomyolipoma, B renal cell carcinoma, C oncocytoma, "
     "D simple cyst. An AML needs macroscopic fat; a simple cyst would be water density. The left renal mass "
     "enhances and is 45 mm. B.\n</think>\nB"),
    ("acdc_dcm", "qwen3-thinking", "<think>\nOptions: normal, DCM, HCM, previous MI. The LV is large with thin "
     "walls; in HCM the walls would be thick. DCM.\n</think>\nB"),
    ("breakhis_fibroadenoma", "deepseek-r1", "<think>\nBenign or malignant? No atypia, no invasion, so benign. "
     "Among the benign classes (adenosis, fibroadenoma, phyllodes, tubular adenoma) the stroma is not overgrown, so "
     "not phyllodes. Fibroadenoma.\n</think>\nB"),
    ("rfmid_cupping", "qwen3-thinking", "<think>\nThe disc looks tilted with a peripapillary crescent, a "
     "{{myopic}} fundus. The cup is enlarged.\n</think>\nC"),
    ("rfmid_cupping", "markdown", "| Feature | Present |\n|---|---|\n| Optic disc cupping | yes |\n"
     "| Disc pallor | {{yes}} |\n| Haemorrhages | no |\n\nAnswer: B"),
    ("cq500_edh", "markdown", "```json\n{\"haemorrhage\": \"epidural\", \"side\": \"left\", \"fracture\": true, "
     "\"midline_shift_mm\": {{7}}}\n```\nAnswer: A"),
    ("vindr_spine_listhesis", "deepseek-r1", "<think>\nLateral lumbar film. There is metal: {{pedicle screws at "
     "L4-L5}}. Hmm, no, that is overlapping bowel gas; no hardware. Anterolisthesis of L4 on L5, osteophytes.\n"
     "</think>\nB"),
    ("picai_cspca", "chinese", "前列腺MRI T2WI轴位：{{右侧}}外周带低信号病灶，考虑前列腺癌，"
     "Gleason评分4+3=7分。\n答案：B"),
    ("kits21_rcc", "medgemma", "IMPRESSION: 4.5 cm enhancing left renal mass; no renal vein involvement; mild "
     "left hydronephrosis."),
    ("acdc_dcm", "llava-med", "The cardiac MRI shows a dilated left ventricle and a small pericardial effusion."),
    ("breakhis_fibroadenoma", "llava-med", "The histopathology image shows {{mucinous carcinoma}} with pools of "
     "extracellular mucin."),
    ("cq500_edh", "gemini", "**Bleed type:** epidural (lentiform), left.\n**Bone:** calvarial fracture.\n"
     "**Shift:** {{5 mm rightward midline shift}}.\n**Answer:** A"),
    ("cq500_edh", "llava-med", "The CT shows a left epidural haematoma, a skull fracture and a scalp haematoma, with "
     "a {{haemorrhagic contusion}} in the left temporal lobe."),
    ("cxr_normal", "qwen3-thinking", "<think>\nThis is a radiograph of the {{abdomen}}... no, the lungs and the "
     "heart are in view, so a chest film. PA. Clear lungs. Normal.\n</think>\nB"),
    ("mri_normal", "gpt-5", "{{Non-contrast CT}} of the head: no acute abnormality.\nFinal answer: D"),
    ("mammo_mass", "medgemma", "{{Breast ultrasound}}: irregular spiculated mass in the left breast."),
    ("us_liver_cyst", "qwen3-thinking", "<think>\nCyst or haemangioma? A haemangioma is usually hyperechoic. This "
     "one is anechoic, so a cyst, about 25 mm.\n</think>\nA"),
    ("cxr_pneumonia", "chinese", "床旁胸片（AP位）：{{双}}下肺实变，考虑肺炎。\n答案：B"),
    ("rfmid_cupping", "gpt-5", "Fundus photo with an enlarged cup and {{cotton-wool spots}} above the disc... "
     "no, those spots were light reflections; only the cupping is real.\nFinal answer: A"),
    ("vindr_spine_listhesis", "markdown", "1. View: lateral\n2. Level: {{L2}} slipped on L3\n3. Osteophytes: yes\n"
     "4. Hardware: none\n\nAnswer: C"),
    ("picai_cspca", "deepseek-r1", "<think>\nWhich zone? The lesion is in {{the inner gland}}, so the "
     "{{transition zone}}, left side. Probably cancer.\n</think>\nB"),
    ("breakhis_fibroadenoma", "chinese", "乳腺穿刺HE染色：见浸润性癌巢，考虑{{浸润性导管癌}}。\n答案：C"),
    # ---- long, claim-dense reports with nothing false in them (one per case)
    ("cxr_left_effusion", "claude", "Let me work through this systematically.\n\nTechnique: a PA chest radiograph, "
     "adequately inspired and not rotated.\nAirway and mediastinum: the trachea is central and the mediastinal "
     "contour is normal.\nHeart: the cardiothoracic ratio is within normal limits, so no cardiomegaly.\nLungs: the "
     "right lung is clear and the right costophrenic angle is sharp. On the left there is a homogeneous basal "
     "opacity with a concave upper meniscus that obliterates the left costophrenic angle and the left "
     "hemidiaphragm: a moderate left pleural effusion.\nPleura: no pneumothorax on either side.\nBones: no rib "
     "fracture is seen.\n\nSummary: moderate left-sided pleural effusion on a PA chest X-ray, with no consolidation, "
     "no pneumothorax and a normal heart size.\n\nAnswer: B"),
    ("cxr_normal", "gpt-5", "Step-by-step read:\n1. Study: PA chest radiograph, erect, good inspiration.\n"
     "2. Lines and tubes: none.\n3. Airway: trachea midline.\n4. Lungs: normal vascular markings; no consolidation, "
     "no nodule or mass, no interstitial change.\n5. Pleura: no effusion, costophrenic angles sharp on both sides, "
     "no pneumothorax.\n6. Heart and mediastinum: normal cardiac size and contour; hila normal.\n7. Diaphragm: "
     "normal position, no free air beneath it.\n8. Bones: no fracture.\nImpression: normal chest radiograph.\n"
     "Final answer: B"),
    ("cxr_pneumonia", "medgemma", "FINDINGS:\nTechnique: AP chest radiograph (portable).\nLungs: Dense airspace "
     "consolidation in the right lower zone with air bronchograms; the right heart border stays visible, which "
     "places it in the right lower lobe. The left lung is clear.\nPleura: No pleural effusion. No pneumothorax.\n"
     "Heart: Normal cardiac size for an AP projection.\nMediastinum: Not widened.\nIMPRESSION:\nRight lower lobe "
     "consolidation in keeping with pneumonia. No effusion or pneumothorax."),
    ("ct_nodule", "qwen3-thinking", "<think>\nLet me be careful. The image is an axial CT slice through the chest "
     "in lung window: the parenchyma is grey, the vessels are bright and the mediastinum is washed out. There is one "
     "nodule, in the right lung. I measure roughly 14 mm along its long axis. Its margin is spiculated, with fine "
     "strands radiating into the surrounding lung. No second nodule on this slice. The left lung is clear. No "
     "pleural effusion, no pneumothorax, no consolidation. So: a solitary 14 mm spiculated right lung nodule on "
     "axial lung-window CT. The question asks for the margin; the options are circumscribed, lobulated, spiculated "
     "and ground-glass. Spiculated is C.\n</think>\nFinal answer: C"),
    ("mri_glioma", "gemini", "**1. Acquisition.** Axial MRI of the brain, T2-weighted (CSF is bright).\n"
     "**2. Lesion.** A single intra-axial mass in the left cerebral hemisphere, hyperintense on T2, with ill-defined "
     "infiltrative borders.\n**3. Elsewhere.** The right hemisphere is normal. No hydrocephalus. No extra-axial "
     "collection.\n**4. Differential.** A meningioma is extra-axial and dural-based, which this is not; metastases "
     "are usually multiple and well circumscribed; an abscess would show a rim.\n**5. Conclusion.** Most consistent "
     "with a left-sided glioma.\n**Answer:** C"),
    ("mri_meningioma", "deepseek-r1", "<think>\nAlright, the sequence first: T1-weighted after gadolinium, since the "
     "dura and choroid plexus enhance and CSF is dark. The plane is coronal: I see both temporal lobes and the "
     "lateral ventricles cut from top to bottom. There is a right-sided, extra-axial, homogeneously enhancing mass "
     "with a broad dural base and a dural tail, with a CSF cleft between it and the brain. The left hemisphere is "
     "normal. So a meningioma. Could it be a glioma? No, a glioma is intra-axial. A dural metastasis is possible in "
     "theory, but a single smooth dural-based mass with a tail is classic for meningioma.\n</think>\nFinal answer: A"),
    ("mri_normal", "claude", "Here is my reading of this axial FLAIR MRI of the brain.\n\n- The ventricles and "
     "sulci are normal in size and symmetric.\n- No midline shift.\n- Grey-white matter differentiation is "
     "preserved.\n- There is no abnormal FLAIR hyperintensity in the periventricular or subcortical white matter: "
     "no demyelinating plaques, no small-vessel change.\n- No mass, no extra-axial collection, no haemorrhage, no "
     "infarct.\n\nOverall: a normal brain MRI.\n\nAnswer: D"),
    ("ct_haemorrhage", "llava-med", "The image is a non-contrast axial CT scan of the head. There is a large "
     "hyperdense area in the right cerebral hemisphere, measuring about 3 cm, which represents an acute "
     "intraparenchymal hemorrhage. The hemorrhage is severe. The left hemisphere appears normal, there is no "
     "evidence of a skull fracture, and the ventricles are not dilated."),
    ("fundus_dr", "chinese", "彩色眼底照相分析：\n1. 视盘：边界清晰，色泽正常，杯盘比正常。\n"
     "2. 黄斑区：可见多个黄色硬性渗出，部分呈环形排列。\n3. 视网膜：散在多个微动脉瘤（红色小点）。\n"
     "4. 未见新生血管，未见玻璃体积血，未见视网膜前出血。\n"
     "5. 未见玻璃膜疣。\n诊断：中度非增殖性糖尿病视网膜病变。\n答案：C"),
    ("us_liver_cyst", "medgemma", "ULTRASOUND LIVER\nFindings: Within the liver there is a round, "
     "well-circumscribed, thin-walled anechoic lesion measuring approximately 25 mm (2.5 cm). It shows posterior "
     "acoustic enhancement and has no internal echoes, septations or solid component. The surrounding hepatic "
     "parenchyma has a normal echotexture. No biliary dilatation. No free fluid.\nImpression: Simple hepatic cyst, "
     "2.5 cm."),
    ("xray_wrist", "qwen3-thinking", "<think>\nFirst, which view? The radius, ulna and carpal bones are "
     "superimposed with the hand in profile, so a lateral projection. Which side? The marker says L, so the left "
     "wrist. Bones: a transverse fracture line crosses the distal radius with a cortical break. The carpal "
     "alignment is kept: the lunate sits in the radial fossa and the capitate in the lunate, so no dislocation. The "
     "ulna is intact. So a left distal radius fracture on a lateral radiograph. The question is whether there is a "
     "fracture: yes.\n</think>\nyes"),
    ("cxr_pneumothorax", "gemini", "**Technique:** PA erect chest radiograph.\n**Pleura:** a thin visceral pleural "
     "line is visible at the right apex with no lung markings beyond it; the rim of air is narrow, so a small (mild) "
     "right pneumothorax. No pneumothorax on the left.\n**Mediastinum:** central, no shift, so no tension.\n"
     "**Lungs:** no consolidation, no effusion.\n**Heart:** normal size.\n**Impression:** small right-sided "
     "pneumothorax.\n**Answer:** A"),
    ("ct_abd_normal", "deepseek-r1", "<think>\nThis is an axial CT of the abdomen with the liver, spleen and both "
     "kidneys in the slice. Liver: normal size, homogeneous attenuation, no focal lesion, no biliary dilatation. "
     "Spleen: normal size, homogeneous. Kidneys: both normal in size, no mass, no hydronephrosis, no calculus. No "
     "free fluid, no free air, no lymphadenopathy. The aorta is of normal calibre. Everything is normal, so the "
     "answer is the 'no abnormality' option.\n</think>\nFinal answer: D"),
    ("mammo_mass", "claude", "Reading this as a screening radiologist would:\n\n- View and side: a mediolateral "
     "oblique (MLO) view of the left breast, with the pectoral muscle shown down to the nipple level.\n- Lesion: a "
     "mass in the upper breast with spiculated margins; no other mass is seen.\n- Calcifications: none visible.\n"
     "- Skin and nipple: no skin thickening, no nipple retraction.\n- Axilla: no enlarged lymph nodes in the "
     "included axilla.\n\nA spiculated margin is a highly suspicious feature.\n\nAnswer: C"),
    ("ct_two_nodules", "markdown", "## Read\n| Item | Finding |\n|---|---|\n| Modality | CT |\n| Plane | axial |\n"
     "| Region | chest |\n| Nodule count | 2 |\n| Side | left lung |\n| Nodule 1 | 6 mm |\n| Nodule 2 | 8 mm |\n"
     "| Right lung | clear |\n| Pleura | no effusion, no pneumothorax |\n| Mediastinum | no lymphadenopathy |\n\n"
     "**Impression:** two small left pulmonary nodules (6 and 8 mm) on axial chest CT.\n\n**Answer: B**"),
    ("kits21_rcc", "claude", "Here's how I read this axial contrast-enhanced CT of the abdomen.\n\nKidneys: the "
     "left kidney contains a solid, heterogeneously enhancing mass, roughly 45 mm across and partly exophytic. It "
     "enhances, so it is not a simple cyst, and I see no macroscopic fat in it, which argues against an "
     "angiomyolipoma. The right kidney enhances normally, with no mass and no cyst.\nOther organs: the liver and "
     "spleen on this slice are unremarkable.\n\nImpression: a 4.5 cm left renal mass, most in keeping with a renal "
     "cell carcinoma; the clear-cell subtype is the commonest.\n\nAnswer: B"),
    ("acdc_dcm", "gemini", "**Acquisition:** cardiac MRI, cine balanced SSFP, short-axis slice at mid-ventricular "
     "level (bright blood pool).\n**Left ventricle:** the cavity is markedly dilated and the myocardium is uniformly "
     "thin; the wall is not thickened anywhere, which argues against hypertrophic cardiomyopathy.\n**Pattern:** no "
     "regional thinning in one coronary territory to suggest an old infarct.\n**Diagnosis:** dilated "
     "cardiomyopathy (DCM).\n**Answer:** B"),
    ("breakhis_fibroadenoma", "gpt-5", "Assessment of this H&E-stained breast biopsy image:\n1. Architecture: a "
     "well-circumscribed biphasic lesion made of glands and stroma.\n2. Epithelium: ducts lined by two cell layers "
     "(luminal and myoepithelial), compressed into slit-like, curved channels.\n3. Stroma: loose and evenly "
     "cellular, without atypia, mitoses or stromal overgrowth.\n4. No leaf-like fronds, so not a phyllodes tumour; "
     "no infiltrating nests, mucin pools or papillary fronds, so no carcinoma.\nDiagnosis: fibroadenoma (a benign "
     "fibroepithelial lesion), intracanalicular pattern.\nFinal answer: B"),
    ("picai_cspca", "medgemma", "PROSTATE MRI (biparametric), axial T2-weighted image.\nFINDINGS: There is a focal, "
     "homogeneous, moderately hypointense lenticular lesion in the left peripheral zone. The right peripheral zone "
     "shows normal high T2 signal. The capsule next to the lesion is intact on this slice.\nIMPRESSION: Left "
     "peripheral-zone lesion in keeping with clinically significant prostate cancer (prostate adenocarcinoma), ISUP "
     "grade group 3, Gleason 4+3=7."),
    ("cq500_edh", "chinese", "头颅CT平扫轴位分析：\n"
     "1. 左侧颞顶部颅骨内板下见双凸透镜形高密度影，边界清楚，考虑急性硬膜外血肿。\n"
     "2. 其上方颅骨见骨折线（颅盖骨骨折）。\n3. 邻近脑沟变浅，局部占位效应。\n"
     "4. 中线结构居中，无中线移位。\n"
     "5. 未见硬膜下血肿、蛛网膜下腔出血、脑室内出血及脑实质出血。\n6. 未见慢性出血。\n"
     "结论：左侧急性硬膜外血肿伴颅骨骨折。\n答案：A"),
    ("vindr_spine_listhesis", "qwen3-thinking", "<think>\nOkay, a lateral radiograph of the lumbar spine, L1 to "
     "S1 in view. Alignment: L4 is displaced forwards on L5, a degenerative anterolisthesis. Vertebral bodies: "
     "heights preserved, no wedging or collapse, no fracture. Disc spaces: preserved, no narrowing. Anterior "
     "osteophytes at several levels. No surgical hardware. The foramina look patent on this projection. So: "
     "spondylolisthesis at L4 with osteophytes.\n</think>\nFinal answer: B"),
    ("rfmid_cupping", "gpt-5", "Structured fundus read:\n- Image: colour fundus photograph of the posterior pole, "
     "disc and macula in view.\n- Optic disc: the cup is enlarged (increased cup-to-disc ratio), i.e. optic disc "
     "cupping; the disc margins are sharp, with no swelling and no pallor.\n- Macula: normal foveal reflex; no "
     "drusen, no exudates, no haemorrhage, no hole.\n- Vessels: normal calibre, no occlusion, no cotton-wool spots."
     "\n- Background: no tessellation, no laser scars; the media are clear.\nImpression: optic disc cupping, "
     "otherwise a normal fundus; a glaucoma work-up is advised.\nFinal answer: B"),
]


def build() -> list[dict]:
    """The rows: the corpus's one ``build`` reads the markers, each row with this set's case (the corpus's
    own, or one of :data:`NEW_CASES` with its ``absent`` list, which the corpus's ``CASES`` lacks)."""
    return _src.build(ENTRIES, "t", hedged=True, cases=CASES)


if __name__ == "__main__":
    _src.write("rationale_heldout10.jsonl", build())
