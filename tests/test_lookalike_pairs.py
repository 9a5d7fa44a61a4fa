"""Issue 48's look-alike pairs (V12: the same question of the most alike image of another case whose answer
differs, scored "both right") and the harm-weighted attack success rate of the harm view; every figure is
recomputed here from the stored rows of a scripted run (``load_table``), never written down."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import medr2
from medr2 import BoxConvention, Case, Item
from medr2.images import ImageStore, load_image
from medr2.imaging.similarity import look_alike, thumbnail
from medr2.perturb.context import CaseIndex, PerturbContext
from medr2.perturb.engine import generate_variants
from medr2.perturb.facts import FactPools
from medr2.perturb.registry import PERTURBATIONS, item_roles
from medr2.perturb.shown import answer_for_shown
from medr2.run.prompts import gold_answer, wrong_answer
from medr2.scoring.harm import HarmSpec, item_weights
from medr2.scoring.scorer import load_table

ATTACKS = "T3,T9,V10"


# --------------------------------------------------------------------------- the similarity measure
def _image(seed: int, h: int, w: int, rgb: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, size=(max(2, h // 8), max(2, w // 8)), dtype=np.uint8)
    grey = np.kron(base, np.ones((8, 8), dtype=np.uint8))[:h, :w]  # blocks: structure SSIM can see
    return np.stack([grey] * 3, axis=2) if rgb else grey


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1), st.integers(16, 160), st.integers(16, 160),
       st.booleans(), st.booleans())
def test_look_alike_is_a_bounded_symmetric_similarity(sa: int, sb: int, h: int, w: int, rgb_a: bool,
                                                      rgb_b: bool) -> None:
    a, b = _image(sa, h, w, rgb_a), _image(sb, w, h, rgb_b)  # other sizes: the thumbnails compare
    assert look_alike(a, a) == 1.0
    assert look_alike(a, b) == look_alike(b, a)
    assert -1.0 <= look_alike(a, b) <= 1.0
    assert look_alike(thumbnail(a), b) == look_alike(a, b)  # a thumbnail is what is compared
    noisy = np.clip(a.astype(int) + np.random.default_rng(sb).integers(-4, 5, a.shape), 0, 255).astype(np.uint8)
    assert look_alike(a, noisy) >= look_alike(a, np.full_like(a, int(a.mean())))  # near copy beats a flat image


# --------------------------------------------------------------------------- which cases V12 compares
def _case(i: int, patient: int, modality: str, image: int) -> Case:
    return Case(case_id=f"c{i:04d}", image=f"images/{image}.png", image_sha256=f"{image:064x}", width=8, height=8,
                modality=modality, source="t", license="CC0", patient_id=f"p{patient}",
                split=("train", "test")[patient % 2])  # a patient's cases share a split


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.sampled_from(["CT", "MRI"]), st.integers(0, 40)), min_size=1,
                max_size=90),
       st.integers(1, 12), st.integers(0, 2**31 - 1), st.data())
def test_v12_candidates_are_other_patients_of_the_modality_and_split_each_image_once(
        rows: list[tuple[int, str, int]], k: int, seed: int, data: st.DataObject) -> None:
    cases = [_case(i, p, m, img) for i, (p, m, img) in enumerate(rows)]
    me = data.draw(st.sampled_from(cases))
    ctx = PerturbContext(Path("."), ImageStore(Path(".")), seed, {}, {}, FactPools([]), CaseIndex(cases))
    pert = PERTURBATIONS["V12"](candidates=k)
    got = pert._candidates(me, ctx)
    assert pert.related_cases(me, ctx) == [c.case_id for c in got]  # what the build sends is what is compared
    assert all(c.modality == me.modality and c.patient_id != me.patient_id and c.image_sha256 != me.image_sha256
               and c.split == me.split for c in got)  # never an image of another split
    assert len({c.image_sha256 for c in got}) == len(got)
    group = [c for c in cases if c.modality == me.modality and c.split == me.split]  # what others_for gives
    eligible = {c.image_sha256 for c in group if c.patient_id != me.patient_id and c.image_sha256 != me.image_sha256
                and c.split == me.split}
    if len(group) <= 2 * k:
        assert {c.image_sha256 for c in got} == eligible  # a small group: every such case is compared
    else:
        assert len(got) <= k
    again = PerturbContext(Path("."), ImageStore(Path(".")), seed, {}, {}, FactPools([]), CaseIndex(cases[::-1]))
    assert [c.case_id for c in pert._candidates(me, again)] == [c.case_id for c in got]  # seeded, not by order


# --------------------------------------------------------------------------- V12 items on the sample bench
@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("lookalike") / "bench"
    medr2.build("sample", root, cases=20, variants=f"{ATTACKS},V12", workers=1, seed=0)
    return root


def _items(bench: Path) -> tuple[dict[str, Item], Any]:
    from medr2.bench.format import load_bench

    b = load_bench(bench)
    return {it.item_id: it for it in b.items}, b


def test_v12_is_registered_as_a_pair(bench: Path) -> None:
    assert PERTURBATIONS["V12"].roles == {"pairs", "augments"}
    items, _ = _items(bench)
    v12 = [it for it in items.values() if it.variant == "V12"]
    assert v12, "the sample bench has look-alike pairs"
    assert all(item_roles(it.variant, it.roles, it.meta) == ("augments", "pairs") for it in v12)


def test_v12_pairs_the_most_alike_case_with_another_answer(bench: Path) -> None:
    items, b = _items(bench)
    store = ImageStore(bench, identity=b.identity)
    thumbs: dict[str, np.ndarray] = {}

    def thumb(rel: str) -> np.ndarray:
        if rel not in thumbs:
            thumbs[rel] = thumbnail(load_image(store.path(rel)))
        return thumbs[rel]

    cases = {c.case_id: c for c in b.cases}
    min_sim = PERTURBATIONS["V12"].defaults["min_similarity"]
    for v in (it for it in items.values() if it.variant == "V12"):
        parent = items[v.parent_id or ""]
        case, other = cases[v.case_id], cases[v.perturbation["other_case"]]
        assert v.question == parent.question and v.lure == parent.answer != v.answer
        assert other.modality == case.modality and other.patient_id != case.patient_id and other.split == case.split
        assert (v.options != parent.options) == v.perturbation["options_changed"]
        assert parent.cue is None and v.image_sha256 == other.image_sha256  # the other image as it is
        mine = thumb(parent.image or "")
        sim = look_alike(mine, thumb(other.image))
        assert sim == v.meta["similarity"] == v.perturbation["similarity"] >= min_sim
        assert answer_for_shown(parent, case, other, None) in (None, (v.options, v.answer))
        # no other case of the modality (all are candidates on a bench this small) with another exact answer
        # looks more alike
        for c in cases.values():
            if (c.modality != case.modality or c.patient_id == case.patient_id or c.case_id == other.case_id
                    or c.split != case.split):
                continue
            got = answer_for_shown(parent, case, c, np.random.default_rng(0))
            if got is not None and got[1] != parent.answer:
                assert look_alike(mine, thumb(c.image)) <= sim


def test_v12_is_the_same_from_the_build_and_in_memory(bench: Path) -> None:
    items, b = _items(bench)
    clean = [it for it in items.values() if it.variant == "clean"]
    again, skips = generate_variants(bench, b.cases, clean, "V12", 0, ImageStore(bench, identity=b.identity),
                                     workers=1)
    assert {it.item_id: it for it in again} == {k: it for k, it in items.items() if it.variant == "V12"}
    assert sum(skips["V12"].values()) > 0  # skips are counted, not silent


# --------------------------------------------------------------------------- scripted models and the metrics
def _item(req: medr2.Request) -> Item:
    item = req.meta["item"]
    assert isinstance(item, Item)
    return item


def _coin(item: Item, salt: str) -> bool:
    return zlib.crc32(f"{salt}{item.item_id}".encode()) % 3 == 0


def oracle(req: medr2.Request) -> str:
    return gold_answer(_item(req), BoxConvention())


def confuser(req: medr2.Request) -> str:
    """Does not tell look-alikes apart: on a V12 item answers the clean item's answer (its lure)."""
    item = _item(req)
    return item.lure if item.variant == "V12" and item.lure else gold_answer(item, BoxConvention())


