"""medr2.registry.Registry (collisions, lazy entries, errors), the derived tables and the VariantId parser."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from medr2 import BadInput, Registry, VariantId
from medr2.registry import RegistryCollision
from medr2.variant_id import variant_code, variant_severity


def test_a_taken_name_is_refused_and_the_same_object_is_a_no_op() -> None:
    reg: Registry[object] = Registry("widget", field="--widget")
    a, b = object(), object()
    assert reg.register("a", a) is a
    assert reg.register("a", a) is a  # identical: no-op
    with pytest.raises(RegistryCollision, match="widget 'a' is already registered"):
        reg.register("a", b)
    assert reg["a"] is a
    assert reg.register("a", b, replace=True) is b and reg["a"] is b


def test_unknown_names_say_what_is_known() -> None:
    reg: Registry[int] = Registry("widget", field="--widget")
    reg.register("one", 1)
    reg.register("two", 2)
    with pytest.raises(BadInput, match=r"unknown widget 'three'; known: one, two") as e:
        reg.lookup("three")
    assert e.value.field == "--widget"
    assert reg.get("three") is None and reg.get("three", 3) == 3
    with pytest.raises(KeyError):
        reg["three"]


def test_lazy_entries_are_named_before_their_module_is_imported() -> None:
    code = """
import sys
from medr2.registry import Registry
reg = Registry("thing")
reg.lazy("json-dumps", "json:dumps")
reg.lazy("frac", "fractions:Fraction")
assert reg.names() == ["json-dumps", "frac"] and "frac" in reg and reg.is_lazy("frac")
assert "fractions" not in sys.modules
assert reg["frac"](1, 2) == 0.5 and "fractions" in sys.modules and not reg.is_lazy("frac")
try:
    reg.register("frac", object())
except ValueError as e:
    assert "already registered" in str(e)
else:
    raise AssertionError("collision accepted")
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_a_lazy_entry_refuses_a_foreign_registration() -> None:
    reg: Registry[object] = Registry("thing")
    reg.lazy("x", "medr2_no_such_module_for_tests:x")
    with pytest.raises(RegistryCollision, match="lazily"):
        reg.register("x", object())
    with pytest.raises(BadInput, match="cannot be imported"):
        reg["x"]


