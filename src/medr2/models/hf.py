"""``hf:PATH`` — a local transformers checkpoint (docs/models.md).

``AutoModelForImageTextToText`` + ``AutoProcessor`` + the model's own chat template; true batched
generation with left padding, greedy unless the request asks for a temperature. Images are read
from the bench by their relative path (checked against their hash). Multi-turn messages (chain
modes) are passed through as a conversation. Nothing is downloaded (``local_files_only``). With
``choice="loglik"`` multiple-choice and yes/no questions are answered by the likelihood of each allowed answer
(:mod:`medr2.models.choice`) instead of by generation.

torch and transformers are imported when an adapter is created, never at module import.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from medr2.errors import BadInput
from medr2.images import load_image
from medr2.models.base import BoxConvention, BoxSpace, GenSettings, Message, Request, Response
from medr2.models.chat import to_chat
from medr2.models.choice import CHOICE_MODES, CHOICE_STYLES, candidates, choice_note
from medr2.models.confidence import from_loglik, labels_of
from medr2.models.config import ModelConfig
from medr2.models.structured import LOGLIK

DTYPES = ("auto", "float32", "bfloat16", "float16")
C = TypeVar("C")
# a closed question asked by likelihood: (request index, prompt, images, candidates, prompt + each candidate)
# (request index, prompt, images, candidate answers, their rendered turns, their confidence labels)
Closed = tuple[int, str, list[Any], tuple[str, ...], list[str], tuple[str, ...]]


@dataclass(frozen=True)
class HFOptions:
    """Settings of the ``hf`` adapter. ``dtype="auto"``: bfloat16 on GPU, float32 on CPU;
    ``device="auto"``: CUDA when available. ``box_space`` declares how the model writes boxes. ``choice``:
    ``generate`` (default) or ``loglik`` (closed questions answered by the likelihood of each allowed answer,
    written in ``choice_style``: :mod:`medr2.models.choice`)."""

    dtype: str = "auto"
    device: str = "auto"
    batch_size: int = 8
    attn_implementation: str | None = None
    box_space: BoxSpace = "pixel"
    check_image_hash: bool = True
    choice: str = "generate"
    choice_style: str = "text"
    # --structured-answers: closed questions by the log-likelihood choice (choice="loglik"), recorded as such
    structured: bool = False
    # images one prompt may show (issue 49; an item of more is refused before any request); None: any number
    max_images: int | None = None


def box_convention_for(image_processor: Any, space: BoxSpace = "pixel") -> BoxConvention:
    """The resize rule the processor applies before the model sees an image, read from its config."""
    patch = getattr(image_processor, "patch_size", None)
    merge = getattr(image_processor, "merge_size", None)
    size = _size_dict(getattr(image_processor, "size", None))
    if patch and merge:  # Qwen2-VL family: sides rounded to multiples of patch*merge within a pixel budget
        min_px = getattr(image_processor, "min_pixels", None) or size.get("shortest_edge")
        max_px = getattr(image_processor, "max_pixels", None) or size.get("longest_edge")
        params = (("factor", int(patch) * int(merge)), ("max_pixels", max_px), ("min_pixels", min_px))
        return BoxConvention(space, "qwen2-vl", tuple((k, v) for k, v in params if v is not None))
    if not getattr(image_processor, "do_resize", True):
        return BoxConvention(space, "none", ())
    crop = _size_dict(getattr(image_processor, "crop_size", None)) if getattr(
        image_processor, "do_center_crop", False) else {}
    if size.get("height") and size.get("width") and not crop:
        w, h = int(size["width"]), int(size["height"])
        return BoxConvention(space, "fixed", (("height", h), ("width", w)))
    if size.get("shortest_edge") and crop:
        return BoxConvention(space, "shortest-edge-center-crop", (
            ("crop_height", crop["height"]), ("crop_width", crop["width"]), ("shortest_edge", size["shortest_edge"])))
    if size.get("shortest_edge"):
        return BoxConvention(space, "shortest-edge", (("shortest_edge", size["shortest_edge"]),))
    if space != "pixel":  # tiling processors (Idefics3, Aya Vision, mllama): normalised boxes need no resize rule
        return BoxConvention(space, "none", ())
    raise BadInput(f"cannot tell how {type(image_processor).__name__} resizes images (size={size}); "
                   "pass box_space='unit' or 'thousand' only if the model writes normalised boxes",
                   field="image_processor.size")


def _size_dict(size: Any) -> dict[str, Any]:
    if size is None:
        return {}
    if isinstance(size, dict):
        return {k: v for k, v in size.items() if v is not None}
    return {k: getattr(size, k) for k in ("height", "width", "shortest_edge", "longest_edge")
            if getattr(size, k, None) is not None}


def model_fingerprint(path: Path) -> str:
    """A short hash of a checkpoint's config, tokenizer files and weight files (names, sizes, headers)."""
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        if f.is_file() and f.suffix in (".json", ".jinja", ".safetensors", ".bin", ".model"):
            h.update(f.name.encode())
            h.update(str(f.stat().st_size).encode())
            with f.open("rb") as fh:
                h.update(fh.read(1 << 16))
    return h.hexdigest()[:16]


