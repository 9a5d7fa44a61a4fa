"""``msd`` reader: a Medical Segmentation Decathlon task folder (``TaskNN_Name``).

Layout (medicaldecathlon.com; Antonelli et al. 2022, and MONAI's ``DecathlonDataset`` reads the same):
``dataset.json`` with ``name``, ``modality`` (``{"0": "FLAIR", "1": "T1w", ...}``, one entry per channel
of a 4-D image), ``labels`` (``{"0": "background", "1": "edema", ...}``), ``training`` (a list of
``{"image": "./imagesTr/x.nii.gz", "label": "./labelsTr/x.nii.gz"}``), ``test`` (paths in
``imagesTs/``, no labels; not read) and ``licence``.

Every training volume is cut per channel into ``slices_per_plane`` (default 1) slices per plane
(``planes``, default axial, coronal, sagittal) over the labelled extent, like the ``nifti`` reader.
Channels named ``CT`` give modality CT; the others MRI with the channel name as the sequence (``T1w``
-> ``T1-weighted``, ``t1gd`` -> ``T1 post-contrast``, ``T2w``/``T2`` -> ``T2-weighted``, ``FLAIR``,
``ADC``). Labels whose name holds tumour/cancer/edema/lesion/mass/nodule words (or are listed in the
``findings`` mapping key) are findings, the others organs. Only the task's target is labelled, so the
finding list is marked incomplete; a label of the label map is every voxel of it, so each finding is all of its
label in the slice (``meta.instances_complete``: "the enhancing tumour" names the one finding of that label).
Patient = the image file's stem (one subject per file).
"""

from __future__ import annotations

import re
from typing import Any

from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Case
from medr2.sources.common import Key, read_json
from medr2.sources.datasets._base import DatasetSource, RecordSpec, link_sequences, sequence_companions
from medr2.sources.datasets._volumes import PLANES, LabelRole, check_grid, label_slices, render_slice

FINDING_WORDS = re.compile(r"tumou?r|cancer|edema|oedema|lesion|mass|nodule|metasta|enhancing", re.I)
# labels that name a part of the dataset's organ only by direction (Task04 Hippocampus: Anterior, Posterior)
DIRECTION_WORDS = frozenset({"anterior", "posterior", "superior", "inferior", "medial", "lateral", "head", "body",
                             "tail"})
SEQUENCES = {"t1w": "T1-weighted", "t1": "T1-weighted", "t1gd": "T1 post-contrast", "t2w": "T2-weighted",
             "t2": "T2-weighted", "flair": "FLAIR", "adc": "ADC", "dwi": "diffusion-weighted"}
REGIONS = (("brain|brats|hippocampus", "head"), ("heart|atrium|lung", "chest"),
           ("liver|lits|pancreas|hepatic|spleen|colon", "abdomen"), ("prostate", "pelvis"))


