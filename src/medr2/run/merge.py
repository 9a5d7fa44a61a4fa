"""``medr2 merge``: combine shard runs into one run folder.

Shards must share everything in the manifest identity except the shard itself (same bench
checksum, model key, generation settings, box convention, preset, prompt version), use the same
number of shards, and not repeat a shard. Missing shards are allowed and recorded.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medr2.errors import BadInput
from medr2.run import manifest as mf
from medr2.run.store import STORE_FILE, Store

MERGING_MARKER = ".merging"


def parse_shard(shard: Any, file: Path) -> tuple[int, int]:
    """``"I/N"`` (0 <= I < N) from a shard manifest's identity, else BadInput naming the file and field."""
    m = re.fullmatch(r"(\d{1,9})/(\d{1,9})", shard) if isinstance(shard, str) else None
    if m is None or not int(m.group(1)) < int(m.group(2)):
        raise BadInput(f"shard must be I/N with 0 <= I < N, got {str(shard)[:40]!r}", file=str(file),
                       field="identity.shard")
    return int(m.group(1)), int(m.group(2))


def _check_manifest(m: dict[str, Any], file: Path) -> None:
    """The parts of a run manifest merge reads: an ``identity`` object, ``bench`` and ``model`` objects."""
    for key in ("identity", "bench", "model"):
        if not isinstance(m.get(key), dict):
            raise BadInput(f"the run manifest has no {key} object", file=str(file), field=key)
    for key in ("modes", "invocations"):
        if key in m and not isinstance(m[key], list):
            raise BadInput(f"{key} must be a list", file=str(file), field=key)


def merge_runs(shard_dirs: Sequence[Path | str], out: Path | str, *, command: Sequence[str] = ()) -> dict[str, Any]:
    """Merge ``shard_dirs`` into ``out`` (which must not hold a store yet). Returns the new manifest."""
    dirs = [Path(d) for d in shard_dirs]
    out = Path(out)
    if not dirs:
        raise BadInput("give at least one shard run folder", field="RUN_SHARD")
    _clear_killed_merge(out)
    if (out / STORE_FILE).exists():
        raise BadInput("the output folder already holds a run store; merge into a new folder", file=str(out))
    manifests: list[dict[str, Any]] = []
    for d in dirs:
        m = mf.read_manifest(d)
        if m is None or not (d / STORE_FILE).is_file():
            raise BadInput("not a run folder (needs manifest.json and store.sqlite)", file=str(d))
        _check_manifest(m, d / mf.MANIFEST_FILE)
        manifests.append(m)
    first = manifests[0]["identity"]
    shards: dict[int, Path] = {}
    total: int | None = None
    for d, m in zip(dirs, manifests, strict=True):
        diff = mf.identity_diff(first, m["identity"], ignore=("shard",))
        if diff:
            raise BadInput(f"shard differs from {dirs[0]} in {', '.join(diff)}", file=str(d / mf.MANIFEST_FILE),
                           field=diff[0])
        shard = m["identity"].get("shard")
        if shard is None:
            if len(dirs) > 1:
                raise BadInput("not a shard run (no --shard); only shard runs can be merged", file=str(d))
            i, n = 0, 1
        else:
            i, n = parse_shard(shard, d / mf.MANIFEST_FILE)
        if total is not None and n != total:
            raise BadInput(f"shard {shard} belongs to a split into {n}, others into {total}", file=str(d),
                           field="shard")
        total = n
        if i in shards:
            raise BadInput(f"shard {i}/{n} given twice ({shards[i]} and {d})", file=str(d), field="shard")
        shards[i] = d
    assert total is not None
    _verify_bench(manifests[0], dirs[0])
    incomplete = [{"path": str(shards[i]), "shard": f"{i}/{total}", "status": status}
                  for i in sorted(shards) if (status := eval_status(manifests[dirs.index(shards[i])])) != "complete"]
    rows: dict[str, int] = {}
    out.mkdir(parents=True, exist_ok=True)
    (out / MERGING_MARKER).write_text("a merge into this folder started; it is finished when manifest.json "
                                      "exists\n", "utf-8")
    with Store.open(out, write=True) as store:
        for i in sorted(shards):
            rows[str(shards[i])] = store.copy_from(shards[i] / STORE_FILE)
        counts = store.counts_by_mode()
    identity = dict(first, shard=None)
    merged = mf.new_manifest(identity, bench=manifests[0]["bench"], model=manifests[0]["model"])
    merged["modes"] = sorted({mode for m in manifests for mode in m.get("modes", [])})
    merged["merged_from"] = [{"path": str(shards[i].resolve()), "shard": f"{i}/{total}", "rows": rows[str(shards[i])],
                              "invocations": manifests[dirs.index(shards[i])].get("invocations", [])}
                             for i in sorted(shards)]
    merged["shards_missing"] = [f"{i}/{total}" for i in range(total) if i not in shards]
    merged["shards_incomplete"] = incomplete
    merged["complete"] = not incomplete and not merged["shards_missing"]
    merged["invocations"] = [{"command": list(command), "started_at": time.time(),
                              "status": "merged" if not incomplete else "merged-incomplete"}]
    merged["counts"] = counts
    mf.write_manifest(out, merged)
    (out / MERGING_MARKER).unlink(missing_ok=True)
    return merged


def eval_status(manifest: dict[str, Any]) -> str:
    """``complete`` when the run's last ``medr2 eval`` finished; else what it was left as (``running``:
    killed, ``interrupted``, ``failed``; ``no eval`` when none was recorded). A merged run is ``complete``
    unless it says otherwise."""
    if "merged_from" in manifest:
        return "complete" if manifest.get("complete", True) else "incomplete"
    invocations = manifest.get("invocations") or []
    last = invocations[-1] if invocations and isinstance(invocations[-1], dict) else None
    if last is None:
        return "no eval"
    return str(last.get("status") or "unknown")


def _verify_bench(manifest: dict[str, Any], shard_dir: Path) -> None:
    """The check eval makes: the bench the shards were run on is at its recorded path, unchanged."""
    from medr2.bench.format import read_manifest, verify_checksums

    bench: dict[str, Any] = manifest["bench"] if isinstance(manifest.get("bench"), dict) else {}
    path = bench.get("path")
    where = str(shard_dir / mf.MANIFEST_FILE)
    if not isinstance(path, str) or not path:
        raise BadInput("the run manifest names no bench path", file=where, field="bench.path")
    checksum = verify_checksums(path, read_manifest(path))
    recorded = (manifest.get("identity") or {}).get("bench_checksum") or bench.get("checksum")
    if recorded != checksum:
        raise BadInput(f"the bench at {path} changed since the shards were run (checksum {checksum[:12]}... "
                       f"!= {str(recorded)[:12]}...)", file=where, field="identity.bench_checksum")


def _clear_killed_merge(out: Path) -> None:
    """A merge killed before its manifest was written leaves a store and the marker: remove them (the
    shards are untouched), so the rerun starts over."""
    if not (out / MERGING_MARKER).is_file() or (out / mf.MANIFEST_FILE).exists():
        if (out / STORE_FILE).exists() and not (out / mf.MANIFEST_FILE).exists():
            raise BadInput(f"the output folder holds a run store but no manifest.json (not left by medr2 merge); "
                           f"remove {out / STORE_FILE} or merge into a new folder", file=str(out))
        return
    for name in (STORE_FILE, f"{STORE_FILE}-wal", f"{STORE_FILE}-shm", f"{STORE_FILE}-journal"):
        (out / name).unlink(missing_ok=True)
