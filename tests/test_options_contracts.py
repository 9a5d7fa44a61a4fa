"""Issue 40's kinds 1-5 as properties (the review of 2026-12-07, docs/reviews/review-2026-12-07.md): options that
contain each other (finding labels whose is-a the vocabulary must carry, sequences, oblique planes, outlined region
masks), "the <finding>" only where it names one lesion, no question on what a non-diagnostic image cannot show,
stage-4 claims from clinical knowledge (not the rendering) and a report reference that states only what the
stage-4 clauses back, and a report prompt that says its instruction once. Each is checked over built benches of
the sample (and of ``buildtest`` and the reader fixtures where the kind applies) or over every task of the
registry, never over a list of reviewed items."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from medr2 import Bench, Case, Item, vocab as clinical
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.records import letter_index
from medr2.tasks import TASKS, vocab
from medr2.tasks.contract import normality_known, one_lesion, one_per_label, readable, unmet
from medr2.vocab.differential import compatible_mimics
from tests import build_fixtures  # noqa: F401  (registers the "buildtest" source)

# the tasks that ask about the acquisition or the image's quality itself: answerable on a non-diagnostic image
# the acquisition questions a non-diagnostic image still answers (a sequence, window or phase is read from the
# image's contrast, which a reject grade has lost: s1.sequence and s1.which_sequence declare `readable`)
ACQUISITION = frozenset({"s1.modality", "s1.plane", "s1.region", "s1.quality", "s1.artefact"})


@pytest.fixture(scope="module", params=["sample-4", "sample-9", "buildtest"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Bench:
    tmp = tmp_path_factory.mktemp(request.param.replace("-", "_"))
    if request.param == "buildtest":
        build_bench("buildtest", tmp / "bench", seed=3, n_cases=30, workers=1)
    else:
        try:
            build_bench("sample", tmp / "bench", seed=int(request.param.split("-")[1]), n_cases=60, workers=1)
        except Exception as e:  # noqa: BLE001  (the sample's optional backgrounds)
            pytest.skip(f"sample source not available: {e}")
    return load_bench(tmp / "bench")


def _clean(bench: Bench) -> list[Item]:
    return [it for it in bench.items if it.variant == "clean"]


def _right(it: Item) -> set[str]:
    return {it.options[letter_index(x)] for x in it.answer.split(",")} if it.answer else set()


# --------------------------------------------------------------------------- kind 3a: finding labels and is-a

def test_sample_labels_are_vocabulary_concepts() -> None:
    """Every finding label, diagnosis and mimic a sample lesion class emits is a concept of the clinical vocabulary,
    and the label's ancestry says where the class is drawn: a brain class drawn inside the parenchyma (no
    compartment of its own) is an "intra-axial mass", one drawn in the extra-axial space an "extra-axial mass", so
    the one exclusivity check (``vocab.nested_options``) and the one absence rule (``contract.states_absent``) see
    the relation between a present child and its parent."""
    from medr2.sources.sample.lesions import FAMILIES

    for family, classes in FAMILIES.items():
        for cls in classes:
            for label in (cls.label, cls.diagnosis, *cls.mimics):
                assert clinical.concept_of(label) is not None, (family, label)
            if family == "brain":
                parent = "extra-axial mass" if cls.compartment == "extra-axial space" else "intra-axial mass"
                other = "intra-axial mass" if parent == "extra-axial mass" else "extra-axial mass"
                assert clinical.is_a(cls.label, parent) or vocab.same(cls.label, parent), cls.label
                assert not clinical.is_a(cls.label, other), cls.label


def test_no_wrong_finding_is_a_kind_of_a_present_one(built: Bench) -> None:
    """No option keyed wrong, and no finding a yes/no item keys absent, is a sub-type or super-type of a finding the
    case has ("intra-axial mass" is no wrong answer beside a ring lesion, nor absent from one)."""
    checked = 0
    labels = _bench_findings(built)
    for it in _clean(built):
        case = built.case(it.case_id)
        present = [f.label for f in case.findings]
        if not present:
            continue
        if it.form in ("mcq", "multi") and it.task in ("s3.finding_type", "s4.multilabel", "s3.cue_description"):
            # a description of the outlined finding's own label with one attribute changed ("round, spiculated
            # mass" of a round, well-defined mass) is wrong by that attribute, not by its finding
            outlined = {_finding_word(o, labels) for o in _right(it)} if it.task == "s3.cue_description" else set()
            for o in set(it.options) - _right(it):
                assert not any(vocab.contains(o, p) for p in present), (it.task, o, present)
                w = _finding_word(o, labels)
                if w not in outlined:
                    assert not any(vocab.contains(w, p) for p in present), (it.task, o)
            checked += 1
        if it.task == "s3.absent_finding" and it.answer == "no":
            named = [w for w in _bench_findings(built) if re.search(rf"\b{re.escape(w)}\b", it.question.lower())]
            assert not any(vocab.contains(w, p) for w in named for p in present), (it.question, present)
            checked += 1
    assert checked


def _bench_findings(bench: Bench) -> set[str]:
    return {f.label.lower() for c in bench.cases for f in c.findings}


def _finding_word(option: str, labels: set[str]) -> str:
    """The finding label a descriptor option names ("round, well-defined, hypointense ring lesion": ring lesion): the
    longest finding label of the bench its noun phrase ends with ("spiculated mass" of a bench whose only label is
    "mass": the attribute "spiculated" and the label "mass"), else the phrase itself."""
    phrase = option.split(", ")[-1].split(" with ")[0].lower()
    hits = [lab for lab in labels if phrase == lab or phrase.endswith(f" {lab}")]
    return max(hits, key=len) if hits else phrase


# --------------------------------------------------------------------------- kind 3b, 3c: sequences and planes

def test_sequences_and_planes_are_concepts(built: Bench) -> None:
    """Every sequence and plane of a built case is a vocabulary concept (so a sub-type is never offered beside its
    parent: "T1-weighted fat-saturated" beside "T1-weighted")."""
    for case in built.cases:
        for kind, value in (("sequence", case.sequence), ("plane", case.plane)):
            if value:
                assert clinical.concept_of(value, [kind]) is not None, (kind, value)


@settings(max_examples=60, deadline=None)
@given(axis=st.integers(0, 2), tilt=st.floats(0.0, 44.0), turn=st.floats(0.0, 6.283))
def test_oblique_plane_from_the_orientation_tag(axis: int, tilt: float, turn: float) -> None:
    """A slice tilted from a patient axis by more than ``OBLIQUE_DEGREES`` is "oblique", never the axis plane (a
    shoulder MR 35 degrees off sagittal is not keyed "sagittal" beside "oblique"); within it, the axis plane."""
    from medr2.sources.dicom import AXIS_PLANES, OBLIQUE_DEGREES, plane_from_orientation

    t, a = np.radians(tilt), float(turn)
    normal = np.zeros(3)
    normal[axis] = np.cos(t)
    others = [i for i in range(3) if i != axis]
    normal[others[0]], normal[others[1]] = np.sin(t) * np.cos(a), np.sin(t) * np.sin(a)
    row = np.cross(normal, [1.0, 0.0, 0.0] if axis != 0 else [0.0, 1.0, 0.0])
    row /= np.linalg.norm(row)
    col = np.cross(normal, row)
    plane = plane_from_orientation([*row, *col])
    if tilt > OBLIQUE_DEGREES + 0.01:
        assert plane == "oblique", (tilt, plane)
    elif tilt < OBLIQUE_DEGREES - 0.01:
        assert plane == AXIS_PLANES[axis], (tilt, plane)


# --------------------------------------------------------------------------- kind 3d: an outline containing options

def test_no_region_mask_is_outlined(built: Bench) -> None:
    """The outlined structure of ``s2.cued_structure`` is an organ, never a region mask (a body, field or
    compartment threshold that encloses the structures the other options name), and no other option names a
    structure of the case that lies inside the outline."""
    for it in _clean(built):
        if it.task != "s2.cued_structure":
            continue
        case = built.case(it.case_id)
        key = it.options[letter_index(it.answer)]
        named = [s for s in case.structures if vocab.same(s.name, key)]
        assert named and all(s.kind != "region" for s in named), (key, [s.kind for s in named])
        x1, y1, x2, y2 = named[0].box
        for o in set(it.options) - {key}:
            for s in case.structures:
                if vocab.same(s.name, o):
                    sx1, sy1, sx2, sy2 = s.box
                    assert not (x1 <= sx1 and y1 <= sy1 and sx2 <= x2 and sy2 <= y2), (key, o)


# --------------------------------------------------------------------------- kind 1: "the <finding>"

_THE = re.compile(r"\b(?:the|this) \{(?:f|x)\}|\{the_lesion\}|\{this_lesion\}|"
                  r"\bthe (?:lesion|nodule|finding|mass|abnormality)\b(?! inside the marked)", re.IGNORECASE)


def _names_the_finding(spec_id: str) -> bool:
    spec = TASKS[spec_id]
    return spec.stage >= 3 and any(_THE.search(t.text) for t in spec.templates)


_FLAG = st.sampled_from([True, False, None])


@settings(max_examples=80, deadline=None)
@given(complete=_FLAG, one=_FLAG, n=st.integers(0, 3), quality=st.sampled_from([None, "good", "usable", "reject"]),
       synthetic=st.booleans(), extra=st.dictionaries(st.sampled_from(
           ["lateralising", "structures_complete", "severity_graded", "instances_complete"]), st.booleans()))
def test_the_finding_only_where_it_is_the_one(complete: bool | None, one: bool | None, n: int, quality: str | None,
                                               synthetic: bool, extra: dict[str, bool]) -> None:
    """Every task whose template names "the <finding>" (the lesion, the nodule, "the {f}") has, by its contract, a
    case whose named finding is the image's only one of its label: wherever its clauses hold, ``one_per_label``
    holds (complete finding labels, a one-lesion source, or a source that labels every instance of each label it
    gives); "the lesion" itself and the image's diagnosis need ``one_lesion``. Every such task is enumerated from
    the registry's templates; and every task that reads the image's content declares ``readable`` (all but the
    acquisition and quality questions)."""
    from medr2.records import Finding

    meta: dict[str, object] = dict(extra)
    if complete is not None:
        meta["findings_complete"] = complete
    if one is not None:
        meta["one_lesion"] = one
    findings = [Finding(label="ring lesion", box=(1, 1, 3, 3)) for _ in range(n)]
    case = Case(case_id="c", image="images/c.png", image_sha256="0", width=8, height=8, modality="MRI",
                source="s", license="l", patient_id="p", findings=findings, quality=quality, meta=meta,
                diagnosis="brain abscess" if n else "no abnormality",
                synthetic_fields=["report"] if synthetic else [], report="Findings: x. Impression: y.")
    named = [s for s in TASKS if _names_the_finding(s)]
    assert {"s3.lesion_box", "s3.location", "s3.size", "s3.attribute", "s4.malignancy", "s3.change"} <= set(named)
    for spec in TASKS.values():
        assert ("readable" in spec.requires) == (spec.id not in ACQUISITION), spec.id
        if unmet(spec.requires, case) is not None:
            continue
        if spec.id in named:
            assert one_per_label(case), spec.id
        if spec.id in named and any(re.search(r"\{th(?:e|is)_lesion\}|\bthe lesion\b", t.text) for t in spec.templates):
            assert one_lesion(case), spec.id
        assert spec.id in ACQUISITION or readable(case), spec.id
        if spec.id == "s4.report" and synthetic:
            assert one_lesion(case) and normality_known(case)


def test_the_finding_in_built_benches(built: Bench) -> None:
    """No clean item of a task that names "the <finding>" is asked of a case whose named finding is not known to be
    its only one of that label, and no item of a content task is asked of an image its source grades reject."""
    for it in _clean(built):
        case = built.case(it.case_id)
        if _names_the_finding(it.task):
            assert one_per_label(case), (it.task, it.question)
        if it.task not in ACQUISITION and it.task in TASKS:
            assert readable(case), (it.task, case.quality)


# --------------------------------------------------------------------------- kind 4: claims from clinical knowledge

def test_discriminable_is_no_mimic(built: Bench) -> None:
    """A source's mimic is clinically consistent with the image however the sample renders it: the sample never
    declares one (nor a vocabulary relative of one) discriminable, so no false statement or wrong differential
    option names it."""
    for case in built.cases:
        told = case.meta.get("discriminable")
        if not isinstance(told, list) or case.source != "sample":
            continue
        assert not [d for d in told for m in case.mimics if clinical.conflicts(str(d), m)], (case.diagnosis, told)
    for it in _clean(built):  # a mimic the source declares told apart (buildtest's) may be a false statement
        case = built.case(it.case_id)
        if it.task == "s4.evidence_support" and it.answer == "no":
            assert not any(re.search(rf"\b{re.escape(m.lower())}\b", it.question.lower())
                           for m in compatible_mimics(case)), (it.question, case.mimics)


def test_report_reference_only_where_the_stage_4_clauses_hold(built: Bench) -> None:
    """A reference report composed from the labels (``"report"`` in ``synthetic_fields``) is asked only where the
    clauses of what it states hold: the diagnosis of the image's only lesion, a normal state that is known."""
    for it in _clean(built):
        if it.task == "s4.report":
            case = built.case(it.case_id)
            if "report" in case.synthetic_fields:
                assert one_lesion(case) and normality_known(case), case.case_id


