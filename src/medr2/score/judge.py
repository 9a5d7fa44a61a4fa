"""Optional LLM judge (``--judge openai:MODEL``) for answers the rules cannot read, and for report text.

The judge is any model adapter (normally ``openai``); its verdicts are cached in
``RUN/judge_cache.sqlite`` keyed by a hash of the judge key and the prompt, so rescoring never asks
twice. A judge answer is itself read by the strict rule extractors; if it cannot be read, the item
stays unparsed. Every score records the method used (``rule`` / ``judge``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medr2.models.base import Adapter, GenSettings, Message, Part, Request
from medr2.records import REPORT_TASKS, letter, stable_hash
from medr2.score.items import ItemLike

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
        self._db = sqlite3.connect(str(cache_dir / CACHE_FILE))
        self._db.execute("CREATE TABLE IF NOT EXISTS judged (key TEXT PRIMARY KEY, judge TEXT, prompt TEXT, "
                         "reply TEXT)")

    def ask(self, prompts: Sequence[str], bench_root: Path) -> list[str | None]:
        """The judge's reply to each prompt (cached; an adapter error gives None, never a guess)."""
        keys = [stable_hash({"judge": self.key, "prompt": p, "settings": repr(self.settings)}) for p in prompts]
        cached: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i:i + 500]
            q = f"SELECT key, reply FROM judged WHERE key IN ({','.join('?' * len(chunk))})"
            cached.update(dict(self._db.execute(q, chunk).fetchall()))
        todo = [(k, p) for k, p in zip(keys, prompts, strict=True) if k not in cached]
        todo = list(dict(todo).items())
        if todo:
            reqs = [Request(key=k, settings=self.settings, bench_root=bench_root, messages=(
                Message("system", (Part("text", text=SYSTEM),)), Message("user", (Part("text", text=p),))))
                for k, p in todo]
            responses = self.adapter.generate(reqs)
            with self._db:
                for (k, p), r in zip(todo, responses, strict=True):
                    if r.status == "ok" and r.text is not None:
                        self._db.execute("INSERT OR REPLACE INTO judged VALUES (?, ?, ?, ?)", (k, self.key, p, r.text))
                        cached[k] = r.text
        return [cached.get(k) for k in keys]

    def close(self) -> None:
        self._db.close()
        self.adapter.close()


def make_judge(spec: str, cache_dir: Path, **adapter_opts: Any) -> Judge:
    """A judge from a model spec such as ``openai:gpt-4o-mini`` (options as for ``load_adapter``)."""
    from medr2.models.registry import load_adapter

    return Judge(load_adapter(spec, **adapter_opts), cache_dir)


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
