"""What the model saw: the stored rendered messages become the card's dialogue exactly (text verbatim up to
the cut, images shown or marked absent); blind mode has no image."""

from __future__ import annotations

from pathlib import Path

from medr2 import BoxConvention
from medr2.bench import load_bench
from medr2.reporting.browser import DIALOGUE_CHARS, Thumbnails, _model_saw_image, dialogue
from medr2.run.prompts import BLIND_NOTE, Turn, get_mode, messages_json, render_messages
from tests.report_fixtures import build_bench


def test_dialogue_of_chain_and_blind(tmp_path: Path) -> None:
    build_bench(tmp_path)
    bench = load_bench(tmp_path, validate=False)
    items = [it for it in bench.items if it.case_id == "case0" and it.variant == "clean"]
    first, last = min(items, key=lambda i: i.stage), max(items, key=lambda i: i.stage)
    long_answer = "<b>A</b> " + "x" * 3000
    chain = messages_json(render_messages(last, mode=get_mode("chain-own"), history=[Turn(first, long_answer)],
                                          conv=BoxConvention()))
    thumbs = Thumbnails()
    msgs = dialogue(chain, thumbs, tmp_path)
    assert msgs is not None and [m["role"] for m in msgs] == ["user", "assistant", "user"]
    assert msgs[0]["parts"][0] == {"t": "image", "img": 0, "sha": last.image_sha256[:16]}
    assert msgs[1]["parts"][0]["x"].startswith("<b>A</b> xxx")  # verbatim (the page shows it as text)
    assert f"[cut: {len(long_answer) - DIALOGUE_CHARS:,} more characters]" in msgs[1]["parts"][0]["x"]
    assert _model_saw_image("chain-own", msgs, last)

    blind = dialogue(messages_json(render_messages(last, mode=get_mode("blind"), history=[], conv=BoxConvention())),
                     thumbs, tmp_path)
    assert blind is not None and all(p["t"] == "text" for m in blind for p in m["parts"])
    assert blind[0]["parts"][0]["x"].startswith(BLIND_NOTE)
    assert not _model_saw_image("blind", blind, last)
    # no stored request (older runs): from the mode
    assert dialogue(None, thumbs, tmp_path) is None
    assert not _model_saw_image("blind", None, last) and _model_saw_image("independent", None, last)
    # an image part whose file is not in the bench is marked, not dropped
    missing = dialogue([{"role": "user", "parts": [{"type": "image", "image": "images/none.png", "sha256": "ab"}]}],
                       thumbs, tmp_path)
    assert missing == [{"role": "user", "parts": [{"t": "image", "img": -1, "sha": "ab"}]}]
