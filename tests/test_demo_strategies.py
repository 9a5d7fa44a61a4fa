"""The demo's strategy-vs-flat comparison: paired metric differences with case-bootstrap intervals and the
cluster-aware case-swap test (medr2.scoring.paired), the summary table and its sentences, ``--strategies``.

Fast tests run the real scorer on the small report fixture and on hand-made metric books; the slow one
runs ``medr2 demo --quick --strategies augmented`` end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, strategies as st

from medr2 import BadInput
from medr2.demokit import DEMO_FILE, SUMMARY_FILE, demo_config
from medr2.demokit.summary import STRATEGY_COLUMNS, significance_word, strategy_table, strategy_verdict, write_summary
from medr2.reporting.fmt import fmt_value_n
from medr2.scoring.paired import case_swap_test, compare_metrics, significant
from medr2.scoring.stats import MetricBook, clustered_mcnemar, difference


def _book(a: list[list[int]], b: list[list[int]]) -> tuple[MetricBook, int, int]:
    """Accuracy of two runs over the same items, ``a[k]`` = the 0/1 results of case k's items."""
    cases = [f"c{k:02d}" for k, items in enumerate(a) for _ in items]
    book = MetricBook(cases)
    idx = book.case_index(cases)
    ia = book.ratio_metric(idx, np.concatenate([np.asarray(x, float) for x in a]))
    ib = book.ratio_metric(idx, np.concatenate([np.asarray(x, float) for x in b]))
    return book, ia, ib


def test_case_swap_test_matches_the_exact_sign_flip_where_it_is_exact() -> None:
    # one discordant item per case, all in A's favour: the exact sign-flip p over 8 cases is 2/256
    a = [[1, 1]] * 8
    b = [[0, 1]] * 8
    book, ia, ib = _book(a, b)
    got = case_swap_test(book, ia, ib, n_resamples=4000, seed=1)
    exact = clustered_mcnemar(np.ones(16, bool), np.tile([False, True], 8), np.repeat(np.arange(8), 2))
    assert exact["method"] == "sign-flip exact" and exact["p"] == pytest.approx(2 / 256)
    assert got["p"] == pytest.approx(exact["p"], abs=0.006)
    # identical runs: nothing to swap, every resample ties with the observed 0
    same, ja, jb = _book(a, a)
    assert case_swap_test(same, ja, jb, n_resamples=500)["p"] == 1.0


def test_case_swap_test_respects_clusters() -> None:
    # 3 cases, A wins all 10 items of each: item-level evidence is strong, case-level evidence is not
    a = [[1] * 10] * 3
    b = [[0] * 10] * 3
    book, ia, ib = _book(a, b)
    got = case_swap_test(book, ia, ib, n_resamples=4000, seed=0)
    assert got["p"] == pytest.approx(2 / 8, abs=0.03)  # only the all-same swaps reach |Δ| = 1
    d = book.derived([ia, ib], difference)
    delta = book.evaluate(200, 0)[d]
    assert delta["value"] == 1.0
    assert not significant({"delta": delta, "test": got})  # the interval excludes 0, the test does not reject


def _entry(value: float, lo: float, hi: float, p: float) -> dict:
    cell = {"value": value, "lo": lo, "hi": hi, "n": 40, "n_cases": 20}
    return {"a": cell, "b": cell, "delta": cell, "test": {"p": p}}


def test_verdict_states_what_is_significant_and_where_nothing_is() -> None:
    headers = [c.header for c in STRATEGY_COLUMNS]
    assert headers[0] == "Clean accuracy ↑" and "MFR ↓" in headers and "FlipRate ↓" in headers
    cmp = {"Clean accuracy ↑": _entry(0.12, 0.05, 0.20, 0.01),  # better
           "MFR ↓": _entry(0.20, 0.10, 0.30, 0.002),  # a higher lure rate is worse
           "FlipRate ↓": _entry(-0.10, -0.25, 0.02, 0.03),  # interval includes 0: not significant
           "VRS ↑": _entry(0.10, 0.01, 0.20, 0.20),  # test does not reject: not significant
           "IS": _entry(0.30, 0.20, 0.40, 0.001)}  # no direction: never better or worse, not counted
    text = strategy_verdict("tiny-dpo", "tiny-flat", cmp)
    assert text == ("- **tiny-dpo** vs tiny-flat: significantly better on Clean accuracy (+0.12); significantly "
                    "worse on MFR (+0.20); no significant difference on the other 2 metrics.")
    quiet = {k: v for k, v in cmp.items() if k in ("FlipRate ↓", "VRS ↑")}
    assert strategy_verdict("tiny-chain", "tiny-flat", quiet) == (
        "- **tiny-chain** vs tiny-flat: no significant difference on any of the 2 metrics compared.")
    assert "could be compared" in strategy_verdict("x", "tiny-flat", {"MFR ↓": {"missing": True}})


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from medr2.scoring.scorer import score_run
    from tests.report_fixtures import make_fixture

    fx = make_fixture(tmp_path_factory.mktemp("fx") / "fx")
    for r in fx.runs:
        score_run(r, n_resamples=50)
    return list(fx.runs)


