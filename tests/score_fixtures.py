"""Items of every form, chains, yes/no pairs and the variants the metrics read, built in code; and
predictions from the real baseline adapters (oracle, follow-hint, blind, random)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medr2 import GenSettings, Item, Message, Part, Prediction, Request
from medr2.models.registry import load_adapter
from medr2.records import Cue, item_content_id

W, H = 100, 80
MODS = ["CT", "MRI", "X-ray", "Ultrasound"]
DX = ["pneumonia", "effusion", "pneumothorax", "normal"]


def _item(**kw: Any) -> Item:
    base: dict[str, Any] = {"chance": 0.25, "template_id": "t0", "source": "test", "license": "CC0",
                            "image_width": W, "image_height": H, "image": "images/x.png", "split": "test",
                            "options": []}
    base.update(kw)
    base["item_id"] = item_content_id(base)
    return Item(**base)


def _variant(parent: Item, variant: str, **kw: Any) -> Item:
    fields = parent.model_dump(exclude={"item_id"})
    fields.update(variant=variant, parent_id=parent.item_id, chain_id=None, step=None, seed=1, **kw)
    return _item(**fields)


def make_items(n_cases: int = 12) -> list[Item]:
    items: list[Item] = []
    for c in range(n_cases):
        cid = f"case{c:02d}"
        chain = f"chain-{cid}"
        mod_ans = "ABCD"[c % 4]
        others = [m for m in MODS if m != MODS[c % 4]]
        mod_opts = [MODS[c % 4] if mod_ans == L else others.pop(0) for L in "ABCD"]
        s1 = _item(case_id=cid, chain_id=chain, step=1, stage=1, task="s1.modality", form="mcq",
                   question="What is the imaging modality?", options=mod_opts, answer=mod_ans)
        box = (10.0 + c, 12.0, 40.0 + c, 50.0)
        s2 = _item(case_id=cid, chain_id=chain, step=2, stage=2, task="s2.organ_box", form="box", chance=0.0,
                   question="Locate the liver.", answer="", answer_box=box)
        yes = _item(case_id=cid, chain_id=chain, step=3, stage=3, task="s3.abnormal", form="yesno", chance=0.5,
                    question="Is there an abnormality?", answer="yes", pair_id=f"pair-{cid}")
        no = _item(case_id=cid, stage=3, task="s3.abnormal", form="yesno", chance=0.5,
                   question="Is there a fracture?", answer="no", pair_id=f"pair-{cid}")
        dx = DX[c % 4]
        s4 = _item(case_id=cid, chain_id=chain, step=4, stage=4, task="s4.diagnosis", form="mcq",
                   question="What is the most likely diagnosis?", options=list(DX), answer="ABCD"[c % 4])
        multi = _item(case_id=cid, stage=4, task="s4.multilabel", form="multi", chance=1 / 15,
                      question="Select all findings present.", options=["mass", "fluid", "air", "fracture"],
                      answer="A,C" if c % 2 else "B")
        report = _item(case_id=cid, stage=4, task="s4.report", form="text", chance=0.0, question="Write the report.",
                       answer=f"Findings: small {dx} in the right lung. Impression: {dx}.")
        items += [s1, s2, yes, no, s4, multi, report]
        wrong = "ABCD"[(c + 1) % 4]
        items.append(_variant(s4, "T2", question="The image is a chest X-ray. " + s4.question))
        items.append(_variant(s4, "T3", question=f"Given the {DX[(c + 1) % 4]}, what is the diagnosis?", lure=wrong))
        items.append(_variant(s4, "T4-authority", question=s4.question + f" A senior radiologist thinks ({wrong}).",
                              lure=wrong))
        for code in ("V1", "V2", "V3"):
            items.append(_variant(s1, code, image=f"images/{code}-{c}.png",
                                  meta={"scoring": "probe", "parent_answer": s1.answer}))
        items.append(_variant(yes, "V4", image=f"images/v4-{c}.png", answer="no", pair_id=None,
                              meta={"scoring": "exact", "counterfactual": True, "parent_answer": "yes"}))
        cue = Cue(kind="box", box=box)
        items.append(_variant(s4, "V5", cue=cue, image=f"images/v5-{c}.png"))
        none_opts = [*DX[:3], "none of the above"]
        items.append(_variant(s4, "V6", cue=Cue(kind="box", box=(60.0, 10.0, 90.0, 40.0)), options=none_opts,
                              answer="D", lure=s4.answer if s4.answer != "D" else "A", image=f"images/v6-{c}.png",
                              meta={"scoring": "exact", "decoy_of": dx}))
        items.append(_variant(s4, "V7", cue=Cue(kind="coords", box=box, drawn=False)))
        perm = [s1.options[i] for i in (1, 2, 3, 0)]
        items.append(_variant(s1, "T6", options=perm, answer="ABCD"[perm.index(s1.answer_text)]))
        for sev in (1, 3):
            items.append(_variant(s1, f"V8-noise-{sev}", image=f"images/v8-{sev}-{c}.png",
                                  meta={"scoring": "exact", "answer_preserving": True}))
    return items


def requests_for(items: list[Item]) -> list[Request]:
    """Text-only requests (question + options) carrying the item, as the runner hands baselines."""
    out = []
    for it in items:
        text = it.question + ("\n" + "\n".join(f"{chr(65 + i)}. {o}" for i, o in enumerate(it.options))
                              if it.options else "")
        out.append(Request(key=it.item_id, messages=(Message("user", (Part("text", text=text),)),),
                           settings=GenSettings(), bench_root=Path("."), item_id=it.item_id, meta={"item": it}))
    return out


def predict(spec: str, items: list[Item], mode: str = "independent") -> list[Prediction]:
    adapter = load_adapter(spec)
    responses = adapter.generate(requests_for(items))
    return [Prediction(model_key=adapter.key, item_id=it.item_id, mode=mode, request_hash=it.item_id + mode,
                       raw=r.text, status=r.status, error=r.error) for it, r in zip(items, responses, strict=True)]
