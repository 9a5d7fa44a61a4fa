"""Optional LLM judge (``--judge MODEL``) for answers the rules cannot read, and for report text.

The judge is any model adapter (``--judge MODEL`` is an OpenAI-compatible model at ``--judge-base-url``; a spec
with an adapter prefix, ``openai:MODEL``, is taken as it is); its replies are stored in
``RUN/judge_cache.sqlite`` keyed by a hash of the judge key and the prompt, each as it arrives (a killed or
failed scoring keeps what was answered; the next one asks only the rest), so rescoring never asks twice. A
judge answer is itself read by the strict rule extractors; if it cannot be read, the item stays unparsed. Every
score records the method used (``rule`` / ``judge``): judged answers are counted apart (``rates.judged``).

The audit (issue 42): the judge is also asked about a seeded sample of closed answers the reader *did* parse
(:class:`AuditSample`), and ``metrics.json`` ``judge.audit`` gives Cohen's κ between judge and reader on it,
with a bootstrap interval and its n (:func:`audit_agreement`): how far the judge can be trusted on the answers
it alone reads.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medr2.errors import BadInput, WorkFailed
from medr2.models.base import Adapter, GenSettings, Message, Part, Request, Response
from medr2.models.config import ModelConfig
from medr2.records import REPORT_TASKS, letter, stable_hash
from medr2.scoring.items import ItemLike
from medr2.scoring.stats import case_multiplicities, percentile_interval, seed_for

CACHE_FILE = "judge_cache.sqlite"
SYSTEM = ("You grade answers of a medical imaging exam. Reply with the requested token only, "
          "with no explanation.")


def choice_prompt(item: ItemLike, response: str) -> str:
    """Ask which answer the response gives (not whether it is right)."""
    head = f"Question: {item.question}\n"
    if item.form in ("mcq", "multi") and item.options:
        head += "Options:\n" + "\n".join(f"{letter(i)}. {o}" for i, o in enumerate(item.options)) + "\n"
    asks = {
        "mcq": "Which single option letter does the response choose? Reply with the letter, or NONE if it "
               "does not commit to exactly one option.",
        "multi": "Which option letters does the response select? Reply with the letters separated by commas, "
                 "or NONE if it does not say.",
        "yesno": "Does the response answer yes or no? Reply yes, no, or NONE if it does not commit.",
    }
    return f"{head}Response: <<<{response}>>>\n{asks[item.form]}"


def text_prompt(item: ItemLike, response: str) -> str:
    return (f"Question: {item.question}\nReference report: <<<{item.answer}>>>\nCandidate report: <<<{response}>>>\n"
            "Is the candidate clinically consistent with the reference (same key findings and impression, "
            "no contradicting finding)? Reply CORRECT or WRONG.")


def short_answer_prompt(item: ItemLike, response: str) -> str:
    return (f"Question: {item.question}\nReference answer: <<<{item.answer}>>>\nCandidate answer: <<<{response}>>>\n"
            "Does the candidate give the same answer as the reference (synonyms and clinically equivalent wording "
            "count; a different or additional finding, side or value does not)? Reply CORRECT or WRONG.")


def judge_prompt(item: ItemLike, response: str) -> str:
    """The prompt for ``item``'s form: a report, a short text answer, or a choice the rules could not read."""
    if item.form != "text":
        return choice_prompt(item, response)
    return text_prompt(item, response) if item.task in REPORT_TASKS else short_answer_prompt(item, response)


@dataclass(frozen=True)
class JudgeAnswer:
    text: str | None


