"""Report-text metrics with the reference libraries: ROUGE-1/2/L (rouge-score), BLEU-4 (sacrebleu),
METEOR (nltk, with an explicitly passed WordNet 3.0 reader).

WordNet: nltk's own ``wordnet`` corpus is used when installed; otherwise the Princeton WordNet 3.0
database of the Debian package ``wordnet-base`` (``/usr/share/wordnet``) is opened with nltk's
``WordNetCorpusReader`` (same database as nltk's corpus). Without either, METEOR is not computed
(reported as null with the reason) — never approximated.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")
BLEU_ORDER = 4
# memo bounds (a full memo is cleared): segment statistics are kept for the corpus BLEU of the same run;
# tokens per text (answers repeat); a reference's n-grams only briefly (the scorer scores a reference's rows
# together); synonyms per word
_SEGMENTS_MAX = 1 << 17
_TOKENS_MAX = 1 << 14
_REFERENCES_MAX = 1 << 10
_WORDS_MAX = 1 << 16
WORDNET_DIRS = (Path("/usr/share/wordnet"), Path("/usr/local/share/wordnet"), Path("/usr/share/wordnet/dict"))
_DICT_FILES = ("data.noun", "data.verb", "data.adj", "data.adv", "index.noun", "index.verb", "index.adj",
               "index.adv", "noun.exc", "verb.exc", "adj.exc", "adv.exc")
# lexnames(5WN): the 45 lexicographer file names and their syntactic category (1 n, 2 v, 3 a, 4 r).
_LEXNAMES = (
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1), ("noun.animal", 1),
    ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1), ("noun.cognition", 1),
    ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1), ("noun.food", 1), ("noun.group", 1),
    ("noun.location", 1), ("noun.motive", 1), ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1),
    ("noun.plant", 1), ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1), ("verb.body", 2),
    ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2), ("verb.competition", 2),
    ("verb.consumption", 2), ("verb.contact", 2), ("verb.creation", 2), ("verb.emotion", 2), ("verb.motion", 2),
    ("verb.perception", 2), ("verb.possession", 2), ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2),
    ("adj.ppl", 3),
)


class _CachedStemmer:
    """nltk's Porter stemmer (the one rouge-score and METEOR use by default) with a per-word memo:
    stemming is a pure function of the word and reports repeat a small vocabulary."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self._stemmer = PorterStemmer()
        self._memo: dict[str, str] = {}

    def stem(self, word: str) -> str:
        out = self._memo.get(word)
        if out is None:
            out = self._memo[word] = self._stemmer.stem(word)
        return out


class _Lemma:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class _LemmaNames:
    """Stands for a word's synsets in METEOR, which reads only ``synset.lemmas()`` and ``lemma.name()``
    and takes the *set* of the names without "_": those distinct names of all the word's synsets, read once."""

    __slots__ = ("_lemmas",)

    def __init__(self, lemmas: Sequence[_Lemma]) -> None:
        self._lemmas = tuple(lemmas)

    def lemmas(self) -> tuple[_Lemma, ...]:
        return self._lemmas


