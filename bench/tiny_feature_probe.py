"""How much of the image a tiny VLM's image features keep (issue #18; docs/finetuning.md).

Linear probes (logistic regression on standardised features, train split -> test split) of the clean items'
images: s1.modality over all images, s1.plane and s1.region within MRI, on the 32 px pixels, on the image token's
features after the projector (``get_image_features(...).pooler_output``) of each model given, and of untrained
tiny VLMs of the vision widths given; with the ratio of within- to between-modality feature distances.

    python bench/tiny_feature_probe.py BENCH [--model NAME=DIR ...] [--untrained 64 256 ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

TASKS = (("s1.modality", None), ("s1.plane", "MRI"), ("s1.region", "MRI"))


def label(r: dict[str, Any]) -> str:
    opts = json.loads(r["options"]) if r["options"] else None
    a = r["answer"]
    return str(opts[ord(a) - 65]) if opts and len(a) == 1 else str(a)


def main() -> None:
    import pyarrow.parquet as pq
    import torch
    from PIL import Image
    from sklearn.linear_model import LogisticRegression
    from transformers import AutoModelForImageTextToText, AutoProcessor, LlavaForConditionalGeneration

    from medr2.images import load_image
    from medr2.models.tiny import TinySpec, build_config, build_processor, build_tokenizer

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bench", type=Path)
    ap.add_argument("--model", nargs="*", default=[], help="NAME=DIR of a saved model")
    ap.add_argument("--untrained", nargs="*", type=int, default=[64, 256], help="vision widths of untrained models")
    a = ap.parse_args()
    cols = ["task", "split", "variant", "image", "answer", "options"]
    rows = [r for r in pq.read_table(a.bench / "items.parquet", columns=cols).to_pylist()
            if r["variant"] == "clean" and r["image"] and r["task"] in {t for t, _ in TASKS}]
    images = sorted({r["image"] for r in rows})
    pil = {im: Image.fromarray(np.asarray(load_image(a.bench / im, mode="RGB"))) for im in images}
    modality = {r["image"]: label(r) for r in rows if r["task"] == "s1.modality"}

    def features(model: Any, proc: Any) -> dict[str, np.ndarray]:
        with torch.no_grad():
            return {im: model.get_image_features(
                pixel_values=proc.image_processor(images=[pil[im]], return_tensors="pt")["pixel_values"]
            ).pooler_output[0].reshape(-1).numpy() for im in images}

    sets: dict[str, dict[str, np.ndarray]] = {
        "pixels": {im: np.asarray(pil[im].resize((32, 32), Image.BICUBIC), np.float32).ravel() / 255 for im in images}}
    for width in a.untrained:
        spec = TinySpec(vision_hidden=width)
        tok = build_tokenizer(spec)
        torch.manual_seed(0)
        sets[f"untrained-{width}"] = features(LlavaForConditionalGeneration(build_config(spec, tok)).eval(),
                                              build_processor(spec, tok))
    for named in a.model:
        name, folder = named.split("=", 1)
        sets[name] = features(AutoModelForImageTextToText.from_pretrained(folder, local_files_only=True).eval(),
                              AutoProcessor.from_pretrained(folder, local_files_only=True))
    for name, feats in sets.items():
        scores = []
        for task, within in TASKS:
            def pick(split: str, task: str = task, within: str | None = within) -> list[dict[str, Any]]:
                return [r for r in rows if r["task"] == task and r["split"] == split
                        and (within is None or modality.get(r["image"]) == within)]
            tr, te = pick("train"), pick("test")
            x = np.stack([feats[r["image"]] for r in tr])
            mu, sd = x.mean(0), x.std(0) + 1e-6
            clf = LogisticRegression(max_iter=3000).fit((x - mu) / sd, [label(r) for r in tr])
            xt = np.stack([feats[r["image"]] for r in te])
            acc = clf.score((xt - mu) / sd, [label(r) for r in te])
            scores.append(f"{task}{'/' + within if within else ''} {acc:.2f}")
        ims = [im for im in images if im in modality]
        z = np.stack([feats[im] for im in ims])
        z = (z - z.mean(0)) / (z.std(0) + 1e-6)
        labs = np.array([modality[im] for im in ims])
        dist = np.linalg.norm(z[:, None] - z[None], axis=-1)
        same = labs[:, None] == labs[None]
        np.fill_diagonal(same, False)
        ratio = dist[same].mean() / dist[~same].mean()
        print(f"{name}: " + "; ".join(scores) + f"; within/between distance {ratio:.2f}")


if __name__ == "__main__":
    main()
