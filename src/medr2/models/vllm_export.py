"""Copy a transformers checkpoint with a LLaVA-style vision tower (LLaVA 1.5, LLaVA-OneVision, Gemma 3) into
the weight layout vLLM loads.

transformers 5 saves such a vision tower's weights as ``vision_tower.embeddings...`` /
``vision_tower.encoder...`` (the bare vision transformer), while vLLM's CLIP / SigLIP towers keep
them one level down, under ``vision_tower.vision_model.`` (vLLM's weight mappers only strip a
leading ``model.``). Without the rename vLLM 0.32 refuses to start ("There is no module or
parameter named 'vision_tower.embeddings' in LlavaForConditionalGeneration", the same for
LlavaOnevisionForConditionalGeneration and Gemma3ForConditionalGeneration). This module rewrites the keys
and copies every other file (config, tokenizer, processor, chat template) unchanged; the rewritten folder still
loads in transformers, with the same answers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from medr2 import jsonsafe
from medr2.errors import BadInput

TOWER_PREFIXES = ("vision_tower.", "model.vision_tower.")
NESTED = "vision_model."
# config.model_type -> vLLM architecture whose CLIP / SigLIP tower nests its weights under ``vision_model.``
EXPORTABLE = {"llava": "LlavaForConditionalGeneration",
              "llava_onevision": "LlavaOnevisionForConditionalGeneration",
              "gemma3": "Gemma3ForConditionalGeneration"}


def vllm_weight_name(name: str) -> str:
    """The key vLLM expects for checkpoint key ``name`` (unchanged unless it is a bare vision-tower key)."""
    for prefix in TOWER_PREFIXES:
        if name.startswith(prefix) and not name.startswith(prefix + NESTED):
            return prefix + NESTED + name[len(prefix):]
    return name


def export_for_vllm(src: Path | str, dst: Path | str) -> Path:
    """Write a copy of checkpoint ``src`` into ``dst`` with vision-tower keys renamed for vLLM; return ``dst``."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    src, dst = Path(src), Path(dst)
    config = src / "config.json"
    if not config.is_file():
        raise BadInput("not a model folder (no config.json)", file=str(src))
    weights = sorted(src.glob("*.safetensors"))
    if not weights:
        raise BadInput("no .safetensors weights to export (vLLM export reads safetensors only)", file=str(src))
    if dst.resolve() == src.resolve():
        raise BadInput("export folder must differ from the source folder", file=str(dst))
    model_type = jsonsafe.load_object(config).get("model_type")
    if model_type not in EXPORTABLE:
        raise BadInput(f"vLLM export handles LLaVA checkpoints ({', '.join(sorted(EXPORTABLE))}), not {model_type!r}",
                       file=str(config), field="model_type")
    dst.mkdir(parents=True, exist_ok=True)
    index_map: dict[str, str] = {}
    for f in weights:
        with safe_open(str(f), "pt") as fh:
            metadata = fh.metadata() or {"format": "pt"}
            tensors = {vllm_weight_name(k): fh.get_tensor(k) for k in fh.keys()}  # noqa: SIM118 - not a dict
        save_file(tensors, str(dst / f.name), metadata=metadata)
        index_map.update(dict.fromkeys(tensors, f.name))
    for f in sorted(src.iterdir()):
        if f.is_file() and f.suffix != ".safetensors" and f.name != "model.safetensors.index.json":
            shutil.copy2(f, dst / f.name)
    index = src / "model.safetensors.index.json"
    if index.is_file():
        data = jsonsafe.load_object(index)
        data["weight_map"] = dict(sorted(index_map.items()))
        (dst / index.name).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return dst
