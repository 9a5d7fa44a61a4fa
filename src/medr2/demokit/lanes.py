"""The demo's second lane: a worker process that runs independent stages beside the main process.

The fine-tunings of the strategies all start from the same untrained checkpoint, so they are independent of
each other and of the evaluation of the untrained model. ``run_demo`` cuts that part of the plan into
*groups* (``fine-tune (s)`` then ``evaluate tiny-s``; ``evaluate tiny-before`` alone) and both lanes take the
next group from a shared counter until none is left: the main process (lane 1) runs its groups with the live
display, the worker (lane 2, a ``spawn`` process with the same torch threads) runs the same stage functions
quietly, writes what the libraries print to ``DIR/logs/lane-2.log``, and reports each stage's wall and CPU
time (measured in the worker) back through a queue; the main process prints one line when a background stage
starts and ends, and records it. Which lane runs a group changes nothing that is computed (each stage seeds its
own work; same seed -> same weights and answers, tested).

On Ctrl-C or SIGTERM the main process terminates the worker (the worker ignores SIGINT, and exits when its
parent is gone); a rerun resumes: a fine-tuning writes ``finetune.json`` last, each run's store skips the
answers it holds. A failure in the worker interrupts the main process and is raised there.
"""

from __future__ import annotations

import _thread
import os
import pickle
import queue
import signal
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

# a job the worker can run: (kind, argument), e.g. ("finetune", "flat"), ("evaluate", "tiny-flat")
Job = tuple[str, str]
# a group of stages one lane runs in order: (title, job) pairs
Group = Sequence[tuple[str, Job]]

LOG_DIR = "logs"


def lane_log(root: Path, lane: int) -> Path:
    return root / LOG_DIR / f"lane-{lane}.log"


class GroupCounter:
    """The index of the next group to run, shared by the lanes (a ``multiprocessing`` value)."""

    def __init__(self, ctx: Any, n: int) -> None:
        self.value = ctx.Value("i", 0)
        self.n = n

    def take(self) -> int | None:
        with self.value.get_lock():
            i = int(self.value.value)
            if i >= self.n:
                return None
            self.value.value = i + 1
            return i


def cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed(title: str, fn: Callable[[], str], lane: int) -> dict[str, Any]:
    """Run one stage; its record: wall and CPU seconds (of this process), note, lane."""
    s0, c0 = time.perf_counter(), cpu_seconds()
    note = fn()
    return {"stage": title, "seconds": round(time.perf_counter() - s0, 1),
            "cpu_s": round(cpu_seconds() - c0, 1), "note": note, "lane": lane}


class _QuietDisplay:
    """What a background stage shows: one status line when a training stage starts (sent to the main
    process, which prints it), nothing live."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say

    def eval_progress(self, label: str) -> Any:
        from medr2.run.runner import Progress

        return Progress()

    def train_callback(self, label: str) -> Any:
        from transformers import TrainerCallback

        say = self._say

        class _Announce(TrainerCallback):  # type: ignore[misc]
            def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
                say(f"fine-tune ({label}): {Path(str(args.output_dir)).name}, {state.max_steps} steps")

        return _Announce()


def _watch_parent(parent: int) -> None:
    """End the worker when the process that started it is gone (killed without cleaning up)."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(1)


def _to_log(path: Path) -> None:
    """Send what this process prints (libraries, warnings) to its log file, not to the demo's console."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _worker(root: str, cfg: Any, groups: Sequence[Group], counter: GroupCounter, events: Any, parent: int,
            lane: int) -> None:
    """Lane ``lane``'s process: take groups until none is left, run their stages, report each."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole process group: the main process decides
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    _to_log(lane_log(Path(root), lane))
    title = "(starting)"
    try:
        from medr2.demokit.run import DemoPaths, prepare_process, stage_function

        prepare_process(cfg)
        paths = DemoPaths(Path(root))
        ui = _QuietDisplay(lambda msg: events.put(("status", msg)))
        while (g := counter.take()) is not None:
            for title, job in groups[g]:
                events.put(("start", title))
                events.put(("done", timed(title, stage_function(paths, cfg, ui, job), lane)))
        events.put(("finished", None))
    except BaseException as e:  # noqa: BLE001 - every failure is reported to the main process
        events.put(("error", (title, traceback.format_exc(), _picklable(e))))


