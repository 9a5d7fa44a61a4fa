"""A tiny LLaVA-style VLM built offline (about 1M parameters), for tests, demos and CPU fine-tuning.

Nothing is downloaded: the tokenizer is a byte-level BPE trained here on text that covers the
benchmark's prompts and answers, the processor is built in code (``LlavaProcessor`` with the PIL
``CLIPImageProcessor``, no torchvision), the weights come from a config and a seed. The image is
resized (no crop) to one patch, so each image is ONE image token: with that a randomly initialised
model learns image-dependent answers within seconds on a CPU (with 4 or 16 tokens it does not).

The saved folder loads with ``AutoProcessor`` + ``AutoModelForImageTextToText`` and is served by
the ``hf:`` adapter like any checkpoint. Same seed -> same files.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from medr2 import jsonsafe

IMAGE_TOKEN = "<image>"
PAD_TOKEN = "<pad>"
BOS_TOKEN = "<s>"
IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
SPECIAL_TOKENS = (PAD_TOKEN, BOS_TOKEN, IM_START, IM_END, IMAGE_TOKEN)

# ChatML-style; `{% generation %}` marks what the assistant says (including its end-of-turn token)
# so TRL's assistant-only loss masks everything else. A user turn's parts: in the message's order (CHAT_TEMPLATE),
# or its text and then its images, right before the answer (CHAT_TEMPLATE_IMAGE_LAST, `image_position="last"`).
_TEXT_PARTS = "{%- if part['type'] == 'text' -%}{{- part['text'] -}}{%- endif -%}"
_PARTS_IN_ORDER = ("{%- for part in message['content'] -%}"
                   "{%- if part['type'] == 'image' -%}{{- '<image>' -}}"
                   "{%- elif part['type'] == 'text' -%}{{- part['text'] -}}{%- endif -%}"
                   "{%- endfor -%}")
_TEXT_THEN_IMAGES = ("{%- for part in message['content'] -%}" + _TEXT_PARTS + "{%- endfor -%}"
                     "{%- for part in message['content'] -%}"
                     "{%- if part['type'] == 'image' -%}{{- '<image>' -}}{%- endif -%}"
                     "{%- endfor -%}")


def _chat_template(user_parts: str) -> str:
    return (
        "{%- for message in messages -%}"
        "{{- '<|im_start|>' + message['role'] + '\n' -}}"
        "{%- if message['role'] == 'assistant' -%}{%- generation -%}"
        "{%- if message['content'] is string -%}{{- message['content'] -}}"
        "{%- else -%}{%- for part in message['content'] -%}" + _TEXT_PARTS + "{%- endfor -%}{%- endif -%}"
        "{{- '<|im_end|>' -}}{%- endgeneration -%}{{- '\n' -}}"
        "{%- else -%}"
        "{%- if message['content'] is string -%}{{- message['content'] -}}"
        "{%- else -%}" + user_parts + "{%- endif -%}"
        "{{- '<|im_end|>\n' -}}"
        "{%- endif -%}"
        "{%- endfor -%}"
        "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\n' -}}{%- endif -%}"
    )


CHAT_TEMPLATE = _chat_template(_PARTS_IN_ORDER)
CHAT_TEMPLATE_IMAGE_LAST = _chat_template(_TEXT_THEN_IMAGES)


@dataclass(frozen=True)
class TinySpec:
    """Sizes of the tiny VLM. ``image_size == patch_size`` gives one image token per image."""

    image_size: int = 32
    patch_size: int = 32
    vision_hidden: int = 64
    vision_layers: int = 2
    vision_heads: int = 2
    text_hidden: int = 128
    text_layers: int = 2
    text_heads: int = 4  # head size 32 (vLLM needs >= 32)
    text_intermediate: int = 256
    vocab_size: int = 1024
    max_positions: int = 2048


# Words the benchmark's prompts and answers use; the tokenizer should encode these compactly.
_MEDICAL_WORDS = """
CT MRI MR X-ray radiograph ultrasound US PET SPECT fundus photograph dermoscopy histopathology microscopy
endoscopy mammography angiography scintigraphy bone scan nuclear medicine OCT fluorescence
axial coronal sagittal oblique frontal lateral PA AP posteroanterior anteroposterior view plane projection
T1 T2 FLAIR DWI ADC T1-weighted T2-weighted contrast non-contrast arterial venous portal delayed phase window
lung soft tissue bone brain liver kidney spleen pancreas heart aorta stomach bladder prostate uterus
chest abdomen pelvis head neck spine knee shoulder hip tibia femur hand foot breast retina optic disc macula
vessel nucleus cell tissue left right upper lower anterior posterior medial central peripheral quadrant
nodule mass lesion tumour tumor cyst fracture effusion consolidation opacity pneumonia pneumothorax edema
haemorrhage hemorrhage infarct stroke calcification atelectasis cardiomegaly glioma meningioma pituitary
metastasis abscess fibroma lymphoma carcinoma adenoma haemangioma hemangioma microaneurysm exudate drusen
benign malignant normal abnormal mild moderate severe grade stage round oval irregular lobulated spiculated
well-defined ill-defined circumscribed hyperdense hypodense hyperintense hypointense isointense bright dark
homogeneous heterogeneous small medium large size mm cm noise blur motion low contrast compression artefact
artifact quality good usable reject mirrored flipped orientation region field of view structure organ
finding findings impression report diagnosis differential severity evidence support marked outlined
highlighted box contour arrow cue coordinates located location larger smaller count number how many
"""

_TEMPLATES = """
Question: What is the imaging modality of this image?
Which plane or projection is shown? Which MR sequence is this? What is the image quality?
Which artefact is present? Which body region is shown? Is the image mirrored?
What is the main organ in this image? Is the liver visible? Locate the lesion.
Give the bounding box as [x1, y1, x2, y2] in pixels. Name the outlined structure.
Where is the lesion relative to the kidney? How many nodules are there? Which is larger?
Is there an abnormality? Which finding is present? Which description matches the marked region?
What is the size of the lesion? What is the shape of the lesion? What is the margin?
What is the most likely diagnosis? Is it benign or malignant? Does this image support the diagnosis?
Select all findings that are present. Write the findings and impression.
Options: Answer with the option's letter from the given choices directly.
Answer with yes or no. Answer yes or no. Answer with a single letter. Answer:
A senior radiologist thinks the answer is (C). None of the above. The marked region.
In which quadrant is the bright spot? top-left top-right bottom-left bottom-right
The earlier answer was correct. Previous step. Based on the image, choose one option.
system user assistant system user assistant system user assistant
"""


def training_corpus(extra_text: Iterable[str] = ()) -> list[str]:
    """Text the tokenizer is trained on: templates, medical words, option letters, yes/no, numbers."""
    lines = [ln.strip() for ln in _TEMPLATES.strip().splitlines() if ln.strip()]
    words = _MEDICAL_WORDS.split()
    lines += [" ".join(words[i:i + 12]) for i in range(0, len(words), 12)]
    lines += [w.lower() for w in words] + [w.capitalize() for w in words]
    letters = [chr(ord("A") + i) for i in range(26)]
    lines += [" ".join(f"({c})" for c in letters), " ".join(f"{c}." for c in letters), " ".join(letters)]
    lines += ["A, B", "A, C", "B, D", "A, B, C", "yes", "no", "Yes", "No", "Yes.", "No."]
    lines += [" ".join(str(n) for n in range(k, k + 20)) for k in range(0, 1000, 20)]
    lines += ["[12, 34, 56, 78]", "[0.1, 0.25, 0.5, 0.75]", "0-1000", "3.5 mm", "12 mm", "(x1, y1, x2, y2)"]
    lines += [str(t) for t in extra_text]
    return lines


def build_tokenizer(spec: TinySpec, extra_text: Iterable[str] = (), chat_template: str = CHAT_TEMPLATE) -> Any:
    """Train a byte-level BPE tokenizer locally (deterministic for a given corpus)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=spec.vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(training_corpus(extra_text), trainer=trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=BOS_TOKEN,
        eos_token=IM_END,
        pad_token=PAD_TOKEN,
        extra_special_tokens={"image_token": IMAGE_TOKEN},
        padding_side="left",
        chat_template=chat_template,
        model_max_length=spec.max_positions,
    )


