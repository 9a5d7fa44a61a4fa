"""``RUN/manifest.json``: what was run, on what, with which settings (docs/running.md).

``identity`` holds what decides the answers (bench checksum, model key, generation settings, box
convention, preset, shard); a rerun or resume into the same folder must match it exactly, and
``medr2 merge`` refuses shards whose identities differ in anything but the shard.
Everything else (base URLs, concurrency, command lines) may change between invocations and is
recorded per invocation. Secrets are never recorded: only the *name* of the API key variable; credentials in
URLs (``http://user:password@host``, ``?api_key=...``) are masked in everything the manifest holds.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import medr2
from medr2 import jsonsafe
from medr2.atomic import atomic_write_bytes
from medr2.errors import BadInput
from medr2.records import canonical_json
from medr2.redact import redact_tree

MANIFEST_FILE = "manifest.json"
FORMAT = "medr2-run"
FORMAT_VERSION = 1


def git_commit() -> str | None:
    """The commit of the medr2 checkout this code runs from, if it is a git checkout."""
    pkg = Path(medr2.__file__).resolve().parent
    try:
        out = subprocess.run(["git", "-C", str(pkg), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and len(commit) == 40 else None


def read_manifest(run_dir: Path) -> dict[str, Any] | None:
    path = Path(run_dir) / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        data: Any = jsonsafe.load_file(path)
    except BadInput as e:
        raise BadInput(f"cannot read the run manifest: {e.reason}", file=str(path)) from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BadInput("not a medr2 run manifest", file=str(path), field="format")
    return data


def write_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    """Atomic write (a reader never sees half a manifest); URL credentials masked (``medr2.redact``)."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    data = json.dumps(redact_tree(manifest), indent=2, sort_keys=True, ensure_ascii=False, default=str) + "\n"
    atomic_write_bytes(run_dir / MANIFEST_FILE, data.encode("utf-8"))


def new_manifest(identity: dict[str, Any], *, bench: dict[str, Any], model: dict[str, Any]) -> dict[str, Any]:
    now = time.time()
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "medr2_version": medr2.__version__,
        "git_commit": git_commit(),
        "created_at": now,
        "updated_at": now,
        "identity": identity,
        "bench": bench,
        "model": model,
        "modes": [],
        "invocations": [],
        "counts": {},
    }


def identity_diff(a: dict[str, Any], b: dict[str, Any], *, ignore: tuple[str, ...] = ()) -> list[str]:
    """Keys whose values differ between two identities."""
    keys = sorted((set(a) | set(b)) - set(ignore))
    return [k for k in keys if canonical_json(a.get(k)) != canonical_json(b.get(k))]


def check_same_run(existing: dict[str, Any], identity: dict[str, Any], run_dir: Path) -> None:
    """Refuse to resume into a folder that holds a run with other settings."""
    diff = identity_diff(existing.get("identity", {}), identity)
    if diff:
        raise BadInput(f"the run folder holds a run with different {', '.join(diff)}; use another --out",
                       file=str(Path(run_dir) / MANIFEST_FILE), field=diff[0])


def eval_option(manifest: dict[str, Any], key: str) -> Any:
    """An eval option that changes what is asked (``confidence``, ``abstain_option``: issue 45), as recorded in the
    run's identity (a merged run keeps its shards' identity) or, failing that, at the top of the manifest."""
    identity = manifest.get("identity") or {}
    return identity.get(key, manifest.get(key)) if isinstance(identity, dict) else manifest.get(key)