class Judge:
    """Asks ``adapter`` and caches the raw judge reply per prompt."""

    def __init__(self, adapter: Adapter, cache_dir: Path, settings: GenSettings | None = None) -> None:
        self.adapter = adapter
        self.key = adapter.key
        self.settings = settings or GenSettings(max_new_tokens=16, temperature=0.0, seed=0)
        cache_dir.mkdir(parents=True, exist_ok=True)
        self._path = cache_dir / CACHE_FILE
        with self._gate():
            self._db = sqlite3.connect(str(self._path))
            self._db.execute("CREATE TABLE IF NOT EXISTS judged (key TEXT PRIMARY KEY, judge TEXT, prompt TEXT, "
                             "reply TEXT)")

    @contextmanager
    def _gate(self) -> Iterator[None]:
        """A damaged cache file (SQLite's errors, or a changed page's text that is not UTF-8) is BadInput naming it."""
        try:
            yield
        except (sqlite3.DatabaseError, UnicodeDecodeError) as e:
            raise BadInput(f"cannot use the judge's cache: {e} (the file is damaged; move it away to ask the judge "
                           "again)", file=str(self._path)) from e

    def ask(self, prompts: Sequence[str], bench_root: Path) -> list[str | None]:
        """The judge's reply to each prompt (cached; an adapter error gives None, never a guess)."""
        keys = [stable_hash({"judge": self.key, "prompt": p, "settings": repr(self.settings)}) for p in prompts]
        cached: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, reply FROM judged WHERE key IN ({','.join('?' * len(chunk))})"
            with self._gate():
                cached.update(dict(self._db.execute(q, chunk).fetchall()))
        todo = [(k, p) for k, p in zip(keys, prompts, strict=True) if k not in cached]
        todo = list(dict(todo).items())
        if todo:
            reqs = [Request(key=k, settings=self.settings, bench_root=bench_root, messages=(
                Message("system", (Part("text", text=SYSTEM),)), Message("user", (Part("text", text=p),))))
                for k, p in todo]
            try:
                for batch in self._answers(reqs):
                    with self._gate(), self._db:  # persist first: each reply is committed as it arrives
                        for i, r in batch:
                            k, p = todo[i]
                            if r.status == "ok" and r.text is not None:
                                self._db.execute("INSERT OR REPLACE INTO judged VALUES (?, ?, ?, ?)",
                                                 (k, self.key, p, r.text))
                                cached[k] = r.text
            except WorkFailed as e:  # e.g. the judge endpoint is down: what it answered is stored
                raise WorkFailed(f"the judge {self.key} failed: {e}. The judge replies received so far are stored "
                                 f"({CACHE_FILE} in the run folder); rerun the same medr2 score command to ask only "
                                 "the rest") from None
        return [cached.get(k) for k in keys]

    def _answers(self, reqs: list[Request]) -> Iterator[list[tuple[int, Response]]]:
        """The replies to ``reqs`` as they finish, in batches (``stream_batches`` / ``stream`` where the adapter
        streams, else all at once)."""
        batches = getattr(self.adapter, "stream_batches", None)
        if batches is not None:
            yield from batches(reqs)
            return
        stream = getattr(self.adapter, "stream", None)
        if stream is not None:
            for one in stream(reqs):
                yield [one]
            return
        yield list(enumerate(self.adapter.generate(reqs)))

    def close(self) -> None:
        self._db.close()
        self.adapter.close()


def judge_spec(spec: str) -> str:
    """The adapter spec of ``--judge``: a bare model name (``gpt-4o-mini``, ``llava:7b``) is an OpenAI-compatible
    model (``openai:NAME``); a spec whose prefix is a registered adapter is taken as it is."""
    from medr2.models.registry import ADAPTERS

    prefix, sep, name = spec.partition(":")
    if sep and name and prefix in ADAPTERS.names():
        return spec
    return f"openai:{spec}"


def make_judge(config: ModelConfig, cache_dir: Path) -> Judge:
    """A judge from its model settings (``medr2 score --judge``: the spec of :func:`judge_spec`, its base URLs and
    key variable), built by the adapter registry like any model."""
    from medr2.models.registry import load_adapter

    if config.spec.startswith("openai:") and not config.base_urls:
        raise BadInput("an OpenAI-compatible judge needs --judge-base-url (e.g. http://127.0.0.1:8000/v1)",
                       field="--judge-base-url")
    return Judge(load_adapter(config), cache_dir)


# -- the judge's agreement with the reader (issue 42) ---------------------------------------------------

AUDIT_SAMPLE = 200  # parsed closed answers the judge is also asked about (``medr2 score --judge-sample``)
AUDIT_FORMS = frozenset({"mcq", "yesno", "multi"})
NO_ANSWER = "NONE"  # the judge's label where it reads no answer in a response the reader parsed


@dataclass(frozen=True)
class _Pick:
    item: Any
    raw: str
    parsed: str


