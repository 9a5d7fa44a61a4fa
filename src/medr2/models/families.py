"""Tiny checkpoints of real VLM architectures, built offline from transformers' own classes.

Each family entry builds a folder that loads with ``AutoProcessor`` + ``AutoModelForImageTextToText``
like the family's real checkpoint: the family's native model class (random weights from a seed, a few
hundred thousand parameters), its real processor class (the PIL image processor where transformers has
one), a byte-level BPE tokenizer trained here that carries the family's special tokens, and the
family's documented chat-template layout (role markers, image placeholder, system prompt handling).
Sizes are tiny (16-64 px inputs, 8-16 px patches) so each family builds and runs in seconds on a CPU.

Each entry names the medr2 preset (``medr2.models.presets``) that evaluates the real checkpoint and the
box space the family documents; :func:`check_box_space` compares the preset's declared space and
resize rule with what the built processor really does, so IoU is computed in the right space.

Families whose processor needs torchvision (a video processor, or Pixtral's processor class) say so
(``needs_torchvision``); they build in an environment with torchvision (``scripts/setup_vision.sh``).
Nothing is downloaded. Same seed -> same files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.models.base import BoxSpace
from medr2.registry import Registry

VOCAB = 640
TEXT = {"hidden": 64, "layers": 2, "heads": 2, "inter": 128}  # head size 32 (vLLM needs >= 32)


@dataclass(frozen=True)
class Family:
    """One architecture: how to build its tiny checkpoint and which conventions it must satisfy."""

    name: str
    title: str
    model_type: str  # config.model_type of the built (and the real) checkpoint
    preset: str  # medr2 preset used for the real checkpoint
    box_space: BoxSpace  # the box space the family documents (or medr2 assumes, see docs/models.md)
    box_source: str
    examples: tuple[str, ...]
    build: Callable[[Path, int], None]
    image_token: str  # the placeholder whose count in input_ids is the image's token cost
    template_image: str  # what the chat template writes where an image part is
    needs_torchvision: bool = False
    torchvision_reason: str = ""
    notes: str = ""


FAMILIES: Registry[Family] = Registry("family", field="--family")


def register_family(f: Family) -> Family:
    """Register a model family under its ``name`` (a taken name is refused)."""
    return FAMILIES.register(f.name, f)


def get_family(name: str) -> Family:
    return FAMILIES.lookup(name)


def torchvision_available() -> bool:
    """Whether torchvision imports beside this torch (PyPI's torchvision fails beside torch +cpu)."""
    try:
        import torchvision  # noqa: F401
        from torchvision.ops import nms  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means: not usable here
        return False
    return True


def build_family(name: str, out_dir: Path | str, seed: int = 0) -> Path:
    """Build family ``name``'s tiny checkpoint into ``out_dir``; return the folder."""
    fam = get_family(name)
    if fam.needs_torchvision and not torchvision_available():
        raise BadInput(f"family {name!r} needs torchvision ({fam.torchvision_reason}); it is not importable here: "
                       "run scripts/setup_vision.sh and use .venv-vision", field="--family")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fam.build(out, seed)
    from medr2.records import canonical_json

    (out / "medr2_family.json").write_text(canonical_json(
        {"kind": "medr2-tiny-family", "family": name, "model_type": fam.model_type, "preset": fam.preset,
         "seed": seed}) + "\n", encoding="utf-8")
    return out


# ---------------------------------------------------------------------------------------------
# shared pieces


def _tokenizer(special: Sequence[str], template: str, *, eos: str, pad: str, bos: str | None = None,
               extra: dict[str, str] | None = None, vocab: int = VOCAB, unk: str | None = None) -> Any:
    """A byte-level BPE trained on medr2's prompt corpus, with the family's special tokens first."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    from medr2.models.tiny import training_corpus

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    uniq = list(dict.fromkeys(special))
    trainer = trainers.BpeTrainer(vocab_size=vocab + len(uniq), special_tokens=uniq,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(training_corpus(), trainer=trainer)
    kw: dict[str, Any] = {"eos_token": eos, "pad_token": pad, "padding_side": "left", "chat_template": template,
                          "model_max_length": 4096}
    if bos:
        kw["bos_token"] = bos
    if unk:
        kw["unk_token"] = unk
    if extra:
        kw["extra_special_tokens"] = extra
    return PreTrainedTokenizerFast(tokenizer_object=tok, **kw)


def chat_template(*, turn: dict[str, tuple[str, str]], image: str, generation: str, bos: str = "",
                  system: str = "turn", default_system: str | None = None, images_first: bool = False,
                  text_sep: str = "") -> str:
    """A Jinja chat template in a family's documented layout.

    ``turn[role] = (prefix, suffix)`` around each message; ``image`` is what an image part becomes;
    ``system``: "turn" (its own turn), "merge" (prepended to the first user turn, as Gemma does);
    ``default_system`` is rendered when the conversation has none (Qwen2-VL); ``images_first`` writes a
    message's images before its text (LLaVA-1.5, Llama 3.2 Vision). What the assistant says (its text and
    end-of-turn suffix) sits in ``{% generation %}`` markers, which render nothing at inference and give TRL's
    assistant-only loss its mask (``medr2 finetune``)."""
    def esc(s: str) -> str:
        return s.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")

    def content(var: str) -> str:
        img = f"{{{{- '{esc(image)}' -}}}}"
        parts = (f"{{%- for p in {var}['content'] if p['type'] == 'image' -%}}{img}{{%- endfor -%}}"
                 f"{{%- for p in {var}['content'] if p['type'] == 'text' -%}}{{{{- p['text'] -}}}}{{%- endfor -%}}"
                 if images_first else
                 f"{{%- for p in {var}['content'] -%}}{{%- if p['type'] == 'image' -%}}{{{{- '{esc(image)}' -}}}}"
                 f"{{%- elif p['type'] == 'text' -%}}{{{{- p['text'] -}}}}{{%- endif -%}}{{%- endfor -%}}")
        return (f"{{%- if {var}['content'] is string -%}}{{{{- {var}['content'] -}}}}{{%- else -%}}{parts}"
                "{%- endif -%}")

    def body(r: str, suf: str) -> str:  # what the assistant says is marked for TRL's assistant-only loss
        text = f"{content('m')}{{{{- '{esc(suf)}' -}}}}"
        return f"{{%- generation -%}}{text}{{%- endgeneration -%}}" if r == "assistant" else text

    roles = "".join(
        f"{{%- {'if' if i == 0 else 'elif'} m['role'] == '{r}' -%}}{{{{- '{esc(pre)}' -}}}}{body(r, suf)}"
        for i, (r, (pre, suf)) in enumerate(turn.items())) + "{%- endif -%}"
    t = f"{{{{- '{esc(bos)}' -}}}}" if bos else ""
    if system == "merge":
        t += ("{%- if messages[0]['role'] == 'system' -%}{%- set sys = messages[0] -%}"
              "{%- set msgs = messages[1:] -%}{%- else -%}{%- set sys = none -%}"
              "{%- set msgs = messages -%}{%- endif -%}"
              "{%- set ns = namespace(first=true) -%}{%- for m in msgs -%}"
              "{%- if m['role'] == 'user' and ns.first and sys is not none -%}"
              f"{{{{- '{esc(turn['user'][0])}' -}}}}{content('sys')}{{{{- '\\n\\n' -}}}}{content('m')}"
              f"{{{{- '{esc(turn['user'][1])}' -}}}}{{%- else -%}}{roles}{{%- endif -%}}"
              "{%- if m['role'] == 'user' -%}{%- set ns.first = false -%}{%- endif -%}{%- endfor -%}")
    else:
        if default_system is not None:
            pre, suf = turn["system"]
            t += (f"{{%- if messages[0]['role'] != 'system' -%}}{{{{- '{esc(pre + default_system + suf)}' -}}}}"
                  "{%- endif -%}")
        t += f"{{%- for m in messages -%}}{roles}{{%- endfor -%}}"
    t += f"{{%- if add_generation_prompt -%}}{{{{- '{esc(generation)}' -}}}}{{%- endif -%}}"
    return t


def _save(out: Path, model: Any, processor: Any, tokenizer: Any) -> None:
    from transformers import GenerationConfig

    eos = tokenizer.eos_token_id
    model.generation_config = GenerationConfig(bos_token_id=tokenizer.bos_token_id, eos_token_id=eos,
                                               pad_token_id=tokenizer.pad_token_id, do_sample=False,
                                               max_new_tokens=32)
    model.eval()
    model.save_pretrained(out)
    processor.save_pretrained(out)


def _seeded(seed: int, cls: Any, config: Any) -> Any:
    import torch

    torch.manual_seed(seed)
    return cls(config)


def _text_kw(tok: Any, **kw: Any) -> dict[str, Any]:
    """The tiny text decoder's settings (sizes from ``TEXT``, the tokenizer's vocabulary and special ids);
    ``kw`` adds or overrides (a family's head_dim, sliding window, rope, fewer key/value heads)."""
    return {"vocab_size": len(tok), "hidden_size": TEXT["hidden"], "intermediate_size": TEXT["inter"],
            "num_hidden_layers": TEXT["layers"], "num_attention_heads": TEXT["heads"],
            "num_key_value_heads": TEXT["heads"], "max_position_embeddings": 4096,
            "bos_token_id": tok.bos_token_id, "eos_token_id": tok.eos_token_id, "pad_token_id": tok.pad_token_id,
            **kw}


def _llama_text(tok: Any, **kw: Any) -> Any:
    from transformers import LlamaConfig

    return LlamaConfig(**_text_kw(tok, tie_word_embeddings=False, **kw))


def _qwen2_text(tok: Any, **kw: Any) -> Any:
    from transformers import Qwen2Config

    return Qwen2Config(**_text_kw(tok, tie_word_embeddings=False, **kw))


def _siglip(image_size: int, patch: int, **kw: Any) -> Any:
    from transformers import SiglipVisionConfig

    return SiglipVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                              image_size=image_size, patch_size=patch, **kw)


