"""The confidence of each scored answer of a run (``medr2.scoring.calibration``): the stored per-answer
probabilities (``Prediction.confidence``: logprobs, loglik, prior), the log-likelihood note of an ``hf:`` run
stored before the confidence column existed, or — where the eval asked for it (``--confidence verbal``) — the
confidence the answer states (``medr2.scoring.extract.confidence``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medr2.models.confidence import from_loglik_note
from medr2.run.manifest import eval_option
from medr2.run.store import Store
from medr2.scoring.calibration import row_confidence
from medr2.scoring.extract.common import strip_reasoning
from medr2.scoring.extract.confidence import read_confidence


def run_confidences(run_dir: Path, rows: pd.DataFrame, manifest: Mapping[str, Any]
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per tidy row: the confidence in its answer (NaN: none), its source (None: none) and the stored per-answer
    probabilities (a dict; None for a verbal or no confidence)."""
    verbal = eval_option(dict(manifest), "confidence") == "verbal"
    stored: dict[tuple[str, str], tuple[str | None, Any, str | None]] = {}
    with Store.open(run_dir) as store:
        for sp in store.iter_predictions():
            p = sp.prediction
            key = (p.item_id, p.mode)
            if key in stored and stored[key][2] == "ok" and p.status != "ok":
                continue  # the answer that counts: the latest ok one
            notes = [n for n in sp.meta.get("notes", ()) if str(n).startswith("choice by log-likelihood")]
            conf: Any = p.confidence.model_dump() if p.confidence is not None else (notes[-1] if notes else None)
            stored[key] = (p.raw if verbal else None, conf, p.status)
    n = len(rows)
    out = np.full(n, np.nan)
    src = np.full(n, None, dtype=object)
    probs = np.full(n, None, dtype=object)
    for k, (iid, mode, form, parsed) in enumerate(zip(rows["item_id"], rows["mode"], rows["form"], rows["parsed"],
                                                      strict=True)):
        raw, conf, status = stored.get((iid, mode), (None, None, None))
        if status != "ok":
            continue
        if isinstance(conf, str):  # an old hf run's note
            got = from_loglik_note(conf, str(form))
            conf = got.model_dump() if got is not None else None
        value: float | None = None
        source: str | None = None
        if isinstance(conf, dict):
            value, source = row_confidence(parsed, conf.get("probs")), str(conf.get("source"))
            probs[k] = conf.get("probs")
        elif verbal and raw is not None:
            value, source = read_confidence(strip_reasoning(raw)), "verbal"
        if value is not None:
            out[k], src[k] = value, source
    return out, src, probs