class AuditSample:
    """A seeded sample of ``k`` parsed closed answers: those with the smallest ``seed_for(seed, item, mode)``
    (bottom-k), so the same run and seed give the same sample whatever the batch order."""

    def __init__(self, k: int, seed: int) -> None:
        if k < 0:
            raise BadInput(f"the judge's audit sample must be >= 0, not {k}", field="--judge-sample")
        self.k, self.seed, self.offered = k, seed, 0
        self._heap: list[tuple[int, str, str, _Pick]] = []  # (-priority, item id, mode, pick): a max-heap

    def offer(self, item_id: str, mode: str, item: Any, raw: str, parsed: str) -> None:
        self.offered += 1
        if not self.k:
            return
        entry = (-seed_for(self.seed, "judge-audit", item_id, mode), item_id, mode, _Pick(item, raw, parsed))
        if len(self._heap) < self.k:
            heapq.heappush(self._heap, entry)
        elif entry[:3] > self._heap[0][:3]:
            heapq.heapreplace(self._heap, entry)

    def merge(self, other: AuditSample) -> None:
        """Fold in the sample of another batch drawn with the same ``k`` and seed (the result is the sample of
        both batches' answers together)."""
        self.offered += other.offered
        for entry in other._heap:
            if len(self._heap) < self.k:
                heapq.heappush(self._heap, entry)
            elif entry[:3] > self._heap[0][:3]:
                heapq.heapreplace(self._heap, entry)

    def picks(self) -> list[_Pick]:
        return [e[3] for e in sorted(self._heap, key=lambda e: (-e[0], e[1], e[2]))]


def _label(form: str, value: str | None) -> str:
    if value is None:
        return NO_ANSWER
    if form == "multi":
        return ",".join(sorted(p.strip().upper() for p in value.split(",") if p.strip()))
    return value.strip().lower() if form == "yesno" else value.strip().upper()


def cohen_kappa(a: Sequence[str], b: Sequence[str], weights: np.ndarray | None = None) -> np.ndarray:
    """Cohen's κ between label lists ``a`` and ``b`` (unweighted categories), for each row of ``weights`` (how
    often each pair is drawn: one bootstrap resample per row; None: once each). NaN where chance agreement is 1."""
    labels = {x: i for i, x in enumerate(sorted(set(a) | set(b)))}
    ia = np.fromiter((labels[x] for x in a), dtype=np.int64, count=len(a))
    ib = np.fromiter((labels[x] for x in b), dtype=np.int64, count=len(b))
    w = np.ones((1, len(a))) if weights is None else np.asarray(weights, dtype=float)
    onehot_a, onehot_b = np.eye(len(labels))[ia], np.eye(len(labels))[ib]
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (w * (ia == ib)).sum(axis=1) / total
        pe = ((w @ onehot_a) * (w @ onehot_b)).sum(axis=1) / total ** 2
        kappa: np.ndarray = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
    return kappa


def _cell(value: float, draws: np.ndarray, n: int) -> dict[str, Any]:
    lo, hi = percentile_interval(draws)
    return {"value": None if not np.isfinite(value) else float(value), "lo": lo, "hi": hi, "n": n}


def audit_agreement(judge: Judge, sample: AuditSample, bench_root: Path, *, n_resamples: int, seed: int
                    ) -> dict[str, Any]:
    """Ask the judge about the sampled parsed answers; Cohen's κ and raw agreement between the judge's reading
    and the reader's, each with a 95% bootstrap interval over the sampled answers and its n. A pick the judge
    gave no reply to (an error) is left out and counted (``no_reply``)."""
    from medr2.scoring.extract import read

    picks = sample.picks()
    replies = judge.ask([choice_prompt(p.item, p.raw) for p in picks], bench_root)
    reader, judged = [], []
    for p, reply in zip(picks, replies, strict=True):
        if reply is None:
            continue
        reader.append(_label(p.item.form, p.parsed))
        judged.append(_label(p.item.form, read(p.item.form, reply.strip(), p.item.options).value))
    n = len(reader)
    out: dict[str, Any] = {"sample": {"asked": len(picks), "eligible": sample.offered, "seed": sample.seed,
                                      "unit": "answer"}, "n": n, "no_reply": len(picks) - n}
    if not n:
        return out
    out.update(agreement_cells(reader, judged, n_resamples=n_resamples,
                               seed=seed_for(seed, "judge-audit-bootstrap")))
    out["judge_none"] = sum(1 for x in judged if x == NO_ANSWER)
    return out


