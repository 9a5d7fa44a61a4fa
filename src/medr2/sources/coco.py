"""``coco`` reader: a COCO detection JSON (images, annotations, categories) -> Cases.

Boxes are COCO ``[x, y, width, height]``; segmentations are polygons (lists of ``x1,y1,x2,y2,...``),
uncompressed RLE (``counts`` a list) or compressed RLE (``counts`` a string), all decoded here
following the COCO mask API (column-major runs starting with background). Mapping keys
(``medr2.json``): ``annotations`` (JSON path, default ``annotations.json``), ``images_dir`` (folder of
``file_name``, default the root), ``structures`` (category names that are anatomy, not findings),
``structure_kind`` (default ``organ``), ``patient_from_name`` (a regular expression whose first group,
searched in the image's base name, is the patient id, or the preset ``nih`` for ChestX-ray14 names
``00000013_005.png`` -> ``00000013``; without it each image is its own patient). Extra keys on a COCO image
entry that are Case fields (``modality``, ``diagnosis``, ``split``, ...) are applied to that case; an
annotation's ``attributes`` object becomes the finding's attributes, except CVAT attribute *specs* (the
same comma-separated list of choices, e.g. ``"High, Medium, Low"``, on every annotation: the definition
of an attribute nobody set), which are dropped and named in the case's ``meta["attribute_specs_dropped"]``.
``--source coco:FILE.json`` names the COCO file itself (mapping from ``medr2.json`` beside it, if any). A
``file_name`` not found as written is looked up case-insensitively in its folder (``.jpg`` in the JSON,
``.JPG`` on disk); the name used is kept in ``meta["file_name_on_disk"]``. COCO annotates every instance of a
category on an image (an instance left out counts as a false detection in the format's evaluation), so a case with
findings declares ``meta["instances_complete"]`` (docs/tasks.md, ``one_per_label``); other categories' findings
are not declared complete.

Without ``images_dir`` the images are looked for where COCO exports put them (``image_folders``): beside the
JSON, in ``images/``, in the split folder named after the file (``annotations/instances_val2017.json`` ->
``val2017/``, also ``images/val2017/`` and the same one folder up, beside ``annotations/``); the folder holding
most of the first images listed is used (``meta["images_dir_found"]`` names it). Where none holds any, each image
is refused naming the folders searched and the mapping key that fixes it (``images_dir`` in ``medr2.json``).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from medr2.errors import BadInput
from medr2.images import ImageStore, load_image
from medr2.records import Case, Finding, Structure
from medr2.sources.common import (
    LABEL_FIELDS,
    TEXT,
    DataRoot,
    Key,
    labels_to_fields,
    make_case,
    mapping_list,
    mask_box,
    open_root,
    put_mask,
    read_json,
    sample_indices,
)

STRUCTURE_KINDS = ("organ", "region", "landmark", "instance")
PATIENT_PRESETS = {"nih": r"^(\d{8})_\d{3}"}  # NIH ChestX-ray14: <patient>_<follow-up>.png (also Roboflow's *_png.rf.*)


def _looks_like_coco(p: Path) -> bool:
    """A JSON file that is a COCO export (``images`` and ``annotations`` lists), not a medr2 mapping."""
    if not p.is_file() or p.suffix.lower() != ".json":
        return False
    try:
        data = read_json(p)
    except BadInput:
        return False
    return isinstance(data, dict) and isinstance(data.get("images"), list) and "annotations" in data


def attribute_specs(annotations: list[Any]) -> set[str]:
    """CVAT attribute keys whose value is the same comma-separated list of choices on every annotation
    (the attribute's definition, exported when nobody set it), not a value."""
    values: dict[str, set[str]] = defaultdict(set)
    seen: dict[str, int] = defaultdict(int)
    for a in annotations:
        attrs = a.get("attributes") if isinstance(a, dict) else None
        for k, v in (attrs.items() if isinstance(attrs, dict) else ()):
            seen[k] += 1
            values[k].add(v if isinstance(v, str) else repr(v))
    return {k for k, vs in values.items() if len(vs) == 1 and seen[k] > 1
            and len([x for x in next(iter(vs)).split(",") if x.strip()]) >= 2}

# --- COCO run-length encoding (column-major, runs alternate 0/1 starting with 0) -------------------


def rle_encode_counts(mask: np.ndarray) -> list[int]:
    """Uncompressed COCO RLE counts of a boolean (H, W) mask."""
    flat = np.asarray(mask, dtype=bool).flatten(order="F")
    if flat.size == 0:
        return []
    change = np.flatnonzero(flat[1:] != flat[:-1]) + 1
    bounds = np.concatenate([[0], change, [flat.size]])
    runs = np.diff(bounds).tolist()
    return ([0] + runs) if flat[0] else runs


def rle_counts_to_string(counts: list[int]) -> str:
    """Compress counts to the COCO string form (LEB128-like, 5 bits per char, delta to counts[i-2])."""
    out = []
    for i, c in enumerate(counts):
        x = int(c) - (int(counts[i - 2]) if i > 2 else 0)
        more = True
        while more:
            ch = x & 0x1F
            x >>= 5
            more = (x != -1) if (ch & 0x10) else (x != 0)
            if more:
                ch |= 0x20
            out.append(chr(ch + 48))
    return "".join(out)


def rle_string_to_counts(s: str) -> list[int]:
    counts: list[int] = []
    p = 0
    while p < len(s):
        x = k = 0
        more = True
        while more:
            if p >= len(s):
                raise ValueError("truncated RLE string")
            ch = ord(s[p]) - 48
            if not 0 <= ch < 64:
                raise ValueError(f"invalid RLE character {s[p]!r}")
            x |= (ch & 0x1F) << (5 * k)
            more = bool(ch & 0x20)
            p += 1
            k += 1
            if not more and ch & 0x10:
                x |= -1 << (5 * k)
        if len(counts) > 2:
            x += counts[-2]
        counts.append(x)
    return counts


def rle_decode(counts: list[int] | str, height: int, width: int) -> np.ndarray:
    """Boolean (H, W) mask from COCO RLE counts (list or compressed string)."""
    cnts = rle_string_to_counts(counts) if isinstance(counts, str) else [int(c) for c in counts]
    if any(c < 0 for c in cnts) or sum(cnts) != height * width:
        raise ValueError(f"RLE counts sum to {sum(cnts)}, expected {height}x{width}={height * width}")
    vals = np.zeros(len(cnts), dtype=bool)
    vals[1::2] = True
    flat = np.repeat(vals, cnts)
    return flat.reshape((height, width), order="F")


def polygons_to_mask(polys: list[list[float]], height: int, width: int) -> np.ndarray:
    img = Image.new("1", (width, height), 0)
    draw = ImageDraw.Draw(img)
    for poly in polys:
        if len(poly) < 6 or len(poly) % 2:
            raise ValueError("a polygon needs at least 3 x,y points")
        draw.polygon([(float(poly[i]), float(poly[i + 1])) for i in range(0, len(poly), 2)], fill=1, outline=1)
    return np.asarray(img, dtype=bool)


def segmentation_to_mask(seg: Any, height: int, width: int) -> np.ndarray:
    if isinstance(seg, list):
        return polygons_to_mask(seg, height, width)
    if isinstance(seg, dict) and "counts" in seg:
        size = seg.get("size")
        if size is not None and list(size) != [height, width]:
            raise ValueError(f"RLE size {size} differs from the image size [{height}, {width}]")
        return rle_decode(seg["counts"], height, width)
    raise ValueError("segmentation must be polygons or an RLE object")


# --- where a COCO export keeps its images ---------------------------------------------------------------------
PROBE_IMAGES = 50  # image entries whose files decide the folder (stat calls only)
ANNOTATION_PREFIXES = ("instances_", "person_keypoints_", "captions_", "panoptic_", "image_info_")


def split_names(ann: Path) -> list[str]:
    """The split folder names a COCO file's name points to: ``instances_val2017.json`` -> ``val2017``,
    ``train.json`` -> ``train``, ``_annotations.coco.json`` (Roboflow, beside its images) -> none."""
    stem = ann.name.removesuffix(ann.suffix).removesuffix(".coco")
    names = [stem]
    for prefix in ANNOTATION_PREFIXES:
        if stem.startswith(prefix):
            names.append(stem.removeprefix(prefix))
    if "_" in stem.strip("_"):
        names.append(stem.rsplit("_", 1)[1])
    return [n for n in dict.fromkeys(x.strip("_") for x in names) if n and n != "annotations"]


def image_folders(ann: Path) -> list[tuple[Path, str]]:
    """Where COCO exports put the images, in order of preference: (root, folder under it) pairs, root the JSON's
    folder or the one above it (``annotations/`` beside ``val2017/``)."""
    here, up = ann.parent, ann.parent.parent
    splits = split_names(ann)
    near = ["", "images", *splits, *(f"images/{s}" for s in splits)]
    far = ["images", *splits, *(f"images/{s}" for s in splits)]
    out = [(here, d) for d in near] + ([(up, d) for d in far] if up != here else [])
    return list(dict.fromkeys(out))


def _has(folder: Path, name: str) -> bool:
    p = folder / name
    return p.is_file() or _case_insensitive(p) is not None


def find_images(ann: Path, names: list[str]) -> tuple[Path, str] | None:
    """The (root, folder) of ``image_folders`` that holds most of ``names`` (at least one), or None."""
    best, best_hits = None, 0
    probe = [n for n in names[:PROBE_IMAGES] if n and not Path(n).is_absolute() and ".." not in Path(n).parts]
    for root, d in image_folders(ann):
        folder = root / d
        if not folder.is_dir():
            continue
        hits = sum(_has(folder, n) for n in probe)
        if hits > best_hits:
            best, best_hits = (root, d), hits
            if hits == len(probe):
                break
    return best


def _shown(root: Path, d: str, ann: Path) -> str:
    folder = root / d if d else root
    try:
        return str(folder.relative_to(ann.parent)) + "/" if folder != ann.parent else "beside the JSON"
    except ValueError:
        return "../" + (d + "/" if d else "")


# --- the reader ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CocoSpec:
    image: dict[str, Any]
    annotations: tuple[dict[str, Any], ...]
    error: str | None = None
    field: str | None = None
    dropped: tuple[str, ...] = ()  # CVAT attribute specs of the file (not values)


class CocoSource:
    name = "coco"
    mapping_schema: dict[str, Key] = {
        "annotations": TEXT, "images_dir": TEXT, "structures": Key("text list"),
        "structure_kind": Key("text", choices=STRUCTURE_KINDS), "patient_from_name": TEXT}

    def __init__(self, arg: str | None) -> None:
        coco_file = Path(arg).expanduser() if arg and _looks_like_coco(Path(arg).expanduser()) else None
        self.dr: DataRoot = open_root(str(coco_file.parent) if coco_file else arg, "coco",
                                      schema=self.mapping_schema)
        m = self.dr.mapping
        self.ann_path = coco_file.resolve() if coco_file else \
            self.dr.path(str(m.get("annotations", "annotations.json")), field_name="annotations")
        pat = m.get("patient_from_name")
        try:
            self.patient_re = re.compile(PATIENT_PRESETS.get(str(pat), str(pat))) if pat else None
        except re.error as e:
            raise BadInput(f"not a regular expression: {e}", file=str(self.dr.mapping_file),
                           field="patient_from_name") from e
        if self.patient_re is not None and self.patient_re.groups < 1:
            raise BadInput("patient_from_name needs one (group) for the patient id", file=str(self.dr.mapping_file),
                           field="patient_from_name")
        if not self.ann_path.is_file():
            raise BadInput("COCO annotations JSON not found (set 'annotations' in medr2.json)",
                           file=str(self.ann_path), field="annotations")
        self.images_dir = str(m.get("images_dir", ""))
        self.search_images = "images_dir" not in m  # found in plan() where exports put them
        self.searched: tuple[str, ...] = ()
        self.found = ""  # where the search found the images, as the refusal would name it
        self.structures = set(mapping_list(self.dr, "structures", ()))
        self.structure_kind = str(m.get("structure_kind", "organ"))
        if self.structure_kind not in STRUCTURE_KINDS:
            raise BadInput(f"structure_kind must be one of {STRUCTURE_KINDS}", file=str(self.dr.mapping_file),
                           field="structure_kind")

    def _load(self) -> tuple[dict[str, Any], dict[int, dict[str, Any]]]:
        data = read_json(self.ann_path)
        f = str(self.ann_path)
        if not isinstance(data, dict):
            raise BadInput("COCO JSON must be an object", file=f)
        for key in ("images", "annotations", "categories"):
            if not isinstance(data.get(key), list):
                raise BadInput(f"COCO JSON needs a list {key!r}", file=f, field=key)
        cats = {}
        for c in data["categories"]:
            if not isinstance(c, dict) or not isinstance(c.get("id"), int) or not isinstance(c.get("name"), str):
                raise BadInput("each category needs an integer id and a name", file=f, field="categories")
            cats[c["id"]] = c
        return data, cats

    def plan(self, seed: int, n: int | None) -> list[CocoSpec]:
        """The cases to realise: one per image entry, then one per annotation whose image_id names no image
        (each refused with its reason when realised)."""
        data, cats = self._load()
        if self.search_images:
            self._find_images(data["images"])
        by_image: dict[Any, list[dict[str, Any]]] = defaultdict(list)
        for a in data["annotations"]:
            if not isinstance(a, dict):
                a = {"id": "?", "bad": "annotation is not an object"}
            cat = cats.get(_id_key(a.get("category_id")))  # type: ignore[arg-type]
            # the category name travels with the annotation so a spec is self-contained
            by_image[_id_key(a.get("image_id"))].append({**a, "_category": cat["name"] if cat else None})
        specs = []
        dropped = tuple(sorted(attribute_specs(data["annotations"])))
        seen: set[Any] = set()
        for im in sorted((i for i in data["images"] if isinstance(i, dict)), key=lambda i: str(i.get("id"))):
            key = _id_key(im.get("id"))
            if key in seen:
                specs.append(CocoSpec(im, (), "duplicate image id", "images.id"))
                continue
            seen.add(key)
            specs.append(CocoSpec(im, tuple(by_image.get(key, [])), dropped=dropped))
        orphans = [a for k, anns in by_image.items() if k not in seen for a in anns]
        for a in orphans:
            specs.append(CocoSpec({"id": f"annotation {a.get('id') if isinstance(a, dict) else '?'}"}, (a,),
                                  "annotation refers to an unknown image_id", "annotations.image_id"))
        return [specs[i] for i in sample_indices(len(specs), seed, n)]

    def _find_images(self, entries: list[Any]) -> None:
        """Point the reader at the folder of ``image_folders`` that holds the images (kept as is if none does:
        each image is then refused naming the folders searched)."""
        names = [str(e.get("file_name") or "") for e in entries if isinstance(e, dict)]
        self.searched = tuple(_shown(r, d, self.ann_path) for r, d in image_folders(self.ann_path))
        found = find_images(self.ann_path, names)
        if found is None:
            return
        root, self.images_dir = found
        beside = root == self.ann_path.parent and not self.images_dir
        self.found = "" if beside else _shown(root, self.images_dir, self.ann_path)
        if root != self.dr.root:  # one folder up: the same source name, ids keyed from there
            self.dr = replace(self.dr, root=root, mapping={**self.dr.mapping, "source": self.dr.source})
        self.searched = ()

    def _not_found(self) -> str:
        if not self.searched:
            return "image file not found"
        where = self.dr.mapping_file or self.ann_path.parent / "medr2.json"
        return (f"image file not found; looked {', '.join(self.searched)}: set 'images_dir' in {where} to the "
                "folder (under the JSON's folder) that holds the images")

    def realize(self, spec: CocoSpec, images: ImageStore) -> Case:
        f = str(self.ann_path)
        record = str(spec.image.get("file_name") or spec.image.get("id"))
        if spec.error:
            raise BadInput(spec.error, file=f, record=record, field=spec.field)
        name = spec.image.get("file_name")
        if not isinstance(name, str) or not name:
            raise BadInput("image entry without file_name", file=f, record=record, field="images.file_name")
        if Path(name).is_absolute():
            raise BadInput("absolute path not allowed", file=f, record=record, field="images.file_name")
        rel = f"{self.images_dir}/{name}" if self.images_dir else name
        path = self.dr.path(rel, record=record, field_name="images.file_name")
        meta: dict[str, Any] = {"coco_image_id": spec.image.get("id")}
        if self.found:
            meta["images_dir_found"] = self.found
        if not path.is_file():
            other = _case_insensitive(path)
            if other is None:
                raise BadInput(self._not_found(), file=f, record=record, field="images.file_name")
            path = self.dr.path(str(Path(rel).parent / other.name), record=record, field_name="images.file_name")
            meta["file_name_on_disk"] = other.name
        try:
            arr = load_image(path)
        except BadInput as e:
            raise BadInput(e.reason, file=str(path), record=record, field="images.file_name") from e
        h, w = arr.shape[:2]
        if (spec.image.get("width"), spec.image.get("height")) not in ((w, h), (None, None)):
            raise BadInput(f"declared size {spec.image.get('width')}x{spec.image.get('height')} but the file is "
                           f"{w}x{h}", file=f, record=record, field="images.width")
        ref = images.put_array(arr)
        structures: list[Structure] = []
        findings: list[Finding] = []
        for a in sorted(spec.annotations, key=lambda a: str(a.get("id"))):
            s, fd = self._region(a, images, w, h, record, spec.dropped)
            structures += s
            findings += fd
        label_fields = {k: v for k, v in spec.image.items()
                        if k in LABEL_FIELDS and k not in ("findings", "structures")}
        fields = labels_to_fields(label_fields, file=f, record=record)
        if self.patient_re is not None and not fields.get("patient_id"):
            m = self.patient_re.search(Path(name).name)
            if m is None:
                raise BadInput(f"file name does not match patient_from_name {self.patient_re.pattern!r}", file=f,
                               record=record, field="images.file_name")
            fields["patient_id"] = m.group(1)
        if spec.dropped:
            meta["attribute_specs_dropped"] = list(spec.dropped)
        if findings:  # COCO lists every instance of a category on an image: "the {f}" of one box is the only one
            meta["instances_complete"] = True
        return make_case(self.dr, key=rel, ref=ref, fields=fields, file=f, structures=structures, findings=findings,
                         meta=meta)

    def _region(self, a: dict[str, Any], images: ImageStore, w: int, h: int, record: str,
                dropped: tuple[str, ...] = ()) -> tuple[list[Structure], list[Finding]]:
        f = str(self.ann_path)
        fld = f"annotations[{a.get('id')}]"
        if a.get("bad"):
            raise BadInput(str(a["bad"]), file=f, record=record, field="annotations")
        if a.get("_category") is None:
            raise BadInput(f"unknown category_id {a.get('category_id')!r}", file=f, record=record,
                           field=f"{fld}.category_id")
        bbox = a.get("bbox")
        if not (isinstance(bbox, list) and len(bbox) == 4 and all(isinstance(v, int | float) for v in bbox)):
            raise BadInput("bbox must be [x, y, width, height]", file=f, record=record, field=f"{fld}.bbox")
        x, y, bw, bh = (float(v) for v in bbox)
        box = (x, y, x + bw, y + bh)
        mask_rel = None
        area = bw * bh
        if a.get("segmentation"):
            try:
                m = segmentation_to_mask(a["segmentation"], h, w)
            except (ValueError, TypeError) as e:
                raise BadInput(str(e), file=f, record=record, field=f"{fld}.segmentation") from e
            if mask_box(m) is not None:
                mask_rel = put_mask(images, m).path
                area = float(m.sum())
        name = str(a["_category"])
        if name in self.structures:
            kind = self.structure_kind
            return [Structure(name=name, kind=kind, box=box, mask=mask_rel, area_px=area)], []  # type: ignore[arg-type]
        given = a.get("attributes")
        attrs = {k: v for k, v in given.items() if k not in dropped} if isinstance(given, dict) else {}
        return [], [Finding(label=name, box=box, mask=mask_rel, area_px=area, attributes=dict(attrs))]


def _case_insensitive(path: Path) -> Path | None:
    """The one file in ``path``'s folder whose name equals ``path.name`` ignoring case, or None."""
    if not path.parent.is_dir():
        return None
    hits = [p for p in path.parent.iterdir() if p.name.lower() == path.name.lower() and p.is_file()]
    return hits[0] if len(hits) == 1 else None


def _factory(arg: str | None) -> CocoSource:
    return CocoSource(arg)


def _id_key(value: Any) -> Any:
    """An id as a dict key: the value itself where it can be one; a list or object (not a valid COCO id) as its
    JSON text tagged apart, so it matches no real id and is refused where it is used, not a TypeError here."""
    try:
        hash(value)
    except TypeError:
        return ("not an id", json.dumps(value, sort_keys=True, default=str))
    return value
