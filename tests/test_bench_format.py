"""Bench folder format: round trip, deterministic bytes, validation of tampering."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from medr2 import BadInput, Case, Item
from medr2.bench import BenchWriter, load_bench, write_bench
from medr2.images import IDENTITY_RULES, PIXELS, PNG_BYTES, IdentityRule, ImageStore, encode_png, load_image
from medr2.records import Finding, Structure, item_content_id


def _case(store: ImageStore, i: int, *, box: tuple[float, float, float, float] = (2, 2, 10, 10)) -> Case:
    arr = np.full((24, 32), i * 7 % 255, np.uint8)
    ref = store.put_array(arr)
    return Case(case_id=f"c{i}", image=ref.path, image_sha256=ref.sha256, width=ref.width, height=ref.height,
                modality="CT", structures=[Structure(name="liver", box=box)],
                findings=[Finding(label="cyst", box=(3, 3, 6, 6), attributes={"size_mm": 12.0})],
                source="test", license="CC0", patient_id=f"p{i}")


def _item(case: Case, k: int) -> Item:
    f = {"case_id": case.case_id, "task": "s1.modality", "form": "mcq", "question": f"Which modality? {k}",
         "options": ["CT", "MRI", "X-ray", "ultrasound"], "answer": "A", "template_id": "t1"}
    return Item(item_id=item_content_id(f), stage=1, chance=0.25, image=case.image, image_sha256=case.image_sha256,
                image_width=case.width, image_height=case.height, source="test", license="CC0", **f)


def _bench(root: Path, n: int = 3, identity: IdentityRule = PIXELS, **kw: object) -> tuple[list[Case], list[Item]]:
    store = ImageStore(root, identity=identity)
    cases = [_case(store, i) for i in range(n)]
    items = [_item(c, k) for c in cases for k in range(2)]
    write_bench(root, cases, items, {"build": {"seed": 0}}, identity=identity, **kw)  # type: ignore[arg-type]
    return cases, items


def test_round_trip(tmp_path: Path) -> None:
    cases, items = _bench(tmp_path)
    b = load_bench(tmp_path)
    assert b.cases == cases and b.items == items
    assert b.case("c1") == cases[1]
    assert b.items_by_id[items[0].item_id] == items[0]
    assert b.manifest["counts"]["task"] == {"s1.modality": 6}
    assert b.manifest["complete"] is True and list(b.manifest)[-1] == "complete"
    assert len(b.checksum) == 64


def test_bytes_independent_of_batching(tmp_path: Path) -> None:
    cases, items = _bench(tmp_path / "a", row_group_size=4)
    store = ImageStore(tmp_path / "b")
    cases_b = [_case(store, i) for i in range(3)]
    with BenchWriter(tmp_path / "b", name="a", row_group_size=4) as w:
        w.add_cases(cases_b)
        for it in items:  # one at a time instead of all at once
            w.add_items([it])
        w.close({"build": {"seed": 0}})
    for f in ("items.parquet", "cases.parquet"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


@pytest.mark.parametrize("identity", IDENTITY_RULES, ids=lambda r: r.name)
def test_tampered_image_detected(tmp_path: Path, identity: IdentityRule) -> None:
    """Each rule checks what it names: under the pixel rule (format 3) a re-encoding of the same pixels is the same
    image and a changed pixel is refused; under the PNG-bytes rule (formats 1, 2) any other byte is refused."""
    cases, _ = _bench(tmp_path, identity=identity)
    assert load_bench(tmp_path).manifest["format_version"] == identity.versions[0]
    img = tmp_path / cases[0].image
    arr = load_image(img)
    img.write_bytes(encode_png(arr, 9))  # the same pixels, other bytes
    if identity is PNG_BYTES:
        with pytest.raises(BadInput, match="png-sha256"):
            load_bench(tmp_path)
    else:
        load_bench(tmp_path)
        arr[0, 0] ^= 1
        img.write_bytes(encode_png(arr))
    with pytest.raises(BadInput) as e:
        load_bench(tmp_path)
    assert e.value.field == "image" and e.value.record == "c0"
    load_bench(tmp_path, validate=False)  # loading without validation still works
    load_bench(tmp_path, image_hashes=False)  # every other check, images not read (eval checks at use)


def test_missing_image_detected(tmp_path: Path) -> None:
    cases, _ = _bench(tmp_path)
    (tmp_path / cases[2].image).unlink()
    with pytest.raises(BadInput, match="missing") as e:
        load_bench(tmp_path)
    assert e.value.record == "c2"
    with pytest.raises(BadInput, match="missing"):
        load_bench(tmp_path, image_hashes=False)  # a missing image is found without hashing too


def test_tampered_parquet_detected(tmp_path: Path) -> None:
    _bench(tmp_path)
    m = json.loads((tmp_path / "manifest.json").read_text())
    m["checksums"]["items.parquet"] = "0" * 64
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BadInput, match="checksum") as e:
        load_bench(tmp_path)
    assert e.value.field == "checksums.items.parquet"


def test_incomplete_bench_refused(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    c = _case(store, 0)
    with pytest.raises(RuntimeError), BenchWriter(tmp_path) as w:
        w.add_cases([c])
        w.add_items([_item(c, 0)])
        raise RuntimeError("killed")
    assert not (tmp_path / "manifest.json").exists()
    assert not (tmp_path / "items.parquet").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # partial files, the sort's folder
    with pytest.raises(BadInput, match="manifest"):
        load_bench(tmp_path)
    m = {"format": "medr2-bench", "format_version": 1, "complete": False}
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(BadInput, match="incomplete") as e:
        load_bench(tmp_path)
    assert e.value.field == "complete"


def test_rewrite_removes_old_manifest_first(tmp_path: Path) -> None:
    _bench(tmp_path)
    w = BenchWriter(tmp_path)  # a new build starts: the old bench must no longer look complete
    assert not (tmp_path / "manifest.json").exists()
    w.abort()


def test_duplicate_and_dangling_ids_refused(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    c = _case(store, 0)
    w = BenchWriter(tmp_path)
    w.add_cases([c])
    with pytest.raises(BadInput, match="duplicate case_id"):
        w.add_cases([c])
    it = _item(c, 0)
    w.add_items([it])
    with pytest.raises(BadInput, match="duplicate item_id") as e:
        w.add_items([it])
    assert e.value.record == it.item_id
    other = _item(_case(store, 9), 0)
    w.add_items([other])
    with pytest.raises(BadInput, match="unknown cases") as e2:
        w.close()
    assert e2.value.record == "c9"


def test_box_outside_image_detected(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    c = _case(store, 0, box=(2, 2, 40, 10))  # width is 32
    write_bench(tmp_path, [c], [_item(c, 0)])
    with pytest.raises(BadInput, match="outside") as e:
        load_bench(tmp_path)
    assert e.value.field == "structures[0].box"


def test_path_escape_refused(tmp_path: Path) -> None:
    store = ImageStore(tmp_path / "b")
    c = _case(store, 0).model_copy(update={"image": "../outside.png"})
    (tmp_path / "outside.png").write_bytes(b"x")
    write_bench(tmp_path / "b", [c], [])
    with pytest.raises(BadInput, match="escapes") as e:
        load_bench(tmp_path / "b")
    assert e.value.field == "image"


@pytest.mark.parametrize("batch_rows", [1, 3, 256])
def test_records_read_in_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_rows: int) -> None:
    """Records are decoded ``RECORD_BATCH_ROWS`` rows at a time, across row groups: the same records, and a row
    that does not decode is named by its file row as when a whole row group was decoded at once."""
    import pyarrow.parquet as pq

    from medr2.bench import format as fmt
    from medr2.bench.format import ITEMS_FILE
    from tests.run_fixtures import rewrite_items

    monkeypatch.setattr(fmt, "RECORD_BATCH_ROWS", batch_rows)
    cases, items = _bench(tmp_path, n=5, row_group_size=4)
    b = load_bench(tmp_path)
    assert b.cases == cases and b.items == items
    rows = pq.read_table(tmp_path / ITEMS_FILE).to_pylist()
    rows[7] = {**rows[7], "item_id": "", "options": "not json"}
    rewrite_items(tmp_path, rows, row_group_size=4)
    with pytest.raises(BadInput) as e:
        load_bench(tmp_path)
    assert (e.value.record, e.value.field) == ("row 7", "options")


@pytest.mark.parametrize("side", [0, -5, 2**31, 2**63])
def test_image_sides_beyond_pixels_are_refused_by_field(side: int) -> None:
    """A side no image has (e.g. 2**63, which no 64-bit column holds: the fuzz test found it as an OverflowError in
    write_bench) is refused when the record is made, naming the field, so importers quarantine the record."""
    from pydantic import ValidationError

    case = {"case_id": "c", "image": "i.png", "image_sha256": "0" * 64, "width": 4, "height": 3, "modality": "CT",
            "source": "s", "license": "l", "patient_id": "p"}
    assert Case(**case).width == 4
    with pytest.raises(ValidationError, match="width"):
        Case(**{**case, "width": side})
    item = {"case_id": "c", "task": "t", "stage": 1, "form": "yesno", "question": "q", "answer": "yes", "chance": 0.5,
            "image": "i.png", "image_width": 4, "image_height": 3, "template_id": "t.0", "source": "s", "license": "l"}
    with pytest.raises(ValidationError, match="image_height"):
        Item(**{**item, "item_id": "x", "image_height": side})
    assert Item(**{**item, "item_id": "x", "image_width": None, "image_height": None}).image_width is None
