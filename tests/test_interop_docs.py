"""docs/bring-your-own-data.md, run: every python and bash block, in order, in an empty folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "bring-your-own-data.md"
_BLOCK = re.compile(r"^```(python|bash)\n(.*?)^```", re.M | re.S)


def test_walkthrough_runs(tmp_path: Path) -> None:
    blocks = _BLOCK.findall(DOC.read_text("utf-8"))
    assert [k for k, _ in blocks].count("bash") >= 3 and [k for k, _ in blocks].count("python") >= 3
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for i, (kind, code) in enumerate(blocks):
        cmd = [sys.executable, "-c", code] if kind == "python" else ["bash", "-euo", "pipefail", "-c", code]
        r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"block {i} ({kind}) failed:\n{code}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}"
    from medr2.bench.format import load_bench

    xr = load_bench(tmp_path / "bench-xr")
    assert {"s1.modality", "s3.lesion_box", "s4.diagnosis"} <= {it.task for it in xr.items}
    assert {c.license for c in xr.cases} == {"CC-BY-4.0"}
    rad = load_bench(tmp_path / "bench-rad")
    assert sorted(it.task for it in rad.items) == ["imported.other", "s1.modality", "s3.abnormal", "s3.location"]
    assert (tmp_path / "export-hf" / "README.md").is_file()
    assert list((tmp_path / "export-tsv").glob("*.tsv")) and list((tmp_path / "export-lmms").glob("*.yaml"))
