"""Portable messages -> the role/content chat dictionaries that in-process engines take (transformers'
chat templates, vLLM's ``LLM.chat``); each adapter says how an image part is written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from medr2.images import verified_image_path
from medr2.models.base import Message


def to_chat(messages: Sequence[Message], bench_root: Path, image_part: Callable[[Path], dict[str, Any]],
            check_hash: bool = True) -> list[dict[str, Any]]:
    """Text parts as ``{"type": "text"}``; each image part's verified file (inside the bench, hash checked)
    handed to ``image_part``, whose content dictionary takes the image's place."""
    conv: list[dict[str, Any]] = []
    for m in messages:
        content: list[dict[str, Any]] = []
        for part in m.parts:
            if part.type == "text":
                content.append({"type": "text", "text": part.text or ""})
            else:
                content.append(image_part(verified_image_path(Path(bench_root), part.image, part.image_sha256,
                                                              check=check_hash)))
        conv.append({"role": m.role, "content": content})
    return conv
