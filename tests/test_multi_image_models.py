"""Every model entry point carries an item's several images (issue 49), in order, each checked against its
recorded identity: one check per adapter prefix of the registry (a new prefix without one fails), plus the Python
callable. The run refuses an item of more images than the model takes (its ``max_images``) before any request."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from medr2 import BadInput, BoxConvention, GenSettings, Item, ModelConfig, Request
from medr2.images import load_image, pixel_sha256
from medr2.models.registry import known_prefixes, load_adapter
from medr2.run.prompts import MODES, render_messages
from medr2.run.runner import EvalConfig, run_eval
from tests.multi_image_fixtures import make_multi_bench
from tests.openai_server import OpenAIServer
from tests.train_fixtures import tiny_vlm_dir


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return make_multi_bench(tmp_path_factory.mktemp("multi") / "bench")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_vlm_dir(tmp_path_factory)


def _two(bench: Any) -> Item:
    return next(it for it in bench.items if it.images and it.images[0].role == "prior" and it.form == "mcq")


def _request(bench: Any, item: Item) -> Request:
    msgs = render_messages(item, mode=MODES["independent"], history=(), conv=BoxConvention())
    return Request(key=item.item_id, messages=msgs, settings=GenSettings(max_new_tokens=4), bench_root=bench.root,
                   item_id=item.item_id, meta={"item": item})


def _shas(item: Item) -> list[str]:
    return [r.sha256 for r in item.image_list()]


def check_openai(bench: Any, tiny: Path) -> None:
    """Two OpenAI content parts (data URLs) in order, before the text naming their roles."""
    seen: list[dict[str, Any]] = []

    def answer(body: dict[str, Any]) -> str:
        seen.append(body)
        return "A"

    item = _two(bench)
    with OpenAIServer(answer=answer) as srv:
        ad = load_adapter(ModelConfig("openai:m", base_urls=(srv.url,)))
        try:
            resp = ad.generate([_request(bench, item), _request(bench, item)])
        finally:
            ad.close()
    assert [r.status for r in resp] == ["ok", "ok"], [r.error for r in resp]
    assert ad.images.encoded == 2  # each image's JSON fragment made once, spliced into both bodies
    parts = seen[0]["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "image_url", "text"]
    got = [pixel_sha256(load_image(io.BytesIO(base64.b64decode(p["image_url"]["url"].split(",", 1)[1]))))
           for p in parts[:2]]
    assert got == _shas(item)
    assert parts[2]["text"].startswith("Image 1: prior study, 90 days before the current one. Image 2: current")


def check_hf(bench: Any, tiny: Path) -> None:
    """The tiny VLM's processor and chat template: two image places, two images encoded, an answer."""
    from transformers import AutoProcessor

    from medr2.models.hf import to_hf_conversation

    item = _two(bench)
    req = _request(bench, item)
    conv, images = to_hf_conversation(req.messages, bench.root)
    proc = AutoProcessor.from_pretrained(tiny, local_files_only=True)
    assert len(images) == 2 and proc.apply_chat_template(conv, add_generation_prompt=True).count("<image>") == 2
    ad = load_adapter(ModelConfig(f"hf:{tiny}", extra={"device": "cpu"}))
    try:
        resp = ad.generate([req])
    finally:
        ad.close()
    assert resp[0].status == "ok", resp[0].error


def check_vllm(bench: Any, tiny: Path) -> None:
    """What ``LLM.chat`` receives (the offline engine itself needs vLLM: tests/test_servers_e2e.py), and the
    engine's per-prompt image limit from the preset."""
    from medr2.models.vllm import engine_kwargs, to_openai_messages, vllm_options

    item = _two(bench)
    chat = to_openai_messages(_request(bench, item).messages, bench.root)
    parts = chat[-1]["content"]
    assert [p["type"] for p in parts] == ["image_url", "image_url", "text"]
    opts = vllm_options(ModelConfig("vllm:x", preset="llava-med"))
    assert opts.max_images_per_prompt == 1
    assert engine_kwargs(tiny, opts)["limit_mm_per_prompt"] == {"image": 1}
    assert vllm_options(ModelConfig("vllm:x", preset="qwen2.5-vl")).max_images_per_prompt == 4


def check_baseline(bench: Any, tiny: Path) -> None:
    """Baselines answer from the text or the item, never the images: a two-image request is answered."""
    ad = load_adapter(ModelConfig("baseline:random", bench=bench))
    assert ad.generate([_request(bench, _two(bench))])[0].status == "ok"


def check_human(bench: Any, tiny: Path) -> None:
    """The reading page's question shows both images, each with its role caption."""
    from medr2.viewer.human import HumanAdapter

    item = _two(bench)
    ad = HumanAdapter("alice", port=0, announce=False)
    try:
        q = ad.question(_request(bench, item), 1, 1)
    finally:
        ad.close()
    assert list(q.turns[-1].images) == _shas(item) and set(q.images) == set(_shas(item))
    assert [q.captions[s] for s in _shas(item)] == [
        "Image 1: prior study, 90 days before the current one", "Image 2: current study"]