CHATML = {"system": ("<|im_start|>system\n", "<|im_end|>\n"), "user": ("<|im_start|>user\n", "<|im_end|>\n"),
          "assistant": ("<|im_start|>assistant\n", "<|im_end|>\n")}


# ---------------------------------------------------------------------------------------------
# LLaVA 1.5 (LLaVA-Med, HuatuoGPT-Vision): CLIP + Llama, (S/p)^2 image tokens per image

LLAVA15_TEMPLATE = chat_template(
    turn={"system": ("", "\n"), "user": ("USER: ", " "), "assistant": ("ASSISTANT: ", "</s>")},
    image="<image>\n", generation="ASSISTANT:", images_first=True)


def _build_llava(out: Path, seed: int) -> None:
    from transformers import LlavaForConditionalGeneration

    from medr2.models.tiny import TinySpec, build_config, build_processor

    spec = TinySpec(image_size=32, patch_size=16, vision_hidden=32, vision_layers=1, text_hidden=64, text_layers=2,
                    text_heads=2, text_intermediate=128)
    tok = _tokenizer(["<unk>", "<s>", "</s>", "<pad>", "<image>"], LLAVA15_TEMPLATE, bos="<s>", eos="</s>",
                     pad="<pad>", unk="<unk>", extra={"image_token": "<image>"})
    proc = build_processor(spec, tok)  # medr2.models.tiny's processor: PIL CLIP resize to 32x32, no crop
    proc.chat_template = LLAVA15_TEMPLATE
    model = _seeded(seed, LlavaForConditionalGeneration, build_config(spec, tok))
    _save(out, model, proc, tok)