def _picklable(e: BaseException) -> BaseException | None:
    try:
        back = pickle.loads(pickle.dumps(e))
    except Exception:  # noqa: BLE001 - an exception that does not travel is sent as text
        return None
    return back if isinstance(back, BaseException) else None


class LaneFailed(RuntimeError):
    """A stage in the background lane failed (the traceback is in the message)."""


class SecondLane:
    """The worker process of lane 2, and a thread in the main process that receives its reports."""

    def __init__(self, root: Path, cfg: Any, groups: Sequence[Group], counter: GroupCounter, ctx: Any,
                 print_line: Callable[[str], None], on_done: Callable[[dict[str, Any]], None], lane: int = 2,
                 label: Callable[[str], str] = str) -> None:
        self.lane = lane
        self._label = label  # a started stage's label (the demo numbers it in the one sequence of both lanes)
        self._print = print_line
        self._on_done = on_done
        self._events = ctx.Queue()
        self.error: tuple[str, str, BaseException | None] | None = None
        self.current: str | None = None
        self._finished = threading.Event()
        self._lock = threading.Lock()
        self._waiting = False  # the main thread is in wait(): a failure ends the wait, no interrupt needed
        self._proc = ctx.Process(target=_worker, name=f"medr2-demo-lane-{lane}", daemon=True,
                                 args=(str(root), cfg, list(groups), counter, self._events, os.getpid(), lane))
        self._proc.start()
        self._listener = threading.Thread(target=self._listen, name="medr2-demo-lane-listener", daemon=True)
        self._listener.start()

    def _listen(self) -> None:
        while not self._finished.is_set():
            try:
                kind, payload = self._events.get(timeout=0.5)
            except queue.Empty:
                if not self._proc.is_alive():
                    try:  # a last report may still be in the pipe
                        kind, payload = self._events.get(timeout=1.0)
                    except queue.Empty:
                        self._fail(self.current or "(between stages)",
                                   f"the lane {self.lane} process ended (exit code {self._proc.exitcode})", None)
                        return
                else:
                    continue
            if kind == "start":
                self.current = str(payload)
                self._print(f"lane {self.lane} started {self._label(str(payload))}")  # printed as text (medr2.console)
            elif kind == "status":
                self._print(f"lane {self.lane}   {payload}")
            elif kind == "done":
                self.current = None
                self._on_done(payload)
                self._print(f"lane {self.lane} done {payload['stage']} in {payload['seconds']:.1f} s "
                            f"(CPU {payload['cpu_s']:.1f} s): {payload['note']}")
            elif kind == "finished":
                self._finished.set()
            elif kind == "error":
                self._fail(*payload)
                return

    def _fail(self, title: str, text: str, exc: BaseException | None) -> None:
        self.error = (title, text, exc)
        with self._lock:
            interrupt = not self._waiting
            self._finished.set()
        if interrupt:
            _thread.interrupt_main()  # the main process stops its own stage and raises the lane's error

    def raise_error(self) -> None:
        """Raise the worker's failure in the main process (its own exception where it could be sent)."""
        if self.error is None:
            return
        title, text, exc = self.error
        if exc is not None and not isinstance(exc, KeyboardInterrupt):
            raise exc
        raise LaneFailed(f"lane {self.lane}, stage {title!r}: {text}")

    def wait(self, poll: Callable[[], None], every: float = 0.5) -> None:
        """Wait until the worker has run every group left (``poll`` is called in between)."""
        with self._lock:
            self._waiting = True
        try:
            while not self._finished.wait(every):
                poll()
            poll()
        finally:
            with self._lock:
                self._waiting = False
        self.raise_error()
        self._proc.join(timeout=30)

    def stop(self) -> None:
        """End the worker now (interrupt, failure) or reap it (finished), and the listener."""
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(timeout=10)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join()
        self._finished.set()
        self._listener.join(timeout=5)
        self._events.close()
        self._events.join_thread()
