"""``--executor ray``: the pending requests of a wave flow as a Ray Dataset through ``ray.data.llm``. A path per
model kind (:data:`RAY_PATHS`, by the model spec's prefix): ``openai:`` models go through its HTTP request processor
(this module); ``vllm:`` checkpoints through its vLLM engine processor, the engines started on the cluster
(:mod:`medr2.run.ray_vllm`).

The HTTP path: ``ray.data.llm``'s HTTP
request processor (``build_processor(HttpRequestProcessorConfig(...))``) to the OpenAI-compatible server(s) of an
``openai:`` model; the answers stream back to the driver, which stores each one in the run's SQLite store (the
store's one writer). Needs the extra ``medr2[ray]`` (``ray[data]``; ``ray.data.llm``'s HTTP path imports no vLLM).

One Dataset row per pending request: its request hash (the idempotency key), item, and rendered messages (text
verbatim, images by bench path and sha256). On the Ray workers, the processor's ``preprocess`` builds the exact
chat-completions body the local client sends (the openai adapter's own body builder, images read from the bench
folder, which the workers must see at the same path, and checked against their sha256), and the HTTP stage's
session posts those very bytes (:class:`_BodySession`: byte-identical to a local run's); a body that cannot be
built (a missing image) is an ``__inference_error__`` row that skips the HTTP stage and is stored as that request's
error. The HTTP stage (one actor per ``concurrency`` slot and base URL: ray.data.llm's stage sends the requests of a
batch one after another, so an actor has one request in flight) posts it; ``postprocess`` returns the body it got.
The driver parses that body with the openai adapter's parser (same answer, usage, finish_reason, reasoning and
``--confidence logprobs`` confidence as a local run; the API key masked) and stores it. Several ``--base-url``: the
rows are dealt round-robin to one processor per URL, and the Datasets are unioned.

What differs from the local client (ray.data.llm's HTTP stage decides it): per-request latency is not measured
(stored NULL); retries (``--retries``, first wait ``--backoff``, doubled) cover 429/408/502/503/504, timeouts and
connection errors but not other 5xx, whose error body is stored as the request's error; a request that still fails
after its retries fails its batch and so the Dataset: the run stops with exit 1, everything answered before is
stored, and rerunning the command resumes.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medr2 import jsonsafe
from medr2.errors import BadInput, WorkFailed
from medr2.models.base import Adapter, GenSettings, Message, Part, Request, Response
from medr2.reach import check_reachable
from medr2.registry import Registry

if TYPE_CHECKING:
    from medr2.models.config import ModelConfig
    from medr2.models.openai import OpenAIAdapter
    from medr2.models.registry import AdapterLoader
    from medr2.records import Item
    from medr2.run.prompts import ModeSpec
    from medr2.run.runner import ModeCounts, Planned, Runner, RunSummary

DEFAULT_BATCH_SIZE = 4  # rows per HTTP-stage batch (its answers reach the driver when the whole batch is done)
BODY_KEY = "medr2_body"  # the payload's one field: the request body as medr2 built it (see _BodySession)
STAGE_CPUS = 0.25  # CPUs reserved per worker of the HTTP / pre / post stages (they wait on the network)
_OPTIONS = {"address": "Ray cluster address (ray.init's address; None: RAY_ADDRESS or a running local cluster, "
                       "else a new local one)",
            "batch_size": f"rows per HTTP-stage batch (default {DEFAULT_BATCH_SIZE}; vllm: rows per engine batch)",
            "engines": "vllm: engine replicas (default 1)",
            "engine_gpus": "vllm: GPUs per engine (default 0: each engine on CPUs, one Ray bundle of engine_cpus)",
            "engine_cpus": "vllm: CPUs reserved per engine (default 1)"}


@dataclass(frozen=True)
class RayPath:
    """How the ray executor sends the requests of one kind of model (a :data:`RAY_PATHS` entry)."""

    # the answers of the pending requests, as (request hash, response), in any order
    stream: Callable[[RayExecutor, Sequence[Planned], Runner], Iterator[tuple[str, Response]]]
    # the adapter the driver holds for specs of this prefix (None: the adapter registry's): e.g. a vllm:
    # checkpoint's description, without an engine
    driver_adapter: Callable[[str, ModelConfig], Adapter] | None = None
    # the engines run on the cluster (``--ray-engines``/``--ray-engine-gpus``/``--ray-engine-cpus`` apply)
    runs_engines: bool = False


RAY_PATHS: Registry[RayPath] = Registry("ray executor path (model prefix)", field="--model")


def make_ray_executor(options: Mapping[str, Any]) -> RayExecutor:
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise BadInput(f"unknown ray executor options {unknown}; known: {sorted(_OPTIONS)}", field="--executor")
    batch_size = int(options.get("batch_size") or DEFAULT_BATCH_SIZE)
    if batch_size < 1:
        raise BadInput("--ray-batch-size must be >= 1", field="--ray-batch-size")
    engines, engine_gpus = int(options.get("engines") or 1), float(options.get("engine_gpus") or 0)
    engine_cpus = float(options.get("engine_cpus") or 1)
    if engines < 1 or engine_gpus < 0 or engine_cpus <= 0:
        raise BadInput("ray executor: engines must be >= 1, engine_gpus >= 0, engine_cpus > 0", field="--executor")
    try:
        import ray.data.llm  # noqa: F401
    except ImportError as e:
        raise BadInput(f"--executor ray needs Ray Data (pip install 'medr2[ray]'): {e}", field="--executor") from e
    return RayExecutor(address=options.get("address"), batch_size=batch_size, engines=engines,
                       engine_gpus=engine_gpus, engine_cpus=engine_cpus)


class RayExecutor:
    """See the module docstring."""

    name = "ray"

    def __init__(self, *, address: str | None = None, batch_size: int = DEFAULT_BATCH_SIZE, engines: int = 1,
                 engine_gpus: float = 0, engine_cpus: float = 1) -> None:
        self.address = address
        self.batch_size = batch_size
        self.engines, self.engine_gpus, self.engine_cpus = engines, engine_gpus, engine_cpus
        self._connected = False
        self._adapter: Adapter | None = None
        self._path: RayPath | None = None

    # -- the Executor contract ------------------------------------------------------------------
    def bind(self, adapter: Adapter) -> None:
        prefix = adapter.key.partition(":")[0]
        if prefix not in RAY_PATHS:
            raise BadInput(f"--executor ray sends requests to OpenAI-compatible servers (openai: models with "
                           f"--base-url) or runs vLLM engines on the cluster (vllm: checkpoints); {adapter.key} is "
                           "neither", field="--executor")
        self._adapter, self._path = adapter, RAY_PATHS[prefix]

    def adapter_factory(self) -> AdapterLoader | None:
        return _driver_adapter

    def describe(self) -> dict[str, Any]:
        from medr2.redact import redact_url

        out: dict[str, Any] = {"name": self.name, "address": redact_url(self.address) if self.address else None,
                               "batch_size": self.batch_size}
        if self._path is not None and self._path.runs_engines:
            out.update(engines=self.engines, engine_gpus=self.engine_gpus, engine_cpus=self.engine_cpus)
        return out

    def close(self) -> None:
        if self._connected:
            import ray

            ray.shutdown()  # disconnects this driver; a cluster started by `ray start` keeps running
            self._connected = False

    def send_wave(self, runner: Runner, mode: ModeSpec, wave: Iterable[Item], counts: ModeCounts,
                  summary: RunSummary) -> None:
        assert self._path is not None, "bind() first"
        ready: dict[str, Planned] = {}  # the wave's pending requests (the driver holds them until answered)
        for p in runner.unstored_chunks(mode, wave, counts):
            if p.upstream_error is not None:
                runner.persist_blocked(p, counts, summary)
            else:
                assert p.request is not None
                ready[p.request.key] = p
        if not ready:
            return
        for request_hash, resp in self._path.stream(self, list(ready.values()), runner):
            if request_hash not in ready:  # a row twice, or one never sent: never stored twice (nor by the store)
                raise WorkFailed(f"the Ray Dataset returned request {request_hash} that is not pending")
            runner.persist(ready.pop(request_hash), resp, counts, summary)
        if ready:
            raise WorkFailed(f"the Ray Dataset finished without {len(ready)} of its requests (e.g. "
                             f"{next(iter(ready))}); rerun the command to send them")

    # -- internals ------------------------------------------------------------------------------
    def connect(self) -> None:
        """Join the cluster (once) with this driver's medr2 shipped to the workers; Ray Data quiet."""
        if self._connected:
            return
        check_reachable(self.address)  # before ray.init, which retries an unreachable address for minutes
        import ray

        import medr2

        # the workers run this driver's medr2 (shipped as a runtime-env module, cached by content hash), so a
        # cluster needs only medr2's dependencies installed, and no version skew reaches the request bodies
        runtime_env = {"py_modules": [str(Path(medr2.__file__).parent)], "excludes": ["__pycache__"]}
        ray.init(address=self.address, log_to_driver=False, logging_level=logging.WARNING,
                 configure_logging=True, runtime_env=runtime_env)
        self._connected = True
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False  # medr2's own bar counts stored answers
        ctx.print_on_execution_start = False
        logging.getLogger("ray.data").setLevel(logging.ERROR)  # (e.g. its "progress bars disabled" warning)

    @property
    def adapter(self) -> Adapter:
        assert self._adapter is not None, "bind() first"
        return self._adapter


