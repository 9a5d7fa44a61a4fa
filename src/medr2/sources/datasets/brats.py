"""``brats`` reader: BraTS training data, one folder per subject.

Layouts (BraTS challenge data as released on CBICA / Synapse):
- 2018-2021: ``<ID>/<ID>_t1.nii.gz``, ``_t1ce``, ``_t2``, ``_flair`` and ``_seg``; labels 1 necrotic and
  non-enhancing tumour core (NCR/NET), 2 peritumoural oedema (ED), 4 GD-enhancing tumour (ET). BraTS 2018/2019
  put subjects under ``HGG/`` and ``LGG/`` (read as high- / low-grade glioma).
- 2023+ (ASNR-MICCAI BraTS, ``BraTS-GLI-00000-000``): ``<ID>-t1n``, ``-t1c``, ``-t2w``, ``-t2f`` and ``-seg``;
  labels 1 NCR, 2 SNFH / oedema, 3 ET. The cohort in the name gives the diagnosis (GLI, SSA glioma; MEN
  meningioma; MET brain metastasis; PED paediatric brain tumour); the last number is the time point, so
  the patient is ``BraTS-GLI-00000``.
- 2024 post-treatment gliomas (BraTS 2024 GLI, same names; de Verdier et al. 2024, arXiv:2405.18368):
  labels 1 non-enhancing tumour core (NETC), 2 SNFH, 3 enhancing tissue (ET), 4 resection cavity (RC).
  A GLI subject whose label volume holds 4 is read with this map (RC is a finding, ``resection cavity``);
  a 4 in another cohort, or any other value, is outside every map the reader knows.

Each subject's four sequences are cut into ``slices_per_plane`` (default 1) slices per plane over the
tumour extent. The sub-regions are findings (with masks); as they are parts of one tumour, the finding
list is not used for lesion counts (``meta.findings_complete`` false). A label value outside the map of
the release is refused once per subject (one quarantined record naming the values and the map, found
when the label volume is read at planning), and the build goes on. Modality MRI, region head, sequence
per file; ``meta.label_convention`` names the map used. The sequences of one slice link each other
(``Case.companions``, role ``sequence``, issue 49).
"""

from __future__ import annotations

import re
from typing import Any

from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Case
from medr2.sources.common import Key
from medr2.sources.datasets._base import DatasetSource, RecordSpec, link_sequences, sequence_companions
from medr2.sources.datasets._volumes import (
    PLANES,
    LabelRole,
    check_grid,
    check_label_values,
    label_slices,
    render_slice,
)

OLD_SEQUENCES = {"t1": "T1-weighted", "t1ce": "T1 post-contrast", "t2": "T2-weighted", "flair": "FLAIR"}
NEW_SEQUENCES = {"t1n": "T1-weighted", "t1c": "T1 post-contrast", "t2w": "T2-weighted", "t2f": "FLAIR"}
OLD_LABELS = {1: LabelRole("necrotic and non-enhancing tumour core", "finding"),
              2: LabelRole("peritumoural oedema", "finding"), 4: LabelRole("enhancing tumour", "finding")}
NEW_LABELS = {1: LabelRole("necrotic tumour core", "finding"), 2: LabelRole("peritumoural oedema", "finding"),
              3: LabelRole("enhancing tumour", "finding")}
POST_TREATMENT_LABELS = {1: LabelRole("non-enhancing tumour core", "finding"),
                         2: LabelRole("peritumoural oedema", "finding"), 3: LabelRole("enhancing tumour", "finding"),
                         4: LabelRole("resection cavity", "finding")}
# the label maps of the releases read: convention name -> value -> role
CONVENTIONS = {"1/2/4": OLD_LABELS, "1/2/3 (2023+)": NEW_LABELS, "1/2/3/4 (2024 post-treatment)": POST_TREATMENT_LABELS}
COHORTS = {"GLI": "glioma", "SSA": "glioma", "MEN": "meningioma", "MET": "brain metastasis",
           "PED": "paediatric brain tumour"}
NEW_ID = re.compile(r"^(BraTS-([A-Z]+)-\d+)-\d+$")
SEG_NAME = re.compile(r"^(.+?)[_-]seg\.nii(\.gz)?$")
SEQ_NAME = re.compile(r"^(.+?)[_-](t1|t1ce|t2|flair|t1n|t1c|t2w|t2f)\.nii(\.gz)?$")


