"""Every tiny family vLLM runs takes items of two images (issue 49) through ``vllm:`` as through ``hf:``: the same
answers and prompt token counts (each family's processor and chat template place and encode both images the same
way in both stacks). Slow: one .venv-vllm process (tests/multi_image_vllm_families.py), about 3 minutes on 2 cores."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from medr2.models.families import FAMILIES, VLLM_UNSUPPORTED
from tests.servers import VLLM_ENV, VLLM_VENV, vllm_python

pytestmark = [pytest.mark.slow, pytest.mark.vllm_families]


def test_every_vllm_family_answers_two_image_items_as_hf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not vllm_python().exists():
        pytest.skip(f"no vLLM environment at {VLLM_VENV}: run `bash scripts/setup_vllm.sh` (.ci/run does)")
    script = Path(__file__).with_name("multi_image_vllm_families.py")
    p = subprocess.run([str(vllm_python()), str(script), str(tmp_path)], capture_output=True, text=True, timeout=1800,
                       env={**os.environ, **VLLM_ENV, "VLLM_ENABLE_V1_MULTIPROCESSING": "0"})
    (tmp_path / "families.log").write_text(p.stdout + p.stderr, "utf-8")
    assert p.returncode == 0, p.stderr[-4000:]
    rows = {r["family"]: r for r in map(json.loads, (line for line in p.stdout.splitlines() if line.startswith("{")))}
    assert set(rows) == set(FAMILIES) - set(VLLM_UNSUPPORTED), p.stderr[-4000:]
    for name, r in rows.items():
        assert "error" not in r, (name, r["error"])
        assert r["two_image"] > 0 and r["all_ok"] and r["same_items"], r
        assert r["same_answers"] == r["same_prompt_tokens"] == r["items"], r
    with capsys.disabled():
        for r in rows.values():
            print(f"\n[families two images] {r['family']}: {r['items']} items ({r['two_image']} of two images), "
                  f"vllm: = hf: in answers and prompt tokens, {r['seconds']}s", end="")
        print()