def _driver_adapter(config: ModelConfig) -> Adapter:
    """The run's adapter in the driver: a :class:`RayPath`'s own (``driver_adapter``) for its prefix, else the
    adapter registry's."""
    from medr2.models.registry import load_adapter

    prefix, _, name = config.spec.partition(":")
    path = RAY_PATHS.get(prefix) if prefix in RAY_PATHS else None
    if path is None or path.driver_adapter is None or not name:
        return load_adapter(config)
    return path.driver_adapter(name, config)


def iter_answers(ds: Any, answer: Callable[[Mapping[str, Any]], Response]) -> Iterator[tuple[str, Response]]:
    """(request hash, response) of every output row of a Dataset, as they arrive; a failed Dataset is a
    :class:`WorkFailed` saying that what came back is stored."""
    try:
        for row in ds.iter_rows():
            yield str(row["request_hash"]), answer(row)
    except KeyboardInterrupt:
        raise
    except Exception as e:  # a failed Ray task or actor: what came back is stored, the rest stays pending
        raise WorkFailed(f"the Ray Dataset failed ({type(e).__name__}: {_first_line(e)}); every answer that "
                         "came back is stored: rerun the same command to resume") from e


def _stream_http(ex: RayExecutor, todo: Sequence[Planned], runner: Runner) -> Iterator[tuple[str, Response]]:
    """The HTTP path (see the module docstring)."""
    import ray
    from ray.data.llm import HttpRequestProcessorConfig, build_processor

    from medr2.models.openai import OpenAIAdapter

    adapter = ex.adapter
    assert isinstance(adapter, OpenAIAdapter)
    ex.connect()
    spec = _BodySpec(model=adapter.model, extra_body=json.dumps(adapter.extra_body, sort_keys=True),
                     max_tokens_field=adapter.max_tokens_field, bench_root=str(runner.bench_root),
                     settings=json.dumps(_settings_dict(runner.settings)), structured=adapter.structured or "")
    headers = {k: v for k, v in adapter._headers.items() if k.lower() != "content-type"}
    per_url = max(1, adapter.concurrency // len(adapter.urls))
    datasets = []
    for k, url in enumerate(adapter.urls):
        rows = [_request_row(p.request.key, p.item, p.messages) for p in todo[k::len(adapter.urls)]
                if p.request is not None]
        if not rows:
            continue
        config = HttpRequestProcessorConfig(
            url=str(url), headers=headers or None, batch_size=ex.batch_size, concurrency=per_url,
            max_retries=adapter.retries, base_retry_wait_time_in_s=adapter.backoff_initial_s,
            session_factory=functools.partial(_BodySession, adapter.timeout_s),
            http_request_stage={"num_cpus": STAGE_CPUS})
        # the postprocess (dropping the request body from the rows that return to the driver) keeps Ray's
        # default of one CPU per map task: with a fraction, Ray started a worker process per concurrent task,
        # which held the first answers back for seconds on a small machine
        processor = build_processor(config, preprocess=functools.partial(_preprocess, spec),
                                    postprocess=_postprocess, preprocess_map_kwargs={"num_cpus": STAGE_CPUS})
        # one block per HTTP-stage batch: a map task hands its output on when it ends, so answers reach the
        # driver (and are stored) batch by batch, not when a whole large block is done
        blocks = -(-len(rows) // ex.batch_size)
        datasets.append(processor(ray.data.from_items(rows, override_num_blocks=blocks)))
    ds = datasets[0].union(*datasets[1:]) if len(datasets) > 1 else datasets[0]
    items = {p.request.key: p.item for p in todo if p.request is not None}
    yield from iter_answers(ds, functools.partial(_response, adapter, items))


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:300] if text else ""


def _settings_dict(s: GenSettings) -> dict[str, Any]:
    return {"max_new_tokens": s.max_new_tokens, "temperature": s.temperature, "top_p": s.top_p, "seed": s.seed,
            "extra": [list(kv) for kv in s.extra]}


def _response(adapter: OpenAIAdapter, items: Mapping[str, Any], row: Mapping[str, Any]) -> Response:
    """The :class:`Response` of one output row: the server's body read as the local client reads it
    (``OpenAIAdapter.completion`` and ``OpenAIAdapter.response``: the same answer, usage, finish_reason, reasoning
    and ``--confidence logprobs`` confidence, the API key masked); ``items``: the pending items by request hash."""
    from medr2.models.openai import ERROR_SNIPPET, Permanent, Transient, error_message

    error = row.get("__inference_error__")
    if error:
        return Response("error", error=adapter._scrub(str(error))[:ERROR_SNIPPET], attempts=0)
    data = str(row["response"]).encode("utf-8")
    try:
        c = adapter.completion(data)
    except (Transient, Permanent):
        msg = adapter._scrub(error_message(data))[:ERROR_SNIPPET]
        return Response("error", error=f"no completion in the server's answer (via the Ray HTTP stage): {msg}")
    return adapter.response(c, items.get(str(row["request_hash"])))


# -- on the Ray workers ------------------------------------------------------------------------------


class _BodySpec:
    """What a worker needs to build request bodies (plain fields: pickled into the Ray tasks)."""

    def __init__(self, *, model: str, extra_body: str, max_tokens_field: str, bench_root: str, settings: str,
                 structured: str = "") -> None:
        self.model = model
        self.extra_body = extra_body
        self.max_tokens_field = max_tokens_field
        self.bench_root = bench_root
        self.settings = settings
        self.structured = structured  # the structured-answer mechanism ("" : none)

    def key(self) -> tuple[str, str, str, str, str, str]:
        return (self.model, self.extra_body, self.max_tokens_field, self.bench_root, self.settings, self.structured)


@dataclass(frozen=True)
class _Asked:
    """What a structured answer's constraint reads of an item (``medr2.models.structured.request_fields``)."""

    form: str
    options: tuple[str, ...]


@functools.lru_cache(maxsize=4)
def _builder(key: tuple[str, str, str, str, str, str]) -> tuple[OpenAIAdapter, GenSettings, Path]:
    """One body builder per worker process and spec: the openai adapter (its image cache encodes each image once
    per worker; no session is opened: only ``body`` is used)."""
    from medr2.models.openai import OpenAIAdapter

    model, extra_body, max_tokens_field, bench_root, settings, structured = key
    s = jsonsafe.loads(settings, max_bytes=None)
    gen = GenSettings(max_new_tokens=s["max_new_tokens"], temperature=s["temperature"], top_p=s["top_p"],
                      seed=s["seed"], extra=tuple((k, v) for k, v in s["extra"]))
    adapter = OpenAIAdapter(model, base_urls=["http://127.0.0.1/v1"],
                            extra_body=jsonsafe.loads(extra_body, max_bytes=None), max_tokens_field=max_tokens_field,
                            structured=structured or None)
    return adapter, gen, Path(bench_root)


def _messages(doc: str) -> tuple[Message, ...]:
    """Messages from their stored JSON (``medr2.run.prompts.messages_json``)."""
    out = []
    for m in jsonsafe.loads(doc, max_bytes=None):
        parts = tuple(Part("text", text=p["text"]) if p["type"] == "text"
                      else Part("image", image=p["image"], image_sha256=p.get("sha256")) for p in m["parts"])
        out.append(Message(m["role"], parts))
    return tuple(out)


def _request_row(request_hash: str, item: Any, messages: Any) -> dict[str, str]:
    """One request as a Ray dataset row: its messages (``medr2.run.prompts.messages_json``) and the item's form and
    options, what a structured answer's constraint is built from (--structured-answers)."""
    return {"request_hash": request_hash, "item_id": item.item_id, "messages": json.dumps(messages),
            "form": item.form, "options": json.dumps(list(item.options))}


def _preprocess(spec: _BodySpec, row: dict[str, Any]) -> dict[str, Any]:
    adapter, settings, root = _builder(spec.key())
    try:
        asked = _Asked(str(row["form"]), tuple(jsonsafe.loads(str(row["options"]), max_bytes=None)))
        req = Request(str(row["request_hash"]), _messages(str(row["messages"])), settings, root,
                      str(row["item_id"]), meta={"item": asked})
        body = adapter.body(req).decode("utf-8")
    except Exception as e:  # noqa: BLE001 - stored as this request's error (the row skips the HTTP stage)
        return {"payload": {BODY_KEY: ""}, "__inference_error__": f"{type(e).__name__}: {e}", "messages": ""}
    return {"payload": {BODY_KEY: body}, "__inference_error__": "", "messages": ""}


def _postprocess(row: dict[str, Any]) -> dict[str, Any]:
    return {"request_hash": row["request_hash"], "response": json.dumps(row["http_response"]),
            "__inference_error__": ""}


class _BodySession:
    """The HTTP stage's session (``HttpRequestProcessorConfig.session_factory``): posts the body medr2 built, as
    its bytes. The stage sends ``json.dumps(payload)``; the payload is ``{BODY_KEY: body}``, so the body travels
    through the Dataset as one string column. A payload of nested dicts would not arrive intact: Ray Data stores
    rows as Arrow, whose struct types unify the content parts of a message, so every image part gained
    ``"text": null`` and every text part ``"image_url": null`` (seen at the test server in
    tests/test_run_ray.py before this session existed)."""

    def __init__(self, timeout_s: float) -> None:
        import aiohttp

        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s))

    async def __aenter__(self) -> _BodySession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._session.close()

    def post(self, url: str, *, data: Any = None, **kwargs: Any) -> Any:
        if isinstance(data, str):
            data = jsonsafe.loads(data, max_bytes=None)[BODY_KEY].encode("utf-8")
        return self._session.post(url, data=data, **kwargs)


RAY_PATHS.register("openai", RayPath(stream=_stream_http))
RAY_PATHS.lazy("vllm", "medr2.run.ray_vllm:VLLM_ENGINE_PATH")