def test_compare_metrics_agrees_with_each_run_and_with_compare_runs(scored: list[Path]) -> None:
    from medr2.scoring.metrics import compare_runs
    from medr2.scoring.scorer import load_table

    a, b = load_table(scored[1]), load_table(scored[0])
    wanted = {c.header: (c.mode, *c.path) for c in STRATEGY_COLUMNS}
    cmp = compare_metrics(a, b, wanted, seed=0, n_resamples=50)
    own = {i: json.loads((scored[i] / "metrics.json").read_text("utf-8"))["modes"]["independent"] for i in (0, 1)}
    acc = cmp["Clean accuracy ↑"]
    assert acc["a"]["value"] == pytest.approx(own[1]["overall"]["value"])
    assert acc["b"]["value"] == pytest.approx(own[0]["overall"]["value"])
    # the same paired case bootstrap as compare_runs (the demo's before/after table)
    ref = compare_runs(a, b, seed=0, n_resamples=50)["modes"]["independent"]["overall"]
    assert {k: acc["delta"][k] for k in ("value", "lo", "hi")} == pytest.approx(
        {k: ref[k] for k in ("value", "lo", "hi")})
    mfr = cmp["MFR ↓"]
    assert mfr["a"]["value"] == pytest.approx(own[1]["prompt_reliance"]["MFR"]["value"])
    assert mfr["delta"]["value"] == pytest.approx(mfr["a"]["value"] - mfr["b"]["value"])
    assert 0 < mfr["test"]["p"] <= 1 and mfr["test"]["method"] == "case swap"
    assert cmp["chain-own overall"] == {"missing": True}  # the fixture has no chain-own answers


