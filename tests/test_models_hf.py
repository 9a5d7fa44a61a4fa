"""The hf: adapter on the tiny VLM: real batched generation, same answers at any batch size."""

from __future__ import annotations

import numpy as np
import pytest

from medr2 import BadInput, GenSettings, Message, Part, Request
from medr2.images import ImageStore
from tests.train_fixtures import tiny_vlm_dir


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_vlm_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def requests_(tmp_path_factory):
    root = tmp_path_factory.mktemp("hfbench")
    store = ImageStore(root)
    rng = np.random.default_rng(0)
    out = []
    for k in range(10):
        ref = store.put_array(rng.integers(0, 255, (20 + 7 * k, 50, 3), dtype=np.uint8))
        img = Part("image", image=ref.path, image_sha256=ref.sha256)
        q = Part("text", text="Which organ is shown? " * (1 + k % 3) + f"Case {k}.")
        msgs: tuple[Message, ...] = (Message("user", (img, q)),)
        if k % 4 == 1:  # a chain: earlier turn with its answer, then a follow-up
            msgs = (Message("system", (Part("text", text="You are a radiologist."),)), *msgs,
                    Message("assistant", (Part("text", text="B. liver"),)),
                    Message("user", (Part("text", text="Is there a lesion? Answer yes or no."),)))
        if k % 5 == 3:  # blind: text only
            msgs = (Message("user", (q,)),)
        out.append(Request(key=f"r{k}", messages=msgs, settings=GenSettings(max_new_tokens=10), bench_root=root,
                           item_id=f"i{k}"))
    return out


def test_batched_equals_one_by_one(tiny, requests_):
    from medr2.models.hf import HFAdapter, HFOptions

    one = HFAdapter(tiny, HFOptions(batch_size=1)).generate(requests_)
    many = HFAdapter(tiny, HFOptions(batch_size=4)).generate(requests_)
    assert all(r.status == "ok" for r in one + many), [r.error for r in one + many]
    assert [r.text for r in one] == [r.text for r in many]
    assert [r.prompt_tokens for r in one] == [r.prompt_tokens for r in many]
    assert all(r.completion_tokens and 0 < r.completion_tokens <= 10 for r in many)
    assert len({r.prompt_tokens for r in one}) > 3  # prompts really differ in length (padding exercised)
    # "length" exactly when all 10 new tokens came without an end token, "stop" when one came earlier or last
    assert [r.finish_reason for r in one] == [r.finish_reason for r in many]
    assert all(r.finish_reason in ("stop", "length") for r in many)
    assert all(r.completion_tokens == 10 for r in many if r.finish_reason == "length")


def test_registry_spec_options_and_box_convention(tiny, requests_):
    from medr2 import ModelConfig
    from medr2.models.registry import load_adapter

    a = load_adapter(ModelConfig(f"hf:{tiny}", batch_size=3, extra={"dtype": "float32", "device": "cpu"}))
    assert a.key == f"hf:{tiny}"
    s = a.settings()
    assert s["dtype"] == "float32" and s["batch_size"] == 3 and s["model_type"] == "llava"
    assert a.box_convention.space == "pixel" and a.box_convention.resize == "fixed"
    assert dict(a.box_convention.params)["width"] == 32 and dict(a.box_convention.params)["height"] == 32
    r = a.generate(requests_[:2])
    assert [x.status for x in r] == ["ok", "ok"]
    with pytest.raises(BadInput):
        load_adapter(ModelConfig(f"hf:{tiny}", extra={"colour": "blue"}))
    with pytest.raises(BadInput):
        load_adapter("hf:/nonexistent/model")


def test_bad_image_fails_only_its_request(tiny, requests_):
    from medr2.models.hf import HFAdapter, HFOptions

    good = requests_[0]
    bad_hash = Request(key="bad", bench_root=good.bench_root, settings=good.settings, messages=(
        Message("user", (Part("image", image=good.messages[0].parts[0].image, image_sha256="0" * 64),
                         Part("text", text="x"))),))
    escape = Request(key="esc", bench_root=good.bench_root, settings=good.settings, messages=(
        Message("user", (Part("image", image="../../etc/passwd"), Part("text", text="x"))),))
    res = HFAdapter(tiny, HFOptions(batch_size=4)).generate([good, bad_hash, escape, good])
    assert [r.status for r in res] == ["ok", "error", "error", "ok"]
    assert "sha256" in res[1].error and "escapes" in res[2].error
    assert res[0].text == res[3].text


def test_vllm_adapter_needs_vllm_or_matches_hf(tiny, requests_):
    from medr2 import ModelConfig
    from medr2.models.registry import load_adapter

    try:
        import vllm  # noqa: F401
    except ImportError:
        with pytest.raises(BadInput, match="medr2\\[vllm\\]"):
            load_adapter(f"vllm:{tiny}")
        pytest.skip("vllm is not installed here; checked the install hint only")
    a = load_adapter(ModelConfig(f"vllm:{tiny}", extra={"dtype": "float32"}))
    res = a.generate(requests_)
    assert all(r.status == "ok" for r in res)
