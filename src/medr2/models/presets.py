"""Model presets: how the VLMs users evaluate most write boxes, see images and want to be prompted.

A preset names the box convention (``BoxConvention``: the space of returned boxes and the resize
rule the serving stack applies), a box instruction worded for that convention, an optional system
prompt and the image-size limits of the model's processor. The source of each fact is listed in
``docs/models.md``; facts not confirmed there are marked uncertain in ``notes``.

This module also holds the exact mapping between pixels of the bench image and the space an
adapter writes boxes in (``box_to_model`` / ``box_from_model``), from the resize rules the
adapters declare, so gold boxes shown in prompts and boxes parsed from answers use one rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from medr2.errors import BadInput
from medr2.models.base import BoxConvention, BoxSpace
from medr2.records import Box
from medr2.registry import Registry

# ---------------------------------------------------------------------------------------------
# Resize rules: original (w, h) -> affine map (sx, sy, tx, ty) from original pixels to the pixels
# of the image the model receives: x' = x * sx + tx, y' = y * sy + ty.

Affine = tuple[float, float, float, float]
ResizeRule = Callable[[int, int, dict[str, object]], Affine]
RESIZE_RULES: Registry[ResizeRule] = Registry("resize rule", field="box_convention.resize")


def register_resize(name: str) -> Callable[[ResizeRule], ResizeRule]:
    """Decorator: register a resize rule ``(w, h, params) -> (sx, sy, tx, ty)``."""
    return RESIZE_RULES.decorator(name)


def _param(params: dict[str, object], name: str, rule: str) -> int:
    value = params.get(name)
    if value is None:
        raise BadInput(f"resize rule {rule!r} needs parameter {name!r}", field="box_convention.params")
    number: int = int(value)  # type: ignore[call-overload]
    return number


@register_resize("none")
def _resize_none(w: int, h: int, params: dict[str, object]) -> Affine:
    return 1.0, 1.0, 0.0, 0.0


def smart_resize(height: int, width: int, factor: int = 28, min_pixels: int = 56 * 56,
                 max_pixels: int = 28 * 28 * 16384) -> tuple[int, int]:
    """Qwen2-VL / Qwen2.5-VL resize (qwen-vl-utils ``smart_resize``): sides become multiples of
    ``factor`` and the pixel count is kept within [min_pixels, max_pixels], aspect ratio kept."""
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt((height * width) / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


@register_resize("qwen2-vl")
def _resize_qwen(w: int, h: int, params: dict[str, object]) -> Affine:
    factor = int(params.get("factor") or 28)  # type: ignore[call-overload]
    min_px = int(params.get("min_pixels") or 56 * 56)  # type: ignore[call-overload]
    max_px = int(params.get("max_pixels") or 28 * 28 * 16384)  # type: ignore[call-overload]
    rh, rw = smart_resize(h, w, factor, min_px, max_px)
    return rw / w, rh / h, 0.0, 0.0


@register_resize("fixed")
def _resize_fixed(w: int, h: int, params: dict[str, object]) -> Affine:
    return _param(params, "width", "fixed") / w, _param(params, "height", "fixed") / h, 0.0, 0.0


def _shortest_edge_size(w: int, h: int, edge: int) -> tuple[int, int]:
    """transformers ``get_resize_output_image_size`` for ``{"shortest_edge": edge}``."""
    short, long = (w, h) if w <= h else (h, w)
    new_short, new_long = edge, int(edge * long / short)
    return (new_short, new_long) if w <= h else (new_long, new_short)


@register_resize("shortest-edge")
def _resize_shortest(w: int, h: int, params: dict[str, object]) -> Affine:
    nw, nh = _shortest_edge_size(w, h, _param(params, "shortest_edge", "shortest-edge"))
    return nw / w, nh / h, 0.0, 0.0


@register_resize("shortest-edge-center-crop")
def _resize_shortest_crop(w: int, h: int, params: dict[str, object]) -> Affine:
    rule = "shortest-edge-center-crop"
    nw, nh = _shortest_edge_size(w, h, _param(params, "shortest_edge", rule))
    ch, cw = _param(params, "crop_height", rule), _param(params, "crop_width", rule)
    top, left = (nh - ch) // 2, (nw - cw) // 2  # transformers ``center_crop``
    return nw / w, nh / h, -float(left), -float(top)


def model_image_size(conv: BoxConvention, width: int, height: int) -> tuple[float, float]:
    """Width and height (in the model's box space) of a ``width`` x ``height`` bench image."""
    if conv.space == "unit":
        return 1.0, 1.0
    if conv.space == "thousand":
        return 1000.0, 1000.0
    sx, sy, _, _ = _affine(conv, width, height)
    if conv.resize == "shortest-edge-center-crop":
        p = dict(conv.params)
        return float(p["crop_width"]), float(p["crop_height"])
    return round(width * sx), round(height * sy)


def _affine(conv: BoxConvention, width: int, height: int) -> Affine:
    if conv.space == "unit":
        return 1.0 / width, 1.0 / height, 0.0, 0.0
    if conv.space == "thousand":
        return 1000.0 / width, 1000.0 / height, 0.0, 0.0
    rule = RESIZE_RULES.get(conv.resize)
    if rule is None:
        raise BadInput(f"unknown resize rule {conv.resize!r}; known: {', '.join(sorted(RESIZE_RULES))}",
                       field="box_convention.resize")
    return rule(width, height, dict(conv.params))


def box_to_model(box: Box, width: int, height: int, conv: BoxConvention) -> Box:
    """A pixel box of the bench image expressed in the space the adapter writes boxes in."""
    sx, sy, tx, ty = _affine(conv, width, height)
    x1, y1, x2, y2 = box
    return (x1 * sx + tx, y1 * sy + ty, x2 * sx + tx, y2 * sy + ty)


def box_from_model(box: Box, width: int, height: int, conv: BoxConvention) -> Box:
    """Inverse of :func:`box_to_model`: a box the model wrote -> pixels of the bench image."""
    sx, sy, tx, ty = _affine(conv, width, height)
    x1, y1, x2, y2 = box
    return ((x1 - tx) / sx, (y1 - ty) / sy, (x2 - tx) / sx, (y2 - ty) / sy)


def format_box(box: Box, space: BoxSpace) -> str:
    """How a box is written in prompts, by baselines and for human readers: integers for pixel / 0-1000, 3 decimals
    for 0-1. A box narrower than one written step keeps one step (rounding never writes a box of zero area)."""
    def write(v: float) -> str:
        return f"{v:.3f}" if space == "unit" else str(round(v))

    step = 0.001 if space == "unit" else 1.0
    x1, y1, x2, y2 = (write(v) for v in box)
    if float(x2) <= float(x1):
        x2 = write(float(x1) + step)
    if float(y2) <= float(y1):
        y2 = write(float(y1) + step)
    return f"[{x1}, {y1}, {x2}, {y2}]"


# ---------------------------------------------------------------------------------------------
# Box instructions per space (``{w}``/``{h}`` = size of the image in the model's box space)

DEFAULT_BOX_INSTRUCTIONS: dict[str, str] = {
    "pixel": "Answer with the bounding box as [x1, y1, x2, y2] in pixel coordinates of the {w}x{h} image "
             "(x to the right, y down, origin at the top-left corner).",
    "unit": "Answer with the bounding box as [x1, y1, x2, y2], each coordinate a fraction of the image width "
            "or height between 0 and 1 (origin at the top-left corner).",
    "thousand": "Answer with the bounding box as [x1, y1, x2, y2], coordinates scaled to 0-1000 of the image "
                "width and height (origin at the top-left corner).",
}
COORD_PHRASES: dict[str, str] = {
    "pixel": "pixel coordinates of the {w}x{h} image",
    "unit": "fractions of the image width and height",
    "thousand": "coordinates scaled to 0-1000",
}


@dataclass(frozen=True)
class Preset:
    """Conventions of one model family served through an OpenAI-compatible endpoint (or locally)."""

    name: str
    family: str
    examples: tuple[str, ...]
    box: BoxConvention
    box_instruction: str | None = None  # None: DEFAULT_BOX_INSTRUCTIONS[box.space]
    system: str | None = None
    min_pixels: int | None = None
    max_pixels: int | None = None
    image_size: int | None = None  # fixed input side (tiles / square inputs)
    # how many images the family takes in one prompt (issue 49: an item of several images); None: several, with
    # no limit of the family's own (the context and the server's limit bound it: vLLM --limit-mm-per-prompt)
    max_images: int | None = None
    max_tokens_field: str = "max_tokens"  # request field of the token limit (OpenAI: max_completion_tokens)
    # token budget when --max-new-tokens is not given (reasoning models think before they answer: an answer cut
    # off by the limit is scored ``truncated``); None: the command's default
    max_new_tokens: int | None = None
    # fields added to every openai request body (e.g. chat_template_kwargs); --model-option values win
    extra_body: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    # how the servers of this family constrain an answer with --structured-answers (a name of
    # medr2.models.structured.STRUCTURED_MODES; None: they cannot); --model-option structured=NAME picks another
    structured: str | None = "json_schema"
    notes: str = ""
    sources: tuple[str, ...] = field(default_factory=tuple)

    def instruction_for_box(self) -> str:
        return self.box_instruction or DEFAULT_BOX_INSTRUCTIONS[self.box.space]

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "family": self.family, "box_space": self.box.space,
                "resize": self.box.resize, "resize_params": dict(self.box.params),
                "system": self.system, "min_pixels": self.min_pixels, "max_pixels": self.max_pixels,
                "image_size": self.image_size, "max_images": self.max_images, "max_new_tokens": self.max_new_tokens,
                "extra_body": dict(self.extra_body)}


