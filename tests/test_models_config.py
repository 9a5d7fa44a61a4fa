"""One ``ModelConfig`` from ``medr2 eval``'s options to the adapter's options (no field copied by hand)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from medr2.errors import BadInput
from medr2.models.config import DEFAULT_MAX_NEW_TOKENS, ModelConfig
from medr2.models.presets import get_preset
from medr2.models.registry import AdapterOptions
from medr2.run.runner import EvalConfig


def test_from_cli_folds_options_and_backoff_into_extra() -> None:
    cfg = ModelConfig.from_cli("openai:m", base_url=["http://a/v1", "http://b/v1"], model_option=["dtype=float32",
                               "max_model_len=2048"], backoff=0.25, retries=2, timeout_s=3.0)
    assert cfg.base_urls == ("http://a/v1", "http://b/v1")
    assert dict(cfg.extra) == {"dtype": "float32", "max_model_len": 2048, "backoff_initial_s": 0.25}
    assert (cfg.retries, cfg.timeout_s) == (2, 3.0)
    assert dict(ModelConfig.from_cli("openai:m").extra) == {}


def test_adapter_options_carry_every_shared_field() -> None:
    preset = get_preset("gemini")
    cfg = ModelConfig("openai:m", preset="gemini", base_urls=("http://x/v1",), api_key_env="KEY", concurrency=3,
                      timeout_s=9.5, retries=1, batch_size=4, seed=7, extra={"dtype": "float32"})
    opts = cfg.adapter_options(preset)
    assert opts == AdapterOptions(preset=preset, base_urls=("http://x/v1",), api_key_env="KEY", concurrency=3,
                                  timeout_s=9.5, retries=1, batch_size=4, seed=7, bench=None,
                                  extra={"dtype": "float32"})
    assert set(cfg.adapter_kwargs(preset)) == {f.name for f in fields(AdapterOptions)}


def test_generation_uses_the_preset_budget_unless_given() -> None:
    thinking = get_preset("qwen3-vl-thinking")
    assert ModelConfig("openai:m").generation(None).max_new_tokens == DEFAULT_MAX_NEW_TOKENS
    assert ModelConfig("openai:m").generation(thinking).max_new_tokens == thinking.max_new_tokens
    assert ModelConfig("openai:m", max_new_tokens=33, seed=4).generation(thinking).max_new_tokens == 33


def test_eval_config_gives_one_model_config_either_way(tmp_path: Path) -> None:
    flat = EvalConfig(bench=tmp_path, model="openai:m", out=tmp_path / "run", base_urls=("http://x/v1",), seed=3,
                      adapter_extra={"dtype": "float32"})
    one = ModelConfig("openai:m", base_urls=("http://x/v1",), seed=3, extra={"dtype": "float32"})
    assert flat.model_config() == one
    assert EvalConfig(bench=tmp_path, model=one, out=tmp_path / "run").model_config() is one
    with pytest.raises(BadInput, match="given twice"):
        EvalConfig(bench=tmp_path, model=one, out=tmp_path / "run", retries=1).model_config()
