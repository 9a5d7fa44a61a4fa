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

import functools
import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from medr2 import jsonsafe
from medr2.models.base import Message
from medr2.records import canonical_json
from medr2.registry import Registry
from medr2.renders import image_path
from medr2.train.export import Example

IMAGE_PLACEHOLDER = "<image>"
IMAGES_REMEMBERED = 256  # images an export remembers having copied (or read) lately


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


class _ImageCopier:
    """Copies (hard-links where possible) each image an example uses to ``out/images``, once: an image is
    linked when its file is not there yet (the last :data:`IMAGES_REMEMBERED` images are not looked up again),
    so memory does not grow with the images of the export."""

    def __init__(self, bench_root: Path, out: Path, home: Path | None = None) -> None:
        self.bench_root = bench_root
        self.dest_dir = out / "images"
        self.dest_dir.mkdir(parents=True, exist_ok=True)
        self.abs_dir = ((home or out) / "images").resolve()  # where the copies are published
        self._copy = functools.lru_cache(maxsize=IMAGES_REMEMBERED)(self._copy_once)

    def _copy_once(self, rel: str) -> None:
        src = image_path(self.bench_root, rel)  # a deferred render is made first
        dest = self.dest_dir / Path(rel).name
        if not dest.exists():
            try:
                os.link(src, dest)
            except OSError:
                shutil.copyfile(src, dest)

    def add(self, ex: Example) -> None:
        for rel in ex.images:
            self._copy(rel)

    def absolute(self, rel: str) -> str:
        """The copy's absolute path (the folder resolved once: the copy itself is a plain file)."""
        return str(self.abs_dir / Path(rel).name)


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Format:
    name: str
    dpo: bool
    # (examples, bench_root, out, dataset name, dpo=..., home=...) -> files written
    writer: Callable[..., list[str]]

    def write(self, examples: Iterable[Example], bench_root: Path, out: Path, name: str, *,
              home: Path | None = None) -> list[str]:
        """Write ``examples`` (iterated once, in order: any iterator) into ``out``; the files written. ``home``:
        the folder the files will be published in (``medr2 export`` writes them into a staging folder first),
        where an absolute path written into them points; ``out`` when not given."""
        return self.writer(examples, bench_root, out, name, dpo=self.dpo, home=home or out)


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
def _llamafactory(examples: Iterable[Example], bench_root: Path, out: Path, name: str, dpo: bool,
                  home: Path) -> list[str]:
    images = _ImageCopier(bench_root, out, home)
    data_file = f"{name}.json"
    with (out / data_file).open("w", encoding="utf-8") as f:  # json.dumps(records, indent=1), a record at a time
        f.write("[")
        sep = "\n"
        for ex in examples:
            images.add(ex)
            rec: dict[str, Any] = {"messages": openai_messages(ex, drop_last=dpo),
                                   "images": [f"images/{Path(r).name}" for r in ex.images]}
            if dpo:
                rec["chosen"] = {"role": "assistant", "content": _flat_text(ex.messages[-1])}
                rec["rejected"] = {"role": "assistant", "content": ex.rejected}
            text = json.dumps(rec, ensure_ascii=False, indent=1)
            f.write(sep + " " + text.replace("\n", "\n "))
            sep = ",\n"
        f.write("\n]\n" if sep != "\n" else "]\n")
    columns = {"messages": "messages", "images": "images"}
    entry: dict[str, Any] = {"file_name": data_file, "formatting": "sharegpt"}
    if dpo:
        entry["ranking"] = True
        columns |= {"chosen": "chosen", "rejected": "rejected"}
    entry |= {"columns": columns, "tags": LLAMAFACTORY_TAGS}
    info_path = out / "dataset_info.json"
    info = jsonsafe.load_object(info_path) if info_path.is_file() else {}
    info[name] = entry
    _write_json(info_path, info)
    return [data_file, "dataset_info.json", "images/"]


@register_format("swift")
def _swift(examples: Iterable[Example], bench_root: Path, out: Path, name: str, dpo: bool,
           home: Path) -> list[str]:
    images = _ImageCopier(bench_root, out, home)
    data_file = f"{name}.jsonl"
    with (out / data_file).open("w", encoding="utf-8") as f:
        for ex in examples:
            images.add(ex)
            rec: dict[str, Any] = {"messages": openai_messages(ex), "images": [images.absolute(r) for r in ex.images]}
            if dpo:
                rec["rejected_response"] = ex.rejected
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return [data_file, "images/"]


