"""Timeouts on the connections medr2 opens to a cluster (docs/reliability.md, issue 41 "timeouts on every
connection the program opens"): ``ray.init`` retries an address it cannot reach for minutes (forever in some
versions), so every ``ray.init`` of medr2 (``build --executor ray``: :mod:`medr2.builder.ray_pool`; ``eval
--executor ray``: :mod:`medr2.run.ray_executor`) first calls :func:`check_reachable`: a TCP connection to the
address given, within :data:`REACH_TIMEOUT_S`; one that fails is BadInput (exit 2) naming the address and the
option. No address (Ray's own default: ``RAY_ADDRESS`` or a local cluster) and ``auto`` / ``local`` are left to
Ray. ``tests/test_reliability_reach.py`` walks ``src/medr2`` with ``ast``: every function calling ``ray.init``
calls :func:`check_reachable` first.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from medr2.errors import BadInput

REACH_TIMEOUT_S = 10.0
_DEFAULT_PORTS = {"ray": 10001, "": 6379}  # Ray client server; a GCS address without a port


def host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a Ray address (``host:port``, ``ray://host:port``, ``[v6]:port``); None for one Ray
    resolves itself (``auto``, ``local``, empty)."""
    a = address.strip()
    if a.lower() in ("", "auto", "local"):
        return None
    parts = urlsplit(a if "://" in a else f"//{a}")
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme, 6379)
    except ValueError as e:
        raise BadInput(f"not a Ray address ({e}): {a[:200]!r}", field="--ray-address") from None
    if not parts.hostname:
        raise BadInput(f"not a Ray address (no host): {a[:200]!r}", field="--ray-address")
    return parts.hostname, port


def check_reachable(address: str | None, *, field: str = "--ray-address",
                    timeout_s: float = REACH_TIMEOUT_S) -> None:
    """Refuse (BadInput naming ``address`` and ``field``) a cluster address no TCP connection reaches within
    ``timeout_s``; nothing for ``None`` / ``auto`` / ``local``."""
    if address is None:
        return
    target = host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=timeout_s):
            pass
    except OSError as e:  # refused, unreachable, unknown host, timed out
        why = "no answer" if isinstance(e, TimeoutError) else (e.strerror or str(e) or type(e).__name__)
        raise BadInput(f"cannot reach the Ray cluster at {target[0]}:{target[1]} within {timeout_s:g} s ({why}); "
                       "check the address, or start the cluster", file=address[:300], field=field) from None
