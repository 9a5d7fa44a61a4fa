"""``human:NAME``: a person as a model (docs/human.md). ``medr2 eval --model human:alice`` runs the ordinary eval
(the same selection, prompts, request hashes, run store, manifest and resume) with this adapter, which puts each
request on the reading page (:mod:`medr2.viewer.reader`) and returns when the person has answered it:

* the page shows the dialogue exactly as a model receives it (the rendered messages, its image) and the answer
  controls of the item's form: the option buttons, yes / no, ticks for several letters, a box drawn on the
  image, a text; and "cannot determine";
* the answer is stored as the model's raw output would be: the option letter, ``yes``/``no``, the letters
  joined by commas, the box written in the adapter's box convention (the preset's, else pixels of the image as
  stored) as the runner writes gold boxes, the text; "cannot determine" is :data:`medr2.records.ABSTAIN_OPTION`,
  which the scorer reads as an abstention (``medr2.scoring.extract.abstain``);
* a stated confidence (single-choice and yes/no items) is stored as the answer's
  :class:`~medr2.records.Confidence` (source ``reader``): the stated probability on the answer chosen, the
  rest spread evenly over the other answers, so ``probs[answer]`` is what the person said;
* the answer's latency is the reading time (from the question first shown to answered).

One question at a time (a person reads one image at once): the adapter streams, so every answer is stored the
moment it is given, and a run stopped at any point resumes with the questions not yet answered. Within each
batch the runner hands over, questions are shown in an order shuffled by the reader's name (the variants of one
case are not read back to back). Model options: ``host`` (default 127.0.0.1: loopback only) and ``port``
(default 8766; 0: a free one).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from medr2.console import say
from medr2.errors import BadInput
from medr2.images import verified_image_path
from medr2.models.base import BoxConvention, Request, Response
from medr2.models.confidence import labels_of
from medr2.models.config import ModelConfig
from medr2.models.presets import box_to_model, format_box
from medr2.records import ABSTAIN_OPTION, Confidence, Item, stable_hash
from medr2.viewer.reader import Closed, Desk, Question, Reply, Turn, make_reader_app
from medr2.viewer.server import DEFAULT_HOST, ViewServer, start

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
DEFAULT_PORT = 8766  # beside medr2 view's 8765
OPTIONS = ("host", "port")
SHA = re.compile(r"[0-9a-f]{64}")


class HumanAdapter:
    """The :class:`~medr2.models.base.Adapter` of a person: see the module doc. ``key`` is ``human:NAME``."""

    def __init__(self, name: str, *, box_convention: BoxConvention | None = None, host: str = DEFAULT_HOST,
                 port: int = DEFAULT_PORT, announce: bool = True) -> None:
        if not NAME.fullmatch(name):
            raise BadInput(f"a reader's name is letters, digits, '.', '_' or '-' (at most 64), not {name[:80]!r}",
                           field="--model")
        self.name = name
        self.key = f"human:{name}"
        self.box_convention = box_convention or BoxConvention()
        self.desk = Desk(name)
        self.server: ViewServer = start(make_reader_app(self.desk, host=host), host=host, port=port)
        self.url = self.server.url
        if announce:
            say(("medr2 reader", "bold"), f" {name}: answer the questions at {self.url} (every answer is stored "
                "at once; stop at any time and rerun the command to go on)", err=True)

    def settings(self) -> dict[str, Any]:
        return {"reader": self.name, "concurrency": 1,
                "order": "each batch shuffled by the reader's name (medr2.viewer.human)"}

    # -- questions and answers ---------------------------------------------------------------------
    def question(self, request: Request, position: int, total: int) -> Question:
        """``request`` as the page shows it (the images verified against their recorded sha256)."""
        item = request.meta.get("item")
        if not isinstance(item, Item):
            raise BadInput("the human reader needs the asked item in Request.meta['item']", record=request.item_id)
        turns: list[Turn] = []
        images: dict[str, Path] = {}
        for m in request.messages:
            if m.role == "system":  # the model's instructions, not the reader's
                continue
            texts: list[str] = []
            shown: list[str] = []
            for p in m.parts:
                if p.type == "text":
                    texts.append(p.text or "")
                    continue
                path = verified_image_path(request.bench_root, p.image, p.image_sha256)
                name = _image_name(p.image_sha256, path)
                images[name] = path
                shown.append(name)
            turns.append(Turn(m.role, "\n".join(texts), tuple(shown)))
        box_image = None
        if item.form == "box":  # on the item's own image (the current study), where it shows several
            box_image = item.image_sha256 if item.image_sha256 in images else next(
                (s for t in reversed(turns) for s in t.images), None)
            if box_image is None or not item.image_width or not item.image_height:
                raise BadInput("a box question needs its image and the image's size", record=item.item_id,
                               field="image")
        return Question(key=request.key, item_id=item.item_id, form=item.form, options=tuple(item.options),
                        turns=tuple(turns), images=images, box_image=box_image, width=item.image_width,
                        height=item.image_height, position=position, total=total, captions=image_captions(item))

    def answer_text(self, item: Item, reply: Reply) -> str:
        """The reply as the raw output of a model (what the scorer reads)."""
        if reply.kind == "abstain":
            return ABSTAIN_OPTION
        if reply.kind == "choice" and reply.choice is not None:
            return reply.choice
        if reply.kind == "letters":
            return ", ".join(reply.letters)
        if reply.kind == "box" and reply.box is not None and item.image_width and item.image_height:
            box = box_to_model(reply.box, item.image_width, item.image_height, self.box_convention)
            return format_box(box, self.box_convention.space)
        if reply.kind == "text" and reply.text is not None:
            return reply.text
        raise BadInput(f"a {reply.kind} reply to a {item.form} item", record=item.item_id, field="action")

    @staticmethod
    def confidence(item: Item, reply: Reply) -> Confidence | None:
        """The stated confidence on the answer chosen, the rest spread evenly over the item's other answers."""
        labels = labels_of(item)
        if reply.confidence is None or reply.choice is None or reply.choice not in labels:
            return None
        rest = (1.0 - reply.confidence) / (len(labels) - 1) if len(labels) > 1 else 0.0
        return Confidence(source="reader", probs={lab: reply.confidence if lab == reply.choice else rest
                                                  for lab in labels})

    def stream(self, requests: Sequence[Request]) -> Iterator[tuple[int, Response]]:
        """Ask each request on the page, one at a time, in the reader's order; yield each answer as given."""
        order = sorted(range(len(requests)), key=lambda i: stable_hash(["reader-order", self.name, requests[i].key]))
        for position, i in enumerate(order, 1):
            request = requests[i]
            try:
                question = self.question(request, position, len(order))
            except BadInput as e:  # this request cannot be shown: its error, the sitting goes on
                yield i, Response("error", error=str(e), attempts=1)
                continue
            try:
                reply, seconds = self.desk.ask(question)
            except Closed:
                return
            item = request.meta["item"]
            yield i, Response("ok", text=self.answer_text(item, reply), latency_s=round(seconds, 3),
                              confidence=self.confidence(item, reply))

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out: list[Response] = [Response("error", error="not answered (the reading page was closed)", attempts=0)
                               for _ in requests]
        for i, response in self.stream(requests):
            out[i] = response
        return out

    def close(self) -> None:
        self.desk.finish()
        self.server.stop()


