"""Errors with a clear cause, and the quarantine log for bad records."""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass
from pathlib import Path


class Medr2Error(Exception):
    """Base class. ``exit_code`` is what the command line returns for it."""

    exit_code = 1


def os_text(text: str) -> str:
    """``text`` as it can be written anywhere (UTF-8 files, JSON, Parquet, SQLite, the console): a file name that
    is not UTF-8 reaches Python with each undecodable byte as a lone surrogate (U+DC80-U+DCFF, PEP 383); such a byte
    is shown as ``\\xNN`` (what a user needs to find the file), any other lone surrogate as U+FFFD. Text that is
    already UTF-8 is returned as it is."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join(f"\\x{ord(c) - 0xDC00:02x}" if "\udc80" <= c <= "\udcff"
                       else "\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def is_text(name: str) -> bool:
    """Whether ``name`` (a file name or path as Python read it from the OS) is UTF-8 text."""
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


class BadInput(Medr2Error):
    """Bad usage or bad input data; the message names the file, record and field (each as :func:`os_text`, so a
    name that is not UTF-8 reaches every channel shown, never as a crash of the writer)."""

    exit_code = 2

    def __init__(self, reason: str, *, file: str | None = None, record: str | None = None,
                 field: str | None = None) -> None:
        shown = {k: None if v is None else os_text(str(v)) for k, v in
                 (("file", file), ("record", record), ("field", field))}
        reason, file, record, field = os_text(str(reason)), shown["file"], shown["record"], shown["field"]
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
        fields = {k: None if v is None else os_text(str(v)) for k, v in asdict(entry).items()}
        line = json.dumps(fields, sort_keys=True, ensure_ascii=False)
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
