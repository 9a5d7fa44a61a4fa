"""The demo's display (issue 50, point 12): its stages are numbered in the order they start, in whichever lane, and
each header carries one overall estimate of the time left, computed from the stages finished so far."""

from __future__ import annotations

import io
import re
from pathlib import Path

from hypothesis import given, settings, strategies as st

from medr2.console import make_console
from medr2.demokit import DemoPaths, demo_config, demo_models
from medr2.demokit.display import DemoDisplay, StageClock, stage_cost
from medr2.demokit.run import _plan


def _titles(lanes: int, strategies: list[str]) -> list[str]:
    paths = DemoPaths(Path("/nonexistent-demo"))
    cfg = demo_config(quick=True, lanes=lanes, strategies=strategies)
    head, groups, tail = _plan(paths, cfg, DemoDisplay(), demo_models(paths, cfg))
    return [t for t, _ in head] + [t for g in groups for t, _ in g] + [t for t, _ in tail]


@st.composite
def schedules(draw: st.DrawFn) -> tuple[list[str], list[tuple[int, str]]]:
    """The demo's real stage titles and an order in which two lanes start them (lane, title)."""
    titles = _titles(draw(st.sampled_from([1, 2])), draw(st.lists(st.sampled_from(["augmented", "dpo"]),
                                                                   unique=True, max_size=2)))
    order = draw(st.permutations(titles))
    return titles, [(draw(st.sampled_from([1, 2])), t) for t in order]


@settings(max_examples=40, deadline=None)
@given(schedule=schedules())
def test_stages_are_numbered_in_the_order_they_start_in_either_lane(schedule: tuple[list[str], list]) -> None:
    titles, order = schedule
    buf = io.StringIO()
    ui = DemoDisplay(make_console(file=buf, width=300, force_terminal=False))
    ui.start(Path("/tmp/x"), demo_config(quick=True), titles)
    for lane, title in order:
        if lane == 1:
            ui.stage(title)
        else:
            ui.line(f"lane 2 started {ui.lane_stage(title)}")
        ui.stage_end(title)
    shown = [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in
             re.finditer(r"(\d+)/(\d+) (.+?) · \d+:\d\d elapsed", buf.getvalue())]
    assert [i for i, _, _ in shown] == list(range(1, len(titles) + 1))
    assert {n for _, n, _ in shown} == {len(titles)}
    assert [t for _, _, t in shown] == [t for _, t in order]
    # one estimate per header, and none before the first stage has finished (no rate to go by)
    lines = [x for x in buf.getvalue().splitlines() if " elapsed" in x]
    assert all(x.count(" left") <= 1 for x in lines)
    assert " left" not in lines[0] and all(" left" in x for x in lines[1:])


@settings(max_examples=60, deadline=None)
@given(seconds_per_cost=st.floats(0.001, 10.0), n_done=st.integers(1, 12), lanes=st.sampled_from([1, 2]))
def test_the_time_left_is_the_cost_left_at_the_measured_rate(seconds_per_cost: float, n_done: int,
                                                              lanes: int) -> None:
    """One lane running the stages one after another, each taking its cost times a fixed rate: the estimate after
    any number of finished stages is exactly the cost left at that rate."""
    titles = _titles(lanes, [])
    n_done = min(n_done, len(titles) - 1)
    clock = StageClock(titles, t0=0.0)
    now = 0.0
    for t in titles[:n_done]:
        clock.begin(t)
        now += stage_cost(t) * seconds_per_cost
        clock.end(t)
    left = clock.left(now)
    expected = sum(stage_cost(t) for t in titles[n_done:]) * seconds_per_cost
    assert left is not None and abs(left - expected) <= 1e-6 * max(1.0, expected)
