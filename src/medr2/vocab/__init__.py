"""One clinical vocabulary: concepts, their synonyms and their relations, known once (issue 39).

The concepts are package data (``concepts.txt`` beside this module: its header states the grammar, the sources
and the licence) plus two extensions, read in this order:

* plugin entries of :data:`EXTENSIONS` (a :class:`medr2.registry.Registry`; a plugin registers a name and a
  text of vocabulary lines, or lazily ``"module:object"`` naming such a text);
* the user file named by the environment variable :data:`USER_FILE_ENV` (``MEDR2_VOCAB``).

Each is the same line grammar, so adding a synonym or a sub-type is one line in one place::

    finding: lung opacity = airspace shadowing
    diagnosis: round pneumonia < pneumonia

Consumers (task distractors, dataset readers, answer reading, the claim checker) ask :func:`concept_of`,
:func:`related` (``same``/``parent``/``child``/``sibling``/``unrelated``), :func:`conflicts` and :func:`key`;
every label goes through :func:`normalise` first (NFKC, invisible characters dropped, case folded, hyphens,
underscores and runs of white space to one space), so look-alike spellings of one label are one label.

This module sits at the bottom of the data flow: it imports nothing of medr2 but :mod:`medr2.errors` and
:mod:`medr2.registry` (which itself imports only the errors).
"""

from __future__ import annotations

import functools
import os
import re
import threading
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Literal

from medr2.errors import BadInput
from medr2.registry import Registry

Relation = Literal["same", "parent", "child", "sibling", "unrelated"]
KINDS = ("modality", "plane", "sequence", "body_region", "organ", "finding", "diagnosis", "normal", "attribute",
         "device", "procedure", "technical", "indexing", "variant")
ATTRIBUTES = ("laterality", "location", "size", "count", "shape", "margin", "intensity", "content", "enhancement",
              "severity", "malignancy", "mimic")
# the kind a ``@ NAME=VALUE`` value names: a location an organ or region, a malignancy class ("benign", "malignant")
# and a mimic (a diagnosis the concept's image cannot rule out alone) a diagnosis, any other value an attribute
VALUE_KIND = {"location": "organ", "malignancy": "diagnosis", "mimic": "diagnosis"}
MALIGNANCY_CLASSES = ("benign", "malignant")
# the sequence concepts that group the values of an axis of their own (concepts.txt): a contrast phase and a CT
# window are said of an image beside its weighting, not instead of it; any other sequence is a weighting
SEQUENCE_AXES = ("contrast phase", "CT window")
# kinds whose labels share one namespace: a term names at most one concept of a group
GROUP = {"modality": "modality", "plane": "plane", "sequence": "sequence", "body_region": "anatomy",
         "organ": "anatomy", "finding": "pathology", "diagnosis": "pathology", "normal": "pathology",
         "attribute": "attribute", "device": "device", "procedure": "device", "technical": "technical",
         "indexing": "technical", "variant": "variant"}
# the kinds whose terms are never a finding or diagnosis, with the reason a reader gives for leaving such a term
# out of a label list (index terms such as IU X-ray's MeSH "problems": issue 43); pathology kinds are absent
NOT_A_FINDING = {
    "modality": "imaging technique, not a finding", "plane": "view, not a finding",
    "sequence": "imaging technique, not a finding", "body_region": "anatomy, not a finding",
    "organ": "anatomy, not a finding", "attribute": "descriptor, not a finding",
    "device": "device or procedure, not a diagnosis", "procedure": "device or procedure, not a diagnosis",
    "technical": "technical note, not a finding", "indexing": "not indexed",
    "variant": "normal variant or descriptor, not a finding",
}
USER_FILE_ENV = "MEDR2_VOCAB"
DATA_FILE = "concepts.txt"

# plugin vocabularies: name -> text of vocabulary lines (registered by a plugin, or lazily "module:OBJECT")
EXTENSIONS: Registry[str] = Registry("vocabulary extension")

_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Cs", "Co", "Cn"})  # format (zero-width, soft hyphen), controls
_FOLD = re.compile(r"[\s_\-\u2010-\u2015\u2212]+")


