"""Report-text metrics equal the reference libraries (rouge-score, sacrebleu, nltk METEOR)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU

from medr2.scoring import textmetrics as tm

HYPS = ["Small lesion in the right liver lobe.", "No acute findings.", "There is a large mass in the left lung.",
        "Cardiomegaly with bilateral pleural effusions.", "", "Normal chest radiograph without effusion."]
REFS = ["A small lesion in the right lobe of the liver.", "No acute cardiopulmonary findings.",
        "A mass in the left lung.", "Enlarged heart and bilateral pleural effusions.",
        "Fracture of the left distal radius.", "Normal chest radiograph."]


def test_rouge_equals_rouge_score() -> None:
    ref = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    for h, r in zip(HYPS, REFS, strict=True):
        got = tm.item_text_metrics(h, r)
        want = ref.score(r, h)
        for t in ("rouge1", "rouge2", "rougeL"):
            assert got[f"{t}_p"] == want[t].precision
            assert got[f"{t}_r"] == want[t].recall
            assert got[f"{t}_f"] == want[t].fmeasure


_WORDS = st.sampled_from(["lesion", "lesions", "left", "right", "lung", "liver", "the", "a", "mass", "no", "Mass",
                          "3.5", "cm", "effusion", "effusions", "-", ".", "naïve", "x" * 30])


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, max_size=80), st.lists(_WORDS, max_size=80))
def test_rouge_l_equals_rouge_score_on_any_texts(hyp_words: list[str], ref_words: list[str]) -> None:
    """ROUGE-L's LCS is RapidFuzz's (``textmetrics._rouge_l``); its P/R/F equal rouge-score's own ``_score_lcs``
    (pure-Python LCS table) on any texts: repeated words, stems that merge (lesion/lesions), empty texts, texts
    longer than one 64-bit word of the bit-parallel algorithm."""
    ref = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    h, r = " ".join(hyp_words), " ".join(ref_words)
    got, want = tm._rouge_l(r, h), ref.score(r, h)["rougeL"]
    assert (got.precision, got.recall, got.fmeasure) == (want.precision, want.recall, want.fmeasure)


def test_corpus_bleu_equals_sacrebleu_and_vectorised_form_matches() -> None:
    want = BLEU().corpus_score(HYPS, [REFS]).score
    assert tm.corpus_bleu(HYPS, REFS) == pytest.approx(want, abs=1e-12)
    stats = tm.bleu_stats(HYPS, REFS)
    assert tm.bleu_from_stats(stats.sum(axis=0))[0] == pytest.approx(want, abs=1e-9)
    rng = np.random.default_rng(3)
    for _ in range(30):  # resampled corpora, as the bootstrap builds them
        idx = rng.integers(0, len(HYPS), len(HYPS))
        ref_score = BLEU().corpus_score([HYPS[i] for i in idx], [[REFS[i] for i in idx]]).score
        assert tm.bleu_from_stats(stats[idx].sum(axis=0))[0] == pytest.approx(ref_score, abs=1e-9)


def test_meteor_equals_nltk_with_wordnet() -> None:
    wn, source = tm.wordnet()
    if wn is None:
        pytest.skip(source)
    from nltk.tokenize import wordpunct_tokenize
    from nltk.translate.meteor_score import meteor_score

    for h, r in zip(HYPS, REFS, strict=True):
        want = meteor_score([wordpunct_tokenize(r.lower())], wordpunct_tokenize(h.lower()), wordnet=wn)
        assert tm.meteor(h, r) == pytest.approx(want)
    # WordNet synonyms count (tumour ~ tumor), which exact matching alone would miss
    assert tm.meteor("kidney tumour", "kidney tumor") > tm.meteor("kidney lesion", "kidney tumor")
    assert wn.synsets("tumour")


# -- the memoised paths give the libraries' own numbers --------------------------------------------------

MORE_HYPS = [*HYPS, "Chest pain; thorax clear .", "Enlarged heart. Heart enlarged.", "kidney tumour", "the the the",
             "Naïve lesion — 3.5 cm (left).", "No acute findings."]
MORE_REFS = [*REFS, "Thorax pain, chest clear.", "Cardiomegaly.", "kidney tumor", "", "Lesion of 3.5 cm on the left.",
             "No acute cardiopulmonary findings."]


def _clear_memos() -> None:
    tm._item_text_metrics.cache_clear()
    tm._SEGMENT_STATS.clear()


def test_sentence_bleu_equals_sacrebleu_sentence_score_cold_and_memoised() -> None:
    sentence = BLEU(effective_order=True)
    want = [sentence.sentence_score(h, [r]).score for h, r in zip(MORE_HYPS, MORE_REFS, strict=True)]
    _clear_memos()
    cold = [tm.item_text_metrics(h, r)["bleu4_sentence"] for h, r in zip(MORE_HYPS, MORE_REFS, strict=True)]
    tm._item_text_metrics.cache_clear()  # segment statistics stay memoised: the shared path
    warm = [tm.item_text_metrics(h, r)["bleu4_sentence"] for h, r in zip(MORE_HYPS, MORE_REFS, strict=True)]
    assert cold == want and warm == want


def test_bleu_stats_equal_sacrebleu_per_segment_and_are_shared_with_item_metrics() -> None:
    corpus = BLEU()
    want = []
    for h, r in zip(MORE_HYPS, MORE_REFS, strict=True):
        s = corpus.corpus_score([h], [[r]])  # one segment: its statistics, through the public API
        want.append([s.sys_len, s.ref_len, *s.counts, *s.totals])
    _clear_memos()
    cold = tm.bleu_stats(MORE_HYPS, MORE_REFS)
    assert cold.tolist() == want
    _clear_memos()
    for h, r in zip(MORE_HYPS, MORE_REFS, strict=True):
        tm.item_text_metrics(h, r)
    assert len(tm._SEGMENT_STATS) == len(set(zip(MORE_HYPS, MORE_REFS, strict=True)))
    assert tm.bleu_stats(MORE_HYPS, MORE_REFS).tolist() == want  # read from the item metrics' memo
    assert tm.corpus_bleu(MORE_HYPS, MORE_REFS) == pytest.approx(
        tm.bleu_from_stats(cold.sum(axis=0))[0], abs=1e-9)


def test_rouge_tokens_memoised_without_sharing_lists() -> None:
    ref = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
    tok = tm._rouge_scorer()._tokenizer
    text = "Running lesions, enlarged hearts."
    first = tok.tokenize(text)
    first.append("mutated")
    assert tok.tokenize(text) == ref._tokenizer.tokenize(text)
    for _ in range(2):  # cold, then from the token memo
        for h, r in zip(MORE_HYPS, MORE_REFS, strict=True):
            got, want = tm.item_text_metrics(h, r), ref.score(r, h)
            assert [got[f"{t}_{p}"] for t in tm.ROUGE_TYPES for p in "prf"] == [
                getattr(want[t], f) for t in tm.ROUGE_TYPES for f in ("precision", "recall", "fmeasure")]
        _clear_memos()


def test_meteor_with_memoised_synonyms_equals_nltk_with_the_plain_reader() -> None:
    wn, source = tm.wordnet()
    if wn is None:
        pytest.skip(source)
    from nltk.tokenize import wordpunct_tokenize
    from nltk.translate.meteor_score import meteor_score

    # "chest" has a multi-word lemma (chest_of_drawers) that METEOR must skip, and the synonym "thorax"
    assert any("_" in lemma.name() for s in wn.synsets("chest") for lemma in s.lemmas())
    for _ in range(2):  # cold, then from the memos
        for h, r in zip(MORE_HYPS, MORE_REFS, strict=True):
            want = meteor_score([wordpunct_tokenize(r.lower())], wordpunct_tokenize(h.lower()), wordnet=wn)
            assert tm.meteor(h, r) == want
    assert tm.meteor("thorax pain", "chest pain") > tm.meteor("knee pain", "chest pain")


def test_text_memo_is_bounded() -> None:
    calls: list[str] = []
    memo = tm._TextMemo(lambda t: calls.append(t) or t.upper(), max_size=2)
    assert [memo(t) for t in ("a", "b", "a", "c", "a")] == ["A", "B", "A", "C", "A"]
    assert calls == ["a", "b", "c", "a"]  # full at "c": cleared, so "a" is computed again
    assert len(memo._memo) == 2


def test_wordnet_reader_loads_what_nltks_own_stream_reader_loads() -> None:
    wn, source = tm.wordnet()
    if wn is None or "database at" not in source:  # nltk's own corpus: nltk's own reader, nothing to compare
        pytest.skip(f"not the Princeton database reader: {source}")
    import warnings

    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class Plain(WordNetCorpusReader):  # type: ignore[misc]
        def map_wn(self, version: str = "wordnet") -> None:
            return None

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        plain = Plain(wn.root.path, None)
    assert wn._lexnames == plain._lexnames
    assert dict(wn._lemma_pos_offset_map) == dict(plain._lemma_pos_offset_map)
    assert wn._exception_map == plain._exception_map
    for word in ("chest", "tumour", "geese", "better", "ran", "effusion"):
        assert wn.synsets(word) == plain.synsets(word)


def _synset_names(words: list[str]) -> list[list[str]]:
    wn = tm.wordnet()[0]
    return [sorted(s.name() for s in wn.synsets(w)) for w in words]


def test_forked_processes_read_wordnet_through_their_own_files() -> None:
    """``medr2 score --workers N`` forks its workers after loading WordNet: two of them reading synsets at once
    must each read its own data files (inherited ones share a file offset: one process's seek moves the other's
    read, giving a wrong synset or none). Both read every word as this process does."""
    import multiprocessing as mp

    wn, source = tm.wordnet()
    if wn is None:
        pytest.skip(source)
    wn.synsets("chest")  # the data files are open before the fork
    words = sorted(wn._lemma_pos_offset_map)[::40][:2500]
    want = _synset_names(words)
    wn._synset_offset_cache.clear()  # the workers read the files, not this process's cache
    with mp.get_context("fork").Pool(2) as pool:
        got = pool.map(_synset_names, [words, words[::-1]])
    assert got[0] == want and got[1] == want[::-1]
