"""``InsideRoot`` (one resolved root, string paths) refuses and resolves exactly what the plain
``Path.resolve`` check does: absolute paths, ``..`` and symlinks leading out of the root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import BadInput
from medr2.images import InsideRoot, resolve_inside


def _reference(root: Path, rel: str) -> Path:
    """The check as first written: ``Path.resolve`` of the root and of the joined path."""
    if os.path.isabs(rel):
        raise BadInput("absolute path not allowed", file=rel)
    root_r = root.resolve()
    p = (root_r / rel).resolve()
    if p != root_r and root_r not in p.parents:
        raise BadInput("path escapes the data root", file=rel)
    return p


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("paths")
    root = base / "bench"
    (root / "images" / "sub").mkdir(parents=True)
    (root / "images" / "a.png").write_bytes(b"x")
    (base / "outside").mkdir()
    (root / "images" / "link_out").symlink_to(base / "outside")
    (root / "images" / "link_in").symlink_to(root / "images" / "sub")
    (root / "images" / "file_out.png").symlink_to(base / "outside")
    return root


SEGMENTS = st.sampled_from(["images", "sub", "a.png", "..", ".", "link_out", "link_in", "file_out.png", "nope", ""])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=300)
@given(st.lists(SEGMENTS, min_size=1, max_size=6), st.booleans())
def test_inside_root_matches_the_path_resolve_check(tree: Path, parts: list[str], absolute: bool) -> None:
    rel = ("/" if absolute else "") + "/".join(parts)
    try:
        expected: Path | None = _reference(tree, rel)
    except BadInput:
        expected = None
    inside = InsideRoot(tree)
    if expected is None:
        with pytest.raises(BadInput):
            inside.resolve(rel)
        with pytest.raises(BadInput):
            resolve_inside(tree, rel)
    else:
        assert Path(inside.resolve(rel)) == expected == resolve_inside(tree, rel)


def test_examples(tree: Path) -> None:
    inside = InsideRoot(tree)
    assert inside.resolve("images/a.png") == str(tree.resolve() / "images" / "a.png")
    assert inside.resolve("images/link_in/../a.png") == str(tree.resolve() / "images" / "a.png")
    for bad in ("../x.png", "images/link_out/y.png", "/etc/passwd", "images/../../bench2/x"):
        with pytest.raises(BadInput):
            inside.resolve(bad)


def test_one_inside_root_for_many_paths(tree: Path) -> None:
    """One ``InsideRoot`` resolving many paths (its folders' real paths remembered between them) gives what the
    reference gives for each, whatever came before: plain files, symlinked folders and files, missing files."""
    segments = ["images", "sub", "a.png", "..", ".", "link_out", "link_in", "file_out.png", "nope"]
    rels = [f"{a}/{b}" for a in segments for b in segments] + [f"images/{a}/{b}" for a in segments for b in segments]
    inside = InsideRoot(tree)
    for rel in rels + rels[::-1]:
        try:
            expected: Path | None = _reference(tree, rel)
        except BadInput:
            expected = None
        if expected is None:
            with pytest.raises(BadInput):
                inside.resolve(rel)
        else:
            assert Path(inside.resolve(rel)) == expected, rel