@functools.lru_cache(maxsize=1 << 15)
def normalise(text: str) -> str:
    """The comparison form of a label: NFKC (full-width to ASCII, ligatures), invisible characters dropped
    (zero-width spaces and joiners, soft hyphens, BOM, controls), case folded, hyphens, underscores and white
    space runs folded to one space, ends stripped. Two labels that read the same normalise equal."""
    t = unicodedata.normalize("NFKC", str(text))
    t = "".join(" " if ch in "\t\n\r\x0b\x0c" else ch for ch in t
                if ch in "\t\n\r\x0b\x0c" or unicodedata.category(ch) not in _INVISIBLE_CATEGORIES)
    return _FOLD.sub(" ", t.casefold()).strip()


_SPACE = re.compile(r"\s+")


@functools.lru_cache(maxsize=1 << 15)
def clean_label(text: str) -> str:
    """A label as data gives it, in the one form a bench stores and shows: NFKC (full-width letters, ligatures,
    no-break spaces to their plain form), invisible characters dropped (zero-width spaces and joiners, soft
    hyphens, BOM, bidi controls, other controls), white space runs to one space, ends stripped. Case, hyphens
    and words are kept (:func:`normalise` is the comparison form). Two spellings that read the same clean to
    one label, so a bench never holds both (every reader's labels pass here: ``sources.common.make_case``)."""
    t = unicodedata.normalize("NFKC", str(text))
    t = "".join(" " if ch.isspace() else ch for ch in t if ch.isspace()
                or unicodedata.category(ch) not in _INVISIBLE_CATEGORIES)
    return _SPACE.sub(" ", t).strip()


@dataclass(frozen=True)
class Concept:
    """One concept: ``id`` (its group and normalised preferred label), ``kind``, ``label`` (preferred
    spelling), ``synonyms`` (other spellings, abbreviations, translations), ``is_a`` / ``part_of`` /
    ``co_occurs`` (ids of other concepts), ``attributes`` that apply to it, and ``implies``: (attribute, concept
    id) pairs of the values the concept always carries (``@ location=lung``: consolidation lies in the lung;
    ``@ content=cystic``: a cyst is cystic)."""

    id: str
    kind: str
    label: str
    synonyms: tuple[str, ...] = ()
    is_a: tuple[str, ...] = ()
    part_of: tuple[str, ...] = ()
    co_occurs: tuple[str, ...] = ()
    attributes: tuple[str, ...] = ()
    implies: tuple[tuple[str, str], ...] = ()

    @property
    def terms(self) -> tuple[str, ...]:
        return (self.label, *self.synonyms)


@dataclass
class _Draft:
    kind: str
    label: str
    synonyms: list[str] = field(default_factory=list)
    is_a: list[tuple[str, str]] = field(default_factory=list)  # (label, where) resolved after all lines
    part_of: list[tuple[str, str]] = field(default_factory=list)
    co_occurs: list[tuple[str, str]] = field(default_factory=list)
    attributes: list[str] = field(default_factory=list)
    implies: list[tuple[str, str, str]] = field(default_factory=list)  # (attribute, value label, where)


_OPS = {"=": "synonyms", "<": "is_a", "^": "part_of", "~": "co_occurs", "@": "attributes"}
_OP_SPLIT = re.compile(r"\s([=<^~@])\s")
_LINE = re.compile(r"^\s*([a-z_]+)\s*:\s*(.+?)\s*$")


