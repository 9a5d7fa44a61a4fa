"""Issue 21 (data integrity): a changed bench is refused by every command that reads it; a rebuild or a
re-import never leaves the old bench reading complete; shard and merge leftovers; one image under
several path spellings; folder checks for ``import``/``eval --out``; file modes under the umask;
read-only run folders; hostile run labels in leaderboard.csv and index.html."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medr2 import BadInput, ModelConfig
from medr2.bench.format import ITEMS_FILE, MANIFEST, load_bench, prepare_bench_folder, read_manifest, verify_checksums
from medr2.errors import Quarantine
from medr2.interop.common import write_import
from medr2.interop.importers import run_import
from medr2.reporting.leaderboard import Column, Leaderboard, Row, csv_text, to_csv
from medr2.run import manifest as mf
from medr2.run.merge import MERGING_MARKER, merge_runs
from medr2.run.runner import EvalConfig, run_eval
from medr2.run.store import STORE_FILE, Store
from medr2.scoring.scorer import score_run
from tests.interop_fixtures import gradient, write_png
from tests.run_fixtures import make_bench


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``medr2 ARGS`` through the real entry point in this process: (exit code, stderr). An exception that
    the entry point lets through (a traceback for a user) fails the test."""
    from medr2.cli import main

    capsys.readouterr()
    argv = sys.argv
    sys.argv = ["medr2", *args]
    try:
        main()
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = argv
    return code, capsys.readouterr().err


@dataclass
class _Done:
    returncode: int
    stderr: str


def _tamper_answers(bench: Path) -> None:
    """Rewrite items.parquet with other answers, leaving the manifest as it was (the attack of issue 21)."""
    path = bench / ITEMS_FILE
    table = pq.read_table(path)
    answers = ["B" if a == "A" else "A" for a in table.column("answer").to_pylist()]
    table = table.set_column(table.column_names.index("answer"), "answer", pa.array(answers, pa.string()))
    pq.write_table(table, path)


# -- 1. a bench changed after the build ----------------------------------------------------------------------


def test_tampered_bench_is_refused_by_score_report_convert_export_merge(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from medr2.interop.exporters import run_export
    from medr2.reporting.write import write_report
    from medr2.train.dataset import export_dataset

    bench = tmp_path / "bench"
    make_bench(bench, n_cases=4)
    run = tmp_path / "run"
    run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:oracle"), out=run))
    before = score_run(run, mixed_splits=True, n_resamples=0)["modes"]["independent"]["overall"]["value"]
    shards = [tmp_path / f"s{i}" for i in range(2)]
    for i, d in enumerate(shards):
        run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:oracle"), out=d, shard=(i, 2)))
    _tamper_answers(bench)

    with pytest.raises(BadInput, match="checksum mismatch") as e:
        score_run(run, mixed_splits=True, n_resamples=0)
    assert e.value.file == str(bench / ITEMS_FILE)
    with pytest.raises(BadInput, match="checksum mismatch"):
        write_report([run], tmp_path / "report")
    with pytest.raises(BadInput, match="checksum mismatch"):
        run_export("hf", load_bench(bench), tmp_path / "hf")
    with pytest.raises(BadInput, match="checksum mismatch"):
        export_dataset(bench, "llamafactory", tmp_path / "sft")
    with pytest.raises(BadInput, match="checksum mismatch"):
        merge_runs(shards, tmp_path / "merged")
    assert not (tmp_path / "merged" / STORE_FILE).exists()  # refused before anything was written
    with pytest.raises(BadInput, match="checksum mismatch"):  # what eval always did
        run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:oracle"), out=tmp_path / "run2"))
    done = _Done(*_cli(["score", str(run), "--mixed-splits", "--resamples", "0"], capsys))
    assert done.returncode == 2 and "checksum mismatch" in done.stderr and "Traceback" not in done.stderr
    assert json.loads((run / "metrics.json").read_text())["modes"]["independent"]["overall"]["value"] == before


def test_manifest_checksum_edited_is_refused(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)
    m = read_manifest(bench)
    assert verify_checksums(bench, m) == m["checksums"]["bench"]
    m["checksums"]["bench"] = "0" * 64
    (bench / MANIFEST).write_text(json.dumps(m))
    with pytest.raises(BadInput, match="bench checksum mismatch") as e:
        load_bench(bench)
    assert e.value.field == "checksums.bench"


# -- 3. rebuilding / re-importing into an existing bench folder ------------------------------------------------


def test_rewriting_a_bench_invalidates_its_manifest_first(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)
    (bench / "quarantine.jsonl").write_text('{"reason": "old"}\n')
    prepare_bench_folder(bench)  # what build and import do before anything else
    with pytest.raises(BadInput, match="no manifest.json"):
        load_bench(bench)
    assert not (bench / "quarantine.jsonl").exists()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "thesis.tex").write_text("x")
    with pytest.raises(BadInput, match="not empty and not a bench") as e:
        prepare_bench_folder(tmp_path / "notes")
    assert e.value.field == "--out"


