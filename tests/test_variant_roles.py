"""A variant declares its role (``Perturbation.roles``), each item it makes records it (``Item.roles``), and
scoring and training read only that (:func:`medr2.perturb.registry.item_roles`): a plugin variant that declares
itself answer-preserving counts in FlipRate and consistency, and one that declares ``augments`` is a training
example of ``augmented``, with no other edit. Benches built before roles were written read the same roles from
the registry by code (the rule :func:`medr2.perturb.registry.narrow_roles`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings, strategies as st

import medr2
from medr2 import Perturbation, answer_changed_meta, derive_item
from medr2.perturb.registry import PERTURBATIONS, ROLES, all_codes, declared_roles, item_roles, narrow_roles
from medr2.registry import RegistryCollision
from medr2.scoring.table import build_table_columns

sys.path.insert(0, str(Path(__file__).parent))
from perturb_fixtures import build_fixture  # noqa: E402
from score_fixtures import make_items  # noqa: E402

PHRASE = "Please answer carefully."
roles_sets = st.frozensets(st.sampled_from(ROLES))
metas = st.fixed_dictionaries({}, optional={"scoring": st.sampled_from(["exact", "probe"]),
                                            "answer_preserving": st.booleans(), "other": st.integers()})


@given(declared=roles_sets, meta=metas)
def test_narrowing_keeps_declared_roles_unless_the_item_says_otherwise(declared: frozenset[str],
                                                                       meta: dict[str, Any]) -> None:
    got = narrow_roles(declared, meta)  # type: ignore[arg-type]
    assert got == [r for r in ROLES if r in got], "canonical order"
    probe = meta.get("scoring") == "probe"
    assert ("probe" in got) == (probe or "probe" in declared)
    assert ("preserves_answer" in got) == ("preserves_answer" in declared and not probe
                                           and meta.get("answer_preserving", True) is not False)
    assert ("augments" in got) == ("augments" in declared and not probe)
    assert {r for r in got if r not in ("probe", "preserves_answer", "augments")} == (
        declared - {"probe", "preserves_answer", "augments"})


@given(code=st.sampled_from(all_codes()), recorded=st.none() | roles_sets, meta=metas,
       qualifier=st.sampled_from(["", "-x", "-noise-2"]))
def test_item_roles_are_the_recorded_ones_else_the_registry_s_by_code(code: str, recorded: frozenset[str] | None,
                                                                      meta: dict[str, Any], qualifier: str) -> None:
    variant = code + qualifier
    got = item_roles(variant, None if recorded is None else sorted(recorded), meta)
    if recorded is not None:
        assert got == tuple(r for r in ROLES if r in recorded)  # what the bench recorded; meta is not read
    else:
        assert got == tuple(narrow_roles(PERTURBATIONS[code].roles, meta))
    assert item_roles("clean", None, meta) == ()
    assert declared_roles("Z9") == frozenset()  # a code no perturbation is registered under: no role


def test_built_in_items_record_the_roles_the_rule_for_older_benches_reads(tmp_path: Path) -> None:
    """Every variant item the built-ins make records roles; reading the same item as if it came from a bench built
    before roles (no ``roles``) gives the same roles, so old and new benches score alike."""
    from medr2.perturb.engine import generate_variants

    fx = build_fixture(tmp_path)
    items, _ = generate_variants(tmp_path, fx.cases, fx.items, "all", 0, fx.images, workers=1)
    assert {it.variant.split("-")[0] for it in items} == set(all_codes())
    for it in items:
        assert it.roles is not None, it.variant
        assert tuple(it.roles) == item_roles(it.variant, None, it.meta), (it.variant, it.meta)
        assert set(it.roles) <= PERTURBATIONS[it.variant.split("-")[0]].roles | {"probe"}
    # what each kind of variant counts in (docs/variants.md "Roles")
    seen = {r: {it.variant.split("-")[0] for it in items if r in (it.roles or [])} for r in ROLES}
    # issue 49 (the fixture's comparison item): V14 order reversed, T12 a contradicting prior report, V13 prior
    # swapped and V15 a companion blanked
    assert seen["preserves_answer"] == {"T5", "T6", "V8", "V9", "V11", "V14"}
    # an item of a misleading kind misleads where it names its lure (no option follows from the fixture's T8 wrong
    # earlier answers: they are no attack, meta.lure_reason)
    lured = {it.variant.split("-")[0] for it in items
             if it.lure is not None and "misleads" in declared_roles(it.variant)}
    assert seen["misleads"] == lured >= {"T3", "T4", "T9", "T10", "T12", "V10"}
    assert all(it.meta.get("lure_reason") for it in items if it.variant.startswith("T8") and it.lure is None)
    assert seen["probe"] >= {"V1", "V13", "V15"}
    assert seen["probe"] <= {"V1", "V2", "V3", "V11", "V13", "V15"}  # V11: evidence lost


def test_the_score_table_of_recorded_roles_is_the_table_of_an_older_bench() -> None:
    older = make_items(6)  # hand-written items: no roles recorded
    assert all(it.roles is None for it in older)
    recorded = [it.model_copy(update={"roles": list(item_roles(it.variant, None, it.meta))}) for it in older]
    tables = []
    for items in (older, recorded):
        by_id = {it.item_id: it for it in items}
        ids = list(by_id)
        tables.append(build_table_columns(by_id, ids, ["m"] * len(ids), ["independent"] * len(ids),
                                          ["correct"] * len(ids), [it.answer for it in items], ["rule"] * len(ids),
                                          [None] * len(ids), [{}] * len(ids)))
    pd.testing.assert_frame_equal(tables[0], tables[1])
    t = tables[1]
    assert set(t.loc[t["preserving"], "code"]) == {"T6", "V8"}
    assert set(t.loc[t["misleads"], "code"]) == {"T3", "T4"}
    assert set(t.loc[t["probe"], "code"]) == {"V1", "V2", "V3"}


class PoliteRequest(Perturbation):
    """The plugin variant of docs/extending.md: the question plus a polite phrase (the answer is the parent's)."""

    code = "T11"
    title = "polite request"
    defaults = {"phrase": PHRASE}
    roles = frozenset({"preserves_answer", "augments", "keeps_facts"})

    def apply(self, item: Any, case: Any, ctx: Any) -> list[Any]:
        if item.form != "mcq":
            raise medr2.Skip("not a multiple-choice item")
        return [derive_item(item, variant=self.code, params=dict(self.params), seed=ctx.item_seed(item, self.code),
                            question=f"{item.question} {self.params['phrase']}",
                            meta=answer_changed_meta(item, item.answer))]


@pytest.fixture
def plugin_variant() -> Iterator[type[Perturbation]]:
    """``PoliteRequest`` registered the way a plugin registers (``medr2.register_variant``), removed after."""
    medr2.register_variant(PoliteRequest)
    try:
        yield PoliteRequest
    finally:
        PERTURBATIONS.pop("T11")


def fickle(request: medr2.Request) -> str:
    """A model whose answer changes when the polite phrase is added: option A, else option B."""
    text = " ".join(p.text or "" for m in request.messages for p in m.parts if p.type == "text")
    return "B" if PHRASE in text else "A"


def test_a_plugin_variant_that_declares_its_roles_counts_in_flip_rate_and_training(
        tmp_path: Path, plugin_variant: type[Perturbation]) -> None:
    with pytest.raises(RegistryCollision):  # a plugin cannot take a built-in's code
        medr2.register_variant(type("Taken", (PoliteRequest,), {"code": "T5"}))
    bench = tmp_path / "bench"
    medr2.build("sample", bench, cases=4, variants="T5,T11", workers=1, seed=0)
    table = pq.read_table(bench / "items.parquet", columns=["variant", "roles"]).to_pylist()
    t9 = [r for r in table if r["variant"] == "T11"]
    assert t9 and all(json.loads(r["roles"]) == ["preserves_answer", "augments", "keeps_facts"] for r in t9)

    run = tmp_path / "run"
    medr2.evaluate(bench, fickle, run, variants="clean,T5,T11", split="all")
    metrics = medr2.score(run, resamples=0, mixed_splits=True)
    cons = metrics["modes"]["independent"]["consistency"]
    # every T11 item flips (the phrase changes the model's answer) and counts: the bench has no other split here
    assert cons["FlipRate_T11"]["value"] == 1.0 and cons["FlipRate_T11"]["n"] == len(t9)
    assert cons["FlipRate_T5"]["value"] == 0.0  # a paraphrase without the phrase: the same answer
    assert cons["FlipRate"]["n"] == cons["FlipRate_T11"]["n"] + cons["FlipRate_T5"]["n"]
    assert cons["Consistency"]["value"] < 1.0

    # training reads the same role: T11 items are examples of ``augmented``, and of ``flat`` never
    shown = {}
    for strategy in ("augmented", "flat"):
        medr2.export(bench, "llamafactory", tmp_path / strategy, strategy=strategy)
        shown[strategy] = "".join(p.read_text("utf-8") for p in (tmp_path / strategy).glob("*.json")
                                  if p.name not in ("medr2_export.json", "dataset_info.json"))
    assert shown["augmented"].count(PHRASE) == len(t9) and PHRASE not in shown["flat"]


@settings(max_examples=25, deadline=None)
@given(roles=st.one_of(st.just(frozenset({"nonsense"})), st.just({"probe"}), st.just(("probe",))))
def test_a_variant_declaring_an_unknown_role_or_not_a_frozenset_is_refused(roles: Any) -> None:
    bad = type("Bad", (PoliteRequest,), {"code": "T99", "roles": roles})
    with pytest.raises(ValueError, match="roles must be a frozenset"):
        PERTURBATIONS.register("T99", bad)
    assert "T99" not in PERTURBATIONS
