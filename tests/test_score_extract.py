"""Answer extraction: the labelled corpus (every form and trap, zero guesses) and property tests."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medr2.score.boxes import parse_box
from medr2.score.extract import extract, strip_reasoning

CORPUS = Path(__file__).parent / "data" / "extraction_corpus.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text("utf-8").splitlines() if line.strip()]
OPTS = ["CT", "MRI", "X-ray", "Ultrasound"]


def _read(row: dict) -> object:
    if row["form"] == "box":
        box = parse_box(strip_reasoning(row["response"]))
        return list(box) if box is not None else None
    return extract(row["form"], row["response"], row["options"])


def test_corpus_is_large_and_covers_every_form_and_trap() -> None:
    forms = Counter(r["form"] for r in ROWS)
    assert len(ROWS) >= 150
    assert set(forms) == {"mcq", "yesno", "multi", "box", "text"}
    traps = " ".join(r["trap"] for r in ROWS)
    for needed in ("think", "later explicit answer wins", "rejected letters", "Nodule is not No",
                   "Normal is not No", "Qwen box tokens", "box tag", "flat list", "JSON", "ambiguous"):
        assert needed in traps, needed
    assert sum(r["expected"] is None for r in ROWS) >= 40  # plenty of must-not-guess cases


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['form']}-{r['trap']}" for i, r in enumerate(ROWS)])
def test_corpus_row(row: dict) -> None:
    assert _read(row) == row["expected"]


def test_corpus_zero_guesses() -> None:
    guesses = [r for r in ROWS if r["expected"] is None and _read(r) is not None]
    assert guesses == []


# -- properties ------------------------------------------------------------------------------------

LETTER_FORMS = ["{L}", "({L})", "**{L}**", "{L}.", "Answer: {L}", "The answer is {L}.", "Final answer: ({L})",
                "{L}. {T}", "The correct option is {L} because of the signal.", "<think>maybe {O}</think>{L}",
                "Initially {O} seemed plausible, but the answer is {L}."]


@settings(max_examples=200, deadline=None)
@given(idx=st.integers(0, 3), other=st.integers(0, 3), fmt=st.sampled_from(LETTER_FORMS))
def test_mcq_letter_in_any_format(idx: int, other: int, fmt: str) -> None:
    L, other_letter = "ABCD"[idx], "ABCD"[other]
    text = fmt.format(L=L, O=other_letter, T=OPTS[idx])
    assert extract("mcq", text, OPTS) == L


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="bdefghijklmnpqrsvwyz ,;'", max_size=80))
def test_mcq_text_without_letters_or_options_is_unparsed(text: str) -> None:
    # lower-case prose with no option text and no capital letters cannot name an option
    words = set(text.replace(",", " ").replace(";", " ").split())
    if words & {"mri", "ct", "x-ray", "ultrasound", "a", "b", "c", "d"}:
        return
    assert extract("mcq", text, OPTS) is None


@settings(max_examples=200, deadline=None)
@given(suffix=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10),
       rest=st.sampled_from(["", ".", " is seen.", " in the left lung.", " study"]))
def test_no_prefix_words_are_not_no(suffix: str, rest: str) -> None:
    word = "No" + suffix  # Nodule, Normal, None, Nothing, ...
    assert extract("yesno", word + rest) is None


@settings(max_examples=150, deadline=None)
@given(ans=st.sampled_from(["yes", "no"]), fmt=st.sampled_from(
    ["{A}", "{A}.", "**{A}**", "Answer: {A}", "{A}, because the image shows it.", "<think>{B}</think>{A}",
     "The answer is {A}."]), cap=st.booleans())
def test_yesno_formats(ans: str, fmt: str, cap: bool) -> None:
    other = "no" if ans == "yes" else "yes"
    word = ans.capitalize() if cap else ans
    assert extract("yesno", fmt.format(A=word, B=other)) == ans


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.sampled_from(["mcq", "yesno", "multi", "text", "box"]))
def test_extraction_never_raises(text: str, form: str) -> None:
    out = extract(form, text, OPTS)
    assert out is None or isinstance(out, str)


@settings(max_examples=150, deadline=None)
@given(letters=st.sets(st.sampled_from("ABCD"), min_size=1, max_size=4), sep=st.sampled_from([", ", " and ", "; "]),
       prefix=st.sampled_from(["", "Answer: ", "Selected: "]))
def test_multi_letter_lists(letters: set[str], sep: str, prefix: str) -> None:
    text = prefix + sep.join(sorted(letters, reverse=True))
    assert extract("multi", text, ["nodule", "effusion", "mass", "fracture"]) == ",".join(sorted(letters))


def test_reasoning_blocks() -> None:
    assert strip_reasoning("<think>A</think> B") == "B"
    assert strip_reasoning("reasoning...</think>C") == "C"
    assert strip_reasoning("D <think>unfinished") == "D"
    assert strip_reasoning("<THINK>x</THINK>\n<reasoning>y</reasoning>E") == "E"
