"""Baselines and the adapter registry."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from medr2.bench.format import Bench
from medr2.errors import BadInput
from medr2.models.base import BoxConvention, GenSettings
from medr2.models.registry import ADAPTERS, load_adapter, register_adapter
from medr2.records import Item, letter_index
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import Store
from tests.run_fixtures import make_bench


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return make_bench(tmp_path_factory.mktemp("bench"), n_cases=8)


def _answers(bench: Bench, model: str, out: Path,
             modes: tuple[str, ...] = ("independent",)) -> dict[tuple[str, str], str]:
    run_eval(EvalConfig(bench=bench.root, model=model, out=out, modes=modes))
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
    with pytest.raises(BadInput, match="unknown adapter options"):
        load_adapter("baseline:oracle", colour="red")
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
    ad = load_adapter("baseline:random", seed=3, bench=bench)
    assert ad.key == "baseline:random" and ad.settings() == {"baseline": "random", "seed": 3}
    assert GenSettings().temperature == 0.0
