"""The package states version ranges; the exact set CI installs lives in constraints.txt (issue 50, point 14).

A researcher installs `medr2[hf]` beside their own CUDA torch and vLLM: exact pins in the extras would downgrade them
or conflict. These tests hold the three halves of that together:
- every requirement in pyproject.toml is a range, never an exact pin (fast);
- every pin in constraints.txt lies inside the range that names it, and every install script installs through the
  constraints file instead of repeating a version (fast);
- pip's real resolver, run as a dry run against the package index (metadata only: no multi-GB wheel is downloaded),
  resolves every extra beside the lowest versions the ranges claim and beside the constrained (current) versions;
  `python -m build` makes an sdist and a wheel that `twine check` passes (slow: network and a build).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CONSTRAINTS = ROOT / "constraints.txt"
# Every script that installs packages: the installer, the environment scripts, CI and the peers' bench set-up.
INSTALL_SCRIPTS = sorted([*ROOT.glob("scripts/*.sh"), ROOT / ".ci" / "run", *ROOT.glob("bench/*.sh")])


def _requirements() -> dict[str, list[Requirement]]:
    """The core dependencies ("") and every extra, self-references (`medr2[...]`) left out."""
    project = PYPROJECT["project"]
    out = {"": [Requirement(r) for r in project["dependencies"]]}
    for extra, reqs in project["optional-dependencies"].items():
        out[extra] = [Requirement(r) for r in reqs if canonicalize_name(Requirement(r).name) != "medr2"]
    return out


def _pins() -> dict[str, Version]:
    pins = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            req = Requirement(line)
            (spec,) = req.specifier
            assert spec.operator == "==", f"constraints.txt: {line!r} is not an exact pin"
            pins[canonicalize_name(req.name)] = Version(spec.version)
    return pins


def _ranges() -> dict[str, SpecifierSet]:
    """Each package's range: the intersection of every requirement that names it."""
    out: dict[str, SpecifierSet] = {}
    for reqs in _requirements().values():
        for r in reqs:
            name = canonicalize_name(r.name)
            out[name] = out.get(name, SpecifierSet()) & r.specifier
    return out


def _lower(spec: SpecifierSet) -> Version | None:
    lows = [Version(s.version) for s in spec if s.operator in (">=", "~=")]
    return max(lows) if lows else None


def test_every_requirement_is_a_range() -> None:
    for extra, reqs in _requirements().items():
        for r in reqs:
            pinned = [s for s in r.specifier if s.operator in ("==", "===")]
            where = extra or "dependencies"
            assert not pinned, f"pyproject.toml [{where}]: {r} pins an exact version; state a range and put the " \
                               "pin in constraints.txt"


def test_each_constraint_lies_inside_its_range() -> None:
    ranges = _ranges()
    scripts = "\n".join(p.read_text() for p in INSTALL_SCRIPTS)
    for name, version in _pins().items():
        if name in ranges:
            assert version in ranges[name], f"constraints.txt: {name}=={version} is outside pyproject's {ranges[name]}"
            low = _lower(ranges[name])
            assert low is not None, f"pyproject.toml: {name} {ranges[name]} states no lower bound"
        else:  # an environment-only package (torchvision): a script must install it
            assert re.search(rf"\b{re.escape(name)}\b", scripts), f"constraints.txt: {name} is installed by nothing"
    # the packages that were pinned in the extras before are all constrained, so CI installs exactly what it did
    for name in ("torch", "transformers", "accelerate", "trl", "peft", "datasets", "ray", "pydicom"):
        assert name in _pins(), f"constraints.txt does not pin {name}"


def _pip_installs(script: Path) -> list[str]:
    """Each `pip install ...` command in a shell script, continuation lines joined."""
    text = script.read_text().replace("\\\n", " ")
    return [line for line in text.splitlines()
            if re.search(r"\bpip\"? install\b", line) and not line.lstrip().startswith("#")]