class Vocabulary:
    """Concepts and their relations, built from vocabulary lines (see :func:`parse`)."""

    def __init__(self, sources: Iterable[tuple[str, str]]) -> None:
        self.version = ""
        drafts: dict[str, _Draft] = {}  # id -> draft
        index: dict[tuple[str, str], str] = {}  # (group, normalised term) -> id
        for where, text in sources:
            for lineno, line in enumerate(text.splitlines(), start=1):
                self._read_line(line, f"{where}:{lineno}", drafts, index)
        self._concepts: dict[str, Concept] = {}
        for cid, d in drafts.items():
            self._concepts[cid] = Concept(
                cid, d.kind, d.label, tuple(dict.fromkeys(d.synonyms)),
                self._resolve(d.is_a, d.kind, index, "is-a"), self._resolve(d.part_of, d.kind, index, "part-of"),
                self._resolve(d.co_occurs, d.kind, index, "co-occurs"), tuple(dict.fromkeys(d.attributes)),
                tuple(dict.fromkeys((name, self._resolve([(value, where)], VALUE_KIND.get(name, "attribute"),
                                                         index, "implies")[0])
                                    for name, value, where in d.implies)))
        self._index = index
        self._by_term: dict[str, list[str]] = {}
        for (_, term), cid in sorted(index.items()):
            self._by_term.setdefault(term, []).append(cid)
        self._up = {cid: self._closure(cid) for cid in self._concepts}
        self._children: dict[str, set[str]] = {cid: set() for cid in self._concepts}
        for cid, c in self._concepts.items():
            for p in (*c.is_a, *c.part_of):
                self._children[p].add(cid)
        self._check_acyclic()
        # a mimic is mutual: an image of B cannot rule out A where one of A cannot rule out B (looks alike both ways)
        self._mimicked_by: dict[str, list[str]] = {}
        for cid, c in self._concepts.items():
            for name, target in c.implies:
                if name == "mimic":
                    self._mimicked_by.setdefault(target, []).append(cid)
        self._keys: dict[str, str] = {}
        self._conflicts: dict[tuple[str, str], bool] = {}

    # -- reading ------------------------------------------------------------------------------------

    def _read_line(self, line: str, where: str, drafts: dict[str, _Draft], index: dict[tuple[str, str], str]) -> None:
        body = line.split("#", 1)[0].strip() if not line.lstrip().startswith("@version") else line.strip()
        if not body:
            return
        if body.startswith("@version"):
            self.version = body.split(None, 1)[1].strip() if " " in body else ""
            return
        m = _LINE.match(body)
        if m is None:
            raise BadInput(f"not a vocabulary line (KIND: LABEL [= SYNONYM | ...] [< PARENT | ...] ...): {body!r}",
                           file=where.rsplit(":", 1)[0], record=f"line {where.rsplit(':', 1)[1]}", field="line")
        kind, rest = m.group(1), m.group(2)
        if kind not in KINDS:
            raise BadInput(f"unknown kind {kind!r}; known: {', '.join(KINDS)}", file=where.rsplit(":", 1)[0],
                           record=f"line {where.rsplit(':', 1)[1]}", field="kind")
        parts = _OP_SPLIT.split(" " + rest + " ")
        label = parts[0].strip()
        if not normalise(label):
            raise BadInput("empty label", file=where.rsplit(":", 1)[0], record=f"line {where.rsplit(':', 1)[1]}",
                           field="label")
        group = GROUP[kind]
        cid = index.get((group, normalise(label)))
        if cid is None:
            cid = f"{group}:{normalise(label)}"
            drafts[cid] = _Draft(kind, label)
            index[(group, normalise(label))] = cid
        d = drafts[cid]
        for op, value in zip(parts[1::2], parts[2::2], strict=True):
            items = [v.strip() for v in (value.split() if op == "@" else value.split("|")) if v.strip()]
            if op == "=":
                for syn in items:
                    other = index.setdefault((group, normalise(syn)), cid)
                    if other != cid:
                        raise BadInput(f"{syn!r} already names {other!r}; a term names one concept of a kind group",
                                       file=where.rsplit(":", 1)[0], record=f"line {where.rsplit(':', 1)[1]}",
                                       field="synonyms")
                    d.synonyms.append(syn)
            elif op == "@":
                bad = [a for a in items if a.split("=", 1)[0] not in ATTRIBUTES]
                if bad:
                    raise BadInput(f"unknown attribute(s) {bad}; known: {', '.join(ATTRIBUTES)}",
                                   file=where.rsplit(":", 1)[0], record=f"line {where.rsplit(':', 1)[1]}",
                                   field="attributes")
                for item in items:  # "margin", or "content=cystic": a value the concept always carries
                    name, _, value = item.partition("=")
                    d.attributes.append(name)
                    if value:
                        d.implies.append((name, value.replace("_", " "), where))
            else:
                getattr(d, _OPS[op]).extend((v, where) for v in items)

    def _resolve(self, refs: list[tuple[str, str]], kind: str, index: dict[tuple[str, str], str],
                 what: str) -> tuple[str, ...]:
        out: list[str] = []
        order = [GROUP[kind], *(g for g in ("pathology", "anatomy", "modality", "plane", "sequence", "attribute")
                               if g != GROUP[kind])]
        for label, where in refs:
            cid = next((index[(g, normalise(label))] for g in order if (g, normalise(label)) in index), None)
            if cid is None:
                raise BadInput(f"{what} names {label!r}, which no line defines", file=where.rsplit(":", 1)[0],
                               record=f"line {where.rsplit(':', 1)[1]}", field=what)
            out.append(cid)
        return tuple(dict.fromkeys(out))

    def _closure(self, cid: str) -> frozenset[str]:
        seen: set[str] = set()
        stack = [cid]
        while stack:
            c = self._concepts[stack.pop()]
            for p in (*c.is_a, *c.part_of):
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return frozenset(seen)

    def _check_acyclic(self) -> None:
        for cid, up in self._up.items():
            if cid in up:
                raise BadInput(f"concept {cid!r} is its own ancestor (a cycle of is-a / part-of)", field="is_a")

    # -- lookup -------------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._concepts)

    def __iter__(self) -> Iterator[Concept]:
        return iter(self._concepts.values())

    def get(self, cid: str) -> Concept | None:
        return self._concepts.get(cid)

    def concept_of(self, label: str | None, kinds: Iterable[str] | None = None) -> Concept | None:
        """The concept a label names (any of its spellings), or None. Where one term names concepts of several
        kind groups (rare), the first of ``kinds`` wins; without ``kinds`` pathology, then anatomy, ..."""
        if label is None:
            return None
        ids = self._by_term.get(normalise(label))
        if not ids:
            return None
        wanted = tuple(kinds) if kinds is not None else KINDS
        for k in (*("finding", "diagnosis", "normal"), *KINDS) if kinds is None else wanted:
            for cid in ids:
                if self._concepts[cid].kind == k:
                    return self._concepts[cid]
        return None

    def key(self, label: str) -> str:
        """A comparison key: the concept id in angle brackets for a known term, else the normalised label."""
        got = self._keys.get(label)
        if got is None:
            c = self.concept_of(label)
            got = f"<{c.id}>" if c is not None else normalise(label)
            if len(self._keys) < 1 << 16:
                self._keys[label] = got
        return got

    def synonyms(self, label: str) -> tuple[str, ...]:
        """Every spelling of the concept ``label`` names (the label itself when unknown)."""
        c = self.concept_of(label)
        return c.terms if c is not None else (label,)

    def ancestors(self, label: str) -> frozenset[str]:
        c = self.concept_of(label)
        return self._up[c.id] if c is not None else frozenset()

    def is_a(self, a: str, b: str) -> bool:
        """Whether ``a`` is ``b`` or a sub-type of it (transitively, through is-a only)."""
        ca, cb = self.concept_of(a), self.concept_of(b)
        if ca is None or cb is None:
            return normalise(a) == normalise(b)
        return ca.id == cb.id or cb.id in self._is_a_closure(ca.id)

    def part_of(self, a: str, b: str) -> bool:
        """Whether ``a`` is a part of ``b`` (transitively, through part-of and is-a)."""
        ca, cb = self.concept_of(a), self.concept_of(b)
        return ca is not None and cb is not None and ca.id != cb.id and cb.id in self._up[ca.id] \
            and cb.id not in self._is_a_closure(ca.id)

    def _is_a_closure(self, cid: str) -> frozenset[str]:
        seen: set[str] = set()
        stack = [cid]
        while stack:
            for p in self._concepts[stack.pop()].is_a:
                if p not in seen:
                    seen.add(p)
                    stack.append(p)
        return frozenset(seen)

    def related(self, a: str, b: str) -> Relation:
        """How ``a`` relates to ``b``: ``same`` (one concept or equal normalised labels), ``child`` (``a`` is a
        sub-type or a part of ``b``), ``parent`` (the reverse), ``sibling`` (they share a direct parent), else
        ``unrelated``."""
        if normalise(a) == normalise(b):
            return "same"
        ca, cb = self.concept_of(a), self.concept_of(b)
        if ca is None or cb is None:
            return "unrelated"
        if ca.id == cb.id:
            return "same"
        if cb.id in self._up[ca.id]:
            return "child"
        if ca.id in self._up[cb.id]:
            return "parent"
        if set(ca.is_a) & set(cb.is_a) or set(ca.part_of) & set(cb.part_of):
            return "sibling"
        return "unrelated"

    def implied(self, label: str, name: str | None = None) -> tuple[Concept, ...]:
        """The values the concept ``label`` names (or a concept it is a sub-type of) always carries (``@ NAME=VALUE``
        lines: a consolidation's location is the lung, a cyst's content cystic); only attribute ``name``'s where
        given."""
        c = self.concept_of(label)
        if c is None:
            return ()
        ids = (c.id, *sorted(self._is_a_closure(c.id)))
        return tuple(dict.fromkeys(self._concepts[v] for i in ids for n, v in self._concepts[i].implies
                                   if name is None or n == name))

    def _nearest(self, label: str, name: str) -> tuple[Concept, ...]:
        """The ``@ NAME=VALUE`` values of the concept ``label`` names where it declares some, else of its nearest
        is-a ancestors that do (a sub-type's own value wins over its parent's)."""
        c = self.concept_of(label)
        level = [c.id] if c is not None else []
        seen: set[str] = set(level)
        while level:
            vals = [v for i in level for n, v in self._concepts[i].implies if n == name]
            if vals:
                return tuple(self._concepts[v] for v in dict.fromkeys(vals))
            level = [p for i in level for p in self._concepts[i].is_a if p not in seen]
            seen.update(level)
        return ()

    def malignancy(self, label: str) -> str | None:
        """The benign/malignant class of the diagnosis ``label`` (``@ malignancy=benign`` / ``=malignant``, on the
        concept or inherited from its nearest is-a ancestor that states one: a glioblastoma is a glioma's
        malignant); None where unknown or where two nearest ancestors disagree. A non-neoplastic lesion that may be
        asked "benign or malignant" (an abscess, a demyelinating plaque) is benign: it is not malignant."""
        classes = {c.label for c in self._nearest(label, "malignancy")}
        return classes.pop() if len(classes) == 1 else None

    def mimics(self, label: str) -> tuple[str, ...]:
        """The diagnoses an image of the diagnosis ``label`` cannot rule out alone, its radiological differential
        (``@ mimic=LABEL``, declared on the concept or an is-a ancestor: clinical knowledge a source's own mimic
        list may lack, a glioblastoma's tumefactive demyelination). The relation is mutual: a concept that declares
        ``label`` (or an is-a ancestor of it) its mimic is one of ``label``'s (a glioblastoma's lymphoma makes the
        lymphoma's image unable to rule out a glioblastoma)."""
        c = self.concept_of(label)
        if c is None:
            return ()
        ids = (c.id, *sorted(self._is_a_closure(c.id)))
        declared = (v for i in ids for n, v in self._concepts[i].implies if n == "mimic")
        mutual = (v for i in ids for v in self._mimicked_by.get(i, ()))
        return tuple(dict.fromkeys(self._concepts[v].label for v in (*declared, *mutual) if v != c.id))

    def carries(self, label: str, name: str) -> bool:
        """Whether attribute ``name`` applies to the concept ``label`` names or to a concept it is a sub-type of
        (``@ severity`` on a pleural effusion: "small" or "large" said of one states its severity)."""
        c = self.concept_of(label)
        return c is not None and any(name in self._concepts[i].attributes for i in (c.id, *self._is_a_closure(c.id)))

    def compare_values(self, claimed: str, true: str) -> Literal["same", "excludes", "unrelated"]:
        """How a claimed attribute value relates to a true one, the one comparison of descriptors: ``same`` (one
        concept, or a sub-type or super-type of it), ``excludes`` (two values of one attribute: attribute concepts
        sharing a direct parent, "anechoic" and "hypoechoic" under echogenicity, "mild" and "severe" under
        severity), else ``unrelated`` (values of different attributes, or a word the vocabulary does not know)."""
        ca, ct = self.concept_of(claimed, ("attribute",)), self.concept_of(true, ("attribute",))
        if ca is None or ct is None:
            return "same" if normalise(claimed) == normalise(true) else "unrelated"
        if ca.id == ct.id or ca.id in self._up[ct.id] or ct.id in self._up[ca.id]:
            return "same"
        return "excludes" if set(ca.is_a) & set(ct.is_a) else "unrelated"

    def co_occur(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` (or an ancestor of either) are declared to co-occur."""
        ca, cb = self.concept_of(a), self.concept_of(b)
        if ca is None or cb is None:
            return False
        la, lb = {ca.id, *self._up[ca.id]}, {cb.id, *self._up[cb.id]}
        return any(set(self._concepts[x].co_occurs) & lb for x in la) or \
            any(set(self._concepts[x].co_occurs) & la for x in lb)

    def _sequence_values(self, label: str) -> dict[str, frozenset[str]] | None:
        """The values a sequence ``label`` states, by axis (:data:`SEQUENCE_AXES`, else ``weighting``): a concept
        under one axis is its own value there; one under several (``T1 post-contrast``: a T1 weighting and a
        contrast phase) states its parents' values, one per axis. None where the vocabulary has no such sequence."""
        c = self.concept_of(label, ("sequence",))
        if c is None:
            return None
        roots = {a: r.id for a in SEQUENCE_AXES if (r := self.concept_of(a, ("sequence",))) is not None}

        def axis(cid: str) -> str:
            up = self._is_a_closure(cid)
            return next((a for a, r in roots.items() if r == cid or r in up), "weighting")

        parents = [p for p in c.is_a if p not in roots.values()]
        combined = len({axis(p) for p in parents}) > 1
        out: dict[str, set[str]] = {}
        for cid in (parents if combined else [c.id]):
            out.setdefault(axis(cid), set()).add(cid)
        return {a: frozenset(v) for a, v in out.items()}

    def sequences_compatible(self, a: str, b: str) -> bool | None:
        """Whether one image may be both sequence ``a`` and sequence ``b``: on every axis both state (an MR
        weighting, a contrast phase, a CT window) their values are one concept or one a sub-type of the other.
        "T1 post-contrast" and "T1-weighted fat-saturated" may both hold (one T1 weighting; the phase stated by
        one only); "T2-weighted" and either may not. None where either is no sequence the vocabulary knows."""
        va, vb = self._sequence_values(a), self._sequence_values(b)
        if va is None or vb is None:
            return None
        for ax in va.keys() & vb.keys():
            if not any(x == y or y in self._is_a_closure(x) or x in self._is_a_closure(y)
                       for x in va[ax] for y in vb[ax]):
                return False
        return True

    def conflicts(self, a: str, b: str) -> bool:
        """Whether ``a`` may never be offered as a wrong option beside the true ``b``: the same concept, a
        sub-type, a super-type (or part/whole), a label that co-occurs with it, or a sequence the same image may
        also be (:meth:`sequences_compatible`: a phase or window ``b`` does not state is not ruled out by it)."""
        got = self._conflicts.get((a, b))
        if got is None:
            got = self.related(a, b) in ("same", "parent", "child") or self.co_occur(a, b) \
                or self.sequences_compatible(a, b) is True
            if len(self._conflicts) < 1 << 16:
                self._conflicts[(a, b)] = got
        return got

    def overlap(self, a: str, b: str) -> bool | None:
        """Whether two regions or parts share anything: one concept, one a part (or sub-type) of the other, or a
        part of both ("hip" of the pelvis and the lower limb); None where either is unknown. Two regions that do
        not overlap are two places ("knee" and "wrist", "chest" and "abdomen")."""
        ca, cb = self.concept_of(a), self.concept_of(b)
        if ca is None or cb is None:
            return None
        if ca.id == cb.id or cb.id in self._up[ca.id] or ca.id in self._up[cb.id]:
            return True
        return bool(self.descendants(ca.label) & self.descendants(cb.label))

    def descendants(self, label: str) -> frozenset[str]:
        c = self.concept_of(label)
        if c is None:
            return frozenset()
        seen: set[str] = set()
        stack = [c.id]
        while stack:
            for ch in self._children[stack.pop()]:
                if ch not in seen:
                    seen.add(ch)
                    stack.append(ch)
        return frozenset(seen)


def parse(text: str, where: str = "<text>") -> Vocabulary:
    """A vocabulary of ``text`` alone (tests, tools)."""
    return Vocabulary([(where, text)])


def builtin_text() -> str:
    return resources.files(__package__).joinpath(DATA_FILE).read_text(encoding="utf-8")


def _user_file() -> tuple[str, str] | None:
    path = os.environ.get(USER_FILE_ENV)
    if not path:
        return None
    p = Path(path)
    try:
        return str(p), p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise BadInput(f"cannot read the user vocabulary: {e}", file=str(p), field=USER_FILE_ENV) from e


_lock = threading.RLock()
_current: dict[str, object] = {}


def _state_key() -> tuple[object, ...]:
    path = os.environ.get(USER_FILE_ENV) or ""
    try:
        stamp = os.stat(path).st_mtime_ns if path else 0
    except OSError:
        stamp = -1
    return EXTENSIONS.version, path, stamp


def vocabulary() -> Vocabulary:
    """The vocabulary in force: the built-in lines, then the plugins' (:data:`EXTENSIONS`, by name), then the
    user file's; rebuilt when an extension is registered or the user file changes."""
    key = _state_key()
    with _lock:
        if _current.get("key") != key:
            sources = [(f"medr2/vocab/{DATA_FILE}", builtin_text())]
            sources += [(f"plugin {name}", str(EXTENSIONS[name])) for name in sorted(EXTENSIONS)]
            user = _user_file()
            if user is not None:
                sources.append(user)
            _current["vocab"] = Vocabulary(sources)
            _current["key"] = key
        vocab = _current["vocab"]
    assert isinstance(vocab, Vocabulary)
    return vocab


def generation() -> tuple[object, ...]:
    """Changes whenever :func:`vocabulary` would return another vocabulary (a cache key for derived tables)."""
    return _state_key()


# -- module-level shortcuts to the vocabulary in force ------------------------------------------------------
def concept_of(label: str | None, kinds: Iterable[str] | None = None) -> Concept | None:
    return vocabulary().concept_of(label, kinds)


def synonyms(label: str) -> tuple[str, ...]:
    return vocabulary().synonyms(label)


def is_a(a: str, b: str) -> bool:
    return vocabulary().is_a(a, b)


def part_of(a: str, b: str) -> bool:
    return vocabulary().part_of(a, b)


def related(a: str, b: str) -> Relation:
    return vocabulary().related(a, b)


def overlap(a: str, b: str) -> bool | None:
    return vocabulary().overlap(a, b)


def conflicts(a: str, b: str) -> bool:
    return vocabulary().conflicts(a, b)


def implied(label: str, name: str | None = None) -> tuple[Concept, ...]:
    return vocabulary().implied(label, name)


def carries(label: str, name: str) -> bool:
    return vocabulary().carries(label, name)


def malignancy(label: str) -> str | None:
    return vocabulary().malignancy(label)


def mimics(label: str) -> tuple[str, ...]:
    return vocabulary().mimics(label)


def compare_values(claimed: str, true: str) -> Literal["same", "excludes", "unrelated"]:
    return vocabulary().compare_values(claimed, true)


def key(label: str) -> str:
    return vocabulary().key(label)


def not_a_finding(label: str) -> str | None:
    """Why ``label`` is not a finding or diagnosis (:data:`NOT_A_FINDING`, by the kind of the concept it names:
    anatomy, a device, a procedure, a technical or indexing remark, a normal variant), or None when it names a
    finding, diagnosis or "normal", or no concept at all. A term naming concepts of several groups is a finding
    if one of them is (pathology wins)."""
    c = vocabulary().concept_of(label)
    return NOT_A_FINDING.get(c.kind) if c is not None else None


def option_for(text: str, options: Iterable[str]) -> int | None:
    """The index of the one option that ``text`` names through the vocabulary (a synonym or another spelling
    of it), or None when none or several do. For answer readers: "the answer is hydrothorax" -> the option
    "pleural effusion"."""
    v = vocabulary()
    want = v.concept_of(text)
    opts = list(options)
    if want is None:
        hits = [i for i, o in enumerate(opts) if normalise(o) == normalise(text)]
    else:
        hits = [i for i, o in enumerate(opts) if (c := v.concept_of(o)) is not None and c.id == want.id]
    return hits[0] if len(hits) == 1 else None


# -- anatomical words ----------------------------------------------------------------------------------------
SIDES = ("left", "right")
_SIDE_WORD = re.compile(r"^(left|right)\s+(.+)$|^(.+?)\s+(left|right|l|r)$", re.IGNORECASE)
# the vocabulary's parents of what is no anatomical structure (concepts.txt): a tissue class (grey matter, white
# matter, CSF: what a tissue map labels) and a compartment (the extra-axial space: a space between structures)
NOT_STRUCTURE = ("tissue class", "compartment")


_HYPHEN_SIDE = re.compile(r"^(left|right|lh|rh)-.|.-(left|right|lh|rh)$", re.IGNORECASE)


def split_side(label: str) -> tuple[str | None, str]:
    """(side, the rest) of an anatomical label: ``left frontal inf orb`` and the atlas's ``Frontal_Inf_Orb_L`` give
    ``("left", ...)``; a label naming no side gives ``(None, label)`` (underscores read as spaces, and the hyphens
    of a label that joins its side to its words by hyphens, as FreeSurfer's lookup tables do:
    ``Left-Cerebral-White-Matter``)."""
    text = str(label).replace("_", " ").strip()
    if " " not in text and _HYPHEN_SIDE.search(text):
        text = text.replace("-", " ")
    text = _SPACE.sub(" ", text).strip()
    m = _SIDE_WORD.match(text)
    if m is None:
        return None, text
    if m.group(1):
        return m.group(1).lower(), m.group(2)
    side = m.group(4).lower()
    return {"l": "left", "r": "right"}.get(side, side), m.group(3)


def _anatomy_concept(words: str) -> Concept | None:
    return vocabulary().concept_of(words, ("organ", "body_region"))


def anatomy_concept(label: str) -> Concept | None:
    """The anatomy concept (kind organ or body region) an anatomical label names, its side aside ("left middle
    frontal gyrus" names the middle frontal gyrus) or with it where the side is part of the concept ("left lung");
    None for a label that names no anatomy (a colour-flow mask, "power Doppler flow"; a threshold of the body such
    as "shoulder soft tissue") or no structure (:func:`not_a_structure`: a tissue class, a compartment)."""
    c = _named_anatomy(label)
    return None if c is None or _is_non_structure(c) else c


def _named_anatomy(label: str) -> Concept | None:
    side, rest = split_side(label)
    c = _anatomy_concept(clean_label(rest))
    if c is None and side is not None:
        c = _anatomy_concept(clean_label(label))
    if c is None:  # a positional part of an organ ("anterior hippocampus", MSD's label) names a part of that organ
        m = _POSITIONAL.match(clean_label(rest))
        c = _anatomy_concept(m.group(2)) if m else None
    return c


# the positional words a dataset's label may put before an organ to name a part of it
_POSITIONAL = re.compile(r"^(anterior|posterior|superior|inferior|upper|lower|medial|lateral|proximal|distal|"
                         r"central|peripheral)\s+(.+)$", re.IGNORECASE)


def anatomy_words(label: str) -> str:
    """The words a radiologist signs for an anatomical label: an atlas's spelling ("left frontal inf orb",
    ``Frontal_Inf_Orb_L``, "cerebelum 8") becomes the preferred label of the concept it names ("left pars orbitalis
    of the inferior frontal gyrus", "cerebellar lobule VIII"; the table is the vocabulary, concepts.txt), and a side
    is kept only where the structure has one (a concept without ``@ laterality``, such as the vermis, takes none).
    A label the vocabulary does not know is returned cleaned, its side kept."""
    side, rest = split_side(label)
    c = _anatomy_concept(rest)
    if c is None:
        c_whole = _anatomy_concept(clean_label(label))  # a sided concept of its own ("left lung")
        if c_whole is not None:
            return _expanded(clean_label(label), c_whole)
        words = clean_label(rest)
        return f"{side} {words}" if side else words
    words = _expanded(clean_label(rest), c)
    if side and "laterality" in c.attributes:
        return f"{side} {words}"
    return words


def _expanded(words: str, c: Concept) -> str:
    """The concept's preferred label where it spells out what ``words`` abbreviate (it is longer: "frontal inf
    orb", "supp motor area", "caudate", "cerebelum 8"); ``words`` themselves where they are as long or longer
    ("skeleton" is kept, not turned into "bones"; "kidneys" stays)."""
    return c.label if len(c.label) > len(words) else words


def not_a_structure(label: str) -> bool:
    """Whether ``label`` (its side aside) names no anatomical structure though the vocabulary lists it among the
    organs: a tissue class of a tissue map (grey matter, white matter, CSF) or a compartment (the extra-axial
    space), each an is-a of one of :data:`NOT_STRUCTURE`. Neither is located, outlined or compared as an organ,
    nor signed as a lesion's location ("a mass in the left grey matter", "in the left extra-axial space")."""
    c = _named_anatomy(label)
    return c is not None and _is_non_structure(c)


def _is_non_structure(c: Concept) -> bool:
    return any(vocabulary().is_a(c.label, root) for root in NOT_STRUCTURE)


def anatomical_location(label: str | None, side: str | None = None) -> str | None:
    """A lesion location in the words a radiologist signs (:func:`anatomy_words`), ``side`` prefixed where the
    structure has sides and the label names none; None where ``label`` is no location at all: empty, or a tissue
    class or a compartment (:func:`not_a_structure`: "grey matter" says what a lesion is made of, the extra-axial
    space between which structures it lies, not where it is). Every location a task shows passes here."""
    if label is None or not str(label).strip() or not_a_structure(label):
        return None
    own_side, rest = split_side(label)
    if own_side is None and side in SIDES:
        c = _anatomy_concept(rest)
        if c is None or "laterality" in c.attributes:
            return anatomy_words(f"{side} {rest}")
    return anatomy_words(label)
