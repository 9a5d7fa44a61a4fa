"""medr2.interrupts.interruptible: a helper thread's ``interrupt_main`` reaches the main thread whatever SIGINT was
set to; what SIGINT did before is kept otherwise. Real signals, in this process and in a child process."""

from __future__ import annotations

import _thread
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from medr2.interrupts import interruptible


@pytest.fixture()
def sigint_ignored() -> Iterator[None]:
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _interrupt_soon(flag: dict[str, bool]) -> threading.Thread:
    def run() -> None:
        time.sleep(0.2)
        flag["died"] = True  # the watcher's reason first, then the interrupt (as RunningServer.watch)
        _thread.interrupt_main()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def _busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.01)


def test_interrupt_main_reaches_a_process_that_ignores_sigint(sigint_ignored: None) -> None:
    flag = {"died": False}
    with pytest.raises(KeyboardInterrupt), interruptible(lambda: flag["died"]):
        _interrupt_soon(flag)
        _busy(20)
    assert flag["died"]
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # restored


def test_without_the_helper_interrupt_main_does_nothing_there(sigint_ignored: None) -> None:
    """Why the helper exists: with SIGINT ignored, interrupt_main is a no-op."""
    flag = {"died": False}
    _interrupt_soon(flag).join()
    _busy(0.2)
    assert flag["died"]


def test_a_real_sigint_stays_ignored_until_the_reason_is_set(sigint_ignored: None) -> None:
    with interruptible(lambda: False):
        os.kill(os.getpid(), signal.SIGINT)
        _busy(0.3)  # the handler runs and ignores it
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN


def test_pythons_own_handler_is_left_alone() -> None:
    before = signal.getsignal(signal.SIGINT)
    assert callable(before)
    with interruptible(lambda: True):
        assert signal.getsignal(signal.SIGINT) is before


def test_the_default_action_is_kept_when_the_reason_is_not_set() -> None:
    """SIGINT left to the default action (set explicitly): a real SIGINT still ends the process by it."""
    code = ("import os, signal, time\n"
            "from medr2.interrupts import interruptible\n"
            "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
            "with interruptible(lambda: False):\n"
            "    os.kill(os.getpid(), signal.SIGINT)\n"
            "    time.sleep(5)\n"
            "print('survived')\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == -signal.SIGINT and "survived" not in p.stdout, (p.returncode, p.stdout, p.stderr)
