"""Abstentions (issue 45): declining answers are their own outcome, generated from the recogniser's grammar.

Phrasings are drawn from the grammar's parts (subject × modal × verb of determining × reason, image states,
"not visible in this image", admissions of not knowing, Chinese forms) with random casing and punctuation;
negative controls state a choice while mentioning uncertainty and must be read as that choice."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import Item
from medr2.records import UNREAD_OUTCOMES
from medr2.scoring.extract import ABSTAIN_OPTION, abstain as ab, read

OPTIONS = ["Pneumothorax", "Pleural effusion", "Consolidation", "Normal"]
FORMS_WITH_OPTIONS = [("mcq", OPTIONS), ("yesno", []), ("multi", OPTIONS), ("text", []), ("box", [])]


def _case(s: str, how: int) -> str:
    return s.lower() if how == 0 else s.upper() if how == 1 else s[:1].upper() + s[1:]


@st.composite
def modal_phrase(draw: st.DrawFn) -> str:
    subject = draw(st.sampled_from(("", *ab.SUBJECTS)))
    modal = draw(st.sampled_from(ab.MODALS))
    passive = draw(st.booleans())
    verb = "be " + draw(st.sampled_from(ab.PASSIVE_VERBS)) if passive else draw(st.sampled_from(ab.VERBS))
    reason = draw(st.sampled_from(("", *ab.REASONS)))
    return " ".join(w for w in (subject, modal, verb, reason) if w)


@st.composite
def image_phrase(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 2))
    noun = draw(st.sampled_from(ab.IMAGE_NOUNS))
    if kind == 0:
        verb = draw(st.sampled_from(("is", "appears", "seems to be", "looks")))
        return f"the {noun} {verb} {draw(st.sampled_from(ab.IMAGE_STATES))}"
    if kind == 1:
        thing = draw(st.sampled_from(("the lesion", "the finding", "the fracture", "any abnormality", "it")))
        return f"{thing} is {draw(st.sampled_from(ab.NOT_VISIBLE))} in this {noun}"
    return f"no {noun} was provided"


declining = st.one_of(
    modal_phrase(), image_phrase(), st.sampled_from(ab.UNSURE),
    st.builds(lambda m, v: m + v, st.sampled_from(ab.ZH_MODALS), st.sampled_from(ab.ZH_VERBS)),
    st.sampled_from(ab.ZH_STATES),
)
punct = st.sampled_from((".", "", "!", "。", " ."))


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(declining, st.integers(0, 2), punct)
def test_generated_declines_are_abstentions_in_every_form(phrase: str, how: int, end: str) -> None:
    text = _case(phrase, how) + end
    for form, options in FORMS_WITH_OPTIONS:
        got = read(form, text, options)
        assert got.abstained and got.value is None, (form, text, got)
        assert got.reason is not None and got.reason.startswith("abstained")


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(declining, st.integers(0, 3), st.sampled_from(("but", "however,", ".", ";")), st.booleans())
def test_a_choice_stated_beside_a_decline_wins(phrase: str, k: int, joiner: str, choice_first: bool) -> None:
    """Negative controls: committing to an option while mentioning uncertainty is that option."""
    letter = "ABCD"[k]
    stated = f"the answer is {letter}"
    text = f"{stated}, {joiner} {phrase}." if choice_first else f"{phrase} {joiner} {stated}."
    got = read("mcq", text, OPTIONS)
    assert got.value == letter and not got.abstained, (text, got)
    yes = "yes" if k % 2 else "no"
    text = f"{_case(yes, 2)}, {phrase}." if choice_first else f"{phrase} {joiner} the answer is {yes}."
    got = read("yesno", text, [])
    assert got.value == yes and not got.abstained, (text, got)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=string.ascii_uppercase[:4] + " .,()", min_size=1, max_size=12))
def test_answers_without_a_decline_read_as_before(text: str) -> None:
    """A decline is only ever added: text without a declining phrase reads exactly as the form's reader."""
    from medr2.scoring.extract import READERS, strip_reasoning

    body = strip_reasoning(text)
    if not body:
        return
    assert read("mcq", text, OPTIONS) == READERS["mcq"](body, OPTIONS)


@pytest.mark.parametrize("text", [
    "No abnormality is seen.",  # a determiner, not a decline
    "Pneumothorax cannot be excluded; the answer is A.",
    "The findings can be determined: B.",
    "Answer: C (I am fairly confident).",
])
def test_fixed_controls_are_not_abstentions(text: str) -> None:
    assert not read("mcq", text, OPTIONS).abstained


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 3), st.sampled_from(("{L}", "Answer: {L}", "({L})", "The answer is {L}.")))
def test_the_abstain_option_is_an_abstention_when_chosen(k: int, template: str) -> None:
    options = [*OPTIONS[:k], ABSTAIN_OPTION]
    letter = chr(ord("A") + len(options) - 1)
    got = read("mcq", template.format(L=letter), options)
    assert got.abstained, got
    assert read("mcq", ABSTAIN_OPTION, options).abstained  # the option's text itself


def _item(form: str, options: list[str]) -> Item:
    return Item(item_id="i1", case_id="c1", task="t", stage=1, form=form, question="q?",  # type: ignore[arg-type]
                options=options, answer="A" if form in ("mcq", "multi") else "yes" if form == "yesno" else "x",
                image="images/x.png", image_sha256="0" * 64, image_width=64, image_height=64,
                template_id="t", source="s", license="cc0",
                answer_box=(1.0, 1.0, 10.0, 10.0) if form == "box" else None, chance=0.25)


def test_every_form_scorer_gives_the_abstained_verdict() -> None:
    """Every entry point of scoring (each registered form scorer, via ``score_items``) gives ``abstained``."""
    from medr2 import BoxConvention, Prediction
    from medr2.scoring.scorer import FORM_SCORERS, score_items

    for form in FORM_SCORERS:
        it = _item(form, OPTIONS if form in ("mcq", "multi") else [])
        pred = Prediction(model_key="m", item_id="i1", mode="independent", request_hash="h",
                          raw="The image is blank, so this cannot be determined.", status="ok")
        (s,) = score_items([it], [pred], BoxConvention())
        assert s.verdict == "abstained", (form, s)
        assert s.parsed is None
    assert "abstained" in UNREAD_OUTCOMES
