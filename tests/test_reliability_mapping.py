"""One typed schema for ``medr2.json`` (docs/reliability.md, issue 41 item 2): every reader declares its keys
and their types (``mapping_schema``) and opens its data root through ``sources.common.open_root``, which checks
every key against :data:`~medr2.sources.common.COMMON_KEYS` and that schema. A value of the wrong type is
refused with exit 2, naming the file, the key and the expected type.

The test enumerates every registered source (``medr2.sources.base.SOURCES``) and every key of its schema, and
writes generated values of any other JSON type (or out of range, or not among the choices)."""

from __future__ import annotations

import importlib
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import BadInput
from medr2.sources.base import SOURCES, get_source
from medr2.sources.common import COMMON_KEYS, MAPPING_FILE, Key
from tests.cli_inproc import run_cli

PATHLESS = {"sample"}  # sources without a data root (no medr2.json)


def _reader_class(name: str) -> type:
    factory = SOURCES.lookup(name)
    module = importlib.import_module(factory.__module__)
    found = [c for c in vars(module).values() if isinstance(c, type) and getattr(c, "name", None) == name]
    assert found, f"source {name}: no reader class named {name!r} in {module.__name__}"
    return found[0]


# the readers medr2 ships (a source a test module registered, e.g. tests/build_fixtures.py's ``buildtest``, reads no
# medr2.json and is not one of them, whatever order the test modules were collected in)
READERS = sorted(n for n in set(SOURCES.names()) - PATHLESS if SOURCES.lookup(n).__module__.startswith("medr2."))


def test_every_reader_declares_its_schema() -> None:
    assert len(READERS) >= 14
    for name in READERS:
        schema = getattr(_reader_class(name), "mapping_schema", None)
        assert isinstance(schema, dict), f"source {name} declares no mapping_schema"
        assert all(isinstance(k, Key) for k in schema.values()), name


json_value = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=6)
                          | st.floats(allow_nan=True, allow_infinity=True),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                        max_size=3), max_leaves=8)


@st.composite
def wrong_value(draw: Any) -> tuple[str, str, Any]:
    reader = draw(st.sampled_from(READERS))
    schema = {**COMMON_KEYS, **_reader_class(reader).mapping_schema}
    key = draw(st.sampled_from(sorted(schema)))
    value = draw(json_value.filter(lambda v: v is not None and not schema[key].check(v)))
    return reader, key, value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=wrong_value())
def test_wrong_type_names_file_key_and_type(case: tuple[str, str, Any]) -> None:
    reader, key, value = case
    schema = {**COMMON_KEYS, **_reader_class(reader).mapping_schema}
    with tempfile.TemporaryDirectory() as d:
        mf = Path(d) / MAPPING_FILE
        mf.write_text(json.dumps({key: value}, allow_nan=True))
        with pytest.raises(BadInput) as e:
            get_source(f"{reader}:{d}")
    assert (e.value.file, e.value.field) == (str(mf), key), (reader, key, value, str(e.value))
    assert schema[key].expected() in e.value.reason


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=wrong_value())
def test_wrong_type_is_exit_2_from_the_command_line(case: tuple[str, str, Any]) -> None:
    reader, key, value = case
    with tempfile.TemporaryDirectory() as d:
        mf = Path(d) / "data" / MAPPING_FILE
        mf.parent.mkdir()
        mf.write_text(json.dumps({key: value}, allow_nan=True))
        code, shown = run_cli("build", "--source", f"{reader}:{mf.parent}", "--out", str(Path(d) / "b"))
    assert code == 2 and str(mf) in shown.replace("\n", "") and f"field={key}" in shown.replace("\n", ""), shown
