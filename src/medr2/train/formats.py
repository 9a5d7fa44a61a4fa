"""File formats of the SFT / DPO exports (registry ``FORMATS``).

- ``llamafactory`` / ``llamafactory-dpo``: LLaMA-Factory ShareGPT JSON in its OpenAI-style layout
  (``messages`` with role/content, ``images``), ``<image>`` placeholders, plus the ``dataset_info.json``
  entry (``formatting: sharegpt``, ``columns``, ``tags``; ``ranking: true`` with ``chosen``/``rejected``).
  Image paths are relative to the export folder (LLaMA-Factory's ``dataset_dir``/``media_dir``).
- ``swift`` / ``swift-dpo``: ms-swift standard JSONL (``messages``, ``images`` as absolute paths,
  ``<image>`` placeholders; DPO adds ``rejected_response``).
- ``hf`` / ``hf-dpo``: a Hugging Face dataset (``save_to_disk``) with embedded images, in TRL's layout:
  ``messages`` + ``images`` for SFTTrainer, ``prompt``/``chosen``/``rejected`` + ``images`` for DPOTrainer.

Every export folder also gets ``medr2_export.json`` (what went in, what was skipped and why) and
``medr2_export_ids.jsonl`` (the item ids behind each record, for leakage audits).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medr2.models.base import Message
from medr2.registry import Registry
from medr2.renders import image_path
from medr2.train.export import Example

IMAGE_PLACEHOLDER = "<image>"


def _flat_text(msg: Message) -> str:
    """A message as one string with ``<image>`` where each image goes."""
    return "".join(IMAGE_PLACEHOLDER if p.type == "image" else (p.text or "") for p in msg.parts)


def openai_messages(ex: Example, *, drop_last: bool = False) -> list[dict[str, str]]:
    msgs = ex.messages[:-1] if drop_last else ex.messages
    return [{"role": m.role, "content": _flat_text(m)} for m in msgs]


def structured_messages(msgs: Sequence[Message]) -> list[dict[str, Any]]:
    """TRL / transformers conversational layout: content is a list of typed parts."""
    out = []
    for m in msgs:
        parts = [{"type": "image", "text": None} if p.type == "image" else {"type": "text", "text": p.text or ""}
                 for p in m.parts]
        out.append({"role": m.role, "content": parts})
    return out


def _copy_images(examples: Sequence[Example], bench_root: Path, out: Path) -> dict[str, Path]:
    """Copy (hard-link where possible) each used image to ``out/images``; return rel -> new path."""
    dest_dir = out / "images"
    dest_dir.mkdir(parents=True, exist_ok=True)
    done: dict[str, Path] = {}
    for ex in examples:
        for rel in ex.images:
            if rel in done:
                continue
            src = image_path(bench_root, rel)  # a deferred render is made first
            dest = dest_dir / Path(rel).name
            if not dest.exists():
                try:
                    os.link(src, dest)
                except OSError:
                    shutil.copyfile(src, dest)
            done[rel] = dest
    return done


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Format:
    name: str
    dpo: bool
    writer: Callable[..., list[str]]  # (examples, bench_root, out, dataset name, dpo=...) -> files written

    def write(self, examples: Sequence[Example], bench_root: Path, out: Path, name: str) -> list[str]:
        return self.writer(examples, bench_root, out, name, dpo=self.dpo)


FORMATS: Registry[Format] = Registry("export format", field="format")


def register_format(name: str) -> Callable[[Callable[..., list[str]]], Callable[..., list[str]]]:
    """Register a writer as ``NAME`` (SFT) and ``NAME-dpo`` (DPO pairs); it receives ``dpo=``."""
    def deco(fn: Callable[..., list[str]]) -> Callable[..., list[str]]:
        FORMATS.register(name, Format(name, False, fn))
        FORMATS.register(f"{name}-dpo", Format(f"{name}-dpo", True, fn))
        return fn

    return deco


LLAMAFACTORY_TAGS = {"role_tag": "role", "content_tag": "content", "user_tag": "user",
                     "assistant_tag": "assistant", "system_tag": "system"}


@register_format("llamafactory")
def _llamafactory(examples: Sequence[Example], bench_root: Path, out: Path, name: str, dpo: bool) -> list[str]:
    _copy_images(examples, bench_root, out)
    records = []
    for ex in examples:
        rec: dict[str, Any] = {"messages": openai_messages(ex, drop_last=dpo),
                               "images": [f"images/{Path(r).name}" for r in ex.images]}
        if dpo:
            rec["chosen"] = {"role": "assistant", "content": _flat_text(ex.messages[-1])}
            rec["rejected"] = {"role": "assistant", "content": ex.rejected}
        records.append(rec)
    data_file = f"{name}.json"
    _write_json(out / data_file, records)
    columns = {"messages": "messages", "images": "images"}
    entry: dict[str, Any] = {"file_name": data_file, "formatting": "sharegpt"}
    if dpo:
        entry["ranking"] = True
        columns |= {"chosen": "chosen", "rejected": "rejected"}
    entry |= {"columns": columns, "tags": LLAMAFACTORY_TAGS}
    info_path = out / "dataset_info.json"
    info = json.loads(info_path.read_text("utf-8")) if info_path.is_file() else {}
    info[name] = entry
    _write_json(info_path, info)
    return [data_file, "dataset_info.json", "images/"]



@register_format("swift")
def _swift(examples: Sequence[Example], bench_root: Path, out: Path, name: str, dpo: bool) -> list[str]:
    paths = _copy_images(examples, bench_root, out)
    data_file = f"{name}.jsonl"
    with (out / data_file).open("w", encoding="utf-8") as f:
        for ex in examples:
            rec: dict[str, Any] = {"messages": openai_messages(ex),
                                   "images": [str(paths[r].resolve()) for r in ex.images]}
            if dpo:
                rec["rejected_response"] = ex.rejected
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return [data_file, "images/"]



def hf_records(examples: Sequence[Example], bench_root: Path, *, dpo: bool,
               image_bytes: Callable[[Path], bytes] | None = None, rejected: bool = True) -> list[dict[str, Any]]:
    """Rows of the TRL dataset: image bytes embedded (``{"bytes", "path"}`` for ``datasets.Image``);
    ``image_bytes(path)`` gives each image's bytes (default: the file as it is), once per image."""
    read = image_bytes or (lambda p: p.read_bytes())
    cache: dict[str, bytes] = {}
    rows = []
    for ex in examples:
        for r in ex.images:
            if r not in cache:
                cache[r] = read(image_path(bench_root, r))
        images = [{"bytes": cache[r], "path": Path(r).name} for r in ex.images]
        row: dict[str, Any] = {"images": images, "item_ids": list(ex.item_ids), "stage": ex.stage}
        if dpo:
            row["prompt"] = structured_messages(ex.messages[:-1])
            row["chosen"] = structured_messages(ex.messages[-1:])
            if rejected:
                row["rejected"] = [{"role": "assistant", "content": [{"type": "text", "text": ex.rejected}]}]
        else:
            row["messages"] = structured_messages(ex.messages)
        rows.append(row)
    return rows


def hf_features(dpo: bool) -> Any:
    from datasets import Features, Image, List, Value

    part = {"type": Value("string"), "text": Value("string")}
    conv = List({"role": Value("string"), "content": List(part)})
    cols: dict[str, Any] = {"images": List(Image()), "item_ids": List(Value("string")), "stage": Value("int32")}
    if dpo:
        cols |= {"prompt": conv, "chosen": conv, "rejected": conv}
    else:
        cols["messages"] = conv
    return Features(cols)


@register_format("hf")
def _hf(examples: Sequence[Example], bench_root: Path, out: Path, name: str, dpo: bool) -> list[str]:
    from datasets import Dataset

    ds = Dataset.from_list(hf_records(examples, bench_root, dpo=dpo), features=hf_features(dpo))
    ds.save_to_disk(str(out))
    return ["dataset_info.json", "state.json", "data-*.arrow"]

