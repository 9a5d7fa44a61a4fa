"""One text decoder for the text files of user data (docs/reliability.md, issue 41): label tables, split lists,
question files, LUTs, task YAMLs, mapping and JSON files (through :mod:`medr2.jsonsafe`).

Text is UTF-8, with or without a byte-order mark. Anything else is refused with :class:`~medr2.errors.BadInput`
naming the file and saying what was found instead: a UTF-16/UTF-32 byte-order mark, or the first byte that is
not UTF-8 (its offset and line, and whether the bytes read as Latin-1 / Windows-1252), with what to do (save the
file as UTF-8). Nothing is guessed: a Latin-1 file decoded as Latin-1 would give other labels on another machine.

- :func:`decode`: bytes already read (``file`` names them in the message);
- :func:`read_text`: a whole file, its size checked before reading;
- :func:`open_text`: a text stream for files read row by row (CSV/TSV, which may be large); a decoding error met
  while the block reads is raised as ``BadInput`` naming the file.

``tests/test_reliability_textfile.py`` walks ``src/medr2/sources`` and ``src/medr2/interop/importers`` with
``ast``: no other ``open()`` in text mode, ``read_text`` or ``.decode`` of file bytes there.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from medr2.errors import BadInput

MAX_BYTES = 256 << 20  # a text file larger than this is refused before it is read (the default of read_text)

_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"), (codecs.BOM_UTF16_LE, "UTF-16"),
         (codecs.BOM_UTF16_BE, "UTF-16"))
ADVICE = "save it as UTF-8"


class OverBound(BadInput):
    """Input beyond a size, depth or digit bound (a :class:`BadInput`: exit 2); ``medr2.jsonsafe.OverBound``."""


def _foreign_bom(head: bytes) -> str | None:
    return next((name for bom, name in _BOMS if head.startswith(bom)), None)


def _looks_like(data: bytes) -> str:
    try:
        data.decode("cp1252")
    except UnicodeDecodeError:
        return ""
    return "; the bytes read as Latin-1 / Windows-1252"


def not_utf8(data: bytes, start: int) -> str:
    """The message for ``data`` that is not UTF-8 from byte ``start`` on."""
    bom = _foreign_bom(data[:4])
    if bom:
        return f"{bom} text (it starts with a {bom} byte-order mark), not UTF-8: {ADVICE}"
    line = data.count(b"\n", 0, start) + 1
    return (f"not UTF-8 text: byte {start} (line {line}) is 0x{data[start]:02x}{_looks_like(data[:1 << 16])}; "
            f"{ADVICE}")


def decode(data: bytes, *, file: str | Path | None) -> str:
    """``data`` as text: UTF-8, a leading UTF-8 byte-order mark dropped; else BadInput naming ``file``."""
    bom = _foreign_bom(data[:4])
    if bom:
        raise BadInput(not_utf8(data, 0), file=str(file) if file is not None else None)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise BadInput(not_utf8(data, e.start), file=str(file) if file is not None else None) from None


def read_text(path: str | Path, *, max_bytes: int | None = MAX_BYTES, what: str = "file") -> str:
    """The text of file ``path`` (:func:`decode`), refused (BadInput naming it) when it cannot be read or is
    larger than ``max_bytes`` (checked from its size before reading)."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if max_bytes is not None and size > max_bytes:
            raise OverBound(f"{what} of {size:,} bytes is larger than the {max_bytes:,} medr2 reads", file=str(path))
        data = path.read_bytes()
    except OSError as e:
        raise BadInput(f"cannot read: {e.strerror or e}", file=str(path)) from None
    return decode(data, file=path)


@contextmanager
def open_text(path: str | Path) -> Iterator[TextIO]:
    """``path`` opened as UTF-8 text (a leading byte-order mark dropped; ``newline=""`` for the csv module).
    A file that cannot be opened, starts with a UTF-16/32 mark, or holds bytes that are not UTF-8 (found while
    the block reads) is BadInput naming it."""
    path = Path(path)
    try:
        with path.open("rb") as raw:
            head = raw.read(4)
        f = path.open(encoding="utf-8-sig", errors="strict", newline="")
    except OSError as e:
        raise BadInput(f"cannot read: {e.strerror or e}", file=str(path)) from None
    with f:
        if _foreign_bom(head):
            raise BadInput(not_utf8(head, 0), file=str(path))
        try:
            yield f
        except UnicodeDecodeError as e:
            chunk = e.object if isinstance(e.object, bytes) else b""
            bad = chunk[e.start:e.start + 1]
            raise BadInput(f"not UTF-8 text: byte 0x{bad.hex() or '??'}{_looks_like(chunk)}; {ADVICE}",
                           file=str(path)) from None


def storable(text: str) -> str:
    """Text any UTF-8 writer accepts: lone surrogates (a server's JSON escape such as ``\\udcff``, any adapter's
    output) become U+FFFD instead of failing the writer; UTF-8 text is returned as it is. (A file *name* from the OS
    is shown with its bytes instead: :func:`medr2.errors.os_text`.)"""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