register_family(Family(
    "llava-1.5", "LLaVA 1.5 (LLaVA-Med v1.5, HuatuoGPT-Vision architecture)", "llava", "llava-med", "unit",
    "LLaVA-1.5 paper arXiv:2310.03744 (boxes as 0-1 fractions, 3 decimals)",
    ("llava-hf/llava-1.5-7b-hf", "microsoft/llava-med-v1.5-mistral-7b"), _build_llava, "<image>", "<image>\n",
    notes="CLIP 32 px, patch 16 -> 4 image tokens; template USER:/ASSISTANT: as llava-hf's chat_template."))


# ---------------------------------------------------------------------------------------------
# Gemma 3 (MedGemma): SigLIP at a fixed size, pooled to mm_tokens_per_image soft tokens

GEMMA_TURN = {"user": ("<start_of_turn>user\n", "<end_of_turn>\n"),
              "assistant": ("<start_of_turn>model\n", "<end_of_turn>\n"),
              "system": ("<start_of_turn>user\n", "<end_of_turn>\n")}
GEMMA3_TEMPLATE = chat_template(turn=GEMMA_TURN, image="<start_of_image>", generation="<start_of_turn>model\n",
                                bos="<bos>", system="merge")


def _build_gemma3(out: Path, seed: int) -> None:
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3Processor, Gemma3TextConfig
    from transformers.models.gemma3 import Gemma3ImageProcessorPil

    special = ["<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>",
               "<end_of_image>", "<image_soft_token>"]
    tok = _tokenizer(special, GEMMA3_TEMPLATE, bos="<bos>", eos="<end_of_turn>", pad="<pad>", unk="<unk>",
                     extra={"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>",
                            "image_token": "<image_soft_token>"})
    # Gemma's SentencePiece vocabulary has runs of 1-4 newlines as single pieces, and vLLM's Gemma 3 processor
    # looks them up by their literal text (``vocab["\n\n"]``); the byte-level BPE spells a newline "Ċ", so the
    # runs are added as whole tokens (without them vLLM fails with ``KeyError: '\n'``).
    from tokenizers import AddedToken

    tok.add_tokens([AddedToken("\n" * k, normalized=False, special=False) for k in range(1, 5)])
    ip = Gemma3ImageProcessorPil(size={"height": 32, "width": 32}, do_pan_and_scan=False)
    proc = Gemma3Processor(image_processor=ip, tokenizer=tok, image_seq_length=4, chat_template=GEMMA3_TEMPLATE)
    text = Gemma3TextConfig(**_text_kw(tok, num_key_value_heads=1, head_dim=32, query_pre_attn_scalar=32,
                                       sliding_window=64))
    ids = tok.convert_tokens_to_ids
    cfg = Gemma3Config(text_config=text, vision_config=_siglip(32, 8, vision_use_head=False), mm_tokens_per_image=4,
                       boi_token_index=ids("<start_of_image>"), eoi_token_index=ids("<end_of_image>"),
                       image_token_index=ids("<image_soft_token>"))
    _save(out, _seeded(seed, Gemma3ForConditionalGeneration, cfg), proc, tok)


register_family(Family(
    "gemma3", "Gemma 3 (MedGemma)", "gemma3", "medgemma", "thousand",
    "Gemma 3 / PaliGemma detection: 0-1000 (1024 loc bins), y-first; medr2 asks x-first (uncertain, docs/models.md)",
    ("google/medgemma-4b-it", "google/gemma-3-4b-it"), _build_gemma3, "<image_soft_token>", "<start_of_image>",
    notes="SigLIP 32 px, patch 8 (16 patches) average-pooled to 4 soft tokens (real: 896 px -> 256)."))


# ---------------------------------------------------------------------------------------------
# Llama 3.2 Vision (mllama): tiles + cross-attention; ONE <|image|> token per image in the text

MLLAMA_TEMPLATE = chat_template(
    turn={r: (f"<|start_header_id|>{r}<|end_header_id|>\n\n", "<|eot_id|>") for r in ("system", "user", "assistant")},
    image="<|image|>", generation="<|start_header_id|>assistant<|end_header_id|>\n\n", bos="<|begin_of_text|>",
    images_first=True)


def _build_mllama(out: Path, seed: int) -> None:
    from transformers import (
        MllamaConfig,
        MllamaForConditionalGeneration,
        MllamaProcessor,
        MllamaTextConfig,
        MllamaVisionConfig,
    )
    from transformers.models.mllama import MllamaImageProcessorPil

    special = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>",
               "<|finetune_right_pad_id|>", "<|python_tag|>", "<|image|>"]
    tok = _tokenizer(special, MLLAMA_TEMPLATE, bos="<|begin_of_text|>", eos="<|eot_id|>",
                     pad="<|finetune_right_pad_id|>", extra={"image_token": "<|image|>"})
    ip = MllamaImageProcessorPil(size={"height": 16, "width": 16}, max_image_tiles=4)
    proc = MllamaProcessor(image_processor=ip, tokenizer=tok, chat_template=MLLAMA_TEMPLATE)
    vision = MllamaVisionConfig(hidden_size=32, num_hidden_layers=2, num_global_layers=1, attention_heads=2,
                                intermediate_size=64, vision_output_dim=64, image_size=16, patch_size=8,
                                max_num_tiles=4, intermediate_layers_indices=[0])
    text = MllamaTextConfig(**_text_kw(tok, cross_attention_layers=[1]))
    cfg = MllamaConfig(vision_config=vision, text_config=text, image_token_index=tok.convert_tokens_to_ids("<|image|>"))
    _save(out, _seeded(seed, MllamaForConditionalGeneration, cfg), proc, tok)


register_family(Family(
    "mllama", "Llama 3.2 Vision (mllama)", "mllama", "llama-3.2-vision", "unit",
    "no documented box format (Llama 3.2 Vision model card); 0-1 fractions assumed",
    ("meta-llama/Llama-3.2-11B-Vision-Instruct",), _build_mllama, "<|image|>", "<|image|>",
    notes="Tiles of 16 px, up to 4 per image; the text holds one <|image|> per image, the tiles enter by "
          "cross-attention (real: 560 px tiles)."))


