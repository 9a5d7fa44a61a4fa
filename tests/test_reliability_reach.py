"""Timeouts on cluster connections (docs/reliability.md, issue 41): :func:`medr2.reach.check_reachable` before
every ``ray.init``.

- ``test_every_ray_init_is_preceded_by_the_reach_check``: an ``ast`` walk of ``src/medr2``: each function calling
  ``ray.init`` calls ``check_reachable`` on an earlier line;
- ``test_reach_property``: generated addresses of ports nobody listens on (``host:port``, ``ray://host:port``,
  ``[::1]:port`` forms) are refused at once naming the address; a port a real socket listens on is reached;
  an address that does not answer is refused after the timeout, not retried;
- ``test_build_with_an_unreachable_cluster_is_exit_2``: ``medr2 build --executor ray --ray-address`` of a closed
  port: exit 2 naming the address, within seconds (Ray is not needed: the check comes first).
"""

from __future__ import annotations

import ast
import socket
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import medr2
from medr2 import BadInput
from medr2.reach import check_reachable, host_port
from tests.cli_inproc import run_cli

SRC = Path(medr2.__file__).parent


def _ray_inits() -> list[tuple[Path, ast.AST, int]]:
    out = []
    for p in SRC.rglob("*.py"):
        tree = ast.parse(p.read_text("utf-8"), str(p))
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for n in ast.walk(fn):
                if isinstance(n, ast.Call) and ast.unparse(n.func) == "ray.init":
                    out.append((p, fn, n.lineno))
    return out


def test_every_ray_init_is_preceded_by_the_reach_check() -> None:
    inits = _ray_inits()
    assert len(inits) >= 2  # build's pool and eval's executor
    for p, fn, line in inits:
        checks = [n.lineno for n in ast.walk(fn) if isinstance(n, ast.Call)
                  and ast.unparse(n.func).endswith("check_reachable")]
        assert checks and min(checks) < line, f"{p}:{line}: call medr2.reach.check_reachable before ray.init"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nobody listens there


@settings(max_examples=10, deadline=None)
@given(form=st.sampled_from(["{h}:{p}", "ray://{h}:{p}", " {h}:{p} "]))
def test_reach_property(form: str) -> None:
    port = _closed_port()
    address = form.format(h="127.0.0.1", p=port)
    t0 = time.monotonic()
    with pytest.raises(BadInput) as e:
        check_reachable(address, timeout_s=5)
    assert time.monotonic() - t0 < 5 and e.value.field == "--ray-address" and str(port) in str(e.value)
    with socket.socket() as srv:
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        check_reachable(form.format(h="127.0.0.1", p=srv.getsockname()[1]), timeout_s=5)  # reached: no error


def test_addresses_ray_resolves_itself_are_left_to_it() -> None:
    for a in (None, "auto", "local", ""):
        check_reachable(a, timeout_s=0.1)
    assert host_port("ray://head:10001") == ("head", 10001) and host_port("[::1]:6379") == ("::1", 6379)
    assert host_port("head") == ("head", 6379) and host_port("ray://head") == ("head", 10001)
    with pytest.raises(BadInput):
        host_port("head:notaport")


def test_silent_address_times_out() -> None:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    fillers = []
    try:  # a full accept queue: further connections get no answer (or are refused) - never a hang
        for _ in range(8):
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(srv.getsockname())
            fillers.append(c)
        t0 = time.monotonic()
        try:
            check_reachable(f"127.0.0.1:{srv.getsockname()[1]}", timeout_s=1.0)
        except BadInput as e:
            assert "127.0.0.1" in str(e)
        assert time.monotonic() - t0 < 5
    finally:
        for c in fillers:
            c.close()
        srv.close()


def test_build_with_an_unreachable_cluster_is_exit_2(tmp_path: Path) -> None:
    address = f"127.0.0.1:{_closed_port()}"
    t0 = time.monotonic()
    code, shown = run_cli("build", "--source", "sample", "--cases", "2", "--out", str(tmp_path / "b"),
                          "--executor", "ray", "--ray-address", address)
    assert code == 2 and address in shown and "cannot reach the Ray cluster" in shown, shown
    assert time.monotonic() - t0 < 30
