"""The public API (``medr2.api``, re-exported lazily from ``medr2``): the verbs mirror the commands, and a
plain Python function is a model, run through a real eval and scored."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import medr2
from medr2 import Request, Response, api
from tests.run_fixtures import make_bench

HEAVY = ("numpy", "pyarrow", "PIL", "pydantic", "torch", "pandas")


def test_import_medr2_is_light_and_names_resolve() -> None:
    code = ("import sys, medr2; names = [n for n in medr2.__all__ if not hasattr(medr2, n)]; "
            f"print(names, [m for m in {HEAVY!r} if m in sys.modules])")
    # the first line imports only medr2; resolving the names afterwards loads what they need
    light = subprocess.run([sys.executable, "-c", f"import sys, medr2; print([m for m in {HEAVY!r} "
                            "if m in sys.modules])"], capture_output=True, text=True, timeout=120, check=True)
    assert light.stdout.strip() == "[]"
    full = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert full.stdout.startswith("[] "), full.stdout  # every name in __all__ resolves


def test_verbs_take_the_command_line_option_names() -> None:
    from typer.main import get_command

    from medr2.cli import app

    cli = get_command(app)
    pairs = {"build": "build", "info": "info", "materialise": "materialise", "eval": "evaluate", "merge": "merge",
             "score": "score", "report": "report", "export": "export", "finetune": "finetune",
             "import": "import_dataset", "convert": "convert", "perturb": "add_variants",
             "variants-sheet": "variants_sheet", "contact-sheet": "contact_sheet", "tiny-vlm": "tiny_vlm",
             "vllm-export": "vllm_export", "demo": "demo", "view": "view", "review": "review"}
    assert set(pairs) == set(cli.commands)  # type: ignore[attr-defined]
    display_only = {("info", "json"), ("eval", "no_progress")}  # how the command prints, not what it does
    for command, verb in pairs.items():
        params = set(inspect.signature(getattr(api, verb)).parameters)
        for p in cli.commands[command].params:  # type: ignore[attr-defined]
            long = [o for o in p.opts if o.startswith("--")]
            name = long[0][2:].replace("-", "_") if long else p.name
            name = {"fmt": "format"}.get(name, name)  # the argument shown as FORMAT
            if (command, name) in display_only:
                continue
            assert name in params, f"medr2.{verb} lacks {name!r} (medr2 {command} {p.opts or p.name})"


def test_no_module_of_medr2_shares_its_name_with_a_verb() -> None:
    """A verb of the front door is only ever the function: no top-level module or package is named like one (the
    build, score, report, view and demo rooms are ``builder``, ``scoring``, ``reporting``, ``viewer``,
    ``demokit``), so ``medr2.score`` is the verb whatever was imported before."""
    import pkgutil

    modules = {m.name for m in pkgutil.iter_modules(medr2.__path__)}
    assert modules, "no module found"
    assert not modules & set(api.VERBS), sorted(modules & set(api.VERBS))
    importlib.import_module("medr2.scoring.scorer")  # importing a room sets no verb's attribute
    for verb in api.VERBS:
        assert getattr(medr2, verb) is getattr(api, verb), verb


def _oracle(bench_root: Path):  # noqa: ANN202
    bench = api.load_bench(bench_root)
    by_id = {it.item_id: it for it in bench.items}

    def model(request: Request) -> str | Response:
        item = by_id[request.item_id]
        if item.form == "box":
            raise RuntimeError("no boxes here")
        if item.form == "text":
            return Response(status="ok", text=item.answer)
        return item.answer

    return model, by_id


def test_a_python_function_is_a_model(tmp_path: Path) -> None:
    bench = make_bench(tmp_path / "bench", n_cases=4)
    model, by_id = _oracle(bench.root)
    run = tmp_path / "run"
    summary = medr2.evaluate(bench.root, model, run, split="all", command=["test"])
    n_box = sum(1 for it in by_id.values() if it.form == "box")
    c = summary.modes["independent"]
    assert (c.ok, c.error) == (len(by_id) - n_box, n_box) and n_box > 0
    metrics = medr2.score(run, mixed_splits=True, resamples=0)
    scores = pq.read_table(run / "scores.parquet").to_pylist()
    assert {r["model_key"] for r in scores} == {f"python:{model.__module__}.{model.__qualname__}"}
    for r in scores:
        assert r["verdict"] == ("error" if r["form"] == "box" else "correct"), r
    m = metrics["modes"]["independent"]
    assert m["rates"]["error"]["value"] == pytest.approx(n_box / len(scores))
    # a rerun of the same function resumes: nothing is asked again
    again = medr2.evaluate(bench.root, model, run, split="all", command=["test"])
    assert again.sent == 0 and again.modes["independent"].stored_before == len(by_id)


def _predictions(run: Path) -> list:  # type: ignore[type-arg]
    from medr2.run.store import Store

    st = Store.open(run)
    try:
        return list(st.iter_predictions())
    finally:
        st.close()


def test_a_wrong_return_type_is_that_requests_error(tmp_path: Path) -> None:
    bench = make_bench(tmp_path / "bench", n_cases=2)
    summary = api.evaluate(bench.root, lambda request: 42, tmp_path / "run", split="all", name="answers-42",
                           command=["t"])
    c = summary.modes["independent"]
    assert c.ok == 0 and c.error == c.planned > 0
    errors = {p.prediction.error for p in _predictions(tmp_path / "run")}
    assert errors == {"the model function returned int, not str or Response"}
    assert {p.prediction.model_key for p in _predictions(tmp_path / "run")} == {"python:answers-42"}


def test_import_dataset_returns_a_written_bench_and_convert_takes_a_path(tmp_path: Path) -> None:
    from tests.test_interop_importers import _vqarad

    src = _vqarad(tmp_path / "rad")
    out = tmp_path / "bench"
    res = medr2.import_dataset("vqa-rad", src, out)
    assert res.manifest is not None and (out / "manifest.json").is_file()
    assert len(api.load_bench(out).items) == len(res.items) > 0
    summary = medr2.convert(out, "hf", tmp_path / "hf")
    assert sum(summary["splits"].values()) == len(res.items)


def test_build_and_add_variants_match_the_commands(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from medr2.cli import app

    run = CliRunner().invoke
    assert run(app, ["build", "--source", "sample", "--out", str(tmp_path / "cli"), "--cases", "3", "--workers",
                     "1"]).exit_code == 0
    assert run(app, ["perturb", str(tmp_path / "cli"), "--variants", "T3,V2", "--workers", "1"]).exit_code == 0
    res = medr2.build("sample", tmp_path / "api", cases=3, workers=1)
    assert res.n_cases == 3
    manifest, made, _ = medr2.add_variants(tmp_path / "api", "T3,V2", workers=1)
    assert made and manifest["checksums"]["bench"] == api.load_bench(tmp_path / "cli").checksum
    assert api.info(tmp_path / "api")["counts"] == api.info(tmp_path / "cli")["counts"]