PRESETS: Registry[Preset] = Registry("preset", field="--preset")


def register_preset(p: Preset) -> Preset:
    """Register a model preset under its ``name`` (a taken name is refused)."""
    return PRESETS.register(p.name, p)


def get_preset(name: str) -> Preset:
    return PRESETS.lookup(name)


_QWEN_PARAMS = (("factor", 28), ("max_pixels", 28 * 28 * 16384), ("min_pixels", 56 * 56))
_QWEN25_BOX = ("Answer with the bounding box as [x1, y1, x2, y2] in absolute pixel coordinates of the image "
               "as you see it ({w}x{h} pixels).")
_THOUSAND = BoxConvention("thousand", "none", ())
_UNIT = BoxConvention("unit", "none", ())

register_preset(Preset(
    "generic", "any", (), BoxConvention("pixel", "none", ()),
    notes="Default: pixel boxes of the image as sent (no server-side resize assumed); the prompt states the size."))
register_preset(Preset(
    "medr2-tiny", "medr2's tiny test VLM (medr2 tiny-vlm, default 32 px)", ("medr2-tiny",),
    BoxConvention("pixel", "fixed", (("height", 32), ("width", 32))), image_size=32,
    notes="The offline tiny LLaVA (medr2.models.tiny) served by vLLM or transformers serve: its processor resizes "
          "every image to 32x32 without crop, as the hf adapter reads from the checkpoint; with this preset the "
          "openai adapter renders the same prompts as hf:DIR.",
    sources=("src/medr2/models/tiny.py (build_processor)",)))
