"""Items a radiologist would accept (issue 40, kinds 4 and 5), as properties of built benches of every source
(the sample with two seeds, the ``buildtest`` fixture and each public-dataset reader's fixture), not lists of
reviewed items:

- kind 4, claims nobody can make from one image: no false statement or wrong option names a mimic the case's
  image cannot rule out (one its source does not declare discriminable) or a vocabulary relative of a true
  finding; a differential offers only diagnoses the source declares the image tells apart; no severity item
  without a clinical grade carried by the source;
- kind 5, keys and words a radiologist would not sign: no location that is a tissue class or an atlas
  abbreviation, no side on a midline structure; an extra-axial mass touches the brain surface; no report
  template says a phrase twice or "the lesion" of several; no intensity word outside its modality; an option
  set of an ordinal scale in its order.

The wording of anatomical labels (:func:`medr2.vocab.anatomy_words`, :func:`medr2.vocab.anatomical_location`) is
tested over the space of atlas spellings with hypothesis.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from medr2 import Bench, Case, Item, vocab as clinical
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.images import load_image
from medr2.records import letter_index
from medr2.sources.common import ANATOMICAL_KINDS, located, structure_words
from medr2.tasks import vocab
from tests.test_answerability import READERS, _reader_bench

# atlas spellings a radiologist does not sign (AAL's abbreviated words); "mid" is left out: "left mid zone" is
# the chest radiograph's own word
ATLAS_TOKENS = frozenset({"sup", "inf", "orb", "oper", "tri", "supp", "ant", "post", "med", "cerebelum",
                          "cingulum", "crus1", "crus2", "7b"})
ATLAS_NUMBERED = re.compile(r"\b(vermis|cerebelum|cerebellum)\s+\d", re.IGNORECASE)
STOP = frozenset({"the", "of", "in", "a", "an", "is", "are", "and", "with", "on", "by", "there", "to", "at", "no",
                  "mm", "image", "lesion", "lesions"})
# intensity words of one modality family (the task vocabulary's own per-modality lists, and MRI's "signal")
MODALITY_WORDS: dict[str, frozenset[str]] = {
    mod: frozenset(w.lower() for w in words if " " not in w)
    for mod, words in vocab.BUILTIN_BY_MODALITY["intensity"].items()}
MODALITY_WORDS["mr"] = MODALITY_WORDS["mr"] | {"signal"}


@pytest.fixture(scope="module", params=["sample-7", "sample-11", "buildtest", *READERS])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          build_sample: Callable[..., Path]) -> Bench:
    tmp = tmp_path_factory.mktemp(request.param.replace("-", "_"))
    if request.param.startswith("sample"):  # (build_sample skips the test where the sample is not available)
        build_bench("sample", tmp / "bench", seed=int(request.param.split("-")[1]), n_cases=80, workers=1)
        return load_bench(tmp / "bench")
    if request.param == "buildtest":
        build_bench("buildtest", tmp / "bench", seed=3, n_cases=30, workers=1)
        return load_bench(tmp / "bench")
    return load_bench(_reader_bench(tmp, request.param))


def _clean(bench: Bench) -> list[Item]:
    return [it for it in bench.items if it.variant == "clean"]


def _right_wrong(it: Item) -> tuple[list[str], list[str]]:
    right = {it.options[letter_index(x)] for x in it.answer.split(",")} if it.answer else set()
    return sorted(right), [o for o in it.options if o not in right]


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:-[a-z0-9]+)*", text.lower())


# --------------------------------------------------------------------------- kind 4

def _compatible(case: Case) -> list[str]:
    """What the image cannot rule out, read from the case: its findings, diagnosis, and every mimic the source
    does not declare discriminable."""
    told = case.meta.get("discriminable") or []
    told_keys = {vocab.norm(d) for d in (told.split(";") if isinstance(told, str) else told)}
    out = [f.label for f in case.findings]
    if case.diagnosis and not vocab.is_normal(case.diagnosis):
        out.append(case.diagnosis)
    return out + [m for m in case.mimics if vocab.norm(m) not in told_keys]


def test_no_false_statement_names_what_the_image_cannot_rule_out(built: Bench) -> None:
    checked = 0
    for it in _clean(built):
        case = built.case(it.case_id)
        compatible = _compatible(case)
        if it.form in ("mcq", "multi") and it.options:
            _, wrong = _right_wrong(it)
            for o in wrong:
                hit = [c for c in compatible if vocab.conflicts(o, c)]
                assert not hit, (it.task, it.question, it.options, it.answer, o, hit)
                checked += 1
        asserted = re.search(r"diagnosis of (.+?)(?: consistent with .*)?\?$", it.question)
        if it.form == "yesno" and it.answer == "no" and asserted:
            d = asserted.group(1)
            right = [c for c in compatible if vocab.conflicts(d, c)]
            assert not right, (it.task, it.question, right)
    assert checked  # every bench has choice items


def test_differential_offers_only_what_the_source_tells_apart(built: Bench) -> None:
    for it in _clean(built):
        if it.task != "s4.differential":
            continue
        case = built.case(it.case_id)
        told = {vocab.norm(d) for d in case.meta.get("discriminable") or []}
        right, wrong = _right_wrong(it)
        assert wrong and all(vocab.norm(o) in told for o in wrong), (it.options, told)


def test_no_severity_without_a_clinical_grade(built: Bench) -> None:
    severity = {vocab.norm(s) for s in vocab.SEVERITY_ORDER}
    for it in _clean(built):
        right, _ = _right_wrong(it) if it.options else ([it.answer], [])
        if it.options and all(vocab.norm(o) in severity for o in it.options):
            assert built.case(it.case_id).meta.get("severity_graded") is True, (it.task, it.options)
    for case in built.cases:
        if "report" in case.synthetic_fields and case.report:
            assert not re.search(r"\((mild|moderate|severe)\)", case.report), case.report


# --------------------------------------------------------------------------- kind 5

def _atlas_words(text: str) -> list[str]:
    return [w for w in re.split(r"[\s,;:()_]+", text.lower()) if w in ATLAS_TOKENS] + \
        ATLAS_NUMBERED.findall(text)


def _location_items(bench: Bench) -> list[Item]:
    return [it for it in _clean(bench) if it.meta.get("location_kind") in ("location", "organ")]


def test_locations_are_words_a_radiologist_signs(built: Bench) -> None:
    for it in _location_items(built):
        for o in it.options:
            assert not clinical.not_a_structure(o), (it.question, it.options)
            assert not _atlas_words(o), (it.question, o)
    for case in built.cases:
        for s in case.structures:
            assert not _atlas_words(s.name), s.name
        for f in case.findings:
            loc = f.attributes.get("location")
            if isinstance(loc, str):
                assert not clinical.not_a_structure(loc) and not _atlas_words(loc), loc
                side, rest = clinical.split_side(loc)
                c = clinical.concept_of(rest, ("organ", "body_region"))
                assert side is None or c is None or "laterality" in c.attributes, loc  # no side on the vermis
    for it in _clean(built):
        for o in it.options:
            assert not _atlas_words(o), (it.task, o)


def test_structure_names_are_signed_words(built: Bench, request: pytest.FixtureRequest) -> None:
    """Every anatomical structure of every source's bench is named in the words a radiologist signs (issue 40
    kind 6): its name is its own wording through the vocabulary (no atlas abbreviation, no raw label name such as
    MSD's ``PZ``), every reader's cases worded in the one place they pass
    (:func:`medr2.sources.common.make_case`)."""
    named = 0
    for case in built.cases:
        for s in case.structures:
            assert not _atlas_words(s.name), s.name
            if s.kind in ANATOMICAL_KINDS:
                assert clinical.anatomy_words(s.name) == s.name, (case.source, s.name)
                assert len(s.name) > 2 or s.name.lower() == s.name, s.name  # no bare abbreviation (PZ, GM)
                named += 1
    if request.node.callspec.params["built"].startswith("msd-"):
        assert named  # the reader fixtures whose label maps name structures


def test_extra_axial_masses_touch_the_brain_surface(built: Bench) -> None:
    """Placement is measured from the brain surface, not the crop edge: an extra-axial mass reaches the brain's
    outside (its mask touches a pixel outside the brain)."""
    checked = 0
    for case in built.cases:
        brain = next((s for s in case.structures if s.name == "brain" and s.mask), None)
        for f in case.findings:
            if "extra-axial" not in f.label or brain is None or not brain.mask or not f.mask:
                continue
            inside = load_image(built.path(brain.mask), mode="L") > 127
            lesion = load_image(built.path(f.mask), mode="L") > 127
            depth = ndimage.distance_transform_edt(inside)  # distance to the outside of the brain
            assert float(depth[lesion].min()) <= 1.0, (case.case_id, float(depth[lesion].min()))
            checked += 1
    if built.manifest["build"]["source"] == "sample":
        assert checked  # the sample places extra-axial masses


def _template_reports(bench: Bench) -> list[Case]:
    return [c for c in bench.cases if c.report and "report" in c.synthetic_fields]


def test_report_templates_say_nothing_twice(built: Bench) -> None:
    for case in _template_reports(built):
        words = _words(case.report or "")
        grams = [g for g in zip(words, words[1:], strict=False) if not set(g) & STOP]
        doubled = {g for g in grams if grams.count(g) > 1}
        assert not doubled, (case.report, doubled)
        if len(case.findings) > 1:
            assert not re.search(r"\bthe lesion\b", case.report or "", re.IGNORECASE), case.report


def test_the_lesion_only_of_one_lesion(built: Bench) -> None:
    for it in _clean(built):
        if re.search(r"\bthe lesion\b", it.question, re.IGNORECASE):
            case = built.case(it.case_id)
            assert case.meta.get("one_lesion") is True or (
                case.meta.get("findings_complete") is True and len(case.findings) <= 1), (it.task, it.question)


def test_intensity_words_stay_in_their_modality(built: Bench) -> None:
    for it in _clean(built):
        case = built.case(it.case_id)
        own = vocab.norm(case.modality)
        foreign = set().union(*(w for m, w in MODALITY_WORDS.items() if vocab.norm(m) != own)) - \
            MODALITY_WORDS.get(own, frozenset())
        texts = [*it.options] + ([case.report] if it.task == "s4.report" and case.report
                                 and "report" in case.synthetic_fields else [])
        for t in texts:
            hit = set(_words(t)) & foreign
            assert not hit, (case.modality, it.task, t, hit)


def test_options_are_mutually_exclusive(built: Bench) -> None:
    """Issue 40 kind 3: no two options of one question, and not the two structures a question compares, stand in
    is-a or part-of relation in the clinical vocabulary (no "glioma" beside "glioblastoma", no "T1-weighted" beside
    "T1 post-contrast", no brain against its own white matter), for every task of every source."""
    checked = 0
    for it in _clean(built):
        if it.form in ("mcq", "multi") and it.options:
            assert vocab.nested_options(it.options) is None, (it.task, it.options)
            checked += 1
        x, y = it.meta.get("x"), it.meta.get("y")
        if x and y:
            assert not vocab.contains(str(x), str(y)), (it.task, x, y)
    assert checked


def test_ordinal_options_keep_their_order(built: Bench) -> None:
    for it in _clean(built):
        scale = vocab.ordinal_scale(it.options) if it.options else None
        if scale is not None:
            assert it.options == vocab.in_scale_order(list(it.options), scale), (it.task, it.options)


# --------------------------------------------------------------------------- the wording, over its input space

def _atlas_spellings() -> list[tuple[str, clinical.Concept]]:
    """Every atlas spelling the vocabulary knows for a part of the brain (a synonym with fewer words than the
    name it stands for); a tissue class ("GM") is no location (its own test below)."""
    v = clinical.vocabulary()
    brain = clinical.concept_of("brain", ("organ",))
    assert brain is not None
    out = []
    for c in v:
        if c.kind == "organ" and brain.id in v.ancestors(c.label) and not clinical.not_a_structure(c.label):
            out += [(s, c) for s in c.synonyms if len(s.split()) < len(c.label.split())]
    return out


SPELLINGS = _atlas_spellings()


@st.composite
def atlas_label(draw: st.DrawFn) -> tuple[str, str | None, clinical.Concept]:
    spelling, concept = draw(st.sampled_from(SPELLINGS))
    side = draw(st.sampled_from([None, "left", "right"]))
    form = draw(st.sampled_from(["prefix", "atlas", "upper"]))
    if side is None:
        text = spelling
    elif form == "prefix":
        text = f"{side} {spelling}"
    else:  # the atlas's own form: Frontal_Inf_Orb_L
        text = "_".join(w.capitalize() for w in spelling.split()) + "_" + side[0].upper()
    if form == "upper":
        text = text.upper()
    return text, side, concept


@settings(max_examples=300, deadline=None)
@given(atlas_label())
def test_atlas_spellings_become_signed_words(case: tuple[str, str | None, clinical.Concept]) -> None:
    text, side, concept = case
    words = clinical.anatomy_words(text)
    assert not _atlas_words(words), (text, words)
    assert concept.label in words
    if side and "laterality" in concept.attributes:
        assert words == f"{side} {concept.label}"
    else:
        assert words == concept.label, (text, words)  # no side on a midline structure (the vermis)
    assert clinical.anatomical_location(text, side) == words


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([t for c in clinical.vocabulary() if c.kind == "organ"
                        and clinical.not_a_structure(c.label) for t in c.terms]),
       st.sampled_from(["", "left ", "right ", "LEFT ", "Right "]), st.sampled_from(["", " L", " r"]),
       st.sampled_from([None, "left", "right"]))
def test_tissue_classes_are_no_location(term: str, prefix: str, suffix: str, side: str | None) -> None:
    label = f"{prefix}{term}{suffix if not prefix else ''}"
    assert clinical.anatomical_location(label, side) is None
    assert clinical.anatomical_location(label.replace(" ", "_"), side) is None


@settings(max_examples=300, deadline=None)
@given(atlas_label(), st.sampled_from(ANATOMICAL_KINDS))
def test_readers_word_atlas_structure_names(case: tuple[str, str | None, clinical.Concept], kind: str) -> None:
    """A structure a reader names with an atlas spelling (any side, case and underscore form) is worded through the
    vocabulary where every reader's cases pass (:func:`medr2.sources.common.structure_words`), and so is a finding
    location (:func:`medr2.sources.common.located`)."""
    text, _, concept = case
    words = structure_words(text, kind)
    assert not _atlas_words(words) and concept.label in words, (text, words)
    meta: dict[str, int] = {}
    want = clinical.anatomical_location(text)  # None for a tissue class ("GM"): dropped and counted
    assert located({"location": text}, meta).get("location") == want and bool(meta) == (want is None)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([t for c in clinical.vocabulary() if c.kind == "organ"
                        and clinical.not_a_structure(c.label) for t in c.terms]),
       st.sampled_from(["", "left ", "Right "]))
def test_readers_drop_tissue_class_locations(term: str, prefix: str) -> None:
    """A reader's finding location that is a tissue class is no location: dropped and counted, never kept."""
    meta: dict[str, int] = {}
    out = located({"location": f"{prefix}{term}", "shape": "round"}, meta)
    assert "location" not in out and out["shape"] == "round" and meta["locations_dropped"] == 1


def test_every_aal_label_of_the_installed_atlas_is_worded() -> None:
    from medr2.sources.sample import bg_brain

    d = bg_brain.mricron_available()
    if d is None:
        pytest.skip("mricron-data (the AAL atlas) is not installed")
    names = bg_brain.aal_names(Path(d) / "aal.nii.txt")
    worded = {raw: bg_brain.aal_display_name(raw) for raw in names.values()}
    assert all(not _atlas_words(w) for w in worded.values()), {r: w for r, w in worded.items() if _atlas_words(w)}
    assert len(set(worded.values())) == len(worded)  # no two regions read the same
    assert all(w.startswith(("left ", "right ")) or "vermi" in w for w in worded.values())


_SIDED = sorted(c.label for c in clinical.vocabulary()
                if c.kind == "organ" and "laterality" in c.attributes and c.label.isascii())


@settings(max_examples=60, deadline=None)
@given(label=st.sampled_from(_SIDED), side=st.sampled_from(["Left", "Right", "left", "RIGHT"]),
       form=st.sampled_from(["hyphen", "underscore-suffix", "words"]))
def test_an_atlas_spelling_of_a_sided_structure_names_its_concept(label: str, side: str, form: str) -> None:
    """Every sided organ of the vocabulary, spelt as atlases spell it (FreeSurfer's ``Left-Cerebral-Hemisphere``,
    AAL's ``Frontal_Inf_L``, or words), is that anatomy concept with that side: no reader's structure is taken
    for a non-anatomical mask because of its spelling, and a sided label that names no structure (a compartment
    such as the extra-axial space, a tissue class) is no structure in any spelling either."""
    words = label.split()
    spelt = {"hyphen": side + "-" + "-".join(w.capitalize() for w in words),
             "underscore-suffix": "_".join(w.capitalize() for w in words) + "_" + side[0].upper(),
             "words": f"{side} {label}"}[form]
    got_side, _ = clinical.split_side(spelt)
    assert got_side == side.lower(), (spelt, got_side)
    if clinical.not_a_structure(label):  # a tissue class or a compartment stays one, however it is spelt
        assert clinical.not_a_structure(spelt) and clinical.anatomy_concept(spelt) is None, spelt
        return
    concept = clinical.anatomy_concept(spelt)
    assert concept is not None, (spelt, got_side, concept)
    assert concept.id == clinical.anatomy_concept(label).id, spelt  # type: ignore[union-attr]
