"""SFT / DPO exports: documented fields of each format, train split only, eval-identical prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medr2 import BadInput
from medr2.bench.format import load_bench
from medr2.train.dataset import IDS_FILE, MANIFEST, export_dataset
from medr2.train.formats import FORMATS
from tests.train_fixtures import planned, write_quadrant_bench

STRATEGIES = ("flat", "curriculum", "chain")


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return load_bench(write_quadrant_bench(tmp_path_factory.mktemp("qbench") / "bench", n_cases=16))


def _held_out(bench):
    ids = {it.item_id for it in bench.items if it.split != "train"}
    shas = {it.image_sha256 for it in bench.items if it.split != "train"}
    assert ids and shas
    return ids, shas


def _check_no_leak(out: Path, bench) -> list[list[str]]:
    test_ids, test_shas = _held_out(bench)
    rows = [json.loads(x)["item_ids"] for x in (out / IDS_FILE).read_text().splitlines()]
    assert rows and not {i for r in rows for i in r} & test_ids
    for f in out.rglob("*"):
        assert f.stem not in test_shas, f
        if f.suffix in (".json", ".jsonl"):
            text = f.read_text()
            assert not any(i in text for i in test_ids) and not any(s in text for s in test_shas)
    train_ids = {it.item_id for it in bench.items if it.split == "train"}
    assert {i for r in rows for i in r} <= train_ids
    return rows


def _check_openai_messages(msgs: list[dict], n_images: int, *, ends_with_assistant: bool) -> None:
    assert all(set(m) == {"role", "content"} and isinstance(m["content"], str) for m in msgs)
    roles = [m["role"] for m in msgs if m["role"] != "system"]
    assert roles[0] == "user"
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False))  # alternating
    assert (roles[-1] == "assistant") == ends_with_assistant
    assert sum(m["content"].count("<image>") for m in msgs) == n_images


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_llamafactory_sharegpt(bench, tmp_path, strategy):
    out = tmp_path / "lf"
    m = export_dataset(bench.root, "llamafactory", out, strategy=strategy, with_variants=True)
    info = json.loads((out / "dataset_info.json").read_text())
    entry = info[m["dataset_name"]]
    assert entry["formatting"] == "sharegpt" and entry["columns"] == {"messages": "messages", "images": "images"}
    assert entry["tags"] == {"role_tag": "role", "content_tag": "content", "user_tag": "user",
                             "assistant_tag": "assistant", "system_tag": "system"}
    records = json.loads((out / entry["file_name"]).read_text())
    assert len(records) == m["n_examples"]
    for rec in records:
        assert set(rec) == {"messages", "images"}
        _check_openai_messages(rec["messages"], len(rec["images"]), ends_with_assistant=True)
        assert all((out / p).is_file() and not Path(p).is_absolute() for p in rec["images"])
    rows = _check_no_leak(out, bench)
    if strategy == "chain":
        assert max(len(r) for r in rows) == 3  # whole chains: 3 steps as one conversation
        longest = max(records, key=lambda r: len(r["messages"]))
        assert [x["role"] for x in longest["messages"]] == ["user", "assistant"] * 3
        assert len(longest["images"]) == 1  # the image is shown once for the chain


def test_llamafactory_dpo(bench, tmp_path):
    out = tmp_path / "lfdpo"
    m = export_dataset(bench.root, "llamafactory-dpo", out, with_variants=True)
    entry = json.loads((out / "dataset_info.json").read_text())[m["dataset_name"]]
    assert entry["ranking"] is True and entry["formatting"] == "sharegpt"
    assert entry["columns"] == {"messages": "messages", "images": "images", "chosen": "chosen", "rejected": "rejected"}
    records = json.loads((out / entry["file_name"]).read_text())
    by_id = bench.items_by_id
    rows = _check_no_leak(out, bench)
    n_lure = 0
    for rec, ids in zip(records, rows, strict=True):
        _check_openai_messages(rec["messages"], len(rec["images"]), ends_with_assistant=False)
        assert rec["chosen"]["role"] == rec["rejected"]["role"] == "assistant"
        assert rec["chosen"]["content"] != rec["rejected"]["content"]
        item = by_id[ids[-1]]
        if item.lure:
            n_lure += 1
            assert rec["rejected"]["content"].startswith(item.lure)  # the lure is what is rejected
    assert n_lure > 0 and m["counts"]["rejected_is_lure"] == n_lure


@pytest.mark.parametrize("fmt", ["swift", "swift-dpo"])
def test_swift_jsonl(bench, tmp_path, fmt):
    out = tmp_path / fmt
    m = export_dataset(bench.root, fmt, out, strategy="chain")
    lines = (out / f"{m['dataset_name']}.jsonl").read_text().splitlines()
    assert len(lines) == m["n_examples"]
    for line in lines:
        rec = json.loads(line)
        assert set(rec) == ({"messages", "images", "rejected_response"} if fmt.endswith("dpo") else
                            {"messages", "images"})
        _check_openai_messages(rec["messages"], len(rec["images"]), ends_with_assistant=True)
        assert all(Path(p).is_absolute() and Path(p).is_file() for p in rec["images"])
        if fmt.endswith("dpo"):
            assert rec["rejected_response"] != rec["messages"][-1]["content"]
    _check_no_leak(out, bench)


@pytest.mark.parametrize("fmt", ["hf", "hf-dpo"])
def test_hf_dataset_loads_with_embedded_images(bench, tmp_path, fmt):
    import datasets

    out = tmp_path / fmt
    m = export_dataset(bench.root, fmt, out, strategy="flat", with_variants=True)
    ds = datasets.load_from_disk(str(out))
    assert len(ds) == m["n_examples"]
    row = ds[0]
    assert row["images"] and row["images"][0].size == (32, 32)  # decoded PIL image, bytes embedded
    if fmt == "hf":
        assert [x["role"] for x in row["messages"]][-1] == "assistant"
        n_ph = sum(p["type"] == "image" for msg in row["messages"] for p in msg["content"])
    else:
        assert {"prompt", "chosen", "rejected"} <= set(ds.column_names)
        assert row["chosen"] != row["rejected"]
        n_ph = sum(p["type"] == "image" for msg in row["prompt"] for p in msg["content"])
    assert n_ph == len(row["images"])
    test_ids, _ = _held_out(bench)
    assert not {i for ids in ds["item_ids"] for i in ids} & test_ids
    assert not list(out.glob("images"))  # no loose image files: everything is inside the arrow data


def test_prompts_are_the_evaluation_rendering(bench, tmp_path):
    from medr2 import BoxConvention
    from medr2.run.prompts import MODES, render_messages

    out = tmp_path / "lf"
    m = export_dataset(bench.root, "llamafactory", out, strategy="flat")
    records = json.loads((out / f"{m['dataset_name']}.json").read_text())
    rows = [json.loads(x)["item_ids"] for x in (out / IDS_FILE).read_text().splitlines()]
    for rec, ids in zip(records, rows, strict=True):
        item = bench.items_by_id[ids[0]]
        msgs = render_messages(item, mode=MODES["independent"], history=(), conv=BoxConvention())
        expected = "".join("<image>" if p.type == "image" else p.text for p in msgs[-1].parts)
        assert rec["messages"][-2]["content"] == expected


def test_curriculum_order_and_replay(bench, tmp_path):
    out = tmp_path / "cur"
    export_dataset(bench.root, "swift", out, strategy="curriculum", replay=0.5)
    stages = [bench.items_by_id[json.loads(x)["item_ids"][0]].stage
              for x in (out / IDS_FILE).read_text().splitlines()]
    first_s3 = stages.index(3)
    assert set(stages[:first_s3]) == {2}  # stage 2 block first, no later stage before it
    assert 2 in stages[first_s3:]  # earlier stage replayed inside the stage-3 block


def test_variants_and_leaky_images_are_controlled(tmp_path):
    from medr2 import Item
    from medr2.bench.format import write_bench
    from tests.train_fixtures import quadrant_records

    cases, items = quadrant_records(tmp_path / "b", 12)
    test_item = next(it for it in items if it.split == "test")
    train_item = next(it for it in items if it.split == "train" and it.variant == "clean" and it.form == "mcq")
    # a train variant that shows a test image (as a V2 "other case" image could) must not be exported
    leaky = Item(**{**train_item.model_dump(), "item_id": "leaky0000000000", "variant": "V2",
                    "parent_id": train_item.item_id, "image": test_item.image, "image_sha256": test_item.image_sha256})
    write_bench(tmp_path / "b", cases, [*items, leaky], {"name": "leak"})
    clean = export_dataset(tmp_path / "b", "swift", tmp_path / "o1")
    with_var = export_dataset(tmp_path / "b", "swift", tmp_path / "o2", with_variants=True)
    assert with_var["n_items"] > clean["n_items"]
    assert with_var["skipped"]["image shared with a non-train split"] == 1
    assert "leaky0000000000" not in (tmp_path / "o2" / IDS_FILE).read_text()


def test_deterministic_and_bad_input(bench, tmp_path):
    a = export_dataset(bench.root, "llamafactory", tmp_path / "a", strategy="chain", seed=3)
    export_dataset(bench.root, "llamafactory", tmp_path / "b", strategy="chain", seed=3)
    name = a["dataset_name"] + ".json"
    assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    with pytest.raises(BadInput, match="unknown export format"):
        export_dataset(bench.root, "alpaca", tmp_path / "c")
    with pytest.raises(BadInput, match="strategy"):
        export_dataset(bench.root, "swift", tmp_path / "d", strategy="random")
    with pytest.raises(BadInput, match="not empty"):
        export_dataset(bench.root, "swift", tmp_path / "a")


def test_cli_export(bench, tmp_path):
    from medr2.cli import app

    out = tmp_path / "cli"
    res = CliRunner().invoke(app, ["export", "--bench", str(bench.root), "--format", "swift", "--out", str(out),
                                   "--strategy", "chain", "--with-variants"])
    assert res.exit_code == 0, res.output
    manifest = json.loads((out / MANIFEST).read_text())
    assert manifest["strategy"] == "chain" and manifest["with_variants"] is True
    assert set(FORMATS) == {"llamafactory", "llamafactory-dpo", "swift", "swift-dpo", "hf", "hf-dpo"}


def test_option_text_answer_style_is_read_by_the_scorer_as_the_same_option(bench, tmp_path):
    """``answer_style="option-text"`` writes an MCQ target as the option's text only; the scorer reads it
    as the same option as the ``letter`` target ("B. X-ray"); other forms are written the same in both."""
    from medr2.scoring.extract import extract

    by_style = {s: planned(bench, tmp_path, strategy="chain", answer_style=s)[0] for s in ("letter", "option-text")}
    assert [e.item_ids for e in by_style["letter"]] == [e.item_ids for e in by_style["option-text"]]
    n_mcq = 0
    for a, b in zip(by_style["letter"], by_style["option-text"], strict=True):
        said_a = [m.parts[0].text for m in a.messages if m.role == "assistant"]
        said_b = [m.parts[0].text for m in b.messages if m.role == "assistant"]
        assert len(said_a) == len(said_b) == len(a.item_ids)  # every chain step answered, history included
        for iid, ta, tb in zip(a.item_ids, said_a, said_b, strict=True):
            item = bench.items_by_id[iid]
            if item.form == "mcq":
                n_mcq += 1
                assert ta == f"{item.answer}. {tb}" and tb == item.options[ord(item.answer) - ord("A")]
                assert extract("mcq", tb, item.options) == extract("mcq", ta, item.options) == item.answer
            else:
                assert ta == tb
    assert n_mcq > 0
    dpo, _ = planned(bench, tmp_path, strategy="flat", answer_style="option-text", dpo=True)
    for ex in dpo:
        item = bench.items_by_id[ex.item_ids[-1]]
        if item.form == "mcq":
            assert ex.rejected in item.options and ex.rejected != ex.messages[-1].parts[0].text
    with pytest.raises(ValueError, match="unknown answer style"):
        planned(bench, tmp_path, answer_style="word")


def test_letter_only_answer_style_writes_the_letter_alone_and_the_scorer_reads_the_same_option(bench, tmp_path):
    """``answer_style="letter-only"`` writes an MCQ target as its letter ("B", what the evaluation prompt asks
    for); the scorer reads it as the ``letter`` target's option; other forms and DPO's rejected letter follow."""
    from medr2.scoring.extract import extract

    by_style = {s: planned(bench, tmp_path, strategy="flat", answer_style=s)[0] for s in ("letter", "letter-only")}
    n_mcq = 0
    for a, b in zip(by_style["letter"], by_style["letter-only"], strict=True):
        item = bench.items_by_id[a.item_ids[-1]]
        ta, tb = a.messages[-1].parts[0].text, b.messages[-1].parts[0].text
        if item.form == "mcq":
            n_mcq += 1
            assert tb == item.answer and ta.startswith(f"{tb}. ")
            assert extract("mcq", tb, item.options) == extract("mcq", ta, item.options) == item.answer
        else:
            assert ta == tb
    assert n_mcq > 0
    dpo, _ = planned(bench, tmp_path, strategy="flat", answer_style="letter-only", dpo=True)
    n_rejected = 0
    for ex in dpo:
        item = bench.items_by_id[ex.item_ids[-1]]
        if item.form == "mcq":
            n_rejected += 1
            assert len(ex.rejected) == 1 and ex.rejected != item.answer and ord(ex.rejected) - 65 < len(item.options)
    assert n_rejected > 0


def test_captions_are_one_image_each_train_only_and_text_free_of_the_prompt(bench, tmp_path):
    """The image pre-training plan: one example per train image, the same prompt for all (only the image can
    predict the target), the target built from that image's clean multiple-choice answers; no test image; in the
    order of the images' hashes, the same from the bench folder as from its items held."""
    from medr2.train.export import CAPTION_PROMPT, _order_key, caption_text

    examples, plan = planned(bench, tmp_path, captions=True, seed=0)
    assert examples and plan.summary()["counts"] == {"train_images": len(examples)}
    _, test_shas = _held_out(bench)
    images = [e.images for e in examples]
    assert all(len(i) == 1 for i in images) and len({i[0] for i in images}) == len(images)
    assert [i[0] for i in images] == sorted((i[0] for i in images), key=lambda im: _order_key(0, im))
    for ex in examples:
        user, answer = ex.messages
        assert [p.type for p in user.parts] == ["image", "text"] and user.parts[1].text == CAPTION_PROMPT
        assert user.parts[0].image_sha256 not in test_shas
        items = [bench.items_by_id[i] for i in ex.item_ids]
        assert all(it.split == "train" and it.image == ex.images[0] for it in items)
        assert answer.parts[0].text == caption_text(items)
        mcq = sorted({it.task for it in items if it.form == "mcq" and it.variant == "clean"})
        assert answer.parts[0].text.count(": ") == len(mcq)
    from_folder, _ = planned(bench.root, tmp_path, captions=True, seed=0)
    assert from_folder == examples  # deterministic, whatever holds the items
