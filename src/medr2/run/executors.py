"""Executors: where the requests of a run are sent from (``medr2 eval --executor NAME``; docs/running.md).

An executor takes one wave of a mode (the items the runner asks together), asks the runner which of their
requests the store does not hold yet, sends those and hands every answer back to the runner, which stores it
(the driver is the run store's one writer, whatever the executor). Planning, hashing, the store, resume,
merge and scoring are the same for every executor; a run may be resumed with another executor.

- ``local`` (default): the adapter in this process (the openai client's own event loop, or the adapter's
  batches for local models).
- ``ray``: the pending requests flow as a Ray Dataset through ``ray.data.llm``: its HTTP request processor to
  the OpenAI-compatible server(s) of an ``openai:`` model (:mod:`medr2.run.ray_executor`; extra ``medr2[ray]``),
  or its vLLM engine processor for a ``vllm:`` checkpoint, the engines started on the cluster
  (:mod:`medr2.run.ray_vllm`).

An executor is a registry entry (:data:`EXECUTORS`): a factory ``(options: dict) -> Executor``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from medr2.registry import Registry

if TYPE_CHECKING:
    from medr2.models.base import Adapter
    from medr2.models.registry import AdapterLoader
    from medr2.records import Item
    from medr2.run.prompts import ModeSpec
    from medr2.run.runner import ModeCounts, Runner, RunSummary


class Executor(Protocol):
    """Sends the unstored requests of one wave; every answer goes back through ``runner.persist``."""

    name: str

    def bind(self, adapter: Adapter) -> None:
        """Called once with the run's adapter before anything is written (BadInput if it cannot send for it)."""
        ...

    def send_wave(self, runner: Runner, mode: ModeSpec, wave: Iterable[Item], counts: ModeCounts,
                  summary: RunSummary) -> None:
        """``wave``: the items asked together, streamed (iterate it once)."""
        ...

    def describe(self) -> dict[str, Any]:
        """What the run manifest records about this executor (per invocation)."""
        ...

    def adapter_factory(self) -> AdapterLoader | None:
        """How the driver builds the run's adapter for this executor (``loader(model_config)``, as
        :func:`medr2.models.registry.load_adapter`), or None: the adapter registry's. E.g. the ray executor holds a
        ``vllm:`` checkpoint's description in the driver and starts the engines on the cluster."""
        ...

    def close(self) -> None: ...


ExecutorFactory = Callable[[Mapping[str, Any]], Executor]

EXECUTORS: Registry[ExecutorFactory] = Registry("executor", field="--executor")


class LocalExecutor:
    """The adapter in this process: a pulling adapter (``openai``) plans while requests are in flight."""

    name = "local"

    def bind(self, adapter: Adapter) -> None:
        return None

    def send_wave(self, runner: Runner, mode: ModeSpec, wave: Iterable[Item], counts: ModeCounts,
                  summary: RunSummary) -> None:
        from medr2.run.runner import SEND_CHUNK, PullingAdapter

        if isinstance(runner.adapter, PullingAdapter):  # plan while earlier requests are in flight
            runner.send_pulled(runner.unstored_chunks(mode, wave, counts), counts, summary)
        else:  # planned and looked up a chunk at a time as the wave streams from the bench
            runner.send_streamed(runner.unstored_chunks(mode, wave, counts, SEND_CHUNK), counts, summary)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def adapter_factory(self) -> AdapterLoader | None:
        return None

    def close(self) -> None:
        return None


def _local(options: Mapping[str, Any]) -> Executor:
    from medr2.errors import BadInput

    if options:
        raise BadInput(f"the local executor takes no options (got {sorted(options)})", field="--executor")
    return LocalExecutor()


EXECUTORS.register("local", _local)
EXECUTORS.lazy("ray", "medr2.run.ray_executor:make_ray_executor")


def make_executor(name: str, options: Mapping[str, Any] | None = None) -> Executor:
    """The executor registered as ``name`` (unknown: BadInput naming ``--executor``)."""
    return EXECUTORS.lookup(name)(dict(options or {}))
