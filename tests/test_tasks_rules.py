"""The task rules of docs/tasks.md: true distractors never offered, balanced letters, yes/no pairs,
held-out templates, bins away from edges, every supported task generated, chance levels."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from medr2 import Bench, Case, Item, Skip
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.images import ImageStore
from medr2.records import letter_index
from medr2.tasks import TASKS, LabelPools, draft_case, vocab
from medr2.tasks.common import SIZE_EDGES_MM, size_bin
from tests.build_fixtures import Spec, make_case

ORDINAL = {"s2.count", "s3.count", "s3.size", "s4.severity"}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    out = tmp_path_factory.mktemp("t") / "bench"
    build_bench("buildtest", out, seed=3, n_cases=90, workers=1)
    return load_bench(out)


def _true_labels(case: Case, task: str) -> set[str]:
    names = {s.name for s in case.structures}
    labels = {f.label for f in case.findings}
    table: dict[str, set[str]] = {
        "s1.modality": {case.modality}, "s1.plane": {case.plane or ""}, "s1.sequence": {case.sequence or ""},
        "s1.region": {case.body_region or ""}, "s1.quality": {case.quality or ""},
        "s1.artefact": {case.artefact or ""}, "s2.organ": names, "s2.cued_structure": names,
        "s2.landmark": names, "s3.finding_type": labels, "s4.diagnosis": {case.diagnosis or ""},
        "s4.differential": {case.diagnosis or ""}, "s4.malignancy": {case.malignancy or ""},
        "s4.multilabel": labels,
    }
    return table.get(task, set())


def test_no_distractor_is_true(bench: Bench) -> None:
    checked = 0
    for it in bench.items:
        case = bench.case(it.case_id)
        true = {vocab.norm(t) for t in _true_labels(case, it.task) if t}
        if it.form == "mcq" and true:
            wrong = [o for i, o in enumerate(it.options) if i != letter_index(it.answer)]
            assert not {vocab.norm(o) for o in wrong} & true, (it.task, it.options, true)
            assert vocab.norm(it.answer_text) in true
            checked += 1
        if it.form == "multi":
            chosen = {it.options[letter_index(x)] for x in it.answer.split(",")}
            assert {vocab.norm(o) for o in chosen} == true
            assert not {vocab.norm(o) for o in set(it.options) - chosen} & true
            checked += 1
        if it.form == "mcq":
            assert len({vocab.norm(o) for o in it.options}) == len(it.options)  # no duplicate options
    assert checked > 200


def test_absent_twins_really_absent(bench: Bench) -> None:
    for it in bench.items:
        case = bench.case(it.case_id)
        if it.task == "s2.organ_presence" and it.answer == "no":
            assert not any(f"the {s.name} " in it.question for s in case.structures)
        if it.task == "s3.absent_finding" and it.answer == "no":
            assert not any(f" {f.label}" in it.question for f in case.findings)


def test_letters_balanced(bench: Bench) -> None:
    """Within one task, split and number of options (a differential offers as many as its source tells apart),
    the answer letters of unordered MCQs are balanced to within one."""
    per: dict[tuple[str, str, int], Counter[str]] = defaultdict(Counter)
    for it in bench.items:
        if it.form == "mcq" and it.task not in ORDINAL and vocab.ordinal_scale(it.options) is None:
            per[(it.task, it.split or "", len(it.options))][it.answer] += 1
    assert per
    for (task, _split, n_opts), counts in per.items():
        full = [counts.get(chr(65 + i), 0) for i in range(n_opts)]
        assert max(full) - min(full) <= 1, (task, full)


def test_yes_no_pairs_complete(bench: Bench) -> None:
    pairs: dict[str, list[Item]] = defaultdict(list)
    for it in bench.items:
        if it.form == "yesno":
            assert it.pair_id and it.chance == 0.5
            pairs[it.pair_id].append(it)
    assert pairs
    for members in pairs.values():
        assert len(members) == 2
        assert sorted(m.answer for m in members) == ["no", "yes"]
        assert len({(m.case_id, m.task, m.template_id) for m in members}) == 1
        assert members[0].question != members[1].question


def test_heldout_templates_only_in_test(bench: Bench) -> None:
    heldout = {t.id for s in TASKS.values() for t in s.templates if t.heldout}
    used_in_test = set()
    for it in bench.items:
        if it.template_id in heldout:
            assert it.split == "test", (it.template_id, it.split)
            used_in_test.add(it.template_id)
    assert used_in_test  # they do appear in test


def test_chance_levels(bench: Bench) -> None:
    for it in bench.items:
        expected = {"mcq": 1 / max(1, len(it.options)), "yesno": 0.5, "box": 0.0, "text": 0.0,
                    "multi": 1 / 2 ** len(it.options)}[it.form]
        assert it.chance == pytest.approx(expected)


def test_size_bins_away_from_edges(bench: Bench) -> None:
    sizes = [it.meta["size_mm"] for it in bench.items if it.task == "s3.size"]
    assert sizes
    for mm in sizes:
        assert all(abs(mm - e) >= max(1.0, 0.1 * e) for e in SIZE_EDGES_MM)
    with pytest.raises(Skip, match="edge"):
        size_bin(10.4)
    assert size_bin(14.0) == 2 and size_bin(2.0) == 0 and size_bin(80.0) == 5


def test_cue_items_show_drawn_cue(bench: Bench) -> None:
    from medr2.images import load_image
    from medr2.imaging.draw import cue_color_mask

    cued = [it for it in bench.items if TASKS[it.task].cue]
    assert cued
    for it in cued[:10]:
        assert it.cue is not None and it.image != bench.case(it.case_id).image
        arr = load_image(bench.path(it.image or ""))
        assert cue_color_mask(arr, tuple(it.cue.style["color"])).any()


def _outlined(case: Case, store: ImageStore) -> Case:
    """``case`` with its structures drawn on its image as masks (each a brighter block over the noise, the findings
    on top) and their outlines measured as a build measures them (``contract.measure_outlines``): buildtest's organs are
    boxes the image does not draw, so the tasks that ask an extent (``outlines_visible``) skip them."""
    from medr2.images import load_image
    from medr2.tasks.contract import measure_outlines

    arr = load_image(store.path(case.image)).copy()
    structures = []
    for k, st in enumerate(case.structures):
        x1, y1, x2, y2 = (int(v) for v in st.box)
        mask = np.zeros(arr.shape[:2], np.uint8)
        mask[y1:y2, x1:x2] = 255
        arr[y1:y2, x1:x2] = np.maximum(arr[y1:y2, x1:x2], 130 + 25 * (k % 4))
        ref = store.put_array(mask)
        structures.append(st.model_copy(update={"mask": ref.path, "area_px": float((mask > 0).sum())}))
    ref = store.put_array(arr)
    drawn = case.model_copy(update={"image": ref.path, "image_sha256": ref.sha256, "structures": structures})
    return measure_outlines(drawn, lambda rel, mode: load_image(store.path(rel), mode=mode))


def test_every_supported_task_generated(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    cases = [make_case(Spec(f"c{i}", i), store) for i in range(12)]
    pools = LabelPools.from_cases(cases)
    # an MRI case with one finding, shown unmirrored (a mirrored image does not show the patient side s3.location
    # may ask: the contract's side clause)
    full = _outlined(next(c for i, c in enumerate(cases) if i % 3 == 1 and not c.flipped), store)
    out = draft_case(full, pools, seed=0, split="test", images=store)
    # the tasks on several images need the case's companions resolved in a build (tests/test_several_images.py)
    several = {"s3.change", "s3.view_finding", "s3.two_view_finding", "s1.which_sequence"}
    assert set(out.skipped) == several, out.skipped
    assert {d.task for d in out.drafts} == set(TASKS) - several
    for c in cases:
        res = draft_case(c, pools, seed=0, split="train", images=store)
        generated = {d.task for d in res.drafts}
        assert generated.isdisjoint(res.skipped) and generated | set(res.skipped) == set(TASKS)
        assert all(isinstance(r, str) and r for r in res.skipped.values())


def test_distractors_respect_synonyms_and_levels() -> None:
    case = Case(case_id="x", image="images/x.png", image_sha256="0", width=4, height=4, modality="MRI",
                body_region="head", source="s", license="l", patient_id="p")
    pools = LabelPools.from_cases([case])
    pools.glob["modality"].update({"MR", "magnetic resonance", "CT"})
    rng = np.random.default_rng(0)
    for _ in range(20):
        got = pools.distractors("modality", case, ["MRI"], 3, rng)
        assert len(got) == 3 and not any(vocab.same(g, "MRI") for g in got)
    got = pools.distractors("modality", case, ["MRI"], 1, np.random.default_rng(1))
    assert got == ["CT"]  # the global pool is used before the built-in vocabulary
    with pytest.raises(Skip, match="too few"):
        pools.distractors("modality", case, ["MRI"], 50, rng)


def test_draft_deterministic(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    cases = [make_case(Spec(f"c{i}", i), store) for i in range(6)]
    pools = LabelPools.from_cases(cases)
    a = draft_case(cases[4], pools, seed=7, split="val", images=store)
    b = draft_case(cases[4], LabelPools.from_cases(list(reversed(cases))), seed=7, split="val", images=store)
    assert [(d.question, d.correct, d.distractors) for d in a.drafts] == \
        [(d.question, d.correct, d.distractors) for d in b.drafts]


# --------------------------------------------------------------------------- item quality (issue 14, item 16)
# Rules over built benches: the buildtest bench above, the shared sample bench (real images of many
# modalities) and a sample bench with the text variants (T1-T8 reword, prefix and suffix the questions;
# V5/V7 add the wording of a drawn or stated cue).

TEXT_VARIANTS = "T1,T2,T3,T4,T5,T6,T7,T8,V5,V7"  # V5/V7 add cue wording


@pytest.fixture(scope="module")
def text_bench(tmp_path_factory: pytest.TempPathFactory, build_sample: Callable[..., Path]) -> Bench:
    return load_bench(build_sample(tmp_path_factory.mktemp("tv") / "bench", n_cases=30, variants=TEXT_VARIANTS,
                                   workers=1))


def _shown_texts(it: Item) -> list[str]:
    """Every piece of text a model (and a clinician reviewing the item) reads."""
    out = [it.question, *it.options]
    for turn in it.context:
        out += [turn.question, *turn.options]
    return [t for t in out if t]


# a vowel letter read as a consonant sound ("a uniform", "a usable", "a one-off") and the reverse ("an hour")
_A_OK = re.compile(r"^(uni|use|usa|usu|ure|uri|uro|ute|uti|eu|one\b|once)", re.IGNORECASE)
_AN_OK = re.compile(r"^(hour|honest|honou?r|heir)", re.IGNORECASE)
_VOWEL_NAMED = "AEFHILMNORSX"  # acronyms read letter by letter: an MRI, an X-ray, a CT


def article_errors(text: str) -> list[str]:
    bad = []
    for m in re.finditer(r"\b(a|an|A|An) ([\w-]+)", text):
        art, word = m.group(1).lower(), m.group(2)
        if word.isdigit() or word[0].isdigit():
            continue
        letter_read = (len(word) >= 2 and word[:2].isupper() and word.upper() not in ("FLAIR", "STIR")) or (
            len(word) > 1 and word[1] == "-")
        if letter_read:
            want = "an" if word[0].upper() in _VOWEL_NAMED else "a"
        elif word[0].lower() in "aeiou":
            want = "a" if _A_OK.match(word) else "an"
        else:
            want = "an" if _AN_OK.match(word) else "a"
        if art != want:
            bad.append(m.group(0))
    return bad


def test_article_checker_itself() -> None:
    assert article_errors("Is there a infarct? a extra-axial mass, an CT, a MRI, a X-ray") == [
        "a infarct", "a extra-axial", "an CT", "a MRI", "a X-ray"]
    assert article_errors("an infarct, a uniform mass, an hour, a CT, an MRI, an X-ray, a FLAIR image, a 5 mm") == []
    for phrase, want in (("infarct", "an infarct"), ("uniform mass", "a uniform mass"), ("MRI", "an MRI"),
                         ("X-ray", "an X-ray"), ("CT", "a CT"), ("hour", "an hour"), ("8 mm nodule", "an 8 mm nodule"),
                         ("FLAIR image", "a FLAIR image"), ("multiple nodules", "multiple nodules"),
                         ("dot-blot haemorrhages", "dot-blot haemorrhages"), ("abscess", "an abscess"),
                         ("metastasis", "a metastasis"), ("multiple foci of increased uptake",
                                                          "multiple foci of increased uptake")):
        assert vocab.indefinite(phrase) == want
    assert vocab.plural("nucleus") == "nuclei" and vocab.plural("vertebra") == "vertebrae"
    assert vocab.plural("focus of uptake") == "foci of uptake" and vocab.plural("mass") == "masses"


def _plural_label(label: str) -> bool:  # the test's own reading: "multiple ...", or a last word in -s
    words = label.lower().split()
    last = words[-1] if words else ""
    return bool(words) and (words[0] == "multiple" or (last.endswith("s") and not last.endswith(("ss", "us", "is"))))


def _grammar_faults(bench: Bench) -> list[tuple[str, str, str]]:
    labels = {f.label for c in bench.cases for f in c.findings} | {s.name for c in bench.cases for s in c.structures}
    plural = sorted((lab for lab in labels if _plural_label(lab)), key=len, reverse=True)
    faults = []
    for it in bench.items:
        for text in _shown_texts(it):
            faults += [(it.item_id, "article", e) for e in article_errors(text)]
            for pat, what in ((r"  ", "double space"), (r"([.?!,;:])\1", "doubled punctuation"),
                              (r" [.?!,;:]", "space before punctuation"),
                              (r"\b([A-Za-z][\w-]*),? \1\b", "doubled word")):
                if re.search(pat, text, re.IGNORECASE):
                    faults.append((it.item_id, what, text))
            low = text.lower()
            for lab in plural:
                lab = lab.lower()
                for wrong in (f"a {lab}", f"an {lab}", f"is there {lab}", f"is the {lab}", f"is {lab} "):
                    if wrong in low:
                        faults.append((it.item_id, "agreement", text))
    return faults


def test_templates_grammatical(bench: Bench, sample_bench: Bench, text_bench: Bench) -> None:
    for b in (bench, sample_bench, text_bench):
        faults = _grammar_faults(b)
        assert faults == [], faults[:20]
    assert {it.variant for it in text_bench.items} >= {"clean", "T1", "T3", "T5", "T8"}


def test_count_questions_use_plurals(sample_bench: Bench, bench: Bench) -> None:
    expected = {"nucleus": "nuclei", "vertebra": "vertebrae"}
    checked = 0
    for b in (sample_bench, bench):
        for it in b.items:
            if it.task != "s2.count":
                continue
            names = {s.name for s in b.case(it.case_id).structures if s.kind == "instance"}
            for name in names & set(expected):
                if expected[name] in it.question:
                    checked += 1
                assert not re.search(rf"\b{name}s?\b", it.question), it.question
    assert checked > 0


_NEGATION = re.compile(r"\b(no|not|none|nothing|without|never|neither|nor)\b|n't\b", re.IGNORECASE)


def _asked(question: str) -> list[str]:
    """The interrogative part(s) of a yes/no question: sentences ending in "?", or the statement after
    "Answer yes or no:" (premises and suggested answers around it are statements, not the question)."""
    out = [s for s in re.split(r"(?<=[.?!])\s+", question) if s.endswith("?")]
    m = re.search(r"answer yes or no:\s*([^.]*)\.", question, re.IGNORECASE)
    if m:
        out.append(m.group(1))
    return out


def test_no_negative_yes_no_questions(bench: Bench, sample_bench: Bench, text_bench: Bench) -> None:
    """A yes to "Is there no abnormality?" can mean either: no yes/no question is asked in the negative."""
    checked = 0
    for b in (bench, sample_bench, text_bench):
        for it in b.items:
            if it.form != "yesno":
                continue
            asked = _asked(it.question)
            assert asked, it.question
            for q in asked:
                assert not _NEGATION.search(q), (it.task, it.variant, it.question)
                checked += 1
    assert checked > 100
    assert not _NEGATION.search("Is this image free of any infarct?")
    assert _NEGATION.search("Is there no abnormality at all in this image?")


def test_orientation_only_where_left_right_defined(sample_bench: Bench) -> None:
    radiology = {"CT", "MRI", "X-ray", "nuclear medicine"}
    asked = [it for it in sample_bench.items if it.task == "s1.orientation"]
    assert asked
    for it in asked:
        assert sample_bench.case(it.case_id).modality in radiology, sample_bench.case(it.case_id).modality
    # the rule is exercised: the bench has flip-flagged cases where left/right is undefined
    undefined = [c for c in sample_bench.cases if c.flipped is not None and c.modality not in radiology]
    assert undefined
    asked_cases = {it.case_id for it in asked}
    assert not asked_cases & {c.case_id for c in undefined}
    assert sample_bench.manifest["skipped"]["s1.orientation"]


def test_orientation_skipped_for_microscopy(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    cases = [make_case(Spec(f"c{i}", i), store) for i in range(6)]
    for modality in ("histopathology", "fluorescence microscopy", "fundus photography"):
        case = cases[1].model_copy(update={"modality": modality, "flipped": True})
        out = draft_case(case, LabelPools.from_cases([*cases, case]), seed=0, split="train", images=store)
        assert out.skipped.get("s1.orientation") == "no lateralising cue declared for this image"
    out = draft_case(cases[1], LabelPools.from_cases(cases), seed=0, split="train", images=store)
    assert any(d.task == "s1.orientation" for d in out.drafts)


# the pool key each MCQ task draws its distractors from (s3.attribute / s3.location: from the item's meta)
_TASK_KEY = {"s1.plane": "plane", "s1.sequence": "sequence", "s1.region": "body_region", "s2.organ": "organ",
             "s2.cued_structure": "organ", "s2.landmark": "landmark", "s3.finding_type": "finding",
             "s4.diagnosis": "diagnosis", "s4.differential": "diagnosis", "s4.multilabel": "finding"}


def _labels_of(case: Case, key: str) -> set[str]:
    if key in ("plane", "sequence", "body_region"):
        v = getattr(case, key)
        return {v} if v else set()
    if key == "organ":
        return {s.name for s in case.structures if s.kind in ("organ", "region")}
    if key == "landmark":
        return {s.name for s in case.structures if s.kind == "landmark"}
    if key == "finding":
        return {f.label for f in case.findings}
    if key == "diagnosis":
        return ({case.diagnosis} if case.diagnosis else set()) | set(case.mimics)
    return {str(f.attributes[key]) for f in case.findings if isinstance(f.attributes.get(key), str)}


def _distractor_faults(b: Bench) -> tuple[int, list[tuple[str, str, str]]]:
    """Every distractor of an anatomy-bound key is a true label of some case of the same modality and body
    region, or a built-in label of that modality family and region; of a modality-bound key (plane,
    sequence, intensity, body region), a label of some case of the same modality or a built-in one for it."""
    same_mr: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    same_m: dict[tuple[str, str], set[str]] = defaultdict(set)
    for c in b.cases:
        for key in {*_TASK_KEY.values(), "location", "intensity"}:
            same_mr[(key, c.modality, c.body_region or "")] |= _labels_of(c, key)
            same_m[(key, c.modality)] |= _labels_of(c, key)
    checked, faults = 0, []
    for it in b.items:
        if it.variant != "clean" or it.form not in ("mcq", "multi"):
            continue
        key = _TASK_KEY.get(it.task)
        if it.task == "s3.attribute" and it.meta.get("attribute") == "intensity":
            key = "intensity"
        if it.task == "s3.location" and it.meta.get("location_kind") in ("location", "organ"):
            key = it.meta["location_kind"]
        if key is None:
            continue
        case = b.case(it.case_id)
        true = {it.options[letter_index(x)] for x in it.answer.split(",")}
        if it.task == "s4.differential":
            true |= set(case.meta.get("discriminable") or [])  # what the source tells apart: its distractors
        if key in ("plane", "sequence", "intensity", "body_region"):
            allowed = same_m[(key, case.modality)] | set(vocab.builtin(key, case.modality))
        else:
            allowed = same_mr[(key, case.modality, case.body_region or "")] | set(
                vocab.builtin_for_region(key, case.modality, case.body_region))
        for o in it.options:
            if o not in true and o not in allowed:
                faults.append((it.task, f"{case.modality}|{case.body_region}", o))
        checked += 1
    return checked, faults


def test_distractors_from_same_modality_and_region(bench: Bench, sample_bench: Bench) -> None:
    for b in (bench, sample_bench):
        checked, faults = _distractor_faults(b)
        assert checked > 50 and faults == []
    # anatomy: no brain region is offered for a case of another body region (the bone scan of issue 14)
    brain = {s.name for c in sample_bench.cases if c.body_region == "head" for s in c.structures}
    for it in sample_bench.items:
        if it.task in ("s2.organ", "s2.cued_structure") and sample_bench.case(it.case_id).body_region != "head":
            assert not set(it.options) & brain, it.options


def test_region_distractor_never_contains_or_is_part_of_true_region(sample_bench: Bench) -> None:
    for it in sample_bench.items:
        if it.task == "s1.region":
            true = it.options[letter_index(it.answer)]
            for o in it.options:
                assert o == true or not vocab.region_related(o, true), (true, it.options)
    assert vocab.region_related("lower limb", "lower leg") and not vocab.region_related("chest", "lower leg")
