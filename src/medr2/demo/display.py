"""The demo's console display (rich, on stderr): a header per stage, the eval command's live bar,
a bar per fine-tuning stage (steps, loss), spinners for the rest, and the time of each stage."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from medr2.console import rule, say, status

if TYPE_CHECKING:
    from medr2.demo.run import DemoConfig, DemoResult
    from medr2.run.runner import Progress


class StageDisplay(Protocol):
    """What the stage functions that may run in the background lane (fine-tune, evaluate) show."""

    def eval_progress(self, label: str) -> Any: ...

    def train_callback(self, label: str) -> Any: ...


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
        self._n = 0

    def start(self, root: Path, cfg: DemoConfig, n_stages: int) -> None:
        self._n = n_stages
        say(("medr2 demo", "bold"), " into ", (str(root), "cyan"), f": {cfg.cases} sample cases, seed {cfg.seed}, "
            f"variants {','.join(cfg.variants)}, {n_stages} stages", console=self.console)

    def stage(self, i: int, title: str) -> None:
        rule((f"{i}/{self._n} {title}", "bold"), console=self.console)

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
