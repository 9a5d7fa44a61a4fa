"""medr2.vocab.context: the one negation/hedging reading of clinical text (issue 39), shared by the claim checker
and every reader that carries report text (``Case.absent`` from a report's negations)."""

from __future__ import annotations

import ast
import json
from functools import cache
from pathlib import Path

from hypothesis import given, settings, strategies as st

from medr2 import vocab
from medr2.sources.base import get_source
from medr2.sources.common import report_absent
from medr2.vocab import context
from tests.interop_fixtures import gradient, realize_all, write_png

SOURCES = Path(__file__).resolve().parents[1] / "src" / "medr2" / "sources"


@cache
def _spellings() -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """(spelling, concept) of every finding/diagnosis concept read as itself alone in a text: English preferred
    labels, and the Chinese spellings."""
    english: list[tuple[str, str]] = []
    chinese: list[tuple[str, str]] = []
    for c in vocab.vocabulary():
        if c.kind not in ("finding", "diagnosis") or c.id in context.GENERIC:
            continue
        for term in c.terms:
            if term != c.label and term.isascii():
                continue
            ms = context.mentions(term)
            if len(ms) == 1 and ms[0].concept == c.label and (ms[0].start, ms[0].end) == (0, len(term)) \
                    and ms[0].affirmed:
                (english if term.isascii() else chinese).append((term, c.label))
    return tuple(english), tuple(chinese)


NEGATED_EN = ("No {x}.", "There is no {x}.", "{X} is not seen.", "{X} is not identified.", "Without {x}.",
              "Negative for {x}.", "{X}: absent.", "{X}: none.", "No evidence of {x}.", "{X} is absent.",
              "Free of {x}.", "No {x} is seen.")
NEGATED_ZH = ("未见{x}。", "无{x}。", "未见明显{x}。", "没有{x}。")
AFFIRMED_EN = ("There is {x}.", "{X} is seen.", "{X} is present.", "Findings consistent with {x}.")
AFFIRMED_ZH = ("可见{x}。", "见{x}。")
HEDGED_EN = ("Possible {x}.", "{X} cannot be excluded.", "May represent {x}.", "Questionable {x}.",
             "No definite {x}, although {x} cannot be excluded.")
HEDGED_ZH = ("可能{x}。", "不除外{x}。")
FILLERS = ("", "Heart size is normal. ", "The lungs are clear. ", "Findings: ", "心脏大小正常。")


def _say(template: str, term: str) -> str:
    return template.format(x=term, X=term[:1].upper() + term[1:])


@settings(max_examples=150, deadline=None)
@given(data=st.data(), chinese=st.booleans(), filler=st.sampled_from(FILLERS),
       how=st.sampled_from(("negated", "affirmed", "hedged")))
def test_negated_is_absent_affirmed_is_a_finding_hedged_is_neither(data: st.DataObject, chinese: bool, filler: str,
                                                                  how: str) -> None:
    """Every finding/diagnosis concept of the vocabulary, in every negation form (English and Chinese), is stated
    absent; the same concept affirmed or hedged is not (and reads as affirmed / uncertain)."""
    english, zh = _spellings()
    term, concept = data.draw(st.sampled_from(zh if chinese else english))
    forms = {"negated": NEGATED_ZH if chinese else NEGATED_EN, "affirmed": AFFIRMED_ZH if chinese else AFFIRMED_EN,
             "hedged": HEDGED_ZH if chinese else HEDGED_EN}[how]
    text = filler + _say(data.draw(st.sampled_from(forms)), term)
    read = [m for m in context.mentions(text) if m.concept == concept]
    assert read, text
    absent = context.stated_absent(text)
    if how == "negated":
        assert absent == [concept] and all(m.denied for m in read), text
    elif how == "affirmed":
        assert absent == [] and all(m.affirmed for m in read), text
    else:
        assert absent == [] and any(m.hedged for m in read), text
    # the reader's rule: a report's negated concept is absent unless the case's own labels name it
    assert report_absent({"report": text}) == absent
    assert report_absent({"report": text, "diagnosis": concept}) == []