class HFAdapter:
    """A transformers image-text-to-text checkpoint served in-process."""

    def __init__(self, path: str | Path, options: HFOptions | None = None) -> None:
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.options = opts = options or HFOptions()
        self.path = Path(path).expanduser()
        if not (self.path / "config.json").is_file():
            raise BadInput("not a model folder (no config.json)", file=str(self.path))
        if opts.dtype not in DTYPES:
            raise BadInput(f"dtype must be one of {DTYPES}", field="dtype", record=opts.dtype)
        if opts.batch_size < 1:
            raise BadInput("batch_size must be >= 1", field="batch_size")
        if opts.choice not in CHOICE_MODES:
            raise BadInput(f"choice must be one of {CHOICE_MODES}", field="choice", record=opts.choice)
        if opts.choice_style not in CHOICE_STYLES:
            raise BadInput(f"choice_style must be one of {tuple(CHOICE_STYLES)}", field="choice_style",
                           record=opts.choice_style)
        self.device = ("cuda" if torch.cuda.is_available() else "cpu") if opts.device == "auto" else opts.device
        auto_dtype = "bfloat16" if self.device.startswith("cuda") else "float32"
        self.dtype_name = dtype_name = opts.dtype if opts.dtype != "auto" else auto_dtype
        kwargs: dict[str, Any] = {"dtype": getattr(torch, dtype_name), "local_files_only": True}
        if opts.attn_implementation:
            kwargs["attn_implementation"] = opts.attn_implementation
        self.processor = AutoProcessor.from_pretrained(self.path, local_files_only=True)
        model = AutoModelForImageTextToText.from_pretrained(self.path, **kwargs)
        self.model = model.to(self.device).eval()  # type: ignore[arg-type]  # transformers' stubs type .to oddly
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        if not (getattr(self.processor, "chat_template", None) or getattr(self.tokenizer, "chat_template", None)):
            raise BadInput("the checkpoint has no chat template", file=str(self.path), field="chat_template")
        self.fingerprint = model_fingerprint(self.path)
        self.key = f"hf:{self.path}" + ("" if dtype_name == "float32" else f"@{dtype_name}") + (
            f"#choice=loglik:{opts.choice_style}" if opts.choice == "loglik" else "")
        self.box_convention = box_convention_for(self.processor.image_processor, opts.box_space)
        self.max_images = opts.max_images

    def settings(self) -> dict[str, Any]:
        return {"adapter": "hf", "path": str(self.path.resolve()), "fingerprint": self.fingerprint,
                "model_type": self.model.config.model_type, "dtype": self.dtype_name, "device": self.device,
                "batch_size": self.options.batch_size, "attn_implementation": self.options.attn_implementation,
                **({"choice": "loglik", "choice_style": self.options.choice_style}
                   if self.options.choice == "loglik" else {}),
                **({"structured": LOGLIK} if self.options.structured else {}),
                "box_convention": {"space": self.box_convention.space, "resize": self.box_convention.resize,
                                   "params": dict(self.box_convention.params)}}

    def close(self) -> None:
        import gc

        import torch

        del self.model
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    # -- generation -----------------------------------------------------------------------------

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answer every request in order; requests with the same settings are batched together,
        shortest prompts first, so padding is small. With ``choice="loglik"`` the closed questions are
        answered by :meth:`_choose` instead."""
        out: list[Response | None] = [None] * len(requests)
        prepared: dict[GenSettings, list[tuple[int, str, list[Any]]]] = {}
        closed: list[Closed] = []
        for i, req in enumerate(requests):
            try:
                conv, text, images = self._render(req)
                cands = candidates(req.meta.get("item"), self.options.choice_style) \
                    if self.options.choice == "loglik" else None
                if cands is not None:
                    closed.append((i, text, images, cands, self._answered(conv, cands),
                                   labels_of(req.meta.get("item"))))
                    continue
            except (BadInput, ValueError, TypeError, KeyError) as e:
                out[i] = Response(status="error", error=f"{type(e).__name__}: {e}")
                continue
            prepared.setdefault(req.settings, []).append((i, text, images))
        bs = self.options.batch_size
        for settings, group in prepared.items():
            group.sort(key=lambda g: len(g[1]))
            gen = partial(self._generate, settings=settings)
            for start in range(0, len(group), bs):
                chunk = group[start:start + bs]
                for (i, _, _), resp in zip(chunk, self._answer_chunk(chunk, gen), strict=True):
                    out[i] = resp
        closed.sort(key=lambda g: len(g[1]))
        for start in range(0, len(closed), bs):
            chunk_c = closed[start:start + bs]
            for (i, *_), resp in zip(chunk_c, self._answer_chunk(chunk_c, self._choose), strict=True):
                out[i] = resp
        return [r if r is not None else Response(status="error", error="no response") for r in out]

    def _render(self, req: Request) -> tuple[list[dict[str, Any]], str, list[Any]]:
        conv, images = to_hf_conversation(req.messages, req.bench_root, self.options.check_image_hash)
        text = self.processor.apply_chat_template(conv, add_generation_prompt=True, tokenize=False)
        return conv, text, images

    def _answered(self, conv: list[dict[str, Any]], cands: tuple[str, ...]) -> list[str]:
        """The conversation ended by each candidate as the assistant's turn, rendered by the chat template
        (as a training target is rendered)."""
        return [self.processor.apply_chat_template(
            [*conv, {"role": "assistant", "content": [{"type": "text", "text": c}]}], tokenize=False)
            for c in cands]

    # -- closed questions by likelihood (choice="loglik") -----------------------------------------

    def _answer_chunk(self, chunk: list[C], answer: Callable[[list[C]], list[Response]]) -> list[Response]:
        """``answer(chunk)``; a failed batch is retried item by item, so one bad item fails only itself."""
        try:
            return answer(chunk)
        except Exception as e:  # noqa: BLE001 - a failed batch is retried item by item
            if len(chunk) > 1:
                return [r for one in chunk for r in self._answer_chunk([one], answer)]
            return [Response(status="error", error=f"{type(e).__name__}: {e}")]

    def _choose(self, chunk: list[Closed]) -> list[Response]:
        """Per request: the candidate with the highest summed log-probability of its answer tokens (those the
        chat template adds after the generation prompt, up to and including the end token that stops
        generation), the prompt's token count, the answer's token count and the note recording every
        candidate's score. Each prompt (with its images) is run once; its key/value cache is then repeated for
        its candidates, whose tokens are run together on it."""
        import torch

        tok = self.tokenizer
        eos = tok.eos_token_id
        stop = {eos} if isinstance(eos, int) else set(eos or ())
        prompts: list[str] = []
        images: list[Any] = []
        answers: list[list[int]] = []  # per candidate: its scored tokens
        owner: list[int] = []  # per candidate: its request's row in the prompt batch
        t0 = time.perf_counter()
        for j, (_, prompt, ims, _, fulls, _) in enumerate(chunk):
            p_ids = tok(prompt, add_special_tokens=False)["input_ids"]
            for full in fulls:
                if not full.startswith(prompt):
                    raise ValueError("the chat template does not continue the generation prompt with the answer")
                f_ids = tok(full, add_special_tokens=False)["input_ids"]
                if f_ids[:len(p_ids)] != p_ids:
                    raise ValueError("the answer's tokens do not continue the prompt's tokens")
                after = f_ids[len(p_ids):]
                end = next((k + 1 for k, t in enumerate(after) if t in stop), len(after))
                if end == 0:
                    raise ValueError("the chat template adds no answer tokens")
                answers.append(after[:end])
                owner.append(j)
            prompts.append(prompt)
            images.extend(ims)
        enc = self.processor(text=prompts, images=images or None, padding=True, padding_side="left",
                             return_tensors="pt").to(self.device)
        if "pixel_values" in enc and torch.is_floating_point(enc["pixel_values"]):
            enc["pixel_values"] = enc["pixel_values"].to(self.model.dtype)
        mask = enc["attention_mask"]
        rows = torch.tensor(owner, device=mask.device)
        width = max(len(a) for a in answers)
        ids = torch.full((len(answers), width), int(tok.pad_token_id), dtype=torch.long, device=mask.device)
        answer_mask = torch.zeros((len(answers), width), dtype=mask.dtype, device=mask.device)
        for r, a in enumerate(answers):
            ids[r, :len(a)] = torch.tensor(a, dtype=torch.long)
            answer_mask[r, :len(a)] = 1
        lengths = mask.sum(dim=1)
        with torch.inference_mode():
            first = self.model(**enc, position_ids=(mask.cumsum(-1) - 1).clamp(min=0), use_cache=True)
            last = torch.log_softmax(first.logits[:, -1].float(), dim=-1)  # predicts each answer's first token
            cache = first.past_key_values
            cache.batch_select_indices(rows)
            rest = self.model(input_ids=ids, attention_mask=torch.cat([mask[rows], answer_mask], dim=1),
                              position_ids=lengths[rows].unsqueeze(1) + torch.arange(width, device=mask.device),
                              cache=cache, use_cache=False)
            logp = torch.log_softmax(rest.logits.float(), dim=-1)
        scores: list[float] = []
        for r, a in enumerate(answers):
            total = last[owner[r], a[0]]
            if len(a) > 1:
                k = torch.arange(1, len(a), device=logp.device)
                total = total + logp[r, k - 1, ids[r, k]].sum()
            scores.append(float(total))
        dt = time.perf_counter() - t0
        out: list[Response] = []
        first_row = 0
        for j, (_, _, _, cands, _, labels) in enumerate(chunk):
            mine = scores[first_row:first_row + len(cands)]
            best = max(range(len(cands)), key=mine.__getitem__)  # the first of equal scores
            out.append(Response(status="ok", text=cands[best], latency_s=dt, prompt_tokens=int(lengths[j]),
                                completion_tokens=len(answers[first_row + best]), finish_reason="stop",
                                notes=(choice_note(cands, mine),), confidence=from_loglik(mine, labels)))
            first_row += len(cands)
        return out

    def _generate(self, chunk: list[tuple[int, str, list[Any]]], settings: GenSettings) -> list[Response]:
        t0 = time.perf_counter()
        texts, seqs = self._run(chunk, settings)
        dt = time.perf_counter() - t0
        return [Response(status="ok", text=t, latency_s=dt, prompt_tokens=p, completion_tokens=c, finish_reason=f)
                for t, (p, c, f) in zip(texts, seqs, strict=True)]

    def _run(self, chunk: list[tuple[int, str, list[Any]]],
             settings: GenSettings) -> tuple[list[str], list[tuple[int, int, str | None]]]:
        """Decoded answers and, per answer, (prompt tokens, new tokens, finish reason): "stop" at an end
        token, "length" when ``max_new_tokens`` new tokens came without one."""
        import torch

        texts = [t for _, t, _ in chunk]
        images = [im for _, _, ims in chunk for im in ims]
        enc = self.processor(text=texts, images=images or None, padding=True, padding_side="left",
                             return_tensors="pt")
        enc = enc.to(self.device)
        if "pixel_values" in enc and torch.is_floating_point(enc["pixel_values"]):
            enc["pixel_values"] = enc["pixel_values"].to(self.model.dtype)
        gen = generation_kwargs(settings, self.tokenizer)
        if gen.get("do_sample") and settings.seed is not None:
            torch.manual_seed(settings.seed)
        with torch.inference_mode():
            seq = self.model.generate(**enc, **gen)
        new = seq[:, enc["input_ids"].shape[1]:]
        stop = {gen["eos_token_id"], gen["pad_token_id"]} if isinstance(gen["eos_token_id"], int) else \
            {*gen["eos_token_id"], gen["pad_token_id"]}
        counts: list[tuple[int, int, str | None]] = []
        for row, mask in zip(new.tolist(), enc["attention_mask"].tolist(), strict=True):
            end = next((k + 1 for k, tok in enumerate(row) if tok in stop), None)
            finish = "stop" if end is not None else "length" if len(row) >= settings.max_new_tokens else None
            counts.append((int(sum(mask)), end if end is not None else len(row), finish))
        decoded = self.tokenizer.batch_decode(new, skip_special_tokens=True)
        return [d.strip() for d in decoded], counts


def generation_kwargs(settings: GenSettings, tokenizer: Any) -> dict[str, Any]:
    """``generate`` arguments for the request settings: greedy at temperature 0."""
    kw: dict[str, Any] = {"max_new_tokens": settings.max_new_tokens,
                          "pad_token_id": tokenizer.pad_token_id, "eos_token_id": tokenizer.eos_token_id}
    if settings.temperature > 0:
        kw.update(do_sample=True, temperature=settings.temperature, top_p=settings.top_p)
    else:
        kw.update(do_sample=False, temperature=None, top_p=None, top_k=None)
    kw.update(dict(settings.extra))
    return kw


def to_hf_conversation(messages: Sequence[Message], bench_root: Path,
                       check_hash: bool = True) -> tuple[list[dict[str, Any]], list[Any]]:
    """Portable messages -> a transformers chat conversation and its PIL images, in order."""
    from PIL import Image

    images: list[Any] = []

    def image_part(path: Path) -> dict[str, Any]:
        images.append(Image.fromarray(load_image(path, mode="RGB"), mode="RGB"))
        return {"type": "image"}

    return to_chat(messages, bench_root, image_part, check_hash), images


def make_hf_adapter(arg: str, options: ModelConfig) -> HFAdapter:
    """Registry factory for ``hf:PATH``: ``batch_size`` from the run options, the rest of
    :class:`HFOptions` (``dtype``, ``device``, ``attn_implementation``, ``box_space``) from ``extra``;
    without ``box_space`` there, a ``--preset``'s box space."""
    known = set(HFOptions.__dataclass_fields__) - {"batch_size"}
    unknown = sorted(set(options.extra) - known)
    if unknown:
        raise BadInput(f"unknown hf option(s) {unknown}; known: {sorted(known)}", field="model options")
    extra = dict(options.extra)
    if extra.get("structured") in ("true", "preset", LOGLIK):
        extra["structured"] = True
    if extra.get("structured") is True:  # structured answers: the log-likelihood choice for closed questions
        if extra.setdefault("choice", "loglik") != "loglik":
            raise BadInput("--structured-answers answers closed questions by log-likelihood on hf: models; "
                           f"it cannot be combined with choice={extra['choice']}", field="--structured-answers")
    elif extra.get("structured") not in (None, False, "false"):
        raise BadInput(f"hf: models answer structured by log-likelihood only (structured=true), not "
                       f"{extra['structured']!r}", field="--model-option structured")
    else:
        extra.pop("structured", None)
    preset = options.resolve_preset()
    if preset is not None and "box_space" not in extra:  # the preset says how the model writes boxes
        extra["box_space"] = preset.box.space
    if preset is not None and "max_images" not in extra:  # and how many images a prompt may show
        extra["max_images"] = preset.max_images
    return HFAdapter(arg, HFOptions(batch_size=options.batch_size, **extra))