register_preset(Preset(
    "qwen2-vl", "Qwen2-VL", ("Qwen/Qwen2-VL-2B-Instruct", "Qwen/Qwen2-VL-7B-Instruct", "Qwen/Qwen2-VL-72B-Instruct"),
    _THOUSAND, min_pixels=56 * 56, max_pixels=28 * 28 * 16384,
    notes="Boxes normalised to [0, 1000) (native form <|box_start|>(x1,y1),(x2,y2)<|box_end|>).",
    sources=("Qwen2-VL report arXiv:2409.12191", "github.com/QwenLM/Qwen3-VL/issues/866")))
register_preset(Preset(
    "qwen2.5-vl", "Qwen2.5-VL", ("Qwen/Qwen2.5-VL-3B-Instruct", "Qwen/Qwen2.5-VL-7B-Instruct",
                                 "Qwen/Qwen2.5-VL-32B-Instruct", "Qwen/Qwen2.5-VL-72B-Instruct"),
    BoxConvention("pixel", "qwen2-vl", _QWEN_PARAMS), box_instruction=_QWEN25_BOX,
    min_pixels=56 * 56, max_pixels=28 * 28 * 16384,
    notes="Absolute pixel boxes of the smart-resized input (multiples of 28 within min/max pixels); "
          "if the server runs with other --mm-processor-kwargs min/max_pixels, change the preset params.",
    sources=("github.com/QwenLM/Qwen3-VL/issues/676", "github.com/QwenLM/Qwen3-VL/issues/721",
             "qwen-vl-utils vision_process.smart_resize")))
