"""File names that are not UTF-8 (issue 41, kind 2): an archive written on another system holds names whose bytes
are not UTF-8 (Latin-1 "café.dcm"). Python reads each undecodable byte as a lone surrogate (PEP 383), which no
UTF-8 writer (quarantine.jsonl, Parquet, the console) accepts. One gate: every reader opens its files through
``DataRoot.path``, which refuses such a name as the record's problem (quarantined, the name shown with ``\\xNN``
escapes by ``medr2.errors.os_text``), and ``BadInput`` and the quarantine writer show every name that way.

For every file-reading source, one of its image files is renamed to a generated non-UTF-8 name: the build ends
normally (or with a ``BadInput``), never with another exception; the renamed file (or the record it was looked up
for) is named in the quarantine; no
bench file holds anything but UTF-8."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import BadInput
from medr2.builder.pipeline import build_bench
from medr2.errors import is_text, os_text
from tests import dataset_fixtures as F
from tests.interop_fixtures import make_dicom_folder, make_nifti_folder

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".dcm", ".dicom", ".nii", ".gz")


def _make_folder(root: Path) -> None:
    import numpy as np

    from tests.interop_fixtures import write_png

    root.mkdir(parents=True)
    (root / "medr2.json").write_text('{"defaults": {"modality": "X-ray"}}')
    for k, label in enumerate(("normal", "pneumonia", "effusion")):
        for j in range(2):
            write_png(root / label / f"img{j}.png", (np.arange(64 * 64).reshape(64, 64) * (k + j + 1) % 251)
                      .astype("uint8"))


SOURCES: dict[str, Callable[[Path], object]] = {
    "folder": _make_folder, "dicom": make_dicom_folder, "nifti": make_nifti_folder,
    "nih-cxr14": F.make_nih, "rsna-pneumonia": F.make_rsna, "vindr-cxr": F.make_vindr, "msd": F.make_msd_brain,
    "brats": F.make_brats, "isic": F.make_isic, "kvasir-seg": F.make_kvasir, "cbis-ddsm": F.make_cbis,
    "iu-xray": F.make_iu,
}

# bytes that are not UTF-8: a Latin-1 letter, a lone continuation byte, an overlong form, 0xFF
NOT_UTF8 = st.lists(st.sampled_from([b"\xe9", b"\x80", b"\xc0\xaf", b"\xff", b"\xfe"]), min_size=1, max_size=3)


def _images(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name.lower().endswith(IMAGE_SUFFIXES))


def test_os_text_keeps_text_and_escapes_bytes() -> None:
    assert os_text("café.dcm") == "café.dcm"
    name = os.fsdecode(b"caf\xe9_\xff.dcm")
    assert not is_text(name) and os_text(name) == "caf\\xe9_\\xff.dcm"
    assert os_text("a\ud800b") == "a\ufffdb"
    assert str(BadInput("bad", file=name, record=name)) == "file=caf\\xe9_\\xff.dcm, record=caf\\xe9_\\xff.dcm: bad"


@pytest.mark.parametrize("source", sorted(SOURCES))
@settings(max_examples=1, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pick=st.integers(0, 1 << 16), junk=NOT_UTF8, where=st.sampled_from(["name", "folder"]))
def test_a_name_that_is_not_utf8_is_quarantined_by_every_reader(source: str, pick: int, junk: list[bytes],
                                                                 where: str, tmp_path_factory: pytest.TempPathFactory
                                                                 ) -> None:
    tmp = tmp_path_factory.mktemp(source.replace("-", "_"))
    data = tmp / "data"
    SOURCES[source](data)
    images = _images(data)
    victim = images[pick % len(images)]
    bad = b"".join(junk)
    if where == "folder":  # the file moves into a new folder whose name is not UTF-8
        target = os.path.join(os.fsencode(victim.parent), b"d" + bad, os.fsencode(victim.name))
        os.makedirs(os.path.dirname(target))
    else:
        target = os.path.join(os.fsencode(victim.parent), bad + os.fsencode(victim.name))
    os.rename(os.fsencode(victim), target)
    out = tmp / "bench"
    try:
        build_bench(f"{source}:{data}", out, seed=0, workers=1)
    except BadInput as e:  # nothing usable left (a one-case fixture) or a reader-level file: named, escaped
        assert is_text(str(e)), e
        return
    for f in out.rglob("*"):
        if f.is_file() and f.suffix in (".json", ".jsonl", ".parquet"):
            if f.suffix == ".parquet":
                import pyarrow.parquet as pq

                pq.read_table(f)  # strings in Parquet are UTF-8 by construction: a surrogate cannot be written
            else:
                f.read_bytes().decode("utf-8")
    quarantine = (out / "quarantine.jsonl").read_text("utf-8") if (out / "quarantine.jsonl").exists() else ""
    shown = os_text(os.fsdecode(bad)).replace("\\", "\\\\")  # as JSON writes the escape's backslash
    # named escaped (a reader that lists files), or by its name or stem (a reader that looks it up from a table)
    assert shown in quarantine or victim.name.split(".")[0] in quarantine, (source, victim, quarantine[:2000])
