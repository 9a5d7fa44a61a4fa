"""``iu-xray`` reader: the Indiana University chest X-ray collection (Open-i) in the Kaggle layout.

Layout (kaggle.com/datasets/raddar/chest-xrays-indiana-university, from openi.nlm.nih.gov):
``indiana_reports.csv`` (``uid``, ``MeSH``, ``Problems``, ``image``, ``indication``, ``comparison``,
``findings``, ``impression``), ``indiana_projections.csv`` (``uid``, ``filename``, ``projection``:
``Frontal`` / ``Lateral``) and the PNGs ``images/images_normalized/<filename>`` (or ``images/``).

One case per image: report = ``Findings: ... Impression: ...`` (verbatim, ``XXXX`` de-identification
tokens kept; the findings it negates are stated absent, ``Case.absent``, by the one rule every reader's report
goes through: :func:`medr2.sources.common.report_absent`), modality X-ray, region chest, plane ``lateral`` for
lateral projections (a frontal one may be PA or AP, which the data does not say: left unset, ``meta.projection``
keeps it).

``Problems`` holds MeSH index terms, not all of them findings: ``No Indexing`` (the study was never indexed),
technical notes (``Technical Quality of Image Unsatisfactory``), anatomy (``Lung``, ``Thoracic Vertebrae``,
...), devices, procedures and normal variants. The clinical vocabulary knows them (:mod:`medr2.vocab`: concepts
of the kinds that are never findings, :func:`medr2.vocab.not_a_finding`); they are left out, each with its
reason (``meta.problems_excluded``; counted per study in the build's source report); of the rest, ``normal``
alone -> diagnosis ``normal``, a single term -> that diagnosis (lower case), none or several -> no diagnosis
(so a study indexed only by anatomy is never "abnormal"). A term is added to the filter by one vocabulary
line (``device: ...``, ``organ: ...``), in the built-in file, a plugin or ``$MEDR2_VOCAB``. The raw terms stay
in ``meta``. Patient = ``uid`` (one report per study; the
collection gives no other key), so the frontal and lateral image of a study stay in one split. The images of one
report link each other as views (``Case.companions``, issue 49: role ``view``, label ``frontal`` / ``lateral``
from ``projection``).
"""

from __future__ import annotations

from typing import Any

from medr2 import vocab
from medr2.errors import BadInput
from medr2.images import ImageStore
from medr2.records import Case
from medr2.sources.datasets._base import DatasetSource, RecordSpec, decode_image, find_file, image_index, read_table

REPORT_COLUMNS = ("uid", "Problems", "findings", "impression")

def sort_problems(raw: str) -> tuple[list[str], dict[str, str]]:
    """The ``Problems`` terms that are findings or diagnoses (as written), and the others with their reason:
    the clinical vocabulary says which terms are not findings (:func:`medr2.vocab.not_a_finding`, by the kind
    of concept they name: anatomy, device, procedure, technical or indexing remark, normal variant)."""
    kept: list[str] = []
    left_out: dict[str, str] = {}
    for term in (t.strip() for t in raw.split(";")):
        if not term:
            continue
        reason = vocab.not_a_finding(term)
        if reason:
            left_out[term] = reason
        else:
            kept.append(term)
    return kept, left_out
PROJECTION_COLUMNS = ("uid", "filename", "projection")


