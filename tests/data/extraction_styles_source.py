"""Source of ``extraction_corpus_styles.jsonl`` (issue 42): answer phrasings written from the output styles that
model families document or show in their model cards and papers (Qwen2.5/3-VL and their thinking variants,
InternVL3, Gemini 2.5, GPT-4o/GPT-5 Markdown, Claude, Llama 3.2 Vision, LLaVA/LLaVA-Med, MedGemma,
DeepSeek-R1-style reasoning, Kimi-VL, GLM-4.1V/4.5V, MiniCPM-V, Pixtral, Phi-4, Gemma 3, tool-using agents
("thinking with images") and answers in other languages), each with the answer a careful reader extracts,
written by hand per template (``None``: no answer is committed to; never a guess). Each template is instantiated
on a few items. Regenerate with ``python tests/data/extraction_styles_source.py`` (writes the JSONL next to this
file); ``tests/test_score_extract.py`` reads every line like the hand corpus.

Template fields: ``{L}`` the intended answer letter, ``{T}`` its option text, ``{O}`` / ``{OT}`` another option's
letter / text, ``{W}`` a short rationale, ``{Lf}`` the letter in full-width form. The expected value is ``"L"``
(the intended letter), ``"O"`` (the other one) or ``None``.
"""

from __future__ import annotations

import json
from pathlib import Path

ITEMS = (
    (["CT", "MRI", "X-ray", "Ultrasound"], 1, 0, "the T2 hyperintense CSF and high soft-tissue contrast"),
    (["Pneumonia", "Pleural effusion", "Pneumothorax", "Atelectasis"], 1, 2, "the blunted costophrenic angle"),
    (["Glioma", "Meningioma", "Metastasis", "Abscess"], 1, 0, "the dural tail of an extra-axial mass"),
    (["Axial", "Coronal", "Sagittal"], 2, 0, "the midline structures shown in profile"),
)

