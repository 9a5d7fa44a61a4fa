"""One text decoder for user data (docs/reliability.md, issue 41 "one input layer"): :mod:`medr2.textfile`.

- ``test_no_other_text_decoding_in_readers``: an ``ast`` walk of every module of ``src/medr2/sources`` and
  ``src/medr2/interop/importers`` (the readers and importers of user data): no ``open()`` in text mode,
  ``read_text`` other than the decoder's, or ``.decode(...)`` of bytes; the bundled sample (package data) and the
  DICOM header's ASCII numbers are named with their reason;
- ``test_decoder_property``: generated text in generated encodings: UTF-8 (with or without a byte-order mark)
  reads back exactly; UTF-16/32 and other bytes that are not UTF-8 are ``BadInput`` naming the file and saying
  what was found, from ``decode``, ``read_text`` and ``open_text`` alike;
- ``test_every_text_file_of_every_reader_in_latin1``: the text files the readers and importers read (label
  tables, split lists, LUTs, question files, task YAMLs, ``mask.txt``), each written in Latin-1 / UTF-16 in a
  real layout and run through ``medr2 build`` / ``medr2 import``: exit 2 (or the record quarantined) with the
  file named and "UTF-8" said, never a traceback.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import medr2
from medr2 import BadInput, textfile
from tests.cli_inproc import run_cli

SRC = Path(medr2.__file__).parent
READERS = [SRC / "sources", SRC / "interop" / "importers"]
EXEMPT = {  # (module, call) -> why
    (SRC / "sources" / "sample" / "bg_brain.py", "read_text"): "reads medr2's own package data, not user data",
    (SRC / "sources" / "dicom.py", "decode"): "an ASCII number of a DICOM header tag, decoded with 'replace'",
}


def _text_reads(path: Path) -> list[tuple[str, int, str]]:
    """(call, line, source) of every text read in ``path`` other than through medr2.textfile."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        if name == "open":
            mode = node.args[0] if isinstance(f, ast.Attribute) and node.args else (
                node.args[1] if len(node.args) > 1 else None)
            mode = next((k.value for k in node.keywords if k.arg == "mode"), mode)
            text_mode = not (isinstance(mode, ast.Constant) and isinstance(mode.value, str) and "b" in mode.value)
            if text_mode:
                found.append(("open", node.lineno, ast.unparse(node)))
        elif name == "read_text" and not (isinstance(f, ast.Name) or (
                isinstance(f, ast.Attribute) and ast.unparse(f.value) in ("textfile", "jsonsafe"))):
            found.append(("read_text", node.lineno, ast.unparse(node)))
        elif name == "decode" and isinstance(f, ast.Attribute) and ast.unparse(f.value) != "textfile":
            found.append(("decode", node.lineno, ast.unparse(node)))
    return found


def test_no_other_text_decoding_in_readers() -> None:
    modules = [p for d in READERS for p in d.rglob("*.py")]
    assert len(modules) > 30
    bad = [f"{p}:{line}: {src}" for p in modules for call, line, src in _text_reads(p) if (p, call) not in EXEMPT]
    assert not bad, "decode user text through medr2.textfile (read_text / open_text / decode):\n" + "\n".join(bad)
    for (p, call), _why in EXEMPT.items():  # each exemption still names a real read
        assert any(c == call for c, _, _ in _text_reads(p)), (p, call)


def test_the_walk_finds_each_forbidden_form(tmp_path: Path) -> None:
    for i, form in enumerate(["open(p)", "open(p, 'r')", "p.open(encoding='latin-1')", "p.read_text('utf-8')",
                              "data.decode('utf-8')", "p.open(mode='rt')"]):
        f = tmp_path / f"m{i}.py"
        f.write_text(form + "\n")
        assert _text_reads(f), form
    ok = tmp_path / "ok.py"
    ok.write_text("p.open('rb')\nopen(p, 'rb')\nread_text(p)\ntextfile.decode(b, file=p)\n")
    assert not _text_reads(ok)


# --- the decoder ------------------------------------------------------------------------------------------

texts = st.text(st.characters(blacklist_categories=["Cs"]), max_size=300)
NOT_UTF8 = ("latin-1", "cp1252", "utf-16", "utf-16-be", "utf-32")


