"""``medr2 build --executor ray``: the build's worker passes (:func:`medr2.builder.parallel.ordered_map`) run their
chunks as Ray tasks on a Ray cluster instead of a local process pool. Everything else (planning, the spools, the
order results are consumed in, the writer) stays in the driver, so the bench is byte-identical to a local build
of the same seed (its bytes depend neither on the number of workers nor on where a chunk ran).

The workers write case images into the bench folder (``ImageStore``), so on a cluster the output folder must be on
storage every node sees at the same path. The driver's ``medr2`` package is shipped to the workers (runtime env
``py_modules``), as for ``eval --executor ray``. Extra ``medr2[ray]``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.reach import check_reachable


class RayPool:
    """A :class:`medr2.builder.parallel.Pool` of Ray tasks (one CPU each); the state is put in the object store once
    per ``ordered_map`` pass and handed to every task of it by reference."""

    def __init__(self, address: str | None = None) -> None:
        check_reachable(address)  # before ray.init, which retries an unreachable address for minutes
        try:
            import ray
        except ImportError as e:
            raise BadInput(f"--executor ray needs Ray (pip install 'medr2[ray]'): {e}", field="--executor") from e
        import medr2
        from medr2.builder.parallel import run_chunk_with_state

        runtime_env = {"py_modules": [str(Path(medr2.__file__).parent)], "excludes": ["__pycache__"]}
        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING, configure_logging=True,
                 runtime_env=runtime_env)
        self._ray = ray
        self._task: Any = ray.remote(num_cpus=1, max_retries=0)(run_chunk_with_state)
        self._state: tuple[object, Any] | None = None  # (the state object, its object ref)

    def workers(self) -> int:
        """The cluster's CPUs (one task per CPU)."""
        return max(1, int(self._ray.cluster_resources().get("CPU", 1)))

    def submit(self, fn: Callable[..., Any], chunk: list[Any], state: object) -> Any:
        if self._state is None or self._state[0] is not state:
            self._state = (state, self._ray.put(state))
        return self._task.remote(fn, chunk, self._state[1])

    def result(self, handle: Any) -> list[Any]:
        out: list[Any] = self._ray.get(handle)
        return out

    def close(self) -> None:
        self._state = None
        self._ray.shutdown()
