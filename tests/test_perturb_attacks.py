"""The attacks of issue 48: T9 framed premises, T10 premises injected through context, V10 text burnt into the
image, V11 physics-true degradations; and the metrics that read them by role (attack success rate, accuracy per
degradation kind and severity), checked with scripted models that follow every premise or none."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import medr2
from medr2 import BoxConvention, Item
from medr2.imaging.physics import PHYSICS, SEVERITIES, degrade_physics, kinds_for, ssim
from medr2.imaging.typographic import TEXT_STYLES, burn_text, layout
from medr2.perturb.engine import generate_variants
from medr2.perturb.premises import FRAMED_PREMISES, INDIRECT_PREMISES, as_clause, frame
from medr2.perturb.registry import PERTURBATIONS, all_codes
from medr2.records import letter_index
from medr2.run.prompts import get_mode, gold_answer, render_messages, wrong_answer
from medr2.tasks.contract import question_evidence, task_requires

sys.path.insert(0, str(Path(__file__).parent))
from perturb_fixtures import Fixture, build_fixture, real_backgrounds  # noqa: E402

NEW = ("T9", "T10", "V10", "V11")


@pytest.fixture(scope="module")
def fx(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    return build_fixture(tmp_path_factory.mktemp("bench"))


@pytest.fixture(scope="module")
def out(fx: Fixture) -> tuple[list[Item], dict[str, dict[str, int]]]:
    return generate_variants(fx.root, fx.cases, fx.items, ",".join(NEW), 0, fx.images, workers=1)


def _parents(fx: Fixture) -> dict[str, Item]:
    return {it.item_id: it for it in fx.items}


def test_new_codes_are_registered_with_declared_roles() -> None:
    assert set(NEW) <= set(all_codes())
    assert PERTURBATIONS["T9"].roles == PERTURBATIONS["T10"].roles == PERTURBATIONS["T3"].roles
    assert "misleads" in PERTURBATIONS["V10"].roles and "preserves_answer" not in PERTURBATIONS["V10"].roles
    assert PERTURBATIONS["V11"].roles == {"preserves_answer"}


def test_every_item_records_its_parameters_and_roles(fx: Fixture, out: tuple[list[Item], Any]) -> None:
    items, _ = out
    parents = _parents(fx)
    seen = {it.variant.split("-")[0] for it in items}
    assert seen == set(NEW)
    for v in items:
        p = parents[v.parent_id or ""]
        assert v.perturbation["code"] == v.variant.split("-")[0] and v.seed is not None and v.roles is not None
        assert v.answer == p.answer and v.options == p.options  # every new kind keeps the parent's answer
        if v.variant.startswith(("T9", "T10", "V10")):
            assert v.perturbation.get("kind", v.perturbation.get("style"))
            assert ("misleads" in v.roles) == (v.lure is not None)  # a lure-less premise misleads no one (NO_LURE)
            assert v.lure is None or v.lure != v.answer
        if v.variant.startswith("V11"):
            assert v.perturbation["severity"] == int(v.variant.rsplit("-", 1)[1])
            assert 0 <= v.meta["evidence_ssim"] <= 1 and -1 <= v.meta["ssim"] <= 1
            # what the question reads, by its task's contract: the lesions, the whole image, or nothing (acquisition)
            read = {"lesion": v.meta["evidence_ssim"], "image": v.meta["ssim"], "none": 1.0}[
                question_evidence(task_requires(v.task))]
            assert v.meta["evidence_survives"] == (read >= 0.5)
            assert ("probe" in v.roles) == (not v.meta["evidence_survives"])


def test_same_seed_same_items(fx: Fixture, out: tuple[list[Item], Any]) -> None:
    items, _ = out
    again, _ = generate_variants(fx.root, fx.cases, fx.items, ",".join(NEW), 0, fx.images, workers=1)
    assert [it.item_id for it in again] == [it.item_id for it in items]
    other, _ = generate_variants(fx.root, fx.cases, fx.items, "T9", 1, fx.images, workers=1)
    assert {it.item_id for it in other}.isdisjoint(it.item_id for it in items)


def test_premise_kinds_state_one_premise_and_reach_the_model(fx: Fixture, out: tuple[list[Item], Any]) -> None:
    items, _ = out
    parents = _parents(fx)
    by_parent: dict[tuple[str, str], list[Item]] = {}
    for v in items:
        if v.variant.startswith(("T9", "T10")):
            by_parent.setdefault((v.parent_id or "", v.perturbation["code"]), []).append(v)
    assert by_parent
    for (pid, code), vs in by_parent.items():
        kinds = FRAMED_PREMISES if code == "T9" else INDIRECT_PREMISES
        assert [v.perturbation["kind"] for v in vs] == list(kinds)
        assert len({(v.perturbation["fact"], v.perturbation["stated"], v.lure) for v in vs}) == 1
        for v in vs:
            msgs = render_messages(v, mode=get_mode("independent"), history=(), conv=BoxConvention())
            shown = " ".join(p.text or "" for m in msgs for p in m.parts if p.type == "text")
            premise = str(v.perturbation["premise"])
            assert as_clause(premise) in shown or premise in shown
            assert parents[pid].question in shown
            if v.lure is not None and v.form == "mcq":  # the lure is the option the premise states
                assert v.options[letter_index(v.lure)].lower() == str(v.perturbation["stated"]).lower()


@given(st.text(alphabet=st.characters(categories=("L", "N", "Zs")), min_size=2, max_size=40),
       st.sampled_from([t for ts in (*FRAMED_PREMISES.values(), *INDIRECT_PREMISES.values()) for t in ts
                        if "{s}" in t or "{S}" in t]))  # the earlier-turn questions: the premise is the answer
def test_framing_keeps_the_premise_words(words: str, template: str) -> None:
    premise = f"The diagnosis is {words.strip() or 'x'}."
    text = frame(template, premise)
    assert as_clause(premise).rstrip(".") in text or premise.strip() in text
    assert "{" not in text.replace(premise, "")


def test_ten_premise_texts_per_kind_are_distinct(fx: Fixture) -> None:
    for kinds in (FRAMED_PREMISES, INDIRECT_PREMISES):
        for kind, templates in kinds.items():
            assert len(set(templates)) == len(templates) >= 5, kind


def test_v10_changes_only_the_text_box_and_keeps_lesions_clear(fx: Fixture, out: tuple[list[Item], Any]) -> None:
    from medr2.images import load_image

    items, _ = out
    parents = _parents(fx)
    cases = {c.case_id: c for c in fx.cases}
    v10 = [v for v in items if v.variant.startswith("V10")]
    assert {v.perturbation["style"] for v in v10} == set(TEXT_STYLES)
    for v in v10[:24]:
        p = parents[v.parent_id or ""]
        a, b = load_image(fx.root / (v.image or "")), load_image(fx.root / (p.image or ""))
        x1, y1, x2, y2 = (int(t) for t in v.perturbation["text_box"])
        diff = np.any(a != b, axis=-1) if a.ndim == 3 else a != b
        assert diff.any() and not diff[:y1].any() and not diff[y2 + 1:].any()
        assert not diff[:, :x1].any() and not diff[:, x2 + 1:].any()
        for f in cases[v.case_id].findings:
            fx1, fy1, fx2, fy2 = f.box
            assert not (x1 < fx2 and fx1 < x2 and y1 < fy2 and fy1 < y2)


@settings(max_examples=20, deadline=None)
@given(st.integers(48, 200), st.integers(48, 200), st.sampled_from(list(TEXT_STYLES)),
       st.text(alphabet="ABCDEFGHIJ abcdefghij:()", min_size=1, max_size=60))
def test_burnt_text_stays_inside_its_box(w: int, h: int, style: str, text: str) -> None:
    place = layout(w, h, text, style)
    if place is None:
        return
    x1, y1, x2, y2 = place["box"]
    assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h
    arr = np.full((h, w), 90, np.uint8)
    drawn = burn_text(arr, text, style, place["xy"], place["size"])
    ys, xs = np.nonzero(drawn != arr)
    if len(xs):
        assert xs.min() >= x1 and xs.max() < x2 and ys.min() >= y1 and ys.max() < y2


def _phantom(rng: np.random.Generator, size: int) -> np.ndarray:
    """A grey phantom: a body ellipse with a few inserts of other densities (what CT/MR/X-ray images hold)."""
    yy, xx = np.mgrid[0:size, 0:size] / size
    img = np.zeros((size, size))
    img[((yy - 0.5) / 0.42) ** 2 + ((xx - 0.5) / 0.36) ** 2 <= 1] = rng.uniform(70, 140)
    for _ in range(int(rng.integers(2, 6))):
        cy, cx, r = rng.uniform(0.3, 0.7), rng.uniform(0.3, 0.7), rng.uniform(0.03, 0.12)
        img[(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r] = rng.uniform(20, 250)
    return np.clip(img, 0, 255).astype(np.uint8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(PHYSICS.names())), st.integers(0, 2**32 - 1),
       st.one_of(st.just("ct"), st.just("xray"), st.integers(0, 2**16)))
def test_ssim_falls_monotonically_with_severity(kind: str, seed: int, image: str | int) -> None:
    """For any image (a real background or a random phantom) and any seed, SSIM to the clean image falls as the
    severity rises (the same draws at every severity: the same artefact, stronger), and so does the error grow."""
    arr = real_backgrounds()[image] if isinstance(image, str) else _phantom(np.random.default_rng(image), 96)
    out = [degrade_physics(arr, kind, s, np.random.default_rng(seed)) for s in SEVERITIES]
    errors = [float(np.mean((o.astype(np.float64) - arr) ** 2)) for o in out]
    scores = [ssim(o, arr) for o in out]
    assert scores[0] > scores[1] > scores[2], (kind, scores)
    assert errors[0] < errors[1] < errors[2], (kind, errors)
    assert scores[0] < 1.0


def test_physics_kinds_declare_modalities_and_keep_shape() -> None:
    assert set(kinds_for("CT")) >= {"ct_lowdose", "ct_metal"}
    assert set(kinds_for("MRI")) >= {"mr_ghost", "mr_gibbs", "mr_bias", "mr_undersample"}
    assert kinds_for("fundus photography") == []
    rgb = np.repeat(real_backgrounds()["ct"][..., None], 3, axis=2)
    out = degrade_physics(rgb, "mr_gibbs", 2, np.random.default_rng(0))
    assert out.shape == rgb.shape and out.dtype == np.uint8
    a = degrade_physics(rgb, "ct_lowdose", 2, np.random.default_rng(5))
    assert np.array_equal(a, degrade_physics(rgb, "ct_lowdose", 2, np.random.default_rng(5)))


# --------------------------------------------------------------------------- scripted models and the metrics
@pytest.fixture(scope="module")
def sample_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bench = tmp_path_factory.mktemp("attacks") / "bench"
    medr2.build("sample", bench, cases=6, variants=",".join(NEW), workers=1, seed=0)
    return bench


def _item(req: medr2.Request) -> Item:
    item = req.meta["item"]
    assert isinstance(item, Item)
    return item


def follower(req: medr2.Request) -> str:
    """Believes any premise, context note or burnt-in text: answers the option it names (the lure)."""
    item = _item(req)
    return item.lure or gold_answer(item, BoxConvention())


def ignorer(req: medr2.Request) -> str:
    """Reads the image and the question only: always the right answer."""
    return gold_answer(_item(req), BoxConvention())


def severity_blind(req: medr2.Request) -> str:
    """Right, except on the most severe physics degradation, where it gives a wrong answer."""
    item = _item(req)
    if item.variant.startswith("V11") and item.variant.endswith("-3"):
        return wrong_answer(item, BoxConvention())
    return gold_answer(item, BoxConvention())


@pytest.mark.parametrize(("model", "expected"), [(follower, 1.0), (ignorer, 0.0)])
def test_attack_success_rate_catches_a_follower_and_clears_an_ignorer(
        tmp_path: Path, sample_bench: Path, model: Any, expected: float) -> None:
    run = tmp_path / "run"
    medr2.evaluate(sample_bench, model, run, variants="clean,T9,T10,V10", split="all")  # a train-only bench
    att = medr2.score(run, resamples=0)["modes"]["independent"]["attacks"]
    assert att["ASR"]["value"] == expected and att["ASR"]["n"] > 0
    for code in ("T9", "T10", "V10"):
        assert att[f"ASR_{code}"]["value"] == expected and att[f"ASR_{code}"]["n"] > 0
    kinds = {v.split("-", 1)[1] for v in att["by_variant"]}
    assert kinds >= {*FRAMED_PREMISES, *INDIRECT_PREMISES, *TEXT_STYLES}
    assert all(b["value"] == expected for b in att["by_variant"].values())


def test_accuracy_per_degradation_kind_and_severity(tmp_path: Path, sample_bench: Path) -> None:
    run = tmp_path / "run"
    medr2.evaluate(sample_bench, severity_blind, run, variants="clean,V11", split="all")
    mode = medr2.score(run, resamples=0)["modes"]["independent"]
    deg = mode["degradation"]
    v11 = {k: v for k, v in deg.items() if k.startswith("V11-")}
    assert v11
    for kind, curve in v11.items():
        for sev, block in curve.items():
            assert block["acc"] == mode["variants"][f"{kind}-{sev}"]["acc"]  # the same units as per variant
            if sev == "3":  # a deliberately wrong answer; only a lenient form may still score right
                assert block["acc"]["value"] < 0.2 and block["delta"]["value"] < -0.8
            else:
                assert block["acc"]["value"] == 1.0 and block["delta"]["value"] == 0.0
            assert block["acc"]["n"] > 0
    # which sev-3 answers scored right: a shifted box that still overlaps a wide organ, a report's wording
    rows = pq.read_table(run / "scores.parquet", columns=["variant", "form", "verdict"]).to_pylist()
    right = {r["form"] for r in rows if r["variant"].startswith("V11-") and r["variant"].endswith("-3")
             and r["verdict"] == "correct"}
    assert right <= {"box", "text"}, right
