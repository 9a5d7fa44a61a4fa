"""The demo's two lanes (medr2.demokit.lanes): the setting, the plan's groups, the shared counter across
processes, the time table, and a failure in the background process raised in the main one.

That two lanes compute the same weights and answers as one is checked end to end by the slow
``test_quick_demo_lanes_compute_the_same`` in tests/test_demo.py."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from medr2 import BadInput
from medr2.demokit import DemoPaths, demo_config, demo_models
from medr2.demokit.display import DemoDisplay
from medr2.demokit.lanes import GroupCounter, SecondLane, lane_log
from medr2.demokit.run import _plan
from medr2.demokit.summary import append_timings


def test_lanes_are_a_setting_that_does_not_change_what_is_computed() -> None:
    assert demo_config(lanes=1).lanes == 1 and demo_config(lanes=2).lanes == 2
    assert demo_config().lanes in (1, 2)
    # a folder run with one lane resumes with two and back: lanes are not part of the run's identity
    assert demo_config(lanes=1).identity() == demo_config(lanes=2).identity()
    assert "lanes" not in demo_config().identity()
    with pytest.raises(BadInput, match="1 or 2"):
        demo_config(lanes=3)


def test_the_groups_hold_each_fine_tuning_before_its_evaluation(tmp_path: Path) -> None:
    paths = DemoPaths(tmp_path)
    for lanes in (1, 2):
        cfg = demo_config(quick=True, lanes=lanes, strategies=["augmented"])
        head, groups, tail = _plan(paths, cfg, DemoDisplay(), demo_models(paths, cfg))
        assert [t for t, _ in head][:2] == ["build the sample bench", "build the tiny VLM"]
        assert [t for t, _ in tail] == ["score every run", "write the report and the summary"]
        jobs = [[job for _, job in g] for g in groups]
        per_strategy = [[("finetune", s), ("evaluate", f"tiny-{s}")] for s in ("flat", "chain", "augmented")]
        before = [("evaluate", "tiny-before")]
        # one lane: the untrained model first; two: the long groups first so that the lanes end together
        assert jobs == ([before, *per_strategy] if lanes == 1 else [*per_strategy, before])


def _take_all(counter: GroupCounter, out: object) -> None:
    got = []
    while (i := counter.take()) is not None:
        got.append(i)
    out.put(got)  # type: ignore[attr-defined]


def test_each_group_is_taken_by_exactly_one_lane() -> None:
    ctx = multiprocessing.get_context("spawn")
    counter = GroupCounter(ctx, 200)
    out = ctx.Queue()
    proc = ctx.Process(target=_take_all, args=(counter, out))
    proc.start()
    mine = []
    while (i := counter.take()) is not None:
        mine.append(i)
    theirs = out.get(timeout=60)
    proc.join(timeout=60)
    assert sorted(mine + theirs) == list(range(200)) and not set(mine) & set(theirs)
    assert counter.take() is None


def test_a_failure_in_the_background_lane_is_raised_in_the_main_process(tmp_path: Path) -> None:
    """A real worker process runs the real fine-tuning stage on a folder with no bench: the stage's own
    error (BadInput, naming the file) comes back to the main process, not a hang or a bare interrupt."""
    cfg = demo_config(quick=True, lanes=2)
    ctx = multiprocessing.get_context("spawn")
    groups = [[("fine-tune (flat)", ("finetune", "flat"))]]
    counter = GroupCounter(ctx, len(groups))
    lines: list[str] = []
    done: list[dict] = []
    lane = SecondLane(tmp_path, cfg, groups, counter, ctx, lines.append, done.append)
    try:
        with pytest.raises(BadInput, match="no manifest.json") as err:
            try:
                lane.wait(lambda: None)
            except KeyboardInterrupt:  # the listener interrupts the main thread; run_demo then raises this
                lane.raise_error()
    finally:
        lane.stop()
    assert str(tmp_path / "bench") in str(err.value)
    assert lane.error is not None and lane.error[0] == "fine-tune (flat)"
    assert not done and any("started fine-tune (flat)" in x for x in lines)
    assert lane_log(tmp_path, 2).is_file()  # what the libraries print goes to the log, not the console


def test_time_table_shows_lanes_and_says_what_the_total_is(tmp_path: Path) -> None:
    stages = [{"stage": "fine-tune (flat)", "seconds": 300.0, "cpu_s": 290.0, "lane": 1},
              {"stage": "fine-tune (chain)", "seconds": 400.0, "cpu_s": 380.0, "lane": 2}]
    machine = {"cpus": 2, "platform": "p", "python": "3", "torch": "t"}
    path = tmp_path / "summary.md"
    path.write_text("# s\n", "utf-8")
    append_timings(path, stages, machine, 1, 420.0, lanes=2)
    text = path.read_text("utf-8")
    assert "| Stage | Lane | Wall s | CPU s |" in text and "| fine-tune (chain) | 2 | 400.0 | 380.0 |" in text
    assert "| **total (wall)** | | **420.0** | **670.0** |" in text and "side by side" in text
    path.write_text("# s\n", "utf-8")
    append_timings(path, stages, machine, 1, 700.0, lanes=1, total_is_sum=True)
    text = path.read_text("utf-8")
    assert "| Stage | Wall s | CPU s |" in text and "| **total (sum of the stages)** | **700.0** |" in text
