"""Errors with a clear cause, and the quarantine log for bad records."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path


class Medr2Error(Exception):
    """Base class. ``exit_code`` is what the command line returns for it."""

    exit_code = 1


class BadInput(Medr2Error):
    """Bad usage or bad input data; the message names the file, record and field."""

    exit_code = 2

    def __init__(self, reason: str, *, file: str | None = None, record: str | None = None,
                 field: str | None = None) -> None:
        self.reason, self.file, self.record, self.field = reason, file, record, field
        where = ", ".join(f"{k}={v}" for k, v in (("file", file), ("record", record), ("field", field)) if v)
        super().__init__(f"{where}: {reason}" if where else reason)


class Skip(Exception):  # noqa: N818 - a control-flow signal, not an error
    """A task or a perturbation does not apply to this case or item; ``reason`` is counted in the manifest."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WorkFailed(Medr2Error):
    exit_code = 1


@dataclass(frozen=True)
class QuarantineEntry:
    """One bad record kept with its reason (never silently dropped)."""

    file: str | None
    record: str | None
    field: str | None
    reason: str
    stage: str = "source"  # source / task / variant / bench

    @classmethod
    def from_error(cls, err: BadInput, stage: str = "source") -> QuarantineEntry:
        return cls(err.file, err.record, err.field, err.reason, stage)


class Quarantine:
    """Append-only JSONL log of quarantined records (``BENCH/quarantine.jsonl``). Thread-safe."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self.count = 0

    def add(self, entry: QuarantineEntry) -> None:
        line = json.dumps(asdict(entry), sort_keys=True, ensure_ascii=False)
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(line + "\n")
            self.count += 1

    @staticmethod
    def read(path: Path) -> list[QuarantineEntry]:
        if not path.exists():
            return []
        from medr2 import jsonsafe

        out = []
        for n, entry in enumerate(jsonsafe.load_lines(path), 1):
            try:
                out.append(QuarantineEntry(**entry))
            except TypeError as e:
                raise BadInput(f"not a quarantine entry: {e}", file=str(path), record=f"entry {n}") from None
        return out