def build_processor(spec: TinySpec, tokenizer: Any, chat_template: str = CHAT_TEMPLATE) -> Any:  # a LlavaProcessor
    """LLaVA processor with the PIL CLIP image processor: resize to one patch, no crop."""
    from transformers import LlavaProcessor
    from transformers.models.clip import CLIPImageProcessorPil

    image_processor = CLIPImageProcessorPil(
        size={"height": spec.image_size, "width": spec.image_size},
        do_center_crop=False,
        crop_size={"height": spec.image_size, "width": spec.image_size},
        do_convert_rgb=True,
    )
    return LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=spec.patch_size,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,  # the CLS token, dropped by the "default" strategy
        chat_template=chat_template,
        image_token=IMAGE_TOKEN,
    )


def build_config(spec: TinySpec, tokenizer: Any) -> Any:  # a LlavaConfig
    from transformers import CLIPVisionConfig, LlamaConfig, LlavaConfig

    vision = CLIPVisionConfig(
        hidden_size=spec.vision_hidden,
        intermediate_size=spec.vision_hidden * 2,
        num_hidden_layers=spec.vision_layers,
        num_attention_heads=spec.vision_heads,
        image_size=spec.image_size,
        patch_size=spec.patch_size,
        projection_dim=spec.vision_hidden,
    )
    text = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=spec.text_hidden,
        intermediate_size=spec.text_intermediate,
        num_hidden_layers=spec.text_layers,
        num_attention_heads=spec.text_heads,
        num_key_value_heads=spec.text_heads,
        max_position_embeddings=spec.max_positions,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=False,
    )
    return LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=tokenizer.convert_tokens_to_ids(IMAGE_TOKEN),
        image_seq_length=(spec.image_size // spec.patch_size) ** 2,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
        projector_hidden_act="gelu",
    )


