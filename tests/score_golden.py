"""Golden hashes of ``medr2 score`` on a few demo-sized runs: ``metrics.json`` (its run folder, git commit and
medr2 version blanked, everything else byte for byte) and ``scores.parquet``. The hashes were written by the
whole-table scorer before scoring streamed (issue 16), so the streaming scorer is checked against the old one
byte for byte (and ``claims.parquet`` where a run has rationales). Regenerate only after a reviewed change
of a metric with ``.venv/bin/python tests/score_golden.py`` (writes ``tests/data/score_golden.json``)."""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent))
from tests.run_fixtures import make_bench  # noqa: E402

GOLDEN = Path(__file__).parent / "data" / "score_golden.json"
ALL_MODES = ("independent", "blind", "chain-own", "chain-gold", "chain-misleading")
# (name, model, modes): every metric group is fed by at least one of these runs
RUNS = (("random-all-modes", "baseline:random", ALL_MODES),
        ("follow-hint", "baseline:follow-hint", ("independent",)),
        ("oracle-chain", "baseline:oracle", ("independent", "chain-own")),
        ("blind-model", "baseline:blind", ("independent", "blind")),
        ("ungrounded-rationale", "baseline:ungrounded", ("independent",)))
SEED, RESAMPLES = 3, 200


def normalised_metrics(data: bytes) -> bytes:
    """``metrics.json`` with the fields that name where and by which checkout it was scored blanked, and the
    bench's checksum (the bytes of ``items.parquet``, which the sorted writer of issue 16 changed for the same
    rows; the bench's own tests pin those); the rest re-dumped as the scorer dumps it (floats round-trip
    exactly, so every other byte is kept)."""
    m = json.loads(data)
    m["run"].update(run_dir="RUN", git_commit=None, medr2_version=None)
    m["run"]["bench"]["checksum"] = None
    return (json.dumps(m, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def build_fixture_run(base: Path, name: str) -> Path:
    """Build the fixture bench and one of its runs (``RUNS``' name), not scored, under ``base``; returns the run."""
    from medr2 import ModelConfig
    from medr2.run.runner import EvalConfig, run_eval

    bench = make_bench(base / "bench", n_cases=6)
    for run_name, model, modes in RUNS:
        if run_name == name:
            run_eval(EvalConfig(bench=bench.root, model=ModelConfig(model), out=base / name, modes=modes, split="all"))
            return base / name
    raise KeyError(name)


def score_fixture_runs(base: Path, **score_kwargs: Any) -> dict[str, dict[str, str]]:
    """Build the fixture bench and runs under ``base``, score each, return the hashes per run."""
    from medr2 import ModelConfig
    from medr2.run.runner import EvalConfig, run_eval
    from medr2.scoring.scorer import score_run

    bench = make_bench(base / "bench", n_cases=6)
    out: dict[str, dict[str, str]] = {}
    for name, model, modes in RUNS:
        run = base / name
        if not (run / "manifest.json").is_file():
            run_eval(EvalConfig(bench=bench.root, model=ModelConfig(model), out=run, modes=modes, split="all"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            score_run(run, seed=SEED, n_resamples=RESAMPLES, mixed_splits=True, **score_kwargs)
        out[name] = {
            "metrics.json": hashlib.sha256(normalised_metrics((run / "metrics.json").read_bytes())).hexdigest(),
            "scores.parquet": hashlib.sha256((run / "scores.parquet").read_bytes()).hexdigest(),
        }
        if (run / "claims.parquet").is_file():
            out[name]["claims.parquet"] = hashlib.sha256((run / "claims.parquet").read_bytes()).hexdigest()
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as d:
        got = score_fixture_runs(Path(d))
    GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    print(json.dumps(got, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
