"""Streamed exports (``medr2.train.stream``): byte for byte the files the in-memory plans give (``hf``: the same
Arrow record batches and values; see the test), for every format, strategy and ``--with-variants``, with buckets
and sorted runs small enough that every plan is sorted out of core in many pieces; the run sorter against Python's
stable sort."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from medr2.bench.format import Bench, load_bench
from medr2.bench.runs import RunSorter
from medr2.records import canonical_json
from medr2.train import stream
from medr2.train.dataset import IDS_FILE, MANIFEST, export_dataset
from medr2.train.export import STRATEGIES, plan_captions, plan_dpo, plan_examples
from medr2.train.formats import FORMATS, hf_features, hf_records
from medr2.train.source import TrainSource
from tests.train_fixtures import write_quadrant_bench


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Bench:
    return load_bench(write_quadrant_bench(tmp_path_factory.mktemp("qstream") / "bench", n_cases=24))


@pytest.fixture
def small(monkeypatch: pytest.MonkeyPatch) -> None:
    """Buckets of about 4 rows and runs of 7: every plan sorted in many buckets and runs."""
    monkeypatch.setattr(stream, "BUCKET_ROWS", 4)
    monkeypatch.setattr(stream, "RUN_ROWS", 7)


def _reference_export(bench: Bench, fmt: str, out: Path, **kw: object) -> None:
    """What ``export_dataset`` wrote before it streamed: the in-memory plan of the whole bench, as lists."""
    spec = FORMATS[fmt]
    plan = (plan_dpo if spec.dpo else plan_examples)(bench.items, bench.cases, **kw)  # type: ignore[arg-type]
    out.mkdir(parents=True)
    name = f"medr2_{bench.name}_{kw['strategy']}{'_dpo' if spec.dpo else ''}"
    if fmt.startswith("hf"):  # the in-memory dataset, saved by datasets itself
        from datasets import Dataset

        rows = hf_records(plan.examples, bench.root, dpo=spec.dpo)
        Dataset.from_list(rows, features=hf_features(spec.dpo)).save_to_disk(str(out))
        files = ["dataset_info.json", "state.json", "data-*.arrow"]
    else:
        files = spec.write(plan.examples, bench.root, out, name)
    manifest = {"format": fmt, "strategy": kw["strategy"], "with_variants": kw["with_variants"], "seed": kw["seed"],
                "dataset_name": name, "bench": bench.name, "bench_checksum": bench.checksum, "split": "train",
                "files": files, **plan.summary()}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    with (out / IDS_FILE).open("w", encoding="utf-8") as f:
        for i, ex in enumerate(plan.examples):
            f.write(canonical_json({"record": i, "item_ids": list(ex.item_ids)}) + "\n")


def _arrow_batches(data: bytes) -> tuple[pa.Schema, list[pa.RecordBatch]]:
    reader = pa.ipc.open_stream(pa.py_buffer(data))
    return reader.schema, list(reader)


def _files(out: Path) -> dict[str, bytes]:
    return {str(f.relative_to(out)): f.read_bytes() for f in sorted(out.rglob("*")) if f.is_file()}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
@pytest.mark.parametrize("with_variants", [False, True])
def test_streamed_export_writes_the_in_memory_bytes(bench: Bench, tmp_path: Path, small: None, fmt: str,
                                                    strategy: str, with_variants: bool,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from datasets import config

    monkeypatch.setattr(config, "MAX_SHARD_SIZE", "20KB")  # hf: several shards (both writers read it)
    kw = {"strategy": strategy, "with_variants": with_variants, "seed": 5}
    want_dir, got_dir = tmp_path / "want", tmp_path / "got"
    _reference_export(bench, fmt, want_dir, **kw)
    export_dataset(bench.root, fmt, got_dir, **kw)  # type: ignore[arg-type]
    want, got = _files(want_dir), _files(got_dir)
    assert sorted(got) == sorted(want)  # no sorted run or Arrow file left behind
    if fmt.startswith("swift"):  # absolute image paths name the export folder
        want = {k: v.replace(str(want_dir.resolve()).encode(), str(got_dir.resolve()).encode())
                for k, v in want.items()}
    if fmt.startswith("hf"):
        # datasets hashes an in-memory table for its fingerprint; the stream hashes the examples
        states = [json.loads(d.pop("state.json")) for d in (want, got)]
        assert len(states[1].pop("_fingerprint")) == 16 and states[0].pop("_fingerprint")
        assert states[0] == states[1] and len(states[1]["_data_files"]) > 1  # several shards
        # the shards: same schema, record batches and values (a sliced in-memory table pads its buffers with
        # the next rows' bytes, a streamed batch with zeros: the bytes themselves can differ)
        shards = sorted(k for k in want if k.startswith("data-"))
        assert shards == sorted(k for k in got if k.startswith("data-"))
        for k in shards:
            a, b = (_arrow_batches(d.pop(k)) for d in (want, got))
            assert a[0].equals(b[0], check_metadata=True)
            assert [x.num_rows for x in a[1]] == [x.num_rows for x in b[1]]
            assert pa.Table.from_batches(a[1]).equals(pa.Table.from_batches(b[1]))
    assert got == want
    if fmt.startswith("llamafactory"):  # the record-at-a-time JSON is json.dumps(records, indent=1)
        data = got_dir / f"medr2_{bench.name}_{strategy}{'_dpo' if fmt.endswith('dpo') else ''}.json"
        text = data.read_text("utf-8")
        assert json.dumps(json.loads(text), ensure_ascii=False, indent=1) + "\n" == text


@pytest.mark.parametrize("replay", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_curriculum_replay_samples_are_the_in_memory_ones(bench: Bench, tmp_path: Path, small: None,
                                                          replay: float, seed: int) -> None:
    want = plan_examples(bench.items, bench.cases, strategy="curriculum", with_variants=True, seed=seed,
                         replay=replay, answer_style="option-text")
    with TrainSource(bench.root) as src:
        got = stream.stream_examples(src, strategy="curriculum", with_variants=True, seed=seed, replay=replay,
                                     answer_style="option-text", work=tmp_path)
        assert list(got) == want.examples and got.summary() == want.summary()
    assert not list(tmp_path.iterdir())


def test_streamed_captions_are_the_in_memory_ones(bench: Bench, tmp_path: Path, small: None) -> None:
    want = plan_captions(bench.items, bench.cases, seed=4)
    with TrainSource(bench.root) as src:
        got = stream.stream_captions(src, seed=4, work=tmp_path)
        assert list(got) == want.examples and got.summary() == want.summary()
        with pytest.raises(RuntimeError, match="once"):
            list(got)


def test_run_sorter_is_a_stable_sort_in_bounded_runs(tmp_path: Path) -> None:
    rng = random.Random(0)
    rows = [{"k": rng.choice("abcde"), "j": rng.randrange(3), "v": n} for n in range(500)]
    sorter = RunSorter(tmp_path, lambda t: [t.column("k").combine_chunks(), t.column("j").combine_chunks()], 64,
                       prefix="run")
    for start in range(0, len(rows), 37):
        sorter.add(pa.Table.from_pylist(rows[start:start + 37]))
    got = [r for _, t in sorter.key_groups() for r in t.to_pylist()]
    assert got == sorted(rows, key=lambda r: (r["k"], r["j"]))  # stable: v ascending within a key
    assert len(list(tmp_path.iterdir())) == 7  # a run spills once 64 rows are held (two adds: 74 rows): 7 runs
    sorter.cleanup()
    assert not list(tmp_path.iterdir())


def test_finetune_dataset_is_streamed_to_disk_with_the_in_memory_rows(bench: Bench, tmp_path: Path,
                                                                      small: None) -> None:
    from datasets import Dataset

    from medr2.train.finetune import build_dataset, decoded_png

    plan = plan_examples(bench.items, bench.cases, strategy="chain", with_variants=True, seed=1)
    want = Dataset.from_list(hf_records(plan.examples, bench.root, dpo=False, image_bytes=decoded_png),
                             features=hf_features(False))
    with TrainSource(bench.root) as src:
        streamed = stream.stream_examples(src, strategy="chain", with_variants=True, seed=1, work=tmp_path)
        ds = build_dataset(streamed, bench.root, tmp_path / "cache")
    # the same Arrow rows; the images are stored undecoded and decoded by the dataset's transform, once per image
    assert ds.data.table.equals(want.data.table) and ds.features == hf_features(False, decode=False)
    assert [Path(f["filename"]).parent.parent for f in ds.cache_files] == [tmp_path / "cache"]  # memory-mapped
    got, expected = ds[:], want[:]
    assert got["messages"] == expected["messages"] and got["item_ids"] == expected["item_ids"]
    assert [[np.asarray(im).tobytes() for im in row] for row in got["images"]] == \
        [[np.asarray(im).tobytes() for im in row] for row in expected["images"]]
    seen: dict[bytes, int] = {}
    for row in got["images"]:
        for im in row:
            seen.setdefault(np.asarray(im).tobytes(), id(im))
            assert seen[np.asarray(im).tobytes()] == id(im)  # an image shown twice is decoded once
    assert len(seen) < sum(len(row) for row in got["images"])
    assert streamed.n_examples == len(plan.examples)