ADAPTER_CHECKS: dict[str, Callable[[Any, Path], None]] = {
    "openai": check_openai, "hf": check_hf, "vllm": check_vllm, "baseline": check_baseline, "human": check_human}


def test_every_adapter_prefix_has_a_two_image_check() -> None:
    assert set(known_prefixes()) == set(ADAPTER_CHECKS)


@pytest.mark.parametrize("prefix", sorted(ADAPTER_CHECKS))
def test_adapter_carries_two_images(prefix: str, bench: Any, tiny: Path) -> None:
    ADAPTER_CHECKS[prefix](bench, tiny)


def test_python_callable_gets_both_images(bench: Any, tmp_path: Path) -> None:
    got: list[list[str | None]] = []

    def model(req: Request) -> str:
        got.append([p.image_sha256 for m in req.messages for p in m.parts if p.type == "image"])
        return "A"

    import medr2

    item = _two(bench)
    medr2.evaluate(bench.root, model, tmp_path / "run", split="all", mode="independent", progress=False)
    assert _shas(item) in got
    assert {len(g) for g in got} == {1, 2}  # one-image items keep their one image


def test_run_refuses_more_images_than_the_model_takes(bench: Any, tmp_path: Path) -> None:
    """A model of one image per prompt (the llava-med preset) and a bench of two-image items: refused before
    any request, naming the items file, the item and the field; nothing stored, the server never asked."""
    with OpenAIServer() as srv:
        with pytest.raises(BadInput) as info:
            run_eval(EvalConfig(bench=bench.root,
                                model=ModelConfig("openai:m", base_urls=(srv.url,), preset="llava-med"),
                                out=tmp_path / "run", split="all", modes=("independent",)))
        assert srv.stats.requests == 0
    err = info.value
    assert err.file and err.file.endswith("items.parquet") and err.field == "images"
    assert err.record in {it.item_id for it in bench.items if len(it.images) == 2}
    assert "at most 1" in err.reason and not (tmp_path / "run" / "store.sqlite").exists()


def test_model_option_max_images(bench: Any, tmp_path: Path) -> None:
    """``--model-option max_images=N`` (the server's limit) refuses or admits; blind mode shows no image."""
    with OpenAIServer() as srv:
        with pytest.raises(BadInput):
            run_eval(EvalConfig(bench=bench.root,
                                model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"max_images": 1}),
                                out=tmp_path / "a", split="all", modes=("independent",)))
        run_eval(EvalConfig(bench=bench.root,
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"max_images": 1}),
                            out=tmp_path / "blind", split="all", modes=("blind",)))
        run_eval(EvalConfig(bench=bench.root,
                            model=ModelConfig("openai:m", base_urls=(srv.url,), extra={"max_images": 2}),
                            out=tmp_path / "b", split="all", modes=("independent",)))
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["model"]["settings"]["max_images"] == 2


def test_cli_refusal_is_exit_2_naming_the_item(bench: Any, tmp_path: Path) -> None:
    """``medr2 eval`` with a one-image preset on a two-image bench: exit 2, one message naming the items file, an
    item and the field, before any request (no server is even listening)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "medr2.cli", "eval", "--split", "all", "--bench", str(bench.root),
                           "--model", "openai:m", "--preset", "llava-med", "--base-url", "http://127.0.0.1:9/v1",
                           "--out", str(tmp_path / "run"), "--no-progress"], capture_output=True, text=True,
                          timeout=300)
    err = " ".join(done.stderr.split())
    assert done.returncode == 2, done.stderr[-2000:]
    assert "items.parquet" in err and "field=images" in err and "takes at most 1 per prompt" in err, err
    assert "Traceback" not in done.stderr and not (tmp_path / "run" / "store.sqlite").exists()


@pytest.mark.parametrize("how", ["held (--limit)", "loaded bench"])
def test_refusal_on_every_selection_path(bench: Any, tmp_path: Path, how: str) -> None:
    """The refusal reads a streamed selection by columns (above), a ``--limit`` selection and a loaded bench's
    records alike: the first item of two images in bench order is named."""
    first = next(it.item_id for it in bench.items if len(it.images) == 2)
    extra: dict[str, Any] = {"limit": 200} if how.startswith("held") else {}
    with OpenAIServer() as srv, pytest.raises(BadInput) as info:
        run_eval(EvalConfig(bench=bench.root, model=ModelConfig("openai:m", base_urls=(srv.url,), preset="llava-med"),
                            out=tmp_path / "run", split="all", **extra),
                 bench=bench if how == "loaded bench" else None)
    assert info.value.record == first and info.value.field == "images"