def hf_rows(examples: Iterable[Example], bench_root: Path, *, dpo: bool,
            image_bytes: Callable[[Path], bytes] | None = None, rejected: bool = True) -> Iterator[dict[str, Any]]:
    """Rows of the TRL dataset, one per example: image bytes embedded (``{"bytes", "path"}`` for
    ``datasets.Image``); ``image_bytes(path)`` gives each image's bytes (default: the file as it is), read
    again only when it is not among the last :data:`IMAGES_REMEMBERED` images used."""
    read = image_bytes or (lambda p: p.read_bytes())

    @functools.lru_cache(maxsize=IMAGES_REMEMBERED)
    def bytes_of(rel: str) -> bytes:
        return read(image_path(bench_root, rel))

    for ex in examples:
        images = [{"bytes": bytes_of(r), "path": Path(r).name} for r in ex.images]
        row: dict[str, Any] = {"images": images, "item_ids": list(ex.item_ids), "stage": ex.stage}
        if dpo:
            row["prompt"] = structured_messages(ex.messages[:-1])
            row["chosen"] = structured_messages(ex.messages[-1:])
            if rejected:
                row["rejected"] = [{"role": "assistant", "content": [{"type": "text", "text": ex.rejected}]}]
        else:
            row["messages"] = structured_messages(ex.messages)
        yield row


def hf_records(examples: Iterable[Example], bench_root: Path, *, dpo: bool,
               image_bytes: Callable[[Path], bytes] | None = None, rejected: bool = True) -> list[dict[str, Any]]:
    """:func:`hf_rows` as a list (small datasets and tests)."""
    return list(hf_rows(examples, bench_root, dpo=dpo, image_bytes=image_bytes, rejected=rejected))


def hashed(examples: Iterable[Example], digest: Any) -> Iterator[Example]:
    """``examples``, each fed to ``digest`` (a hashlib object) as it passes: what it says (item ids, stage,
    images, messages, rejected answer). The fingerprint of a streamed dataset."""
    for ex in examples:
        digest.update(canonical_json({"item_ids": ex.item_ids, "stage": ex.stage, "images": ex.images,
                                      "messages": structured_messages(ex.messages),
                                      "rejected": ex.rejected}).encode("utf-8"))
        yield ex


def hf_dataset(rows: Iterable[dict[str, Any]], features: Any, cache: Path, fingerprint: Callable[[], str]) -> Any:
    """A ``datasets.Dataset`` of ``rows`` written a row at a time to the Arrow file ``cache`` (what
    ``Dataset.from_generator`` writes, without its builder) and memory-mapped from there: the rows are never
    held together. ``fingerprint()``, called once the rows are written, is the dataset's (``datasets`` would
    hash the file's path and time)."""
    from datasets import Dataset, DatasetInfo
    from datasets.arrow_writer import ArrowWriter
    from datasets.table import MemoryMappedTable

    cache.parent.mkdir(parents=True, exist_ok=True)
    writer = ArrowWriter(features=features, path=str(cache))
    try:
        for row in rows:
            writer.write(features.encode_example(row))
        writer.finalize()
    finally:
        writer.close()
    return Dataset(MemoryMappedTable.from_file(str(cache)), info=DatasetInfo(features=features),
                   fingerprint=fingerprint())


def hf_features(dpo: bool, decode: bool = True) -> Any:
    """The ``hf`` formats' columns. ``decode=False``: the images are read back as their stored bytes (the same
    Arrow storage; fine-tuning decodes them itself, once per image)."""
    from datasets import Features, Image, List, Value

    part = {"type": Value("string"), "text": Value("string")}
    conv = List({"role": Value("string"), "content": List(part)})
    cols: dict[str, Any] = {"images": List(Image(decode=decode)), "item_ids": List(Value("string")),
                            "stage": Value("int32")}
    if dpo:
        cols |= {"prompt": conv, "chosen": conv, "rejected": conv}
    else:
        cols["messages"] = conv
    return Features(cols)