# (family, template, expected: "L" / "O" / None)
MCQ: tuple[tuple[str, str, str | None], ...] = (
    # Qwen2.5-VL / Qwen3-VL instruct: terse letters, "The answer is", Chinese when asked in Chinese
    ("qwen-vl", "{L}", "L"),
    ("qwen-vl", "{L}. {T}", "L"),
    ("qwen-vl", "The answer is {L}.", "L"),
    ("qwen-vl", "答案：{L}", "L"),
    ("qwen-vl", "答案是 {L}. {T}", "L"),
    ("qwen-vl", "根据{W}，正确答案为{L}。", "L"),
    ("qwen3-vl-thinking", "<think>\nThe image shows {W}. {O} would not show this.\n</think>\n\n{L}", "L"),
    ("qwen3-vl-thinking", "<think>\nHmm, {O}? No. The finding is {W}.\n</think>\n\nThe answer is {L}. {T}", "L"),
    ("qwen3-vl-thinking", "<think>\nLet me check {O} first\n</think>\n\n**{L}**", "L"),
    # InternVL3
    ("internvl3", "{L}. {T}", "L"),
    ("internvl3", "The correct answer is {L}. {T}.", "L"),
    ("internvl3", "Answer: {L}", "L"),
    # Gemini 2.5
    ("gemini-2.5", "**Answer:** {L}", "L"),
    ("gemini-2.5", "The final answer is **{L}**.", "L"),
    ("gemini-2.5", "Based on {W}, the most likely answer is **{L}. {T}**.", "L"),
    ("gemini-2.5", "**Reasoning:**\n* {OT} is unlikely here.\n* {W} fits {T}.\n\n**Final Answer:** ({L})", "L"),
    ("gemini-2.5", "The final answer is $\\boxed{{{L}}}$", "L"),
    # GPT-4o / GPT-5 Markdown
    ("gpt-4o", "**Answer: {L} — {T}**\n\n**Why:** {W}.", "L"),
    ("gpt-4o", "### Final answer\n**{L}) {T}**\n\n### Rationale\n- {W}\n- not {OT}", "L"),
    ("gpt-4o", "**{L}. {T}**\n\n{W} is characteristic; {OT} would look different.", "L"),
    ("gpt-5", "Answer: **{L}**\n\nKey clues:\n- {W}\n- {O} is ruled out.", "L"),
    ("gpt-5", "Short answer: {L} ({T}).", "L"),
    ("gpt-5", "**Most likely: {L}. {T}**", "L"),
    # Claude
    ("claude", "Looking at this image, I can see {W}.\n\n**{L}) {T}**", "L"),
    ("claude", "The answer is **{L}. {T}**.\n\n{OT} is less likely because the pattern differs.", "L"),
    ("claude", "<answer>{L}</answer>", "L"),
    ("claude", "I'll go with {L}, since {W} points that way.", "L"),
    ("claude", "Based on {W}, this is {L}.", "L"),
    # Llama 3.2 Vision
    ("llama-3.2-vision", "The correct answer is: {L}) {T}", "L"),
    ("llama-3.2-vision", "**Step 1: Look at the image.** It shows {W}.\n\n**Step 2: Compare the options.** {O} does "
                         "not "
                         "fit.\n\n**Answer:** {L}", "L"),
    ("llama-3.2-vision", "The final answer is: $\\boxed{{{L}}}$", "L"),
    # LLaVA / LLaVA-Med: prose that names the option's text
    ("llava-med", "The image shows {W}, consistent with {T}.", "L"),
    ("llava-med", "This image shows {W}. The finding is {T}.", "L"),
    # MedGemma
    ("medgemma", "**Answer: {L}. {T}**\n\n**Rationale:** {W}.", "L"),
    ("medgemma", "**Answer:** {L}\n**Explanation:** {W}; {OT} is not supported.", "L"),
    # DeepSeek-R1-style reasoning models
    ("r1-style", "<think>\nOkay, the options... {O}? Probably not. {W}.\n</think>\n\n**Final Answer**\n"
                 "\\boxed{{{L}}}", "L"),
    ("r1-style", "<think>\nWait, maybe {O}.\n</think>\nThe answer is \\boxed{{\\text{{{L}}}}}.", "L"),
    ("r1-style", "reasoning about {O} and {L}...\n</think>\n\n{L}", "L"),
    # Kimi-VL
    ("kimi-vl-thinking", "◁think▷The image has {W}. {O} is possible too.◁/think▷**{L}**", "L"),
    ("kimi-vl", "{L}", "L"),
    # GLM-4.1V / 4.5V: <answer> with the box token around the final answer
    ("glm-4.5v", "<think>{W}. Not {O}.</think><answer><|begin_of_box|>{L}<|end_of_box|></answer>", "L"),
    ("glm-4.5v", "<|begin_of_box|>{L}<|end_of_box|>", "L"),
    # MiniCPM-V, Pixtral, Phi-4, Gemma 3
    ("minicpm-v", "Answer: {L}", "L"),
    ("pixtral", "**{L}) {T}**\n\nThe image shows {W}.", "L"),
    ("phi-4-mm", "The answer is {L}.", "L"),
    ("gemma-3", "The answer is **({L}) {T}**.", "L"),
    ("gemma-3", "**{L}) {T}**", "L"),
    # self-correction: the last final statement wins (and the change is noted)
    ("gpt-5", "Answer: {O}\n\nWait — on reflection, {W} fits better. Final answer: {L}", "L"),
    ("claude", "My initial answer is {O}. Actually, the answer is {L}.", "L"),
    ("qwen3-vl-thinking", "The answer is {O}... no. The answer is {L}.", "L"),
    # tool-using agents: a zoom-in box is not the answer
    ("agent", '<tool_call>\n{{"name": "zoom_in", "arguments": {{"bbox_2d": [120, 80, 360, 300], "label": "{O}"}}}}\n'
              '</tool_call>\nAfter zooming in, the answer is {L}.', "L"),
    ("agent", '{{"name": "crop_image", "arguments": {{"box": [0, 0, 200, 200]}}}}\nThe crop shows {W}. Answer: {L}',
     "L"),
    ("agent", '{{"name": "submit_answer", "arguments": {{"answer": "{L}"}}}}', "L"),
    ("agent", '<tool_call>{{"name": "final_answer", "arguments": {{"choice": "{L}"}}}}</tool_call>', "L"),
    # other languages (models answer in the prompt's language)
    ("qwen-vl-ja", "答えは {L} です。", "L"),
    ("qwen-vl-ja", "正解は「{L}」です。{W}。", "L"),
    ("gemini-ja", "最終回答: {Lf}", "L"),
    ("qwen-vl-ko", "정답은 {L}입니다.", "L"),
    ("gemini-ko", "최종 답: ({L})", "L"),
    ("gpt-4o-es", "La respuesta correcta es la {L}.", "L"),
    ("gpt-4o-es", "**Respuesta final:** {L}. {T}", "L"),
    ("claude-fr", "La bonne réponse est **{L}**.", "L"),
    ("gemini-fr", "Réponse finale : {L}", "L"),
    ("gpt-4o-de", "Die richtige Antwort lautet {L}.", "L"),
    ("claude-de", "Die Antwort ist nicht {O}, sondern {L}.", "L"),
    ("gpt-4o-pt", "A resposta correta é {L}.", "L"),
    ("gemini-it", "La risposta corretta è {L}.", "L"),
    ("gpt-4o-ru", "Правильный ответ — {L}.", "L"),
    ("qwen-vl-zh", "不是{O}，而是{L}。", "L"),
    ("claude", "Not {O}, but {L}.", "L"),
    ("qwen-vl-zh", "答案不是{O}，而是{L}。", "L"),
    ("qwen-vl-zh", "答案：（{Lf}）", "L"),
    # weighed, asked about, listed with confidences, cut off: no commitment -> unparsed
    ("gpt-5", "{O}? No. {L}? Maybe.", None),
    ("calibrated", "{O}: 20%\n{L}: 70%\nother: 10%", None),
    ("calibrated", "{L} (65%), {O} (35%)", None),
    ("calibrated", "{O}: 20%\n{L}: 70%\n\nFinal answer: {L}", "L"),
    ("truncated", "Looking at option {L}, the", None),
    ("truncated", "The image shows {W}, which could be {T} or", None),
    ("gpt-4o", "It could be {T} or {OT}; I cannot decide between them", None),
    ("claude", "Is it {T}? Or {OT}?", None),
    # rejections and negation scope
    ("llava-med", "This is not {OT}. The image shows {T}.", "L"),
    ("gpt-4o", "{O} is incorrect.\n{L} is correct.", "L"),
    ("medgemma", "There is no evidence of {OT}.\nAnswer: {L}", "L"),
    ("gemini-2.5", "{O} can be ruled out.", None),
)