# ---------------------------------------------------------------------------------------------
# Idefics3 / SmolVLM: longest edge resized, split into tiles + a global image, pixel-shuffled

IDEFICS_TURN = {"system": ("System: ", "<end_of_utterance>\n"), "user": ("User:", "<end_of_utterance>\n"),
                "assistant": ("Assistant: ", "<end_of_utterance>\n")}
IDEFICS3_TEMPLATE = chat_template(turn=IDEFICS_TURN, image="<image>", generation="Assistant:", bos="<|begin_of_text|>")
_IDEFICS_SPECIAL = (["<fake_token_around_image>", "<image>", "<end_of_utterance>", "<global-img>"]
                    + [f"<row_{i + 1}_col_{j + 1}>" for i in range(6) for j in range(6)])


def _build_idefics3(out: Path, seed: int) -> None:
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor, Idefics3VisionConfig
    from transformers.models.idefics3 import Idefics3ImageProcessorPil

    special = ["<|begin_of_text|>", "<|end_of_text|>", "<|finetune_right_pad_id|>", *_IDEFICS_SPECIAL]
    tok = _tokenizer(special, IDEFICS3_TEMPLATE, bos="<|begin_of_text|>", eos="<end_of_utterance>",
                     pad="<|finetune_right_pad_id|>")
    _save_idefics(out, seed, tok, IDEFICS3_TEMPLATE, image_processor=Idefics3ImageProcessorPil,
                  processor=Idefics3Processor, vision=Idefics3VisionConfig, config=Idefics3Config,
                  model=Idefics3ForConditionalGeneration)


def _save_idefics(out: Path, seed: int, tok: Any, template: str, *, image_processor: Any, processor: Any,
                  vision: Any, config: Any, model: Any, **processor_kw: Any) -> None:
    """The Idefics3 layout (shared by SmolVLM): longest edge 64, tiles of 32, 16 patches of 8 pixel-shuffled
    by 2 -> 4 tokens per tile, a Llama text decoder; ``processor_kw`` adds to the processor's arguments."""
    ip = image_processor(size={"longest_edge": 64}, max_image_size={"longest_edge": 32})
    proc = processor(image_processor=ip, tokenizer=tok, image_seq_len=4, chat_template=template, **processor_kw)
    vcfg = vision(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, image_size=32,
                  patch_size=8)
    cfg = config(vision_config=vcfg, text_config=_llama_text(tok), scale_factor=2,
                 image_token_id=tok.convert_tokens_to_ids("<image>"))
    _save(out, _seeded(seed, model, cfg), proc, tok)


register_family(Family(
    "idefics3", "Idefics3", "idefics3", "idefics3", "unit",
    "no documented box format (Idefics3 paper arXiv:2408.12637); 0-1 fractions assumed",
    ("HuggingFaceM4/Idefics3-8B-Llama3",), _build_idefics3, "<image>", "<image>",
    notes="Longest edge 64, tiles of 32 (+ a global image), 16 patches pixel-shuffled by 2 -> 4 tokens per tile."))


# ---------------------------------------------------------------------------------------------
# Aya Vision: SigLIP tiles (GotOcr2 crop_to_patches: closest aspect grid + thumbnail), downsampled

AYA_TEMPLATE = chat_template(
    turn={"system": ("<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>", "<|END_OF_TURN_TOKEN|>"),
          "user": ("<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|END_OF_TURN_TOKEN|>"),
          "assistant": ("<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_RESPONSE|>",
                        "<|END_RESPONSE|><|END_OF_TURN_TOKEN|>")},
    image="<image>", generation="<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_RESPONSE|>", bos="<BOS_TOKEN>")


def _build_aya(out: Path, seed: int) -> None:
    from transformers import AyaVisionConfig, AyaVisionForConditionalGeneration, AyaVisionProcessor, Cohere2Config
    from transformers.models.got_ocr2 import GotOcr2ImageProcessorPil

    special = ["<PAD>", "<UNK>", "<BOS_TOKEN>", "<EOS_TOKEN>", "<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>",
               "<|USER_TOKEN|>", "<|CHATBOT_TOKEN|>", "<|SYSTEM_TOKEN|>", "<|START_RESPONSE|>", "<|END_RESPONSE|>",
               "<image>", "<|START_OF_IMG|>", "<|END_OF_IMG|>", "<|IMG_PATCH|>", "<|IMG_LINE_BREAK|>"]
    tok = _tokenizer(special, AYA_TEMPLATE, bos="<BOS_TOKEN>", eos="<|END_OF_TURN_TOKEN|>", pad="<PAD>",
                     unk="<UNK>", extra={"image_token": "<image>"})
    ip = GotOcr2ImageProcessorPil(size={"height": 32, "width": 32}, crop_to_patches=True, min_patches=1,
                                  max_patches=4)
    # patch_size here is the vision patch times the downsample factor (8 x 2), as the real checkpoint's 28 (14 x 2)
    proc = AyaVisionProcessor(image_processor=ip, tokenizer=tok, patch_size=16, img_size=32, downsample_factor=1,
                              chat_template=AYA_TEMPLATE)
    text = Cohere2Config(**_text_kw(tok, sliding_window=64))
    cfg = AyaVisionConfig(vision_config=_siglip(32, 8, vision_use_head=False), text_config=text, downsample_factor=2,
                          image_token_index=tok.convert_tokens_to_ids("<|IMG_PATCH|>"))
    _save(out, _seeded(seed, AyaVisionForConditionalGeneration, cfg), proc, tok)


register_family(Family(
    "aya-vision", "Aya Vision", "aya_vision", "aya-vision", "unit",
    "no documented box format (Aya Vision model card); 0-1 fractions assumed",
    ("CohereLabs/aya-vision-8b",), _build_aya, "<|IMG_PATCH|>", "<image>",
    notes="Tiles of 32 px (1-4 by closest aspect ratio, + a thumbnail when more than one), 16 patches "
          "downsampled by 2 -> 4 tokens per tile (real: 364 px tiles, up to 12)."))


