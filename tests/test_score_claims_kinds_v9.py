"""The kinds of false contradiction the eighth held-out set showed (issue 39, claims-v9), each checked by a
generator over the clinical vocabulary or a small grammar, so a fix that only matched the reported sentences would
fail: a side comparison that grades a "bilateral" ("bilateral effusions, left greater than right"); a checklist box
left unticked ("- [ ] Mass"); a side said right after another mention ("a pleural effusion on the right", "the
heart is on the left"); a table cell of a row that names another finding ("| Hydrocephalus | bilateral |"); a denial
said of one side only ("no right-sided nodules" of left nodules); a focal-lesion word said in the organ of the
case's focal finding ("肝右叶见一低回声结节" of a liver cyst)."""

from __future__ import annotations

from hypothesis import assume, given, settings, strategies as st

from medr2 import vocab as V
from medr2.scoring.claims import Claim, check_text, relation
from medr2.vocab.context import GENERIC
from tests.test_score_claims_kinds_v7 import _HALLUCINATED, NORMAL, _at, _of

SETTINGS = settings(deadline=None, max_examples=60)
SIDES = ["left", "right"]


def _other(side: str) -> str:
    return "left" if side == "right" else "right"


def _effusion(side: str, complete: bool = True) -> dict[str, object]:
    return {"meta": {"findings_complete": complete}, "modality": "X-ray", "plane": "PA", "body_region": "chest",
            "structures": ["heart", "lung"], "severity": "moderate",
            "findings": [{"label": "pleural effusion", "attributes": {"laterality": side}}]}


def _nodules(side: str, complete: bool = True, n: int = 1) -> dict[str, object]:
    return {"meta": {"findings_complete": complete}, "modality": "CT", "plane": "axial", "body_region": "chest",
            "structures": ["lung"], "absent": [],
            "findings": [{"label": "nodule", "attributes": {"laterality": side}}] * n}


def _findings(claims: list[Claim]) -> list[Claim]:
    return [c for c in claims if c.kind in ("finding", "diagnosis")]


# ---------------------------------------------------------------------------------------------- graded sides
_MORE = ["greater than", "more than", "larger than", "worse than", ">"]
_LESS = ["smaller than", "less than", "<"]
_GRADED = ["Bilateral pleural effusions, {a} {c} {b}.", "There are bilateral effusions ({a} {c} {b}).",
           "Pleural effusions on both sides, {a} {c} {b}."]


@SETTINGS
@given(st.sampled_from(SIDES), st.sampled_from(_MORE + _LESS), st.sampled_from(_GRADED), st.sampled_from(SIDES))
def test_a_comparison_grading_bilateral_names_the_larger_side_only(a: str, comparison: str, form: str,
                                                                    truth: str) -> None:
    """"Bilateral X, A greater than B": the "bilateral" is the claim of both sides (contradicted of a one-sided
    finding on a complete list); the pair only says which side is the larger, a claim of that side alone."""
    b = _other(a)
    text = form.format(a=a, b=b, c=comparison)
    got = _of(check_text(text, _effusion(truth)), "laterality")
    larger = a if comparison in _MORE else b
    both = [c for c in got if c.value == "bilateral"]
    assert both and all(c.verdict == "contradicted" for c in both), (text, got)
    one = [c for c in got if c.value != "bilateral"]
    assert [(c.text, c.value) for c in one] == [(larger, larger)], (text, got)
    assert one[0].verdict == ("supported" if larger == truth else "contradicted"), (text, got)


@SETTINGS
@given(st.sampled_from(SIDES), st.sampled_from(["The {a} base is whiter than the {b}, likely effusion.",
                                                "{A} more than {b}, consistent with pleural effusion."]))
def test_a_comparison_without_bilateral_still_says_both_sides(a: str, form: str) -> None:
    text = form.format(a=a, A=a.capitalize(), b=_other(a))
    got = _of(check_text(text, _effusion("left")), "laterality")
    assert len(got) == 2 and all(c.value == "bilateral" and c.verdict == "contradicted" for c in got), (text, got)


# ---------------------------------------------------------------------------------------------- checklists
_UNTICKED = ["- [ ] {x}", "* [ ] {x}", "[ ] {x}", "☐ {x}", "  - [ ] {X}"]
_TICKED = ["- [x] {x}", "* [X] {x}", "☑ {x}"]