def test_a_negation_of_part_of_a_finding_states_nothing_absent() -> None:
    """One side, one degree, an affirmation elsewhere, a hypothetical: nothing is stated absent."""
    for text in ("No left pleural effusion.", "No large pleural effusion.", "No acute fracture.",
                 "No pleural effusion on the right. Small left effusion.", "If there were a pneumothorax, no.",
                 "History of pneumonia, no pneumothorax now.", "Recommend follow-up to exclude pneumonia.",
                 "未见左侧胸腔积液。"):
        assert context.stated_absent(text) == [], text
    assert context.stated_absent("No focal consolidation, pneumothorax or pleural effusion.") == [
        "consolidation", "pneumothorax", "pleural effusion"]
    assert context.stated_absent("No pneumothorax. Mild cardiomegaly, likely chronic.") == ["pneumothorax"]


def test_the_claim_checker_reads_negation_through_the_shared_module() -> None:
    """The claim checker (the package medr2.scoring.claims) holds no trigger of its own: its negation, hedge and
    scope names are medr2.vocab.context's."""
    from medr2.scoring import claims

    assert claims._negated is context.negated and claims._uncertain is context.uncertain
    assert claims._WEAK_HEDGE is context.WEAK_HEDGE and claims._clauses is context.clauses
    modules = sorted((SOURCES.parent / "scoring" / "claims").glob("*.py"))
    assert len(modules) > 1
    assigned = {t.id for path in modules for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    assert not assigned & {"_NEG_BEFORE", "_NEG_AFTER", "_NEG_SCOPE", "_WEAK_HEDGE", "_STRONG_HEDGE",
                           "_CANNOT_EXCLUDE", "_HEDGE_BREAK", "_SPLIT", "_NOT_ABOUT_IMAGE"}


def _case_constructions() -> dict[str, list[str]]:
    """module -> the functions that construct a Case directly, under src/medr2/sources."""
    out: dict[str, list[str]] = {}
    for path in sorted(SOURCES.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and any(
                    isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Case"
                    for n in ast.walk(fn)):
                out.setdefault(path.relative_to(SOURCES).as_posix(), []).append(fn.name)
    return out


def test_every_reader_builds_its_cases_through_make_case() -> None:
    """The one place a report's negations become ``Case.absent`` (``make_case`` -> ``report_absent``) is the one
    place every reader's cases are built; the bundled sample alone builds its own, and its report is written from
    its own labels (``sample.report.make_report``: nothing in it the labels do not already state)."""
    assert _case_constructions() == {"common.py": ["make_case"], "sample/source.py": ["realize_case"]}
    # the sample report's only negations (sample.report.make_report) state nothing its labels do not
    assert context.stated_absent("No focal lesion is seen.") == context.stated_absent("No abnormality detected.") == []


def test_every_reader_with_report_text_states_its_negations_absent(tmp_path: Path) -> None:
    """The readers that carry report text: IU X-ray (its reports) and any label table's ``report`` column."""
    from tests import dataset_fixtures as F

    F.make_iu(tmp_path / "iu")
    data = tmp_path / "table"
    write_png(data / "a.png", gradient(30, 40))
    write_png(data / "b.png", gradient(30, 40, 1))
    (data / "labels.csv").write_text(
        "image,modality,diagnosis,absent,report\n"
        "a.png,X-ray,pneumonia,fracture,No pneumothorax or pleural effusion. Right lower lobe pneumonia.\n"
        "b.png,X-ray,,,\"Possible effusion, no pneumonia.\"\n")
    (data / "medr2.json").write_text(json.dumps({"license": "CC0"}))
    cases = {}
    for spec in (f"iu-xray:{tmp_path / 'iu'}", f"folder:{data}"):
        got, errors = realize_all(get_source(spec), tmp_path / spec.split(":")[0])
        assert not errors
        cases.update({c.meta["file"]: c for c in got})
    normal = cases["1_IM-0001-4001.dcm.png"]  # "There is no pulmonary edema."
    assert normal.absent == ["pulmonary oedema"] == normal.meta["report_absent"]
    assert cases["2_IM-0652-1001.dcm.png"].absent == []  # "Borderline cardiomegaly. Clear lungs."
    assert cases["3_IM-1384-1001.dcm.png"].absent == []  # "Left basilar opacity, likely atelectasis."
    assert cases["a.png"].absent == ["fracture", "pneumothorax", "pleural effusion"]  # the column's, then the report's
    assert cases["b.png"].absent == ["pneumonia"]  # the hedged effusion is neither present nor absent
