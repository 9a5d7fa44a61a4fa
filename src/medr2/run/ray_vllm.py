"""``--executor ray`` with a ``vllm:`` checkpoint: the pending requests flow as a Ray Dataset through
``ray.data.llm``'s vLLM engine processor (``build_processor(vLLMEngineProcessorConfig(...))``): Ray starts the vLLM
engines (``--ray-engines`` replicas, each in one placement bundle of ``engine_cpus`` CPUs and ``engine_gpus`` GPUs:
0 GPUs runs vLLM's CPU build) and streams the answers back to the driver, which stores each one (the store's one
writer). The driver holds the checkpoint's description only (:class:`~medr2.models.vllm.VLLMCheckpoint`: the same
model key, settings and box convention as the local ``vllm:`` adapter, so the request hashes are the same and a run
may be resumed by either); it starts no engine.

One Dataset row per pending request: its request hash (the idempotency key), item, rendered messages and
sampling settings (as JSON). On the Ray workers, :func:`_preprocess` renders each conversation as ``vllm.LLM.chat``
does in the local adapter: the same OpenAI-style messages (images read from the bench folder, which the workers must
see at the same path, checked against their sha256), vLLM's own chat parsing (``parse_chat_messages``), content
format and chat template (``safe_apply_chat_template``), tokenized without special tokens (the template writes
them); the prompt token ids and the images go to the engine stage. Ray's own chat-template, tokenize and
prepare-multimodal stages are off: Ray 2.60's multimodal stage imports ``vllm.entrypoints.chat_utils``, which vLLM
0.32 moved to ``vllm.renderers`` (ImportError), and its tokenize stage adds the BOS token a second time.

The driver builds each :class:`~medr2.models.base.Response` as the local adapter does: the full decode of the
generated token ids where vLLM's incremental text dropped a cut multi-byte character
(:func:`~medr2.models.vllm.full_text`), stripped. Ray's output row carries no finish reason: it is read from the
tokens as vLLM's scheduler decides it (``check_stop``): ``stop`` when the last token is an end-of-sequence token,
``length`` when ``max_tokens`` (or the model length) is reached, else ``stop`` (a stop string). Latency: the engine
stage's time for the request. A row that cannot be rendered (a missing image) or that the engine fails is stored as
that request's error; a failed engine actor fails the Dataset: exit 1, everything answered before is stored, rerun
to resume.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medr2 import jsonsafe
from medr2.errors import WorkFailed
from medr2.models.base import BoxConvention, GenSettings, Request, Response
from medr2.models.vllm import VLLMCheckpoint, full_text, sampling_kwargs, to_openai_messages, vllm_options
from medr2.run.ray_executor import STAGE_CPUS, RayPath, _messages, _settings_dict, iter_answers

if TYPE_CHECKING:
    from medr2.models.config import ModelConfig
    from medr2.run.ray_executor import RayExecutor
    from medr2.run.runner import Planned, Runner

ERROR_SNIPPET = 2000  # characters of an engine's error message stored


class RayVLLMModel:
    """The driver's adapter for a ``vllm:`` checkpoint under the ray executor: its description (key, settings,
    box convention as the local adapter's) and its tokenizer (to decode answers); the engines run on the cluster."""

    def __init__(self, checkpoint: VLLMCheckpoint) -> None:
        from transformers import GenerationConfig

        self.checkpoint = checkpoint
        self.key = checkpoint.key
        self.box_convention: BoxConvention = checkpoint.box_convention
        tokenizer = getattr(checkpoint.processor, "tokenizer", checkpoint.processor)
        self._tokenizer = tokenizer
        stop = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
        try:  # vLLM adds the generation config's end-of-sequence ids to the stop tokens
            gen_eos = GenerationConfig.from_pretrained(checkpoint.path, local_files_only=True).eos_token_id
        except OSError:
            gen_eos = None
        stop |= set(gen_eos if isinstance(gen_eos, list) else [gen_eos] if gen_eos is not None else [])
        self.stop_token_ids = frozenset(int(t) for t in stop)

    def settings(self) -> dict[str, Any]:
        return self.checkpoint.settings()

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        raise WorkFailed("this vllm: model runs its engines on the Ray cluster: it answers through --executor ray only")

    def close(self) -> None:
        return None

    def decode(self, ids: list[int]) -> str:
        return str(self._tokenizer.decode(ids, skip_special_tokens=True))

    def finish_reason(self, ids: Sequence[int], prompt_tokens: int, max_tokens: int) -> str:
        """As vLLM's scheduler (``check_stop``) decides it, from the tokens."""
        if ids and int(ids[-1]) in self.stop_token_ids:
            return "stop"
        max_len = self.checkpoint.options.max_model_len
        if len(ids) >= max_tokens or (max_len is not None and prompt_tokens + len(ids) >= max_len):
            return "length"
        return "stop"

    def response(self, row: Mapping[str, Any], max_tokens: int) -> Response:
        error = row.get("__inference_error__")
        if error:
            return Response("error", error=str(error)[:ERROR_SNIPPET])
        ids = [int(t) for t in row["generated_tokens"]]
        prompt_tokens = int(row["num_input_tokens"])
        return Response("ok", text=full_text(str(row["generated_text"]), ids, self.decode).strip(),
                        latency_s=float(row["time_taken_llm"]), prompt_tokens=prompt_tokens,
                        completion_tokens=len(ids), finish_reason=self.finish_reason(ids, prompt_tokens, max_tokens))


