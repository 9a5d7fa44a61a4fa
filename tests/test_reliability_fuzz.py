"""Hypothesis fuzzing: answer/box extraction, the OpenAI response parser, and every reader's record
validation. Properties: never an unexpected exception (readers raise only BadInput, naming the
field), outputs in the documented shape, and stated answers read back."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medr2.errors import BadInput
from medr2.records import check_box

FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FEW = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                       HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=20)
hostile_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=400) | st.sampled_from([
    "", " ", "\x00", "<script>alert(1)</script>", "[1,2,3,4]", "[[1,2,3,4]]", "(A) or (B)", "A, B, C", "yes no",
    "<think>A</think>B", "[nan, 1, 2, 3]", "[1e999, 0, 1, 1]", "[-1, -2, -3, -4]", "9" * 500, "[" * 300])


# --- score: answer and box extraction --------------------------------------------------------------


@FUZZ
@given(text=hostile_text, options=st.lists(st.text(min_size=1, max_size=15), min_size=2, max_size=6),
       form=st.sampled_from(["mcq", "yesno", "multi", "text", "box"]))
def test_extract_never_crashes_and_returns_the_answer_format(text: str, options: list[str], form: str) -> None:
    from medr2.score.extract import extract

    got = extract(form, text, options)
    if got is None:
        return
    assert isinstance(got, str)
    letters = {chr(65 + i) for i in range(len(options))}
    if form == "mcq":
        assert got in letters
    elif form == "yesno":
        assert got in ("yes", "no")
    elif form == "multi":
        parts = got.split(",")
        assert parts == sorted(set(parts)) and set(parts) <= letters
    elif form == "box":
        box = json.loads(got)
        assert len(box) == 4 and all(math.isfinite(v) for v in box) and box[2] > box[0] and box[3] > box[1]


@FUZZ
@given(n=st.integers(2, 8), k=st.integers(0, 7), prefix=st.sampled_from(["", "Answer: ", "The answer is ", "**"]),
       style=st.sampled_from(["{L}", "({L})", "{L}.", "{L})"]))
def test_extract_reads_a_stated_letter(n: int, k: int, prefix: str, style: str) -> None:
    from medr2.score.extract import extract

    k %= n
    options = [f"option number {i}" for i in range(n)]
    letter = chr(65 + k)
    assert extract("mcq", prefix + style.format(L=letter), options) == letter


coord = st.floats(0, 5000, allow_nan=False).map(lambda v: round(v, 1))


@FUZZ
@given(x1=coord, y1=coord, w=st.floats(1, 500).map(lambda v: round(v, 1)),
       h=st.floats(1, 500).map(lambda v: round(v, 1)),
       before=st.sampled_from(["", "The lesion is at ", "Box: ", "answer: "]),
       after=st.sampled_from(["", ".", " (pixels)", "\n"]),
       style=st.sampled_from(["[{a}, {b}, {c}, {d}]", "({a}, {b}, {c}, {d})", "[{a},{b},{c},{d}]"]))
def test_box_roundtrip(x1: float, y1: float, w: float, h: float, before: str, after: str, style: str) -> None:
    from medr2.score.boxes import parse_box

    box = (x1, y1, round(x1 + w, 1), round(y1 + h, 1))
    got = parse_box(before + style.format(a=box[0], b=box[1], c=box[2], d=box[3]) + after)
    assert got is not None and all(abs(g - b) < 1e-6 for g, b in zip(got, box, strict=True))


@FUZZ
@given(text=hostile_text)
def test_parse_box_never_crashes(text: str) -> None:
    from medr2.score.boxes import parse_box

    got = parse_box(text)
    if got is not None:
        assert all(math.isfinite(v) for v in got) and got[2] > got[0] and got[3] > got[1]


@FUZZ
@given(a=st.tuples(coord, coord, coord, coord), b=st.tuples(coord, coord, coord, coord))
def test_iou_bounded(a: tuple[float, ...], b: tuple[float, ...]) -> None:
    from medr2.score.boxes import iou

    v = iou(a, b)  # type: ignore[arg-type]
    assert 0.0 <= v <= 1.0


# --- the OpenAI response parser --------------------------------------------------------------------


@FUZZ
@given(data=st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode())
       | json_values.map(lambda v: json.dumps({"choices": [{"message": v}], "usage": v}).encode())
       | json_values.map(lambda v: json.dumps({"choices": v}).encode()))
def test_parse_completion_only_transient_or_permanent(data: bytes) -> None:
    from medr2.models.openai import Permanent, Transient, parse_completion

    try:
        text, pt, ct = parse_completion(data)
    except (Transient, Permanent):
        return
    assert isinstance(text, str)
    text.encode("utf-8")  # always storable
    assert pt is None or isinstance(pt, int)


@FUZZ
@given(value=st.text(max_size=40), ms=st.one_of(st.none(), st.text(max_size=10)))
def test_parse_retry_after_never_crashes(value: str, ms: str | None) -> None:
    from medr2.models.openai import parse_retry_after

    headers = {"Retry-After": value} if ms is None else {"Retry-After": value, "retry-after-ms": ms}
    got = parse_retry_after(headers)
    assert got is None or got >= 0.0


# --- readers: record validation --------------------------------------------------------------------

LABEL_NAMES = ["modality", "plane", "diagnosis", "pixel_spacing_mm", "artefact_severity", "flipped", "mimics",
               "findings", "structures", "split", "quality"]


@FUZZ
@given(name=st.sampled_from(LABEL_NAMES), value=json_values | json_values.map(json.dumps))
def test_label_values_parse_or_badinput(name: str, value: Any) -> None:
    from medr2.sources.common import parse_label_value

    try:
        parse_label_value(name, value, file="labels.csv", record="r1")
    except BadInput as e:
        assert e.field and e.field.startswith(name) and e.record == "r1" and e.file == "labels.csv"


@FUZZ
@given(kind=st.sampled_from(["findings", "structures"]),
       regions=st.lists(st.fixed_dictionaries({"box": json_values | st.lists(st.floats(), min_size=4, max_size=4)},
                                              optional={"label": json_values, "name": json_values,
                                                        "kind": json_values, "attributes": json_values}),
                        max_size=3),
       w=st.integers(1, 100), h=st.integers(1, 100))
def test_regions_parse_or_badinput(kind: str, regions: list[dict[str, Any]], w: int, h: int) -> None:
    from medr2.sources.common import labels_to_fields, regions_from_labels

    try:
        fields = labels_to_fields({kind: json.dumps(regions)}, file="labels.csv", record="r1")
        structures, findings = regions_from_labels(fields, w, h, file="labels.csv", record="r1")
    except BadInput as e:
        assert e.field and e.field.startswith(kind) and e.record == "r1"
        return
    for r in [*structures, *findings]:
        check_box(r.box, w, h)  # everything that got through is a valid box


@FUZZ
@given(box=st.tuples(st.floats(), st.floats(), st.floats(), st.floats()), w=st.integers(1, 50), h=st.integers(1, 50))
def test_check_box(box: tuple[float, float, float, float], w: int, h: int) -> None:
    try:
        check_box(box, w, h)
    except ValueError:
        return
    assert all(math.isfinite(v) for v in box) and 0 <= box[0] < box[2] <= w and 0 <= box[1] < box[3] <= h


@FUZZ
@given(raw=json_values)
def test_masks_label_names_parse_or_badinput(raw: Any) -> None:
    from medr2.sources.masks import parse_label_names

    try:
        names = parse_label_names(raw, "labels.json")
    except BadInput as e:
        assert e.file == "labels.json"
        return
    assert all(isinstance(k, int) for k in names)


@FUZZ
@given(seg=json_values, h=st.integers(1, 30), w=st.integers(1, 30))
def test_coco_segmentation_decodes_or_fails_cleanly(seg: Any, h: int, w: int) -> None:
    from medr2.sources.coco import segmentation_to_mask

    try:
        mask = segmentation_to_mask(seg, h, w)
    except (ValueError, TypeError):  # what the coco reader turns into BadInput(field=...segmentation)
        return
    assert mask.shape == (h, w)


@FUZZ
@given(iop=json_values | st.lists(st.floats(), min_size=6, max_size=6))
def test_dicom_plane_from_orientation(iop: Any) -> None:
    from medr2.sources.dicom import plane_from_orientation

    with np.errstate(all="ignore"):
        assert plane_from_orientation(iop) in (None, "axial", "coronal", "sagittal")


@FEW
@given(text=st.text(max_size=300))
def test_nifti_lut_parses_or_badinput(text: str) -> None:
    from medr2.sources.nifti import parse_lut

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "lut.txt"
        p.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            names = parse_lut(p, set())
        except BadInput as e:
            assert e.field == "lut"
            return
    assert all(isinstance(k, int) for k in names)


@FEW
@given(rows=st.lists(st.dictionaries(st.sampled_from(["image", "modality", "diagnosis", "findings", "quality",
                                                         "pixel_spacing_mm", "flipped", "split", "meta.x"]),
                                      st.text(max_size=30) | json_values.map(json.dumps), min_size=1),
                     min_size=1, max_size=4))
def test_folder_reader_records_case_or_badinput(rows: list[dict[str, str]]) -> None:
    """Whole folder reader on fuzzed label rows: each record gives a Case or a BadInput, never a crash."""
    import csv

    from medr2.build.validate import validate_case
    from medr2.imageio import ImageStore
    from medr2.sources.base import get_source
    from tests.interop_fixtures import write_png

    with tempfile.TemporaryDirectory() as d:
        root = Path(d) / "data"
        write_png(root / "a.png", np.zeros((8, 8), np.uint8))
        with (root / "labels.csv").open("w", newline="", encoding="utf-8", errors="surrogatepass") as f:
            w = csv.DictWriter(f, fieldnames=sorted({k for r in rows for k in r}))
            w.writeheader()
            w.writerows(rows)
        try:
            src = get_source(f"folder:{root}")
            specs = src.plan(0, None)
        except BadInput:
            return  # a reader-level problem: exit 2 with the message
        images = ImageStore(Path(d) / "bench")
        for spec in specs:
            try:
                case = src.realize(spec, images)
                validate_case(case, images.root)
            except BadInput as e:
                assert e.record and e.field, e
