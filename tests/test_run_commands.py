"""``medr2 eval --model-option KEY=VALUE``: parsed values reach the adapter and the run manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from medr2 import BadInput
from medr2.cli import app as cli_app
from medr2.models.options import parse_model_options
from tests.run_fixtures import make_bench
from tests.train_fixtures import tiny_vlm_dir as build_tiny


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(tmp_path_factory)


def test_values_are_json_when_they_read_as_json() -> None:
    got = parse_model_options(["dtype=float32", "max_model_len=2048", "check_image_hash=false", "x=[1, 2]",
                               "path=/a=b", "empty="])
    assert got == {"dtype": "float32", "max_model_len": 2048, "check_image_hash": False, "x": [1, 2],
                   "path": "/a=b", "empty": ""}
    assert parse_model_options(None) == {}


@pytest.mark.parametrize("bad", ["dtype", "=float32", " =1"])
def test_a_pair_without_key_or_equals_is_refused(bad: str) -> None:
    with pytest.raises(BadInput, match="KEY=VALUE"):
        parse_model_options([bad])


def eval_hf(tiny: Path, tmp_path: Path, n_cases: int, *options: str) -> tuple[Path, Result]:
    bench = make_bench(tmp_path / "bench", n_cases=n_cases)
    app = cli_app
    run = tmp_path / "run"
    args = ["eval", "--bench", str(bench.root), "--model", f"hf:{tiny}", "--out", str(run), "--max-new-tokens", "4",
            "--no-progress"]
    for o in options:
        args += ["--model-option", o]
    return run, CliRunner().invoke(app, args)


def test_options_reach_the_hf_adapter_and_the_manifest(tiny: Path, tmp_path: Path) -> None:
    run, res = eval_hf(tiny, tmp_path, 2, "dtype=float32", "attn_implementation=eager")
    assert res.exit_code == 0, res.output
    settings = json.loads((run / "manifest.json").read_text("utf-8"))["model"]["settings"]
    assert settings["dtype"] == "float32" and settings["attn_implementation"] == "eager"


def test_an_unknown_option_is_refused_before_anything_runs(tiny: Path, tmp_path: Path) -> None:
    run, res = eval_hf(tiny, tmp_path, 1, "colour=blue")
    assert res.exit_code != 0
    assert "colour" in str(res.exception) + res.output
    assert not (run / "manifest.json").exists()
