"""What the clinician review of a bench comes to (docs/review.md): the counts of ``medr2.bench.reviews``
(reviewed share, outcomes, acceptance rate) and the reviewers' agreement per task: for each task and each pair
of reviewers who gave a verdict on the same items, Cohen's κ and raw agreement over their verdicts (accept /
fix / reject), each with its 95% bootstrap interval over those items and n, computed as the judge audit
computes its own (:func:`medr2.scoring.judge.agreement_cells`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from medr2.bench.reviews import (
    Reviews,
    Through,
    bench_parents,
    has_reviews,
    pairs_by_task,
    read_reviews,
    review_counts,
    settled_fixes,
)
from medr2.scoring.judge import agreement_cells
from medr2.scoring.stats import seed_for

RESAMPLES = 1000


def task_of(bench: Path | str, ids: set[str]) -> dict[str, str]:
    """The task of each of ``ids`` the bench holds (two columns of the rows holding them)."""
    from medr2.bench.table import BenchTable, ItemFilter

    table = BenchTable(bench)
    out: dict[str, str] = {}
    if ids:
        for cols in table.column_values(["item_id", "task"], ItemFilter(item_ids=frozenset(ids))):
            out.update(zip(cols["item_id"], cols["task"], strict=True))
    return out


def agreement(got: Reviews, tasks: dict[str, str], *, resamples: int = RESAMPLES, seed: int = 0
              ) -> list[dict[str, Any]]:
    """Per task and pair of reviewers (task order, then names): their κ and raw agreement cells."""
    rows = []
    for (task, a, b), pairs in sorted(pairs_by_task(got, tasks).items()):
        cells = agreement_cells([x for x, _ in pairs], [y for _, y in pairs], n_resamples=resamples,
                                seed=seed_for(seed, "review-agreement", task, a, b))
        rows.append({"task": task, "a": a, "b": b, "kappa": cells["kappa"],
                     "agreement": cells["agreement"]["value"], "agreement_ci": cells["agreement"]})
    return rows


def review_summary(bench: Path | str, *, resamples: int = RESAMPLES, through: Through | None = None,
                   ) -> dict[str, Any] | None:
    """The review block of ``medr2 info`` and the dataset card (None where the bench has no reviews file)."""
    from medr2.bench.table import BenchTable

    if not has_reviews(bench):
        return None
    got = read_reviews(bench, through)
    out = review_counts(got, BenchTable(bench).n_items)
    fixed, skipped = settled_fixes(got, bench_parents(bench))
    out["fixes"] = {"items": len(fixed), "skipped": dict(sorted(skipped.items()))}
    out["agreement"] = agreement(got, task_of(bench, {r.item_id for r in got.reviews}), resamples=resamples)
    return out


__all__ = ["agreement", "review_summary", "task_of"]
