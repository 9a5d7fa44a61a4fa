"""The answer reader by kind (issue 42): generators compose the kinds of answer a model writes — language ×
marker × position × markup × distractor mentions × negation × hedging × box convention × units — with the answer
a careful reader extracts, so the tests produce forms nobody wrote by hand. The languages, markers, rejections and
contrasts come from the one table (``medr2.scoring.extract.markers.LANGUAGES``): a language added there is tested
here without a new line."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from medr2 import BoxConvention
from medr2.models.presets import box_to_model
from medr2.scoring.boxes import read_box, read_box_pixels, stated_space
from medr2.scoring.extract import READERS, read
from medr2.scoring.extract.markers import LANGUAGES
from medr2.vocab import option_for, synonyms

OPTION_SETS = (["CT", "MRI", "X-ray", "Ultrasound"],
               ["Pneumonia", "Pleural effusion", "Pneumothorax", "Atelectasis", "Cardiomegaly"],
               ["Glioma", "Meningioma", "Metastasis"],
               ["Benign", "Malignant"])
CJK = {"zh", "ja", "ko"}
LANG = st.sampled_from(LANGUAGES)


def _full_width(text: str) -> str:
    """The full-width form of ASCII letters, digits and punctuation (as CJK keyboards write them)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _literal(word: str) -> bool:
    return re.escape(word) == word or all(ch.isalpha() for ch in word)


@st.composite
def letter_forms(draw: st.DrawFn, letter: str, text: str) -> str:
    """How a model writes one option: the letter, bracketed, bold, or with its own text."""
    return draw(st.sampled_from([letter, f"({letter})", f"**{letter}**", f"{letter}. {text}", f"{letter}) {text}",
                                 f"({letter}) {text}", f"**{letter}. {text}**"]))


@st.composite
def final_statements(draw: st.DrawFn, lang: object, form: str) -> str:
    """A final-answer statement of ``form`` in ``lang``: a marker of the table, or answer markup around it."""
    samples = [*lang.sample_final, *lang.sample_commit]  # type: ignore[attr-defined]
    end = "。" if lang.code in CJK else "."  # type: ignore[attr-defined]
    how = draw(st.sampled_from(["marker", "marker", "answer-tag", "boxed", "glm-box", "fenced", "bracket"]))
    if how == "marker":
        return draw(st.sampled_from(samples)) + form + end
    if how == "answer-tag":
        return f"<answer>{form}</answer>"
    if how == "boxed":
        return f"$\\boxed{{{form}}}$"
    if how == "glm-box":
        return f"<|begin_of_box|>{form}<|end_of_box|>"
    if how == "fenced":
        return draw(st.sampled_from(samples)) + f"\n```\n{form}\n```"
    return f"[ANSWER] {form} [/ANSWER]"


REASONING = ("The signal characteristics and the anatomy help here.", "Let me look at the image carefully.",
             "Soft-tissue contrast is high; bone is dark.", "首先观察图像。", "Analysons l'image.")


