"""The rationale audit of a scored run (``medr2 score``): per scored row its audit columns, per claim its verdict in
``RUN/claims.parquet``, per mode its summary for ``metrics.json`` ``claims``; the optional judge of the claims the
rules leave unverifiable (``--judge-claims``). The claims themselves are :mod:`medr2.scoring.claims`'s, imported
on use (a run without rationales never loads the checker's term patterns)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from medr2 import jsonsafe
from medr2.scoring.items import ItemLike
from medr2.scoring.judge import Judge
from medr2.scoring.stream import RowGroupWriter

if TYPE_CHECKING:
    from medr2.run.store import CountedBatch

CLAIMS_FILE = "claims.parquet"  # per-claim verdicts of the rationale audit (medr2.scoring.claims.CLAIMS_FILE)


def _lure_fact(item: ItemLike) -> str | None:
    """The false fact a variant offers: its lure's option text (MCQ); None otherwise."""
    from medr2.records import letter_index

    if not item.lure or item.form != "mcq" or not item.options:
        return None
    i = letter_index(item.lure)
    return item.options[i] if 0 <= i < len(item.options) else None


@dataclass
class _ClaimsOut:
    """What the rationale audit publishes: ``claims.parquet`` (a finished file, moved into place when published)
    and its summary for ``metrics.json``."""

    data: Path
    summary: dict[str, Any]


def _judge_claims(judge: Judge, checked: list[Any], case_ids: Sequence[str], raws: Sequence[str | None],
                  reasonings: Sequence[str | None], truths: Mapping[str, Any], bench_root: Path
                  ) -> list[list[str] | None]:
    """Ask ``judge`` about every claim the rules leave unverifiable (asserted, not hedged away); replace the
    claims it decides, in place. Returns who decided each claim (``rules`` / ``judge``), aligned with ``checked``."""
    import dataclasses

    from medr2.scoring.claims import Truth, rationale_parts
    from medr2.scoring.judge import claim_prompt, judged_claim, read_claim_reply

    pending: list[tuple[int, int]] = []
    prompts: list[str] = []
    for k, claims in enumerate(checked):
        if not claims:
            continue
        texts = dict(rationale_parts(raws[k], reasonings[k]))
        truth = Truth.of(truths[case_ids[k]])
        for j, c in enumerate(claims):
            if judged_claim(c.verdict, c.note) and c.source in texts:
                pending.append((k, j))
                prompts.append(claim_prompt(truth, texts[c.source], c.start, c.end, c.kind, c.denied))
    decided_by: list[list[str] | None] = [None if c is None else ["rules"] * len(c) for c in checked]
    if not prompts:
        return decided_by
    replies = judge.ask(prompts, bench_root)
    for (k, j), reply in zip(pending, replies, strict=True):
        verdict = read_claim_reply(reply)
        if verdict is None or verdict == "unverifiable":
            continue  # an unreadable or undecided reply leaves the rules' verdict (never a guess)
        c = checked[k][j]
        note = "judge"
        if verdict == "contradicted" and c.kind in ("finding", "diagnosis"):
            note = "missed_finding" if c.denied else "hallucinated_finding"
        checked[k][j] = dataclasses.replace(c, verdict=verdict, note=note)
        decided_by[k][j] = "judge"  # type: ignore[index]
    return decided_by


def _claims_summary(checked: Sequence[Any], decided_by: Sequence[Sequence[str] | None], modes: Sequence[str]
                    ) -> dict[str, dict[str, int | float | None]]:
    """Per mode: claims by verdict, and the share of decided claims the judge decided."""
    out: dict[str, dict[str, Any]] = {}
    for claims, by, mode in zip(checked, decided_by, modes, strict=True):
        if not claims:
            continue
        m = out.setdefault(mode, {"claims": 0, "supported": 0, "contradicted": 0, "unverifiable": 0,
                                  "decided_by_rules": 0, "decided_by_judge": 0})
        for c, who in zip(claims, by or (), strict=True):
            m["claims"] += 1
            m[c.verdict] += 1
            if c.verdict != "unverifiable":
                m[f"decided_by_{who}"] += 1
    for m in out.values():
        decided = m["decided_by_rules"] + m["decided_by_judge"]
        m["judge_share"] = m["decided_by_judge"] / decided if decided else None
    return dict(sorted(out.items()))


@dataclass
class _AuditOut:
    """One batch's rationale audit (:meth:`_Audit.compute`): its ``claims.parquet`` rows and per-mode summary."""

    table: pa.Table
    summary: dict[str, dict[str, Any]]


