"""One image gate (docs/reliability.md, issue 41 item 6): width x height x channels x bytes per sample (x frames)
from the header, checked by :func:`medr2.images.check_decoded` before any pixel is decoded, for every reader.

- ``test_every_decoder_goes_through_the_gate``: an ``ast`` walk of ``src/medr2``: ``Image.open`` only in
  ``images.py`` (``open_checked``), a pixel-reading ``dcmread`` only in ``sources/dicom.py::read_checked``,
  ``nibabel.load`` only in ``sources/nifti_volume.py``; the exceptions are named with their reason;
- ``test_gate_property``: the gate refuses exactly what exceeds the pixel or byte limit (generated headers);
- ``test_dicom_bomb_in_every_dicom_dataset_reader``: a 17,000 x 17,000 deflated DICOM of well under 1 MB in
  place of a record of each public-dataset reader that reads DICOM (RSNA, VinDr-CXR, CBIS-DDSM), built in a
  fresh process: the record quarantined naming the tag, the rest built, peak memory under 600 MB;
- ``test_byte_bombs_in_the_folder_reader``: a 16-bit PNG and an RGBA WebP under the pixel limit whose decoded
  bytes exceed the byte limit: quarantined from the header.
"""

from __future__ import annotations

import ast
import json
import re
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

import medr2
from medr2 import BadInput
from medr2.errors import Quarantine
from medr2.images import MAX_DECODED_BYTES, MAX_PIXELS, check_decoded
from tests import bad_inputs as bad, dataset_fixtures as F

SRC = Path(medr2.__file__).parent
EXEMPT = {
    ("imaging/degrade.py", "Image.open"): "decodes the JPEG it has just encoded from an array in memory",
    ("sources/sample/bg_dicom.py", "dcmread"): "reads the bundled sample DICOM files shipped with medr2",
    ("sources/sample/bg_brain.py", "nib.load"): "reads the bundled sample brain volumes shipped with medr2",
}
ALLOWED = {("images.py", "Image.open"), ("sources/dicom.py", "dcmread"), ("sources/nifti_volume.py", "nib.load"),
           ("sources/datasets/_volumes.py", "nib.load")}  # a 4-D volume's channel: check_declared, as nifti_volume


def _decoders(path: Path) -> list[tuple[str, int, str]]:
    rel = str(path.relative_to(SRC))
    out = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        name = f"{ast.unparse(node.func.value)}.{node.func.attr}"
        if name == "Image.open":
            out.append((rel, node.lineno, "Image.open"))
        elif node.func.attr == "dcmread" and not any(k.arg == "stop_before_pixels" for k in node.keywords):
            out.append((rel, node.lineno, "dcmread"))
        elif name in ("nib.load", "nibabel.load"):
            out.append((rel, node.lineno, "nib.load"))
    return out


def test_every_decoder_goes_through_the_gate() -> None:
    found = [d for p in SRC.rglob("*.py") for d in _decoders(p)]
    assert any(k == "Image.open" for _, _, k in found)  # the walk sees the decoders
    bad_uses = [f"{r}:{n}: {k}" for r, n, k in found if (r, k) not in ALLOWED and (r, k) not in EXEMPT]
    assert not bad_uses, "decode through images.open_checked / dicom.read_checked:\n" + "\n".join(bad_uses)
    dicom_reads = [n for r, n, k in found if r == "sources/dicom.py" and k == "dcmread"]
    text = (SRC / "sources" / "dicom.py").read_text("utf-8").splitlines()
    start = next(i for i, line in enumerate(text, 1) if line.startswith("def read_checked("))
    end = next(i for i, line in enumerate(text, 1) if i > start and line.startswith("def "))
    assert dicom_reads and all(start < n < end for n in dicom_reads), dicom_reads


@given(w=st.integers(1, 70_000), h=st.integers(1, 70_000), c=st.integers(1, 4), b=st.sampled_from([1, 2, 4, 8]),
       f=st.integers(1, 50))
