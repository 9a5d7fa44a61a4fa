"""Exports and imports of items of several images (issue 49): every exporter carries each image in order with its
role, in its harness's own convention (HF ``images`` + ``image_roles``; VLMEvalKit's list cells ``image`` and
``image_path``; lmms-eval's ``doc_to_visual``), and importing an export gives the same items and cases back."""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from medr2.bench.format import load_bench
from medr2.images import load_image, pixel_sha256
from medr2.interop.common import write_import
from medr2.interop.exporters import EXPORTERS, run_export
from medr2.interop.importers import run_import
from tests.multi_image_fixtures import make_multi_bench


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return make_multi_bench(tmp_path_factory.mktemp("multi") / "bench")


def _pixels(data: bytes) -> str:
    return pixel_sha256(load_image(io.BytesIO(data)))


def _several(bench: Any) -> dict[str, list[str]]:
    return {it.item_id: [r.sha256 for r in it.images] for it in bench.items if len(it.images) > 1}


def check_hf_rows(bench: Any, out: Path) -> None:
    import datasets

    ds = datasets.load_dataset("parquet", data_dir=str(out / "data"))
    seen = 0
    for split in ds:
        for row in ds[split]:
            want = _several(bench).get(row["item_id"])
            if want is None:
                assert row["images"] == [] and row["image_roles"] == []
                continue
            got = []
            for im in row["images"]:
                buf = io.BytesIO()
                im.save(buf, format="PNG")
                got.append(_pixels(buf.getvalue()))
            assert got == want and len(row["image_roles"]) == 2
            assert row["image_roles"][-1] == "current study" or row["image_roles"][0] == "current study"
            seen += 1
    assert seen == len(_several(bench))


def check_vlmevalkit_rows(bench: Any, out: Path) -> None:
    csv.field_size_limit(1 << 30)
    seen = 0
    for f in sorted(out.glob("*.tsv")):
        with f.open(encoding="utf-8", newline="") as fh:
            for row in csv.DictReader(fh, delimiter="\t"):
                want = _several(bench).get(row["item_id"])
                if want is None:
                    assert not row["image"].startswith("[")
                    if "image_path" in row:
                        assert row["image_path"] == f"{row['index']}.png"
                    continue
                cells = json.loads(row["image"])
                assert [_pixels(base64.b64decode(c)) for c in cells] == want
                assert json.loads(row["image_path"]) == [f"{row['index']}_0.png", f"{row['index']}_1.png"]
                assert row["question"].startswith("Image 1: ")
                seen += 1
    assert seen == len(_several(bench))


def check_lmms_rows(bench: Any, out: Path) -> None:
    import datasets

    from medr2.interop.exporters import lmms_eval_utils as utils

    ds = datasets.load_dataset("parquet", data_dir=str(out / "data"))
    row = next(r for split in ds for r in ds[split] if r["item_id"] in _several(bench))
    visuals = utils.medr2_doc_to_visual(row)
    assert len(visuals) == 2
    msgs = utils.medr2_doc_to_messages(row)
    first = next(m for m in msgs if m["role"] == "user")
    assert [c["type"] for c in first["content"]] == ["image", "image", "text"]
    assert first["content"][2]["text"].startswith("Image 1: ")


ROW_CHECKS = {"hf": check_hf_rows, "vlmevalkit": check_vlmevalkit_rows, "lmms-eval": check_lmms_rows}


def test_every_exporter_has_a_several_image_check() -> None:
    assert set(EXPORTERS.names()) == set(ROW_CHECKS)


@pytest.mark.parametrize("target", sorted(ROW_CHECKS))
def test_export_carries_every_image_and_imports_back(target: str, bench: Any, tmp_path: Path) -> None:
    run_export(target, bench, tmp_path / "exp")
    ROW_CHECKS[target](bench, tmp_path / "exp")
    back = run_import(target, tmp_path / "exp", tmp_path / "back")
    assert not back.quarantined, back.quarantined[:3]
    write_import(back, tmp_path / "back")
    again = load_bench(tmp_path / "back")
    assert _comparable(again.items) == _comparable(bench.items)
    assert sorted(again.cases, key=lambda c: c.case_id) == sorted(bench.cases, key=lambda c: c.case_id)
    assert again.manifest["format_version"] == 4


def _comparable(items: list[Any]) -> list[dict[str, Any]]:
    """Items as dictionaries by id; the run fixture's yes/no items have no twin, and every import marks such a
    lone pair member broken (``pair_id`` None, ``meta.pair_broken``) whatever it shows, so those two are left out."""
    return [it.model_dump(exclude={"pair_id", "meta"}) for it in sorted(items, key=lambda i: i.item_id)]


def test_tampered_image_path_refused(bench: Any, tmp_path: Path) -> None:
    """An export whose item record names another path for one of its several images is refused, naming it."""
    run_export("vlmevalkit", bench, tmp_path / "exp")
    f = sorted((tmp_path / "exp").glob("*.tsv"))[0]
    csv.field_size_limit(1 << 30)
    with f.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    row = next(r for r in rows if r["image"].startswith("["))
    item = json.loads(row["medr2_item"])
    item["images"][0]["path"] = "../../etc/hostname"
    row["medr2_item"] = json.dumps(item)
    with f.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    back = run_import("vlmevalkit", tmp_path / "exp", tmp_path / "back")
    bad = [q for q in back.quarantined if q.record == row["index"]]
    assert bad and bad[0].field == "medr2_item.images[0].path", back.quarantined


def test_foreign_several_image_row_quarantined(tmp_path: Path) -> None:
    """A VLMEvalKit row of several images without medr2's record (no roles) is not imported, with its reason."""
    from tests.interop_fixtures import gradient

    def b64(arr: Any) -> str:
        from PIL import Image

        buf = io.BytesIO()
        Image.fromarray(arr).save(buf, format="PNG")
        return base64.b64encode(buf.getvalue()).decode()

    p = tmp_path / "x.tsv"
    img = b64(gradient(16, 16))
    p.write_text("index\timage\timage_path\tquestion\tanswer\n"
                 f"0\t['{img}', '{img}']\t['0_0.png', '0_1.png']\tWhat changed?\tnothing\n"
                 f"1\t{img}\t1.png\tWhat is it?\tCT\n", encoding="utf-8")
    res = run_import("vlmevalkit", p, tmp_path / "b")
    assert len(res.items) == 1 and res.quarantined[0].field == "image"
    assert "several images" in res.quarantined[0].reason
