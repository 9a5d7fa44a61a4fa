"""Answer extraction: the labelled corpus (every form and trap, zero guesses) and property tests."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import assume, given, settings, strategies as st

from medr2.scoring.boxes import convention_from_json, parse_box, read_box, read_box_pixels
from medr2.scoring.extract import extract, read, strip_reasoning
from medr2.scoring.extract.markers import LANGUAGES
from medr2.vocab import is_a, option_for

CORPUS = Path(__file__).parent / "data" / "extraction_corpus.jsonl"
# phrasings in the documented output styles of model families (issue 42; source: data/extraction_styles_source.py)
STYLES = Path(__file__).parent / "data" / "extraction_corpus_styles.jsonl"
ROWS = [json.loads(line) for path in (CORPUS, STYLES) for line in path.read_text("utf-8").splitlines() if line.strip()]
OPTS = ["CT", "MRI", "X-ray", "Ultrasound"]


def _read_with_reason(row: dict) -> tuple[object, str | None]:
    """A corpus row as the scorer reads it. Box rows with ``convention`` (the run manifest's JSON form) and
    ``image_size`` [w, h] are read to pixels of the bench image (rounded to 0.1 px); without them, the raw box."""
    if row["form"] == "box":
        if "image_size" in row:
            pix, why = read_box_pixels(row["response"], convention_from_json(row.get("convention")), *row["image_size"])
            return ([round(v, 1) for v in pix] if pix is not None else None), why
        got = read_box(strip_reasoning(row["response"]), convention_from_json(row.get("convention")))
        return (list(got.box) if got.box is not None else None), got.reason
    got = read(row["form"], row["response"], row["options"])
    return got.value, got.reason


def _read(row: dict) -> object:
    return _read_with_reason(row)[0]


def test_corpus_is_large_and_covers_every_form_and_trap() -> None:
    forms = Counter(r["form"] for r in ROWS)
    assert len(ROWS) >= 150
    assert set(forms) == {"mcq", "yesno", "multi", "box", "text"}
    traps = " ".join(r["trap"] for r in ROWS)
    for needed in ("think", "later explicit answer wins", "rejected letters", "Nodule is not No",
                   "Normal is not No", "Qwen box tokens", "box tag", "flat list", "JSON", "ambiguous",
                   "starts like a letter", "conflict", "one letter per line", "present and absent", "Chinese",
                   "end token", "contraction", "none of the above not an option", "T7", "Gemini box_2d is y-first",
                   "xywh", "percentages", "markdown table", "outside the space", "Kimi", "R1", "LLaVA-Med"):
        assert needed in traps, needed
    assert sum(r["expected"] is None for r in ROWS) >= 40  # plenty of must-not-guess cases
    assert sum(r["trap"].startswith("conflict") or "conflict" in r["trap"] for r in ROWS) >= 10


@pytest.mark.parametrize("row", ROWS, ids=[f"{i}-{r['form']}-{r['trap']}" for i, r in enumerate(ROWS)])
def test_corpus_row(row: dict) -> None:
    got, why = _read_with_reason(row)
    assert got == row["expected"]
    if "reason" in row:  # the reason an unparsed answer is recorded with
        assert got is None and why is not None and row["reason"] in why, why


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
@given(st.text(alphabet="bdefghijklmnpqrsvwyz ,;'", max_size=80).filter(
    lambda t: not any(option_for(w, OPTS) is not None or any(is_a(w, o) for o in OPTS)
                      for w in (t, " ".join(re.findall(r"[\w'-]+", t))))))
def test_mcq_text_without_letters_or_options_is_unparsed(text: str) -> None:
    # lower-case prose with no option text and no capital letters cannot name an option; a whole answer that
    # the clinical vocabulary reads as another spelling ("mr" -> MRI) or a sub-type ("rf" -> X-ray) of one option
    # does name it
    words = set(text.replace(",", " ").replace(";", " ").split())
    if words & {"mri", "ct", "x-ray", "ultrasound", "a", "b", "c", "d"}:
        return
    assert extract("mcq", text, OPTS) is None


@settings(max_examples=200, deadline=None)
@given(suffix=st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=10),
       rest=st.sampled_from(["", ".", " is seen.", " in the left lung.", " study"]))
def test_no_prefix_words_are_not_no(suffix: str, rest: str) -> None:
    word = "No" + suffix  # Nodule, Normal, None, Nothing, ...
    # a word that *is* "no" in a language of the marker table ("Non." is French for no) is an answer
    assume(word.lower() not in {w for lang in LANGUAGES for w in lang.no} or rest not in ("", "."))
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


# -- the conflict rule, the option-text rule and the xywh rule ------------------------------------------------

TERMS = ["Pneumonia", "Pleural effusion", "Pneumothorax", "Atelectasis", "Cardiomegaly", "Pulmonary edema",
         "Rib fracture", "Hiatal hernia", "2", "3", "0", "1"]
CONFLICT_FORMS = ["{L}. {T}", "{L}) {T}", "Answer: {L} ({T})", "The answer is {L}, {T}.", "**{L}. {T}**",
                  "Final answer: {L} - {T}", "{T} ({L})", "答案：{L}（{T}）"]


@settings(max_examples=300, deadline=None)
@given(opts=st.lists(st.sampled_from(TERMS), min_size=2, max_size=5, unique=True), data=st.data(),
       fmt=st.sampled_from(CONFLICT_FORMS))
def test_letter_text_conflict_is_unparsed_with_reason(opts: list[str], data: st.DataObject, fmt: str) -> None:
    i = data.draw(st.integers(0, len(opts) - 1))
    j = data.draw(st.integers(0, len(opts) - 1))
    text = fmt.format(L="ABCDE"[i], T=opts[j])
    got = read("mcq", text, opts)
    if i == j:
        assert got.value == "ABCDE"[i]
    else:  # a letter and another option's text: never resolved silently to either
        assert got.value is None and got.reason is not None and got.reason.startswith("conflict"), (text, got)


@settings(max_examples=200, deadline=None)
@given(letter=st.sampled_from("ABCDTX"), word=st.sampled_from(["cell lymphoma", "ray", "wave", "mode", "line sign"]),
       pos=st.integers(0, 3), fmt=st.sampled_from(["{T}", "{T}.", "Answer: {T}", "**{T}**", "The answer is {T}."]))
def test_option_text_wins_over_a_letter_like_prefix(letter: str, word: str, pos: int, fmt: str) -> None:
    opts = ["Glioma", "Meningioma", "Abscess", "Metastasis"]
    opts[pos] = f"{letter}-{word}"
    assert extract("mcq", fmt.format(T=opts[pos]), opts) == "ABCD"[pos]


XYWH_FORMS = ['{{"x": {0}, "y": {1}, "width": {2}, "height": {3}}}', '{{"x": {0}, "y": {1}, "w": {2}, "h": {3}}}',
              "Bounding box (x, y, width, height): ({0}, {1}, {2}, {3})", "[x, y, w, h] = [{0}, {1}, {2}, {3}]",
              "x={0}, y={1}, width={2}, height={3}",
              "| x | y | width | height |\n|---|---|---|---|\n| {0} | {1} | {2} | {3} |"]


@settings(max_examples=300, deadline=None)
@given(x=st.integers(0, 500), y=st.integers(0, 500), w=st.integers(1, 400), h=st.integers(1, 400),
       fmt=st.sampled_from(XYWH_FORMS))
def test_xywh_is_read_as_xywh(x: int, y: int, w: int, h: int, fmt: str) -> None:
    assert parse_box(fmt.format(x, y, w, h)) == (x, y, x + w, y + h)


@settings(max_examples=200, deadline=None)
@given(x1=st.integers(0, 400), y1=st.integers(0, 400), dx=st.integers(1, 400), dy=st.integers(1, 400))
def test_xyxy_keys_and_lists_are_not_read_as_xywh(x1: int, y1: int, dx: int, dy: int) -> None:
    x2, y2 = x1 + dx, y1 + dy
    for text in (f"[{x1}, {y1}, {x2}, {y2}]", f'{{"x1": {x1}, "y1": {y1}, "x2": {x2}, "y2": {y2}}}',
                 f"Box (x1, y1, x2, y2): ({x1}, {y1}, {x2}, {y2})"):
        assert parse_box(text) == (x1, y1, x2, y2)


@settings(max_examples=200, deadline=None)
@given(y1=st.integers(0, 900), x1=st.integers(0, 900), dy=st.integers(1, 99), dx=st.integers(1, 99))
def test_gemini_box_2d_is_y_first_only_for_its_convention(y1: int, x1: int, dy: int, dx: int) -> None:
    from medr2.models.presets import get_preset

    text = f'{{"box_2d": [{y1}, {x1}, {y1 + dy}, {x1 + dx}], "label": "lesion"}}'
    assert read_box(text, get_preset("gemini").box).box == (x1, y1, x1 + dx, y1 + dy)
    assert read_box(text, get_preset("qwen3-vl").box).box == (y1, x1, y1 + dy, x1 + dx)


@settings(max_examples=200, deadline=None)
@given(space=st.sampled_from(["unit", "thousand", "pixel"]), scale=st.floats(1.05, 5.0), w=st.integers(50, 900),
       h=st.integers(50, 900))
def test_box_outside_the_declared_space_is_unparsed_not_clipped(space: str, scale: float, w: int, h: int) -> None:
    from medr2 import BoxConvention
    from medr2.scoring.boxes import space_size

    conv = BoxConvention(space)  # type: ignore[arg-type]
    sw, sh = space_size(conv, w, h)
    inside = f"[{0.1 * sw}, {0.1 * sh}, {0.9 * sw}, {0.9 * sh}]"
    outside = f"[{0.1 * sw}, {0.1 * sh}, {scale * sw}, {0.9 * sh}]"
    assert read_box_pixels(inside, conv, w, h)[0] is not None
    pix, why = read_box_pixels(outside, conv, w, h)
    assert pix is None and why is not None and "outside" in why
