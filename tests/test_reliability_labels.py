"""Labels normalised in one place (docs/reliability.md, issue 41 "labels are normalised before options are
made"): every reader's cases are made by :func:`medr2.sources.common.make_case`, which cleans every label
(finding labels, structure names, the label fields, mimics) with :func:`medr2.vocab.clean_label` (NFKC,
invisible characters, white space); options that mean the same are never offered together
(:func:`medr2.tasks.assemble.check_options`, by :func:`medr2.vocab.key`).

- ``test_every_reader_makes_cases_through_make_case``: an ``ast`` walk of ``src/medr2/sources``: no other
  ``Case(...)``; the bundled sample (medr2's own labels) is named with its reason;
- ``test_clean_label_property``: generated labels decorated with confusable characters (zero-width, soft hyphen,
  bidi controls, no-break and trailing spaces, full-width forms) clean to the label itself; cleaning is idempotent
  and keeps the comparison form (:func:`medr2.vocab.normalise`);
- ``test_confusable_labels_build_one_label``: a folder dataset whose label table spells one diagnosis in four
  look-alike ways builds a bench holding one spelling; a label of invisible characters only is quarantined
  naming the record and field;
- imported questions: ``test_every_imported_item_is_made_by_the_builder`` (``ast``: no other ``Item(...)`` in
  ``interop/``), ``test_look_alike_options_are_refused`` (hypothesis: options cleaned, a look-alike pair is
  ``BadInput`` naming file, record and ``options``), ``test_import_quarantines_an_item_with_look_alike_options``
  (a PMC-VQA CSV through ``import_dataset``).
"""

from __future__ import annotations

import ast
import unicodedata
from pathlib import Path

from hypothesis import given, strategies as st

import medr2
from medr2.vocab import clean_label, normalise
from tests import bad_inputs as bad

SRC = Path(medr2.__file__).parent / "sources"
MAKER = SRC / "common.py"
EXEMPT = {SRC / "sample" / "source.py": "the bundled synthetic sample: medr2's own labels, not read from data"}


def _case_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    return [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id == "Case"]


def test_every_reader_makes_cases_through_make_case() -> None:
    modules = list(SRC.rglob("*.py"))
    assert len(modules) > 20
    assert len(_case_calls(MAKER)) == 1  # make_case itself
    bad_calls = [f"{p}:{n}" for p in modules if p != MAKER and p not in EXEMPT for n in _case_calls(p)]
    assert not bad_calls, "make cases through medr2.sources.common.make_case (it cleans the labels):\n" + \
        "\n".join(bad_calls)
    assert all(_case_calls(p) for p in EXEMPT)


INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u202e", "\u2066", "\x07"]
SPACES = [" ", "\u00a0", "\u3000", "\t", "\u2009"]
words = st.text(st.characters(whitelist_categories=["Ll", "Lu", "Nd"], max_codepoint=0x24F), min_size=1,
                max_size=12)


