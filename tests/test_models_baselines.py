"""Baselines and the adapter registry."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from medr2 import BadInput, Bench, BoxConvention, GenSettings, Item, ModelConfig
from medr2.models.registry import ADAPTERS, load_adapter, register_adapter
from medr2.records import letter_index
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from tests.run_fixtures import make_bench


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return make_bench(tmp_path_factory.mktemp("bench"), n_cases=8)


def _answers(bench: Bench, model: str, out: Path,
             modes: tuple[str, ...] = ("independent",)) -> dict[tuple[str, str], str]:
    run_eval(EvalConfig(split="all", bench=bench.root, model=ModelConfig(model), out=out, modes=modes))
    with Store.open(out) as st:
        return {(r.prediction.item_id, r.prediction.mode): r.prediction.raw or "" for r in st.iter_predictions()}


def _gold(it: Item) -> str:
    if it.form == "box":
        assert it.answer_box is not None
        return "[" + ", ".join(str(round(v)) for v in it.answer_box) + "]"
    return it.answer


def test_oracle_is_always_right(bench: Bench, tmp_path: Path) -> None:
    ans = _answers(bench, "baseline:oracle", tmp_path / "r", ("independent", "chain-own"))
    for it in bench.items:
        assert ans[(it.item_id, "independent")] == _gold(it)
        assert ans[(it.item_id, "chain-own")] == _gold(it)


def test_follow_hint_takes_the_lure(bench: Bench, tmp_path: Path) -> None:
    ans = _answers(bench, "baseline:follow-hint", tmp_path / "r")
    lured = [it for it in bench.items if it.lure]
    assert lured
    for it in bench.items:
        assert ans[(it.item_id, "independent")] == (it.lure or _gold(it))


def test_prior_uses_train_split_frequencies(bench: Bench, tmp_path: Path) -> None:
    ans = _answers(bench, "baseline:prior", tmp_path / "r")
    train = [it for it in bench.items if it.split == "train" and it.variant == "clean"]
    for task in ("s4.diagnosis", "s3.abnormal"):
        freq = Counter(it.answer_text for it in train if it.task == task)
        top = max(freq.values())
        best = {t for t, n in freq.items() if n == top}
        for it in bench.items:
            if it.task == task:
                a = ans[(it.item_id, "independent")]
                assert (it.options[letter_index(a)] if it.form == "mcq" else a) in best
    # text only: the same question gets the same answer whatever the image
    by_q = {}
    for it in bench.items:
        by_q.setdefault((it.task, it.question, tuple(it.options)), set()).add(ans[(it.item_id, "independent")])
    assert all(len(v) == 1 for v in by_q.values())


def test_random_is_seeded_by_request(bench: Bench, tmp_path: Path) -> None:
    a = _answers(bench, "baseline:random", tmp_path / "a")
    b = _answers(bench, "baseline:random", tmp_path / "b")
    assert a == b
    letters = Counter(v for (iid, _), v in a.items() if len(v) == 1 and v in "ABCD")
    assert len(letters) >= 3  # it does guess


def test_blind_ignores_images(bench: Bench, tmp_path: Path) -> None:
    ans = _answers(bench, "baseline:blind", tmp_path / "r")
    items = {it.item_id: it for it in bench.items}
    for it in bench.items:
        if it.variant == "V8-noise-2" and it.parent_id:
            assert ans[(it.item_id, "independent")] == ans[(items[it.parent_id].item_id, "independent")]


def test_registry_and_specs(bench: Bench) -> None:
    with pytest.raises(BadInput, match="PREFIX:NAME"):
        load_adapter("oracle")
    with pytest.raises(BadInput, match="unknown model prefix"):
        load_adapter("nope:x")
    with pytest.raises(BadInput, match="unknown baseline"):
        load_adapter("baseline:nope")
    with pytest.raises(BadInput, match="needs the bench"):
        load_adapter("baseline:prior")

    class Echo:
        key = "echo:x"
        box_convention = BoxConvention()

        def settings(self) -> dict:
            return {}

        def generate(self, requests: list) -> list:
            return []

        def close(self) -> None:
            return None

    register_adapter("echo-test")(lambda name, opts: Echo())
    try:
        assert isinstance(load_adapter("echo-test:anything"), Echo)
    finally:
        ADAPTERS.pop("echo-test")
    ad = load_adapter(ModelConfig("baseline:random", seed=3, bench=bench))
    assert ad.key == "baseline:random" and ad.settings() == {"baseline": "random", "seed": 3}
    assert GenSettings().temperature == 0.0


def test_follow_history_takes_the_injected_earlier_answer(bench: Bench, tmp_path: Path) -> None:
    """In chain-misleading every step after the first is shown a wrong earlier answer; follow-history then
    answers wrong (the wrong answer chain-misleading writes), so the chain metrics are exactly: the first
    stage right, every later stage wrong, CondAcc 0, LGR 0, Degradation 1. With gold (or its own, right)
    history it is the oracle."""
    from medr2.models.baselines import PIXEL
    from medr2.run.prompts import gold_answer, wrong_answer
    from medr2.scoring.scorer import score_run

    run = tmp_path / "r"
    modes = ("chain-misleading", "chain-gold", "chain-own", "independent")
    ans = _answers(bench, "baseline:follow-history", run, modes)
    for it in bench.items:
        later = it.chain_id is not None and it.step is not None and it.step > 1
        assert ans[(it.item_id, "chain-misleading")] == (wrong_answer(it, PIXEL) if later else gold_answer(it, PIXEL))
        for mode in ("chain-gold", "chain-own", "independent"):
            assert ans[(it.item_id, mode)] == gold_answer(it, PIXEL)
    metrics = score_run(run, mixed_splits=True, n_resamples=50)["modes"]
    chain = metrics["chain-misleading"]["chain"]
    stages = sorted(int(s) for s in chain["StepAcc_s"])
    first, later_stages = stages[0], stages[1:]
    assert later_stages
    n_chains = len({it.chain_id for it in bench.items if it.chain_id and it.variant == "clean"})
    assert chain["StepAcc_s"][str(first)]["value"] == chain["ChainAcc<=s"][str(first)]["value"] == 1.0
    for s in later_stages:
        assert chain["StepAcc_s"][str(s)]["value"] == 0.0 and chain["ChainAcc<=s"][str(s)]["value"] == 0.0
        assert chain["Degradation_s"][str(s)]["value"] == 1.0 and chain["Degradation_s"][str(s)]["n"] == n_chains
    assert chain["CondAcc_s"][str(later_stages[0])]["value"] == 0.0  # every earlier step right, this one misled
    assert all(v["value"] == 0.0 for v in chain["LGR_s"].values())
    assert set(chain["CondAcc_s"]) == {str(later_stages[0])}  # later stages never have all earlier steps right
    for mode in ("chain-gold", "chain-own"):
        gold = metrics[mode]["chain"]
        assert all(v["value"] == 1.0 for v in gold["ChainAcc<=s"].values())
        assert all(v["value"] == 0.0 for v in gold["Degradation_s"].values())


def test_priors_rank_and_average_once_per_task(bench: Bench) -> None:
    """The train answers of a task are ranked (and its boxes averaged) once, not on every request: a report task has
    about one distinct answer per train case, and ranking per request made a whole evaluation grow with the square
    of the bench (docs/benchmarks.md, 2026-12-04). Same ranking and mean as computed here from the items."""
    import numpy as np

    from medr2.models.baselines import _Priors

    priors = _Priors(bench.items)
    train = [it for it in bench.items if it.split == "train" and it.variant == "clean"]
    tasks = {it.task for it in train if it.form in ("text", "yesno")}
    assert any(it.form == "text" for it in train if it.task in tasks)
    for task in tasks:
        freq = Counter(it.answer for it in train if it.task == task and it.form in ("text", "yesno"))
        want = tuple(sorted(freq, key=lambda t: (-freq[t], t)))
        got = priors.ranked(task)
        assert got == want and len(want) >= 1
        assert priors.ranked(task) is got  # kept, not sorted again
    assert priors.ranked("no.such-task") == ()
    box_tasks = {it.task for it in train if it.form == "box" and it.answer_box}
    assert box_tasks
    for task in box_tasks:
        fr = [(b[0] / it.image_width, b[1] / it.image_height, b[2] / it.image_width, b[3] / it.image_height)
              for it in train if it.task == task and (b := it.answer_box) and it.image_width and it.image_height]
        m = priors._mean_box(task)
        assert m is not None and np.array_equal(m, np.mean(np.asarray(fr), axis=0))
        assert priors._mean_box(task) is m
    assert priors._mean_box("no.such-task") is None