YESNO: tuple[tuple[str, str, str | None], ...] = (
    ("qwen-vl", "Yes.", "yes"),
    ("qwen-vl", "是。", "yes"),
    ("qwen-vl", "否，图像中没有{F}。", "no"),
    ("internvl3", "No", "no"),
    ("gemini-2.5", "**Answer:** No\n\n**Explanation:** There is no {F}.", "no"),
    ("gemini-2.5", "There is no {F} on the left.\nYes, there is {F} on the right.", "yes"),
    ("gpt-4o", "**Yes** — {F} is present.", "yes"),
    ("gpt-5", "No {F} is seen.\nAnswer: yes", "yes"),
    ("claude", "No. The lungs are clear and there is no {F}.", "no"),
    ("claude", "<answer>yes</answer>", "yes"),
    ("llama-3.2-vision", "The final answer is: $\\boxed{{No}}$", "no"),
    ("r1-style", "<think>no {F}? Let me look again... yes, it's there.</think>\n\n**Final Answer**\n"
                 "\\boxed{{Yes}}", "yes"),
    ("glm-4.5v", "<answer><|begin_of_box|>No<|end_of_box|></answer>", "no"),
    ("medgemma", "**Answer: Yes**\n**Rationale:** {F} is visible.", "yes"),
    ("gpt-4o-es", "Respuesta: Sí.", "yes"),
    ("gpt-4o-es", "No, no hay {F}.", "no"),
    ("claude-fr", "Non, il n'y a pas de {F}.", "no"),
    ("claude-fr", "Oui.", "yes"),
    ("gpt-4o-de", "Nein.", "no"),
    ("gpt-4o-de", "Antwort: Ja.", "yes"),
    ("gpt-4o-pt", "Sim.", "yes"),
    ("gpt-4o-pt", "Não, não há {F}.", "no"),
    ("gemini-it", "Sì.", "yes"),
    ("gpt-4o-ru", "Нет.", "no"),
    ("gpt-4o-ru", "Ответ: да.", "yes"),
    ("qwen-vl-ja", "いいえ。", "no"),
    ("qwen-vl-ja", "答えは はい。", "yes"),
    ("qwen-vl-ko", "아니요.", "no"),
    ("qwen-vl-ko", "정답: 예", "yes"),
    ("gpt-5", "Yes and no: {F} may be there.", None),
    ("calibrated", "Yes: 60%, No: 40%", None),
)
FINDINGS = ("pleural effusion", "pneumothorax", "fracture")

