"""What ``medr2 eval`` asks, and what ``medr2 score`` then counts (issue 50, points 1 and 3).

- ``eval`` asks the held-out ``test`` split unless ``--split`` says otherwise (``all``: every split);
- an unknown value of an enumerated option of ``eval``/``build`` is a usage error (exit 2) listing the valid
  values: hypothesis types typos of every such option;
- an empty selection is refused (exit 2) unless ``--allow-empty``; ``score`` of an empty run exits 1;
- ``score`` refuses a run whose answers span several splits unless ``--mixed-splits``, and every line it
  prints and ``metrics.json`` name the split.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import string
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import catalog
from medr2.run.store import Store
from medr2.variant_id import variant_matches
from tests.run_fixtures import make_bench


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("selection") / "bench"
    make_bench(root, n_cases=4)  # cases alternate train / test; no val item
    return root


@contextlib.contextmanager
def _wide() -> Iterator[None]:
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "4000"  # one message, one line: the listed values are not wrapped
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def medr2(*args: str | Path) -> tuple[int, str, str]:
    """``medr2 ARGS`` through the real entry point (exit codes as the shell sees them), in this process."""
    from medr2.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["medr2", *map(str, args)]
    code = 0
    try:
        with _wide(), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = argv
    return code, out.getvalue(), err.getvalue()


def _bench_variants(bench_dir: Path) -> set[str]:
    from medr2.bench import load_bench

    return {it.variant for it in load_bench(bench_dir, image_hashes=False).items}


def _typo(valid: tuple[str, ...], is_valid: Callable[[str], bool]) -> st.SearchStrategy[str]:
    """A valid value with a character dropped, doubled, swapped or changed, or any short word: never valid."""
    alphabet = string.ascii_letters + string.digits + "-_."

    def mutate(v: str, data: st.DataObject) -> str:
        i = data.draw(st.integers(0, max(0, len(v) - 1)))
        how = data.draw(st.sampled_from(("drop", "double", "swap", "change", "case")))
        if how == "drop":
            return v[:i] + v[i + 1:]
        if how == "double":
            return v[:i] + v[i:i + 1] * 2 + v[i + 1:]
        if how == "swap" and len(v) > 1:
            j = min(i + 1, len(v) - 1)
            return v[:i] + v[j] + v[i] + v[j + 1:] if j > i else v[:-2] + v[-1] + v[-2]
        if how == "case":
            return v.swapcase()
        return v[:i] + data.draw(st.sampled_from(alphabet)) + v[i + 1:]

    mutated = st.tuples(st.sampled_from(valid), st.data()).map(lambda t: mutate(*t))
    words = st.text(alphabet, min_size=1, max_size=8)
    return st.one_of(mutated, words).filter(lambda w: bool(w.strip("-_.")) and not is_valid(w))


# every enumerated option of eval and build: (command, option, its valid values, the typo's acceptance test).
# eval's --variants/--task/--stage take the bench's own values; the others take the catalog's names.
def _options(bench_dir: Path) -> list[tuple[str, str, tuple[str, ...], Callable[[str], bool]]]:
    variants = _bench_variants(bench_dir)
    codes = tuple(sorted({v.split("-")[0] for v in variants}))
    tasks = ("s1.modality", "s3.lesion_box", "s3.abnormal", "s4.diagnosis", "s4.multilabel", "s4.report")
    all_codes = (*catalog.TEXT_CODES, *catalog.VISUAL_CODES)
    return [
        ("eval", "--split", catalog.SPLITS, lambda w: w in catalog.SPLITS),
        ("eval", "--variants", (*codes, "all"),
         lambda w: w == "all" or any(variant_matches(v, [w]) for v in variants)),
        ("eval", "--mode", catalog.MODES, lambda w: w in catalog.MODES),
        ("eval", "--order", catalog.ORDERS, lambda w: w in catalog.ORDERS),
        ("eval", "--preset", catalog.PRESETS, lambda w: w in catalog.PRESETS),
        ("eval", "--executor", ("local", "ray"), lambda w: w in ("local", "ray")),
        ("eval", "--task", tasks, lambda w: w in tasks),
        ("build", "--variants", (*all_codes, "all"), lambda w: w.upper() in (*all_codes, "ALL")),
        ("build", "--renders", ("deferred", "stored"), lambda w: w in ("deferred", "stored")),
        ("build", "--split-unit", ("patient", "case"), lambda w: w in ("patient", "case")),
        ("build", "--executor", ("local", "ray"), lambda w: w in ("local", "ray")),
    ]


def _args(command: str, option: str, value: str, bench_dir: Path, out: Path) -> list[str | Path]:
    if command == "eval":
        return ["eval", "--bench", bench_dir, "--model", "baseline:random", "--out", out, "--no-progress",
                option, value]
    return ["build", "--source", "sample", "--out", out, "--cases", "2", option, value]


def test_every_enumerated_option_refuses_a_typo_listing_the_valid_values(bench_dir: Path, tmp_path: Path) -> None:
    options = _options(bench_dir)

    @settings(max_examples=6 * len(options), suppress_health_check=list(HealthCheck), database=None)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        command, option, valid, is_valid = data.draw(st.sampled_from(options), label="option")
        typo = data.draw(_typo(valid, is_valid), label="typo")
        out = tmp_path / "out"
        code, _, err = medr2(*_args(command, option, typo, bench_dir, out))
        assert code == 2, (command, option, typo, err)
        assert "Traceback" not in err
        assert option in err, err  # the option is named
        assert all(v in err for v in valid if v != "all" or option != "--variants" or command != "build"), err
        assert not (out / "store.sqlite").exists() and not (out / "items.parquet").exists()  # nothing written

    check()


def test_eval_asks_the_test_split_by_default(bench_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, _, err = medr2("eval", "--bench", bench_dir, "--model", "baseline:random", "--out", run, "--no-progress")
    assert code == 0, err
    from medr2.bench import load_bench

    split_of = {it.item_id: it.split for it in load_bench(bench_dir, image_hashes=False).items}
    store = Store.open(run)
    try:
        asked = {p.prediction.item_id for p in store.iter_predictions()}
    finally:
        store.close()
    assert asked and {split_of[i] for i in asked} == {"test"}
    assert asked == {i for i, s in split_of.items() if s == "test"}  # every clean and variant test item
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["invocations"][-1]["split"] == "test"
    code, out, err = medr2("score", run, "--resamples", "0")
    assert code == 0, err
    metrics = json.loads((run / "metrics.json").read_text())
    assert metrics["run"]["splits"] == {"test": len(asked)}
    assert metrics["complete"] is True
    lines = [ln for ln in out.splitlines() if ": overall " in ln]
    assert lines and all(ln.startswith("test split, ") for ln in lines), out


def test_the_api_default_is_the_same_split(bench_dir: Path, tmp_path: Path) -> None:
    import inspect

    import medr2
    from medr2 import ModelConfig
    from medr2.bench.select import SPLIT_CHOICES
    from medr2.run.runner import DEFAULT_SPLIT, EvalConfig

    assert inspect.signature(medr2.evaluate).parameters["split"].default == DEFAULT_SPLIT == catalog.DEFAULT_SPLIT
    assert EvalConfig(bench=tmp_path, model=ModelConfig("baseline:random"), out=tmp_path).split == DEFAULT_SPLIT
    assert SPLIT_CHOICES == catalog.SPLITS


def test_a_run_mixing_splits_is_scored_only_on_purpose(bench_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    code, _, err = medr2("eval", "--bench", bench_dir, "--model", "baseline:random", "--out", run, "--no-progress",
                         "--split", "all")
    assert code == 0, err
    code, _, err = medr2("score", run, "--resamples", "0")
    assert code == 2 and "several splits" in err and "--mixed-splits" in err and "Traceback" not in err, err
    assert "test (" in err and "train (" in err
    assert not (run / "metrics.json").exists()
    code, out, err = medr2("score", run, "--resamples", "0", "--mixed-splits")
    assert code == 0, err
    splits = json.loads((run / "metrics.json").read_text())["run"]["splits"]
    assert set(splits) == {"test", "train"} and all(n > 0 for n in splits.values())
    assert all(ln.startswith("test+train split, ") for ln in out.splitlines() if ": overall " in ln), out


def test_an_empty_selection_is_refused_unless_asked_for(bench_dir: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    base = ["eval", "--bench", bench_dir, "--model", "baseline:random", "--out", run, "--no-progress"]
    code, _, err = medr2(*base, "--split", "val")  # a valid split this bench has no item of
    assert code == 2 and "no item of the bench matches --split val" in err and "--allow-empty" in err, err
    assert "test (" in err and "train (" in err  # what the bench holds per split
    assert not (run / "store.sqlite").exists()
    code, _, err = medr2(*base, "--split", "val", "--allow-empty")
    assert code == 0, err
    code, _, err = medr2("score", run, "--resamples", "0")
    assert code == 1 and "holds no answer" in err and "Traceback" not in err, err
    assert not (run / "metrics.json").exists()


@pytest.mark.parametrize("held", [False, True], ids=["columns", "loaded"])
def test_the_selection_refuses_values_the_bench_has_not(bench_dir: Path, held: bool) -> None:
    """A value no item has is a usage error naming its option and listing the bench's values; an empty selection is
    refused unless allowed; the same from a bench read by columns as from a loaded one (the same API over a table
    held in memory)."""
    from medr2 import BadInput
    from medr2.bench import load_bench
    from medr2.bench.select import select_items
    from medr2.bench.table import BenchTable

    table = (load_bench(bench_dir, image_hashes=False).table() if held
             else BenchTable.open(bench_dir, image_hashes=False))
    for sel, field, said in (({"split": "tset"}, "--split", "unknown split 'tset'; valid: train, val, test, all"),
                             ({"variants": ["V10"]}, "--variants", "no variant of this bench matches 'V10'"),
                             ({"tasks": ["s9.none"]}, "--task", "no task of this bench is s9.none; valid: s1."),
                             ({"stages": [7]}, "--stage", "no stage of this bench is 7; valid: 1 ("),
                             ({"split": "val", "allow_empty": False}, "selection",
                              "no item of the bench matches --split val; this bench's items per split: test (")):
        with pytest.raises(BadInput) as refused:
            select_items(table, **sel)  # type: ignore[arg-type]
        assert refused.value.field == field and said in str(refused.value), sel
    assert len(select_items(table, split="val")) == 0 and list(select_items(table, split="val")) == []
