"""One line in one place (a user vocabulary file, or a plugin's vocabulary entry) reaches every consumer of the
clinical vocabulary: task distractors, answer reading and the claim checker (issue 39)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import medr2.vocab as V
from medr2 import Case
from medr2.images import ImageStore
from medr2.scoring.claims import check_text
from medr2.scoring.extract.choice import read_mcq
from medr2.tasks import LabelPools, draft_case
from medr2.tasks.assemble import Assembler
from tests.build_fixtures import Spec, make_case

SUB_TYPE = "diagnosis: round pneumonia < pneumonia"
SYNONYM = "finding: consolidation = airspace filling"


@pytest.fixture(params=["user file", "plugin"])
def add_lines(request: pytest.FixtureRequest, tmp_path: Path,
              monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Adds the two lines where a user (``$MEDR2_VOCAB``) or a plugin (``medr2.vocab.EXTENSIONS``) would."""
    text = f"{SUB_TYPE}\n{SYNONYM}\n"
    if request.param == "user file":
        path = tmp_path / "mine.vocab"
        path.write_text(text)
        monkeypatch.setenv(V.USER_FILE_ENV, str(path))
        yield
    else:
        V.EXTENSIONS["test-one-line"] = text
        try:
            yield
        finally:
            del V.EXTENSIONS["test-one-line"]


_STORE = ImageStore(Path(tempfile.mkdtemp(prefix="medr2-one-line-")) / "images")


def _chest_cases() -> list[Case]:
    """X-ray chest cases: one with pneumonia, others whose diagnoses fill the pool (one is 'round pneumonia')."""
    cases = []
    for i, dx in enumerate(("pneumonia", "round pneumonia", "tuberculosis", "sarcoidosis", "lung abscess")):
        case = make_case(Spec(f"c{i}", 3 * i + 2), _STORE)
        cases.append(case.model_copy(update={"diagnosis": dx, "mimics": []}))
    return cases


def _options_offered_for_pneumonia(seeds: range) -> set[str]:
    cases = _chest_cases()
    pools = LabelPools.from_cases(cases)
    out: set[str] = set()
    for seed in seeds:
        drafts = draft_case(cases[0], pools, seed, "test", _STORE, tasks=["s4.diagnosis"])
        for it in Assembler(seed).assemble(cases[0], drafts, "test"):
            out.update(it.options)
    return out


def _reading() -> str | None:
    return read_mcq("Airspace filling", ["pleural effusion", "consolidation", "pneumothorax"]).value


def _claims() -> list[tuple[str, str]]:
    case = {"modality": "X-ray", "body_region": "chest", "diagnosis": "pneumonia",
            "findings": [{"label": "consolidation", "attributes": {"laterality": "right"}}]}
    text = "There is airspace filling in the right lower lobe. This is a round pneumonia."
    return [(c.text, c.verdict) for c in check_text(text, case) if c.kind in ("finding", "diagnosis")]


def test_without_the_lines_the_consumers_do_not_know() -> None:
    assert "round pneumonia" in _options_offered_for_pneumonia(range(12))  # offered as a wrong diagnosis
    assert _reading() is None
    assert ("airspace filling", "supported") not in _claims()


def test_one_line_reaches_distractors_reading_and_claims(add_lines: None) -> None:
    offered = _options_offered_for_pneumonia(range(12))
    assert offered and "round pneumonia" not in offered  # a sub-type of the truth is never a wrong option
    assert _reading() == "B"  # "airspace filling" read as the option "consolidation"
    got = _claims()
    assert ("airspace filling", "supported") in got and ("round pneumonia", "supported") in got


def test_one_mimic_line_on_the_other_concept_keeps_it_off_the_options(monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    """A mimic is mutual: one line declaring pneumonia a mimic of sarcoidosis (on sarcoidosis, not on pneumonia)
    stops the pneumonia case from offering sarcoidosis as a wrong diagnosis (an image of pneumonia cannot rule it
    out)."""
    assert "sarcoidosis" in _options_offered_for_pneumonia(range(12))
    path = tmp_path / "mimic.vocab"
    path.write_text("diagnosis: sarcoidosis @ mimic=pneumonia\n")
    monkeypatch.setenv(V.USER_FILE_ENV, str(path))
    assert "pneumonia" in V.mimics("sarcoidosis") and "sarcoidosis" in V.mimics("pneumonia")
    offered = _options_offered_for_pneumonia(range(12))
    assert "sarcoidosis" not in offered and offered  # still drawn, from the rest of the pool


def test_every_mimic_of_the_shipped_vocabulary_is_mutual() -> None:
    """For every concept A and every B among A's mimics, A (or an is-a ancestor of A that declared B) is among B's:
    the relation holds both ways over the whole shipped vocabulary, not only the lines written both ways."""
    voc = V.vocabulary()
    checked = 0
    for c in voc:
        for b in V.mimics(c.label):
            back = {voc.concept_of(m).id for m in V.mimics(b)}  # type: ignore[union-attr]
            assert c.id in back or back & voc.ancestors(c.label), (c.label, b)
            checked += 1
    assert checked >= 20
