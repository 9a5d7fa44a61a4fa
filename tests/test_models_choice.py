"""``hf:`` with ``choice=loglik``: closed questions answered by the likelihood of each allowed answer.

The scores are checked against transformers' own loss (a second, independent computation of the same
log-probabilities), the choice against those scores, and the batching against one-by-one answers."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from medr2 import BadInput, BoxConvention, GenSettings, Request
from medr2.images import ImageStore
from medr2.models.choice import candidates
from medr2.run.prompts import MODES, render_messages
from tests.train_fixtures import _item, tiny_vlm_dir

NOTE = re.compile(r"'([^']*)' (-?[0-9.]+)")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_vlm_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def closed(tmp_path_factory):
    """Requests for MCQ, yes/no and box items on real PNG images, rendered as evaluation renders them."""
    root = tmp_path_factory.mktemp("choicebench")
    store = ImageStore(root)
    rng = np.random.default_rng(1)
    reqs = []
    options = (["CT", "MRI", "X-ray", "ultrasound"], ["axial", "coronal", "sagittal"], ["left", "right"])
    for k in range(9):
        ref = store.put_array(rng.integers(0, 255, (32, 32, 3), dtype=np.uint8))
        common = {"case_id": f"c{k}", "image": ref.path, "image_sha256": ref.sha256, "image_width": 32,
                  "image_height": 32, "split": "test", "stage": 1, "variant": "clean"}
        if k % 3 == 0:
            opts = options[k // 3]
            item = _item(**common, task="s1.modality", form="mcq", question=f"Which modality? ({k})",
                         options=opts, answer="A")
        elif k % 3 == 1:
            item = _item(**common, task="s3.abnormal", form="yesno", question=f"Is there a lesion? ({k})",
                         answer="no")
        else:
            item = _item(**common, task="s3.box", form="box", question="Where is the lesion?", answer="",
                         answer_box=(1.0, 2.0, 10.0, 12.0))
        msgs = tuple(render_messages(item, mode=MODES["independent"], history=(), conv=BoxConvention()))
        reqs.append(Request(key=f"r{k}", messages=msgs, settings=GenSettings(max_new_tokens=8), bench_root=root,
                            item_id=item.item_id, meta={"item": item}))
    return reqs


def _scores(note: str) -> dict[str, float]:
    return {c: float(s) for c, s in NOTE.findall(note.split(": ", 1)[1])}


def test_choice_is_the_most_likely_candidate_and_matches_transformers_loss(tiny, closed):
    import torch

    from medr2.models.hf import HFAdapter, HFOptions

    a = HFAdapter(tiny, HFOptions(batch_size=4, choice="loglik"))
    res = a.generate(closed)
    assert all(r.status == "ok" for r in res), [r.error for r in res]
    for req, r in zip(closed, res, strict=True):
        cands = candidates(req.meta["item"], "text")
        if cands is None:  # box: generated as usual, no note
            assert r.notes == () and r.finish_reason in ("stop", "length")
            continue
        scores = _scores(r.notes[0])
        assert list(scores) == list(cands) and r.text == max(cands, key=scores.__getitem__)
        assert r.finish_reason == "stop" and r.completion_tokens and r.completion_tokens >= 2  # answer + end token
        # the confidence (issue 45): the softmax of the candidates' scores, labelled by option letter / yes-no
        from medr2.models.confidence import labels_of

        assert r.confidence is not None and r.confidence.source == "loglik"
        assert list(r.confidence.probs) == list(labels_of(req.meta["item"]))
        top = max(scores.values())
        z = sum(math.exp(v - top) for v in scores.values())
        assert list(r.confidence.probs.values()) == pytest.approx([math.exp(v - top) / z for v in scores.values()],
                                                                   abs=1e-3)
        # the same log-probability through transformers' own loss: labels only on the answer's tokens
        conv, prompt, images = a._render(req)
        for cand, full in zip(cands, a._answered(conv, cands), strict=True):
            enc = a.processor(text=[full], images=images, return_tensors="pt")
            n_prompt = len(a.tokenizer(prompt, add_special_tokens=False)["input_ids"])
            after = a.tokenizer(full, add_special_tokens=False)["input_ids"][n_prompt:]
            n_answer = after.index(a.tokenizer.eos_token_id) + 1
            labels = torch.full_like(enc["input_ids"], -100)
            end = enc["input_ids"].shape[1] - len(after) + n_answer
            labels[0, end - n_answer:end] = enc["input_ids"][0, end - n_answer:end]
            with torch.inference_mode():
                loss = a.model(**enc, labels=labels).loss
            assert scores[cand] == pytest.approx(-float(loss) * n_answer, abs=2e-3)


def test_choice_batched_equals_one_by_one_and_is_keyed(tiny, closed):
    from medr2 import ModelConfig
    from medr2.models.hf import HFAdapter, HFOptions
    from medr2.models.registry import load_adapter

    one = HFAdapter(tiny, HFOptions(batch_size=1, choice="loglik")).generate(closed)
    many = HFAdapter(tiny, HFOptions(batch_size=5, choice="loglik")).generate(closed)
    assert [r.text for r in one] == [r.text for r in many]
    for r1, r2 in zip(one, many, strict=True):
        if r1.notes:
            s1, s2 = _scores(r1.notes[0]), _scores(r2.notes[0])
            assert s1 == pytest.approx(s2, abs=1e-3)
    gen = load_adapter(ModelConfig(f"hf:{tiny}", extra={"device": "cpu"}))
    ll = load_adapter(ModelConfig(f"hf:{tiny}", extra={"device": "cpu", "choice": "loglik", "choice_style": "letter"}))
    assert gen.key == f"hf:{tiny}" and ll.key == f"hf:{tiny}#choice=loglik:letter"  # cached answers never mix
    assert ll.settings()["choice"] == "loglik" and "choice" not in gen.settings()
    letters = ll.generate(closed[:1])
    assert letters[0].text in ("A", "B", "C", "D")
    with pytest.raises(BadInput, match="choice must be one of"):
        load_adapter(ModelConfig(f"hf:{tiny}", extra={"choice": "beam"}))
    with pytest.raises(BadInput, match="choice_style"):
        load_adapter(ModelConfig(f"hf:{tiny}", extra={"choice": "loglik", "choice_style": "number"}))


def test_candidates_follow_the_item_form():
    mcq = _item(case_id="c", task="t", form="mcq", question="q", options=["a b", "c"], answer="B", split="test",
                stage=1, variant="clean", image="i.png", image_sha256="0" * 64, image_width=1, image_height=1)
    assert candidates(mcq, "text") == ("a b", "c")
    assert candidates(mcq, "letter") == ("A", "B")
    assert candidates(mcq, "letter-text") == ("A. a b", "B. c")
    yn = _item(case_id="c", task="t", form="yesno", question="q", answer="yes", split="test", stage=1,
               variant="clean", image="i.png", image_sha256="0" * 64, image_width=1, image_height=1)
    assert candidates(yn, "letter") == ("yes", "no")
    assert candidates(None, "text") is None