@SETTINGS
@given(st.sampled_from(_HALLUCINATED), st.sampled_from(_UNTICKED))
def test_an_unticked_checklist_box_denies_its_item(x: str, form: str) -> None:
    """A box left unticked says its item is not there: a denial (supported of a normal case), never an assertion."""
    line = form.format(x=x, X=x.capitalize())
    text = f"**Checklist**\n- [x] Modality: X-ray\n{line}\n- [x] Normal\n"
    said = _findings(_at(check_text(text, NORMAL), text, line.strip()[-len(x):]))
    assert said and all(c.denied and c.verdict != "contradicted" for c in said), (text, said)


@SETTINGS
@given(st.sampled_from(_UNTICKED), st.sampled_from(_TICKED))
def test_ticked_boxes_assert_and_an_unticked_finding_of_the_case_is_missed(unticked: str, ticked: str) -> None:
    text = f"{ticked.format(x='pneumothorax')}\n{unticked.format(x='pleural effusion', X='Pleural effusion')}\n"
    got = _findings(check_text(text, _effusion("left")))
    assert [(c.value, c.verdict, c.note) for c in got] == [
        ("pneumothorax", "contradicted", "hallucinated_finding"),
        ("pleural effusion", "contradicted", "missed_finding")], (text, got)


# ---------------------------------------------------------------------------------------------- sides said after
_UNDECIDED = ["pleural effusion", "pneumothorax", "consolidation", "mass", "atelectasis"]
_AFTER = ["The CT shows a small nodule in the {s} lower lung and a {x} on the {o}.",
          "A {s} lower lobe nodule is seen, and a {x} is present on the {o}.",
          "There is a nodule in the {s} lung; also a {x} seen on the {o}."]


@SETTINGS
@given(st.sampled_from(SIDES), st.sampled_from(_UNDECIDED), st.sampled_from(_AFTER))
def test_a_side_said_after_another_finding_is_that_findings(side: str, x: str, form: str) -> None:
    """"A left nodule and a pleural effusion on the right" of a left-nodule case whose list is incomplete: "right"
    is the effusion's (undecidable there), not a wrong side of the nodule."""
    text = form.format(s=side, o=_other(side), x=x)
    got = _of(check_text(text, _nodules(side, complete=False)), "laterality")
    assert [(c.value, c.verdict) for c in got] == [(side, "supported")], (text, got)


@SETTINGS
@given(st.sampled_from(SIDES), st.sampled_from(["heart", "aortic arch", "stomach bubble"]))
def test_a_side_said_of_anatomy_with_a_verb_is_the_anatomys(side: str, anatomy: str) -> None:
    text = (f"Where's the opacity... the {anatomy} is on the {_other(side)} and the effusion is on the opposite "
            f"side, so {side}.")
    got = _of(check_text(text, _effusion(side)), "laterality")
    heart = text.index(f"on the {_other(side)}") + len("on the ")
    assert anatomy != "heart" or all(c.start != heart for c in got), (text, got)
    assert any(c.value == side and c.verdict == "supported" for c in got), (text, got)


@SETTINGS
@given(st.sampled_from(SIDES), st.sampled_from(["A nodule on the {o}.", "The nodule is on the {o}.",
                                                "A nodule is seen in the {o} lung."]))
def test_a_side_said_of_the_finding_itself_is_still_decided(side: str, form: str) -> None:
    text = form.format(o=_other(side))
    got = _of(check_text(text, _nodules(side)), "laterality")
    assert [c.verdict for c in got] == ["contradicted"], (text, got)


# ---------------------------------------------------------------------------------------------- table rows
@SETTINGS
@given(st.sampled_from(_HALLUCINATED), st.sampled_from(["left", "right", "bilateral"]), st.sampled_from(SIDES))
def test_a_table_cell_is_said_of_the_finding_its_row_names(x: str, said: str, truth: str) -> None:
    """Under "| Finding | Side |" the side of a hallucinated finding's row is no side of the case's finding; the
    row of the case's finding is decided as before (a generic word, "tumour", is any finding of the case)."""
    concept = V.concept_of(x, ("finding", "diagnosis"))
    assume(concept is not None and concept.id not in GENERIC
           and relation(x, "pleural effusion") not in ("same", "parent", "child"))  # "opacity" is the effusion
    text = f"| Finding | Side |\n|---|---|\n| Pleural effusion | {truth} |\n| {x.capitalize()} | {said} |\n"
    got = _of(check_text(text, _effusion(truth)), "laterality")
    assert [(c.value, c.verdict) for c in got] == [(truth, "supported")], (text, got)
    wrong = text.replace(f"| Pleural effusion | {truth} |", f"| Pleural effusion | {_other(truth)} |")
    assert [c.verdict for c in _of(check_text(wrong, _effusion(truth)), "laterality")] == ["contradicted"], wrong