def build_tiny_vlm(out_dir: Path | str, seed: int = 0, image_size: int = 32,
                   extra_text: Iterable[str] = (), patch_size: int | None = None, patch_init: str = "random",
                   image_position: str = "first", vision_hidden: int | None = None) -> Path:
    """Build, initialise (from ``seed``) and save the tiny VLM into ``out_dir``; return the folder.

    ``image_size`` is also the patch size unless ``patch_size`` is given, so every image is one image token
    (``(image_size // patch_size) ** 2`` tokens otherwise, as real VLMs have many). ``extra_text`` (for
    example a bench's questions and options) is added to the tokenizer's training text. ``patch_init``:
    ``random`` (the seed's weights) or ``pooled`` (:func:`pooled_patch_weights`: the patch embedding starts as
    a fixed thumbnail of the image, grey level and red-minus-blue per cell; every weight stays trainable).
    ``image_position``: where the chat template puts a user turn's image: ``first`` (where the message has it, as
    real VLMs do) or ``last`` (after the turn's text, right before the answer). ``vision_hidden``: the vision
    tower's width (default :class:`TinySpec`'s 64).
    """
    import torch
    from transformers import GenerationConfig, LlavaForConditionalGeneration

    spec = TinySpec(image_size=image_size, patch_size=patch_size or image_size,
                    **({"vision_hidden": vision_hidden} if vision_hidden else {}))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if image_position not in IMAGE_POSITIONS:
        raise ValueError(f"unknown image_position {image_position!r} (known: {', '.join(IMAGE_POSITIONS)})")
    template = IMAGE_POSITIONS[image_position]
    tokenizer = build_tokenizer(spec, extra_text, template)
    processor = build_processor(spec, tokenizer, template)
    config = build_config(spec, tokenizer)
    torch.manual_seed(seed)
    model = LlavaForConditionalGeneration(config)
    if patch_init not in PATCH_INITS:
        raise ValueError(f"unknown patch_init {patch_init!r} (known: {', '.join(PATCH_INITS)})")
    if patch_init == "pooled":
        conv = patch_embedding(model)
        with torch.no_grad():
            conv.weight.copy_(pooled_patch_weights(spec.vision_hidden, spec.patch_size))
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=False,
        max_new_tokens=32,
    )
    model.eval()
    model.save_pretrained(out)
    processor.save_pretrained(out)
    (out / "medr2_tiny.json").write_text(_spec_json(spec, seed, patch_init, image_position), encoding="utf-8")
    return out


PATCH_INITS = ("random", "pooled")
IMAGE_POSITIONS = {"first": CHAT_TEMPLATE, "last": CHAT_TEMPLATE_IMAGE_LAST}


def patch_embedding(model: Any) -> Any:
    """The vision tower's patch-embedding convolution of a tiny VLM."""
    (conv,) = [m for name, m in model.named_modules() if name.endswith("embeddings.patch_embedding")]
    return conv


def pooled_patch_weights(channels: int, patch: int) -> Any:
    """Patch-embedding weights (``channels`` x 3 x ``patch`` x ``patch``) that read a thumbnail of the patch:
    a g x g grid of cells (g the largest dividing ``patch`` with 4 * g * g <= ``channels``), per cell the mean
    grey level and the mean red minus blue, each feature once with each sign (the vision tower's layer norm then
    keeps the pattern instead of removing it with the channels' mean); channels left over stay 0. A design that lets
    a randomly initialised tiny VLM start from image features a linear read-out can use (the demo's bench:
    issue #18; docs/finetuning.md), not a pretrained encoder."""
    import torch

    g = max(n for n in range(1, patch + 1) if 4 * n * n <= channels and patch % n == 0)
    cell = patch // g
    w = torch.zeros(channels, 3, patch, patch)
    k = 0
    for colour in (torch.tensor([1.0, 1.0, 1.0]) / 3, torch.tensor([1.0, 0.0, -1.0]) / 2):
        for i in range(g):
            for j in range(g):
                block = torch.zeros(3, patch, patch)
                block[:, i * cell:(i + 1) * cell, j * cell:(j + 1) * cell] = colour.view(3, 1, 1) / (cell * cell)
                w[k], w[k + 1] = block, -block
                k += 2
    return w


def _spec_json(spec: TinySpec, seed: int, patch_init: str = "random", image_position: str = "first") -> str:
    from medr2.records import canonical_json

    # the default's file is unchanged: only a non-default choice is written
    extra: dict[str, str] = {"patch_init": patch_init} if patch_init != "random" else {}
    if image_position != "first":
        extra["image_position"] = image_position
    return canonical_json({"kind": "medr2-tiny-vlm", "seed": seed, **asdict(spec), **extra}) + "\n"


def count_parameters(model_dir: Path | str) -> int:
    """Number of parameters of a saved model (reads the safetensors header, loads no weights)."""
    import struct

    total = 0
    for f in sorted(Path(model_dir).glob("*.safetensors")):
        with f.open("rb") as fh:
            (n,) = struct.unpack("<Q", fh.read(8))
            header = jsonsafe.loads(fh.read(n), file=str(f), field="safetensors header")
        for k, v in header.items():
            if k != "__metadata__":
                size = 1
                for d in v["shape"]:
                    size *= d
                total += size
    return total