def mixed(req: medr2.Request) -> str:
    """Wrong on a third of the items, and follows the lure of a third of the attacks (by item id)."""
    item = _item(req)
    if item.lure and item.variant != "V12" and _coin(item, "lure"):
        return item.lure
    return wrong_answer(item, BoxConvention()) if _coin(item, "wrong") else gold_answer(item, BoxConvention())


def _run(tmp_path: Path, bench: Path, model: Any, harm: Path | None = None) -> tuple[dict[str, Any], Path]:
    run = tmp_path / "run"
    medr2.evaluate(bench, model, run, variants=f"clean,{ATTACKS},V12", split="all")
    got = medr2.score(run, resamples=0, harm=harm, slice=["task"] if harm is not None else None, mixed_splits=True)
    return got, run


def _pairs_from_rows(run: Path, role: str) -> pd.DataFrame:
    t = load_table(run)
    t = t[t["mode"] == "independent"]
    kids = t[t[role] & ~t["probe"]]
    parents = t.loc[t["variant"] == "clean", ["item_id", "correct", "parsed_key", "chance"]]
    parents = parents.rename(columns={c: f"{c}_p" for c in parents.columns}).rename(columns={"item_id_p": "parent_id"})
    return kids.merge(parents, on="parent_id", how="inner")


