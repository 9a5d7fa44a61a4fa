"""Fast, without Ray or vLLM: the parts of the ray executor's vLLM engine path that run in the driver (the adapter
it holds for a ``vllm:`` checkpoint, how an output row becomes a stored response) and the worker's refusal of a
request whose image is missing. The engine path itself runs in tests/test_run_ray_vllm.py (slow, .venv-vllm)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medr2 import BadInput, ModelConfig, WorkFailed
from medr2.models.vllm import VLLMCheckpoint, VLLMOptions
from medr2.models.vllm_export import export_for_vllm
from medr2.run import ray_vllm as rv
from medr2.run.ray_executor import RayExecutor
from tests.run_fixtures import make_bench
from tests.train_fixtures import tiny_vlm_dir


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_for_vllm(tiny_vlm_dir(tmp_path_factory), tmp_path_factory.mktemp("ray-vllm") / "model")


def test_the_driver_holds_the_checkpoint_description_not_an_engine(checkpoint: Path) -> None:
    """The ray executor builds a ``vllm:`` model as :class:`RayVLLMModel` (no vLLM import: none is installed here),
    with the key and settings of the checkpoint's description, which the local adapter uses too; other specs get
    the adapter registry's adapter."""
    factory = RayExecutor().adapter_factory()
    assert factory is not None
    model = factory(ModelConfig(f"vllm:{checkpoint}", seed=3, extra={"dtype": "float32", "max_model_len": 512}))
    assert isinstance(model, rv.RayVLLMModel)
    described = VLLMCheckpoint(checkpoint, VLLMOptions(seed=3, dtype="float32", max_model_len=512))
    assert model.key == described.key == f"vllm:{checkpoint}@float32"
    assert model.settings() == described.settings()
    assert model.settings()["vllm_version"] == "not installed in the driver"
    assert model.box_convention == described.box_convention
    with pytest.raises(WorkFailed, match="through --executor ray only"):
        model.generate([])
    with pytest.raises(BadInput, match="unknown vllm option"):
        factory(ModelConfig(f"vllm:{checkpoint}", extra={"nope": 1}))
    assert factory(ModelConfig("baseline:oracle")).key == "baseline:oracle"
    ex = RayExecutor()
    ex.bind(model)  # the vllm path
    assert ex.describe()["engines"] == 1
    with pytest.raises(BadInput, match="OpenAI-compatible servers .* or runs vLLM engines"):
        RayExecutor().bind(factory(ModelConfig("baseline:oracle")))


def test_an_output_row_becomes_the_response_the_local_adapter_stores(checkpoint: Path) -> None:
    model = rv.RayVLLMModel(VLLMCheckpoint(checkpoint, VLLMOptions(max_model_len=64)))
    tok = model._tokenizer
    ids = tok.encode("hello world", add_special_tokens=False)
    assert ids and tok.eos_token_id is not None and tok.eos_token_id in model.stop_token_ids
    row = {"generated_text": " hello world", "generated_tokens": ids, "num_input_tokens": 20, "time_taken_llm": 0.5,
           "__inference_error__": ""}
    r = model.response(row, max_tokens=len(ids))
    assert (r.status, r.text, r.prompt_tokens, r.completion_tokens, r.finish_reason, r.latency_s) == (
        "ok", "hello world", 20, len(ids), "length", 0.5)
    # under the token budget and ended by the end-of-sequence token: "stop", as vLLM's scheduler says
    eos_row = {**row, "generated_tokens": [*ids, tok.eos_token_id]}
    assert model.response(eos_row, max_tokens=100).finish_reason == "stop"
    assert model.response(row, max_tokens=100).finish_reason == "stop"  # (a stop string: vLLM's "stop" too)
    assert model.response({**row, "num_input_tokens": 64 - len(ids)}, max_tokens=100).finish_reason == "length"
    # a multi-byte character cut at the budget: the full decode (ending in U+FFFD), as the local adapter stores
    cut = tok.encode("é", add_special_tokens=False)
    if len(cut) > 1:  # byte-level pieces: the first byte alone
        partial = model.response({**row, "generated_text": "", "generated_tokens": cut[:1]}, max_tokens=1)
        assert partial.text == tok.decode(cut[:1], skip_special_tokens=True).strip()
    err = model.response({"request_hash": "h", "__inference_error__": "ValueError: boom"}, max_tokens=8)
    assert (err.status, err.error) == ("error", "ValueError: boom")


def test_a_request_whose_image_is_missing_is_that_rows_error(tmp_path: Path) -> None:
    """On the worker: the row carries the error (the engine stage skips it), before any vLLM import."""
    from medr2 import BoxConvention, GenSettings
    from medr2.run.prompts import get_mode, messages_json, render_messages
    from medr2.run.ray_executor import _settings_dict

    bench = make_bench(tmp_path / "bench", n_cases=1)
    item = bench.items[0]
    msgs = render_messages(item, mode=get_mode("independent"), history=[], conv=BoxConvention())
    image = next(p.image for m in msgs for p in m.parts if p.type == "image")
    assert image is not None
    (bench.root / image).unlink()
    spec = rv._RenderSpec(model="unused", dtype="float32", max_model_len=None, max_images=4,
                          bench_root=str(bench.root), check_image_hash=True)
    row = {"request_hash": "h1", "item_id": item.item_id, "messages": json.dumps(messages_json(msgs)),
           "settings": json.dumps(_settings_dict(GenSettings(max_new_tokens=5, temperature=0.0, seed=1)))}
    out = rv._preprocess(spec, row)
    assert out["request_hash"] == "h1" and out["__inference_error__"].startswith("BadInput: ")
    assert "is missing" in out["__inference_error__"]  # (the local vllm: adapter stores the same message)
    assert out["sampling_params"] == {"max_tokens": 5, "temperature": 0.0, "top_p": 1.0, "seed": 1}
    assert out["tokenized_prompt"] == [] and out["multimodal_data"] is None