MULTI: tuple[tuple[str, str, str | None], ...] = (
    ("qwen-vl", "A, C", "A,C"),
    ("gemini-2.5", "**Selected:** A and C", "A,C"),
    ("claude", "<answer>A, C</answer>", "A,C"),
    ("gpt-4o", '```json\n{{"answer": ["A", "C"]}}\n```', "A,C"),
    ("qwen-vl", "答案：A、C", "A,C"),
    ("gpt-4o-es", "Respuesta: A, C", "A,C"),
    ("gpt-4o-fr", "Réponse : A, C", "A,C"),
    ("glm-4.5v", "<answer><|begin_of_box|>A, C<|end_of_box|></answer>", "A,C"),
    ("r1-style", "<think>B? no.</think>\n\\boxed{{A, C}}", "A,C"),
    ("medgemma", "**Answer:** A, C\n**Rationale:** both are visible.", "A,C"),
)
MULTI_OPTIONS = ["Nodule", "Pleural effusion", "Mass", "Fracture"]

# boxes: (family, template, expected raw box in the answer's own space, convention, image size)
BOX: tuple[tuple[str, str, list[float] | None, dict | None, list[int] | None], ...] = (
    ("qwen2.5-vl", '```json\n[\n  {{"bbox_2d": [{a}, {b}, {c}, {d}], "label": "lesion"}}\n]\n```', [1, 1, 1, 1], None,
     None),
    ("internvl3", "<ref>lesion</ref><box>[[{a}, {b}, {c}, {d}]]</box>", [1, 1, 1, 1], None, None),
    ("glm-4.5v", "<answer><|begin_of_box|>[[{a}, {b}, {c}, {d}]]<|end_of_box|></answer>", [1, 1, 1, 1], None, None),
    ("claude", "The lesion's top-left corner is at ({a}, {b}) and its bottom-right corner is at ({c}, {d}).",
     [1, 1, 1, 1], None, None),
    ("gpt-4o", "Bounding box: x from {a} to {c} and y from {b} to {d}.", [1, 1, 1, 1], None, None),
    ("gpt-5", "Polygon outline: [({a}, {b}), ({c}, {b}), ({c}, {d}), ({a}, {d})]", [1, 1, 1, 1], None, None),
    ("gemini-2.5", "[{a}, {b}, {w}, {h}] (x, y, width, height)", [1, 1, 1, 1], None, None),
    ("gpt-4o", "Center ({cx}, {cy}), size {w} x {h}", [1, 1, 1, 1], None, None),
    ("agent", '<tool_call>{{"name": "zoom_in", "arguments": {{"bbox": [0, 0, 50, 50]}}}}</tool_call>\n'
              "The lesion is at [{a}, {b}, {c}, {d}].", [1, 1, 1, 1], None, None),
    ("agent", '<tool_call>{{"name": "zoom_in", "arguments": {{"bbox": [{a}, {b}, {c}, {d}]}}}}</tool_call>', None,
     None, None),
)
BOXES = ((40, 60, 200, 180), (12, 30, 80, 90))