# -- 4. merge: a shard killed half-way; a killed merge ------------------------------------------------------------


def _kill_like(shard: Path) -> None:
    """What SIGKILL leaves of an eval: its invocation recorded as running, only part of its rows stored."""
    m = mf.read_manifest(shard)
    assert m is not None
    m["invocations"][-1]["status"] = "running"
    m["invocations"][-1].pop("finished_at", None)
    mf.write_manifest(shard, m)
    con = __import__("sqlite3").connect(str(shard / STORE_FILE))
    con.execute("DELETE FROM predictions WHERE rowid % 2 = 0")
    con.commit()
    con.close()


def test_merge_of_a_killed_shard_warns_and_is_incomplete(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=4)
    shards = [tmp_path / f"s{i}" for i in range(2)]
    for i, d in enumerate(shards):
        run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:oracle"), out=d, shard=(i, 2)))
    ok = merge_runs(shards, tmp_path / "whole")
    assert ok["complete"] is True and ok["shards_incomplete"] == []
    _kill_like(shards[1])
    done = _Done(*_cli(["merge", *map(str, shards), "--out", str(tmp_path / "m")], capsys))
    assert done.returncode == 0, done.stderr
    assert "warning" in done.stderr and "shard 1/2" in done.stderr and "incomplete" in done.stderr
    merged = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert merged["complete"] is False
    assert merged["shards_incomplete"] == [{"path": str(shards[1]), "shard": "1/2", "status": "running"}]
    assert merged["invocations"][0]["status"] == "merged-incomplete"
    from medr2.reporting.write import write_report

    score_run(tmp_path / "m", mixed_splits=True, n_resamples=0)
    html = write_report([tmp_path / "m"], tmp_path / "report", max_items=5).read_text("utf-8")
    assert "Run m is incomplete" in html and "1/2" in html


def test_rerun_of_a_killed_merge_is_not_blocked(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=4)
    shards = [tmp_path / f"s{i}" for i in range(2)]
    for i, d in enumerate(shards):
        run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:oracle"), out=d, shard=(i, 2)))
    out = tmp_path / "m"
    out.mkdir()
    (out / MERGING_MARKER).write_text("x")  # what a merge killed while copying leaves: marker + partial store
    with Store.open(out, write=True) as store:
        store.copy_from(shards[0] / STORE_FILE)
    merged = merge_runs(shards, out)
    assert merged["complete"] and not (out / MERGING_MARKER).exists()
    with Store.open(out) as store:
        assert store.count() == sum(Store.open(d).count() for d in shards)
    # a store that no merge left: the message names what to remove
    other = tmp_path / "other"
    with Store.open(other, write=True):
        pass
    with pytest.raises(BadInput, match=f"remove {other / STORE_FILE}"):
        merge_runs(shards, other)


# -- 5. one image, several spellings; repeated indices; repeated imports; --out checks --------------------------


def test_one_image_under_three_spellings_is_one_image(tmp_path: Path) -> None:
    from medr2.builder.pipeline import build_bench

    data = tmp_path / "data"
    for i in range(4):
        write_png(data / "xr" / f"{i}.png", gradient(32, 32, i))
    rows = ["image,modality,diagnosis",
            "xr/0.png,CT,pneumonia", "./xr/0.png,CT,normal", "xr//0.png,MRI,nodule",  # contradictory
            "xr/1.png,CT,normal", "./xr/1.png,CT,normal",  # the same labels twice
            "xr/2.png,CT,nodule", "xr/3.png,X-ray,normal"]
    (data / "labels.csv").write_text("\n".join(rows) + "\n")
    res = build_bench(f"folder:{data}", tmp_path / "bench", workers=1)
    bench = load_bench(tmp_path / "bench")
    assert sorted(c.meta["file"] for c in bench.cases) == ["xr/1.png", "xr/2.png", "xr/3.png"]
    q = Quarantine.read(tmp_path / "bench" / "quarantine.jsonl")
    contradictory = [e for e in q if "contradictory" in e.reason]
    assert len(contradictory) == 3 and {e.record for e in contradictory} == {"xr/0.png"}
    assert [e.record for e in q if e.reason == "duplicate row for this image"] == ["xr/1.png"]
    assert res.quarantined == len(q) == bench.manifest["quarantine"]["n"]


def _png_b64(arr: np.ndarray) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