# ---------------------------------------------------------------------------------------------
# families whose processor needs torchvision (a video processor; Pixtral's processor class)

_VIDEO = "its transformers processor carries a video processor, which needs torchvision"


def _qwen_tokenizer(template: str) -> Any:
    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<|vision_end|>",
               "<|image_pad|>", "<|video_pad|>", "<|box_start|>", "<|box_end|>", "<|object_ref_start|>",
               "<|object_ref_end|>"]
    return _tokenizer(special, template, eos="<|im_end|>", pad="<|endoftext|>",
                      extra={"image_token": "<|image_pad|>", "video_token": "<|video_pad|>",
                             "vision_bos_token": "<|vision_start|>", "vision_eos_token": "<|vision_end|>"})


QWEN_IMAGE = "<|vision_start|><|image_pad|><|vision_end|>"
QWEN2VL_TEMPLATE = chat_template(turn=CHATML, image=QWEN_IMAGE,
                                 generation="<|im_start|>assistant\n", default_system="You are a helpful assistant.")
QWEN3VL_TEMPLATE = chat_template(turn=CHATML, image=QWEN_IMAGE, generation="<|im_start|>assistant\n")
QWEN_PIXELS = {"min_pixels": 56 * 56, "max_pixels": 28 * 28 * 16384}  # the real checkpoints' processor limits


def _mrope(section: list[int], **extra: Any) -> dict[str, Any]:
    """Multimodal rope settings (temporal, height, width sections of the rotary half-dimension)."""
    return {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": section, **extra}


def _build_qwen(out: Path, seed: int, *, config: Any, model: Any, processor: Any, video: str, template: str,
                patch: int, pixels: dict[str, int], vision: dict[str, Any], text: dict[str, Any]) -> None:
    """A Qwen-VL checkpoint: Qwen's tokenizer, the smart-resize image processor (patch ``patch``, 2x2 merge)
    with the named video processor class, a Qwen text decoder (``text`` adds to its settings) and ``vision``."""
    import transformers
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    tok = _qwen_tokenizer(template)
    ip = Qwen2VLImageProcessorPil(min_pixels=pixels["min_pixels"], max_pixels=pixels["max_pixels"], patch_size=patch,
                                  merge_size=2, temporal_patch_size=2)
    vp = getattr(transformers, video)(patch_size=patch, temporal_patch_size=2, merge_size=2)
    proc = processor(image_processor=ip, tokenizer=tok, video_processor=vp, chat_template=template)
    ids = tok.convert_tokens_to_ids
    cfg = config(text_config=_text_kw(tok, **text), vision_config=vision, image_token_id=ids("<|image_pad|>"),
                 video_token_id=ids("<|video_pad|>"), vision_start_token_id=ids("<|vision_start|>"),
                 vision_end_token_id=ids("<|vision_end|>"), tie_word_embeddings=False)
    _save(out, _seeded(seed, model, cfg), proc, tok)


def _build_qwen2vl(out: Path, seed: int) -> None:
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor

    _build_qwen(out, seed, config=Qwen2VLConfig, model=Qwen2VLForConditionalGeneration, processor=Qwen2VLProcessor,
                video="Qwen2VLVideoProcessor", template=QWEN2VL_TEMPLATE, patch=14, pixels=QWEN_PIXELS,
                text={"rope_parameters": _mrope([4, 6, 6])},
                vision=dict(depth=1, embed_dim=32, hidden_size=64, num_heads=2, mlp_ratio=2, patch_size=14,
                            spatial_merge_size=2, temporal_patch_size=2, in_channels=3))


def _build_qwen25vl(out: Path, seed: int) -> None:
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor

    _build_qwen(out, seed, config=Qwen2_5_VLConfig, model=Qwen2_5_VLForConditionalGeneration,
                processor=Qwen2_5_VLProcessor, video="Qwen2VLVideoProcessor", template=QWEN2VL_TEMPLATE, patch=14,
                pixels=QWEN_PIXELS, text={"rope_parameters": _mrope([4, 6, 6])},
                vision=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                            patch_size=14, spatial_merge_size=2, temporal_patch_size=2, window_size=56,
                            fullatt_block_indexes=[1], in_channels=3))


def _build_qwen3vl(out: Path, seed: int) -> None:
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration, Qwen3VLProcessor

    _build_qwen(out, seed, config=Qwen3VLConfig, model=Qwen3VLForConditionalGeneration, processor=Qwen3VLProcessor,
                video="Qwen3VLVideoProcessor", template=QWEN3VL_TEMPLATE, patch=16,
                pixels={"min_pixels": 32 * 32 * 4, "max_pixels": 32 * 32 * 16},
                text={"head_dim": 32, "rope_parameters": _mrope([4, 6, 6], mrope_interleaved=True)},
                vision=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                            patch_size=16, spatial_merge_size=2, temporal_patch_size=2, num_position_embeddings=64,
                            deepstack_visual_indexes=[0], in_channels=3))


register_family(Family(
    "qwen2-vl", "Qwen2-VL", "qwen2_vl", "qwen2-vl", "thousand",
    "Qwen2-VL report arXiv:2409.12191 (boxes normalised to [0, 1000))", ("Qwen/Qwen2-VL-7B-Instruct",),
    _build_qwen2vl, "<|image_pad|>", QWEN_IMAGE,
    needs_torchvision=True, torchvision_reason=_VIDEO,
    notes="Smart resize to multiples of 28 within the real 56*56 .. 28*28*16384 pixels."))
register_family(Family(
    "qwen2.5-vl", "Qwen2.5-VL (Lingshu architecture)", "qwen2_5_vl", "qwen2.5-vl", "pixel",
    "Qwen2.5-VL: absolute pixels of the smart-resized input (QwenLM/Qwen3-VL issues 676, 721)",
    ("Qwen/Qwen2.5-VL-7B-Instruct", "lingshu-medical-mllm/Lingshu-7B"), _build_qwen25vl, "<|image_pad|>",
    QWEN_IMAGE,
    needs_torchvision=True, torchvision_reason=_VIDEO,
    notes="The real min/max pixels (56*56 .. 28*28*16384): the tiny build is checked against the real preset."))