# --------------------------------------------------------------------------- kind 5 (wording): said once

_STOP = frozenset({"the", "a", "an", "of", "for", "this", "and", "in", "is", "to", "with", "or", "your", "you"})


def _content_bigrams(text: str) -> list[tuple[str, str]]:
    words = [w for w in re.findall(r"[a-z]+", text.lower()) if w not in _STOP]
    return list(zip(words, words[1:], strict=False))


_IMPERATIVE = frozenset({"write", "describe", "report", "give", "provide", "list", "answer"})


@pytest.mark.parametrize("task_id", sorted(s.id for s in TASKS.values() if s.form == "text"))
def test_text_prompt_says_its_instruction_once(task_id: str) -> None:
    """The prompt of every text-form task (each template followed by the form's instruction, as
    ``medr2.run.prompts.question_text`` renders it) repeats no content word pair and gives one imperative sentence:
    what to write is said once."""
    from medr2.run.prompts import SHORT_ANSWER_INSTRUCTION, TEXT_INSTRUCTIONS

    instruction = TEXT_INSTRUCTIONS.get(task_id, SHORT_ANSWER_INSTRUCTION)
    for t in TASKS[task_id].templates:
        grams = _content_bigrams(f"{t.text}\n{instruction}")
        assert len(grams) == len(set(grams)), (t.text, instruction)
        sentences = [x.split() for x in re.split(r"[.?!:\n]", f"{t.text}\n{instruction}".lower()) if x.split()]
        assert sum(1 for x in sentences if x[0] in _IMPERATIVE) <= 1, (t.text, instruction)


def test_report_prompt_rendered_once(built: Bench) -> None:
    """The rendered user turn of every clean s4.report item states what to write once."""
    from medr2 import BoxConvention
    from medr2.run.prompts import question_text

    for it in _clean(built):
        if it.task == "s4.report":
            grams = _content_bigrams(question_text(it, BoxConvention()))
            assert len(grams) == len(set(grams)), it.question
