"""Issue 40's kinds 3 and 4 left by the second blind review (docs/reviews/review-2026-12-07b.md), as properties of
built benches (the sample at two seeds, every variant that states or re-keys a stage-4 claim, and ``buildtest``)
and of generated cases, never a list of reviewed items:

1. a benign/malignant claim (``s4.malignancy``, a variant's stated malignancy fact, a composed report's "malignant
   appearance") is made only where the image decides it (``contract.malignancy_decidable``): every diagnosis the
   image cannot rule out, its own and each compatible mimic, has the claimed class, or the source declares the label
   discriminating; the skips are counted with the clause's reason;
2. no wrong option of a diagnosis-type item, clean or re-keyed to another case's image (V2, V3, V12), is a compatible
   mimic of the shown case (listed by its source or known to the vocabulary for its diagnosis), nor a synonym,
   sub-type or super-type of one or of its diagnosis;
3. no two options of a plane/view question are related in the vocabulary (same, is-a or part-of);
4. (the third review, docs/reviews/review-2026-12-07c.md) every clean and text-variant item meets, on its case, the
   contract of the task it is filed under: a T1 twin filed under ``s2.organ_presence`` ("is the pars triangularis
   visible? no") only where the structure labels are complete."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from medr2 import Bench, Case, Item, vocab as clinical
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.records import letter_index
from medr2.tasks import vocab
from medr2.tasks.contract import MALIGNANCY_UNDECIDED, malignancy_decidable, task_requires, unmet
from tests import build_fixtures  # noqa: F401  (registers the "buildtest" source)

VARIANTS = "T1,T2,T3,T10,V2,V3,V12"
DIAGNOSIS_TASKS = ("s4.diagnosis", "s4.differential", "s4.evidence_support")
STATED_CLASS = re.compile(r"\b(?:the )?lesions? (?:is|are) (benign|malignant)\b", re.IGNORECASE)
REPORTED_CLASS = re.compile(r"\b(benign|malignant) appearance\b", re.IGNORECASE)


@pytest.fixture(scope="module", params=["sample-5", "sample-23", "buildtest"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Bench:
    root: Path = tmp_path_factory.mktemp(request.param.replace("-", "_")) / "bench"
    if request.param == "buildtest":
        build_bench("buildtest", root, seed=3, n_cases=30, variants=VARIANTS, workers=1)
    else:
        try:
            build_bench("sample", root, seed=int(request.param.split("-")[1]), n_cases=60, variants=VARIANTS,
                        workers=1)
        except Exception as e:  # noqa: BLE001  (the sample's optional backgrounds)
            pytest.skip(f"sample source not available: {e}")
    return load_bench(root)


def _shown(bench: Bench, it: Item) -> Case:
    """The case whose image the item's question is answered from (a re-keyed variant's other case)."""
    other = (it.perturbation or {}).get("other_case")
    if other and it.meta.get("scoring") == "exact":
        return bench.case(str(other))
    return bench.case(it.case_id)


def _right(it: Item) -> list[str]:
    return [it.options[letter_index(x)] for x in it.answer.split(",") if x] if it.options else []


def _cannot_rule_out(case: Case) -> list[str]:
    """The diagnoses the case's image cannot rule out, restated from its declarations: its diagnosis, its source's
    mimics and the vocabulary's mimics of the diagnosis, less those the source declares told apart."""
    raw = case.meta.get("discriminable")
    told = [str(d) for d in raw] if isinstance(raw, list) else []
    dx = [case.diagnosis] if case.diagnosis and not vocab.is_normal(case.diagnosis) else []
    mimics = [*case.mimics, *(clinical.mimics(case.diagnosis) if case.diagnosis else ())]
    return dx + [m for m in mimics if not any(vocab.same(m, d) for d in told)]


# --------------------------------------------------------------------------- 1: malignancy claims

def _decided(case: Case, label: str) -> bool:
    if case.meta.get("malignancy_discriminable") is True:
        return True
    differential = [*case.mimics, *(clinical.mimics(case.diagnosis) if case.diagnosis else ())]
    return bool(case.diagnosis and differential) and all(
        clinical.malignancy(d) == label.lower() for d in _cannot_rule_out(case))


