"""The 35 task generators of docs/tasks.md (registry ``TASKS``; adding one: ``docs/extending.md``) and their
assembly into Items.

``draft_case(case, pools, seed, split, images)`` runs every generator on one case (skips counted
with reasons); ``Assembler(seed).assemble(case, drafts, split)`` assigns balanced letters, ids,
yes/no pairs and the case's chain. ``assign_splits(cases)`` gives leakage-free splits.
"""

from typing import Any

from medr2.tasks import compare, stage1, stage2, stage3, stage4  # noqa: F401  (register the tasks)
from medr2.tasks.assemble import Assembler, CaseDrafts, chain_preference, draft_case, ordered_tasks
from medr2.tasks.contract import contract_text
from medr2.tasks.pools import LabelPools
from medr2.tasks.spec import TASKS, Draft, Skip, TaskContext, TaskSpec, Template
from medr2.tasks.splits import assign_splits


def task_table() -> list[dict[str, object]]:
    """The task table written to the manifest (id, stage, form, name, needs, answerability contract, templates)."""
    return [
        {"id": s.id, "stage": s.stage, "form": s.form, "name": s.name, "needs": s.needs, "cue": s.cue,
         "requires": list(s.requires), "contract": contract_text(s.requires),
         "templates": len(s.templates), "heldout_templates": sum(t.heldout for t in s.templates)}
        for s in ordered_tasks()
    ]


__all__ = [
    "CHAIN_PREFERENCE", "TASKS", "Assembler", "CaseDrafts", "Draft", "LabelPools", "Skip", "TaskContext",
    "TaskSpec", "Template", "assign_splits", "chain_preference", "draft_case", "ordered_tasks", "task_stage",
    "task_table",
]


def task_stage() -> dict[str, int]:
    """Task id -> stage, for every registered task (plugins included), in registration order."""
    return {s.id: s.stage for s in TASKS.values()}


def __getattr__(name: str) -> Any:
    if name == "CHAIN_PREFERENCE":  # derived from the task registry
        return chain_preference()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