# ---------------------------------------------------------------------------------------------- one-sided denials
_DENIALS = ["No {o}-sided nodules.", "No nodules on the {o}.", "No {o} lung nodule is seen.",
            "There is no nodule in the {o} lung.", "The {o} lung shows no nodules."]


@SETTINGS
@given(st.sampled_from(SIDES), st.sampled_from(_DENIALS), st.booleans(), st.sampled_from([1, 2]))
def test_a_denial_of_the_other_side_is_no_missed_finding(side: str, form: str, complete: bool, n: int) -> None:
    """"No right-sided nodules" of a case whose nodules are all on the left denies nothing it has: supported on a
    complete list, undecided on an incomplete one; the same denial of the finding's own side is missed evidence."""
    text = form.format(o=_other(side))
    got = _findings(check_text(text, _nodules(side, complete, n)))
    assert got and all(c.denied and c.verdict == ("supported" if complete else "unverifiable") for c in got), (
        text, got)
    own = form.format(o=side)
    got = _findings(check_text(own, _nodules(side, complete, n)))
    assert got and all(c.verdict == "contradicted" and c.note == "missed_finding" for c in got), (own, got)


def test_a_plain_denial_of_a_bilateral_finding_is_still_missed() -> None:
    for text in ("No right-sided nodules.", "No nodules."):
        got = _findings(check_text(text, _nodules("bilateral")))
        assert got and all(c.note == "missed_finding" for c in got), (text, got)


# ---------------------------------------------------------------------------------------------- focal-lesion words
def _focal_words() -> list[str]:
    """Every spelling of the vocabulary's focal-lesion concepts (nodule/mass and its sub-types) that names no
    descriptor of its own."""
    return sorted({t for c in V.vocabulary() if c.kind == "finding" and relation(c.label, "nodule/mass") in (
        "same", "child") for t in c.terms if t in ("nodule", "mass", "结节", "肿块", "占位", "nodules")
        or c.label in ("nodule", "mass")})


_CYST = {"meta": {"findings_complete": True}, "modality": "ultrasound", "body_region": "abdomen",
         "structures": ["liver"], "diagnosis": None,
         "findings": [{"label": "cyst", "attributes": {"intensity": "anechoic", "size_mm": 25}}]}
_NORMAL_ABDOMEN = {**_CYST, "findings": [], "diagnosis": "normal"}
_IN_ORGAN = ["The ultrasound shows a {d} {w} in the liver.", "A {d} {w} is seen in the right lobe of the liver.",
             "腹部超声：肝右叶见一{d}{w}，边界清。", "肝内见{d}{w}。", "Liver: a {d} {w}, 25 mm."]


_DESCRIPTORS = ["hypoechoic", "solid", "低回声", "实性"]


@SETTINGS
@given(st.sampled_from(_focal_words()), st.sampled_from(_IN_ORGAN), st.sampled_from(_DESCRIPTORS))
def test_a_focal_lesion_word_in_the_organ_of_the_case_lesion_names_it(word: str, form: str, descriptor: str) -> None:
    """"肝右叶见一低回声结节" of a liver cyst: the nodule is the cyst, misdescribed; the descriptor is contradicted,
    the lesion word is not a hallucinated finding. Of a normal abdomen the same sentence stays a hallucination."""
    english = form.isascii()
    assume(word.isascii() == english and descriptor.isascii() == english)
    text = form.format(d=descriptor, w=word)
    got = check_text(text, _CYST)
    said = _findings(_at(got, text, word))
    assert said and all(c.verdict == "supported" for c in said), (text, got)
    wrong = [c for c in _at(got, text, descriptor) if c.kind == "attribute"]
    assert wrong and all(c.verdict == "contradicted" for c in wrong), (text, got)
    normal = _findings(_at(check_text(text, _NORMAL_ABDOMEN), text, word))
    assert normal and all(c.verdict == "contradicted" for c in normal), (text, normal)


@SETTINGS
@given(st.sampled_from(_focal_words()))
def test_a_focal_lesion_word_in_another_organ_is_still_the_finding_it_names(word: str) -> None:
    text = f"There is a {word} in the right lung."
    got = _findings(check_text(text, _CYST))
    assert got and all(c.verdict != "supported" for c in got), (text, got)


# ---------------------------------------------------------------------------------------------- misses
_WRIST = {"meta": {"findings_complete": True}, "modality": "X-ray", "plane": "lateral", "body_region": "upper limb",
          "structures": [], "findings": [{"label": "fracture", "attributes": {"laterality": "left"}}]}
