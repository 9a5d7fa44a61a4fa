"""Report-text metrics equal the reference libraries (rouge-score, sacrebleu, nltk METEOR)."""

from __future__ import annotations

import numpy as np
import pytest
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU

from medr2.score import textmetrics as tm

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