register_preset(Preset(
    "qwen3-vl", "Qwen3-VL", ("Qwen/Qwen3-VL-8B-Instruct", "Qwen/Qwen3-VL-30B-A3B-Instruct",
                             "Qwen/Qwen3-VL-235B-A22B-Instruct"),
    _THOUSAND,
    notes="Relative boxes 0-1000 again (changed from Qwen2.5-VL's absolute pixels); Alibaba Cloud docs say "
          "0-999. Patch 16 x merge 2 (factor 32).",
    sources=("github.com/QwenLM/Qwen3-VL/issues/1741", "github.com/QwenLM/Qwen3-VL/issues/1486")))
register_preset(Preset(
    "internvl", "InternVL 2 / 2.5 / 3", ("OpenGVLab/InternVL2_5-8B", "OpenGVLab/InternVL3-8B"),
    _THOUSAND, image_size=448,
    notes="Grounding as <ref>..</ref><box>[[x1, y1, x2, y2]]</box> normalised to 0-1000; dynamic 448x448 tiles "
          "(up to 12 plus a thumbnail).",
    sources=("InternVL chat docs (internvl.readthedocs.io), grounding format",
             "InternVL processor_config: max_patches 12, size 448")))
register_preset(Preset(
    "llava-med", "LLaVA-Med v1.5", ("microsoft/llava-med-v1.5-mistral-7b",),
    _UNIT, image_size=336, max_images=1,
    notes="LLaVA-1.5 style: CLIP ViT-L/14-336, image padded to square and resized to 336. LLaVA-1.5 writes "
          "boxes as 0-1 fractions with 3 decimals; LLaVA-Med was not trained for grounding (uncertain). Trained "
          "on one image per conversation: one image per prompt.",
    sources=("LLaVA-1.5 paper arXiv:2310.03744 (box format)", "LLaVA-Med repo github.com/microsoft/LLaVA-Med")))
register_preset(Preset(
    "medgemma", "MedGemma", ("google/medgemma-4b-it", "google/medgemma-27b-it"),
    _THOUSAND, image_size=896,
    notes="Gemma 3 based, SigLIP encoder at 896x896. No documented box format; 0-1000 as in Gemini "
          "(uncertain; Gemini's native order is [ymin, xmin, ymax, xmax], the prompt asks x first).",
    sources=("huggingface.co/google/gemma-3-4b-it/discussions/38", "MedGemma model card")))
register_preset(Preset(
    "huatuogpt-vision", "HuatuoGPT-Vision", ("FreedomIntelligence/HuatuoGPT-Vision-7B",
                                             "FreedomIntelligence/HuatuoGPT-Vision-34B"),
    _UNIT, image_size=336,
    notes="LLaVA architecture (7B: Qwen2 LLM). No documented box format; 0-1 fractions (uncertain).",
    sources=("HuatuoGPT-Vision paper arXiv:2406.19280",)))