class _CachedSynsets:
    """A WordNet reader for METEOR whose ``synsets(word)`` (the only call METEOR makes) is memoised per
    word, with the lemma names of all its synsets gathered once (METEOR uses only that set of names)."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self._memo: dict[str, tuple[_LemmaNames, ...]] = {}
        self._lemmas: dict[str, _Lemma] = {}  # one stand-in per name, shared by the words that have it

    def synsets(self, word: str) -> tuple[_LemmaNames, ...]:
        out = self._memo.get(word)
        if out is None:
            names = dict.fromkeys(name for synset in self._reader.synsets(word) for lemma in synset.lemmas()
                                  if "_" not in (name := lemma.name()))
            if len(self._memo) >= _WORDS_MAX:
                self._memo.clear()
            lemmas = [self._lemmas.get(n) or self._lemmas.setdefault(n, _Lemma(n)) for n in names]
            out = self._memo[word] = (_LemmaNames(lemmas),) if lemmas else ()
        return out


class _TextMemo:
    """A bounded memo of a pure function of one text (cleared when full)."""

    def __init__(self, fn: Callable[[str], Any], max_size: int) -> None:
        self._fn = fn
        self._max = max_size
        self._memo: dict[str, Any] = {}

    def __call__(self, text: str) -> Any:
        out = self._memo.get(text)
        if out is None:
            if len(self._memo) >= self._max:
                self._memo.clear()
            out = self._memo[text] = self._fn(text)
        return out


@functools.cache
def _stemmer() -> _CachedStemmer:
    return _CachedStemmer()


@functools.cache
def _rouge_tokenizer() -> Any:
    """rouge-score's default tokenizer with stemming, using the memoised Porter stemmer; tokens are memoised per
    text (a reference is scored once per mode, answers repeat). Shared by ROUGE-1/2 (rouge-score) and ROUGE-L
    (:func:`_rouge_l`)."""
    from rouge_score import tokenizers

    class _Tokenizer(tokenizers.DefaultTokenizer):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__(use_stemmer=False)
            self._stemmer = _stemmer()
            self._memo = _TextMemo(lambda text: tuple(super(_Tokenizer, self).tokenize(text)), _TOKENS_MAX)

        def tokenize(self, text: str) -> list[str]:
            return list(self._memo(text))

    return _Tokenizer()


@functools.cache
def _rouge_scorer() -> Any:
    from rouge_score import rouge_scorer

    # ROUGE-L is computed by :func:`_rouge_l` from the same tokens (rouge-score's LCS table is pure Python)
    return rouge_scorer.RougeScorer([t for t in ROUGE_TYPES if t != "rougeL"], use_stemmer=True,
                                    tokenizer=_rouge_tokenizer())


def _rouge_l(target: str, prediction: str) -> Any:
    """rouge-score's ROUGE-L score (its ``_score_lcs``: the same tokens, formula and ``Score``), with the length of
    the longest common subsequence computed by RapidFuzz's bit-parallel ``LCSseq`` instead of rouge-score's
    pure-Python O(n·m) table (measured: docs/benchmarks.md). The tokens are numbered per pair first, so RapidFuzz
    compares small integers: equal ids exactly where the tokens are equal (no hashing of the strings)."""
    from rapidfuzz.distance import LCSseq
    from rouge_score import scoring

    tokenizer = _rouge_tokenizer()
    ref, can = tokenizer.tokenize(target), tokenizer.tokenize(prediction)
    if not ref or not can:
        return scoring.Score(precision=0, recall=0, fmeasure=0)
    ids: dict[str, int] = {}
    lcs = LCSseq.similarity([ids.setdefault(t, len(ids)) for t in ref], [ids.setdefault(t, len(ids)) for t in can])
    precision, recall = lcs / len(can), lcs / len(ref)
    return scoring.Score(precision=precision, recall=recall, fmeasure=scoring.fmeasure(precision, recall))


@functools.cache
def _sentence_bleu() -> Any:
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(max_ngram_order=BLEU_ORDER, effective_order=True)


@functools.cache
def _bleu() -> Any:
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(max_ngram_order=BLEU_ORDER)


def _debian_wordnet_view(src: Path) -> Path:
    """An nltk-readable copy of a Princeton dict folder (its files + the lexnames list).

    nltk refuses files that resolve outside its corpus root, so the files are copied, not linked."""
    view = Path(tempfile.gettempdir()) / f"medr2-nltk-wordnet-{os.getuid()}" / "corpora" / "wordnet"
    view.mkdir(parents=True, exist_ok=True)
    for name in _DICT_FILES:
        dst = view / name
        if not dst.exists() or dst.stat().st_size != (src / name).stat().st_size:
            tmp = dst.with_suffix(f".tmp{os.getpid()}")
            shutil.copyfile(src / name, tmp)
            tmp.replace(dst)
    lex = view / "lexnames"
    if not lex.exists():
        text = "".join(f"{i:02d}\t{name}\t{cat}\n" for i, (name, cat) in enumerate(_LEXNAMES))
        tmp = lex.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(text, "ascii")
        tmp.replace(lex)
    return view


# files nltk's WordNet reader reads from start to end while it loads (the data files it seeks in stay nltk's)
_SEQUENTIAL_FILES = frozenset({"lexnames", *(f"index.{p}" for p in ("noun", "verb", "adj", "adv")),
                               *(f"{p}.exc" for p in ("noun", "verb", "adj", "adv"))})


def _reader_class() -> Any:
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class WordNet30Reader(WordNetCorpusReader):  # type: ignore[misc]
        """The Princeton 3.0 database itself: no mapping to 3.0 (only used for OMW data) is needed. The
        files read line by line at load are opened as plain UTF-8 text files (the same lines as nltk's
        seekable stream reader gives, which is slow line by line)."""

        def map_wn(self, version: str = "wordnet") -> None:
            return None

        def open(self, file: str) -> Any:
            if file in _SEQUENTIAL_FILES:
                return open(self._root.join(file).path, encoding=self._ENCODING, newline="")  # noqa: SIM115
            return super().open(file)

    return WordNet30Reader


@functools.cache
def wordnet() -> tuple[Any | None, str]:
    """(WordNet reader or None, where it came from / why it is missing)."""
    import nltk

    try:
        nltk.data.find("corpora/wordnet")
        from nltk.corpus import wordnet as wn

        wn.ensure_loaded()
        return wn, "nltk_data corpora/wordnet"
    except LookupError:
        pass
    for d in WORDNET_DIRS:
        if all((d / f).is_file() for f in _DICT_FILES):
            view = _debian_wordnet_view(d)
            root = str(view.parent.parent)
            if root not in nltk.data.path:
                nltk.data.path.append(root)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # "multilingual functions are not available"
                reader = _reader_class()(str(view), None)
            return reader, f"WordNet 3.0 database at {d}"
    return None, ("no WordNet data: install nltk's wordnet corpus or the Debian package wordnet-base "
                  "(WordNet 3.0 at /usr/share/wordnet)")


def _wordpunct(text: str) -> tuple[str, ...]:
    from nltk.tokenize import wordpunct_tokenize

    return tuple(wordpunct_tokenize(text.lower()))


_METEOR_TOKENS = _TextMemo(_wordpunct, _TOKENS_MAX)


def _tokens(text: str) -> list[str]:
    return list(_METEOR_TOKENS(text))


def meteor(hypothesis: str, reference: str) -> float | None:
    wn, _ = wordnet()
    if wn is None:
        return None
    from nltk.translate.meteor_score import meteor_score

    return float(meteor_score([_tokens(reference)], _tokens(hypothesis), stemmer=_stemmer(),
                              wordnet=_cached_wordnet()))


def _bleu_reference(reference: str) -> dict[str, Any]:
    """sacrebleu's n-gram counts and length of one reference segment (what it caches per reference)."""
    b = _bleu()
    return b._extract_reference_info([b._preprocess_segment(reference)])  # type: ignore[no-any-return]