@pytest.mark.parametrize(("model", "pair_acc", "confused"), [(oracle, 1.0, 0.0), (confuser, 0.0, 1.0)])
def test_pair_accuracy_catches_a_model_that_confuses_look_alikes(tmp_path: Path, bench: Path, model: Any,
                                                                 pair_acc: float, confused: float) -> None:
    got, _ = _run(tmp_path, bench, model)
    block = got["modes"]["independent"]["pairs"]["V12"]
    assert block["value"] == pair_acc and block["confused"]["value"] == confused and block["n"] > 0
    assert block["parent_acc"]["value"] == 1.0


def test_pair_accuracy_and_harm_weighted_asr_recomputed_from_stored_rows(tmp_path: Path, bench: Path) -> None:
    harm = tmp_path / "harm.json"
    harm.write_text(json.dumps({"weights": {"low": 1, "medium": 4, "high": 25}}))
    got, run = _run(tmp_path, bench, mixed, harm)
    mode = got["modes"]["independent"]

    pairs = _pairs_from_rows(run, "pairs")
    both = pairs["correct"].astype(bool) & pairs["correct_p"].astype(bool)
    block = mode["pairs"]["V12"]
    assert block["n"] == len(pairs) > 0
    assert block["value"] == pytest.approx(both.mean())
    assert block["acc"]["value"] == pytest.approx(pairs["correct"].mean())
    assert block["chance"]["value"] == pytest.approx((pairs["chance"] * pairs["chance_p"]).mean())
    assert 0 < block["value"] < 1  # the mixed model is right on some pairs and not on others

    att = _pairs_from_rows(run, "misleads")
    att = att[att["lure_key"].notna() & (att["parsed_key_p"] != att["lure_key"])]
    moved = (att["parsed_key"] == att["lure_key"]).to_numpy(dtype=bool)
    assert mode["attacks"]["ASR"]["value"] == pytest.approx(moved.mean())
    spec = HarmSpec(weights={"low": 1.0, "medium": 4.0, "high": 25.0})
    tier, w = item_weights(att, spec)
    h = got["harm"]["modes"]["independent"]
    assert h["harm_weighted_ASR"]["value"] == pytest.approx((w * moved).sum() / w.sum())
    assert h["harm_weighted_ASR"]["n"] == len(att)
    for code in ("T3", "T9", "V10"):
        sel = (att["code"] == code).to_numpy()
        assert h[f"harm_weighted_ASR_{code}"]["value"] == pytest.approx((w[sel] * moved[sel]).sum() / w[sel].sum())
    if (tier == "high").any():
        assert h["high_risk_ASR"]["value"] == pytest.approx(moved[tier == "high"].mean())
    assert 0 < moved.mean() < 1

    # per slice (task): pair accuracy and the attack rates on the slice's pairs
    slices = got["slices"]["modes"]["independent"]["task"]["slices"]
    by_task = {s["key"]["task"]: s["metrics"] for s in slices}
    for task, df in pairs.groupby("task"):
        both_t = df["correct"].astype(bool) & df["correct_p"].astype(bool)
        assert by_task[task]["pairs.V12"]["value"] == pytest.approx(both_t.mean())
    att_task = att["task"].to_numpy()
    for task in sorted(set(att_task)):
        sel = att_task == task
        assert by_task[task]["attacks.ASR"]["value"] == pytest.approx(moved[sel].mean())
        assert by_task[task]["harm_weighted_ASR"]["value"] == pytest.approx((w[sel] * moved[sel]).sum()
                                                                             / w[sel].sum())


def follower(req: medr2.Request) -> str:
    """Believes any premise or burnt-in text: answers the option it names (the lure)."""
    item = _item(req)
    return item.lure if item.lure and item.variant != "V12" else gold_answer(item, BoxConvention())


@pytest.mark.parametrize(("model", "expected"), [(follower, 1.0), (oracle, 0.0)])
def test_harm_weighted_asr_catches_a_follower_and_clears_an_ignorer(tmp_path: Path, bench: Path, model: Any,
                                                                      expected: float) -> None:
    harm = tmp_path / "harm.json"
    harm.write_text("{}")
    got, _ = _run(tmp_path, bench, model, harm)
    h = got["harm"]["modes"]["independent"]
    assert h["harm_weighted_ASR"]["value"] == expected and h["harm_weighted_ASR"]["n"] > 0
    assert all(h[k]["value"] == expected for k in h if "ASR" in k)