register_preset(Preset(
    "lingshu", "Lingshu", ("lingshu-medical-mllm/Lingshu-7B", "lingshu-medical-mllm/Lingshu-32B"),
    BoxConvention("pixel", "qwen2-vl", _QWEN_PARAMS), box_instruction=_QWEN25_BOX,
    min_pixels=56 * 56, max_pixels=28 * 28 * 16384,
    notes="Built on Qwen2.5-VL-Instruct, so Qwen2.5-VL conventions (absolute pixels of the resized input; "
          "uncertain whether medical fine-tuning kept them).",
    sources=("Lingshu report arXiv:2506.07044",)))
register_preset(Preset(
    "gpt-4o", "OpenAI GPT-4o class", ("gpt-4o", "gpt-4o-mini", "gpt-4.1"),
    _UNIT, max_tokens_field="max_completion_tokens",
    notes="No native grounding format; asks for 0-1 fractions. Images are resized by the API (high detail: fit "
          "2048x2048, then shortest side 768). The token limit is sent as max_completion_tokens (max_tokens is "
          "deprecated there and rejected by the o-series and later models).",
    sources=("platform.openai.com/docs/guides/images-vision (image sizing)",
             "platform.openai.com/docs/api-reference/chat/create (max_tokens deprecated)")))
register_preset(Preset(
    "gemini", "Google Gemini (OpenAI-compatible endpoint)", ("gemini-2.5-flash", "gemini-2.5-pro"),
    BoxConvention("thousand", "none", (("box_2d", "yxyx"),)),
    notes="Gemini is trained on [ymin, xmin, ymax, xmax] normalised to 0-1000 and writes it as "
          '{"box_2d": [ymin, xmin, ymax, xmax]}: the scorer reads a box_2d key y-first for this preset '
          "(convention param box_2d=yxyx); the prompt asks for x-first [x1, y1, x2, y2], read x-first.",
    sources=("ai.google.dev Gemini image understanding docs (object detection)",
             "huggingface.co/google/gemma-3-4b-it/discussions/38")))

# Reasoning models: the thinking counts against the token limit, so the budget is large; the server's reasoning
# parser (vLLM ``--reasoning-parser``, SGLang ``--reasoning-parser``) returns the thinking separately
# (``reasoning_content`` / ``reasoning``), which medr2 stores but never reads for the answer.
REASONING_MAX_NEW_TOKENS = 16384
register_preset(Preset(
    "qwen3-vl-thinking", "Qwen3-VL Thinking", ("Qwen/Qwen3-VL-8B-Thinking", "Qwen/Qwen3-VL-30B-A3B-Thinking",
                                               "Qwen/Qwen3-VL-235B-A22B-Thinking"),
    _THOUSAND, max_new_tokens=REASONING_MAX_NEW_TOKENS,
    notes="Qwen3-VL conventions (0-1000 boxes) with a 16,384-token budget for the <think> block and the answer; "
          "serve with vLLM --reasoning-parser qwen3 (or deepseek_r1) so the thinking comes back separately. "
          "Budget the thinking with --model-option thinking_token_budget=N (vLLM) or thinking_budget=N "
          "(chat-template kwarg, SGLang).",
    sources=("docs.vllm.ai features/reasoning_outputs (qwen3 parser, reasoning / reasoning_content)",
             "github.com/QwenLM/Qwen3-VL/issues/1741")))
register_preset(Preset(
    "generic-reasoning", "any reasoning model (DeepSeek-R1 style <think> blocks)", ("Kimi-VL-A3B-Thinking",
                                                                                  "GLM-4.1V-9B-Thinking"),
    BoxConvention("pixel", "none", ()), max_new_tokens=REASONING_MAX_NEW_TOKENS,
    notes="Default conventions (pixel boxes of the image as sent) with a 16,384-token budget; for servers with "
          "a reasoning parser (reasoning_content, DeepSeek-style APIs) or models that write <think>...</think> "
          "into the content (the block is dropped before the answer is read).",
    sources=("docs.vllm.ai features/reasoning_outputs", "docs.sglang.io advanced_features/thinking_budget")))
