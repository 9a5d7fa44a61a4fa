"""`--source coco:FILE.json` finds the images where COCO exports put them (issue 50, point 13).

The layouts are drawn by a hypothesis strategy over the places exports use (beside the JSON, `images/`, the split
folder named after the file, `images/<split>/`, and those one folder up, beside `annotations/`), with the real
Roboflow export in /work/shared/real-formats/coco/xray (its own file names, placeholder pixels of its sizes). Where
no such folder holds the images, each one is refused naming the folders searched and the key that fixes it.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import BadInput
from medr2.images import ImageStore
from medr2.sources.base import get_source
from tests.interop_fixtures import write_png
from tests.test_interop_real_formats import REAL

ROOT = Path(__file__).resolve().parent.parent
XRAY = (REAL or Path("/nonexistent")) / "coco" / "xray"
pytestmark = pytest.mark.skipif(not XRAY.is_dir(), reason="real files ../shared/real-formats/coco/xray not present "
                                "(they are not part of the project)")

SPLITS = ("val2017", "train2017", "test", "train")
PREFIXES = ("instances_", "person_keypoints_", "")


@st.composite
def layouts(draw: st.DrawFn) -> tuple[str, str]:
    """(the COCO file's path, the images' folder), both relative to the export's top folder."""
    split = draw(st.sampled_from(SPLITS))
    name = draw(st.sampled_from(PREFIXES)) + split + ".json"
    return draw(st.sampled_from([
        (name, ""), (name, "images"), (name, split), (name, f"images/{split}"),
        (f"annotations/{name}", split), (f"annotations/{name}", f"images/{split}"), (f"annotations/{name}", "images"),
        (f"{split}/_annotations.coco.json", split),  # Roboflow: the JSON inside its split folder, beside the images
    ]))


def _export(top: Path, ann_rel: str, images_rel: str, n_images: int = 50) -> Path:
    """The real COCO file at ``top/ann_rel``, placeholder images of its names and sizes under ``top/images_rel``."""
    src = next(p for p in XRAY.glob("*.json") if p.name != "medr2.json")
    ann = top / ann_rel
    ann.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, ann)
    with (XRAY / "images_manifest.tsv").open(encoding="utf-8") as fh:
        for row in list(csv.DictReader(fh, delimiter="\t"))[:n_images]:
            write_png(top / images_rel / row["file"], np.full((int(row["height"]), int(row["width"])), 90, np.uint8))
    return ann


def _realize(ann: Path, out: Path, n: int = 4) -> tuple[list, list[BadInput]]:  # type: ignore[type-arg]
    src = get_source(f"coco:{ann}")
    store = ImageStore(out)
    cases, errors = [], []
    for spec in src.plan(0, n):
        try:
            cases.append(src.realize(spec, store))
        except BadInput as e:
            errors.append(e)
    return cases, errors


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=layouts())
def test_coco_file_finds_its_images_where_exports_put_them(tmp_path_factory: pytest.TempPathFactory,
                                                           layout: tuple[str, str]) -> None:
    ann_rel, images_rel = layout
    top = tmp_path_factory.mktemp("export")
    ann = _export(top, ann_rel, images_rel)
    (ann.parent / "medr2.json").write_text(json.dumps({"defaults": {"modality": "X-ray"}}))  # no images_dir
    cases, errors = _realize(ann, top / "bench")
    assert not errors, [e.reason for e in errors]
    assert len(cases) == 4
    images = (top / images_rel).resolve()
    for c in cases:  # the images exist only there, so no refusal means they were read from there
        found = c.meta.get("images_dir_found")
        if images == ann.parent.resolve():
            assert found is None  # the default needs no note
        else:
            assert (ann.parent / found).resolve() == images, found


def test_no_images_anywhere_names_the_folders_searched_and_the_key(tmp_path: Path) -> None:
    ann = _export(tmp_path, "annotations/instances_val2017.json", "pics", n_images=50)
    cases, errors = _realize(ann, tmp_path / "bench")
    assert not cases and len(errors) == 4
    for e in errors:
        assert e.field == "images.file_name" and e.file == str(ann.resolve())
        for where in ("beside the JSON", "images/", "val2017/", "../val2017/", "../images/val2017/"):
            assert where in e.reason, e.reason
        assert "'images_dir'" in e.reason and str(ann.parent / "medr2.json") in e.reason
    # the key the refusal names fixes it
    (tmp_path / "annotations" / "pics").mkdir()
    for p in (tmp_path / "pics").iterdir():
        p.rename(tmp_path / "annotations" / "pics" / p.name)
    (ann.parent / "medr2.json").write_text(json.dumps({"images_dir": "pics", "defaults": {"modality": "X-ray"}}))
    cases, errors = _realize(ann, tmp_path / "bench2")
    assert not errors and len(cases) == 4 and all("images_dir_found" not in c.meta for c in cases)


def test_medr2_build_finds_the_split_folder_of_an_instances_file(tmp_path: Path) -> None:
    """The CLI as a researcher types it, on the COCO 2017 layout (annotations/instances_val2017.json, val2017/)."""
    ann = _export(tmp_path / "coco", "annotations/instances_val2017.json", "val2017", n_images=50)
    (ann.parent / "medr2.json").write_text(json.dumps({"defaults": {"modality": "X-ray"}}))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    proc = subprocess.run([sys.executable, "-m", "medr2", "build", "--source", f"coco:{ann}", "--out",
                           str(tmp_path / "bench"), "--cases", "6", "--workers", "1"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert not (tmp_path / "bench" / "quarantine.jsonl").exists() or \
        not (tmp_path / "bench" / "quarantine.jsonl").read_text().strip()