register_family(Family(
    "qwen3-vl", "Qwen3-VL", "qwen3_vl", "qwen3-vl", "thousand",
    "Qwen3-VL: relative 0-1000 (QwenLM/Qwen3-VL issue 1741)", ("Qwen/Qwen3-VL-8B-Instruct",),
    _build_qwen3vl, "<|image_pad|>", QWEN_IMAGE,
    needs_torchvision=True, torchvision_reason=_VIDEO,
    notes="Patch 16 x merge 2: sides multiples of 32."))


def _build_internvl(out: Path, seed: int) -> None:
    from transformers import (
        InternVLConfig,
        InternVLForConditionalGeneration,
        InternVLProcessor,
        InternVLVideoProcessor,
        InternVLVisionConfig,
    )
    from transformers.models.got_ocr2 import GotOcr2ImageProcessorPil

    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<img>", "</img>", "<IMG_CONTEXT>", "<video>",
               "<ref>", "</ref>", "<box>", "</box>"]
    tok = _tokenizer(special, INTERNVL_TEMPLATE, eos="<|im_end|>", pad="<|endoftext|>",
                     extra={"start_image_token": "<img>", "end_image_token": "</img>",
                            "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"})
    ip = GotOcr2ImageProcessorPil(size={"height": 32, "width": 32}, crop_to_patches=True, min_patches=1,
                                  max_patches=4)
    proc = InternVLProcessor(image_processor=ip, tokenizer=tok, video_processor=InternVLVideoProcessor(
        size={"height": 32, "width": 32}), image_seq_length=4, chat_template=INTERNVL_TEMPLATE)
    vision = InternVLVisionConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                                  image_size=[32, 32], patch_size=[8, 8])
    cfg = InternVLConfig(vision_config=vision, text_config=_qwen2_text(tok), image_seq_length=4,
                         downsample_ratio=0.5, image_token_id=tok.convert_tokens_to_ids("<IMG_CONTEXT>"),
                         tie_word_embeddings=False)
    _save(out, _seeded(seed, InternVLForConditionalGeneration, cfg), proc, tok)


INTERNVL_TEMPLATE = chat_template(turn=CHATML, image="<IMG_CONTEXT>\n", generation="<|im_start|>assistant\n")
SMOLVLM_TEMPLATE = chat_template(turn=IDEFICS_TURN, image="<image>", generation="Assistant:", bos="<|im_start|>")


def _build_smolvlm(out: Path, seed: int) -> None:
    from transformers import (
        SmolVLMConfig,
        SmolVLMForConditionalGeneration,
        SmolVLMProcessor,
        SmolVLMVideoProcessor,
        SmolVLMVisionConfig,
    )
    from transformers.models.smolvlm import SmolVLMImageProcessorPil

    special = ["<|im_start|>", "<|im_end|>", "<|endoftext|>", *_IDEFICS_SPECIAL]
    tok = _tokenizer(special, SMOLVLM_TEMPLATE, bos="<|im_start|>", eos="<end_of_utterance>", pad="<|endoftext|>",
                     extra={"image_token": "<image>", "fake_image_token": "<fake_token_around_image>",
                            "global_image_token": "<global-img>", "end_of_utterance_token": "<end_of_utterance>"})
    vp = SmolVLMVideoProcessor(size={"longest_edge": 32}, max_image_size={"longest_edge": 32})
    _save_idefics(out, seed, tok, SMOLVLM_TEMPLATE, image_processor=SmolVLMImageProcessorPil,
                  processor=SmolVLMProcessor, vision=SmolVLMVisionConfig, config=SmolVLMConfig,
                  model=SmolVLMForConditionalGeneration, video_processor=vp)


GLM4V_TEMPLATE = chat_template(
    turn={"system": ("<|system|>\n", ""), "user": ("<|user|>\n", ""), "assistant": ("<|assistant|>\n", "")},
    image="<|begin_of_image|><|image|><|end_of_image|>", generation="<|assistant|>\n", bos="[gMASK]<sop>")


def _build_glm4v(out: Path, seed: int) -> None:
    from transformers import Glm4vConfig, Glm4vForConditionalGeneration, Glm4vProcessor, Glm4vVideoProcessor
    from transformers.models.glm4v import Glm4vImageProcessorPil

    special = ["<|endoftext|>", "[MASK]", "[gMASK]", "[sMASK]", "<sop>", "<eop>", "<|system|>", "<|user|>",
               "<|assistant|>", "<|observation|>", "<|begin_of_image|>", "<|end_of_image|>", "<|begin_of_video|>",
               "<|end_of_video|>", "<|image|>", "<|video|>", "<|begin_of_box|>", "<|end_of_box|>"]
    tok = _tokenizer(special, GLM4V_TEMPLATE, eos="<|user|>", pad="<|endoftext|>",
                     extra={"image_token": "<|image|>", "video_token": "<|video|>"})
    ip = Glm4vImageProcessorPil(  # type: ignore[call-arg]  # its **kwargs take the patch settings
        size={"shortest_edge": 112 * 112, "longest_edge": 28 * 28 * 15000}, patch_size=14, temporal_patch_size=2,
        merge_size=2)
    proc = Glm4vProcessor(image_processor=ip, tokenizer=tok, video_processor=Glm4vVideoProcessor(),
                          chat_template=GLM4V_TEMPLATE)
    ids = tok.convert_tokens_to_ids
    text = _text_kw(tok, rope_parameters=_mrope([2, 3, 3], partial_rotary_factor=0.5))  # rotary dim 16: sum 8
    vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64, patch_size=14,
                  spatial_merge_size=2, temporal_patch_size=2, image_size=28, in_channels=3)
    cfg = Glm4vConfig(text_config=text, vision_config=vision, image_token_id=ids("<|image|>"),
                      video_token_id=ids("<|video|>"), image_start_token_id=ids("<|begin_of_image|>"),
                      image_end_token_id=ids("<|end_of_image|>"), video_start_token_id=ids("<|begin_of_video|>"),
                      video_end_token_id=ids("<|end_of_video|>"), tie_word_embeddings=False)
    _save(out, _seeded(seed, Glm4vForConditionalGeneration, cfg), proc, tok)