class _Audit:
    """The rationale audit (:mod:`medr2.scoring.claims`), batch by batch: per scored row its counts (kept in the
    tidy columns), per claim its verdict (``claims.parquet``, written as the batches arrive in (mode, item id)
    order, the file's order), per mode the claims by verdict. A run whose answers carry no rationale (content
    before the answer, or the server's reasoning text) gets no audit columns, no ``rationale`` metrics and no
    file (:meth:`close` returns None); the bench's cases are read only once a rationale is met. ``judge``
    (``--judge-claims``) decides the claims the rules leave unverifiable."""

    def __init__(self, bench_root: Path, items: Mapping[str, ItemLike], judge: Judge | None = None, *,
                 folder: Path) -> None:
        self.bench_root, self.items, self.judge, self.folder = bench_root, items, judge, folder
        self.truths: dict[str, dict[str, Any]] | None = None
        self.any = False
        self.writer: RowGroupWriter | None = None
        self.summary: dict[str, dict[str, Any]] = {}

    def compute(self, rows: CountedBatch, item_ids: Sequence[str]
                ) -> tuple[dict[str, list[int]], _AuditOut | None]:
        """Audit one batch of counted rows (``Store.counted_rows``): its per-row counts by audit column, and
        (None when no row carries a rationale) its claims table and per-mode summary, for :meth:`commit`.
        Writes nothing: a worker process computes it, the scorer commits it in batch order."""
        from medr2.scoring.claims import (
            AUDIT_COLUMNS,
            NO_RATIONALE,
            audit_columns,
            check_rows,
            claims_table,
            has_rationale,
        )

        # only the rows that carry a rationale are audited; the others get the columns' "no rationale" values
        raws_ok = [raw if status == "ok" else None for raw, status in zip(rows.raw, rows.status, strict=True)]
        audited = [k for k, (raw, why) in enumerate(zip(raws_ok, rows.reasoning, strict=True))
                   if has_rationale(raw, why)]
        cols = {c: [v] * len(rows) for c, v in zip(AUDIT_COLUMNS, NO_RATIONALE, strict=True)}
        if not audited:
            return cols, None
        if self.truths is None:
            self.truths = _read_truths(self.bench_root)
        raws = [raws_ok[k] for k in audited]
        reasonings = [rows.reasoning[k] for k in audited]  # None unless the answer that counts is ok (counted_rows)
        sub_items = [self.items[item_ids[k]] for k in audited]
        case_ids = [it.case_id for it in sub_items]
        checked = check_rows(case_ids, raws, reasonings, self.truths)
        if self.judge is not None:
            decided_by = _judge_claims(self.judge, checked, case_ids, raws, reasonings, self.truths,
                                       self.bench_root)
        else:
            decided_by = [None if c is None else ["rules"] * len(c) for c in checked]
        got = audit_columns(case_ids, raws, reasonings, self.truths, [_lure_fact(it) for it in sub_items], checked)
        for c in AUDIT_COLUMNS:
            col = cols[c]
            for k, v in zip(audited, got[c], strict=True):
                col[k] = v
        keys = [(item_ids[k], rows.model_key[k], rows.mode[k], cid) for k, cid in zip(audited, case_ids, strict=True)]
        out = _AuditOut(claims_table(keys, checked, decided_by),
                        _claims_summary(checked, decided_by, [rows.mode[k] for k in audited]))
        return cols, out

    def commit(self, out: _AuditOut | None) -> None:
        """Write one batch's claims (:meth:`compute`; None: the batch carried no rationale) and add up its
        summary."""
        if out is None:
            return
        self.any = True
        if self.writer is None:
            self.writer = RowGroupWriter(out.table.schema, path=self.folder / CLAIMS_FILE)
        self.writer.write(out.table)
        for mode, m in out.summary.items():
            total = self.summary.setdefault(mode, dict.fromkeys(m, 0))
            for k, count in m.items():
                if k != "judge_share":
                    total[k] += count

    def close(self) -> _ClaimsOut | None:
        import hashlib

        from medr2.scoring.claims import CHECKER_VERSION, CLAIMS_FILE, claims_table
        from medr2.scoring.judge import CLAIM_PROMPT_VERSION

        if not self.any:
            return None
        if self.writer is None:  # pragma: no cover - a batch with a rationale always makes the writer
            self.writer = RowGroupWriter(claims_table([], []).schema, path=self.folder / CLAIMS_FILE)
        rows = self.writer.rows
        self.writer.close()
        data = self.folder / CLAIMS_FILE
        digest = hashlib.sha256()
        with data.open("rb") as f:
            while block := f.read(1 << 20):
                digest.update(block)
        for m in self.summary.values():
            decided = m["decided_by_rules"] + m["decided_by_judge"]
            m["judge_share"] = m["decided_by_judge"] / decided if decided else None
        summary = {"file": CLAIMS_FILE, "sha256": digest.hexdigest(), "rows": rows,
                   "checker": CHECKER_VERSION, "judge": None if self.judge is None else self.judge.key,
                   "judge_prompt": None if self.judge is None else CLAIM_PROMPT_VERSION,
                   "modes": dict(sorted(self.summary.items()))}
        return _ClaimsOut(data, summary)


def _read_truths(bench_root: Path) -> dict[str, dict[str, Any]]:
    """The case fields the claim checker reads, by case id (the cases table's columns through the bench layer,
    a column it lacks None; JSON columns decoded; of ``meta`` only ``findings_complete``; a bench written before
    ``absent`` reads as stating nothing absent)."""
    from medr2.bench.table import BenchTable

    wanted = ("case_id", "modality", "plane", "sequence", "body_region", "structures", "findings", "diagnosis",
              "severity", "mimics", "absent", "meta")
    bench = BenchTable(bench_root)
    cols = bench.case_columns(wanted)
    path = bench.cases_path
    out: dict[str, dict[str, Any]] = {}
    for values in zip(*cols.values(), strict=True):
        row = dict(zip(wanted, values, strict=True))
        for key in ("structures", "findings", "mimics", "absent", "meta"):
            if isinstance(row.get(key), str):
                row[key] = jsonsafe.loads(row[key], file=str(path), record=str(row["case_id"]), field=key)
        meta = row.get("meta")
        row["meta"] = {"findings_complete": meta.get("findings_complete")} if isinstance(meta, dict) else {}
        out[str(row["case_id"])] = row
    return out
