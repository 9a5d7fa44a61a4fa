"""scripts/finetune_recipe.py (the GPU recipe) end to end on CPU, with a tiny checkpoint of a real family.

The recipe's GPU target is a real checkpoint such as Qwen2.5-VL-3B-Instruct. Its CPU check here uses the
tiny **gemma3** family with the real Gemma 3 chat template (TRL's copy of the one google/gemma-3 checkpoints
ship), so ``medr2 finetune`` takes exactly the path a real checkpoint takes: TRL recognises the template and
swaps in its training template with ``{% generation %}`` markers. Not qwen2.5-vl: its processor needs
torchvision, which only ``.venv-vision`` has, and that environment has no TRL/PEFT/datasets to fine-tune with;
the tiny families' own templates are not TRL-patchable (``finetune`` refuses them, see docs/finetuning.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _medr2(*args: str) -> None:
    subprocess.run([sys.executable, "-c", "from medr2.cli import main; main()", *args], check=True,
                   capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_recipe_fine_tunes_each_strategy_and_compares_with_flat(tmp_path: Path) -> None:
    from trl import chat_template_utils

    _medr2("build", "--source", "sample", "--out", str(tmp_path / "bench"), "--cases", "12",
           "--variants", "T3,T6,V2", "--workers", "1")
    base = tmp_path / "gemma"
    _medr2("tiny-vlm", "--family", "gemma3", "--out", str(base))
    (base / "chat_template.jinja").write_text(chat_template_utils.gemma3_chat_template, "utf-8")
    out = tmp_path / "recipe"
    cmd = [sys.executable, str(ROOT / "scripts" / "finetune_recipe.py"), "--model", str(base),
           "--bench", str(tmp_path / "bench"), "--out", str(out), "--strategies", "augmented", "--device", "cpu",
           "--epochs", "0.1", "--limit", "3", "--variants", "T3,T6,V2", "--max-new-tokens", "8",
           "--resamples", "50"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    assert res.returncode == 0, res.stderr[-4000:]
    for s in ("flat", "augmented"):  # flat is always trained: it is the reference
        assert (out / "models" / s / "merged" / "config.json").is_file()
        assert (out / "runs" / s / "metrics.json").is_file()
    assert (out / "runs" / "before" / "metrics.json").is_file() and (out / "report" / "index.html").is_file()
    summary = (out / "summary.md").read_text("utf-8")
    assert "## Change after fine-tuning" in summary and "## Each strategy vs flat" in summary
    assert "| augmented | Clean accuracy ↑ |" in summary and "- **augmented** vs flat:" in summary
    # a rerun resumes: nothing is trained again
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    assert again.returncode == 0 and "medr2 finetune" not in again.stdout


def test_recipe_refuses_an_unknown_strategy(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, str(ROOT / "scripts" / "finetune_recipe.py"), "--model", "m", "--bench",
                          "b", "--out", str(tmp_path / "o"), "--strategies", "flat,nope"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert res.returncode == 2 and "unknown strategy 'nope'" in res.stderr
    assert not (tmp_path / "o").exists()
