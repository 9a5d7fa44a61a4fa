"""Shared machinery for importers: turning foreign questions into Items and images into Cases.

Imported questions keep their own wording; each is mapped to one of the task ids (stage 1-4) or,
when its type has no counterpart, to :data:`OTHER_TASK` (stage 0: outside the four-stage workflow,
kept and counted, never dropped). The original question id is kept in ``Item.meta["qid"]``.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medr2.errors import BadInput, Quarantine, QuarantineEntry
from medr2.images import ImageStore, load_image
from medr2.records import Case, Finding, Form, Item, Structure, item_content_id, stable_hash
from medr2.vocab import clean_label, normalise

OTHER_TASK = "imported.other"
OTHER_STAGE = 0

class _TaskStage(Mapping[str, int]):
    """Stage of every task an importer may map to (task id -> stage): derived from the task registry
    (:data:`medr2.tasks.TASKS`, plugins included), then :data:`OTHER_TASK`; see docs/tasks.md."""

    _cache: tuple[int, dict[str, int]] | None = None

    def _table(self) -> dict[str, int]:
        from medr2.tasks import TASKS, task_stage

        version = TASKS.version
        if self._cache is None or self._cache[0] != version:
            self._cache = (version, {**task_stage(), OTHER_TASK: OTHER_STAGE})
        return self._cache[1]

    def __getitem__(self, task: str) -> int:
        return self._table()[task]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __contains__(self, task: object) -> bool:
        return task in self._table()


TASK_STAGE: Mapping[str, int] = _TaskStage()

YES_NO = {"yes": "yes", "no": "no", "y": "yes", "n": "no", "true": "yes", "false": "no"}
# Chinese closed answers (SLAKE zh): is / is not, contains / does not, has / has not, exists, can be (seen)
YES_NO_ZH = {"是": "yes", "是的": "yes", "对": "yes", "包含": "yes", "有": "yes", "存在": "yes", "可以": "yes",
             "否": "no", "不是": "no", "不对": "no", "不包含": "no", "没有": "no", "无": "no", "不存在": "no",
             "不可以": "no", "包括": "yes", "不包括": "no"}


def yes_no(answer: str) -> str | None:
    a = answer.strip().rstrip(".。").lower()
    return YES_NO.get(a) or YES_NO_ZH.get(a)


def stage_of(task: str) -> int:
    if task not in TASK_STAGE:
        raise ValueError(f"unknown task {task!r}")
    return TASK_STAGE[task]


@dataclass
class ImportResult:
    fmt: str
    cases: list[Case]
    items: list[Item]
    counts: dict[str, int]  # items per task
    unmapped: int  # items in imported.other
    duplicates: int  # identical questions merged (their qids kept in meta)
    quarantined: list[QuarantineEntry]
    manifest: dict[str, Any] | None = None  # the written bench's manifest (set by medr2.import_dataset)


@dataclass
class ImportBuilder:
    """Collects Cases (one per image) and Items; merges exact duplicates; quarantines bad records."""

    fmt: str
    images: ImageStore
    license: str = "unspecified"
    access: str = "open"
    source: str | None = None
    cases: dict[str, Case] = field(default_factory=dict)
    items: dict[str, Item] = field(default_factory=dict)
    quarantined: list[QuarantineEntry] = field(default_factory=list)
    duplicates: int = 0

    @property
    def source_name(self) -> str:
        return self.source or self.fmt

    def case_id(self, image_key: str) -> str:
        return f"{self.fmt}-{stable_hash(image_key, 12)}"

    def bad(self, err: BadInput) -> None:
        self.quarantined.append(QuarantineEntry.from_error(err, stage="import"))

    def case(self, key: str, image: Path | bytes, *, file: str, record: str, modality: str | None = None,
             body_region: str | None = None, structures: list[Structure] | None = None,
             findings: list[Finding] | None = None, split: str | None = None, license: str | None = None,
             access: str | None = None, meta: dict[str, Any] | None = None) -> Case:
        """The Case of one image (created on first sight; decoded through the bomb guard, stored as PNG)."""
        case_id = self.case_id(key)
        if case_id in self.cases:
            return self.cases[case_id]
        try:
            arr = load_image(io.BytesIO(image) if isinstance(image, bytes) else image)  # type: ignore[arg-type]
        except BadInput as e:
            raise BadInput(e.reason, file=file, record=record, field="image") from e
        ref = self.images.put_array(arr)
        c = Case(case_id=case_id, image=ref.path, image_sha256=ref.sha256, width=ref.width, height=ref.height,
                 modality=modality or "unknown", body_region=body_region, structures=structures or [],
                 findings=findings or [], source=self.source_name, license=license or self.license,
                 access=access or self.access, patient_id=case_id, split=split,  # type: ignore[arg-type]
                 meta={"image_key": key, "patient_id_inferred": True, **(meta or {})})
        self.cases[case_id] = c
        return c

    def add(self, case: Case, *, task: str, form: Form, question: str, answer: str, qid: str,
            options: list[str] | None = None, pair_id: str | None = None, split: str | None = None,
            meta: dict[str, Any] | None = None, license: str | None = None, access: str | None = None,
            file: str | None = None) -> Item:
        """One item of ``case``. Its question, answer and options are cleaned as every label is
        (:func:`medr2.vocab.clean_label`);
        two that read the same (one :func:`medr2.vocab.normalise`), or one that is empty, are BadInput naming
        ``file``, the record (``qid``) and ``options``: such an item would offer two right answers."""
        options = clean_options(options or [], file=file, record=qid)
        # the question and a written answer as every label is (a letter is untouched; an invisible character in
        # a reference answer would make every right answer read wrong)
        question = clean_label(question)
        answer = clean_label(answer)
        chance = {"mcq": 1 / len(options) if options else 0.0, "yesno": 0.5}.get(form, 0.0)
        fields: dict[str, Any] = {
            "case_id": case.case_id, "task": task, "form": form, "question": question, "options": options,
            "answer": answer, "answer_box": None, "image_sha256": case.image_sha256, "cue": None, "context": [],
            "variant": "clean", "perturbation": {}, "seed": None, "template_id": f"imported.{self.fmt}",
            "parent_id": None,
        }
        item_id = item_content_id(fields)
        if item_id in self.items:
            prev = self.items[item_id]
            dups = [*prev.meta.get("duplicate_qids", []), qid]
            self.items[item_id] = prev.model_copy(update={"meta": {**prev.meta, "duplicate_qids": dups}})
            self.duplicates += 1
            return self.items[item_id]
        it = Item(item_id=item_id, stage=stage_of(task), chance=chance, pair_id=pair_id, image=case.image,
                  image_width=case.width, image_height=case.height, split=split,  # type: ignore[arg-type]
                  source=self.source_name, license=license or case.license, access=access or case.access,
                  meta={"qid": qid, "imported_from": self.fmt, **(meta or {})},
                  **{k: v for k, v in fields.items() if k not in ("perturbation",)}, perturbation={})
        self.items[item_id] = it
        return it

    def result(self) -> ImportResult:
        members = Counter(it.pair_id for it in self.items.values() if it.pair_id)
        for k, it in list(self.items.items()):
            if it.pair_id and members[it.pair_id] != 2:  # a twin was quarantined: the pair cannot count
                self.items[k] = it.model_copy(update={"pair_id": None, "meta": {**it.meta, "pair_broken": True}})
        items = list(self.items.values())
        counts = Counter(it.task for it in items)
        return ImportResult(self.fmt, list(self.cases.values()), items, dict(sorted(counts.items())),
                            counts.get(OTHER_TASK, 0), self.duplicates, self.quarantined)


def clean_options(options: list[str], *, file: str | None, record: str) -> list[str]:
    """``options`` cleaned (:func:`medr2.vocab.clean_label`); an empty one, or two that read the same, BadInput."""
    cleaned = [clean_label(str(o)) for o in options]
    if any(not o for o in cleaned):
        raise BadInput(f"option {cleaned.index('') + 1} is empty (or only invisible characters)", file=file,
                       record=record, field="options")
    seen: dict[str, str] = {}
    for raw, o in zip(options, cleaned, strict=True):
        k = normalise(o)
        if k in seen:
            raise BadInput(f"two options read the same ({seen[k]!r} and {str(raw)!r}); the item would have two "
                           "right answers", file=file, record=record, field="options")
        seen[k] = str(raw)
    return cleaned


def letter_of(answer: str, options: list[str]) -> str | None:
    """The letter of ``answer`` among ``options``: exact, then as the options are compared when they are made
    (:func:`medr2.vocab.normalise`, a final full stop dropped), so an answer and its option that read the same
    (full-width, zero-width characters, case, spacing) match."""
    from medr2.records import letter

    for i, o in enumerate(options):
        if o == answer:
            return letter(i)
    norm = normalise(answer).rstrip(".").strip()
    for i, o in enumerate(options):
        if normalise(o).rstrip(".").strip() == norm:
            return letter(i)
    return None


def source_table(cases: list[Case], items: list[Item]) -> dict[str, Any]:
    """Per source: licences, access levels and counts (shown by ``medr2 info`` and in dataset cards)."""
    out: dict[str, Any] = {}
    for it in items:
        s = out.setdefault(it.source, {"licenses": Counter(), "access": Counter(), "items": 0, "cases": set()})
        s["licenses"][it.license] += 1
        s["access"][it.access] += 1
        s["items"] += 1
        s["cases"].add(it.case_id)
    return {k: {"licenses": dict(v["licenses"]), "access": dict(v["access"]), "items": v["items"],
                "cases": len(v["cases"])} for k, v in sorted(out.items())}


def write_import(result: ImportResult, out: Path, *, name: str | None = None,
                 data: Path | None = None) -> dict[str, Any]:
    """Write an import as a bench folder (manifest records counts, unmapped and duplicates). Nothing to write
    is ``BadInput`` naming ``data`` (the dataset given) and, through the example reasons, the files that failed."""
    from medr2.bench.format import write_bench

    if not result.items:
        write_quarantine(result, Path(out))  # the user must be able to see why nothing imported
        raise BadInput(f"nothing imported from the {result.fmt} data ({len(result.quarantined)} records "
                       f"quarantined{why_quarantined(result.quarantined, Path(out))})",
                       file=str(data) if data is not None else None, field="PATH")
    q = Quarantine(Path(out) / "quarantine.jsonl")
    q.path.unlink(missing_ok=True)  # this import's entries only (a rerun into one --out does not add up)
    for e in result.quarantined:
        q.add(e)
    manifest = write_bench(out, result.cases, result.items, {
        "name": name or Path(out).name,
        "sources": source_table(result.cases, result.items),
        "imported": {"format": result.fmt, "split_source": "dataset", "tasks": result.counts,
                     "unmapped": result.unmapped,
                     "duplicates_merged": result.duplicates, "quarantined": len(result.quarantined),
                     "answers_unknown": sum(1 for it in result.items if it.meta.get("answer_unknown"))},
    })  # the manifest last: a kill before it leaves a bench that reads as incomplete
    return manifest


def write_quarantine(result: ImportResult, out: Path) -> Path:
    """Write ``quarantine.jsonl`` for an import that produced no items (an empty file when none were)."""
    path = Path(out) / "quarantine.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("", "utf-8")
    q = Quarantine(path)
    for e in result.quarantined:
        q.add(e)
    return path


def entry_text(e: QuarantineEntry) -> str:
    """One quarantined record for a console line: ``FILE, record R: reason`` (the file that failed named)."""
    where = ", ".join(x for x in (e.file, f"record {e.record}" if e.record else None) if x)
    return f"{where}: {e.reason}" if where else e.reason


def why_quarantined(entries: list[QuarantineEntry], out: Path | None = None, top: int = 3) -> str:
    """``"; see OUT/quarantine.jsonl; by field: image (451, e.g. 'image x.jpg not found under ...')"`` for the
    console ("" if none): the fields most often at fault, each with one reason as an example."""
    if not entries:
        return ""
    by_field = Counter(e.field or "-" for e in entries)
    example: dict[str, str] = {}
    for e in entries:
        example.setdefault(e.field or "-", entry_text(e))
    where = f"; see {Path(out) / 'quarantine.jsonl'}" if out is not None else ""
    return where + "; by field: " + "; ".join(f"{f} ({n}, e.g. {example[f]!r})" for f, n in by_field.most_common(top))
