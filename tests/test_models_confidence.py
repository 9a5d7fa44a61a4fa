"""Per-answer confidences from what backends return (issue 45): OpenAI ``top_logprobs`` mapped onto the options,
``hf:`` log-likelihood choices (fresh and from old runs' notes), baselines' honest confidences."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from medr2 import GenSettings, Message, Part, Request
from medr2.models.choice import choice_note
from medr2.models.confidence import from_loglik, from_loglik_note, from_token_logprobs, labels_of
from medr2.models.registry import load_adapter
from tests.score_fixtures import make_items, requests_for

LETTERS = ("A", "B", "C", "D")
DECOYS = ("The", " answer", "\n", "**", "is", "Option", "E")


@st.composite
def logprob_position(draw: st.DrawFn) -> tuple[dict[str, object], dict[str, float]]:
    """One generated position: the chosen token, its top alternatives (answers written with spaces, brackets or
    bold, and decoys), and the expected probability per answer (normalised over the answers)."""
    k = draw(st.integers(1, 4))
    answers = draw(st.lists(st.sampled_from(LETTERS), min_size=1, max_size=k, unique=True))
    wrap = st.sampled_from(("{}", " {}", "({}", "**{}", "{}.", " {})"))
    alts: list[dict[str, object]] = []
    expected = dict.fromkeys(LETTERS, 0.0)
    seen: set[str] = set()
    for a in answers:
        for _ in range(draw(st.integers(1, 2))):
            tok = draw(wrap).format(a)
            if tok in seen:
                continue
            seen.add(tok)
            lp = draw(st.floats(-12, 0))
            alts.append({"token": tok, "logprob": lp})
            expected[a] += math.exp(lp)
    for d in draw(st.lists(st.sampled_from(DECOYS), max_size=3, unique=True)):
        alts.append({"token": d, "logprob": draw(st.floats(-12, 0))})
    first = next(a for a in alts if a["token"].strip(" (*.)") in LETTERS)  # type: ignore[union-attr]
    total = math.fsum(expected.values())
    return {"token": first["token"], "logprob": first["logprob"], "top_logprobs": alts}, {
        k: v / total for k, v in expected.items()}


@settings(max_examples=200)
@given(logprob_position(), st.lists(st.sampled_from(DECOYS), max_size=3))
def test_logprobs_map_onto_the_options(pos: tuple[dict[str, object], dict[str, float]], before: list[str]) -> None:
    chosen, expected = pos
    content = [{"token": d, "logprob": -0.1, "top_logprobs": []} for d in before] + [chosen]
    got = from_token_logprobs(content, LETTERS)
    assert got is not None and got.source == "logprobs"
    assert got.probs == pytest.approx(expected, abs=1e-12)
    assert math.fsum(got.probs.values()) == pytest.approx(1.0)


def test_no_answer_token_no_confidence() -> None:
    assert from_token_logprobs([{"token": "The", "logprob": -0.1, "top_logprobs": []}], LETTERS) is None
    assert from_token_logprobs([{"token": "A", "logprob": -0.1}], ()) is None  # a form without answers
    assert from_token_logprobs("not a list", LETTERS) is None


@settings(max_examples=100)
@given(st.lists(st.floats(-50, 0), min_size=2, max_size=6))
def test_loglik_softmax_and_old_notes(scores: list[float]) -> None:
    labels = tuple(chr(65 + i) for i in range(len(scores)))
    got = from_loglik(scores, labels)
    assert got is not None
    top = max(scores)
    z = math.fsum(math.exp(s - top) for s in scores)
    assert got.probs == pytest.approx({lab: math.exp(s - top) / z for lab, s in zip(labels, scores, strict=True)},
                                      abs=1e-12)
    note = choice_note(tuple(f"option {lab}" for lab in labels), scores)  # what older hf runs stored
    old = from_loglik_note(note, "mcq")
    rounded = [round(s, 4) for s in scores]
    assert old is not None and old.probs == pytest.approx(from_loglik(rounded, labels).probs, abs=1e-9)  # type: ignore[union-attr]


def test_baselines_give_honest_confidences() -> None:
    items = [it for it in make_items(4) if labels_of(it)]
    reqs = requests_for(items)
    oracle = load_adapter("baseline:oracle").generate(reqs)
    for it, r in zip(items, oracle, strict=True):
        assert r.confidence is not None and r.confidence.probs[it.answer] == 1.0
    rnd = load_adapter("baseline:random").generate(reqs)
    for it, r in zip(items, rnd, strict=True):
        assert r.confidence is not None and set(r.confidence.probs.values()) == {1 / len(labels_of(it))}
    other = Request("k", (Message("user", (Part("text", text="Write the report."),)),), GenSettings(), Path("."),
                    "x", meta={"item": next(it for it in make_items(1) if it.form == "text")})
    (r,) = load_adapter("baseline:random").generate([other])
    assert r.confidence is None  # no answers to spread a probability over