def test_vlmevalkit_repeated_index_is_quarantined(tmp_path: Path) -> None:
    p = tmp_path / "MedX.tsv"
    first, second = gradient(16, 16, 1), gradient(16, 16, 2)
    with p.open("w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(["index", "image", "question", "answer", "category"])
        w.writerow([7, _png_b64(first), "Is it normal?", "yes", "x"])
        w.writerow([7, _png_b64(second), "Is there a mass?", "no", "x"])
        w.writerow([8, _png_b64(second), "Is there a mass?", "no", "x"])
    res = run_import("vlmevalkit", p, tmp_path / "b")
    assert [it.question for it in res.items] == ["Is it normal?", "Is there a mass?"]
    assert res.items[0].image_sha256 != res.items[1].image_sha256  # the row of index 8 shows its own image
    assert [(e.record, e.field) for e in res.quarantined] == [("7", "index")]
    assert "repeated index" in res.quarantined[0].reason


def test_import_three_times_into_one_out_keeps_one_quarantine(tmp_path: Path) -> None:
    p = tmp_path / "MedX.tsv"
    with p.open("w", newline="") as f:
        w = csv.writer(f, delimiter="\t")
        w.writerow(["index", "image", "question", "answer", "category"])
        w.writerow([0, _png_b64(gradient(16, 16)), "Is it normal?", "yes", "x"])
        w.writerow([1, "!!notbase64", "Q?", "yes", "x"])
        w.writerow([2, "", "Q?", "yes", "x"])
    out = tmp_path / "b"
    for _ in range(3):
        write_import(run_import("vlmevalkit", p, out), out)
    manifest = read_manifest(out)
    assert manifest["imported"]["quarantined"] == 2
    assert len((out / "quarantine.jsonl").read_text().splitlines()) == 2


def test_import_refuses_a_foreign_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "MedX.tsv"
    p.write_text("index\timage\tquestion\tanswer\n")
    out = tmp_path / "home"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    done = _Done(*_cli(["import", "vlmevalkit", str(p), "--out", str(out)], capsys))
    assert done.returncode == 2 and "not empty and not a bench" in done.stderr
    assert sorted(x.name for x in out.iterdir()) == ["thesis.tex"]  # nothing written


def test_eval_out_may_not_be_the_bench(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)
    listing = sorted(x.name for x in bench.iterdir())
    for out in (bench, bench / "runs" / "r1"):
        with pytest.raises(BadInput, match="bench folder") as e:
            run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:oracle"), out=out))
        assert e.value.field == "--out"
    other = tmp_path / "other"
    make_bench(other, n_cases=2)
    with pytest.raises(BadInput, match="holds a bench"):
        run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:oracle"), out=other))
    assert sorted(x.name for x in bench.iterdir()) == listing  # no .lock, no store.sqlite


# -- 13. file modes ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_files_follow_the_umask(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        make_bench(tmp_path / "bench", n_cases=2)
        run_eval(EvalConfig(split="all", bench=tmp_path / "bench", model=ModelConfig("baseline:oracle"),
                            out=tmp_path / "run"))
        score_run(tmp_path / "run", mixed_splits=True, n_resamples=0)
    finally:
        os.umask(old)
    want = 0o666 & ~umask
    files = [tmp_path / "bench" / MANIFEST, next((tmp_path / "bench" / "images").iterdir()),
             tmp_path / "run" / "manifest.json", tmp_path / "run" / "metrics.json", tmp_path / "run" / "scores.parquet"]
    assert {f.name: oct(f.stat().st_mode & 0o777) for f in files} == {f.name: oct(want) for f in files}


# -- 14. hostile run labels --------------------------------------------------------------------------------------


def test_csv_cells_cannot_be_formulas_but_numbers_stay_numbers() -> None:
    assert csv_text('=HYPERLINK("http://evil.example","x")') == '\'=HYPERLINK("http://evil.example","x")'
    assert [csv_text(x) for x in ("+1+cmd", "-2+3", "@SUM(A1)", "\tx", "ok", "-0.25", "-3")] == [
        "'+1+cmd", "'-2+3", "'@SUM(A1)", "'\tx", "ok", "-0.25", "-3"]
    col = Column("overall", "Overall", ("overall",), always=True)
    lb = Leaderboard((col,), (Row('=HYPERLINK("x")', "@model", "-mode", {
        "overall": {"value": -0.25, "lo": -0.5, "hi": 0.125, "n": 10}}),))
    rows = list(csv.reader(io.StringIO(to_csv(lb))))
    assert rows[1] == ["'=HYPERLINK(\"x\")", "'@model", "'-mode", "-0.25", "-0.5", "0.125", "10", "",
                       "false"]  # n_cases unknown, low_n


def test_report_labels_formula_and_bidi(tmp_path: Path) -> None:
    from medr2.reporting.write import write_report
    from tests.report_fixtures import make_fixture

    fx = make_fixture(tmp_path / "fx")
    evil = tmp_path / "=HYPERLINK(1)\u202egpj.exe"
    shutil.copytree(fx.runs[0], evil)
    index = write_report([evil, fx.runs[1]], tmp_path / "report", max_items=20)
    html = index.read_text("utf-8")
    assert "\u202e" not in html and "\u27e6U+202E\u27e7" in html
    lines = list(csv.reader((tmp_path / "report" / "leaderboard.csv").open(encoding="utf-8")))
    assert lines[1][0].startswith("'=HYPERLINK(1)")
    assert not [p for p in (tmp_path / "report").rglob("*") if "medr2-pending" in p.name or p.name.startswith(".medr2")]


# -- 10. read-only storage, full disks ---------------------------------------------------------------------------


def _mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a size-limited tmpfs here (needs root): {done.stderr.strip()}")


def _umount(where: Path) -> None:
    subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(where: Path, leave: int) -> Path:
    """A filler file taking all but about ``leave`` bytes of the file system."""
    st = os.statvfs(where)
    free = st.f_bavail * st.f_frsize
    filler = where / "filler"
    with filler.open("wb") as f:
        f.write(b"\0" * max(0, free - leave))
    return filler


def test_read_only_run_folder_reports_and_score_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from medr2.reporting.write import write_report

    bench = tmp_path / "bench"
    make_bench(bench, n_cases=2)
    mnt = tmp_path / "ro"
    _mount_tmpfs(mnt, "8m")
    try:
        run = mnt / "run"
        run_eval(EvalConfig(split="all", bench=bench, model=ModelConfig("baseline:oracle"), out=run))
        score_run(run, mixed_splits=True, n_resamples=0)
        listing = sorted(p.name for p in run.iterdir())
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        with Store.open(run) as store:  # read-only storage: opened immutable
            assert store.count() > 0
        write_report([run], tmp_path / "report", max_items=10)
        assert (tmp_path / "report" / "index.html").is_file()
        done = _Done(*_cli(["report", str(run), "--out", str(tmp_path / "report2")], capsys))
        assert done.returncode == 0, done.stderr
        done = _Done(*_cli(["score", str(run), "--mixed-splits", "--resamples", "0"], capsys))
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert "Read-only file system" in done.stderr and "rerun the same command" in done.stderr
        assert sorted(p.name for p in run.iterdir()) == listing
    finally:
        _umount(mnt)


def test_full_disk_is_a_clear_message_and_nothing_half_written(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "bench"
    make_bench(bench, n_cases=6)
    data = tmp_path / "data"
    for i in range(12):
        write_png(data / f"{i}.png", np.random.default_rng(i).integers(0, 255, (96, 96), dtype=np.uint8))
    (data / "labels.csv").write_text("image,modality\n" + "".join(f"{i}.png,CT\n" for i in range(12)))
    mnt = tmp_path / "full"
    _mount_tmpfs(mnt, "2m")
    try:
        filler = _fill(mnt, 24 * 1024)
        # eval into a full disk: exit 1, a message, no traceback; what is stored is whole
        run = mnt / "run"
        cmd = ["eval", "--split", "all", "--bench", str(bench), "--model", "baseline:oracle", "--out", str(run),
               "--no-progress"]
        done = _Done(*_cli(cmd, capsys))
        assert done.returncode == 1, done.stderr
        assert "Traceback" not in done.stderr and ("No space left" in done.stderr or "full" in done.stderr)
        # build into a full disk: exit 1, and nothing that reads as a bench
        done = _Done(*_cli(["build", "--source", f"folder:{data}", "--out", str(mnt / "b"),
                               "--workers", "1"], capsys))
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        with pytest.raises(BadInput):
            load_bench(mnt / "b")
        # the disk grows: the same eval command resumes and finishes
        filler.unlink()
        done = _Done(*_cli(cmd, capsys))
        assert done.returncode == 0, done.stderr
        with Store.open(run) as store:
            assert store.count() == len(load_bench(bench).items)
        # score into a full disk: the previous scores and metrics stay as they were, as one set
        score_run(run, mixed_splits=True, n_resamples=0)
        before = {n: (run / n).read_bytes() for n in ("scores.parquet", "metrics.json")}
        time.sleep(0.01)
        filler = _fill(mnt, 4 * 1024)
        done = _Done(*_cli(["score", str(run), "--mixed-splits", "--resamples", "50"], capsys))
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert {n: (run / n).read_bytes() for n in before} == before
        assert not [p.name for p in run.iterdir() if "pending" in p.name or p.name.startswith(".medr2")]
    finally:
        _umount(mnt)