def test_malignancy_claimed_only_where_the_image_decides_it(built: Bench) -> None:
    """Every item that asks or states benign/malignant (the task's items, clean and re-keyed; a hint, premise or
    earlier turn of any task) and every composed report that says so names a class every diagnosis the shown
    image cannot rule out shares."""
    claims = 0
    for it in built.items:
        case = _shown(built, it)
        if it.task == "s4.malignancy" and it.meta.get("scoring") == "exact":
            assert case.malignancy and _decided(case, case.malignancy), (it.variant, case.diagnosis, case.mimics)
            assert malignancy_decidable(case)
            claims += 1
        texts = [it.question, *(f"{t.question} {t.answer}" for t in it.context)]
        for m in (m for t in texts for m in STATED_CLASS.finditer(t)):
            base = built.case(it.case_id)
            assert malignancy_decidable(base), (it.variant, it.task, m.group(0), base.diagnosis)
            claims += 1
    for case in built.cases:
        for m in REPORTED_CLASS.finditer(case.report or ""):
            assert "report" not in case.synthetic_fields or _decided(case, m.group(1)), (case.diagnosis, m.group(0))
    skipped = built.manifest["skipped"].get("s4.malignancy", {})
    undecided = [c for c in built.cases if c.malignancy and not malignancy_decidable(c)]
    if any(c.meta.get("lesion_class") for c in built.cases):  # the sample: each of its classes has such a mimic
        assert undecided and skipped.get(MALIGNANCY_UNDECIDED), skipped
    assert claims or skipped.get(MALIGNANCY_UNDECIDED)


def test_sample_classes_agree_with_the_vocabulary() -> None:
    """Each sample lesion class's benign/malignant label is its diagnosis's class in the vocabulary, and every mimic
    the vocabulary knows is a diagnosis concept: the class is known once."""
    from medr2.sources.sample.lesions import FAMILIES

    for cls in (c for classes in FAMILIES.values() for c in classes):
        if cls.malignancy is not None:
            assert clinical.malignancy(cls.diagnosis) == cls.malignancy, cls.diagnosis
        for m in (*cls.mimics, *clinical.mimics(cls.diagnosis)):
            assert clinical.concept_of(m) is not None, m
    for c in clinical.vocabulary():
        for name, v in c.implies:
            if name in ("malignancy", "mimic"):
                got = clinical.vocabulary().get(v)
                assert got is not None and got.kind in ("diagnosis", "finding"), (c.label, name, v)


CLASSED = sorted({c.label for c in clinical.vocabulary() if clinical.malignancy(c.label) is not None})


@settings(max_examples=200, deadline=None)
@given(dx=st.sampled_from(CLASSED), mimics=st.lists(st.sampled_from(CLASSED), max_size=3, unique=True),
       told=st.sets(st.integers(0, 2)), flag=st.sampled_from([True, False, None]))
def test_a_mimic_of_the_other_class_leaves_malignancy_undecided(dx: str, mimics: list[str], told: set[int],
                                                               flag: bool | None) -> None:
    """Over generated cases: the clause holds exactly where the source declares the label discriminating or states
    a differential every diagnosis of which it does not tell apart has the label's class; declaring the
    other-class mimics told apart decides it again."""
    label = clinical.malignancy(dx)
    assert label is not None
    told_apart = [m for i, m in enumerate(mimics) if i in told and not vocab.same(m, dx)]
    meta: dict[str, object] = {"discriminable": told_apart}
    if flag is not None:
        meta["malignancy_discriminable"] = flag
    case = Case(case_id="c", image="i.png", image_sha256="0" * 64, width=8, height=8, modality="MRI",
                diagnosis=dx, malignancy=label, mimics=mimics, source="generated", license="CC0-1.0",
                patient_id="p", meta=meta)
    assert malignancy_decidable(case) == (flag is True or _decided(case, label))
    other = [m for m in _cannot_rule_out(case) if clinical.malignancy(m) != label]
    if other and flag is not True:
        assert not malignancy_decidable(case)
        settled = case.model_copy(update={"meta": {"discriminable": [*told_apart, *other]}})
        assert malignancy_decidable(settled) == all(clinical.malignancy(d) == label
                                                    for d in _cannot_rule_out(settled))


# --------------------------------------------------------------------------- 2: wrong diagnosis options