def test_gate_property(w: int, h: int, c: int, b: int, f: int) -> None:
    over = w * h > MAX_PIXELS or w * h * c * b * f > MAX_DECODED_BYTES
    try:
        check_decoded(w, h, channels=c, bytes_per_sample=b, frames=f, file="x", field="Rows")
    except BadInput as e:
        assert over and e.file == "x" and e.field == "Rows"
        return
    assert not over


def _first_dcm(root: Path) -> Path:
    return sorted(p for p in root.rglob("*") if p.suffix.lower() in (".dcm", ".dicom"))[0]


DICOM_READERS: dict[str, Callable[[Path], None]] = {"rsna-pneumonia": F.make_rsna, "vindr-cxr": F.make_vindr,
                                                    "cbis-ddsm": F.make_cbis}


@pytest.mark.parametrize("reader", sorted(DICOM_READERS))
def test_dicom_bomb_in_every_dicom_dataset_reader(tmp_path: Path, reader: str) -> None:
    root = tmp_path / "data"
    DICOM_READERS[reader](root)
    victim = _first_dcm(root)
    bad.deflated_dicom_bomb(victim, side=17_000)
    assert victim.stat().st_size < 1_000_000
    code = ("import re, sys; from pathlib import Path; from medr2.builder.pipeline import build_bench; "
            "build_bench(sys.argv[1], Path(sys.argv[2]), seed=0, workers=1); "
            "print(re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1))")
    done = subprocess.run([sys.executable, "-c", code, f"{reader}:{root}", str(tmp_path / "bench")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    peak_mb = int(done.stdout.split()[-1]) / 1024
    entries = Quarantine.read(tmp_path / "bench" / "quarantine.jsonl")
    hit = [e for e in entries if "17000" in e.reason or "refused from the header" in e.reason]
    assert hit and all(e.field for e in hit), entries
    assert peak_mb < 600, f"peak memory {peak_mb:.0f} MB: the bomb was decoded"
    print("RELIABILITY-FIGURES image-gate", json.dumps({"reader": reader, "peak_mb": round(peak_mb)}))


def _png16_header_bomb(path: Path, side: int) -> Path:
    ihdr = struct.pack(">IIBBBBB", side, side, 16, 0, 0, 0, 0)  # 16-bit grey
    idat = zlib.compress(b"\0" * 1024, 9)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bad._chunk(b"IHDR", ihdr) + bad._chunk(b"IDAT", idat)
                     + bad._chunk(b"IEND", b""))
    return path


def _webp_rgba_header_bomb(path: Path, side: int) -> Path:
    """A VP8X WebP header declaring ``side`` x ``side`` pixels with alpha (RGBA)."""
    vp8x = struct.pack("<B3x", 0x10) + (side - 1).to_bytes(3, "little") + (side - 1).to_bytes(3, "little")
    body = b"WEBP" + b"VP8X" + struct.pack("<I", len(vp8x)) + vp8x
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    return path


def test_byte_bombs_in_the_folder_reader(tmp_path: Path) -> None:
    from medr2.builder.pipeline import build_bench
    from tests.interop_fixtures import write_png

    data = tmp_path / "data"
    data.mkdir()
    write_png(data / "good.png", bad.pattern(seed=1))
    side = 12_000  # 144 M pixels: under the pixel limit; 288 MB as 16-bit, 576 MB as RGBA
    assert side * side <= MAX_PIXELS < 2 * side * side * 2
    _png16_header_bomb(data / "deep.png", side)
    _webp_rgba_header_bomb(data / "alpha.webp", side)
    (data / "labels.csv").write_text("image,modality\ngood.png,CT\ndeep.png,CT\nalpha.webp,CT\n")
    build_bench(f"folder:{data}", tmp_path / "bench", seed=0, workers=1)
    q = {e.record: e for e in Quarantine.read(tmp_path / "bench" / "quarantine.jsonl")}
    assert "deep.png" in q and re.search(r"would decode to|exceeds", q["deep.png"].reason), q
    assert "alpha.webp" in q and q["alpha.webp"].field == "image", q