_BLEU_REFERENCES = _TextMemo(_bleu_reference, _REFERENCES_MAX)
_SEGMENT_STATS: dict[tuple[str, str], tuple[int, ...]] = {}


def segment_stats(hypothesis: str, reference: str) -> tuple[int, ...]:
    """sacrebleu's BLEU statistics of one (hypothesis, reference) segment, [sys_len, ref_len, correct_1..4,
    total_1..4], exactly as its ``_extract_corpus_statistics`` computes them; memoised per pair, so the
    sentence BLEU of an item and the corpus BLEU of a report set share one computation."""
    key = (hypothesis, reference)
    out = _SEGMENT_STATS.get(key)
    if out is None:
        b = _bleu()
        out = tuple(b._compute_segment_statistics(b._preprocess_segment(hypothesis), _BLEU_REFERENCES(reference)))
        if len(_SEGMENT_STATS) >= _SEGMENTS_MAX:
            _SEGMENT_STATS.clear()
        _SEGMENT_STATS[key] = out
    return out


@functools.cache
def _cached_wordnet() -> _CachedSynsets:
    return _CachedSynsets(wordnet()[0])


def _forget_open_files() -> None:
    """In a process just forked (``medr2 score --workers N``): drop the WordNet reader's open data files. They
    were inherited from the parent with its file offsets, which the parent and every sibling share: nltk's reader
    seeks and reads a line per synset, so two processes reading at once read each other's lines (a wrong synset,
    or none). The reader opens its own files at its next lookup. Nothing is loaded here."""
    if not wordnet.cache_info().currsize:
        return
    files = getattr(wordnet()[0], "_data_file_map", None)
    if isinstance(files, dict):
        files.clear()  # this process's copies of the descriptors close with them; the parent's stay open


