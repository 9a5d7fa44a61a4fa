"""``medr2 score --slice/--harm`` end to end on a sample bench answered by a scripted Python function: the files it
writes, metrics.json untouched, the slices' values against the script, bad input, and the fields `medr2 info`
lists."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import medr2
from medr2 import Request, api

SRC = str(Path(medr2.__file__).resolve().parents[1])


def _medr2(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "medr2.cli", *args], capture_output=True, text=True, timeout=300,
                          env=env)


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory: pytest.TempPathFactory, build_sample) -> tuple[Path, Path]:  # type: ignore[no-untyped-def]
    """A sample bench (with T2/T3 variants) and a run of a script that is right exactly on the MRI cases."""
    root = tmp_path_factory.mktemp("slices")
    bench = build_sample(root / "bench", n_cases=30, variants="T2,T3")
    loaded = api.load_bench(bench)
    items = {it.item_id: it for it in loaded.items}
    modality = {c.case_id: c.modality for c in loaded.cases}

    def script(request: Request) -> str:
        it = items[request.item_id]
        right = modality[it.case_id] == "MRI"
        if it.form == "box":
            b = it.answer_box or (0.0, 0.0, 1.0, 1.0)  # wrong: 2 pixels ([0, 0, 1, 1] reads as the whole image, 0-1)
            return json.dumps(list(b) if right else [0, 0, 2, 2])
        if it.form == "yesno":
            return it.answer if right else ("no" if it.answer == "yes" else "yes")
        if it.form == "text":
            return it.answer if right else "nothing"
        if it.form == "multi":
            return (it.answer or "none") if right else ("A" if it.answer != "A" else "B")
        return it.answer if right else next(chr(65 + i) for i in range(len(it.options)) if chr(65 + i) != it.answer)

    run = root / "run"
    medr2.evaluate(bench, script, run, command=["test"], split="all")
    return bench, run


def test_score_with_slices_writes_its_own_files_and_leaves_metrics_alone(scripted_run: tuple[Path, Path],
                                                                        tmp_path: Path) -> None:
    bench, run = scripted_run
    plain = _medr2("score", str(run), "--mixed-splits", "--resamples", "200")
    assert plain.returncode == 0, plain.stderr
    metrics = (run / "metrics.json").read_bytes()
    assert not (run / "slices.json").exists() and not (run / "harm.json").exists()

    done = _medr2("score", str(run), "--mixed-splits", "--resamples", "200", "--slice", "modality", "--slice",
                  "sex,modality", "--slice", "task", "--slice-min-cases", "3")
    assert done.returncode == 0, done.stderr
    assert (run / "metrics.json").read_bytes() == metrics  # byte-identical without --harm
    first = (run / "slices.json").read_bytes()
    doc = json.loads(first)
    mode = doc["modes"]["independent"]
    cases = {c.case_id: c for c in api.load_bench(bench).cases}
    by_mod = {s["label"]: s for s in mode["modality"]["slices"]}
    assert set(by_mod) == {c.modality for c in cases.values()}
    assert sum(s["n_cases"] for s in by_mod.values()) == len(cases)
    for label, s in by_mod.items():  # the script is right on MRI cases, wrong elsewhere
        acc = s["metrics"]["accuracy"]
        assert acc["value"] == (1.0 if label == "MRI" else 0.0), (label, acc)
        assert acc["n_cases"] == s["n_cases"] == sum(c.modality == label for c in cases.values())
    gap = mode["modality"]["gaps"]["accuracy"]
    assert gap["high"] == "MRI" and gap["delta"] == 1.0 and gap["significant"]
    assert "missing" in doc and "largest accuracy gap MRI" in done.stdout
    # sex: a value where the case carries one, else the slice "missing" (never dropped)
    sexes = {c.meta.get("sex", "missing") for c in cases.values()}
    combos = mode["sex,modality"]["slices"]
    assert {s["key"]["sex"] for s in combos} == sexes
    assert sum(s["n_cases"] for s in combos) == len(cases)
    if "missing" in sexes:
        assert "sex" in doc["missing"]
    assert json.loads((run / "harm.json").read_bytes())["modes"]["independent"]["high_risk_error"]["value"] > 0

    again = _medr2("score", str(run), "--mixed-splits", "--resamples", "200", "--slice", "modality", "--slice",
                   "sex,modality", "--slice", "task", "--slice-min-cases", "3")
    assert again.returncode == 0 and (run / "slices.json").read_bytes() == first  # same seed, same bytes

    harm = tmp_path / "harm.yaml"
    harm.write_text("tasks:\n  s1.modality: high\nweights:\n  high: 20\n")
    with_harm = _medr2("score", str(run), "--mixed-splits", "--resamples", "200", "--harm", str(harm))
    assert with_harm.returncode == 0, with_harm.stderr
    m = json.loads((run / "metrics.json").read_bytes())
    assert m["run"]["harm"]["file"] == str(harm) and m["run"]["harm"]["tasks"] == {"s1.modality": "high"}
    del m["run"]["harm"]
    assert m == json.loads(metrics)  # the override changes no accuracy figure
    assert not (run / "slices.json").exists()  # a rescoring removes slices of the old scores

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"weights": {"high": "lots"}}))
    refused = _medr2("score", str(run), "--mixed-splits", "--harm", str(bad))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert str(bad) in refused.stderr and "weights.high" in refused.stderr
    unknown = _medr2("score", str(run), "--mixed-splits", "--slice", "shoe_size")
    assert unknown.returncode == 2 and "shoe_size" in unknown.stderr and "Traceback" not in unknown.stderr
    assert pq.read_table(run / "scores.parquet").num_rows > 0  # nothing was scored by a refused command


def test_info_lists_the_slice_fields_and_their_completeness(scripted_run: tuple[Path, Path]) -> None:
    bench, _ = scripted_run
    info = api.info(bench)["slice_fields"]
    cases = api.load_bench(bench).cases
    from medr2.bench.slicefields import SLICE_FIELDS

    assert set(info) == {n for n, f in SLICE_FIELDS.items() if f.level == "case"}
    assert info["modality"]["known"] == info["modality"]["cases"] == len(cases)
    assert info["sex"]["known"] == sum("sex" in c.meta for c in cases)
    assert info["view"]["known"] == sum(c.plane is not None for c in cases)
    shown = _medr2("info", str(bench))
    assert shown.returncode == 0 and "slice fields" in shown.stdout