def _fill(t: str, options: list[str], k: int, o: int, why: str) -> str:
    letter, other = "ABCDE"[k], "ABCDE"[o]
    return t.format(L=letter, T=options[k], O=other, OT=options[o], W=why, Lf=chr(ord(letter) + 0xFEE0))


def rows() -> list[dict]:
    out: list[dict] = []
    for family, t, want in MCQ:
        for options, k, o, why in ITEMS:
            exp = None if want is None else "ABCDE"[k] if want == "L" else "ABCDE"[o]
            out.append({"form": "mcq", "options": options, "response": _fill(t, options, k, o, why), "expected": exp,
                        "trap": f"style {family}", "family": family})
    for family, t, want in YESNO:
        for f in FINDINGS:
            out.append({"form": "yesno", "options": [], "response": t.format(F=f), "expected": want,
                        "trap": f"style {family}", "family": family})
    for family, t, want in MULTI:
        out.append({"form": "multi", "options": MULTI_OPTIONS, "response": t.format(), "expected": want,
                    "trap": f"style {family}", "family": family})
    for family, t, want, conv, size in BOX:
        for a, b, c, d in BOXES:
            text = t.format(a=a, b=b, c=c, d=d, w=c - a, h=d - b, cx=(a + c) / 2, cy=(b + d) / 2)
            row = {"form": "box", "options": [], "response": text,
                   "expected": None if want is None else [float(a), float(b), float(c), float(d)],
                   "trap": f"style {family}", "family": family}
            if conv is not None:
                row.update(convention=conv, image_size=size)
            out.append(row)
    return out


# answers that state their unit, read into pixels of a 400 x 200 bench image whatever the preset's space
UNIT_ROWS = (
    ("gpt-4o", "[0.1, 0.2, 0.5, 0.6] in normalized coordinates (0-1)", {"space": "pixel"}, [40.0, 40.0, 200.0, 120.0]),
    ("qwen3-vl", "[100, 200, 500, 600] on a 0-1000 scale", {"space": "pixel"}, [40.0, 40.0, 200.0, 120.0]),
    ("gemini-2.5", "[10, 20, 50, 60] as percentages of the image", {"space": "thousand"}, [40.0, 40.0, 200.0, 120.0]),
    ("claude", "[40, 40, 200, 120] (in pixels)", {"space": "thousand"}, [40.0, 40.0, 200.0, 120.0]),
    ("gpt-5", "Normalized bounding box (0-1): [0.1, 0.2, 0.5, 0.6]", {"space": "thousand"}, [40.0, 40.0, 200.0, 120.0]),
)


def unit_rows() -> list[dict]:
    return [{"form": "box", "options": [], "response": t, "expected": want, "convention": conv,
             "image_size": [400, 200], "trap": f"style {family}: stated unit overrides the preset", "family": family}
            for family, t, conv, want in UNIT_ROWS]


if __name__ == "__main__":
    path = Path(__file__).with_name("extraction_corpus_styles.jsonl")
    lines = [json.dumps(r, ensure_ascii=False) for r in (*rows(), *unit_rows())]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    print(f"{len(lines)} rows -> {path}")
