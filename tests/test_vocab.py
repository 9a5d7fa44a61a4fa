"""The clinical vocabulary (issue 39): normalisation, relations, the data file and its extensions."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import medr2.vocab as V
from medr2 import BadInput

VOCAB = V.vocabulary()
CONCEPTS = sorted(VOCAB, key=lambda c: c.id)
TERMS = sorted({t for c in CONCEPTS for t in c.terms})
INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")


def look_alike(draw: st.DrawFn, label: str) -> str:
    """Another spelling of ``label`` that reads the same: case, trailing/leading space, zero-width and soft
    hyphen characters inserted, full-width letters, underscores or hyphens for spaces."""
    chars = list(label)
    for _ in range(draw(st.integers(0, 3))):
        chars.insert(draw(st.integers(0, len(chars))), draw(st.sampled_from(INVISIBLE)))
    text = "".join(chars)
    if draw(st.booleans()):
        text = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)  # full-width
    if draw(st.booleans()):
        text = text.upper() if draw(st.booleans()) else text.lower()
    if draw(st.booleans()):
        text = text.replace(" ", draw(st.sampled_from(("_", "  ", " - ", "\u00a0"))))
    return draw(st.sampled_from(("", " ", "\t"))) + text + draw(st.sampled_from(("", " ", "  ", "\n")))


@st.composite
def spelling_of(draw: st.DrawFn, labels: list[str]) -> tuple[str, str]:
    label = draw(st.sampled_from(labels))
    return label, look_alike(draw, label)


@given(spelling_of(TERMS))
@settings(max_examples=300, deadline=None)
def test_look_alike_spellings_are_one_label(pair: tuple[str, str]) -> None:
    label, other = pair
    assert V.normalise(other) == V.normalise(label)
    assert V.concept_of(other) == V.concept_of(label) is not None
    assert V.related(other, label) == "same" and V.key(other) == V.key(label)


@given(st.text())
def test_normalise_is_idempotent_and_visible(text: str) -> None:
    n = V.normalise(text)
    assert V.normalise(n) == n
    assert n == n.strip() and "  " not in n
    assert not any(ch in n for ch in INVISIBLE)


@pytest.mark.parametrize("concept", CONCEPTS, ids=lambda c: c.id)
def test_every_relation_reads_both_ways(concept: V.Concept) -> None:
    for term in concept.terms:
        assert V.concept_of(term, [concept.kind]) == concept
    for pid in (*concept.is_a, *concept.part_of):
        parent = VOCAB.get(pid)
        assert parent is not None
        assert VOCAB.related(concept.label, parent.label) == "child"
        assert VOCAB.related(parent.label, concept.label) == "parent"
        assert VOCAB.conflicts(concept.label, parent.label) and VOCAB.conflicts(parent.label, concept.label)
    for pid in concept.is_a:
        assert VOCAB.is_a(concept.label, VOCAB.get(pid).label)  # type: ignore[union-attr]
    for cid in concept.co_occurs:
        other = VOCAB.get(cid)
        assert other is not None and VOCAB.conflicts(concept.label, other.label)
        assert VOCAB.conflicts(other.label, concept.label)


@given(st.sampled_from(CONCEPTS), st.sampled_from(CONCEPTS))
@settings(max_examples=400, deadline=None)
def test_relations_are_converse(a: V.Concept, b: V.Concept) -> None:
    converse = {"same": "same", "parent": "child", "child": "parent", "sibling": "sibling",
                "unrelated": "unrelated"}
    assert VOCAB.related(b.label, a.label) == converse[VOCAB.related(a.label, b.label)]
    assert VOCAB.conflicts(a.label, b.label) == VOCAB.conflicts(b.label, a.label)


@pytest.mark.parametrize(("sub", "sup"), [
    ("infarct", "ischemic stroke"), ("glioma", "glioblastoma"), ("viral pneumonia", "COVID-19"),
    ("lung opacity", "pneumonia"), ("lung opacity", "infiltration"), ("lung opacity", "consolidation"),
    ("frontal", "PA"), ("microscopy", "fluorescence microscopy"), ("Nodule/Mass", "Nodule"),
    ("tumour core", "enhancing tumour"), ("keratinocyte carcinoma", "BCC"), ("chest", "lung"),
])
def test_the_issue_examples_are_parents(sub: str, sup: str) -> None:
    assert V.related(sup, sub) == "child" and V.related(sub, sup) == "parent"


def test_every_label_the_readers_and_sample_use_is_a_concept() -> None:
    """The label tables of the dataset readers and of the sample's lesion classes are all in the vocabulary."""
    from medr2.sources.datasets import brats, isic, nih_cxr14, rsna_pneumonia, vindr_cxr
    from medr2.sources.sample.lesions import FAMILIES

    labels = [*rsna_pneumonia.CLASSES.values(), rsna_pneumonia.FINDING, *brats.COHORTS.values(),
              *(r.name for r in (*brats.OLD_LABELS.values(), *brats.NEW_LABELS.values())),
              *(d for d in isic.DIAGNOSES.values() if d), *vindr_cxr.GLOBAL_LABELS, vindr_cxr.NO_FINDING,
              *nih_cxr14.BOX_LABEL_NAMES, *nih_cxr14.BOX_LABEL_NAMES.values()]
    labels += ["Atelectasis", "Cardiomegaly", "Effusion", "Infiltration", "Mass", "Nodule", "Pneumonia",
               "Pneumothorax", "Consolidation", "Edema", "Emphysema", "Fibrosis", "Pleural_Thickening", "Hernia",
               "Aortic enlargement", "Calcification", "Clavicle fracture", "ILD", "Lung cavity", "Lung cyst",
               "Lung Opacity", "Mediastinal shift", "Nodule/Mass", "Other lesion", "Pleural effusion",
               "Pleural thickening", "Rib fracture", "Enlarged PA"]  # NIH / VinDr finding names (their files)
    labels += [x for fam in FAMILIES.values() for c in fam for x in (c.label, c.diagnosis, *c.mimics)]
    missing = sorted({x for x in labels if V.concept_of(x) is None})
    assert not missing


