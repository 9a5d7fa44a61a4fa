"""``medr2 info`` says where the splits come from and warns when an image or a patient sits in two splits
(issue 50, point 5): the real VQA-RAD copy (its test questions ask about train images), and generated benches
whose items' splits and cases' patients are drawn by hypothesis."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.test_run_selection import medr2


def test_vqarad_import_says_its_split_is_the_datasets_and_warns_of_shared_images(tmp_path: Path) -> None:
    import medr2 as api
    from tests.test_interop_real_formats import placeholders, real

    d = real("vqarad")
    recs = {f: json.loads((d / f).read_text("utf-8")) for f in ("trainset.json", "testset.json")}
    imgs = placeholders(tmp_path / "images", {r["image_name"] for rs in recs.values() for r in rs})
    api.import_dataset("vqa-rad", d, tmp_path / "bench", option={"images": str(imgs)})
    both = {r["image_name"] for r in recs["testset.json"]} & {r["image_name"] for r in recs["trainset.json"]}
    every = {r["image_name"] for rs in recs.values() for r in rs}

    code, out, err = medr2("info", tmp_path / "bench", "--json")
    assert code == 0, err
    info = json.loads(out)
    assert info["split_origin"] == {"by": "dataset", "format": "vqa-rad"}
    overlap = info["split_overlap"]
    assert (overlap["cases"], overlap["of_cases"]) == (len(both), len(every)) == (203, 314)
    assert overlap["patients"] == 203  # an imported image is its own patient

    code, out, err = medr2("info", tmp_path / "bench")
    assert code == 0, err
    text = " ".join(out.split())
    assert "splits as published by the dataset (vqa-rad import" in text and "splits by patient" not in text
    assert "warning: 203 of 314 images (cases) and 203 of 314 patients have items in more than one split" in text


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list, list]:  # type: ignore[type-arg]
    from medr2.images import ImageStore
    from tests.run_fixtures import make_items

    root = tmp_path_factory.mktemp("overlap")
    cases, items = make_items(ImageStore(root / "images-src"), 6)
    return root, cases, items


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(patients=st.lists(st.integers(0, 3), min_size=6, max_size=6),
       item_split=st.lists(st.sampled_from(["train", "val", "test"]), min_size=6, max_size=6),
       moved=st.sets(st.integers(0, 5), max_size=3), data=st.data())
def test_generated_overlaps_are_counted_and_warned(base, patients: list[int], item_split: list[str],  # type: ignore[no-untyped-def]
                                                   moved: set[int], data: st.DataObject) -> None:
    """Case ``c``'s items are in ``item_split[c]``, except one item of each case in ``moved`` put in another
    split; case ``c`` belongs to patient ``patients[c]``. Expected counts computed here from those draws."""
    import shutil
    import tempfile

    from medr2.bench import write_bench
    from medr2.bench.info import bench_info, split_overlap_warning

    root, cases, items = base
    other = {c: data.draw(st.sampled_from([s for s in ("train", "val", "test") if s != item_split[c]]))
             for c in moved}
    new_cases = [c.model_copy(update={"patient_id": f"p{patients[i]}", "split": item_split[i]})
                 for i, c in enumerate(cases)]
    first_of: set[int] = set()
    new_items = []
    for it in items:
        c = int(it.case_id[4:])
        split = item_split[c]
        if c in moved and c not in first_of:
            first_of.add(c)
            split = other[c]
        new_items.append(it.model_copy(update={"split": split}))
    case_splits = {c: {item_split[c]} | ({other[c]} if c in moved else set()) for c in range(6)}
    patient_splits: dict[int, set[str]] = {}
    for c in range(6):
        patient_splits.setdefault(patients[c], set()).update(case_splits[c])
    with tempfile.TemporaryDirectory(dir=root) as d:
        bench = Path(d) / "bench"
        shutil.copytree(root / "images-src", bench)
        write_bench(bench, new_cases, new_items, {"name": "overlap"})
        info = bench_info(bench)
    got = info["split_overlap"]
    assert got["cases"] == len(moved) and got["of_cases"] == 6
    assert got["patients"] == sum(1 for s in patient_splits.values() if len(s) > 1)
    assert got["of_patients"] == len(patient_splits)
    warning = split_overlap_warning(got)
    assert (warning is None) == (got["cases"] == 0 and got["patients"] == 0)
    assert info["split_origin"] == {"by": "patient"}