def save_streamed(ds: Any, cache: Path, out: Path) -> None:
    """``ds.save_to_disk(out)`` for a dataset memory-mapped from the Arrow file ``cache``, reading the file a
    record batch at a time instead of through the map (whose pages would count as the process's memory): the
    same shards (``datasets``' size estimate, ``MAX_SHARD_SIZE`` and contiguous split), the same record batches
    and values, the same ``state.json`` and ``dataset_info.json``. The shards' bytes can differ from
    ``save_to_disk``'s of an in-memory table in one way: ``datasets`` writes each batch as a slice of that
    table, and Arrow pads a sliced buffer to 64 bytes with what follows it (the next rows' strings); here each
    batch is its own table, padded with zeros."""
    import pyarrow.ipc as ipc
    from datasets import config
    from datasets.arrow_writer import ArrowWriter, get_writer_batch_size_from_data_size
    from datasets.utils.py_utils import asdict, convert_file_size_to_int

    n = len(ds)
    nbytes = ds._estimate_nbytes()
    n_shards = max(1, min(n, int(nbytes / convert_file_size_to_int(config.MAX_SHARD_SIZE)) + 1))
    batch = config.DEFAULT_MAX_BATCH_SIZE
    if nbytes > 0:
        batch = min(batch, get_writer_batch_size_from_data_size(n, nbytes))
    div, mod = divmod(n, n_shards)
    pool = pa.default_memory_pool()
    names = [f"data-{i:05d}-of-{n_shards:05d}.arrow" for i in range(n_shards)]
    out.mkdir(parents=True, exist_ok=True)
    with pa.OSFile(str(cache)) as f:
        reader = ipc.open_stream(f)
        held: list[pa.RecordBatch] = []

        def take(k: int) -> pa.Table:
            """The next ``k`` rows of the file."""
            nonlocal held
            while sum(b.num_rows for b in held) < k:
                held.append(reader.read_next_batch())
            table = pa.Table.from_batches(held).combine_chunks()
            held = [b for b in table.slice(k).to_batches() if b.num_rows]
            return table.slice(0, k)

        for i, name in enumerate(names):
            left = div + (1 if i < mod else 0)
            writer = ArrowWriter(features=ds.features, path=str(out / name), embed_local_files=True)
            step = writer.writer_batch_size or batch  # the writer's record batches (100 rows for images)
            try:
                while left:  # a window of ``batch`` rows, as save_to_disk hands it over, a record batch at a time
                    in_window = min(batch, left)
                    while in_window:
                        table = take(min(step, in_window))
                        writer.write_table(table)
                        in_window -= table.num_rows
                        left -= table.num_rows
                        del table
                        pool.release_unused()  # images are large: their memory goes back before the next batch
                writer.finalize()
            finally:
                writer.close()
    state = {key: ds.__dict__[key] for key in ("_fingerprint", "_format_columns", "_format_kwargs", "_format_type",
                                               "_output_all_columns")}
    state["_split"] = str(ds.split) if ds.split is not None else None
    state["_data_files"] = [{"filename": name} for name in names]
    with (out / config.DATASET_STATE_JSON_FILENAME).open("w", encoding="utf-8") as fh:
        json.dump(state, fh, indent=2, sort_keys=True)
    info = asdict(ds.info)
    with (out / config.DATASET_INFO_FILENAME).open("w", encoding="utf-8") as fh:
        json.dump({key: info[key] for key in sorted(info)}, fh, indent=2)


@register_format("hf")
def _hf(examples: Iterable[Example], bench_root: Path, out: Path, name: str, dpo: bool, home: Path) -> list[str]:
    """The rows written to an Arrow file in ``out/.medr2-hf`` (removed after), then saved as
    ``save_to_disk`` saves them (:func:`save_streamed`); ``state.json``'s ``_fingerprint`` is a hash of what
    the rows say (item ids, stage, messages, image names), not ``datasets``' hash of an in-memory table."""
    digest = hashlib.sha256()
    tmp = out / ".medr2-hf"
    try:
        rows = hf_rows(hashed(examples, digest), bench_root, dpo=dpo)
        cache = tmp / "rows.arrow"
        ds = hf_dataset(rows, hf_features(dpo), cache, lambda: digest.hexdigest()[:16])
        save_streamed(ds, cache, out)
        del ds
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return ["dataset_info.json", "state.json", "data-*.arrow"]