def test_data_file_states_version_sources_and_licence() -> None:
    head = V.builtin_text().split("@version")[0]
    assert VOCAB.version and "Sources" in head and "Licence" in head


def test_one_line_in_the_user_file_adds_a_synonym_and_a_sub_type(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    assert V.concept_of("airspace shadowing") is None
    user = tmp_path / "mine.vocab"
    user.write_text("finding: lung opacity = airspace shadowing\ndiagnosis: round pneumonia < pneumonia\n")
    monkeypatch.setenv(V.USER_FILE_ENV, str(user))
    assert V.related("airspace shadowing", "Lung Opacity") == "same"
    assert V.related("round pneumonia", "pneumonia") == "child"
    assert V.related("round pneumonia", "lung opacity") == "child"
    monkeypatch.delenv(V.USER_FILE_ENV)
    assert V.concept_of("airspace shadowing") is None


def test_a_plugin_entry_extends_it() -> None:
    V.EXTENSIONS["test-plugin"] = "diagnosis: glioma = glial neoplasm"
    try:
        assert V.related("glial neoplasm", "glioblastoma") == "parent"
    finally:
        del V.EXTENSIONS["test-plugin"]
    assert V.concept_of("glial neoplasm") is None


@pytest.mark.parametrize(("line", "field"), [
    ("findng: x", "kind"), ("finding x", "line"), ("finding: x < no such concept", "is-a"),
    ("finding: x @ colour", "attributes"), ("finding: effusion = pneumonia", "synonyms"),
    ("finding: a < b\nfinding: b < a", "is_a"),
])
def test_bad_lines_name_file_line_and_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str,
                                            field: str) -> None:
    user = tmp_path / "bad.vocab"
    user.write_text("# mine\n" + line + "\n")
    monkeypatch.setenv(V.USER_FILE_ENV, str(user))
    with pytest.raises(BadInput) as e:
        V.vocabulary()
    assert e.value.field == field
    if field != "is_a":
        assert e.value.file == str(user) and e.value.record and e.value.record.startswith("line ")


def test_it_sits_at_the_bottom_of_the_data_flow() -> None:
    src = Path(V.__file__).read_text()
    imported = {n.module for n in ast.walk(ast.parse(src)) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {a.name for n in ast.walk(ast.parse(src)) if isinstance(n, ast.Import) for a in n.names}
    assert {m for m in imported if m.startswith("medr2")} <= {"medr2.errors", "medr2.registry"}


@pytest.mark.parametrize("command", ["build", "score"])
def test_a_bad_user_vocabulary_exits_2_naming_file_and_line(tmp_path: Path, command: str) -> None:
    """On the command line, before any work: one clear line, exit 2, no traceback."""
    import os
    import subprocess
    import sys

    user = tmp_path / "bad.vocab"
    user.write_text("finding: lung opacity = airspace shadowing\nfinding: x < nowhere\n")
    args = ["build", "--source", "sample", "--out", str(tmp_path / "b"), "--cases", "1"] if command == "build" \
        else ["score", str(tmp_path / "no-run")]
    env = {**os.environ, V.USER_FILE_ENV: str(user)}
    r = subprocess.run([sys.executable, "-m", "medr2", *args], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert str(user) in r.stderr and "line 2" in r.stderr and "nowhere" in r.stderr
