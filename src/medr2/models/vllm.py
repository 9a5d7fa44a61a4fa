"""``vllm:PATH`` — vLLM's offline engine for large batches on a GPU (optional extra ``medr2[vllm]``).

The whole batch of conversations goes to ``vllm.LLM.chat`` at once (vLLM schedules it); images are
sent as PNG data URLs read from the bench. ``vllm`` is imported only when an adapter is created.
Boxes follow the checkpoint's own image processor, read from its folder with transformers.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.models.base import BoxConvention, BoxSpace, GenSettings, Message, Request, Response
from medr2.models.chat import to_chat
from medr2.models.config import ModelConfig
from medr2.models.hf import box_convention_for, model_fingerprint


@dataclass(frozen=True)
class VLLMOptions:
    """Engine settings passed to ``vllm.LLM`` (see vLLM's engine arguments)."""

    dtype: str = "auto"
    tensor_parallel_size: int = 1
    gpu_memory_utilization: float = 0.9
    kv_cache_memory_bytes: int | None = None  # an explicit KV cache size; on vLLM's CPU backend the safer choice
    max_model_len: int | None = None
    max_num_seqs: int | None = None  # vLLM's default (256) when None
    # no torch.compile / CUDA graphs: a faster start (on the CPU backend, with kv_cache_memory_bytes set, no
    # warm-up forward pass at all), slower steps on a GPU
    enforce_eager: bool = False
    # images one prompt may show: vLLM's limit_mm_per_prompt, and the run refuses an item of more before any
    # request (issue 49); a --preset's max_images when not given
    max_images_per_prompt: int = 4
    seed: int = 0
    box_space: BoxSpace = "pixel"
    check_image_hash: bool = True


def to_openai_messages(messages: Sequence[Message], bench_root: Path, check_hash: bool = True) -> list[dict[str, Any]]:
    """Portable messages -> OpenAI-style chat messages with base64 PNG data URLs."""

    def image_part(path: Path) -> dict[str, Any]:
        url = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")
        return {"type": "image_url", "image_url": {"url": url}}

    return to_chat(messages, bench_root, image_part, check_hash)


def engine_kwargs(path: Path, opts: VLLMOptions) -> dict[str, Any]:
    """The engine arguments of ``vllm.LLM`` / ``vllm.AsyncEngineArgs`` for a checkpoint and its options (the same
    for the in-process engine and the engines the Ray executor starts)."""
    engine: dict[str, Any] = {
        "model": str(path), "dtype": opts.dtype, "tensor_parallel_size": opts.tensor_parallel_size,
        "gpu_memory_utilization": opts.gpu_memory_utilization, "seed": opts.seed,
        "limit_mm_per_prompt": {"image": opts.max_images_per_prompt},
    }
    if opts.max_model_len:
        engine["max_model_len"] = opts.max_model_len
    if opts.max_num_seqs:
        engine["max_num_seqs"] = opts.max_num_seqs
    if opts.enforce_eager:
        engine["enforce_eager"] = True
    if opts.kv_cache_memory_bytes:
        engine["kv_cache_memory_bytes"] = opts.kv_cache_memory_bytes
    return engine


def sampling_kwargs(settings: GenSettings) -> dict[str, Any]:
    """The ``vllm.SamplingParams`` arguments of a request's generation settings."""
    kw: dict[str, Any] = {"max_tokens": settings.max_new_tokens, "temperature": settings.temperature,
                          "top_p": settings.top_p if settings.temperature > 0 else 1.0}
    if settings.seed is not None:
        kw["seed"] = settings.seed
    kw.update(dict(settings.extra))
    return kw


def full_text(text: str, token_ids: Sequence[int], decode: Callable[[list[int]], str]) -> str:
    """The output's text; when the answer ends inside a multi-byte character (``max_tokens`` reached after
    some of its bytes), vLLM's incremental detokenizer holds those bytes back and drops them, while decoding
    the same token ids in full (as ``hf:`` does) ends in U+FFFD: that full decode, so both adapters store
    the same text (and ``chain-own`` feeds back the same answer). ``decode``: the tokenizer's decode (skipping
    special tokens)."""
    ids = list(token_ids or [])
    if not ids:
        return text
    full = decode(ids)
    return full if full.startswith(text) and full[len(text):].strip("\ufffd") == "" else text


class VLLMCheckpoint:
    """What a ``vllm:PATH`` spec names, without an engine: the checkpoint folder (checked), its box convention,
    fingerprint, model key and settings. :class:`VLLMAdapter` adds vLLM's in-process engine; the Ray executor
    holds this alone in the driver and starts the engines on the cluster (:mod:`medr2.run.ray_vllm`)."""

    def __init__(self, path: str | Path, options: VLLMOptions | None = None) -> None:
        from transformers import AutoProcessor

        self.options = opts = options or VLLMOptions()
        self.path = Path(path).expanduser()
        if not (self.path / "config.json").is_file():
            raise BadInput("not a model folder (no config.json)", file=str(self.path))
        self.processor = AutoProcessor.from_pretrained(self.path, local_files_only=True)
        self.box_convention: BoxConvention = box_convention_for(self.processor.image_processor, opts.box_space)
        self.fingerprint = model_fingerprint(self.path)
        self.key = f"vllm:{self.path}" + ("" if opts.dtype == "auto" else f"@{opts.dtype}")
        self.max_images: int | None = opts.max_images_per_prompt

    def engine_kwargs(self) -> dict[str, Any]:
        return engine_kwargs(self.path, self.options)

    def settings(self) -> dict[str, Any]:
        try:
            import vllm

            version = str(getattr(vllm, "__version__", "?"))
        except ImportError:  # a Ray driver without vLLM (its engines run on the cluster)
            version = "not installed in the driver"
        o = self.options
        return {"adapter": "vllm", "path": str(self.path.resolve()), "fingerprint": self.fingerprint,
                "vllm_version": version, "dtype": o.dtype, "tensor_parallel_size": o.tensor_parallel_size,
                "seed": o.seed, "max_model_len": o.max_model_len, "max_num_seqs": o.max_num_seqs,
                "enforce_eager": o.enforce_eager, "gpu_memory_utilization": o.gpu_memory_utilization,
                "kv_cache_memory_bytes": o.kv_cache_memory_bytes,
                "box_convention": {"space": self.box_convention.space, "resize": self.box_convention.resize,
                                   "params": dict(self.box_convention.params)}}


class VLLMAdapter:
    """A checkpoint served by vLLM's in-process engine."""

    def __init__(self, path: str | Path, options: VLLMOptions | None = None) -> None:
        try:
            import vllm
        except ImportError as e:
            raise BadInput("the vllm adapter needs vLLM: pip install 'medr2[vllm]'", field="model") from e

        self.checkpoint = ckpt = VLLMCheckpoint(path, options)
        self.options, self.path, self.fingerprint, self.key = ckpt.options, ckpt.path, ckpt.fingerprint, ckpt.key
        self.box_convention: BoxConvention = ckpt.box_convention
        self.max_images = ckpt.max_images
        self._vllm = vllm
        self.llm = vllm.LLM(**ckpt.engine_kwargs())

    def settings(self) -> dict[str, Any]:
        return self.checkpoint.settings()

    def close(self) -> None:
        """Shut the engine down now (its engine-core process, or its in-process core), so that another
        engine can start in the same process."""
        engine = getattr(self.llm, "llm_engine", None)
        core = getattr(engine, "engine_core", None)
        del self.llm
        if core is not None and hasattr(core, "shutdown"):
            core.shutdown()
        import gc

        gc.collect()

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out: list[Response | None] = [None] * len(requests)
        groups: dict[GenSettings, list[tuple[int, list[dict[str, Any]]]]] = {}
        for i, req in enumerate(requests):
            try:
                conv = to_openai_messages(req.messages, req.bench_root, self.options.check_image_hash)
            except (BadInput, OSError) as e:
                out[i] = Response(status="error", error=f"{type(e).__name__}: {e}")
                continue
            groups.setdefault(req.settings, []).append((i, conv))
        for settings, group in groups.items():
            for (i, _), resp in zip(group, self._chat(group, settings), strict=True):
                out[i] = resp
        return [r if r is not None else Response(status="error", error="no response") for r in out]

    def _sampling(self, settings: GenSettings) -> Any:
        return self._vllm.SamplingParams(**sampling_kwargs(settings))

    def _chat(self, group: list[tuple[int, list[dict[str, Any]]]], settings: GenSettings) -> list[Response]:
        t0 = time.perf_counter()
        try:
            results = self.llm.chat([conv for _, conv in group], sampling_params=self._sampling(settings),
                                    use_tqdm=False)
        except Exception as e:  # noqa: BLE001 - a failed batch is retried item by item
            if len(group) > 1:
                return [r for one in group for r in self._chat([one], settings)]
            return [Response(status="error", error=f"{type(e).__name__}: {e}")]
        dt = time.perf_counter() - t0
        # vLLM's CompletionOutput.finish_reason: "stop" or "length" (max_tokens reached)
        return [Response(status="ok", text=self._full_text(r.outputs[0]).strip(), latency_s=dt,
                         prompt_tokens=len(r.prompt_token_ids or []), completion_tokens=len(r.outputs[0].token_ids),
                         finish_reason=getattr(r.outputs[0], "finish_reason", None))
                for r in results]

    def _full_text(self, out: Any) -> str:
        tokenizer = self.llm.get_tokenizer()
        return full_text(str(out.text), list(out.token_ids or []),
                         lambda ids: str(tokenizer.decode(ids, skip_special_tokens=True)))


def vllm_options(options: ModelConfig) -> VLLMOptions:
    """:class:`VLLMOptions` of a ``vllm:`` spec: the seed from the run options, the rest from ``extra``; without
    ``box_space`` there, a ``--preset``'s box space (as ``hf:``)."""
    known = set(VLLMOptions.__dataclass_fields__) - {"seed"}
    unknown = sorted(set(options.extra) - known)
    if unknown:
        raise BadInput(f"unknown vllm option(s) {unknown}; known: {sorted(known)}", field="model options")
    extra = dict(options.extra)
    preset = options.resolve_preset()
    if preset is not None and "box_space" not in extra:  # the preset says how the model writes boxes
        extra["box_space"] = preset.box.space
    if preset is not None and preset.max_images and "max_images_per_prompt" not in extra:
        extra["max_images_per_prompt"] = preset.max_images
    return VLLMOptions(seed=options.seed, **extra)


def make_vllm_adapter(arg: str, options: ModelConfig) -> VLLMAdapter:
    """Registry factory for ``vllm:PATH`` (options: :func:`vllm_options`)."""
    return VLLMAdapter(arg, vllm_options(options))
