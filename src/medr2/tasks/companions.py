"""A case's companions resolved to the cases of the build (issue 49): the one resolver every entry point uses.

A source links other images of a case's patient to it (``Case.companions``: a prior study, another view, another
sequence, each by the case id of that image's own case, which carries its own labels). The builder resolves them
once per case before its tasks run (:func:`resolve`): a companion is used only when its case is in the build, of
the same patient and in the same split (the splitter keeps a patient's cases together; a split a source gave
otherwise is not crossed). A companion that is not is *noted* with the reason (:class:`Linked.notes`), never
guessed; a task that needs it skips with that note as its reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from medr2.records import Case, Companion, ImageRef

__all__ = ["Linked", "Resolved", "image_ref", "resolve"]


@dataclass(frozen=True)
class Resolved:
    """One companion with its own case (its labels) from the build."""

    link: Companion
    case: Case

    @property
    def ref(self) -> ImageRef:
        return image_ref(self.case, self.link.role, self.link.label, self.link.interval_days)


@dataclass
class Linked:
    """A case's companions as the build has them: the resolved ones, and a note per companion left out."""

    resolved: list[Resolved] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def of_role(self, role: str) -> list[Resolved]:
        return [r for r in self.resolved if r.link.role == role]

    def missing(self, role: str) -> str:
        """The skip reason of a task that needs a companion of ``role`` and has none."""
        notes = [n for n in self.notes if n.startswith(f"{role} ")]
        return notes[0] if notes else f"no {role} image linked to this case by its source"


def image_ref(case: Case, role: str = "current", label: str | None = None, interval_days: int | None = None,
              *, own: bool = False) -> ImageRef:
    """The :class:`ImageRef` of a case's image in an item's image list (``own``: the item's own case, no case id)."""
    return ImageRef(path=case.image, sha256=case.image_sha256, width=case.width, height=case.height,
                    role=role, label=label, interval_days=interval_days,  # type: ignore[arg-type]
                    case_id=None if own else case.case_id)


def resolve(case: Case, lookup: Callable[[str], Case | None]) -> Linked:
    """Resolve ``case``'s companions with ``lookup`` (case id -> the build's case, with its split; None: not in the
    build). Kept: same patient, same split; otherwise noted with the reason."""
    out = Linked()
    for link in case.companions:
        other = lookup(link.case_id) if link.case_id != case.case_id else None
        why = _refused(case, link, other)
        if why is not None:
            out.notes.append(f"{link.role} {link.case_id}: {why}")
            continue
        assert other is not None
        out.resolved.append(Resolved(link, other))
    return out


def _refused(case: Case, link: Companion, other: Case | None) -> str | None:
    if link.case_id == case.case_id:
        return "the case itself"
    if other is None:
        return "not in the build"
    if other.patient_id != case.patient_id:
        return f"another patient ({other.patient_id!r}, not {case.patient_id!r})"
    if other.split != case.split:
        return f"another split ({other.split}, not {case.split})"
    return None
