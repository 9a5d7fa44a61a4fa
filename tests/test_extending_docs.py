"""docs/extending.md, run: the plugin distribution it writes is installed (offline) into a fresh virtual
environment on top of this one, and every bash block runs there, so the plugin's source, task, variant,
importer, exporter, model adapter, metric group and plot reach the ``medr2`` command line through the
``medr2.plugins`` entry-point group. Plus fast checks that the doc's modules register what they say."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

import medr2

DOC = Path(__file__).resolve().parents[1] / "docs" / "extending.md"
_BLOCK = re.compile(r"^```(python|bash|toml)\n(.*?)^```", re.M | re.S)
_FILE = re.compile(r"^# file: (\S+)\n")
SRC = Path(medr2.__file__).resolve().parents[1]  # the medr2 under test (a worktree's src/ or the editable one)


def _blocks() -> list[tuple[str, str]]:
    return _BLOCK.findall(DOC.read_text("utf-8"))


def _write_files(root: Path) -> list[tuple[str, str]]:
    """Write every ``# file:`` block under ``root``; the other blocks, in order."""
    rest = []
    for kind, code in _blocks():
        m = _FILE.match(code)
        if m:
            path = root / m.group(1)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code[m.end():], "utf-8")
        else:
            rest.append((kind, code))
    return rest


def fake_distribution(site: Path, module_code: str, module: str = "medr2_fake_plugin") -> None:
    """A distribution 'medr2-fake' on a sys.path folder holding one module (``module_code``) and the dist-info pip
    leaves for a ``pyproject.toml`` whose ``medr2.plugins`` entry point names it."""
    info = site / "medr2_fake-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: medr2-fake\nVersion: 0.1\n", "utf-8")
    (info / "entry_points.txt").write_text(f"[medr2.plugins]\nfake = {module}\n", "utf-8")
    (site / f"{module}.py").write_text(module_code, "utf-8")