_SHOWS = ["This radiograph shows the {r}.", "The X-ray image shows the {r} of an adult.", "The film depicts a {r}.",
          "The image demonstrates the {r}: a fracture."]


@SETTINGS
@given(st.sampled_from(["knee", "ankle", "foot", "head", "abdomen"]), st.sampled_from(_SHOWS))
def test_the_region_an_image_is_said_to_show_is_a_region_claim(region: str, form: str) -> None:
    """"This radiograph shows the ankle" of a wrist radiograph: a region claim, decided as a region named
    beside an imaging word (contradicted where it shares nothing with the imaged region)."""
    text = form.format(r=region)
    got = _of(check_text(text, _WRIST), "body_region")
    assert [(c.text, c.verdict) for c in got] == [(region, "contradicted")], (text, got)
    own = form.format(r="wrist")
    assert [c.verdict for c in _of(check_text(own, _WRIST), "body_region")] == ["supported"], own


@SETTINGS
@given(st.sampled_from(["", "macular ", "chest ", "brain ", "abdominal "]),
       st.sampled_from(["OCT", "CT", "MRI", "study", "radiograph", "ultrasound"]),
       st.sampled_from(["**Impression:** Normal {a}{m}.", "Overall a normal {a}{m}.", "诊断：normal {a}{m}"]))
def test_normal_said_of_a_study_of_any_kind_is_a_normal_study_claim(adjective: str, modality: str,
                                                                     form: str) -> None:
    text = form.format(a=adjective, m=modality)
    got = [c for c in check_text(text, _effusion("left")) if c.value == "normal"]
    assert got and all(c.verdict == "contradicted" for c in got), (text, got)
    assert all(c.verdict == "supported" for c in check_text(text, NORMAL) if c.value == "normal"), text


_NEW_SPELLINGS = [("右肺上叶可见一厚壁空洞。", "lung cavity"), ("Bilateral upper-zone bullae.", "bulla"),
                  ("There is soft-tissue gas.", "subcutaneous emphysema"),
                  ("Several periventricular hyperintensities.", "white matter hyperintensities"),
                  ("考虑脑小血管病。", "small vessel disease"), ("伴周围结构扭曲。", "architectural distortion"),
                  ("RPE下见玻璃膜疣。", "drusen"), ("Choroidal neovascularization.", "choroidal neovascularisation"),
                  ("Central serous chorioretinopathy.", "central serous chorioretinopathy")]


def test_the_spellings_added_in_v9_are_findings_of_the_vocabulary() -> None:
    """Each is read as its concept and contradicted when asserted of a normal study with a complete list."""
    for text, concept in _NEW_SPELLINGS:
        got = _findings(check_text(text, NORMAL))
        assert [(c.value, c.verdict) for c in got] == [(concept, "contradicted")], (text, got)


# ---------------------------------------------------------------------------------------------- the study's side
def _sided_parts(region: str) -> list[str]:
    """The vocabulary's spellings of the regions with a side that are ``region`` or a part of it."""
    v = V.vocabulary()
    return sorted(t for c in v if c.kind == "body_region" and "laterality" in c.attributes
                  and (c.label == region or v.part_of(c.label, region)) for t in c.terms if t.isascii())


_IDENTITY = ["The marker says R, so this is the {s} {r}.", "This is the {s} {r}.", "A {s} {r} radiograph.",
             "Lateral view of the {s} {r}, cortical break noted."]


@SETTINGS
@given(st.sampled_from(_sided_parts("upper limb")), st.sampled_from(SIDES), st.sampled_from(SIDES),
       st.sampled_from(_IDENTITY))
def test_the_side_of_a_sided_imaged_region_is_the_side_of_the_study(region: str, said: str, truth: str,
                                                                     form: str) -> None:
    """"So this is the right wrist" of a left wrist fracture: the imaged region has a side (``@ laterality``), the
    side of its findings; a side of a region the case does not image, or of a case without sided findings, is none."""
    case = {**_WRIST, "findings": [{"label": "fracture", "attributes": {"laterality": truth}}]}
    text = form.format(s=said, r=region)
    got = _of(check_text(text, case), "laterality")
    assert [(c.value, c.verdict) for c in got] == [(said, "supported" if said == truth else "contradicted")], (
        text, got)
    knee = form.format(s=said, r="knee")
    assert _of(check_text(knee, case), "laterality") == [], knee
    assert _of(check_text(text, {**case, "findings": []}), "laterality") == [], text
    for hedged in (f"Is this the {said} {region}?", f"Possibly the {said} {region}.", f"Not the {said} {region}."):
        assert _of(check_text(hedged, case), "laterality") == [], hedged
