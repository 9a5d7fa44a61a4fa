"""The demo's console display (rich, on stderr): a header per stage, numbered in the order the stages start
(in either lane) with the time so far and one overall estimate of the time left, the eval command's live bar,
a bar per fine-tuning stage (steps, loss), spinners for the rest, and the time of each stage."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from medr2.console import rule, say, status

if TYPE_CHECKING:
    from medr2.demokit.run import DemoConfig, DemoResult
    from medr2.run.runner import Progress


class StageDisplay(Protocol):
    """What the stage functions that may run in the background lane (fine-tune, evaluate) show."""

    def eval_progress(self, label: str) -> Any: ...

    def train_callback(self, label: str) -> Any: ...


# What each kind of stage costs, in CPU seconds of the measured demo (docs/demo.md, "Time budget"): only the ratios
# matter (the rate is measured as the demo goes), so the estimate holds on a faster or slower machine. First match.
STAGE_COSTS: tuple[tuple[str, float], ...] = (
    ("build the sample bench", 35.0), ("build the tiny VLM", 5.0), ("fine-tune", 550.0), ("evaluate tiny-", 100.0),
    ("evaluate", 3.0), ("score", 15.0), ("write the report", 13.0),
)


def stage_cost(title: str) -> float:
    return next((cost for prefix, cost in STAGE_COSTS if title.startswith(prefix)), 10.0)


def _clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}:{s:02d}"


class StageClock:
    """The demo's stages as one piece of work: each stage's number in the order stages start (whichever lane starts
    it), and one estimate of the time left: the cost of the stages not finished over the rate measured so far (cost
    of the stages finished per second of wall time, both lanes together)."""

    def __init__(self, titles: list[str], t0: float | None = None) -> None:
        self.titles = list(titles)
        self.t0 = time.perf_counter() if t0 is None else t0
        self._started: list[str] = []
        self._ended: set[str] = set()
        self._lock = threading.Lock()

    def begin(self, title: str) -> int:
        with self._lock:
            if title not in self._started:
                self._started.append(title)
            return self._started.index(title) + 1

    def end(self, title: str) -> None:
        with self._lock:
            self._ended.add(title)

    def left(self, now: float | None = None) -> float | None:
        """Seconds left (None before a stage has finished: no rate yet)."""
        elapsed = (time.perf_counter() if now is None else now) - self.t0
        with self._lock:
            done = sum(stage_cost(t) for t in self._ended)
            todo = sum(stage_cost(t) for t in self.titles if t not in self._ended)
        if done <= 0 or elapsed <= 0:
            return None
        return todo / (done / elapsed)

    def header(self, title: str, now: float | None = None) -> str:
        """``i/n title · m:ss elapsed, about m:ss left``."""
        i = self.begin(title)
        t = time.perf_counter() if now is None else now
        left = self.left(t)
        eta = f", about {_clock(left)} left" if left is not None else ""
        return f"{i}/{len(self.titles)} {title} · {_clock(t - self.t0)} elapsed{eta}"


class CountBar:
    """A bar over a known number of named steps (e.g. runs to score)."""

    def __init__(self, console: Any, label: str, total: int) -> None:
        from medr2.console import progress

        self._bar = progress(("{task.description}", "bold"), "bar", "count", "elapsed", "{task.fields[last]}",
                             console=console)
        self._task = self._bar.add_task(label, total=total, last="")

    def __enter__(self) -> CountBar:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def advance(self, name: str) -> None:
        self._bar.update(self._task, advance=1, last=name)


class DemoDisplay:
    """What ``medr2 demo`` shows while it works."""

    def __init__(self, console: Any = None) -> None:
        from medr2.console import get_console

        self.console = console or get_console(err=True)
        self.clock = StageClock([])

    def start(self, root: Path, cfg: DemoConfig, titles: list[str]) -> None:
        self.clock = StageClock(titles)
        say(("medr2 demo", "bold"), " into ", (str(root), "cyan"), f": {cfg.cases} sample cases, seed {cfg.seed}, "
            f"variants {','.join(cfg.variants)}, {len(titles)} stages", console=self.console)

    def stage(self, title: str) -> None:
        """The header of a stage this process runs."""
        rule((self.clock.header(title), "bold"), console=self.console)

    def lane_stage(self, title: str) -> str:
        """The label of a stage another lane started (numbered in the same sequence)."""
        return self.clock.header(title)

    def stage_end(self, title: str) -> None:
        self.clock.end(title)

    def stage_done(self, title: str, seconds: float, note: str) -> None:
        say(("done", "green"), f" {title} in {seconds:.1f} s: {note}", console=self.console)

    @contextmanager
    def status(self, label: str) -> Iterator[Callable[[str], None]]:
        """A spinner; the yielded function replaces its text (and logs the line)."""
        with status(label, console=self.console) as update:
            def report(msg: str) -> None:
                update(msg)
                say(f"  {msg}", console=self.console)

            yield report

    def eval_progress(self, label: str) -> Progress:
        """The live bar ``medr2 eval`` shows (done, rate, ETA, retries, errors)."""
        from medr2.progress import RichProgress

        return RichProgress(label, console=self.console)  # type: ignore[return-value]

    def count_bar(self, label: str, total: int) -> CountBar:
        return CountBar(self.console, label, total)

    def train_callback(self, label: str) -> Any:
        """A transformers ``TrainerCallback`` drawing a bar per training stage (steps, loss)."""
        return make_train_callback(self.console, label)

    def line(self, text: str) -> None:
        """One line above whatever is live (the background lane's reports; called from another thread)."""
        say(text, console=self.console)

    @contextmanager
    def waiting(self, label: str) -> Iterator[Callable[[str], None]]:
        """A spinner while the main process waits for the background lane; the function updates its text."""
        with status(label, console=self.console) as update:
            yield update

    def finish(self, result: DemoResult) -> None:
        rule(("medr2 demo finished", "bold"), console=self.console)
        for s in result.stages:
            reused = " (reused: time of the run that did it)" if s.get("reused") else ""
            lane = f" [lane {s['lane']}]" if s.get("lane", 1) != 1 else ""
            say(f"  {s['seconds']:7.1f} s  {s['stage']}{lane} (CPU {s['cpu_s']:.1f} s){reused}", console=self.console)
        say(f"  {result.seconds:7.1f} s  total (wall)", console=self.console)


def make_train_callback(console: Any, label: str) -> Any:
    from transformers import TrainerCallback

    from medr2.console import progress

    class _Bar(TrainerCallback):  # type: ignore[misc]
        def __init__(self) -> None:
            self._bar: Any = None
            self._task: Any = None
            self._t0 = 0.0

        def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            stage = Path(str(args.output_dir)).name  # finetune names its stages' folders "full" / "lora"
            self._bar = progress(("{task.description}", "bold"), "bar", "count",
                                 "steps  last-step loss {task.fields[loss]}", "elapsed", console=console)
            self._bar.start()
            self._task = self._bar.add_task(f"{label}: {stage}", total=state.max_steps, loss="-")
            self._t0 = time.perf_counter()

        def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self._bar is not None:
                self._bar.update(self._task, completed=state.global_step)

        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None,
                   **kw: Any) -> None:
            if self._bar is not None and logs and "loss" in logs:
                self._bar.update(self._task, loss=f"{float(logs['loss']):.3f}")

        def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
            if self._bar is not None:
                self._bar.update(self._task, completed=state.global_step)
                self._bar.stop()
                self._bar = None

    return _Bar()