register_preset(Preset(
    "openai-reasoning", "OpenAI reasoning models (o-series, GPT-5)", ("o3", "o4-mini", "gpt-5", "gpt-5-mini"),
    _UNIT, max_tokens_field="max_completion_tokens", max_new_tokens=REASONING_MAX_NEW_TOKENS,
    notes="As gpt-4o (0-1 fractions, max_completion_tokens), with a 16,384-token budget: the hidden reasoning "
          "tokens count against max_completion_tokens. Set the effort with --model-option reasoning_effort=low|"
          "medium|high. These models accept only the default temperature: pass --model-option "
          "extra_body='{\"temperature\": 1}' if the API refuses temperature 0 (uncertain per model).",
    sources=("platform.openai.com/docs/guides/reasoning (reasoning_effort, max_completion_tokens)",)))
register_preset(Preset(
    "llama-3.2-vision", "Llama 3.2 Vision (mllama)", ("meta-llama/Llama-3.2-11B-Vision-Instruct",),
    _UNIT, image_size=560, max_images=1,
    notes="Tiles of 560x560 (up to 4) by cross-attention. No documented box format; 0-1 fractions (uncertain). "
          "Trained with one image per prompt (the model card: multi-image prompts not supported).",
    sources=("Llama 3.2 Vision model card", "transformers MllamaImageProcessor (max_image_tiles 4, 560)")))
register_preset(Preset(
    "idefics3", "Idefics3 / SmolVLM", ("HuggingFaceM4/Idefics3-8B-Llama3", "HuggingFaceTB/SmolVLM-Instruct"),
    _UNIT,
    notes="Longest edge resized, split into tiles (364 / 384 px) plus a global image. No documented box format; "
          "0-1 fractions (uncertain).",
    sources=("Idefics3 paper arXiv:2408.12637", "SmolVLM model card")))
register_preset(Preset(
    "aya-vision", "Aya Vision", ("CohereLabs/aya-vision-8b", "CohereLabs/aya-vision-32b"),
    _UNIT, image_size=364,
    notes="SigLIP2 tiles of 364 px (up to 12, closest aspect-ratio grid, plus a thumbnail). No documented box "
          "format; 0-1 fractions (uncertain).",
    sources=("Aya Vision model card", "transformers AyaVisionProcessor / GotOcr2ImageProcessor")))
register_preset(Preset(
    "glm-4v", "GLM-4.1V / GLM-4.5V", ("zai-org/GLM-4.1V-9B-Thinking", "zai-org/GLM-4.5V"),
    _THOUSAND,
    notes="Grounding as <|begin_of_box|>[x1, y1, x2, y2]<|end_of_box|> relative 0-1000 (uncertain). Qwen-style "
          "patches 14, merge 2, own smart resize.",
    sources=("GLM-4.5V model card (grounding)", "transformers Glm4vImageProcessor")))
register_preset(Preset(
    "mistral3", "Mistral Small 3.1 / Pixtral", ("mistralai/Mistral-Small-3.1-24B-Instruct-2503",),
    _UNIT,
    notes="Longest edge resized to at most 1540 px, patches 14 merged 2x2. No documented box format; 0-1 fractions "
          "(uncertain).",
    sources=("Mistral Small 3.1 model card", "transformers PixtralProcessor")))
register_preset(Preset(
    "llava-onevision", "LLaVA-OneVision", ("llava-hf/llava-onevision-qwen2-7b-ov-hf",),
    _UNIT, image_size=384,
    notes="AnyRes: a 384 px base view plus the best-fitting grid of 384 px crops (anyres_max_9). No documented "
          "box format; 0-1 fractions as LLaVA-1.5 (uncertain).",
    sources=("LLaVA-OneVision paper arXiv:2408.03326", "transformers LlavaOnevisionProcessor")))
