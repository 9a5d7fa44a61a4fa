"""Calibration and abstention metrics (issue 45): formulas against scikit-learn on random inputs (1e-12), the
ECE bootstrap's coverage in a simulation, and scripted models' abstention and calibration shift."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from sklearn.calibration import calibration_curve
from sklearn.metrics import brier_score_loss, roc_auc_score

from medr2 import BoxConvention, Item, Prediction
from medr2.models.confidence import labels_of, normalised
from medr2.scoring import calibration as cal
from medr2.scoring.scorer import score_items
from medr2.scoring.table import build_table
from tests.score_fixtures import make_items

TOL = 1e-12


def _draw(seed: int, n: int, ties: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    conf = rng.random(n)
    if ties:
        conf = np.round(conf, 1)  # many equal confidences
    y = rng.random(n) < conf  # roughly calibrated, both classes likely
    y[0], y[1] = True, False  # both classes present
    w = rng.integers(0, 4, size=n).astype(float)
    w[0] = w[1] = 1.0
    return conf, y, w


def _value(fn: cal.Weighted, w: np.ndarray) -> float:
    return float(np.asarray(fn(w[None, :]))[0])


@settings(max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(5, 400), st.booleans())
def test_formulas_match_scikit_learn(seed: int, n: int, ties: bool) -> None:
    conf, y, w = _draw(seed, n, ties)
    ones = np.ones(n)
    assert _value(cal.brier(conf, y), ones) == pytest.approx(brier_score_loss(y, conf), abs=TOL)
    assert _value(cal.brier(conf, y), w) == pytest.approx(brier_score_loss(y, conf, sample_weight=w), abs=TOL)
    assert _value(cal.auroc(conf, y), ones) == pytest.approx(roc_auc_score(y, conf), abs=TOL)
    assert _value(cal.auroc(conf, y), w) == pytest.approx(roc_auc_score(y, conf, sample_weight=w), abs=TOL)
    for adaptive, strategy in ((False, "uniform"), (True, "quantile")):
        edges = cal.bin_edges(conf, adaptive=adaptive)
        prob_true, prob_pred = calibration_curve(y, conf, n_bins=cal.N_BINS, strategy=strategy)
        counts = np.bincount(cal.bin_index(conf, edges), minlength=cal.N_BINS)
        counts = counts[counts > 0]
        expected = float(np.sum(counts / n * np.abs(prob_true - prob_pred)))
        assert _value(cal.ece(conf, y, edges), ones) == pytest.approx(expected, abs=TOL)
        rel = cal.reliability(conf, y, edges)
        assert np.allclose([b["accuracy"] for b in rel], prob_true, atol=TOL, rtol=0)
        assert np.allclose([b["confidence"] for b in rel], prob_pred, atol=TOL, rtol=0)


@settings(max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(2, 120), st.booleans())
def test_aurc_is_the_mean_risk_over_coverage(seed: int, n: int, ties: bool) -> None:
    """AURC against its definition: answer the rows of confidence >= t for each distinct t; rows of one
    confidence enter together, each step weighted by the coverage it adds (weights = repeated rows)."""
    conf, y, w = _draw(seed, n, ties)
    rep = w.astype(int)
    c, yy = np.repeat(conf, rep), np.repeat(y, rep)
    total, area = len(c), 0.0
    for t in np.unique(c)[::-1]:
        covered = c >= t
        area += np.sum(c == t) / total * np.mean(~yy[covered])
    assert _value(cal.aurc(conf, y), w) == pytest.approx(area, abs=TOL)
    curve = cal.risk_coverage_curve(conf, y)
    assert curve[-1][0] == pytest.approx(1.0) and curve[-1][1] == pytest.approx(np.mean(~y))


def test_ece_bootstrap_covers_the_true_ece() -> None:
    """Coverage of the case bootstrap's 95% interval of ECE: confidences uniform on [0.5, 1], each case's
    accuracy 0.2 below its confidence (plus a case-level shift of ±0.1 shared by its items, mean 0), so the true
    equal-width ECE is 0.2. Over 200 simulated runs of 80 cases × 4 items, the interval holds 0.2 in 88–99% of
    them."""
    rng = np.random.default_rng(7)
    hits, runs = 0, 200
    for r in range(runs):
        cases = np.repeat(np.arange(80), 4)
        conf = rng.uniform(0.5, 1.0, size=cases.size)
        shift = rng.choice([-0.1, 0.1], size=80)[cases]
        y = rng.random(cases.size) < conf - 0.2 + shift
        book = cal.WeightedBook([str(c) for c in cases])
        book.add([str(c) for c in cases], cal.ece(conf, y, cal.bin_edges(conf)))
        (m,) = book.evaluate(200, seed=r)
        hits += m["lo"] <= 0.2 <= m["hi"]
    assert 0.88 <= hits / runs <= 0.99, hits / runs


# -- scripted models on items of every form with V1-V3 probes -------------------------------------------

ITEMS = make_items(12)
BY_ID = {it.item_id: it for it in ITEMS}


def _run(answer: callable, confidence: callable | None = None) -> dict:  # type: ignore[valid-type]
    preds, confs = [], []
    for it in ITEMS:
        preds.append(Prediction(model_key="scripted", item_id=it.item_id, mode="independent",
                                request_hash=it.item_id, raw=answer(it), status="ok"))
        got = confidence(it) if confidence is not None else None
        confs.append(got)
    scores = score_items(BY_ID, preds, BoxConvention())
    rows = build_table(BY_ID, scores)
    by_item = {it.item_id: c for it, c in zip(ITEMS, confs, strict=True)}
    conf = [cal.row_confidence(p, by_item[i].probs if by_item[i] is not None else None)
            for i, p in zip(rows["item_id"], rows["parsed"], strict=True)]
    rows = rows.assign(confidence=np.array([np.nan if c is None else c for c in conf]),
                       confidence_source=["prior" if c is not None else None for c in conf])
    return cal.compute_calibration(rows, seed=1, n_resamples=100)["modes"]["independent"]


def _gold(it: Item) -> str:
    if it.form == "box":
        return "[{:.0f}, {:.0f}, {:.0f}, {:.0f}]".format(*it.answer_box)  # type: ignore[str-format]
    return it.answer


def _probe(it: Item) -> bool:
    return it.meta.get("scoring") == "probe"


def test_abstaining_exactly_on_unanswerable_probes() -> None:
    m = _run(lambda it: "Cannot be determined from this image." if _probe(it) else _gold(it))
    ab = m["abstention"]
    assert ab["appropriate_abstention"]["value"] == 1.0 and ab["over_abstention"]["value"] == 0.0
    assert ab["appropriate_abstention"]["n"] == 36 and ab["appropriate_abstention"]["n_cases"] == 12
    for code in ("V1", "V2", "V3"):
        assert ab[f"appropriate_abstention_{code}"]["value"] == 1.0
    assert ab["selective_acc"]["value"] == 1.0 and ab["coverage"]["value"] == 1.0
    assert "calibration" not in m and m["confidence"]["note"].startswith("no confidence")


def test_always_answering_never_abstains() -> None:
    ab = _run(_gold)["abstention"]
    assert ab["appropriate_abstention"]["value"] == 0.0 and ab["over_abstention"]["value"] == 0.0


def test_over_abstention_counts_declines_on_answerable_items() -> None:
    m = _run(lambda it: "I am unable to assess this." if it.form == "mcq" and not _probe(it) else _gold(it))
    ab = m["abstention"]
    clean = [it for it in ITEMS if it.variant == "clean"]
    assert ab["over_abstention"]["value"] == pytest.approx(sum(it.form == "mcq" for it in clean) / len(clean))
    assert ab["appropriate_abstention"]["value"] == 0.0


def _prior_probs(it: Item) -> object:
    """A prior-only model: its probabilities depend on the question and options, never on the image."""
    labels = labels_of(it)
    if not labels:
        return None
    weights = {lab: float(len(it.question) % (k + 2) + 1) for k, lab in enumerate(labels)}
    return normalised(weights, "prior")


def _prior_answer(it: Item) -> str:
    c = _prior_probs(it)
    if c is None:
        return _gold(it)
    return max(c.probs, key=lambda k: (c.probs[k], k))  # type: ignore[attr-defined]


def test_a_prior_only_model_shows_no_calibration_shift_on_probes() -> None:
    m = _run(_prior_answer, _prior_probs)
    for code in ("V1", "V2", "V3"):
        assert m["shift"][code]["value"] == 0.0 and m["shift"][code]["n"] == 12
    assert m["calibration"]["ECE"]["n"] > 0 and m["confidence"]["sources"] == ["prior"]


def test_a_model_that_reads_the_image_loses_confidence_on_the_blank_image() -> None:
    def probs(it: Item) -> object:
        labels = labels_of(it)
        if not labels:
            return None
        sure = 0.25 if it.variant.startswith("V1") else 0.9
        key = it.answer if it.form != "box" else labels[0]
        rest = (1 - sure) / (len(labels) - 1)
        return normalised({lab: sure if lab == key else rest for lab in labels}, "prior")

    m = _run(_gold, probs)
    assert m["shift"]["V1"]["value"] == pytest.approx(0.25 - 0.9)
    assert m["shift"]["V2"]["value"] == 0.0


def test_runs_without_confidence_or_abstention_write_no_file(tmp_path: object) -> None:
    """The calibration views say so instead of inventing numbers: no confidences -> no calibration block."""
    rows = build_table(BY_ID, score_items(BY_ID, [Prediction(
        model_key="m", item_id=it.item_id, mode="independent", request_hash=it.item_id, raw=_gold(it),
        status="ok") for it in ITEMS], BoxConvention()))
    rows = rows.assign(confidence=np.nan, confidence_source=None)
    m = cal.compute_calibration(rows, n_resamples=10)["modes"]["independent"]
    assert "calibration" not in m and "shift" not in m
    assert isinstance(pd.DataFrame(m["abstention"]), pd.DataFrame)


# -- the verbalised confidence reader ---------------------------------------------------------------------

@settings(max_examples=150)
@given(st.integers(0, 100), st.sampled_from(("Confidence: {v}%", "confidence {v} %", "Confidence level: {v} percent",
                                             "My confidence is about {v}%", "置信度：{v}%", "信心 {v}％")),
       st.sampled_from(("B ", "Answer: B\n", "The answer is yes. ")), st.sampled_from(("", ".", "\n")))
def test_verbal_percentages_are_read(v: int, template: str, answer: str, end: str) -> None:
    from medr2.scoring.extract.confidence import read_confidence

    assert read_confidence(answer + template.format(v=v) + end) == pytest.approx(v / 100)


@settings(max_examples=100)
@given(st.floats(0, 1), st.sampled_from(("/10", "")))
def test_verbal_fractions_and_words(x: float, unit: str) -> None:
    from medr2.scoring.extract.confidence import VERBAL_WORDS, read_confidence

    if unit:
        v = round(x * 10)
        assert read_confidence(f"Answer: A. Confidence: {v}/10") == pytest.approx(v / 10)
    else:
        v = round(x, 2)
        assert read_confidence(f"A\nConfidence: {v}") == pytest.approx(v)
    for phrase, p in VERBAL_WORDS.items():
        if phrase.startswith("a guess") or phrase.startswith("just"):
            continue
        assert read_confidence(f"The answer is C; I am {phrase}.") == p, phrase


@pytest.mark.parametrize("text", ["Likely pneumonia.", "B", "Findings are certain to be benign? No: answer B.",
                                  "Confidence: 250%", "The answer is B (3 lesions, 80% stenosis)."])
def test_no_stated_confidence_is_none(text: str) -> None:
    from medr2.scoring.extract.confidence import read_confidence

    assert read_confidence(text) is None


def test_the_prior_baseline_shows_no_calibration_shift_on_probes() -> None:
    """The real ``baseline:prior`` (train frequencies, never the image) gives the same confidence to a probe as to
    its clean parent: a calibration shift of exactly 0 on V1-V3, from its own stored confidences."""
    from types import SimpleNamespace

    from medr2 import ModelConfig
    from medr2.models.registry import load_adapter
    from tests.score_fixtures import requests_for

    train = {0, 1, 2, 4, 5, 8, 9}  # uneven train answers: modality CT 3, MRI 3, X-ray 1 times (of 7)
    items = [it.model_copy(update={"split": "train"}) if int(it.case_id[-2:]) in train else it for it in ITEMS]
    by_id = {it.item_id: it for it in items}
    adapter = load_adapter(ModelConfig("baseline:prior", bench=SimpleNamespace(items=items)))
    responses = adapter.generate(requests_for(items))
    preds = [Prediction(model_key=adapter.key, item_id=it.item_id, mode="independent", request_hash=it.item_id,
                        raw=r.text, status=r.status, confidence=r.confidence)
             for it, r in zip(items, responses, strict=True)]
    rows = build_table(by_id, score_items(by_id, preds, BoxConvention()))
    conf = {p.item_id: p.confidence for p in preds}
    values = [cal.row_confidence(parsed, conf[i].probs if conf[i] is not None else None)
              for i, parsed in zip(rows["item_id"], rows["parsed"], strict=True)]
    rows = rows.assign(confidence=np.array([np.nan if v is None else v for v in values]),
                       confidence_source=["prior" if v is not None else None for v in values])
    m = cal.compute_calibration(rows, n_resamples=20)["modes"]["independent"]
    assert m["confidence"]["sources"] == ["prior"]
    assert len({v for v in values if v is not None}) > 1  # not a constant: the train frequencies differ per task
    for code in ("V1", "V2", "V3"):
        assert m["shift"][code]["value"] == 0.0 and m["shift"][code]["n"] == 12


# -- split conformal prediction sets ------------------------------------------------------------------------

def _conformal_rows(rng: np.random.Generator, n_val: int, n_test: int) -> pd.DataFrame:
    """Exchangeable rows: four options, probabilities drawn from a Dirichlet, the gold answer drawn from them
    (a calibrated model), so split conformal covers at least the target in expectation."""
    n = n_val + n_test
    p = rng.dirichlet(np.ones(4) * 0.7, size=n)
    gold = [chr(65 + int(rng.choice(4, p=row))) for row in p]
    return pd.DataFrame({
        "case_id": [f"c{i}" for i in range(n)], "variant": "clean", "probe": False, "form": "mcq",
        "stage": [1 + i % 4 for i in range(n)], "split": ["val"] * n_val + ["test"] * n_test, "answer": gold,
        "probs": [{chr(65 + j): float(v) for j, v in enumerate(row)} for row in p]})


def test_conformal_qhat_and_sets_follow_their_definition() -> None:
    rng = np.random.default_rng(3)
    df = _conformal_rows(rng, 57, 40)
    book = cal.WeightedBook(df["case_id"].tolist())
    got = cal.conformal_sets(df, book, 0.8)
    assert got is not None
    val = df[df["split"] == "val"]
    scores = np.array([1 - p[g] for p, g in zip(val["probs"], val["answer"], strict=True)])
    level = np.ceil((len(scores) + 1) * 0.8) / len(scores)
    # the k-th smallest score, k = ceil((n+1)·coverage): the inverse empirical CDF at k/n
    assert got["qhat"] == pytest.approx(float(np.quantile(scores, level, method="inverted_cdf")), abs=1e-15)
    assert got["n_calibration"] == 57 and got["calibration_split"] == "val"
    res = book.evaluate(20, 0)
    test = df[df["split"] == "test"]
    sets = [{k for k, v in p.items() if v >= 1 - got["qhat"]} for p in test["probs"]]
    assert res[got["coverage"]]["value"] == pytest.approx(np.mean([g in s for s, g in zip(sets, test["answer"],
                                                                                          strict=True)]))
    assert res[got["set_size"]]["value"] == pytest.approx(np.mean([len(s) for s in sets]))
    assert set(got["stages"]) == {"1", "2", "3", "4"}


def test_conformal_sets_cover_the_target_in_simulation() -> None:
    """Mean coverage over 300 exchangeable datasets (40 calibration, 200 test rows) is at least the target and
    at most target + 1/(n+1) (the split-conformal guarantee), within simulation error."""
    rng = np.random.default_rng(11)
    covs = []
    for _ in range(300):
        df = _conformal_rows(rng, 40, 200)
        book = cal.WeightedBook(df["case_id"].tolist())
        got = cal.conformal_sets(df, book, 0.9)
        assert got is not None
        covs.append(book.evaluate(0, 0)[got["coverage"]]["value"])
    assert 0.9 - 0.01 <= float(np.mean(covs)) <= 0.9 + 1 / 41 + 0.01, np.mean(covs)
