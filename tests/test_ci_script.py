"""`.ci/run`'s control flow, run for real with every step it calls replaced by a stub that logs its name.

The stop of 2026-12-02 failed CI with exit 1 after every suite had passed: the EXIT trap that stops the background
installs ran `pkill`, which finds nothing once they are done, and under `set -e` a failing command in an EXIT trap
becomes the script's exit status. These tests run the real script, so that cannot come back unseen.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETUPS = ("setup_vllm", "setup_vllm_ray", "setup_vision", "setup_lmms_eval", "setup_router")


def _stub(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/usr/bin/env bash\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _layout(tmp_path: Path, fail: str = "") -> tuple[Path, Path]:
    """A copy of `.ci/run` beside stub scripts and venvs; each stub appends its name to log.txt (and exits 1 when it is
    the one named by `fail`)."""
    log = tmp_path / "log.txt"
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")

    def body(name: str) -> str:
        return f'echo {name} >> "{log}"' + ("; exit 1" if name == fail else "")

    for name in ("install", "test", "setup_ray", *SETUPS):
        _stub(tmp_path / "scripts" / f"{name}.sh", body(name))
    # `. .venv/bin/activate` puts the stub python first on PATH; .venv-vision's python is called by path.
    bindir = tmp_path / ".venv" / "bin"
    _stub(bindir / "python", f'echo "python $*" >> "{log}"' + ("; exit 1" if fail == "python" else ""))
    (bindir / "activate").write_text(f'export PATH="{bindir}:$PATH"\n')
    _stub(tmp_path / ".venv-vision" / "bin" / "python", f'echo "vision $*" >> "{log}"')
    return tmp_path / ".ci" / "run", log


def _run(script: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV",)}
    return subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.skipif(shutil.which("pkill") is None, reason="pkill (procps) is not installed here")
def test_ci_run_exits_0_when_every_step_passes(tmp_path: Path) -> None:
    script, log = _layout(tmp_path)
    proc = _run(script)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = log.read_text().splitlines()
    assert lines[0] == "install"
    # Every background install ran, each once, in order.
    assert [x for x in lines if x in SETUPS] == list(SETUPS)
    steps = [x.split(" ")[0] if x.startswith(("python", "vision")) else x for x in lines if x not in SETUPS]
    # ray[data] goes into .venv in the background while the families' tests run in .venv-vision: after mypy,
    # before the slow suite, in any order with the families' two runs
    assert [x for x in steps if x != "setup_ray"] == ["install", "test", "python", "vision", "vision", "python"]
    assert steps.count("setup_ray") == 1 and 3 <= steps.index("setup_ray") <= 5
    assert lines[-1].startswith("python -m pytest -m slow")
    assert proc.stdout.rstrip().endswith("done")


@pytest.mark.skipif(shutil.which("pkill") is None, reason="pkill (procps) is not installed here")
def test_ci_run_fails_with_the_log_when_an_install_fails(tmp_path: Path) -> None:
    script, log = _layout(tmp_path, fail="setup_vision")
    proc = _run(script)
    assert proc.returncode == 1
    assert "making an environment failed" in proc.stderr
    assert "== " in proc.stdout and "setup_vision" in proc.stdout  # the background log is printed
    lines = log.read_text().splitlines()
    assert "setup_lmms_eval" not in lines  # the installs stop at the first failure
    assert not any(x.startswith("vision") for x in lines)  # and nothing after the wait runs


@pytest.mark.skipif(shutil.which("pkill") is None, reason="pkill (procps) is not installed here")
@pytest.mark.parametrize(("fail", "says", "never"), [
    ("test", "", "python"),  # the fast suite: nothing after it runs
    ("setup_ray", "installing ray[data] in .venv failed", "python -m pytest -m slow"),  # no slow suite
])
def test_ci_run_fails_when_a_step_fails(tmp_path: Path, fail: str, says: str, never: str) -> None:
    script, log = _layout(tmp_path, fail=fail)
    proc = _run(script)
    assert proc.returncode == 1
    assert says in proc.stderr
    lines = log.read_text().splitlines()
    assert fail in lines and not any(x.startswith(never) for x in lines)