class BratsSource(DatasetSource):
    name = "brats"
    title = "BraTS"
    mapping_schema = {"sequences": Key("text list"), "slices_per_plane": Key("integer", minimum=1),
                      "planes": Key("text list", choices=PLANES), "min_area_px": Key("integer", minimum=0)}

    def __init__(self, arg: str | None) -> None:
        super().__init__(arg)
        self.planes = tuple(self.option("planes", PLANES))
        if any(p not in PLANES for p in self.planes):
            raise BadInput(f"planes must be among {PLANES}", file=self.where(), field="planes")
        self.k = int(self.option("slices_per_plane", 1))
        self.min_area = int(self.option("min_area_px", 16))
        self.only = set(self.option("sequences", []) or [])

    def records(self) -> list[RecordSpec]:
        segs = sorted(p for p in self.dr.root.rglob("*") if SEG_NAME.match(p.name) and not p.name.startswith("."))
        if not segs:
            raise BadInput("no subject folder with a *_seg.nii.gz / *-seg.nii.gz label file found",
                           file=str(self.dr.root), field="seg")
        specs: list[RecordSpec] = []
        with_seg = {(p.parent, SEG_NAME.match(p.name).group(1)) for p in segs}  # type: ignore[union-attr]
        orphans = sorted({(p.parent, m.group(1)) for p in self.dr.root.rglob("*") if (m := SEQ_NAME.match(p.name))}
                         - with_seg)
        for folder, sid in orphans:  # sequences without a label file (e.g. a misnamed seg): reported, not skipped
            specs.append(RecordSpec(sid, self.dr.rel(folder), error="no *_seg / *-seg label file for this subject",
                                    error_field="seg"))
        for seg in segs:
            m = SEG_NAME.match(seg.name)
            assert m is not None
            sid, gz = m.group(1), m.group(2) or ""
            seg_rel = self.dr.rel(seg)
            folder = seg.parent
            new = NEW_ID.match(sid) is not None or any((folder / f"{sid}-{s}.nii{gz}").exists() for s in NEW_SEQUENCES)
            seqs, sep = (NEW_SEQUENCES, "-") if new else (OLD_SEQUENCES, "_")
            found = {s: f"{sid}{sep}{s}.nii{gz}" for s in seqs if (folder / f"{sid}{sep}{s}.nii{gz}").exists()}
            if not found:
                specs.append(RecordSpec(sid, seg_rel, error=f"no sequence files ({', '.join(seqs)}) beside the seg",
                                        error_field="sequence"))
                continue
            base = self.dr.rel(folder)
            grade = folder.parent.name.upper() if folder.parent.name.upper() in ("HGG", "LGG") else None
            try:
                grid = label_slices(self.dr, seg_rel, planes=self.planes, k=self.k, record=sid)
                convention = _convention(sid, new, grid.values)
                check_label_values(grid.values, CONVENTIONS[convention], labels=seg_rel, record=sid,
                                   convention=f"the BraTS {convention} release")
            except BadInput as e:
                specs.append(RecordSpec(sid, e.file or seg_rel, error=e.reason, error_field=e.field))
                continue
            for s in sorted(found):
                if self.only and s not in self.only:
                    continue
                img_rel = f"{base}/{found[s]}" if base != "." else found[s]
                rec = f"{sid}/{s}"
                try:
                    check_grid(self.dr, img_rel, None, grid, labels=seg_rel, record=rec)
                except BadInput as e:
                    specs.append(RecordSpec(rec, e.file or img_rel, error=e.reason, error_field=e.field))
                    continue
                for sl in grid.slices:
                    specs.append(RecordSpec(f"{rec}@{sl.plane}{sl.index}", img_rel, {
                        "subject": sid, "image": img_rel, "seg": seg_rel, "sequence": seqs[s],
                        "convention": convention,
                        "grade": grade, "plane": sl.plane, "index": sl.index}))
        # the other sequences of each slice link each other (issue 49)
        link_sequences(specs, lambda s: (s.data["subject"], s.data["plane"], s.data["index"]) if s.data else None,
                       lambda s: str(s.data["sequence"]))
        return specs

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        d = spec.data
        roles = CONVENTIONS[d["convention"]]
        ref, _, findings, extra = render_slice(
            self.dr, images, image=d["image"], channel=None, labels=d["seg"], plane=d["plane"], index=d["index"],
            roles=roles, record=spec.key, min_area=self.min_area)
        sid = d["subject"]
        m = NEW_ID.match(sid)
        patient = m.group(1) if m else sid
        fields: dict[str, Any] = {"modality": "MRI", "sequence": d["sequence"], "plane": d["plane"],
                                  "body_region": "head", "pixel_spacing_mm": extra["pixel_spacing_mm"],
                                  "patient_id": patient, "companions": sequence_companions(self, spec)}
        if findings:
            if m:
                fields["diagnosis"] = COHORTS.get(m.group(2), "brain tumour")
            elif d["grade"]:
                fields["diagnosis"] = "high-grade glioma" if d["grade"] == "HGG" else "low-grade glioma"
            else:
                fields["diagnosis"] = "glioma"
        meta = {**extra["meta"], "subject": sid, "label_convention": d["convention"],
                "findings_complete": False, "findings_are_subregions": True,
                "one_lesion": True}  # one tumour per subject, its sub-regions outlined: its diagnosis is the image's
        if d["grade"]:
            meta["grade"] = d["grade"]
        return self.case(spec, ref, fields, findings=findings, meta=meta)


def _convention(sid: str, new: bool, values: tuple[int, ...]) -> str:
    """The label map of a subject's release: 1/2/4 for the old names; for the new names 1/2/3, or the 2024
    post-treatment map when a glioma subject's labels hold 4 (the resection cavity)."""
    if not new:
        return "1/2/4"
    m = NEW_ID.match(sid)
    if 4 in values and m is not None and m.group(2) == "GLI":
        return "1/2/3/4 (2024 post-treatment)"
    return "1/2/3 (2023+)"


def _factory(arg: str | None) -> BratsSource:
    return BratsSource(arg)
