"""The prompt of an item of several images (issue 49): every image of ``image_list()`` in order in the first user
turn, the question led by a line naming each image's role; blind mode shows none; one-image prompts are the
snapshots of tests/test_run_prompts.py, unchanged."""

from __future__ import annotations

import pytest

from medr2 import BoxConvention, GenSettings, Item
from medr2.images import ImageStore
from medr2.records import ImageRef
from medr2.run.prompts import MODES, Turn, image_roles_text, render_messages, request_hash
from tests.multi_image_fixtures import make_multi_items


@pytest.fixture(scope="module")
def items(tmp_path_factory: pytest.TempPathFactory) -> list[Item]:
    _, items = make_multi_items(ImageStore(tmp_path_factory.mktemp("m")), 4)
    return items


def test_two_images_in_order_with_their_roles(items: list[Item]) -> None:
    it = next(i for i in items if i.images and i.images[0].role == "prior" and i.variant == "clean")
    msgs = render_messages(it, mode=MODES["independent"], history=(), conv=BoxConvention())
    user = msgs[-1]
    kinds = [p.type for p in user.parts]
    assert kinds == ["image", "image", "text"]
    assert [p.image_sha256 for p in user.parts[:2]] == [r.sha256 for r in it.images]
    text = user.parts[2].text or ""
    assert text.startswith("Image 1: prior study, 90 days before the current one. Image 2: current study.\n")
    assert it.question in text


def test_roles_text() -> None:
    def ref(**kw: object) -> ImageRef:
        return ImageRef(path="images/x.png", sha256="0" * 64, width=4, height=4, **kw)  # type: ignore[arg-type]

    assert image_roles_text([ref(role="view", label="frontal"), ref(role="current", label="lateral")]) == (
        "Image 1: frontal view of the current study. Image 2: current study (lateral).")
    assert image_roles_text([ref(role="current"), ref(role="sequence", label="FLAIR"), ref(role="sequence"),
                             ref(role="prior"), ref(role="prior", interval_days=1, label="{x}")]) == (
        "Image 1: current study. Image 2: FLAIR sequence of the current study. Image 3: another sequence of the "
        "current study. Image 4: prior study, interval to the current one not known. Image 5: prior study ({x}), "
        "1 day before the current one.")


def test_chain_shows_images_once_and_blind_none(items: list[Item]) -> None:
    chain = [i for i in items if i.images and i.chain_id and i.variant == "clean" and i.case_id == "case0"]
    chain.sort(key=lambda i: i.step or 0)
    asked = chain[-1]
    history = [Turn(c, "A") for c in chain[:-1]]
    msgs = render_messages(asked, mode=MODES["chain-gold"], history=history, conv=BoxConvention())
    images = [p for m in msgs for p in m.parts if p.type == "image"]
    assert len(images) == 2 and all(p.type == "image" for p in msgs[0].parts[:2])
    blind = render_messages(asked, mode=MODES["blind"], history=(), conv=BoxConvention())
    assert not [p for m in blind for p in m.parts if p.type == "image"]
    assert "Image 1" not in (blind[-1].parts[-1].text or "")


def test_request_hash_covers_every_image(items: list[Item]) -> None:
    it = next(i for i in items if i.images)
    other = it.model_copy(update={"images": [it.images[0].model_copy(update={"sha256": "f" * 64}), it.images[1]]})
    h = [request_hash("m", GenSettings(), render_messages(x, mode=MODES["independent"], history=(),
                                                          conv=BoxConvention()), item_id=x.item_id, mode="independent")
         for x in (it, other)]
    assert h[0] != h[1]