def agreement_cells(a: Sequence[str], b: Sequence[str], *, n_resamples: int, seed: int) -> dict[str, Any]:
    """Cohen's κ and raw agreement between the paired labels ``a`` and ``b``, each a cell (value, 95% bootstrap
    interval over the pairs, n): the judge audit's (:func:`audit_agreement`) and the clinician review's
    (``medr2.scoring.reviews``)."""
    n = len(a)
    agree = np.asarray([x == y for x, y in zip(a, b, strict=True)], dtype=float)
    kappa_draws, agree_draws = [], []
    for _, w in case_multiplicities(n, n_resamples, seed):
        kappa_draws.append(cohen_kappa(a, b, w))
        agree_draws.append((w @ agree) / w.sum(axis=1))
    kd = np.concatenate(kappa_draws) if kappa_draws else np.zeros(0)
    ad = np.concatenate(agree_draws) if agree_draws else np.zeros(0)
    return {"kappa": _cell(float(cohen_kappa(a, b)[0]), kd, n), "agreement": _cell(float(agree.mean()), ad, n)}


def describe_audit(block: Any) -> str:
    """One line for the report: the judge, how many answers it alone read, and its agreement with the reader."""
    if not isinstance(block, dict) or not block.get("model"):
        return ""
    text = f"{block['model']}: {int(block.get('judged') or 0):,} answers judged (counted apart from those read)"
    audit = block.get("audit")
    kappa = audit.get("kappa") if isinstance(audit, dict) else None
    kappa = kappa if isinstance(kappa, dict) else None
    if kappa is None or kappa.get("value") is None:
        return text + "; agreement with the reader not measured (no parsed answer sampled)"
    lo, hi = kappa.get("lo"), kappa.get("hi")
    ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None else ""
    return (text + f"; agreement with the reader on {kappa.get('n', 0):,} parsed answers: "
            f"Cohen's κ {kappa['value']:.2f}{ci}")


# -- claims the rules leave unverifiable (issue 19) ----------------------------------------------------

CLAIM_PROMPT_VERSION = "claim-judge-v1"
CLAIM_CONTEXT_CHARS = 200  # rationale text shown on each side of the claim
CLAIM_REPLIES = {"SUPPORTED": "supported", "CONTRADICTED": "contradicted", "UNVERIFIABLE": "unverifiable"}
# rule notes of claims that are not assertions about the image (hedged away, restating the question): never judged
NOT_JUDGED_NOTES = frozenset({"hedged", "not_asserted"})


def judged_claim(verdict: str, note: str) -> bool:
    """Whether a claim goes to the claim judge: left ``unverifiable`` by the rules, and asserted."""
    return verdict == "unverifiable" and note not in NOT_JUDGED_NOTES


def claim_prompt(truth: Any, text: str, start: int, end: int, kind: str, denied: bool) -> str:
    """The claim judge's prompt (``CLAIM_PROMPT_VERSION``): the case's ground truth (the fields the checker reads),
    the rationale around the claim with the claim marked ``[[...]]``, and the three-way question."""
    import json

    fields = {k: v for k, v in {
        "modality": truth.modality, "plane": truth.plane, "sequence": truth.sequence,
        "body_region": truth.body_region, "structures": list(truth.structures),
        "findings": [{"label": f["label"], **{k: v for k, v in f["attributes"].items() if v is not None}}
                     for f in truth.findings],
        "diagnosis": truth.diagnosis, "severity": truth.severity}.items() if v not in (None, [], "")}
    lo, hi = max(0, start - CLAIM_CONTEXT_CHARS), min(len(text), end + CLAIM_CONTEXT_CHARS)
    excerpt = f"{text[lo:start]}[[{text[start:end]}]]{text[end:hi]}"
    said = "denies" if denied else "asserts"
    return (f"[{CLAIM_PROMPT_VERSION}] Ground truth of the imaging case (every finding it has is listed; a finding "
            f"not listed is absent): {json.dumps(fields, ensure_ascii=False, sort_keys=True)}\n"
            f"Excerpt of a model's rationale, the claim marked [[ ]]: <<<{excerpt}>>>\n"
            f"The rationale {said} the marked {kind}. Judged against the ground truth only, is this claim "
            "SUPPORTED, CONTRADICTED, or UNVERIFIABLE (the ground truth does not say)? Reply with one word.")


def read_claim_reply(reply: str | None) -> str | None:
    """The judge's verdict on a claim, or None where the reply is not exactly one of the three words."""
    if reply is None:
        return None
    word = reply.strip().strip(".*`'\"").upper()
    return CLAIM_REPLIES.get(word)
