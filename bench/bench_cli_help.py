"""``medr2 --help`` start-up time against a bare typer app with the same number of commands.

Each sample is a fresh process (``python -c ...``) that prints the help; wall time from ``time.perf_counter``
around ``subprocess.run``, CPU time (user + system) of the child from ``os.wait4``'s resource usage. Samples
alternate between the two commands, so load from other processes hits both alike; the median of ``--repeats``
is printed with the ratio. ``--before-src DIR`` adds the medr2 sources in DIR (e.g. a copy of ``src/`` taken
before a change) as a third command, with the same ``medr2.cli`` entry point (or ``medr2.cli`` module path).

    .venv/bin/python bench/bench_cli_help.py --repeats 15
    .venv/bin/python bench/bench_cli_help.py --repeats 15 --before-src /tmp/medr2-before/src
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"

BARE = """
import typer
app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False, help="bare typer")
for i in range(16):
    app.command(f"cmd{i}")(lambda: None)
app(["--help"], standalone_mode=False)
"""
MEDR2 = "import sys; sys.argv = ['medr2', '--help']; from medr2.cli import main; main()"


def sample(code: str, src: Path | None) -> tuple[float, float]:
    env = {**os.environ, "COLUMNS": "100"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0:
        raise SystemExit(f"exit {proc.returncode}: {err}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--before-src", type=Path, default=None)
    args = ap.parse_args()
    cmds: dict[str, tuple[str, Path | None]] = {"bare typer": (BARE, None), "medr2 --help": (MEDR2, SRC)}
    if args.before_src:
        cmds["medr2 --help (before)"] = (MEDR2, args.before_src)
    for code, src in cmds.values():  # warm the file cache
        sample(code, src)
    walls: dict[str, list[float]] = {k: [] for k in cmds}
    cpus: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(args.repeats):
        for name, (code, src) in cmds.items():
            w, c = sample(code, src)
            walls[name].append(w)
            cpus[name].append(c)
    load = os.getloadavg()
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}; median of {args.repeats} fresh processes")
    base_w, base_c = statistics.median(walls["bare typer"]), statistics.median(cpus["bare typer"])
    for name in cmds:
        w, c = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"{name:24s} wall {w:.3f} s ({w / base_w:.2f}x bare)  cpu {c:.3f} s ({c / base_c:.2f}x bare)")


if __name__ == "__main__":
    main()