def image_captions(item: Item) -> dict[str, str]:
    """sha256 -> "Image k: its role" of each image of an item of several (what the prompt's roles line says of
    it); none for one image."""
    from medr2.run.prompts import image_role

    refs = item.image_list()
    if len(refs) < 2:
        return {}
    return {r.sha256: f"Image {k}: {image_role(r)}" for k, r in enumerate(refs, start=1)}


def _image_name(sha: str | None, path: Path) -> str:
    """The name the page asks an image by: its recorded sha256 (else its file's name, else a hash of its path)."""
    if sha and SHA.fullmatch(sha):
        return sha
    return path.stem if SHA.fullmatch(path.stem) else hashlib.sha256(str(path).encode("utf-8")).hexdigest()


def make_human_adapter(name: str, opts: ModelConfig) -> HumanAdapter:
    """The ``human`` prefix's factory: model options ``host`` and ``port``; the preset's box convention, if any."""
    unknown = sorted(set(opts.extra) - set(OPTIONS))
    if unknown:
        raise BadInput(f"unknown model option(s) {', '.join(unknown)} for human:; known: {', '.join(OPTIONS)}",
                       field="--model-option")
    host = opts.extra.get("host", DEFAULT_HOST)
    port = opts.extra.get("port", DEFAULT_PORT)
    if not isinstance(host, str) or not host:
        raise BadInput("must be an address to listen on", field="--model-option host")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise BadInput("must be a port number from 0 to 65535 (0: a free one)", field="--model-option port")
    preset = opts.resolve_preset()
    return HumanAdapter(name, box_convention=preset.box if preset is not None else None, host=host, port=port)
