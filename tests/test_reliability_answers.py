"""One answer budget (docs/reliability.md, issue 41 item 7): what scoring, the rationale audit and the report
read of a stored answer goes through ``run.store._windowed`` (at most ``ANSWER_READ_CHARS`` characters, its
first and last halves, cut by SQLite before Python holds the text); the store itself keeps the answer whole.

``test_every_bulk_read_is_bounded`` calls each reading method of the store (the bulk reads of scoring, the
report's row, a ``chain-own`` history's row, every prediction for the confidence reader) on
a store holding generated answers far over the budget, and checks each text it returns against the budget and
the answer's two ends; ``test_every_store_method_is_classified`` enumerates the public methods of ``Store``:
each is such a read, or returns no answer text, or is ``get`` (the one whole read, named with its reason), so a
new reading method is bounded or named the day it is added."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import Prediction
from medr2.run.store import ANSWER_READ_CHARS, Store

READS = {  # method -> the texts it returns of the answer (and reasoning)
    "counted_rows": lambda s: [t for b in s.counted_rows() for t in (*b.raw, *b.reasoning)],
    "get_item": lambda s: [s.get_item("i", "m").prediction.raw, s.get_item("i", "m").prediction.reasoning],
    "iter_predictions": lambda s: [t for sp in s.iter_predictions(with_request=True)
                                   for t in (sp.prediction.raw, sp.prediction.reasoning)],
}
WHOLE = {"get": "one answer by its request hash, whole: the store keeps every answer whole (and tests read it)"}
NO_TEXT = {  # public methods returning no answer text
    "close", "copy_from", "count", "counts_by_mode", "has_confidences", "item_rows", "modes_per_item", "put",
    "put_many", "statuses",
}


def test_every_store_method_is_classified() -> None:
    import inspect

    public = {n for n, _ in inspect.getmembers(Store, inspect.isfunction) if not n.startswith("_")}
    assert public == set(READS) | set(WHOLE) | NO_TEXT, public ^ (set(READS) | set(WHOLE) | NO_TEXT)


# ends of an answer: any text, and often one with NULs (SQLite's character functions stop at the first NUL)
ENDS = st.one_of(st.text(min_size=1, max_size=20), st.text(alphabet="\x00a\u00e9", min_size=1, max_size=6))


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(extra=st.integers(1, 3 * ANSWER_READ_CHARS), head=ENDS, tail=ENDS)
def test_every_bulk_read_is_bounded(tmp_path_factory, extra: int, head: str, tail: str) -> None:  # type: ignore[no-untyped-def]
    raw = head + "x" * (ANSWER_READ_CHARS + extra) + tail
    d = tmp_path_factory.mktemp("answers")
    with Store.open(d, write=True) as s:
        s.put(Prediction(model_key="k", item_id="i", mode="m", request_hash="h", raw=raw, status="ok",
                         reasoning=raw))
        assert s.get("h").prediction.raw == raw  # stored and read back whole where asked for
        for name, read in READS.items():
            texts = read(s)
            assert texts, name
            for t in texts:
                assert len(t) <= ANSWER_READ_CHARS + 2, name
                assert t.startswith(head) and t.endswith(tail), name


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(chars=st.integers(ANSWER_READ_CHARS // 2, ANSWER_READ_CHARS - 40), head=ENDS, tail=ENDS)
def test_an_answer_within_the_budget_is_read_whole(tmp_path_factory, chars: int, head: str, tail: str) -> None:  # type: ignore[no-untyped-def]
    """Within the budget in characters, whatever its bytes (two-byte characters) or NULs: every read gives it
    whole, never cut as a long one (SQLite's ``length`` stops at a NUL; bytes are not characters)."""
    raw = head + "\u00e9" * chars + tail
    d = tmp_path_factory.mktemp("answers")
    with Store.open(d, write=True) as s:
        s.put(Prediction(model_key="k", item_id="i", mode="m", request_hash="h", raw=raw, status="ok",
                         reasoning=raw))
        for name, read in READS.items():
            assert all(t == raw for t in read(s)), name


def test_the_store_keeps_short_answers_as_they_are(tmp_path: Path) -> None:
    with Store.open(tmp_path, write=True) as s:
        s.put(Prediction(model_key="k", item_id="i", mode="m", request_hash="h", raw="B. X-ray", status="ok"))
        assert [b.raw for b in s.counted_rows()] == [("B. X-ray",)]
        assert s.get_item("i", "m", window=True).prediction.raw == "B. X-ray"
