"""Fast checks of what the real-server suite (tests/test_servers_e2e.py) revealed about the adapter:
error bodies of each server's shape, the token-limit field per preset, the ``medr2-tiny`` preset,
and the vLLM export of a LLaVA checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from safetensors import safe_open

from medr2 import BadInput, GenSettings, Message, ModelConfig, Part, Request
from medr2.models.openai import error_text
from medr2.models.presets import get_preset
from medr2.models.registry import load_adapter
from medr2.models.vllm_export import export_for_vllm, vllm_weight_name
from tests.train_fixtures import tiny_vlm_dir as build_tiny

# Error bodies as the real servers sent them (vLLM 0.32, transformers serve 5.24), plus Ollama's shape.
ERROR_BODIES = [
    (b'{"error":{"message":"The model `nope` does not exist. Valid aliases: medr2-tiny.","type":"NotFoundError",'
     b'"param":"model","code":404}}', "The model `nope` does not exist. Valid aliases: medr2-tiny."),
    (b'{"detail":"Server is pinned to \'/m\'; requested \'nope\'."}', "Server is pinned to '/m'; requested 'nope'."),
    (b'{"error":"model \\"llava\\" not found, try pulling it first"}', 'model "llava" not found, try pulling it first'),
    (b"Internal Server Error", "Internal Server Error"),
    (b'{"detail":[{"loc":["body","messages"],"msg":"Field required"}]}',
     '[{"loc": ["body", "messages"], "msg": "Field required"}]'),
    (b'{"message":"bad things"}', "bad things"),
    (b"\xff\xfe not json", "\ufffd\ufffd not json"),
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(tmp_path_factory)


@pytest.mark.parametrize(("body", "expected"), ERROR_BODIES)
def test_error_text_extracts_each_server_shape(body: bytes, expected: str) -> None:
    assert error_text(body) == expected


def _request(tmp_path: Path) -> Request:
    return Request(key="k", messages=(Message("user", (Part("text", text="Is there an abnormality?"),)),),
                   settings=GenSettings(max_new_tokens=7), bench_root=tmp_path)


@pytest.mark.parametrize(("preset", "field"), [("generic", "max_tokens"), ("qwen2.5-vl", "max_tokens"),
                                               ("gpt-4o", "max_completion_tokens")])
def test_token_limit_field_follows_the_preset(tmp_path: Path, preset: str, field: str) -> None:
    ad = load_adapter(ModelConfig("openai:m", base_urls=("http://127.0.0.1:9/v1",), preset=preset))
    try:
        body = json.loads(ad.body(_request(tmp_path)))
        assert ad.settings()["max_tokens_field"] == field  # type: ignore[attr-defined]
    finally:
        ad.close()
    other = {"max_tokens", "max_completion_tokens"} - {field}
    assert body[field] == 7 and not other & set(body)


def test_vllm_weight_names() -> None:
    assert vllm_weight_name("vision_tower.embeddings.patch_embedding.weight") == \
        "vision_tower.vision_model.embeddings.patch_embedding.weight"
    assert vllm_weight_name("model.vision_tower.encoder.layers.0.mlp.fc1.bias") == \
        "model.vision_tower.vision_model.encoder.layers.0.mlp.fc1.bias"
    for same in ("vision_tower.vision_model.post_layernorm.weight", "language_model.lm_head.weight",
                 "multi_modal_projector.linear_1.bias", "model.language_model.embed_tokens.weight"):
        assert vllm_weight_name(same) == same


def _keys(folder: Path) -> dict[str, list[int]]:
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        return {k: f.get_slice(k).get_shape() for k in f.keys()}  # noqa: SIM118 - not a dict


def test_export_for_vllm_renames_only_the_tower_and_keeps_answers(tmp_path: Path, tiny: Path) -> None:
    from medr2.models.hf import HFAdapter, box_convention_for

    out = export_for_vllm(tiny, tmp_path / "vllm")
    src, dst = _keys(tiny), _keys(out)
    assert {vllm_weight_name(k): v for k, v in src.items()} == dst
    assert any(k.startswith("vision_tower.vision_model.") for k in dst)
    assert not any(k.startswith("vision_tower.") and not k.startswith("vision_tower.vision_model.") for k in dst)
    for f in tiny.iterdir():
        if f.suffix != ".safetensors":
            assert (out / f.name).read_bytes() == f.read_bytes(), f.name
    again = export_for_vllm(out, tmp_path / "again")  # exporting an export changes nothing
    assert _keys(again) == dst

    # the exported folder still loads in transformers and answers the same (vision tower loaded, not random)
    from PIL import Image

    bench = tmp_path / "bench"
    bench.mkdir()
    for i, colour in enumerate(((250, 20, 20), (20, 20, 250))):
        Image.new("RGB", (48, 40), colour).save(bench / f"{i}.png")
    reqs = [Request(key=str(i), bench_root=bench, settings=GenSettings(max_new_tokens=8),
                    messages=(Message("user", (Part("image", image=f"{i}.png"), Part("text", text=q))),))
            for i in range(2) for q in ("Is there an abnormality?", "What is the imaging modality?")]
    a, b = HFAdapter(tiny), HFAdapter(out)
    try:
        assert [r.text for r in a.generate(reqs)] == [r.text for r in b.generate(reqs)]
        assert box_convention_for(a.processor.image_processor) == get_preset("medr2-tiny").box
    finally:
        a.close()
        b.close()


def test_export_refuses_bad_input(tmp_path: Path, tiny: Path) -> None:
    with pytest.raises(BadInput, match="no config.json"):
        export_for_vllm(tmp_path, tmp_path / "x")
    with pytest.raises(BadInput, match="must differ"):
        export_for_vllm(tiny, tiny)
    other = tmp_path / "qwen"
    other.mkdir()
    (other / "config.json").write_text('{"model_type": "qwen2_vl"}', "utf-8")
    (other / "model.safetensors").write_bytes(b"")
    with pytest.raises(BadInput, match="LLaVA"):
        export_for_vllm(other, tmp_path / "y")