class MsdSource(DatasetSource):
    name = "msd"
    title = "Medical Segmentation Decathlon"
    mapping_schema = {"findings": Key("text list"), "slices_per_plane": Key("integer", minimum=1),
                      "planes": Key("text list", choices=PLANES), "min_area_px": Key("integer", minimum=0)}

    def _organ_words(self, name: str) -> str:
        """An organ label in words: a label that names only a part of the task's organ by its direction (Task04
        Hippocampus: ``Anterior``, ``Posterior``) is that part of the organ the dataset is named after ("anterior
        hippocampus"); any other label as given (worded by :func:`medr2.sources.common.structure_words`)."""
        organ = str(self.info.get("name", "")).strip().lower()
        if name.strip().lower() in DIRECTION_WORDS and organ:
            return f"{name.strip().lower()} {organ}"
        return name

    def __init__(self, arg: str | None) -> None:
        super().__init__(arg)
        self.meta_file = self.dr.root / "dataset.json"
        if not self.meta_file.is_file():
            raise BadInput("dataset.json not found in the task folder", file=str(self.meta_file), field="dataset.json")
        self.info = read_json(self.meta_file)
        f = str(self.meta_file)
        if not isinstance(self.info, dict):
            raise BadInput("dataset.json must hold an object", file=f)
        for key, typ in (("training", list), ("labels", dict), ("modality", dict)):
            if not isinstance(self.info.get(key), typ):
                raise BadInput(f"dataset.json needs {key!r} ({typ.__name__})", file=f, field=key)
        try:
            self.channels = {int(k): str(v) for k, v in self.info["modality"].items()}
            self.labels = {int(k): str(v) for k, v in self.info["labels"].items()}
        except ValueError as e:
            raise BadInput(f"keys of modality/labels must be integers: {e}", file=f, field="labels") from e
        if "licence" in self.info and "license" not in self.user_keys:
            self.dr.mapping["license"] = str(self.info["licence"])
        if "name" in self.info and "source" not in self.user_keys:
            self.dr.mapping["source"] = f"MSD {self.info['name']}"
        extra = set(self.option("findings", []) or [])
        self.roles = {v: LabelRole(self._organ_words(n), "organ") if not (FINDING_WORDS.search(n) or n in extra)
                      else LabelRole(n, "finding") for v, n in self.labels.items() if v != 0}
        self.planes = tuple(self.option("planes", PLANES))
        if any(p not in PLANES for p in self.planes):
            raise BadInput(f"planes must be among {PLANES}", file=self.where(), field="planes")
        self.k = int(self.option("slices_per_plane", 1))
        self.min_area = int(self.option("min_area_px", 16))
        task = f"{self.dr.root.name} {self.info.get('name', '')}".lower()
        self.region = next((r for pat, r in REGIONS if re.search(pat, task)), None)

    def records(self) -> list[RecordSpec]:
        f = str(self.meta_file)
        specs: list[RecordSpec] = []
        multi = len(self.channels) > 1
        for i, entry in enumerate(self.info["training"]):
            if not isinstance(entry, dict) or not isinstance(entry.get("image"), str) \
                    or not isinstance(entry.get("label"), str):
                specs.append(RecordSpec(f"training[{i}]", f, error="entry needs image and label paths",
                                        error_field="training"))
                continue
            image, label = _rel(entry["image"]), _rel(entry["label"])
            try:
                grid = label_slices(self.dr, label, planes=self.planes, k=self.k, record=image, known=self.roles,
                                    convention="dataset.json")
            except BadInput as e:
                specs.append(RecordSpec(image, e.file or f, error=e.reason, error_field=e.field))
                continue
            for c, cname in sorted(self.channels.items()):
                rec = f"{image}#{cname}" if multi else image
                try:
                    check_grid(self.dr, image, c if multi else None, grid, labels=label, record=rec)
                except BadInput as e:
                    specs.append(RecordSpec(rec, e.file or f, error=e.reason, error_field=e.field))
                    continue
                for sl in grid.slices:
                    specs.append(RecordSpec(f"{rec}@{sl.plane}{sl.index}", f, {
                        "image": image, "label": label, "channel": c if multi else None, "channel_name": cname,
                        "plane": sl.plane, "index": sl.index}))
        # the channels of one slice of a multi-channel image are its sequences: they link each other (issue 49)
        link_sequences(specs, lambda s: (s.data["image"], s.data["plane"], s.data["index"])
                       if s.data and s.data.get("channel") is not None else None, _sequence_name)
        return specs

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        d = spec.data
        ref, structures, findings, extra = render_slice(
            self.dr, images, image=d["image"], channel=d["channel"], labels=d["label"], plane=d["plane"],
            index=d["index"], roles=self.roles, record=spec.key, min_area=self.min_area)
        cname = d["channel_name"]
        fields: dict[str, Any] = {"plane": d["plane"], "pixel_spacing_mm": extra["pixel_spacing_mm"],
                                  "patient_id": _stem(d["image"])}
        if cname.strip().upper() == "CT":
            fields["modality"] = "CT"
        else:
            fields["modality"] = "MRI"
            seq = SEQUENCES.get(cname.strip().lower())
            if seq or cname.strip().upper() not in ("MRI", "MR"):
                fields["sequence"] = seq or cname
        if self.region:
            fields["body_region"] = self.region
        meta = {**extra["meta"], "msd_task": self.info.get("name"), "channel_name": cname,
                "findings_complete": False, "instances_complete": True}
        fields["companions"] = sequence_companions(self, spec)
        return self.case(spec, ref, fields, structures=structures, findings=findings, meta=meta)


def _sequence_name(spec: RecordSpec) -> str:
    """What a channel's case calls its sequence (``SEQUENCES``, else the channel name)."""
    cname = str(spec.data["channel_name"])
    return SEQUENCES.get(cname.strip().lower()) or cname


def _rel(p: str) -> str:
    return p[2:] if p.startswith("./") else p


def _stem(p: str) -> str:
    name = p.rsplit("/", 1)[-1]
    for suf in (".nii.gz", ".nii"):
        if name.endswith(suf):
            return name[: -len(suf)]
    return name


def _factory(arg: str | None) -> MsdSource:
    return MsdSource(arg)
