"""Patient sex and age: one normalisation (medr2.demographics) that every reader holding them goes through, and
NIH ChestX-ray14's two spellings of the sex header."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from medr2.demographics import SEX_VALUES, age_of, demographic_meta, sex_of
from medr2.sources.base import get_source
from tests import dataset_fixtures as F
from tests.interop_fixtures import realize_all

SPELLINGS = {"F": ["F", "f", "female", "Female", " FEMALE "], "M": ["M", "m", "male", "Male"],
             "other": ["O", "other"]}


@given(st.sampled_from(sorted(SPELLINGS)), st.data())
def test_sex_spellings_map_to_one_value(sex: str, data: st.DataObject) -> None:
    assert sex_of(data.draw(st.sampled_from(SPELLINGS[sex]))) == sex


@given(st.text(max_size=6))
def test_unreadable_sex_is_unknown_never_guessed(text: str) -> None:
    got = sex_of(text)
    assert got is None or got in SEX_VALUES
    if text.strip().lower() not in {s.lower() for v in SPELLINGS.values() for s in v} | {"w", "man", "woman", "x",
                                                                                          "intersex"}:
        assert got is None


@given(st.integers(0, 130), st.sampled_from(["Y", "M", "W", "D", ""]))
def test_dicom_and_plain_ages_are_years(n: int, unit: str) -> None:
    years = {"Y": n, "": n, "M": n / 12, "W": n * 7 / 365.25, "D": n / 365.25}[unit]
    assert age_of(f"{n:03d}{unit}") == pytest.approx(years, abs=1e-4)
    assert age_of(n) == n and age_of(str(n)) == n


@given(st.one_of(st.text(max_size=8), st.floats(allow_nan=True), st.none(), st.booleans()))
def test_an_age_is_a_year_count_in_range_or_unknown(value: object) -> None:
    got = age_of(value)
    assert got is None or 0 <= got <= 130


def _rename_column(path: Path, old: str, new: str) -> None:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    rows[0] = [new if c == old else c for c in rows[0]]
    F.write_csv(path, rows[0], rows[1:])


def _nih_patient_sex(root: Path) -> None:
    F.make_nih(root)
    _rename_column(root / "Data_Entry_2017.csv", "Patient Gender", "Patient Sex")


# every reader whose data carries sex/age: (source, fixture, expected sex of each case or None: any valid)
READERS: list[tuple[str, Callable[[Path], None]]] = [
    ("nih-cxr14", F.make_nih), ("nih-cxr14", _nih_patient_sex), ("rsna-pneumonia", F.make_rsna),
    ("isic", F.make_isic2019)]


@pytest.mark.parametrize(("source", "make"), READERS, ids=["nih-gender", "nih-sex", "rsna", "isic2019"])
def test_readers_store_sex_and_age_normalised(tmp_path: Path, source: str,
                                             make: Callable[[Path], None]) -> None:
    root = tmp_path / "data"
    make(root)
    cases, errors = realize_all(get_source(f"{source}:{root}"), tmp_path / "b")
    assert cases and not errors
    for c in cases:
        assert c.meta["sex"] in SEX_VALUES and isinstance(c.meta["age"], float)
        assert demographic_meta(sex=c.meta["sex"], age=c.meta["age"]) == {"sex": c.meta["sex"], "age": c.meta["age"]}
    if source == "nih-cxr14":  # the fixture: odd patient ids are M, age 50 + id, under either header spelling
        for c in cases:
            pid = int(c.patient_id)
            assert c.meta["sex"] == ("M" if pid % 2 else "F") and c.meta["age"] == 50 + pid