@settings(max_examples=80, deadline=None)
@given(text=texts, encoding=st.sampled_from(("utf-8", "utf-8-sig", *NOT_UTF8)), tmp=st.just(None))
def test_decoder_property(tmp_path_factory: pytest.TempPathFactory, text: str, encoding: str, tmp: None) -> None:
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:
        data = text.encode(encoding, "replace")
    if encoding.startswith("utf-16") and encoding != "utf-16":
        data = b"\xfe\xff" + data  # a byte-order mark, as a text editor writes one
    path = tmp_path_factory.mktemp("t") / "labels [b].csv"
    path.write_bytes(data)
    utf8 = encoding.startswith("utf-8")
    try:
        expected: str | None = data.decode("utf-8-sig") if not data.startswith((b"\xff\xfe", b"\xfe\xff")) else None
    except UnicodeDecodeError:
        expected = None
    for read in (lambda: textfile.decode(data, file=path), lambda: textfile.read_text(path), lambda: _stream(path)):
        if expected is not None:
            assert read() == expected
            assert not utf8 or expected == text
        else:
            with pytest.raises(BadInput) as e:
                read()
            assert e.value.file == str(path) and "UTF-8" in e.value.reason


def _stream(path: Path) -> str:
    with textfile.open_text(path) as f:
        return f.read()


def test_message_says_where_and_what(tmp_path: Path) -> None:
    p = tmp_path / "split.txt"
    p.write_bytes("a.png\nb.png\nœdème.png\n".encode("cp1252"))
    with pytest.raises(BadInput) as e:
        textfile.read_text(p)
    assert "byte 12 (line 3)" in e.value.reason and "Latin-1 / Windows-1252" in e.value.reason
    p.write_bytes("a.png\n".encode("utf-16"))
    with pytest.raises(BadInput, match="UTF-16 byte-order mark"):
        textfile.read_text(p)


# --- every reader's text files in a wrong encoding, through the CLI --------------------------------------

def _nih(root: Path) -> tuple[list[str], Path]:
    from tests import dataset_fixtures as F

    F.make_nih(root)
    victim = root / "test_list.txt"
    return ["build", "--source", f"nih-cxr14:{root}"], victim


def _folder(root: Path) -> tuple[list[str], Path]:
    from tests import bad_inputs as bad

    root.mkdir(parents=True)
    (root / "a.png").write_bytes(bad.png_bytes())
    victim = root / "labels.csv"
    victim.write_text("image,modality,diagnosis\na.png,CT,oedème\n")
    return ["build", "--source", f"folder:{root}"], victim


def _vqarad(root: Path) -> tuple[list[str], Path]:
    root.mkdir(parents=True)
    victim = root / "VQA_RAD Dataset Public.json"
    victim.write_text('[{"qid": 1, "image_name": "é.jpg", "question": "Is it é?", "answer": "yes"}]')
    return ["import", "vqa-rad", str(root)], victim


def _pmc(root: Path) -> tuple[list[str], Path]:
    root.mkdir(parents=True)
    victim = root / "test.csv"
    victim.write_text("Figure_path,Question,Answer,Choice A,Choice B,Choice C,Choice D\n"
                      "é.jpg,Qué?,A,A:x,B:y,C:z,D:w\n")
    return ["import", "pmc-vqa", str(victim)], victim


LAYOUTS = {"folder labels.csv": _folder, "nih-cxr14 split list": _nih, "vqa-rad questions": _vqarad,
           "pmc-vqa csv": _pmc}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("encoding", ["latin-1", "utf-16"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_every_text_file_of_every_reader_in_latin1(tmp_path: Path, layout: str, encoding: str) -> None:
    args, victim = LAYOUTS[layout](tmp_path / "data")
    text = victim.read_text("utf-8")
    victim.write_bytes(("é" + text if encoding == "latin-1" else text).encode(encoding, "replace"))
    code, shown = run_cli(*args, "--out", str(tmp_path / "out"))
    flat = " ".join(shown.split())
    assert code == 2 and str(victim) in flat and "UTF-8" in flat, (layout, encoding, shown[-2000:])