def _full_width(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


@st.composite
def decorated(draw: st.DrawFn) -> tuple[str, str]:
    parts = draw(st.lists(words, min_size=1, max_size=3))
    label = unicodedata.normalize("NFKC", " ".join(parts))
    out = []
    for i, ch in enumerate(label):
        out.append(_full_width(ch) if draw(st.booleans()) else ch)
        if ch == " ":
            out.append(draw(st.sampled_from(SPACES)))
        if i < len(label) - 1 and draw(st.integers(0, 4)) == 0:
            out.append(draw(st.sampled_from(INVISIBLE)))
    pad = draw(st.sampled_from(["", " ", "\u00a0", "\u200b ", " \u00ad"]))
    return label, pad + "".join(out) + draw(st.sampled_from(["", " ", "\u200b", "\t", "\ufeff"]))


@given(decorated())
def test_clean_label_property(pair: tuple[str, str]) -> None:
    label, look_alike = pair
    cleaned = clean_label(look_alike)
    assert cleaned == clean_label(label) == " ".join(label.split())
    assert clean_label(cleaned) == cleaned
    assert normalise(cleaned) == normalise(look_alike)
    assert not any(unicodedata.category(c) in ("Cf", "Cc") for c in cleaned)


def test_confusable_labels_build_one_label(tmp_path: Path) -> None:
    from medr2 import build, load_bench
    from medr2.errors import Quarantine

    data = tmp_path / "data"
    data.mkdir()
    spellings = ["pleural effusion", "pleural\u00a0effusion ", "ｐｌｅｕｒａｌ effusion",
                 "pleu\u00adral ef\u200bfusion"]
    rows = ["image,modality,diagnosis"]
    for i, s in enumerate([*spellings, "\u200b\u00ad "]):
        (data / f"{i}.png").write_bytes(bad.png_bytes())
        rows.append(f"{i}.png,X-ray,{s}")
    (data / "labels.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    build(f"folder:{data}", tmp_path / "bench", workers=1)
    b = load_bench(tmp_path / "bench")
    assert {c.diagnosis for c in b.cases} == {"pleural effusion"} and len(b.cases) == 4
    q = Quarantine.read(tmp_path / "bench" / "quarantine.jsonl")
    assert [(e.record, e.field) for e in q] == [("4.png", "diagnosis")]


# --- imported questions: options cleaned, look-alike options refused ---------------------------------------

INTEROP = Path(medr2.__file__).parent / "interop"


def test_every_imported_item_is_made_by_the_builder() -> None:
    """Items are made in one place, ``interop.common.ImportBuilder.add`` (which cleans and checks options)."""
    calls = [f"{p}:{n.lineno}" for p in INTEROP.rglob("*.py") if p != INTEROP / "common.py"
             for n in ast.walk(ast.parse(p.read_text("utf-8"))) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "Item"]
    assert not calls, calls


@given(decorated(), st.lists(words, max_size=3, unique=True))
def test_look_alike_options_are_refused(pair: tuple[str, str], others: list[str]) -> None:
    import pytest

    from medr2 import BadInput
    from medr2.interop.common import clean_options

    label, look_alike = pair
    rest = [o for o in others if normalise(o) != normalise(label)]
    assert clean_options([label, *rest], file="q.csv", record="7") == [" ".join(label.split()),
                                                                       *map(clean_label, rest)]
    with pytest.raises(BadInput) as e:
        clean_options([label, *rest, look_alike], file="q.csv", record="7")
    assert (e.value.file, e.value.record, e.value.field) == ("q.csv", "7", "options")


def test_import_quarantines_an_item_with_look_alike_options(tmp_path: Path) -> None:
    from medr2 import import_dataset, load_bench

    data = tmp_path / "pmc"
    (data / "images").mkdir(parents=True)
    for n in ("a.jpg", "b.jpg"):
        (data / "images" / n).write_bytes(bad.png_bytes())
    csv = data / "test.csv"
    csv.write_text("Figure_path,Question,Answer,Choice A,Choice B,Choice C,Choice D\n"
                   "a.jpg,What is seen?,mass,A:pleural effusion,B:pleural\u00a0effusion\u200b ,C:mass,D:nodule\n"
                   "b.jpg,What is seen?,mass,A:mass,B:pleural  effusion,C:nodule,D:normal\n", encoding="utf-8")
    res = import_dataset("pmc-vqa", csv, tmp_path / "bench")
    assert [(e.file, e.field) for e in res.quarantined] == [(str(csv), "options")]
    (item,) = load_bench(tmp_path / "bench").items
    assert item.options == ["mass", "pleural effusion", "nodule", "normal"]


@given(decorated(), st.lists(words, min_size=1, max_size=3, unique=True), st.integers(0, 3))
def test_an_answer_that_reads_as_its_option_gets_its_letter(pair: tuple[str, str], others: list[str],
                                                            at: int) -> None:
    """``letter_of`` (every importer's answer -> letter) matches as options are compared when they are made: an
    answer spelled with confusable characters finds its option, and an answer that reads as no option finds none."""
    from medr2.interop.common import letter_of
    from medr2.records import letter

    label, look_alike = pair
    rest = [o for o in others if normalise(o) != normalise(label)]
    options = [*rest[:at], label, *rest[at:]]
    assert letter_of(look_alike, options) == letter(options.index(label))
    assert letter_of(look_alike + ".", options) == letter(options.index(label))
    assert letter_of(look_alike, rest) is None


@given(decorated(), decorated())
def test_imported_question_and_answer_are_cleaned(question: tuple[str, str], answer: tuple[str, str]) -> None:
    """``ImportBuilder.add`` (the one maker of imported items) stores the question and a written answer cleaned
    as labels are, so a reference answer never carries an invisible character no model answer has."""
    import tempfile

    from medr2 import Case
    from medr2.images import ImageStore
    from medr2.interop.common import ImportBuilder

    b = ImportBuilder(fmt="vqa-rad", images=ImageStore(Path(tempfile.gettempdir())))
    case = Case(case_id="c1", image="images/x.png", image_sha256="0" * 64, width=8, height=8, modality="X-ray",
                source="vqa-rad", license="CC0-1.0", patient_id="p1")
    it = b.add(case, task="s3.finding_type", form="text", question=question[1], answer=answer[1], qid="q1")
    assert (it.question, it.answer) == (clean_label(question[0]), clean_label(answer[0]))