os.register_at_fork(after_in_child=_forget_open_files)


def load_models() -> None:
    """Load what the report metrics use (ROUGE's scorer, BLEU, WordNet, METEOR's module) now rather than at the
    first report: ``medr2 score --workers N`` loads them once before it forks its workers, which then share
    them instead of each loading its own. The same objects either way: no metric changes."""
    _rouge_scorer()
    _sentence_bleu()
    _bleu()
    _cached_wordnet()
    from nltk.tokenize import wordpunct_tokenize  # noqa: F401
    from nltk.translate.meteor_score import meteor_score  # noqa: F401


def item_text_metrics(hypothesis: str, reference: str) -> dict[str, float]:
    """Per-item ROUGE P/R/F1, sentence BLEU-4 and METEOR (when WordNet is available)."""
    return dict(_item_text_metrics(hypothesis, reference))


@functools.lru_cache(maxsize=1 << 16)
def _item_text_metrics(hypothesis: str, reference: str) -> dict[str, float]:
    out: dict[str, float] = {}
    scores = _rouge_scorer().score(reference, hypothesis)
    scores["rougeL"] = _rouge_l(reference, hypothesis)
    for t in ROUGE_TYPES:
        s = scores[t]
        out[f"{t}_p"], out[f"{t}_r"], out[f"{t}_f"] = float(s.precision), float(s.recall), float(s.fmeasure)
    # sacrebleu's sentence_score: its aggregate of this one segment's statistics (effective order)
    out["bleu4_sentence"] = float(_sentence_bleu()._aggregate_and_compute([list(segment_stats(hypothesis,
                                                                                              reference))]).score)
    m = meteor(hypothesis, reference)
    if m is not None:
        out["meteor"] = m
    return out


def bleu_stats(hypotheses: Sequence[str], references: Sequence[str]) -> np.ndarray:
    """sacrebleu's sufficient statistics per segment: [sys_len, ref_len, correct_1..4, total_1..4]."""
    if not hypotheses:
        return np.zeros((0, 2 + 2 * BLEU_ORDER))
    stats = [segment_stats(h, r) for h, r in zip(hypotheses, references, strict=True)]
    return np.asarray(stats, dtype=np.float64)


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[str]) -> float:
    """Corpus BLEU-4 exactly as sacrebleu computes it (13a tokenizer, exp smoothing)."""
    return float(_bleu().corpus_score(list(hypotheses), [list(references)]).score)


def bleu_from_stats(stats: np.ndarray) -> np.ndarray:
    """Vectorised corpus BLEU from summed statistics (rows: resamples), sacrebleu's formula."""
    stats = np.atleast_2d(stats).astype(np.float64)
    sys_len, ref_len = stats[:, 0], stats[:, 1]
    correct, total = stats[:, 2: 2 + BLEU_ORDER], stats[:, 2 + BLEU_ORDER:]
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(sys_len < ref_len, np.where(sys_len > 0, np.exp(1 - ref_len / np.maximum(sys_len, 1e-300)), 0.0),
                      1.0)
        zero = correct == 0
        k = np.cumsum(zero, axis=1)
        prec = np.where(zero, 100.0 / (np.power(2.0, k) * total), 100.0 * correct / total)
        stopped = np.cumsum(total == 0, axis=1) > 0
        prec = np.where(stopped, 0.0, prec)
        logp = np.where(prec > 0, np.log(np.where(prec > 0, prec, 1.0)), -9999999999.0)
    score = bp * np.exp(logp.mean(axis=1))
    return np.where(correct.sum(axis=1) > 0, score, 0.0)