class IuXraySource(DatasetSource):
    name = "iu-xray"
    title = "IU X-ray (Open-i)"

    def records(self) -> list[RecordSpec]:
        rpath = find_file(self.dr, ("indiana_reports.csv",), what="indiana_reports.csv")
        ppath = find_file(self.dr, ("indiana_projections.csv",), what="indiana_projections.csv")
        assert rpath is not None and ppath is not None
        reports: dict[str, dict[str, str]] = {}
        dup: set[str] = set()
        for r in read_table(rpath, REPORT_COLUMNS):
            if r["uid"] in reports:
                dup.add(r["uid"])
            reports[r["uid"]] = r
        for r in reports.values():  # counted once per study
            for term, reason in sort_problems(r["Problems"])[1].items():
                self.notes[f"MeSH problem left out ({reason}): {' '.join(term.lower().split())}"] += 1
        index = image_index(self.dr, (".png", ".jpg", ".jpeg"), self.dr.root / "images")
        specs = []
        f = str(ppath)
        seen: set[str] = set()
        projections = read_table(ppath, PROJECTION_COLUMNS)
        views = _views(projections)
        for i, p in enumerate(projections):
            name, uid = p["filename"], p["uid"]
            key = name or f"row {i + 2}"
            if not name:
                specs.append(RecordSpec(key, f, error="empty filename", error_field="filename"))
            elif name in seen:
                specs.append(RecordSpec(f"{name} (row {i + 2})", f, error="filename listed twice",
                                        error_field="filename"))
            elif uid not in reports:
                specs.append(RecordSpec(name, f, error=f"uid {uid!r} has no row in indiana_reports.csv",
                                        error_field="uid"))
            elif uid in dup:
                specs.append(RecordSpec(name, str(rpath), error=f"uid {uid!r} has several reports", error_field="uid"))
            else:
                specs.append(RecordSpec(name, f, {"image": index.get(name), "projection": p["projection"],
                                                  "report": reports[uid], "reports_file": str(rpath),
                                                  "views": [v for v in views.get(uid, []) if v[0] != name]}))
            seen.add(name)
        return sorted(specs, key=lambda s: s.key)

    def build(self, spec: RecordSpec, images: ImageStore) -> Case:
        d = spec.data
        if not d["image"]:
            raise BadInput("image file not found under images/", file=spec.file, record=spec.key, field="filename")
        arr = decode_image(self.dr, d["image"], record=spec.key, file=spec.file, field_name="filename")
        ref = images.put_array(arr)
        r = d["report"]
        parts = [f"{label}: {r[col]}" for label, col in (("Findings", "findings"), ("Impression", "impression"))
                 if r.get(col)]
        fields: dict[str, Any] = {"modality": "X-ray", "body_region": "chest", "patient_id": f"uid {r['uid']}"}
        if parts:
            fields["report"] = "\n".join(parts)
        proj = d["projection"].strip().lower()
        if proj == "lateral":
            fields["plane"] = "lateral"
        problems = [x.strip() for x in r["Problems"].split(";") if x.strip()]
        kept, left_out = sort_problems(r["Problems"])
        meta: dict[str, Any] = {"uid": r["uid"], "projection": d["projection"], "problems": problems}
        if [x.lower() for x in kept] == ["normal"]:
            fields["diagnosis"] = "normal"
            meta["findings_complete"] = True  # a radiologist's report of a normal study: a complete negative
        else:  # problems named in the report, none of them boxed: the finding list is not the image's
            meta["findings_complete"] = False
            if len(kept) == 1:
                fields["diagnosis"] = " ".join(kept[0].lower().split())
        if left_out:
            meta["problems_excluded"] = left_out
        if d.get("views"):  # the other images of the report (issue 49)
            fields["companions"] = [self.companion(name, "view", label) for name, label in d["views"]]
        for col in ("MeSH", "indication", "comparison", "image"):
            if r.get(col):
                meta[col.lower() if col != "image" else "study_description"] = r[col]
        return self.case(spec, ref, fields, meta=meta)


def _views(projections: list[dict[str, str]]) -> dict[str, list[tuple[str, str]]]:
    """uid -> (filename, view label) of each of its images named once with a known projection (frontal / lateral)."""
    names = [p["filename"] for p in projections]
    out: dict[str, list[tuple[str, str]]] = {}
    for p in projections:
        label = p["projection"].strip().lower()
        if p["filename"] and names.count(p["filename"]) == 1 and label in ("frontal", "lateral"):
            out.setdefault(p["uid"], []).append((p["filename"], label))
    return out


def _factory(arg: str | None) -> IuXraySource:
    return IuXraySource(arg)
