"""Shared helpers for the data readers: the data root and its mapping file, label tables,
safe paths, label maps, masks and validated Case construction.

A reader is addressed as ``NAME:PATH``. PATH is either the data root (a folder, optionally holding
``medr2.json``) or a mapping JSON file whose ``root`` (relative to the file) names the data root.
Mapping keys common to every reader: ``source`` (name recorded on each case), ``license``,
``access`` (open / credentialed / restricted), ``defaults`` (Case fields applied where a record has
none, e.g. ``{"modality": "X-ray"}``), ``labels`` (a CSV or JSON label table), ``columns`` (renames
of label-table columns to Case fields).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from pydantic import ValidationError

from medr2 import jsonsafe
from medr2.errors import BadInput, is_text
from medr2.images import ImageRef, ImageStore, open_checked, resolve_inside
from medr2.records import Case, Finding, Structure, check_box, regions_by_kind, stable_hash
from medr2.textfile import open_text
from medr2.vocab import anatomical_location, anatomy_words, clean_label, related
from medr2.vocab.context import stated_absent

MAPPING_FILE = "medr2.json"
ACCESS_LEVELS = ("open", "credentialed", "restricted")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".gif", ".webp")


@dataclass(frozen=True)
class Key:
    """The type of one ``medr2.json`` key (the mapping schema): ``kind`` is ``text``, ``integer``,
    ``number``, ``boolean``, ``object``, ``text map`` (text to text), ``text list`` or ``number list``;
    ``minimum``/``maximum`` bound numbers, ``choices`` the allowed texts (of a list's entries too)."""

    kind: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()

    def expected(self) -> str:
        what = {"text": "text", "integer": "an integer", "number": "a finite number", "boolean": "true or false",
                "object": "an object", "text map": "an object mapping text to text",
                "text list": "a list of texts", "number list": "a list of finite numbers"}[self.kind]
        if self.choices:
            what += f" among {', '.join(self.choices)}"
        if self.minimum is not None:
            what += f" >= {self.minimum:g}"
        if self.maximum is not None:
            what += f" <= {self.maximum:g}"
        return what

    def check(self, value: Any) -> bool:
        k = self.kind
        if k == "text":
            return isinstance(value, str) and (not self.choices or value in self.choices)
        if k == "boolean":
            return isinstance(value, bool)
        if k == "object":
            return isinstance(value, dict)
        if k == "text map":
            return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
        if k in ("integer", "number"):
            return self._number(value, integer=k == "integer")
        if not isinstance(value, list):
            return False
        if k == "text list":
            return all(isinstance(x, str) and (not self.choices or x in self.choices) for x in value)
        return all(self._number(x, integer=False) for x in value)

    def _number(self, v: Any, *, integer: bool) -> bool:
        if isinstance(v, bool) or not isinstance(v, int if integer else int | float):
            return False
        if not integer and not math.isfinite(v):
            return False
        return (self.minimum is None or v >= self.minimum) and (self.maximum is None or v <= self.maximum)


TEXT = Key("text")
# the keys every reader's medr2.json may hold
COMMON_KEYS: dict[str, Key] = {
    "root": TEXT, "source": TEXT, "license": TEXT, "access": Key("text", choices=ACCESS_LEVELS),
    "defaults": Key("object"), "labels": TEXT, "columns": Key("text map"),
}


def check_mapping(mapping: Mapping[str, Any], schema: Mapping[str, Key], where: str | None) -> None:
    """Every key of ``mapping`` known to ``schema`` (common keys included) and of its type, else BadInput naming
    the file, the key and the expected type (exit 2). ``null`` stands for the default."""
    known = {**COMMON_KEYS, **schema}
    unknown = sorted(set(mapping) - set(known))
    if unknown:
        raise BadInput(f"unknown mapping keys {unknown}; known: {sorted(known)}", file=where, field=unknown[0])
    for name, value in mapping.items():
        key = known[name]
        if value is not None and not key.check(value):
            raise BadInput(f"{name} must be {key.expected()}, got {_short(json_text(value), 60)}", file=where,
                           field=name)


def json_text(value: Any) -> str:
    """A value as JSON text (for messages); repr where it is not JSON."""
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


# Case fields a label table may set, with their parser
_STR_FIELDS = ("modality", "plane", "sequence", "body_region", "quality", "artefact", "diagnosis", "severity",
               "malignancy", "report", "patient_id", "split")
LIST_FIELDS = ("mimics", "absent")  # label lists: a JSON list, or one ``;``-separated text in a label table
LABEL_FIELDS: tuple[str, ...] = (*_STR_FIELDS, "pixel_spacing_mm", "flipped", "artefact_severity", *LIST_FIELDS,
                                 "findings", "structures")
_TRUE = {"1", "true", "yes", "y", "t"}
_FALSE = {"0", "false", "no", "n", "f"}


@dataclass(frozen=True)
class DataRoot:
    """A reader's data root and its mapping (from ``medr2.json`` or the mapping file given)."""

    root: Path
    mapping: dict[str, Any]
    mapping_file: Path | None

    @property
    def source(self) -> str:
        return str(self.mapping.get("source") or self.root.name)

    @property
    def license(self) -> str:
        return str(self.mapping.get("license") or "unspecified")

    @property
    def access(self) -> str:
        return str(self.mapping.get("access") or "open")

    @property
    def defaults(self) -> dict[str, Any]:
        return dict(self.mapping.get("defaults") or {})

    def path(self, rel: str, *, record: str | None = None, field_name: str | None = None) -> Path:
        """``rel`` resolved inside the root; BadInput naming the record for ``..``/absolute/symlink escapes and for
        a name that is not UTF-8 text (every reader opens its files through here, so such a file is this record's
        problem, quarantined, and its name never reaches a bench file)."""
        if not is_text(rel):
            raise BadInput("the file name is not UTF-8 text: rename the file (e.g. `convmv -f latin1 -t utf8`)",
                           file=rel, record=record, field=field_name or "file name")
        try:
            p = resolve_inside(self.root, rel)
            p.exists()  # surfaces what the OS refuses (name too long, NUL bytes) as this record's problem
            return p
        except BadInput as e:
            raise BadInput(e.reason, file=rel, record=record, field=field_name) from e
        except (OSError, ValueError) as e:
            raise BadInput(f"unusable path: {e}", file=rel[:200], record=record, field=field_name) from e

    def rel(self, path: Path) -> str:
        """Path relative to the root without resolving links (so a link leading out is still refused)."""
        return path.relative_to(self.root).as_posix()


def open_root(arg: str | None, reader: str, *, schema: Mapping[str, Key]) -> DataRoot:
    """Resolve ``NAME:PATH`` into a DataRoot; reader-level problems raise BadInput (exit 2). The mapping is
    checked against :data:`COMMON_KEYS` and the reader's ``schema`` (:func:`check_mapping`)."""
    if not arg:
        raise BadInput(f"the {reader} source needs a path: --source {reader}:PATH", field="--source")
    p = Path(arg).expanduser()
    if not p.exists():
        raise BadInput(f"{p} does not exist", file=str(p), field="--source")
    mapping_file: Path | None = None
    if p.is_file():
        mapping_file, mapping = p, read_json(p)
        if not isinstance(mapping, dict):
            raise BadInput("the mapping file must hold a JSON object", file=str(p))
        check_mapping(mapping, schema, str(p))
        root = (p.parent / str(mapping.get("root") or ".")).resolve()
        if not root.is_dir():
            raise BadInput(f"root {root} is not a folder", file=str(p), field="root")
    else:
        root = p.resolve()
        mf = root / MAPPING_FILE
        mapping = {}
        if mf.is_file():
            mapping_file, mapping = mf, read_json(mf)
            if not isinstance(mapping, dict):
                raise BadInput("the mapping file must hold a JSON object", file=str(mf))
    where = str(mapping_file) if mapping_file else None
    check_mapping(mapping, schema, where)
    mapping = {k: v for k, v in mapping.items() if v is not None}  # null: the default
    bad_defaults = sorted(set(mapping.get("defaults") or {}) - (set(LABEL_FIELDS) - {"findings", "structures"}))
    if bad_defaults:
        raise BadInput(f"defaults may only set {LABEL_FIELDS}", file=where, field=f"defaults.{bad_defaults[0]}")
    return DataRoot(root, mapping, mapping_file)


def mapping_int(dr: DataRoot, key: str, default: int, minimum: int = 0) -> int:
    """An integer mapping value (``medr2.json``), else BadInput naming the file and key (exit 2)."""
    v = dr.mapping.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise BadInput(f"{key} must be an integer >= {minimum}, got {str(v)[:40]!r}",
                       file=str(dr.mapping_file) if dr.mapping_file else None, field=key)
    return v


def mapping_list(dr: DataRoot, key: str, default: Sequence[Any], kind: type | tuple[type, ...] = str) -> list[Any]:
    """A list mapping value whose entries are of ``kind`` (finite numbers for float), else BadInput (exit 2)."""
    v = dr.mapping.get(key, default)
    v = list(default) if v is None else v
    ok = isinstance(v, list | tuple) and all(isinstance(x, kind) and not isinstance(x, bool) for x in v)
    if ok and kind in (float, (int, float)):
        ok = all(math.isfinite(x) for x in v)
    if not ok:
        raise BadInput(f"{key} must be a list of {getattr(kind, '__name__', 'numbers')}, got {str(v)[:60]!r}",
                       file=str(dr.mapping_file) if dr.mapping_file else None, field=key)
    return list(v)


def read_json(path: Path) -> Any:
    return jsonsafe.load_file(path)


def read_csv(path: Path) -> list[dict[str, str]]:
    try:
        with open_text(path) as f:
            return [dict(r) for r in csv.DictReader(f)]
    except csv.Error as e:
        raise BadInput(f"cannot read CSV: {e}", file=str(path)) from e


def case_id_for(source: str, key: str) -> str:
    return f"{source}-{stable_hash([source, key], 12)}"


def sample_indices(n_total: int, seed: int, n: int | None) -> list[int]:
    """All indices, or a seeded sample of ``n`` kept in original order (deterministic)."""
    if n is None or n >= n_total:
        return list(range(n_total))
    rng = np.random.default_rng(seed)
    return sorted(int(i) for i in rng.choice(n_total, size=n, replace=False))


# --- label tables -------------------------------------------------------------------------------


def _parse_box(v: Any, where: dict[str, str | None]) -> tuple[float, float, float, float]:
    if not (isinstance(v, list | tuple) and len(v) == 4 and all(isinstance(x, int | float) for x in v)):
        raise BadInput("box must be [x1, y1, x2, y2] numbers", **where)
    return (float(v[0]), float(v[1]), float(v[2]), float(v[3]))


def _parse_regions(value: Any, kind: str, where: dict[str, str | None]) -> list[dict[str, Any]]:
    if isinstance(value, str):
        if not value.strip():
            return []
        try:
            value = jsonsafe.loads(value)
        except BadInput as e:
            raise BadInput(f"{kind} must be a JSON list: {e.reason}", **where) from e
    jsonsafe.check_depth(value, **where)
    if not isinstance(value, list):
        raise BadInput(f"{kind} must be a list of objects", **where)
    out = []
    for j, r in enumerate(value):
        w = {**where, "field": f"{where['field']}[{j}]"}
        if not isinstance(r, dict) or not isinstance(r.get("label" if kind == "findings" else "name"), str):
            raise BadInput(f"each of {kind} needs a {'label' if kind == 'findings' else 'name'}", **w)
        out.append({**r, "box": _parse_box(r.get("box"), {**w, "field": f"{w['field']}.box"})})
    return out


def parse_label_value(name: str, value: Any, *, file: str | None, record: str | None) -> Any:
    """Parse one label-table value into the type of Case field ``name`` (BadInput naming the field)."""
    where: dict[str, str | None] = {"file": file, "record": record, "field": name}
    if value is None or (isinstance(value, str) and not value.strip() and name not in ("findings", "structures")):
        return None
    if name in _STR_FIELDS:
        return str(value).strip()
    if name == "pixel_spacing_mm":
        try:
            v = float(value)
        except (TypeError, ValueError, OverflowError):
            raise BadInput(f"not a number: {_short(value)}", **where) from None
        if not (v > 0 and math.isfinite(v)):
            raise BadInput("pixel spacing must be a finite number > 0", **where)
        return v
    if name == "artefact_severity":
        return _integer(value, where)
    if name == "flipped":
        return _boolean(value, where)
    if name in LIST_FIELDS:
        if isinstance(value, list):
            return [str(v) for v in value]
        return [s.strip() for s in str(value).split(";") if s.strip()]
    return _parse_regions(value, name, where)  # findings / structures


def _boolean(value: Any, where: dict[str, str | None]) -> bool:
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in _TRUE | _FALSE:
        return s in _TRUE
    raise BadInput(f"not a boolean: {_short(value)}", **where)


def _short(value: Any, n: int = 80) -> str:
    r = repr(value)
    return r if len(r) <= n else r[:n] + "..."


def _integer(value: Any, where: dict[str, str | None]) -> int:
    """An integer label value: an int, an integral finite float, or its text (not a bool)."""
    if isinstance(value, bool):
        raise BadInput(f"not an integer: {value!r}", **where)
    try:
        if isinstance(value, float):
            if not value.is_integer():  # also false for nan and inf
                raise ValueError
            return int(value)
        return int(str(value).strip()) if isinstance(value, str) else int(value)
    except (TypeError, ValueError, OverflowError):
        raise BadInput(f"not an integer: {_short(value)}", **where) from None


@dataclass
class LabelTable:
    """Rows of a CSV/JSON label table keyed by their ``image`` path (relative to the data root)."""

    file: str
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    bad: list[BadInput] = field(default_factory=list)  # rows that could not be keyed (quarantined by the reader)


def load_label_table(dr: DataRoot, rel: str, *, key: str = "image") -> LabelTable:
    """Load ``rel`` (CSV, or JSON list of objects); rename columns by ``mapping.columns``.

    Columns must be ``image``, a Case label field, ``frame`` or ``meta.<name>``; anything else is a
    reader-level error (a typo would otherwise silently drop labels).
    """
    path = dr.path(rel, field_name="labels")
    if not path.is_file():
        raise BadInput("label table not found", file=str(path), field="labels")
    try:
        raw: Any = read_json(path) if path.suffix.lower() == ".json" else read_csv(path)
    except BadInput as e:
        raise BadInput(e.reason, file=e.file, record=e.record, field=e.field or "labels") from e
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        raise BadInput("label table must be a list of objects (JSON) or rows (CSV)", file=str(path))
    renames: Mapping[str, str] = dr.mapping.get("columns") or {}
    table = LabelTable(file=str(path))
    conflicts: set[str] = set()
    allowed = {key, "frame", *LABEL_FIELDS}
    for i, row in enumerate(raw):
        row = {renames.get(k, k): v for k, v in row.items()}
        unknown = sorted(k for k in row if k not in allowed and not k.startswith("meta."))
        if unknown:
            raise BadInput(f"unknown column {unknown[0]!r}; use a Case field ({', '.join(LABEL_FIELDS)}), "
                           f"'meta.NAME', or a rename in 'columns'", file=str(path), field=unknown[0])
        k = row.get(key)
        if not isinstance(k, str) or not k.strip():
            table.bad.append(BadInput(f"row without {key!r}", file=str(path), record=f"row {i + 1}", field=key))
            continue
        k = image_key(k.strip())
        if "frame" in row and row["frame"] is not None and str(row["frame"]).strip() != "":
            try:
                frame = _integer(row["frame"], {"file": str(path), "record": k, "field": "frame"})
                if frame < 0:
                    raise BadInput("frame must be >= 0", file=str(path), record=k, field="frame")
            except BadInput as e:
                table.bad.append(e)
                continue
            k = f"{k}#{frame}"
        if k in conflicts:
            table.bad.append(BadInput("contradictory labels for one image (another row names it with other "
                                      "labels)", file=str(path), record=k, field=key))
            continue
        if k in table.rows:
            if _labels(table.rows[k], key) == _labels(row, key):
                table.bad.append(BadInput("duplicate row for this image", file=str(path), record=k, field=key))
                continue
            # one image, two sets of labels: neither can be trusted, so every row of it is quarantined
            del table.rows[k]
            conflicts.add(k)
            table.bad += [BadInput("contradictory labels for one image (another row names it with other labels)",
                                   file=str(path), record=k, field=key)] * 2
            continue
        table.rows[k] = row
    return table


def image_key(rel: str) -> str:
    """One spelling per image path: ``xr/0.png``, ``./xr/0.png`` and ``xr//0.png`` are one image."""
    import posixpath

    rel = rel.strip()
    norm = posixpath.normpath(rel)
    return rel if norm == "." else norm


def _labels(row: Mapping[str, Any], key: str) -> dict[str, str]:
    return {k: str(v).strip() for k, v in row.items() if k != key and v is not None and str(v).strip() != ""}


# what a source knows about a case, read by the tasks' answerability contract (medr2.tasks.contract): true only
# where declared; a label table declares them in columns meta.findings_complete, meta.structures_complete,
# meta.one_lesion, meta.instances_complete, meta.lateralising, meta.severity_graded, meta.malignancy_discriminable
# (booleans as for ``flipped``; empty: unknown), and the list meta.discriminable (``;``-separated as ``mimics``)
DECLARED_FLAGS = ("findings_complete", "structures_complete", "one_lesion", "instances_complete", "lateralising",
                  "severity_graded", "malignancy_discriminable")
DECLARED_LISTS = ("discriminable",)


def declared_flag(key: str, value: Any, *, file: str | None, record: str | None) -> bool | None:
    """A declared flag of a label-table row as a bool (None when empty); BadInput naming the field otherwise."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _boolean(value, {"file": file, "record": record, "field": key})


def labels_to_fields(row: Mapping[str, Any], *, file: str | None, record: str | None) -> dict[str, Any]:
    """Case fields (parsed) and ``meta`` from one label-table row."""
    out: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    for k, v in row.items():
        if k.startswith("meta."):
            meta[k[5:]] = declared_flag(k, v, file=file, record=record) if k[5:] in DECLARED_FLAGS else \
                parse_label_value("mimics", v, file=file, record=record) if k[5:] in DECLARED_LISTS else v
        elif k in LABEL_FIELDS:
            parsed = parse_label_value(k, v, file=file, record=record)
            if parsed is not None:
                out[k] = parsed
    if meta:
        out["meta"] = meta
    return out


# --- label maps and masks -------------------------------------------------------------------------


def load_label_map(path: Path, *, record: str | None = None, grey_rgb: bool = False) -> np.ndarray:
    """Decode a single-channel label map (L, P, 1 or 16-bit) keeping the raw label values. With
    ``grey_rgb`` an RGB(A) file whose colour channels are equal is read from its first channel (a label
    map some datasets save as grey RGB); a colour one is refused."""
    try:
        with open_checked(path, record=record, field="mask") as im:
            single = im.mode in ("L", "P", "1", "I;16", "I;16B", "I;16L", "I")
            if not single and not (grey_rgb and im.mode in ("RGB", "RGBA")):
                raise BadInput(f"label map must be single-channel (L, P or 16-bit), got mode {im.mode}",
                               file=str(path), record=record, field="mask")
            im.load()
            arr = np.asarray(im)
    except BadInput:
        raise
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise BadInput(f"cannot decode label map: {e}", file=str(path), record=record, field="mask") from e
    if arr.ndim == 3:
        if not (arr[..., :3] == arr[..., :1]).all():
            raise BadInput("colour label map: values cannot be read as labels", file=str(path), record=record,
                           field="mask")
        arr = arr[..., 0]
    return arr.astype(np.int64)


def mask_box(mask: np.ndarray) -> tuple[float, float, float, float] | None:
    """Pixel ``xyxy`` box enclosing a boolean mask (pixel edges), or None if empty."""
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    return (float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1))


def put_mask(images: ImageStore, mask: np.ndarray) -> ImageRef:
    return images.put_array(np.where(mask, 255, 0).astype(np.uint8))


def region_from_mask(images: ImageStore, mask: np.ndarray, name: str, kind: str,
                     attributes: Mapping[str, Any] | None = None) -> Structure | Finding | None:
    """A Structure (kind organ/region/landmark/instance) or Finding (kind ``finding``) from a mask."""
    box = mask_box(mask)
    if box is None:
        return None
    ref = put_mask(images, mask)
    area = float(mask.sum())
    if kind == "finding":
        return Finding(label=name, box=box, mask=ref.path, area_px=area, attributes=dict(attributes or {}))
    return Structure(name=name, kind=kind, box=box, mask=ref.path, area_px=area)  # type: ignore[arg-type]


def regions_from_labels(fields: dict[str, Any], width: int, height: int, *, file: str | None,
                        record: str | None) -> tuple[list[Structure], list[Finding]]:
    """Structures/findings given as boxes in a label table, checked against the image size."""
    structures: list[Structure] = []
    findings: list[Finding] = []
    for kind in ("structures", "findings"):
        for j, r in enumerate(fields.pop(kind, [])):
            try:
                check_box(r["box"], width, height)
            except ValueError as e:
                raise BadInput(str(e), file=file, record=record, field=f"{kind}[{j}].box") from e
            x1, y1, x2, y2 = r["box"]
            area = (x2 - x1) * (y2 - y1)
            try:
                if kind == "structures":
                    structures.append(Structure(name=r["name"], kind=r.get("kind", "organ"), box=r["box"],
                                                area_px=area))
                else:
                    findings.append(Finding(label=r["label"], box=r["box"], area_px=area,
                                            attributes=dict(r.get("attributes") or {})))
            except ValidationError as e:
                raise BadInput(_first_error(e), file=file, record=record, field=f"{kind}[{j}]") from e
    return structures, findings


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ()))
    return f"{loc}: {err.get('msg')}" if loc else str(err.get("msg"))


# the Case fields that hold a label (shown as an answer or an option): cleaned by make_case (vocab.clean_label)
LABEL_TEXT_FIELDS = ("modality", "plane", "sequence", "body_region", "diagnosis", "severity", "malignancy", "quality",
                "artefact")


def _no_empty_label(structures: Sequence[Structure], findings: Sequence[Finding], fields: Mapping[str, Any], *,
                    file: str, record: str) -> None:
    """A label that is empty once cleaned (only invisible characters or spaces) is BadInput naming it."""
    empty = [f"structures[{j}].name" for j, s in enumerate(structures) if not s.name]
    empty += [f"findings[{j}].label" for j, f in enumerate(findings) if not f.label]
    empty += [k for k in LABEL_TEXT_FIELDS if k != "modality" and fields.get(k) == ""]
    if empty:
        raise BadInput("empty label (nothing but invisible characters or spaces)", file=file, record=record,
                       field=empty[0])


ANATOMICAL_KINDS = ("organ", "region", "landmark")  # structure kinds named by anatomy (not an instance's class)


def structure_words(name: str, kind: str = "organ") -> str:
    """A structure's name as a radiologist signs it: an anatomical structure's atlas spelling or raw label name
    through the vocabulary (:func:`medr2.vocab.anatomy_words`: ``Frontal_Sup_L`` -> "left superior frontal gyrus",
    MSD's ``PZ`` -> "prostate peripheral zone", ``CSF`` -> "cerebrospinal fluid"); any other kind cleaned only."""
    text = clean_label(name)
    return anatomy_words(text) if kind in ANATOMICAL_KINDS else text


def located(attributes: Mapping[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """A finding's attributes with its ``location`` worded as a radiologist signs it
    (:func:`medr2.vocab.anatomical_location`); a location that is none (a tissue class: "grey matter" says what a
    lesion is made of, not where) is dropped, never guessed, and counted in ``meta["locations_dropped"]``."""
    out = dict(attributes)
    loc = out.get("location")
    if isinstance(loc, str):
        words = anatomical_location(loc)
        if words is None:
            out.pop("location")
            meta["locations_dropped"] = int(meta.get("locations_dropped", 0)) + 1
        else:
            out["location"] = words
    return out


def report_absent(fields: Mapping[str, Any], findings: Sequence[Finding] = ()) -> list[str]:
    """The finding/diagnosis labels a case's free-text ``report`` states absent
    (:func:`medr2.vocab.context.stated_absent`: negated, not hedged, not hypothetical, nowhere affirmed), less
    those the case's own labels name (its findings, diagnosis, mimics, absent labels; the same concept, a sub-type
    or a parent of one). Every reader's case passes here (:func:`make_case`), so a reader with report text (IU
    X-ray, a label table's ``report`` column) fills ``Case.absent`` from its negations by this one rule."""
    report = fields.get("report")
    if not isinstance(report, str) or not report.strip():
        return []
    named = [f.label for f in findings] + [str(x) for x in (fields.get("diagnosis"), *(fields.get("mimics") or []),
                                                            *(fields.get("absent") or [])) if x]
    return [a for a in stated_absent(report)
            if not any(related(a, n) in ("same", "child", "parent") for n in named)]


def make_case(dr: DataRoot, *, key: str, ref: ImageRef, fields: dict[str, Any], file: str,
              structures: Sequence[Structure] = (), findings: Sequence[Finding] = (),
              meta: Mapping[str, Any] | None = None) -> Case:
    """Build and validate a Case: defaults from the mapping, then the record's own fields. Every label (finding
    labels, structure names, :data:`LABEL_TEXT_FIELDS`, mimics, absent labels) is cleaned here
    (:func:`medr2.vocab.clean_label`: NFKC, invisible characters, white space), the one place every reader's cases
    pass; structure names and finding locations are worded as a radiologist signs them (:func:`structure_words`,
    :func:`located`); a free-text report's negated findings are stated absent (:func:`report_absent`, recorded in
    ``meta["report_absent"]``)."""
    mfile = str(dr.mapping_file) if dr.mapping_file else None
    merged = {k: parse_label_value(k, v, file=mfile, record=key) for k, v in dr.defaults.items()}
    merged = {k: v for k, v in merged.items() if v is not None}
    merged.update(fields)
    extra_meta = dict(merged.pop("meta", {}) or {})
    structures = [s.model_copy(update={"name": structure_words(s.name, s.kind)}) for s in
                  (*structures, *merged.pop("structures", []))]
    findings = [f.model_copy(update={"label": clean_label(f.label), "attributes": located(f.attributes, extra_meta)})
                for f in (*findings, *merged.pop("findings", []))]
    merged.update({k: clean_label(v) for k, v in merged.items() if k in LABEL_TEXT_FIELDS and isinstance(v, str)})
    for name in LIST_FIELDS:
        if isinstance(merged.get(name), list):
            merged[name] = [clean_label(m) if isinstance(m, str) else m for m in merged[name]]
    _no_empty_label(structures, findings, merged, file=file, record=key)
    said = report_absent(merged, findings)
    if said:
        merged["absent"] = [*(merged.get("absent") or []), *said]
        extra_meta["report_absent"] = said
    if not merged.get("modality"):
        raise BadInput("modality is missing: give it in the labels or as defaults.modality in medr2.json",
                       file=file, record=key, field="modality")
    if merged.get("split") not in (None, "train", "val", "test"):
        raise BadInput("split must be train, val or test", file=file, record=key, field="split")
    case_id = case_id_for(dr.source, key)
    if not merged.get("patient_id"):
        merged["patient_id"] = case_id
        extra_meta["patient_id_inferred"] = True
    for kind, recs in regions_by_kind(structures, findings):
        for j, r in enumerate(recs):
            try:
                check_box(r.box, ref.width, ref.height)
            except ValueError as e:
                raise BadInput(str(e), file=file, record=key, field=f"{kind}[{j}].box") from e
    try:
        return Case(case_id=case_id, image=ref.path, image_sha256=ref.sha256, width=ref.width, height=ref.height,
                    structures=list(structures), findings=list(findings), source=dr.source, license=dr.license,
                    access=dr.access, meta={"file": key, **extra_meta, **dict(meta or {})}, **merged)
    except ValidationError as e:
        err = e.errors()[0]
        raise BadInput(str(err.get("msg")), file=file, record=key,
                       field=".".join(str(x) for x in err.get("loc", ())) or None) from e


def list_files(dr: DataRoot, suffixes: Sequence[str], under: Path | None = None) -> list[Path]:
    """Files under the root with one of ``suffixes`` (sorted); symlinks that leave the root are refused later."""
    base = under or dr.root
    return sorted(p for p in base.rglob("*") if p.suffix.lower() in suffixes and (p.is_file() or p.is_symlink()))