@st.composite
def mcq_answers(draw: st.DrawFn) -> tuple[str, list[str], str, bool]:
    """(answer, options, expected letter, whether the answer changed on the way)."""
    options = list(draw(st.sampled_from(OPTION_SETS)))
    n = len(options)
    k = draw(st.integers(0, n - 1))
    other = draw(st.integers(0, n - 1).filter(lambda j: j != k))
    lang = draw(LANG)
    letter, oletter = "ABCDE"[k], "ABCDE"[other]
    parts: list[str] = []
    if draw(st.booleans()):  # reasoning first, in a block or as prose
        why = draw(st.sampled_from(REASONING))
        parts.append(draw(st.sampled_from([f"<think>{why} Maybe {oletter}.</think>", why, f"◁think▷{why}◁/think▷"])))
    distractor = draw(st.sampled_from(["none", "rejected", "question", "changed", "zoom", "confidence", "bare"]))
    changed = False
    if distractor == "rejected" and lang.sample_reject:
        parts.append(oletter + draw(st.sampled_from(lang.sample_reject)) + ("。" if lang.code in CJK else "."))
    elif distractor == "question":
        parts.append(f"{oletter}? {draw(st.sampled_from(['Hmm.', 'No.', 'Unlikely.']))}")
    elif distractor == "changed":
        parts.append(draw(final_statements(lang, oletter)))
        changed = True
    elif distractor == "zoom":
        parts.append('<tool_call>{"name": "zoom_in", "arguments": {"bbox": [10, 20, 200, 240], "label": "'
                     + oletter + '"}}</tool_call>')
    elif distractor == "bare":  # a bare letter first: an explicit final statement outranks it
        parts.append(draw(st.sampled_from([oletter, f"({oletter})", f"**{oletter}**"])))
    elif distractor == "confidence":
        parts.append("\n".join(f"{'ABCDE'[i]}: {p}%" for i, p in zip(range(n), (40, 30, 20, 10, 0), strict=False)))
    statement = draw(final_statements(lang, draw(letter_forms(letter, options[k]))))
    if draw(st.booleans()):
        statement = _full_width(statement) if lang.code in CJK else statement
    parts.append(statement)
    if draw(st.booleans()):  # an explanation after the answer that rejects another option in passing
        parts.append(f"Not {options[other]}, because the pattern differs.")
    sep = draw(st.sampled_from(["\n", "\n\n", " "]))
    return sep.join(parts), options, letter, changed


@settings(max_examples=400, deadline=None)
@given(mcq_answers())
def test_mcq_final_statement_in_any_language_markup_and_position(case: tuple[str, list[str], str, bool]) -> None:
    text, options, expected, changed = case
    got = read("mcq", text, options)
    assert got.value == expected, (text, got)
    if changed and got.reason is not None:  # the prediction notes that the answer changed
        assert got.reason.startswith("answer changed"), got


@settings(max_examples=200, deadline=None)
@given(lang=LANG, data=st.data())
def test_a_changed_final_answer_is_noted(lang: object, data: st.DataObject) -> None:
    first, last = data.draw(st.sampled_from([("A", "C"), ("B", "A"), ("C", "B")]))
    text = data.draw(final_statements(lang, first)) + "\n" + data.draw(final_statements(lang, last))
    got = read("mcq", text, OPTION_SETS[0])
    assert got.value == last and got.reason is not None and f"{first} -> {last}" in got.reason, (text, got)


