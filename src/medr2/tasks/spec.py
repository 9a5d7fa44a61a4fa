"""Task specifications, drafts and the task registry (how to add a task: ``docs/extending.md``).

A task generator is a pure function ``(case, ctx) -> list[Draft]`` that raises :class:`Skip` with a
reason when the case lacks what the task needs. A Draft holds the question with its correct answer
and distractors but no letters yet: letters, ids, pairs, chains and splits are assigned afterwards in
one deterministic pass (:mod:`medr2.tasks.assemble`), so balancing does not depend on workers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medr2.errors import Skip
from medr2.records import Box, Case, Cue, Form, ImageRef
from medr2.registry import Registry
from medr2.tasks.pools import LabelPools

# clinical risk tiers of a wrong answer, lowest first (weights: medr2.scoring.harm; rationale: docs/tasks.md)
RISK_TIERS = ("low", "medium", "high")

__all__ = ["TASKS", "Draft", "Generator", "Skip", "TaskContext", "TaskSpec", "Template", "register_task", "task"]


@dataclass(frozen=True)
class Template:
    id: str
    text: str
    heldout: bool = False  # used for the test split only


@dataclass
class Draft:
    """A question before letters and ids are assigned.

    mcq: ``correct`` is the true option text and ``distractors`` the false ones; when ``layouts`` is
    set the options are ordinal and ``layouts`` maps each feasible answer position to the full option
    list. multi: ``correct`` is the list of true options. yesno: ``correct`` is "yes"/"no" and twins
    share ``pair_key``. box: ``answer_box``. text: ``correct`` is the reference.
    """

    task: str
    form: Form
    question: str
    template_id: str
    correct: str | list[str] = ""
    distractors: list[str] = field(default_factory=list)
    layouts: dict[int, list[str]] | None = None
    answer_box: Box | None = None
    cue: Cue | None = None
    pair_key: str | None = None
    image: tuple[str, str, int, int] | None = None  # (path, sha256, width, height) if not the case image
    meta: dict[str, Any] = field(default_factory=dict)
    # every image shown, in order, when more than one (issue 49; Item.images): one of them the case's own (current)
    images: list[ImageRef] | None = None


@dataclass
class TaskContext:
    """What a generator may use besides the case: label pools, a per-(case, task) rng, the split."""

    pools: LabelPools
    rng: np.random.Generator
    split: str
    images: Any = None  # medr2.images.ImageStore, for tasks that render a cue
    decoded: dict[tuple[str, str | None], np.ndarray] = field(default_factory=dict)  # shared by a case's tasks
    # the case's companions resolved to the build's cases (medr2.tasks.companions.resolve; issue 49)
    linked: Any = None

    def load(self, rel: str, mode: str | None = None) -> np.ndarray:
        """Decode an image of the store once per case (callers must not modify the array)."""
        from medr2.images import load_image

        key = (rel, mode)
        if key not in self.decoded:
            self.decoded[key] = load_image(self.images.path(rel), mode=mode)
        return self.decoded[key]

    def template(self, spec: TaskSpec) -> Template:
        allowed = [t for t in spec.templates if self.split == "test" or not t.heldout]
        return allowed[int(self.rng.integers(len(allowed)))]


Generator = Callable[[Case, "TaskContext"], list[Draft]]


@dataclass(frozen=True)
class TaskSpec:
    id: str
    stage: int
    form: Form
    name: str
    needs: str  # human-readable: what annotations the task needs
    templates: tuple[Template, ...]
    generate: Generator
    cue: bool = False
    balanced: str = "answer letter"  # what is balanced across the bench
    chain: int | None = None  # rank among its stage's tasks when a case's chain picks one (1 first); None: never
    # clinical risk tier of a wrong answer (medr2.scoring.harm.RISK_TIERS; rationale: docs/tasks.md, "Risk tiers")
    risk: str = "medium"
    # answerability contract: ids of medr2.tasks.contract.REQUIREMENTS the case must meet (checked by draft_case)
    requires: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.templates) < 3 or not any(t.heldout for t in self.templates) or all(
                t.heldout for t in self.templates):
            raise ValueError(f"task {self.id}: needs >= 3 templates, some (not all) held out")


def _check_task(task_id: str, spec: TaskSpec) -> None:
    if spec.id != task_id:
        raise ValueError(f"task {spec.id!r} registered under another id {task_id!r}")
    if not 1 <= spec.stage <= 4:
        raise ValueError(f"task {spec.id}: stage must be 1-4, not {spec.stage}")
    if spec.risk not in RISK_TIERS:
        raise ValueError(f"task {spec.id}: risk must be one of {', '.join(RISK_TIERS)}, not {spec.risk!r}")
    from medr2.tasks.contract import REQUIREMENTS

    for req in spec.requires:
        if req not in REQUIREMENTS:
            raise ValueError(f"task {spec.id}: unknown requirement {req!r} (one of {', '.join(REQUIREMENTS)})")


# task id -> spec, in registration order (the stage modules register the 31 built-in tasks when imported);
# the task -> stage table and the chain order are derived from it. Adding a task: docs/extending.md.
TASKS: Registry[TaskSpec] = Registry("task", field="--tasks", check=_check_task, loaders=(
    "medr2.tasks.stage1", "medr2.tasks.stage2", "medr2.tasks.stage3", "medr2.tasks.stage4", "medr2.tasks.compare"))


def register_task(spec: TaskSpec) -> TaskSpec:
    """Register a task (its id must be free)."""
    return TASKS.register(spec.id, spec)


def task(id: str, stage: int, form: Form, name: str, needs: str, templates: list[tuple[str, str, bool]] | list[str],
         *, cue: bool = False, balanced: str | None = None, chain: int | None = None, risk: str = "medium",
         requires: tuple[str, ...] = ()) -> Callable[[Generator], Generator]:
    """Decorator: register ``fn`` as the generator of a task. Templates given as plain strings get ids
    ``t1``, ``t2``...; the last one is held out for the test split. ``chain`` ranks the task among its stage's
    tasks for a case's reasoning chain (1 is tried first; None: never in a chain). ``risk``: the clinical risk
    tier of a wrong answer (one of :data:`RISK_TIERS`; docs/tasks.md, "Risk tiers"). ``requires``: the task's
    answerability contract, ids of :data:`medr2.tasks.contract.REQUIREMENTS` checked per case before ``fn`` runs."""

    def deco(fn: Generator) -> Generator:
        tpls: list[Template] = []
        given: list[tuple[str, str, bool] | str] = list(templates)
        for i, t in enumerate(given):
            if isinstance(t, str):
                tpls.append(Template(f"{id}/t{i + 1}", t, heldout=i == len(templates) - 1))
            else:
                tpls.append(Template(f"{id}/{t[0]}", t[1], t[2]))
        bal = balanced or {"yesno": "yes/no: one of each in every pair", "box": "nothing (box answer)"}.get(
            form, "answer letter")
        register_task(TaskSpec(id, stage, form, name, needs, tuple(tpls), fn, cue, bal, chain, risk, tuple(requires)))
        return fn

    return deco