def _wrong_diagnoses(it: Item) -> list[str]:
    """The diagnoses an item offers or states wrongly: the wrong options of a diagnosis question, the diagnosis
    a yes/no support question keys unsupported (T1's twins among them), a misleading premise's wrong diagnosis."""
    p = it.perturbation or {}
    if p.get("fact") == "diagnosis" and p.get("stated"):
        return [str(p["stated"])]
    if it.task not in (*DIAGNOSIS_TASKS, "s4.multilabel"):
        return []
    if it.task == "s4.evidence_support":
        m = re.search(r"diagnosis of (.+?)\?", it.question)
        return [m.group(1)] if m and it.answer == "no" else []
    right = _right(it)
    return [o for o in it.options if o not in right]


def test_no_wrong_diagnosis_is_compatible_with_the_shown_image(built: Bench) -> None:
    """No wrong option of s4.diagnosis / s4.differential, no false twin of s4.evidence_support (T1's too), no wrong
    finding of s4.multilabel and no misleading premise's diagnosis (T3, T9, T10), clean or re-keyed to another
    case's image, is a diagnosis that image cannot rule out, nor a synonym, sub-type or super-type of one."""
    checked = 0
    for it in built.items:
        if it.meta.get("scoring") != "exact":
            continue
        case = _shown(built, it)
        true = [*_cannot_rule_out(case), *(f.label for f in case.findings)]
        for wrong in _wrong_diagnoses(it):
            hit = [t for t in true if clinical.related(wrong, t) in ("same", "parent", "child")
                   or vocab.same(wrong, t)]
            assert not hit, (it.variant, it.task, wrong, hit, case.diagnosis)
            checked += 1
    assert checked


# --------------------------------------------------------------------------- 3: plane options

def test_plane_options_are_exclusive(built: Bench) -> None:
    """No two options of a plane/view question (clean or variant) are one concept, a sub-type or a part of each
    other (a planar whole-body scan beside its posterior view)."""
    planes = [it for it in built.items if it.task == "s1.plane" and it.options]
    assert planes
    for it in planes:
        for a, b in itertools.combinations(it.options, 2):
            assert clinical.related(a, b) in ("unrelated", "sibling"), (it.variant, it.options)


PLANES = sorted({t for c in clinical.vocabulary() if c.kind == "plane" for t in c.terms})


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PLANES), st.sampled_from(PLANES))
def test_related_planes_are_never_two_options(a: str, b: str) -> None:
    """Any two plane terms the vocabulary relates (synonyms, is-a, part-of) are refused together by the one
    exclusivity check every choice draft goes through."""
    if clinical.related(a, b) in ("parent", "child"):
        assert vocab.nested_options([a, b]) is not None, (a, b)
    elif clinical.related(a, b) == "same":
        assert clinical.key(a) == clinical.key(b), (a, b)


def test_every_item_meets_the_contract_of_the_task_it_is_filed_under(built: Bench) -> None:
    """A clean item, and a text variant (T*: the parent's image and case), is asked only where its case meets the
    contract its task declares; T1 files a twin under the task of the fact it asks, so it must meet that task's."""
    checked = 0
    for it in built.items:
        if it.variant != "clean" and not it.variant.startswith("T"):
            continue
        req = unmet(task_requires(it.task), built.case(it.case_id))
        assert req is None, (it.item_id, it.variant, it.task, it.question, req.id if req else None)
        checked += 1
    assert checked > 100
    assert any(it.variant == "T1" for it in built.items)


def test_an_intensity_is_keyed_or_denied_only_of_a_lesion_of_one_signal(built: Bench) -> None:
    """s3.attribute asks a finding's intensity, and T1 denies one, only where the finding is of one signal
    (``contract.one_signal``): a ring lesion's bright rim round a dark core makes "mixed signal" as true as
    "hypointense" (the third review)."""
    from medr2.tasks.contract import one_signal

    words = {str(f.attributes["intensity"]) for c in built.cases for f in c.findings
             if isinstance(f.attributes.get("intensity"), str)}
    asked = 0
    for it in built.items:
        intensity_q = (it.task == "s3.attribute" and it.meta.get("attribute") == "intensity") or (
            it.variant == "T1" and (it.perturbation or {}).get("family") == "attribute"
            and any(re.search(rf"\b{re.escape(w)}\b", it.question) for w in words))
        if not intensity_q:
            continue
        named = [f for f in built.case(it.case_id).findings if f.label.lower() in it.question.lower()]
        assert named and all(one_signal(f) for f in named), (it.item_id, it.variant, it.question)
        asked += 1
    if any(c.meta.get("lesion_class") for c in built.cases):  # the sample draws rim lesions beside homogeneous ones
        assert any(not one_signal(f) for c in built.cases for f in c.findings)