def test_install_scripts_go_through_the_constraints_file() -> None:
    pinned = _pins()
    seen = 0
    for script in INSTALL_SCRIPTS:
        for cmd in _pip_installs(script):
            seen += 1
            for name in pinned:  # no script repeats a version that constraints.txt owns
                hard = re.search(rf"[\"' ]{re.escape(name)}(\[[^\]]*\])?={{2,3}}\d", cmd, re.IGNORECASE)
                assert not hard, f"{script.relative_to(ROOT)}: {cmd.strip()!r} hard-codes {name}'s version"
            names = {canonicalize_name(m) for m in re.findall(r"[\"' ]([A-Za-z][\w.-]*)(?=[\[=<>!~\"' ]|$)", cmd)}
            installs_medr2 = re.search(r"-e \"?\.(\[|\"| |$)", cmd) is not None
            if installs_medr2 or names & set(pinned):
                assert re.search(r"-c \S+", cmd), f"{script.relative_to(ROOT)}: {cmd.strip()!r} installs without " \
                                                  "-c constraints.txt"
    assert seen >= 10, f"found only {seen} pip install commands: the scan is broken"


def test_install_sh_installs_the_cpu_build_of_torch_and_checks_it() -> None:
    text = (ROOT / "scripts" / "install.sh").read_text()
    first = next(cmd for cmd in _pip_installs(ROOT / "scripts" / "install.sh") if "torch" in cmd)
    assert "+cpu" in first, f"install.sh installs torch without naming its CPU build: {first.strip()!r}"
    assert "torch.version.cuda" in text and "nvidia-" in text, "install.sh does not check that no CUDA build got in"


def _resolve(tmp_path: Path, reqs: list[str], constraints: Path | None) -> dict[str, str]:
    """pip's resolver, as a dry run from an empty environment: the versions it would install (metadata only)."""
    req_file = tmp_path / "requirements.txt"
    req_file.write_text("\n".join(reqs) + "\n")
    report = tmp_path / "report.json"
    cmd = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
           "--report", str(report), "-r", str(req_file)]
    if constraints is not None:
        cmd += ["-c", str(constraints)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"pip could not resolve {reqs}:\n{proc.stderr[-3000:]}"
    return {canonicalize_name(i["metadata"]["name"]): i["metadata"]["version"]
            for i in json.loads(report.read_text())["install"]}


def _extras_requirements() -> list[str]:
    """Every extra medr2 installs into one environment (`vllm` pins its own torch and transformers: left out)."""
    out = []
    for extra, reqs in _requirements().items():
        if extra not in ("", "vllm"):
            out += [str(r) for r in reqs]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("end", ["lowest", "constrained"])
def test_extras_resolve_at_both_ends_of_their_ranges(tmp_path: Path, end: str) -> None:
    """`lowest`: every constrained package at the lower bound of its range at once (torch, transformers, trl, peft,
    accelerate, datasets, ray, pydicom); `constrained`: with -c constraints.txt, CI's exact set."""
    ranges, pins = _ranges(), _pins()
    reqs = [str(r) for r in _requirements()[""]] + _extras_requirements()
    if end == "lowest":
        wanted = {name: _lower(ranges[name]) for name in pins if name in ranges}
        reqs += [f"{name}=={v}" for name, v in wanted.items()]
        got = _resolve(tmp_path, reqs, None)
    else:
        wanted = {name: v for name, v in pins.items() if name in ranges}
        got = _resolve(tmp_path, reqs, CONSTRAINTS)
    for name, version in wanted.items():
        assert name in got, f"{name} is not in the resolution"
        assert Version(Version(got[name]).public) == version, f"{end}: {name} resolved to {got[name]}, not {version}"


@pytest.mark.slow
def test_build_makes_an_sdist_and_a_wheel_that_twine_accepts(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    proc = subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(dist), str(ROOT)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    sdists, wheels = sorted(dist.glob("*.tar.gz")), sorted(dist.glob("*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, sorted(p.name for p in dist.iterdir())
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, sdists + wheels)],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0, check.stdout + check.stderr
    # the wheel declares the ranges, not the pins, and carries the report's templates
    with zipfile.ZipFile(wheels[0]) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
        assert any(n.endswith(".jinja") for n in z.namelist()), "the wheel lacks the report's templates"
    declared = [Requirement(line.split(":", 1)[1].strip()) for line in meta.splitlines()
                if line.startswith("Requires-Dist:")]
    torch = [r for r in declared if canonicalize_name(r.name) == "torch"]
    assert torch and all(Version("2.13.0") in r.specifier and not any(s.operator == "==" for s in r.specifier)
                         for r in torch), torch