def _child_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A venv over the running environment: its packages come from this interpreter's site-packages (a
    .pth runs ``site.addsitedir``, so editable installs work), the plugin installs into the venv."""
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False, symlinks=os.name != "nt").create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    py = bindir / ("python.exe" if os.name == "nt" else "python")
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    parent = sysconfig.get_paths()["purelib"]
    Path(purelib, "_medr2_parent_env.pth").write_text(f"import site; site.addsitedir({parent!r})\n", "utf-8")
    script = bindir / "medr2"
    script.write_text(f"#!{py}\nimport sys\nfrom medr2.cli import main\nsys.argv[0] = 'medr2'\nmain()\n", "utf-8")
    script.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "VIRTUAL_ENV")}
    env.update(PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", PYTHONPATH=str(SRC), VIRTUAL_ENV=str(env_dir),
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env, py


@pytest.mark.slow
def test_plugin_walkthrough_reaches_the_cli(tmp_path: Path) -> None:
    rest = _write_files(tmp_path)
    assert [k for k, _ in rest].count("bash") >= 2
    env, py = _child_env(tmp_path)
    for i, (kind, code) in enumerate(rest):
        cmd = [str(py), "-c", code] if kind == "python" else ["bash", "-euo", "pipefail", "-c", code]
        r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, f"block {i} ({kind}) failed:\n{code}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"
    # the plugin is installed in the venv only: this process does not see it
    assert "toy" not in __import__("medr2.sources.base", fromlist=["SOURCES"]).SOURCES

    from medr2.bench.format import load_bench

    bench = load_bench(tmp_path / "bench-toy")
    tasks = {it.task for it in bench.items}
    assert "toy.brightness" in tasks
    toy = [it for it in bench.items if it.task == "toy.brightness"]
    assert {it.variant for it in toy} == {"clean", "T11"}
    t9 = [it for it in toy if it.variant == "T11"]
    assert t9 and all(it.question.endswith("Please answer carefully.") and it.perturbation["code"] == "T11"
                      for it in t9)
    assert bench.manifest["build"]["variants"] == ["T11"]
    info = json.loads((tmp_path / "info.json").read_text("utf-8"))
    assert "toy.brightness" in json.dumps(info)
    # the adapter answered every request; the metric group and the plot made it into the outputs
    with sqlite3.connect(tmp_path / "run-toy" / "store.sqlite") as con:
        rows = set(con.execute("SELECT raw, status, model_key FROM predictions"))
    assert rows == {("bright", "ok", "toy:bright")}
    assert json.loads((tmp_path / "run-toy" / "manifest.json").read_text("utf-8"))["model"]["key"] == "toy:bright"
    metrics = json.loads((tmp_path / "run-toy" / "metrics.json").read_text("utf-8"))
    assert "readable" in metrics["modes"]["independent"]["toy_answered"]
    # the variant declared itself answer-preserving: its items record it, and FlipRate counts them (no other edit)
    assert all(it.roles == ["preserves_answer", "keeps_facts"] for it in t9)
    consistency = metrics["modes"]["independent"]["consistency"]
    assert consistency["FlipRate_T11"]["n"] == consistency["FlipRate"]["n"] > 0
    assert list((tmp_path / "report-toy").rglob("toy_items*.png"))
    exported = (tmp_path / "export-toy" / "items.jsonl").read_text("utf-8").splitlines()
    assert len(exported) == sum(1 for it in bench.items if it.variant == "clean" and it.form == "mcq")
    imported = load_bench(tmp_path / "bench-imported")
    assert sorted(it.task for it in imported.items) == sorted(json.loads(x)["task"] for x in exported)


def test_the_doc_modules_register_one_of_each(tmp_path: Path) -> None:
    """Fast: import the doc's package in a child process (no install) and look every entry up."""
    _write_files(tmp_path)
    code = """
import medr2_toy  # noqa: F401
from medr2.interop.common import TASK_STAGE
from medr2.interop.exporters import EXPORTERS
from medr2.interop.importers import IMPORTERS
from medr2.models.registry import load_adapter
from medr2.perturb.registry import PERTURBATIONS, all_codes, item_roles, parse_variants, text_codes
from medr2.registry import RegistryCollision, register_source
from medr2.reporting.plots import PLOTS
from medr2.scoring.metrics import METRIC_GROUPS
from medr2.sources.base import get_source
from medr2.tasks import chain_preference

assert get_source("toy:3").plan(0, None) == ["toy000", "toy001", "toy002"]
assert TASK_STAGE["toy.brightness"] == 1 and "toy.brightness" not in chain_preference()[1]
assert all_codes()[-1] == "T11" and "T11" in text_codes() and parse_variants("T11,T1") == ("T1", "T11")
assert PERTURBATIONS["T11"].roles == {"preserves_answer", "keeps_facts"}
assert item_roles("T11", None, {"scoring": "exact"}) == ("preserves_answer", "keeps_facts")
assert load_adapter("toy:yes").generate([1, 2])[1].text == "yes"
assert "toy-jsonl" in IMPORTERS and "toy-jsonl" in EXPORTERS and "toy_items" in PLOTS
assert "toy_answered" in METRIC_GROUPS
try:
    register_source("toy")(lambda arg: None)
except RegistryCollision as e:
    assert "source 'toy' is already registered" in str(e)
else:
    raise AssertionError("a second 'toy' source was accepted")
print("ok")
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "medr2-toy"), str(SRC)])}
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stdout + r.stderr


# -- "Adding a X: N file": each extension point's promise, proved through the front door ------------------------

_SECTION = re.compile(r"^## ", re.M)
_PROMISE = re.compile(r"^\*\*Adding (an? [\w ]+): (\d+) files?\.\*\*$", re.M)

# the front-door decorator (``from medr2 import ...``) whose docstring repeats the promise
DECORATORS = {"a source": "register_source", "a task": "task", "a variant": "register_variant",
              "an importer": "register_importer", "an exporter": "register_exporter",
              "a model adapter": "register_adapter", "a metric group": "register_metric", "a plot": "register_plot"}

_SAMPLE = "medr2.build('sample', 'b', cases=2, workers=1)\n"
_SCORED = _SAMPLE + "medr2.evaluate('b', 'baseline:random', 'r', split='all')\nmedr2.score('r', resamples=0)\n"
# what each extension does through the front door once its module is installed (run in a fresh process)
FRONT_DOOR = {
    "a source": "b = medr2.build('toy:3', 'b', workers=1)\n"
                "assert sorted(c.case_id for c in medr2.load_bench('b').cases) == ['toy000', 'toy001', 'toy002']\n",
    "a task": _SAMPLE + "q = medr2.info('b', quality=True)['toy.brightness']\n"
                        "assert q['items'] == 0 and q['skipped'] == {'no brightness label': 2}, q\n",
    "a variant": "medr2.build('sample', 'b', cases=2, workers=1, variants='T11')\n"
                 "medr2.evaluate('b', 'baseline:oracle', 'r', split='all', variants='all')\n"
                 "medr2.score('r', resamples=0)\n"
                 "c = json.loads(Path('r/metrics.json').read_text())['modes']['independent']['consistency']\n"
                 "assert c['FlipRate_T11']['n'] == c['FlipRate']['n'] > 0, c\n",
    "an importer": "from PIL import Image\nimport numpy as np\n"
                   "Image.fromarray(np.full((32, 32), 90, np.uint8)).save('img.png')\n"
                   "Path('in.jsonl').write_text(json.dumps({'image': 'img.png', 'task': 's1.modality', "
                   "'question': 'Which modality?', 'answer': 'A', 'options': ['X-ray', 'CT'], "
                   "'modality': 'X-ray'}) + '\\n')\n"
                   "medr2.import_dataset('toy-jsonl', 'in.jsonl', 'b')\n"
                   "assert [it.task for it in medr2.load_bench('b').items] == ['s1.modality']\n",
    "an exporter": _SAMPLE + "medr2.convert('b', 'toy-jsonl', 'x')\n"
                             "b = medr2.load_bench('b')\n"
                             "n = sum(it.variant == 'clean' and it.form == 'mcq' for it in b.items)\n"
                             "assert len(Path('x/items.jsonl').read_text().splitlines()) == n > 0\n",
    "a model adapter": _SAMPLE + "medr2.evaluate('b', 'toy:bright', 'r', split='all')\n"
                                 "rows = set(sqlite3.connect('r/store.sqlite').execute("
                                 "'SELECT raw, status, model_key FROM predictions'))\n"
                                 "assert rows == {('bright', 'ok', 'toy:bright')}, rows\n",
    "a metric group": _SCORED + "m = json.loads(Path('r/metrics.json').read_text())['modes']['independent']\n"
                                "assert 'readable' in m['toy_answered'], m['toy_answered']\n",
    "a plot": _SCORED + "medr2.report('r', 'rep')\nassert list(Path('rep').rglob('toy_items*.png'))\n",
}


def _promises() -> dict[str, tuple[int, list[str]]]:
    """Per extension: the number of files its section of docs/extending.md promises, and its ``# file:`` blocks."""
    out: dict[str, tuple[int, list[str]]] = {}
    for section in _SECTION.split(DOC.read_text("utf-8")):
        m = _PROMISE.search(section)
        if m:
            blocks = [code for _, code in _BLOCK.findall(section) if _FILE.match(code)]
            out[m.group(1)] = (int(m.group(2)), [code[_FILE.match(code).end():] for code in blocks])  # type: ignore[union-attr]
    return out


def test_each_extension_point_promises_its_files_in_the_doc_and_its_decorator() -> None:
    promises = _promises()
    assert set(promises) == set(DECORATORS) == set(FRONT_DOOR)
    for what, (n, files) in promises.items():
        assert len(files) == n, what  # the section's own files are the ones promised
        doc = " ".join((getattr(medr2, DECORATORS[what]).__doc__ or "").split())
        assert f"Adding {what}: {n} file" in doc, (what, doc)


@pytest.mark.parametrize("what", sorted(FRONT_DOOR))
def test_adding_an_extension_takes_the_files_promised(tmp_path: Path, what: str) -> None:
    """A distribution holding exactly the promised files (the section's module), its entry point naming it, works
    through the front door: the source's cases in a build, the task run on every case, the variant counted in
    FlipRate (it declares itself answer-preserving), the importer's items in a bench, the exporter's file, the
    adapter answering an eval, the metric group's block in metrics.json, the plot in a report."""
    n, files = _promises()[what]
    assert n == len(files) == 1
    site = tmp_path / "site"
    fake_distribution(site, files[0])
    code = "import json, sqlite3\nfrom pathlib import Path\nimport medr2\n" + FRONT_DOOR[what] + "print('ok')\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