MISTRAL3_TEMPLATE = chat_template(
    turn={"system": ("[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"), "user": ("[INST]", "[/INST]"),
          "assistant": ("", "</s>")},
    image="[IMG]", generation="", bos="<s>")


def _build_mistral3(out: Path, seed: int) -> None:
    from transformers import (
        Mistral3Config,
        Mistral3ForConditionalGeneration,
        MistralConfig,
        PixtralProcessor,
        PixtralVisionConfig,
    )
    from transformers.models.pixtral import PixtralImageProcessorPil

    special = ["<unk>", "<s>", "</s>", "<pad>", "[INST]", "[/INST]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[IMG]",
               "[IMG_BREAK]", "[IMG_END]"]
    tok = _tokenizer(special, MISTRAL3_TEMPLATE, bos="<s>", eos="</s>", pad="<pad>", unk="<unk>",
                     extra={"image_token": "[IMG]"})
    # the image processor resizes to multiples of patch x merge (8 x 2), the processor counts merged tokens
    ip = PixtralImageProcessorPil(size={"longest_edge": 64}, patch_size={"height": 16, "width": 16})
    proc = PixtralProcessor(image_processor=ip, tokenizer=tok, patch_size=8, spatial_merge_size=2,
                            chat_template=MISTRAL3_TEMPLATE)
    vision = PixtralVisionConfig(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=1,
                                 head_dim=32, image_size=64, patch_size=8)  # type: ignore[call-arg]
    text = MistralConfig(**_text_kw(tok, head_dim=32, sliding_window=None, tie_word_embeddings=False))
    cfg = Mistral3Config(vision_config=vision, text_config=text, spatial_merge_size=2, vision_feature_layer=-1,
                         image_token_index=tok.convert_tokens_to_ids("[IMG]"))
    _save(out, _seeded(seed, Mistral3ForConditionalGeneration, cfg), proc, tok)


LLAVA_OV_TEMPLATE = chat_template(turn=CHATML, image="<image>\n", generation="<|im_start|>assistant\n",
                                  images_first=True)
LLAVA_OV_PINPOINTS = [[32, 32], [32, 64], [32, 96], [64, 32], [64, 64], [96, 32]]


def _build_llava_onevision(out: Path, seed: int) -> None:
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionProcessor,
        LlavaOnevisionVideoProcessor,
    )
    from transformers.models.llava_onevision import LlavaOnevisionImageProcessorPil

    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<image>", "<video>"]
    tok = _tokenizer(special, LLAVA_OV_TEMPLATE, eos="<|im_end|>", pad="<|endoftext|>",
                     extra={"image_token": "<image>", "video_token": "<video>"})
    ip = LlavaOnevisionImageProcessorPil(size={"height": 32, "width": 32}, image_grid_pinpoints=LLAVA_OV_PINPOINTS)
    vp = LlavaOnevisionVideoProcessor(size={"height": 32, "width": 32})
    proc = LlavaOnevisionProcessor(image_processor=ip, tokenizer=tok, video_processor=vp, num_image_tokens=16,
                                   vision_feature_select_strategy="full", chat_template=LLAVA_OV_TEMPLATE,
                                   vision_aspect_ratio="anyres_max_9")
    ids = tok.convert_tokens_to_ids
    cfg = LlavaOnevisionConfig(vision_config=_siglip(32, 8, vision_use_head=False), text_config=_qwen2_text(tok),
                               image_token_index=ids("<image>"), video_token_index=ids("<video>"),
                               vision_feature_select_strategy="full", vision_feature_layer=-1,
                               image_grid_pinpoints=LLAVA_OV_PINPOINTS, vision_aspect_ratio="anyres_max_9")
    _save(out, _seeded(seed, LlavaOnevisionForConditionalGeneration, cfg), proc, tok)


register_family(Family(
    "llava-onevision", "LLaVA-OneVision", "llava_onevision", "llava-onevision", "unit",
    "no documented box format (LLaVA-OneVision paper arXiv:2408.03326); 0-1 fractions as LLaVA-1.5 (uncertain)",
    ("llava-hf/llava-onevision-qwen2-7b-ov-hf",), _build_llava_onevision, "<image>", "<image>\n",
    needs_torchvision=True, torchvision_reason=_VIDEO,
    notes="AnyRes: a 32 px base view (16 tokens) plus the best-fitting grid of 32 px crops, unpadded, one newline "
          "token per row (real: 384 px, grids up to 6x6, anyres_max_9)."))
register_family(Family(
    "internvl", "InternVL 3 / 3.5 (native transformers InternVL)", "internvl", "internvl", "thousand",
    "InternVL docs: <box>[[x1, y1, x2, y2]]</box> normalised to 0-1000", ("OpenGVLab/InternVL3-8B-hf",),
    _build_internvl, "<IMG_CONTEXT>", "<IMG_CONTEXT>\n", needs_torchvision=True, torchvision_reason=_VIDEO,
    notes="Tiles of 32 px (1-4, closest aspect ratio, + a thumbnail), 16 patches pixel-shuffled by 0.5 -> 4 "
          "tokens per tile (real: 448 px tiles, up to 12, 256 tokens each)."))
register_family(Family(
    "smolvlm", "SmolVLM", "smolvlm", "idefics3", "unit",
    "no documented box format (SmolVLM model card); 0-1 fractions assumed", ("HuggingFaceTB/SmolVLM-Instruct",),
    _build_smolvlm, "<image>", "<image>", needs_torchvision=True, torchvision_reason=_VIDEO,
    notes="Idefics3 layout with SmolVLM's tokens; longest edge 64, tiles of 32 (real: 384)."))