def test_strategy_table_in_the_summary(scored: list[Path], tmp_path: Path) -> None:
    runs = {"tiny-before": scored[0], "tiny-flat": scored[0], "tiny-aug": scored[1]}
    copy = tmp_path / "tiny-same"  # a model identical to flat: Δ = 0 everywhere, nothing significant
    shutil.copytree(scored[0], copy)
    runs["tiny-same"] = copy
    text = write_summary(tmp_path / "summary.md", runs, roles={}, before="tiny-before",
                         after=["tiny-flat", "tiny-aug", "tiny-same"], also_against=(), seed=0, resamples=50)
    assert "## Each strategy vs tiny-flat" in text
    # the findings are written from the same comparisons as the before/after table
    assert "## What this run shows" in text and "- **tiny-same** vs tiny-before (clean accuracy" in text
    assert "- **tiny-aug**: no visual-reliance metric could be computed." in text  # the fixture has no V2/blind
    lines = strategy_table(runs, "tiny-flat", ["tiny-aug", "tiny-same"], seed=0, resamples=50)
    body = "\n".join(lines)
    assert body in text
    assert "| tiny-flat | Clean accuracy" not in body  # flat is the reference, not compared with itself
    from medr2.scoring.scorer import load_table

    cmp = compare_metrics(load_table(scored[1]), load_table(scored[0]),
                          {c.header: (c.mode, *c.path) for c in STRATEGY_COLUMNS}, seed=0, n_resamples=50)
    mfr = cmp["MFR ↓"]
    row = next(ln for ln in lines if ln.startswith("| tiny-aug | MFR ↓ |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:6] == [fmt_value_n(mfr["a"]), fmt_value_n(mfr["b"]), fmt_value_n(mfr["delta"]),
                          f"{mfr['test']['p']:.2g}"]
    expected = "no" if not significant(mfr) else ("yes: worse" if mfr["delta"]["value"] > 0 else "yes: better")
    assert cells[6] == expected  # MFR: lower is better
    for col in STRATEGY_COLUMNS:  # every column's word follows its direction; a column without one says which way
        e = cmp.get(col.header) or {}
        row = next((ln for ln in lines if ln.startswith(f"| tiny-aug | {col.header} |")), None)
        if row is None or not significant(e):
            continue
        word = row.strip("|").split("|")[6].strip()
        d = e["delta"]["value"]
        assert word == (("yes: higher" if d > 0 else "yes: lower") if not ("↑" in col.header or "↓" in col.header)
                        else "yes: better" if d * (1 if "↑" in col.header else -1) > 0 else "yes: worse"), row
    same_rows = [ln for ln in lines if ln.startswith("| tiny-same |")]
    assert same_rows and all(ln.endswith("| 1 | no |") for ln in same_rows)
    assert f"- **tiny-same** vs tiny-flat: no significant difference on any of the {len(same_rows)} metrics" in body


def test_strategies_option_adds_to_the_default_and_is_checked() -> None:
    assert demo_config().strategies == ("flat", "chain")  # the default demo trains what it always did
    assert demo_config(quick=True, strategies=["augmented", "flat"]).strategies == ("flat", "chain", "augmented")
    with pytest.raises(BadInput, match="unknown strategy 'nope'"):
        demo_config(strategies=["nope"])


def test_more_strategies_resume_an_earlier_demo_folder(tmp_path: Path) -> None:
    from medr2.demokit.run import DemoPaths, _check_folder

    (tmp_path / DEMO_FILE).write_text(json.dumps({"config": demo_config(quick=True).identity()}), "utf-8")
    _check_folder(DemoPaths(tmp_path), demo_config(quick=True, strategies=["dpo"]))  # accepted: adds a model
    with pytest.raises(BadInput, match="another configuration"):
        _check_folder(DemoPaths(tmp_path), demo_config(quick=True, seed=1))


def check_extra_strategy(out: Path) -> None:
    """What ``medr2 demo --quick --strategies augmented`` must leave (run by the slow quick-demo test in
    tests/test_demo.py as a resume of its folder, so the shared models are not trained twice)."""
    record = json.loads((out / DEMO_FILE).read_text("utf-8"))
    assert record["config"]["strategies"] == ["flat", "chain", "augmented"]
    ft = json.loads((out / "models" / "tiny-augmented" / "finetune.json").read_text("utf-8"))
    assert ft["config"]["strategy"] == "augmented"
    summary = (out / SUMMARY_FILE).read_text("utf-8")
    assert "## Each strategy vs tiny-flat" in summary
    for name in ("tiny-chain", "tiny-augmented"):
        assert f"| {name} | Clean accuracy ↑ |" in summary and f"| {name} | MFR ↓ |" in summary
        assert f"- **{name}** vs tiny-flat:" in summary


def test_what_this_run_shows_sentences_follow_the_intervals() -> None:
    from medr2.demokit.summary import change_sentence, image_sentence

    def d(v: float, lo: float, hi: float) -> dict:
        return {"value": v, "lo": lo, "hi": hi}

    cmp = {"modes": {"independent": {"overall": d(0.08, 0.03, 0.13),
                                     "stages": {"1": d(0.15, 0.05, 0.25), "2": d(-0.2, -0.3, -0.1),
                                                "3": d(0.02, -0.04, 0.08), "4": {"value": None}}}}}
    text = change_sentence("tiny-flat", "prior", cmp)
    assert text == ("- **tiny-flat** vs prior (clean accuracy, paired over the same items): above it on overall "
                    "+0.08 [+0.03, +0.13], S1 acquisition +0.15 [+0.05, +0.25]; below it on S2 anatomy -0.20 "
                    "[-0.30, -0.10]; no difference shown on S3 findings, S4 diagnosis (interval includes 0).")
    assert "no independent items" in change_sentence("x", "prior", {"modes": {}})
    reads = {"modes": {"independent": {"visual_reliance": {"VRS": d(0.12, 0.08, 0.16), "IS": d(0.3, 0.25, 0.35),
                                                           "BlindGap": d(0.01, -0.02, 0.04)}}}}
    assert image_sentence("m", reads) == ("- **m** reads the image? VRS 0.12 [0.08, 0.16], IS 0.30 [0.25, 0.35], "
                                          "BlindGap 0.01 [-0.02, 0.04]: the answers depend on which image is shown "
                                          "(VRS, IS above 0).")
    # removing the image costs accuracy, but another case's image changes nothing: not evidence of reading it
    any_image = {"modes": {"independent": {"visual_reliance": {"VRS": d(0.0, -0.01, 0.01), "IS": d(0.0, 0.0, 0.01),
                                                               "BlindGap": d(0.06, 0.03, 0.08)}}}}
    assert "no evidence that it reads what the image shows" in image_sentence("m", any_image)
    blind = {"modes": {"independent": {"visual_reliance": {"VRS": d(0.0, 0.0, 0.0), "IS": d(0.01, -0.01, 0.03)}}}}
    assert "no evidence that the answers depend on the image" in image_sentence("m", blind)
    changes = {"modes": {"independent": {"visual_reliance": {"VRS": d(0.0, -0.01, 0.02), "IS": d(0.03, 0.02, 0.04)}}}}
    assert image_sentence("m", changes).endswith("the answers change with the image (IS above 0), but are not right "
                                                 "more often with the real image than with another case's (VRS not "
                                                 "above 0).")
    assert "could be computed" in image_sentence("m", {"modes": {}})


@given(delta=st.floats(-1, 1).filter(lambda d: d != 0), arrow=st.sampled_from(["↑", "↓", ""]))
def test_a_significant_difference_is_named_by_its_columns_direction(delta: float, arrow: str) -> None:
    """Better/worse only where the column says which way is better; a column without a direction (IS, chain-own
    overall) says higher or lower, never worse."""
    word = significance_word(delta, f"Metric {arrow}".strip())
    if not arrow:
        assert word == ("yes: higher" if delta > 0 else "yes: lower")
    else:
        assert word == ("yes: better" if (delta > 0) == (arrow == "↑") else "yes: worse")