@st.composite
def no_commitment(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Answers that weigh, ask about, reject or are cut off before naming an option: none commits."""
    options = list(draw(st.sampled_from(OPTION_SETS)))
    n = len(options)
    i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
    li, lj = "ABCDE"[i], "ABCDE"[j]
    kind = draw(st.sampled_from(["questions", "confidence", "cut-off", "weighed", "rejections", "either"]))
    if kind == "questions":
        return f"{li}? No. {lj}? Hmm.", options
    if kind == "confidence":
        pct = draw(st.lists(st.integers(1, 99), min_size=n, max_size=n))
        sep = draw(st.sampled_from(["\n", ", ", "; "]))
        return sep.join(f"{'ABCDE'[q]}: {p}%" for q, p in enumerate(pct)), options
    if kind == "cut-off":
        tail = draw(st.sampled_from(["", "signal of the", "lesion is in the"]))
        return f"Looking at option {li}, the {tail}", options
    if kind == "weighed":
        return f"Maybe {options[i]}, or {options[j]}?", options
    if kind == "rejections":
        rest = [q for q in range(n) if q not in (i, j)]
        said = " ".join(f"{'ABCDE'[q]} is incorrect." for q in [i, *rest[:-1]]) if n > 2 else f"{li} is incorrect?"
        return said, options
    return f"It is either {options[i]} or {options[j]}.", options


@settings(max_examples=300, deadline=None)
@given(no_commitment())
def test_no_commitment_is_unparsed_never_a_guess(case: tuple[str, list[str]]) -> None:
    text, options = case
    got = read("mcq", text, options)
    assert got.value is None and got.reason, (text, got)


@settings(max_examples=200, deadline=None)
@given(options=st.sampled_from(OPTION_SETS[:3]), data=st.data(),
       frame=st.sampled_from(["{S}", "{S}.", "It's a {S}.", "This is {S}.", "The image is a {S} image.",
                              "Most likely {S}.", "It is consistent with {S}."]))
def test_answer_in_words_names_one_option(options: list[str], data: st.DataObject, frame: str) -> None:
    k = data.draw(st.integers(0, len(options) - 1))
    words = [s for s in synonyms(options[k]) if s.isascii() and option_for(s, options) == k
             and not re.fullmatch(r"[A-Z]", s)]
    if not words:
        return
    said = data.draw(st.sampled_from(words))
    assert read("mcq", frame.format(S=said), options).value == "ABCDE"[k], frame.format(S=said)


def test_two_options_a_rejection_names_the_other() -> None:
    opts = ["Benign", "Malignant"]
    for text, want in (("Not malignant.", "A"), ("Not benign", "B"), ("Not a malignant lesion.", "B")):
        assert read("mcq", text, opts).value == (want if "lesion" not in text else None), text


# -- yes/no ----------------------------------------------------------------------------------------------------

FINDINGS = ("pleural effusion", "pneumothorax", "fracture", "mass", "consolidation")


@st.composite
def yesno_answers(draw: st.DrawFn) -> tuple[str, str]:
    lang = draw(LANG)
    ans = draw(st.sampled_from(["yes", "no"]))
    words = [w for w in (lang.yes if ans == "yes" else lang.no) if _literal(w)]
    word = draw(st.sampled_from(words))
    word = word.capitalize() if draw(st.booleans()) else word
    end = "。" if lang.code in CJK else "."
    parts = []
    if draw(st.booleans()):  # a negation in another line or sentence must not flip the answer
        parts.append(draw(st.sampled_from([f"There is no {f}." for f in FINDINGS] + [f"No {f} is seen." for f in
                                                                                  FINDINGS])))
    how = draw(st.sampled_from(["marker", "lead", "markup"]))
    if how == "marker":
        parts.append(draw(st.sampled_from(lang.sample_final)) + word + end)
    elif how == "lead":
        parts.append(word + draw(st.sampled_from([end, ", " + draw(st.sampled_from(REASONING))])))
    else:
        parts.append(draw(st.sampled_from([f"<answer>{word}</answer>", f"\\boxed{{{word}}}",
                                           f"<|begin_of_box|>{word}<|end_of_box|>"])))
    if draw(st.booleans()):
        parts.append(draw(st.sampled_from([f"No {f} is present." for f in FINDINGS] + ["The heart is not enlarged."])))
    return "\n".join(parts), ans


@settings(max_examples=400, deadline=None)
@given(yesno_answers())
def test_yesno_in_any_language_with_negations_elsewhere(case: tuple[str, str]) -> None:
    text, expected = case
    got = read("yesno", text)
    assert got.value == expected, (text, got)


# -- every language of the table reads its own samples ----------------------------------------------------

@pytest.mark.parametrize("lang", LANGUAGES, ids=[lang.code for lang in LANGUAGES])
def test_every_language_reads_its_samples(lang: object) -> None:
    opts = OPTION_SETS[0]
    for prefix in (*lang.sample_final, *lang.sample_commit):  # type: ignore[attr-defined]
        assert read("mcq", f"{prefix}B", opts).value == "B", prefix
        assert read("mcq", _full_width(f"{prefix}C"), opts).value == "C", prefix
    for verdict in lang.sample_verdict:  # type: ignore[attr-defined]
        end = "。" if lang.code in CJK else "."  # type: ignore[attr-defined]
        assert read("mcq", f"C{verdict}{end}", opts).value == "C", verdict
        assert read("mcq", f"C{verdict}?", opts).value is None, verdict  # asked, not stated
    for suffix in lang.sample_reject:  # type: ignore[attr-defined]
        assert read("mcq", f"A{suffix}. {lang.sample_final[0]}D", opts).value == "D", suffix  # type: ignore[attr-defined]
        assert read("mcq", f"A{suffix}.", opts).value is None, suffix
    for w in (*lang.yes, *lang.no):  # type: ignore[attr-defined]
        if _literal(w):
            assert read("yesno", f"{w}.").value == ("yes" if w in lang.yes else "no"), w  # type: ignore[attr-defined]


def _entry_points(form: str) -> list[tuple[str, object]]:
    """Every way the package reads an answer of ``form``: ``read``, the form's registered extractor (the scorer
    reads a judge's reply with it), the form's reader, and for boxes ``read_box`` / ``read_box_pixels``."""
    from medr2.scoring.extract import EXTRACTORS, extract

    if form == "box":
        conv = BoxConvention("pixel")
        return [("read", lambda t, o: read("box", t, o).value), ("extract", lambda t, o: extract("box", t, o)),
                ("read_box", lambda t, o: (lambda b: None if b is None else str([float(v) for v in b]))(
                    read_box(t).box)),
                ("read_box_pixels", lambda t, o: (lambda b: None if b is None else str([float(v) for v in b]))(
                    read_box_pixels(t, conv, 1000, 1000)[0]))]
    return [("read", lambda t, o: read(form, t, o).value), ("extract", lambda t, o: extract(form, t, o)),
            ("EXTRACTORS", EXTRACTORS[form]), ("READERS", lambda t, o: READERS[form](t, o).value)]


@pytest.mark.parametrize("form", [*sorted(READERS), "box"])
def test_every_entry_point_reads_answer_markup_and_skips_tool_calls(form: str) -> None:
    """Markup, full-width forms and tool calls are handled by one normaliser that every entry point of every
    form goes through (``statements.normalise``): each sees them the same way."""
    answer, opts = {"mcq": ("B", OPTION_SETS[0]), "yesno": ("no", ()), "multi": ("A, C", OPTION_SETS[0]),
                    "box": ("[10, 20, 30, 40]", ())}[form]
    zoom = '<tool_call>{"name": "zoom_in", "arguments": {"bbox": [1, 2, 300, 400]}}</tool_call>\n'
    want = "[10.0, 20.0, 30.0, 40.0]" if form == "box" else answer.replace(" ", "")
    for text in (f"<answer>{answer}</answer>", f"\\boxed{{{answer}}}", f"{zoom}<answer>{answer}</answer>",
                 f"<|begin_of_box|>{answer}<|end_of_box|>", _full_width(f"Answer: {answer}")):
        for name, fn in _entry_points(form):
            got = fn(text, opts)  # type: ignore[operator]
            assert got == want, (form, name, text, got)


# -- boxes: convention × layout × units × markup -----------------------------------------------------------

@st.composite
def box_answers(draw: st.DrawFn) -> tuple[str, BoxConvention, int, int, tuple[float, float, float, float]]:
    w, h = draw(st.integers(64, 1024)), draw(st.integers(64, 1024))
    x1, y1 = draw(st.integers(0, w - 20)), draw(st.integers(0, h - 20))
    x2, y2 = draw(st.integers(x1 + 10, w)), draw(st.integers(y1 + 10, h))
    preset = BoxConvention(draw(st.sampled_from(["pixel", "unit", "thousand"])))  # type: ignore[arg-type]
    stated = draw(st.sampled_from([None, "pixel", "unit", "thousand", "percent"]))
    space = stated or preset.space
    if space == "percent":
        b = (100 * x1 / w, 100 * y1 / h, 100 * x2 / w, 100 * y2 / h)
    else:
        b = box_to_model((x1, y1, x2, y2), w, h, BoxConvention(space))  # type: ignore[arg-type]
    fmt = "{:.4f}" if space == "unit" else "{:.2f}"
    a, bb, c, d = (fmt.format(v) for v in b)
    cx, cy, bw, bh = (fmt.format(v) for v in ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2, b[2] - b[0], b[3] - b[1]))
    layout = draw(st.sampled_from(["list", "xywh-before", "xywh-after", "cxcywh", "polygon", "corners", "ranges",
                                   "json", "markup"]))
    body = {"list": f"[{a}, {bb}, {c}, {d}]",
            "xywh-before": f"(x, y, width, height): [{a}, {bb}, {bw}, {bh}]",
            "xywh-after": f"[{a}, {bb}, {bw}, {bh}] (x, y, width, height)",
            "cxcywh": f"Center ({cx}, {cy}), size {bw} x {bh}",
            "polygon": f"Polygon: [({a}, {bb}), ({c}, {bb}), ({c}, {d}), ({a}, {d})]",
            "corners": f"The top-left corner is at ({a}, {bb}) and the bottom-right corner is at ({c}, {d}).",
            "ranges": f"x from {a} to {c} and y from {bb} to {d}",
            "json": f'{{"x1": {a}, "y1": {bb}, "x2": {c}, "y2": {d}}}',
            "markup": f"<answer>[{a}, {bb}, {c}, {d}]</answer>"}[layout]
    unit = {None: "", "pixel": " (in pixels)", "unit": " in normalized coordinates (0-1)",
            "thousand": " on a 0-1000 scale", "percent": " as percentages of the image"}[stated]
    text = body + unit
    if draw(st.booleans()):
        text = '<tool_call>{"name": "zoom_in", "arguments": {"bbox": [0, 0, 5, 5]}}</tool_call>\n' + text
    return text, preset, w, h, (x1, y1, x2, y2)


@settings(max_examples=400, deadline=None)
@given(box_answers())
def test_box_in_any_layout_and_stated_unit(case: tuple) -> None:
    text, conv, w, h, want = case
    pix, why = read_box_pixels(text, conv, w, h)
    assert pix is not None, (text, why)
    assert pix == pytest.approx(want, abs=0.6), text


small = st.integers(0, 2) | st.integers(0, 2000)  # boxes at the image's edge start with 0, 1: "[0, 1, 32, 32]"


@settings(max_examples=300, deadline=None)
@given(st.tuples(small, small, small, small), st.sampled_from(["[{}]", "({})", "{}", "<answer>[{}]</answer>"]),
       st.sampled_from([", ", ",", " , ", " "]), st.sampled_from(["pixel", "unit", "thousand"]))
def test_a_boxs_own_numbers_state_no_unit(v: tuple[int, int, int, int], wrap: str, sep: str, preset: str) -> None:
    """The numbers of the box are never read as a stated unit ("[0, 1, 32, 32]" is not "0, 1" = the 0-1 space):
    the preset's space decides, as for any box that states none."""
    text = wrap.format(sep.join(str(x) for x in v))
    assert stated_space(text) == (None, None), text
    got = read_box(text, BoxConvention(preset))  # type: ignore[arg-type]
    assert got.space is None, (text, got)


def test_two_stated_units_are_unparsed() -> None:
    got = read_box("[10, 20, 30, 40] on a 0-1000 scale, as percentages of the image")
    assert got.box is None and got.reason is not None and "units" in got.reason


@settings(max_examples=300, deadline=None)
@given(mcq_answers())
def test_language_triggers_only_skip_languages_that_cannot_match(case: tuple[str, list[str], str, bool]) -> None:
    """The speed pre-check (``Language.triggers``) finds the same markers as the pattern of every language."""
    from medr2.scoring.extract.statements import ANSWER_MARKER, answer_markers, normalise

    text = normalise(case[0])
    assert [m.span() for m in answer_markers(text)] == [m.span() for m in ANSWER_MARKER.finditer(text)]


@settings(max_examples=300, deadline=None)
@given(lang=LANG, data=st.data(), commits=st.booleans(), form=st.sampled_from(["mcq", "yesno"]))
def test_afterthoughts_after_the_final_statement(lang: object, data: st.DataObject, commits: bool,
                                                 form: str) -> None:
    """After the last final statement, a correction commits to what follows it (the change noted); a doubt
    followed by another answer withdraws the answer; a doubt that comes back to the same answer keeps it."""
    words = lang.corrections if commits else lang.doubts  # type: ignore[attr-defined]
    if not words:
        return
    word = data.draw(st.sampled_from([w for w in words if _literal(w)] or [""]))
    if not word:
        return
    if form == "mcq":
        (first, want1), (second, want2) = ("B", "B"), ("D", "D")
    else:  # the language's own yes and no words
        first, second = (data.draw(st.sampled_from([w for w in ws if _literal(w)])) for ws in (lang.yes, lang.no))
        want1, want2 = "yes", "no"
    final = data.draw(st.sampled_from(lang.sample_final))  # type: ignore[attr-defined]
    end = "。" if lang.code in CJK else "."  # type: ignore[attr-defined]
    opts = OPTION_SETS[0] if form == "mcq" else ()
    text = f"{final}{first}{end} {word.capitalize()}, {second}{end}"
    got = read(form, text, opts)
    if commits:
        assert got.value == want2 and got.reason is not None and "changed" in got.reason, (text, got)
    else:
        assert got.value is None and got.reason is not None and "withdrawn" in got.reason, (text, got)
        same = read(form, f"{final}{first}{end} {word.capitalize()}, {first}{end}", opts)
        assert same.value == want1, (text, same)


@settings(max_examples=200, deadline=None)
@given(options=st.sampled_from(OPTION_SETS), data=st.data(),
       hedge=st.sampled_from([("Probably {T}.", True), ("Most likely {T}.", True), ("It is likely {T}.", True),
                              ("{T}, most likely.", True), ("It might be {T}.", False), ("Maybe {T}?", False),
                              ("Could it be {T}?", False), ("Possibly {T}, or possibly {OT}.", False),
                              ("Perhaps {T}", False)]))
def test_hedges_commit_weighings_do_not(options: list[str], data: st.DataObject, hedge: tuple[str, bool]) -> None:
    """A hedged statement ("probably", "most likely") commits; a weighing ("might", "maybe", a question) does
    not: it is unparsed, never a guess."""
    k, o = data.draw(st.lists(st.integers(0, len(options) - 1), min_size=2, max_size=2, unique=True))
    fmt, commits = hedge
    text = fmt.format(T=options[k], OT=options[o])
    assert read("mcq", text, options).value == ("ABCDE"[k] if commits else None), text


@settings(max_examples=200, deadline=None)
@given(case=mcq_answers(), raw=st.text(max_size=80))
def test_normalise_is_idempotent(case: tuple[str, list[str], str, bool], raw: str) -> None:
    """``read`` normalises and the form's reader normalises again (every entry point does): the second pass
    must change nothing."""
    from medr2.scoring.extract.statements import normalise

    for text in (case[0], raw, case[0] + raw):
        once = normalise(text)
        again = (" " + once)[1:]  # an equal string but another object: computed again, not the remembered output
        assert normalise(again) == once


@settings(max_examples=300, deadline=None)
@given(lang=LANG, data=st.data(), alternatives=st.booleans(),
       letters=st.sets(st.sampled_from("ABCD"), min_size=2, max_size=3))
def test_multi_select_in_any_language(lang: object, data: st.DataObject, alternatives: bool,
                                      letters: set[str]) -> None:
    """A selection joined by a table language's "and" (or commas) is read as the set; joined by its "or", the
    answer names alternatives and is unparsed."""
    opts = ["Nodule", "Pleural effusion", "Mass", "Fracture"]
    words = lang.ors if alternatives else lang.ands  # type: ignore[attr-defined]
    if not words:
        return
    conj = data.draw(st.sampled_from(words))
    order = data.draw(st.permutations(sorted(letters)))
    body = ", ".join(order[:-1]) + f" {conj} " + order[-1]
    prefix = data.draw(st.sampled_from(lang.sample_final))  # type: ignore[attr-defined]
    text = data.draw(st.sampled_from([f"{prefix}{body}", f"<answer>{body}</answer>", _full_width(prefix + body)
                                      if lang.code in CJK else f"{prefix}{body}."]))  # type: ignore[attr-defined]
    got = read("multi", text, opts)
    assert got.value == (None if alternatives else ",".join(sorted(letters))), (text, got)


@pytest.mark.parametrize("lang", LANGUAGES, ids=[lang.code for lang in LANGUAGES])
def test_final_statements_know_their_language(lang: object) -> None:
    from medr2.scoring.extract.statements import final_statements

    for prefix in lang.sample_final:  # type: ignore[attr-defined]
        segs = final_statements(f"{prefix}B")
        assert segs and segs[-1].lang == lang.code, (prefix, segs)  # type: ignore[attr-defined]