register_family(Family(
    "glm-4v", "GLM-4.1V / GLM-4.5V (glm4v)", "glm4v", "glm-4v", "thousand",
    "GLM-4.5V model card: <|begin_of_box|>[x1, y1, x2, y2]<|end_of_box|> relative 0-1000 (uncertain)",
    ("zai-org/GLM-4.1V-9B-Thinking",), _build_glm4v, "<|image|>", "<|begin_of_image|><|image|><|end_of_image|>",
    needs_torchvision=True, torchvision_reason=_VIDEO,
    notes="Qwen-style patches of 14, 2x2 merge, GLM's own smart resize (min 112*112 pixels)."))
register_family(Family(
    "mistral3", "Mistral 3 (Mistral Small 3.1 / Pixtral vision)", "mistral3", "mistral3", "unit",
    "no documented box format (Mistral Small 3.1 model card); 0-1 fractions assumed",
    ("mistralai/Mistral-Small-3.1-24B-Instruct-2503",), _build_mistral3, "[IMG]", "[IMG]",
    needs_torchvision=True, torchvision_reason="transformers' PixtralProcessor class requires torchvision",
    notes="Longest edge <= 64, sides rounded up to multiples of 16 (patch 8 x merge 2); rows of [IMG] tokens "
          "separated by [IMG_BREAK], closed by [IMG_END]."))


# ---------------------------------------------------------------------------------------------
# vLLM: the families its CPU build (the version scripts/setup_vllm.sh installs) cannot run, and why.
# tests/test_models_families_slow.py checks this against vLLM's own model registry (its supported
# architectures and ``_PREVIOUSLY_SUPPORTED_MODELS``, architecture -> last vLLM version that had it).

VLLM_UNSUPPORTED: dict[str, str] = {
    "mllama": "vLLM dropped MllamaForConditionalGeneration after 0.10.2 (encoder-decoder models went with the "
              "V0 engine; vLLM's registry, _PREVIOUSLY_SUPPORTED_MODELS)",
    "aya-vision": "vLLM dropped AyaVisionForConditionalGeneration after 0.24.0 (vLLM's registry, "
                  "_PREVIOUSLY_SUPPORTED_MODELS)",
}


def vllm_loadable(src: Path | str, dst: Path | str) -> Path:
    """A copy of tiny checkpoint ``src`` in ``dst`` that vLLM loads: the vision-tower keys of LLaVA,
    LLaVA-OneVision and Gemma 3 renamed (``medr2.models.vllm_export``), every other family's folder copied unchanged."""
    import shutil

    from medr2.models.vllm_export import EXPORTABLE, export_for_vllm

    src, dst = Path(src), Path(dst)
    if jsonsafe.load_object(src / "config.json").get("model_type") in EXPORTABLE:
        return export_for_vllm(src, dst)
    shutil.copytree(src, dst)
    return dst

# ---------------------------------------------------------------------------------------------
# the box-space check: the preset's declared convention vs what the processor really does


def processed_input_size(processor: Any, image: Any) -> tuple[int, int] | None:
    """(width, height) of the image the model receives, read from the processor's real output; None
    when the processor tiles the image (no single input size)."""
    enc = processor.image_processor(images=[image], return_tensors="np")
    if "image_grid_thw" in enc:  # Qwen family: grid of patches
        _, gh, gw = (int(v) for v in enc["image_grid_thw"][0])
        patch = int(processor.image_processor.patch_size)
        return gw * patch, gh * patch
    pv = enc["pixel_values"]
    if pv.ndim == 4 and pv.shape[0] == 1:
        return int(pv.shape[-1]), int(pv.shape[-2])
    return None


def check_box_space(preset_name: str, family_name: str, model_dir: Path | str,
                    sizes: Sequence[tuple[int, int]] = ((40, 24), (24, 40), (64, 64))) -> list[str]:
    """Problems (empty when none) between preset ``preset_name`` and the built processor of ``family_name``.

    The preset's box space must be the family's documented one; for pixel boxes, the preset's resize rule
    must give, for each (width, height) in ``sizes``, the input size the processor really produces (the
    space the model's pixel coordinates live in), and the hf adapter's convention read from the processor
    must be the preset's."""
    import numpy as np
    from PIL import Image
    from transformers import AutoProcessor

    from medr2.models.hf import box_convention_for
    from medr2.models.presets import get_preset, model_image_size

    preset, fam = get_preset(preset_name), get_family(family_name)
    problems: list[str] = []
    if preset.box.space != fam.box_space:
        problems.append(f"preset {preset.name!r} declares {preset.box.space!r} boxes; family {fam.name!r} "
                        f"writes {fam.box_space!r} ({fam.box_source})")
    if preset.box.space != "pixel":
        return problems
    proc = AutoProcessor.from_pretrained(model_dir, local_files_only=True)
    try:
        read = box_convention_for(proc.image_processor, "pixel")
    except BadInput as e:
        problems.append(f"the processor's resize rule cannot be read: {e}")
        read = None
    if read is not None and (read.resize, dict(read.params)) != (preset.box.resize, dict(preset.box.params)):
        problems.append(f"preset {preset.name!r} declares resize {preset.box.resize!r} {dict(preset.box.params)}; "
                        f"the processor does {read.resize!r} {dict(read.params)}")
    for w, h in sizes:
        img = Image.fromarray(np.zeros((h, w, 3), np.uint8))
        real = processed_input_size(proc, img)
        if real is None:
            problems.append(f"the processor tiles a {w}x{h} image; pixel boxes have no single space")
            continue
        declared = model_image_size(preset.box, w, h)
        if (round(declared[0]), round(declared[1])) != real:
            problems.append(f"{w}x{h} image: preset {preset.name!r} expects the model to see "
                            f"{round(declared[0])}x{round(declared[1])}, the processor gives {real[0]}x{real[1]}")
    return problems