def _driver_adapter(name: str, options: ModelConfig) -> RayVLLMModel:
    return RayVLLMModel(VLLMCheckpoint(name, vllm_options(options)))


def _stream_engine(ex: RayExecutor, todo: Sequence[Planned], runner: Runner) -> Iterator[tuple[str, Response]]:
    import ray
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    model = ex.adapter
    assert isinstance(model, RayVLLMModel)
    ex.connect()
    ckpt = model.checkpoint
    engine = {k: v for k, v in ckpt.engine_kwargs().items() if k != "model"}
    spec = _RenderSpec(model=str(ckpt.path.resolve()), dtype=ckpt.options.dtype,
                       max_model_len=ckpt.options.max_model_len, max_images=ckpt.options.max_images_per_prompt,
                       bench_root=str(runner.bench_root), check_image_hash=ckpt.options.check_image_hash)
    bundle = {"CPU": ex.engine_cpus, **({"GPU": ex.engine_gpus} if ex.engine_gpus else {})}
    config = vLLMEngineProcessorConfig(
        model_source=spec.model, engine_kwargs=engine, batch_size=ex.batch_size, concurrency=ex.engines,
        placement_group_config={"bundle_per_worker": bundle}, log_engine_metrics=False,
        should_continue_on_error=True, chat_template_stage=False, tokenize_stage=False, detokenize_stage=False,
        prepare_multimodal_stage=False)
    rows = [{"request_hash": p.request.key, "item_id": p.item.item_id, "messages": json.dumps(p.messages),
             "settings": json.dumps(_settings_dict(p.request.settings))} for p in todo if p.request is not None]
    max_tokens = runner.settings.max_new_tokens
    processor = build_processor(config, preprocess=functools.partial(_preprocess, spec), postprocess=_postprocess,
                                preprocess_map_kwargs={"num_cpus": STAGE_CPUS},
                                postprocess_map_kwargs={"num_cpus": STAGE_CPUS})
    blocks = -(-len(rows) // ex.batch_size)  # one block per engine batch: answers reach the driver batch by batch
    ds = processor(ray.data.from_items(rows, override_num_blocks=blocks))
    yield from iter_answers(ds, functools.partial(_answer, model, max_tokens))


def _answer(model: RayVLLMModel, max_tokens: int, row: Mapping[str, Any]) -> Response:
    return model.response(row, max_tokens)


# -- on the Ray workers ------------------------------------------------------------------------------


class _RenderSpec:
    """What a worker needs to render conversations (plain fields: pickled into the Ray tasks)."""

    def __init__(self, *, model: str, dtype: str, max_model_len: int | None, max_images: int, bench_root: str,
                 check_image_hash: bool) -> None:
        self.model, self.dtype, self.max_model_len, self.max_images = model, dtype, max_model_len, max_images
        self.bench_root, self.check_image_hash = bench_root, check_image_hash

    def key(self) -> tuple[str, str, int | None, int]:
        return (self.model, self.dtype, self.max_model_len, self.max_images)


@functools.lru_cache(maxsize=2)
def _renderer(key: tuple[str, str, int | None, int]) -> tuple[Any, Any, str]:
    """vLLM's model config (for its chat parser), tokenizer and resolved chat content format, once per worker."""
    from vllm.config import ModelConfig
    from vllm.renderers.hf import resolve_chat_template_content_format
    from vllm.tokenizers.registry import cached_tokenizer_from_config

    model, dtype, max_model_len, max_images = key
    # this config only parses chat messages: float32 where "auto" (vLLM's device-dependent choice), as Ray's own
    # prepare-multimodal stage does
    config = ModelConfig(model=model, dtype="float32" if dtype == "auto" else dtype, max_model_len=max_model_len,
                         limit_mm_per_prompt={"image": max_images})
    tokenizer = cached_tokenizer_from_config(config)
    content_format = resolve_chat_template_content_format(None, None, "auto", tokenizer, model_config=config)
    return config, tokenizer, str(content_format)


def render(spec: _RenderSpec, conversation: list[dict[str, Any]]) -> tuple[list[int], Any]:
    """The prompt token ids and multimodal data of one conversation, as ``vllm.LLM.chat`` renders it."""
    from vllm.renderers.chat_utils import parse_chat_messages
    from vllm.renderers.hf import safe_apply_chat_template

    config, tokenizer, content_format = _renderer(spec.key())
    parsed, mm_data, _ = parse_chat_messages(conversation, config, content_format)
    text = safe_apply_chat_template(config, tokenizer, parsed, tools=None, chat_template=None, tokenize=False,
                                    add_generation_prompt=True, continue_final_message=False)
    return list(tokenizer.encode(text, add_special_tokens=False)), mm_data


def _preprocess(spec: _RenderSpec, row: dict[str, Any]) -> dict[str, Any]:
    s = jsonsafe.loads(str(row["settings"]), max_bytes=None)
    settings = GenSettings(max_new_tokens=s["max_new_tokens"], temperature=s["temperature"], top_p=s["top_p"],
                           seed=s["seed"], extra=tuple((k, v) for k, v in s["extra"]))
    out: dict[str, Any] = {"request_hash": row["request_hash"], "sampling_params": sampling_kwargs(settings)}
    try:
        conv = to_openai_messages(_messages(str(row["messages"])), Path(spec.bench_root), spec.check_image_hash)
        ids, mm_data = render(spec, conv)
    except Exception as e:  # noqa: BLE001 - stored as this request's error (the row skips the engine stage)
        return {**out, "tokenized_prompt": [], "multimodal_data": None,
                "__inference_error__": f"{type(e).__name__}: {e}"}
    return {**out, "tokenized_prompt": ids, "multimodal_data": mm_data or None, "__inference_error__": ""}


def _postprocess(row: dict[str, Any]) -> dict[str, Any]:
    return {"request_hash": row["request_hash"], "generated_text": row["generated_text"],
            "generated_tokens": [int(t) for t in row["generated_tokens"]],
            "num_input_tokens": int(row["num_input_tokens"]), "time_taken_llm": float(row["time_taken_llm"])}


VLLM_ENGINE_PATH = RayPath(stream=_stream_engine, driver_adapter=_driver_adapter, runs_engines=True)
