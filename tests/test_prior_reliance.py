"""The prior-reliance measure end to end (issue 49): two scripted models answer the comparison items of a built
sample bench through ``medr2.evaluate`` and ``medr2.score``. One copies the prior study's labels (it reads the
prior as if it were the current image: "unchanged" whatever the current shows); one reads the current image
(answers from the truth of both studies' labels). The measure catches the first and not the second."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import medr2
from medr2 import Bench, Case, Item, Request, Response
from medr2.bench.format import load_bench
from medr2.tasks.vocab import norm


@pytest.fixture(scope="module")
def bench(build_sample: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return load_bench(build_sample(tmp_path_factory.mktemp("prior") / "bench", n_cases=80, variants="T12,V14"))


def _present(case: Case, label: str) -> bool:
    return any(norm(f.label) == norm(label) for f in case.findings)


def prior_copier(bench: Bench) -> Callable[[Request], str | Response]:
    """Answers a comparison as if the current image showed what the prior's labels say: the finding's state on
    the "current" study is copied from the prior, so nothing changed. Other items: the right answer."""
    items = {it.item_id: it for it in bench.items}
    cases = {c.case_id: c for c in bench.cases}

    def model(request: Request) -> str | Response:
        it = items[request.item_id]
        if it.task != "s3.change":
            return it.answer
        prior = cases[next(r.case_id for r in it.image_list() if r.role == "prior") or ""]
        copied = _present(prior, it.meta["finding"])  # the prior's state, taken for the current one
        assert copied == (it.meta["prior_state"] == "present")
        return _letter(it, "unchanged")

    return model


def current_reader(bench: Bench) -> Callable[[Request], str | Response]:
    """Answers every item from the truth: the current image read against its prior."""
    items = {it.item_id: it for it in bench.items}

    def model(request: Request) -> str | Response:
        return items[request.item_id].answer

    return model


def _letter(it: Item, text: str) -> str:
    return chr(65 + it.options.index(text))


def _score(bench: Bench, model: Callable[[Request], str | Response], out: Path, name: str) -> dict[str, Any]:
    medr2.evaluate(bench.root, model, out, split="all", task="s3.change", variants="clean,T12,V14", name=name,
                   command=["test"])
    metrics = medr2.score(out, mixed_splits=True, resamples=200)
    return metrics["modes"]["independent"]["comparison"]


def test_prior_copier_caught_current_reader_not(bench: Bench, tmp_path: Path) -> None:
    change = [it for it in bench.items if it.task == "s3.change" and it.variant == "clean"]
    differ = [it for it in change if it.meta["change"] != "unchanged"]
    assert len(differ) >= 5, len(differ)
    copier = _score(bench, prior_copier(bench), tmp_path / "copier", "prior-copier")
    reader = _score(bench, current_reader(bench), tmp_path / "reader", "current-reader")

    assert copier["prior_reliance"]["n"] == reader["prior_reliance"]["n"] == len(differ)
    assert copier["prior_reliance"]["value"] == 1.0 and copier["current_reading"]["value"] == 0.0
    assert reader["prior_reliance"]["value"] == 0.0 and reader["current_reading"]["value"] == 1.0
    assert reader["acc"]["value"] == 1.0 and reader["acc"]["n"] == len(change)
    # the copier is right only where nothing changed
    unchanged = len(change) - len(differ)
    assert copier["acc"]["value"] == pytest.approx(unchanged / len(change))
    assert copier["tasks"]["s3.change"]["value"] == copier["acc"]["value"]
    for block in (copier, reader):
        m = block["prior_reliance"]
        assert m["lo"] is not None and m["lo"] <= m["value"] <= m["hi"]  # an interval (bootstrap over patients)
    # the same under the order reversed (V14) and a prior report contradicting the prior (T12)
    for variant in ("V14", "T12"):
        assert copier["by_variant"][variant]["prior_reliance"]["value"] == 1.0, variant
        assert reader["by_variant"][variant]["prior_reliance"]["value"] == 0.0, variant
        assert copier["by_variant"][variant]["prior_reliance"]["n"] == len(differ)


def test_score_prints_comparison(bench: Bench, tmp_path: Path) -> None:
    from medr2.cli.score import comparison_line

    block = _score(bench, prior_copier(bench), tmp_path / "run", "prior-copier")
    line = comparison_line(block)
    assert line is not None and "prior reliance 1.000" in line and "comparison accuracy" in line
    assert comparison_line({}) is None and comparison_line(None) is None


def test_report_shows_a_comparison_plot_only_for_runs_with_comparison_items() -> None:
    from medr2 import PlotContext
    from medr2.reporting.plots import make_plots
    from tests.test_report_plots import _m, _run, check_readable

    runs = [_run(k, ("independent",)) for k in range(2)]
    for k, r in enumerate(runs):
        r.metrics["modes"]["independent"]["comparison"] = {
            "acc": _m(0.6), "prior_reliance": _m(0.9 - 0.8 * k), "current_reading": _m(0.1 + 0.8 * k),
            "tasks": {"s3.change": _m(0.6)}}
    plots = {p.name: p for p in make_plots(PlotContext(runs, {}))}
    cmp = plots["comparison"]
    check_readable(cmp)
    assert cmp.layout["axes"][0]["bar_metrics"] == ["acc", "prior_reliance", "current_reading"] * 2
    assert "prior_reliance" in cmp.caption and "prior" in cmp.title.lower()
    assert "comparison" not in {p.name for p in make_plots(PlotContext([_run(0, ("independent",))], {}))}