def test_the_registry_module_imports_nothing_heavy() -> None:
    code = ("import sys, medr2.registry, medr2.variant_id; "
            "print(','.join(m for m in ('numpy', 'pyarrow', 'PIL', 'pydantic', 'torch') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "", r.stdout + r.stderr


def test_builtin_lazy_names_are_known_without_importing_their_modules() -> None:
    code = """
import sys
from medr2.models.registry import known_prefixes
from medr2.interop.importers import IMPORTERS
from medr2.interop.exporters import EXPORTERS
from medr2.perturb.registry import all_codes
from medr2.sources.base import SOURCES
assert known_prefixes() == ["baseline", "hf", "human", "openai", "vllm"]
assert "slake" in IMPORTERS and "lmms-eval" in EXPORTERS and "nih-cxr14" in SOURCES
assert len(all_codes()) == 26  # T1..T10, T12 (T11: docs/extending.md's plugin example), V1..V15
loaded = [m for m in ("medr2.models.openai", "medr2.models.hf", "medr2.viewer.human", "medr2.interop.importers.slake",
                      "medr2.perturb.visual", "medr2.sources.datasets.nih_cxr14", "torch") if m in sys.modules]
assert not loaded, loaded
heavy = [m for m in ("numpy", "pyarrow", "PIL", "pydantic", "torch") if m in sys.modules]
assert not heavy, heavy  # the names serve --help
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_the_task_stage_table_and_chain_order_come_from_the_task_registry() -> None:
    from medr2.interop.common import OTHER_TASK, TASK_STAGE
    from medr2.tasks import TASKS, chain_preference

    assert dict(TASK_STAGE) == {**{t: s.stage for t, s in TASKS.items()}, OTHER_TASK: 0}
    assert len(TASK_STAGE) == 36  # 35 built-in tasks (four on several images, issue 49) and OTHER_TASK
    chain = chain_preference()
    assert sorted(chain) == [1, 2, 3, 4]
    assert chain[1][:3] == ("s1.modality", "s1.plane", "s1.region")
    assert chain[3][:2] == ("s3.change", "s3.lesion_box") and chain[4][-1] == "s4.report"  # a prior read first
    assert sorted(t for ts in chain.values() for t in ts) == sorted(TASKS)


def test_the_variant_code_lists_come_from_the_perturbation_registry() -> None:
    from medr2.perturb import registry

    # T11 is left to docs/extending.md's plugin example; T12 and V13-V15 are issue 49's (several images)
    assert (*(f"T{i}" for i in range(1, 11)), "T12") == registry.TEXT_CODES
    assert tuple(f"V{i}" for i in range(1, 16)) == registry.VISUAL_CODES
    assert registry.ALL_CODES == registry.TEXT_CODES + registry.VISUAL_CODES
    for code in registry.ALL_CODES:
        assert registry.PERTURBATIONS[code].code == code


def test_one_skip_class() -> None:
    from medr2 import Skip, Skip as PerturbSkip, Skip as TaskSkip

    assert PerturbSkip is Skip and TaskSkip is Skip and Skip("why").reason == "why"


# -- VariantId -------------------------------------------------------------------------------------

_codes = st.builds(lambda letter, n: f"{letter}{n}", st.sampled_from("TVXZ"), st.integers(0, 999))
_quals = st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_0123456789", min_size=1, max_size=8), max_size=3)


@settings(deadline=None)
@given(_codes, _quals)
def test_variant_ids_round_trip(code: str, quals: list[str]) -> None:
    text = "-".join([code, *quals])
    vid = VariantId.parse(text)
    assert str(vid) == text and vid.code == code and vid.qualifiers == tuple(quals)
    assert vid.family == code[0] and vid.number == int(code[1:]) and not vid.is_clean
    assert variant_code(text) == text.split("-", 1)[0]
    last = text.rsplit("-", 1)[-1]
    assert vid.severity == variant_severity(text) == (int(last) if "-" in text and last.isdigit() else None)
    assert vid.matches(code) and vid.matches(text)
    assert VariantId.lenient(text) == vid


_ascii = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=20)


@settings(deadline=None)
@given(_ascii)
def test_lenient_parsing_agrees_with_the_old_string_code(text: str) -> None:
    vid = VariantId.lenient(text)
    assert vid.code == text.split("-", 1)[0]
    code, _, rest = text.partition("-")
    assert vid.sort_key() == (code[:1], int(code[1:]) if code[1:].isdigit() else 0, rest)
    last = text.rsplit("-", 1)[-1]
    assert vid.severity == (int(last) if "-" in text and last.isdigit() else None)
    for wanted in ("V8", text, text.split("-", 1)[0]):
        assert vid.matches(wanted) == (text == wanted or text.startswith(wanted + "-"))


@settings(deadline=None)
@given(_ascii)
def test_parse_accepts_only_variant_ids(text: str) -> None:
    import re

    ok = text == "clean" or re.fullmatch(r"[A-Z][0-9]+(-[^-]+)*", text) is not None
    if ok:
        assert str(VariantId.parse(text)) == text
    else:
        with pytest.raises(ValueError, match="not a variant id"):
            VariantId.parse(text)


def test_clean_and_examples() -> None:
    clean = VariantId.parse("clean")
    assert clean.is_clean and clean.family == "" and clean.severity is None and str(clean) == "clean"
    v = VariantId.parse("V8-low_contrast-3")
    assert (v.code, v.rest, v.severity, v.family, v.number) == ("V8", "low_contrast-3", 3, "V", 8)
    assert VariantId.parse("T4-hint").severity is None
    assert sorted(["V10", "clean", "V2-x", "T3"], key=lambda s: VariantId.lenient(s).sort_key()) == [
        "T3", "V2-x", "V10", "clean"]


def _fake_distribution(site: Path, module_code: str) -> None:
    from tests.test_extending_docs import fake_distribution

    fake_distribution(site, module_code)


def _run_with(site: Path, code: str) -> subprocess.CompletedProcess[str]:
    import os

    from tests.test_extending_docs import SRC

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_a_plugin_entry_point_is_loaded_once_on_first_lookup(tmp_path: Path) -> None:
    _fake_distribution(tmp_path, "from medr2.registry import register_adapter\nCALLS = []\n"
                                 "@register_adapter('fake')\ndef fake(name, options):\n    CALLS.append(name)\n")
    r = _run_with(tmp_path, "import sys\nfrom medr2.models.registry import ADAPTERS, known_prefixes\n"
                            "assert 'medr2_fake_plugin' not in sys.modules\n"
                            "assert 'fake' in known_prefixes() and 'medr2_fake_plugin' in sys.modules\n"
                            "from medr2.registry import load_plugins\nassert load_plugins() == []\nprint('ok')")
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


def test_a_broken_plugin_is_named(tmp_path: Path) -> None:
    _fake_distribution(tmp_path, "raise RuntimeError('half-installed')\n")
    r = _run_with(tmp_path, "from medr2.sources.base import get_source\nget_source('sample')")
    assert r.returncode != 0
    assert "plugin 'fake' (medr2_fake_plugin) of distribution 'medr2-fake' failed to load" in r.stderr
    assert "RuntimeError: half-installed" in r.stderr
