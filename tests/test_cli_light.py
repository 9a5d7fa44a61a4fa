"""``import medr2.cli`` and ``medr2 --help`` stay light (no numpy, pyarrow, PIL, pydantic, torch), and the
names the help lists (``medr2.catalog``) are the registries' names."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HEAVY = ("numpy", "pyarrow", "PIL", "pydantic", "torch", "pandas", "scipy", "matplotlib", "aiohttp")


def _loaded_after(code: str) -> list[str]:
    probe = (f"import sys\ntry:\n    {code}\nexcept SystemExit:\n    pass\n"
             f"print([m for m in {HEAVY!r} if m in sys.modules])")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return eval(proc.stdout.strip().splitlines()[-1])  # a list literal printed by the probe


def test_import_cli_is_light() -> None:
    assert _loaded_after("import medr2.cli") == []


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["build", "--help"], ["eval", "--help"]])
def test_help_is_light(args: list[str]) -> None:
    loaded = _loaded_after(f"sys.argv = ['medr2', *{args!r}]; from medr2.cli import main; main()")
    # typer >= 0.29 itself imports pydantic (its parameter coercion) as soon as a command's options are
    # parsed, --help included; nothing of medr2's own does
    assert loaded == ([] if len(args) == 1 else [m for m in loaded if m == "pydantic"])


def test_help_lists_the_names() -> None:
    from medr2.catalog import MODES, PRESETS, SOURCE_KINDS, TEXT_CODES, VISUAL_CODES

    def show(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-c", "from medr2.cli import main; main()", *args],
                              capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "2000"})
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    root, build, ev = show("--help"), show("build", "--help"), show("eval", "--help")
    for name in (*SOURCE_KINDS, *PRESETS, *MODES, *TEXT_CODES, *VISUAL_CODES):
        assert name in root, name
    assert all(k in build for k in SOURCE_KINDS)
    assert all(m in ev for m in MODES) and all(p in ev for p in PRESETS)


_CATALOG_CHECK = """
from medr2 import catalog
from medr2.bench.slicefields import SLICE_FIELDS
from medr2.interop.exporters import EXPORTERS
from medr2.interop.importers import IMPORTERS
from medr2.models.baselines import BASELINES
from medr2.models.families import FAMILIES
from medr2.models.presets import PRESETS
from medr2.models.registry import known_prefixes
from medr2.perturb.registry import text_codes, visual_codes
from medr2.run.order import ORDERS
from medr2.run.prompts import MODES
from medr2.sources.base import SOURCES
from medr2.train.export import STRATEGIES
from medr2.train.finetune import FINETUNE_STRATEGIES
from medr2.train.formats import FORMATS
assert set(catalog.SOURCE_KINDS) == set(SOURCES)
assert set(catalog.PRESETS) == set(PRESETS)
assert tuple(MODES) == catalog.MODES
assert set(catalog.ORDERS) == set(ORDERS)
assert (text_codes(), visual_codes()) == (catalog.TEXT_CODES, catalog.VISUAL_CODES)
assert set(catalog.MODEL_PREFIXES) == set(known_prefixes())
assert set(catalog.BASELINES) == set(BASELINES)
assert set(catalog.FAMILIES) == set(FAMILIES)
assert set(catalog.IMPORT_FORMATS) == set(IMPORTERS)
assert set(catalog.CONVERT_TARGETS) == set(EXPORTERS)
assert set(catalog.EXPORT_FORMATS) == set(FORMATS)
assert set(catalog.STRATEGIES) == set(STRATEGIES)
assert set(catalog.FINETUNE_STRATEGIES) == set(FINETUNE_STRATEGIES)
assert set(catalog.SLICE_FIELDS) == set(SLICE_FIELDS)
print("ok")
"""


def test_catalog_matches_the_registries() -> None:
    # in a fresh process: other tests register their own sources, tasks, ... in this one
    proc = subprocess.run([sys.executable, "-c", _CATALOG_CHECK], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


@pytest.mark.parametrize("module", ["medr2", "medr2.cli"])
def test_python_dash_m_is_the_command(module: str) -> None:
    from importlib.metadata import version

    proc = subprocess.run([sys.executable, "-m", module, "--version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"medr2 {version('medr2')}"
    bad = subprocess.run([sys.executable, "-m", module, "evl"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.startswith("error: No such command 'evl'")
