"""Mapping rules shared by the importers: foreign vocabularies to medr2's, closed "A or B?" questions to
two options, question wording to tasks, and foreign columns kept as metadata.

Kept apart from the readers so the rules are testable one by one; every rule was written against the
real annotation files of the public sets (VQA-RAD, SLAKE, OmniMedVQA, ProbMed, GMAI-MMBench)."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from medr2.tasks.vocab import canonical_modality, canonical_region

# MR weighting / sequence / contrast: a "modality" question about these asks for the sequence (s1.sequence)
SEQUENCE_WORDS = re.compile(r"\b(t1|t2|flair|weight(ed|ing)?|sequences?|dwi|adc|diffusion|contrast|enhanc\w*|"
                            r"gadolinium|stir|type of mri)\b|加权|权重|增强|造影", re.I)
# a question about which body part the whole image shows (s1.region), not where a finding lies
REGION_QUESTION = re.compile(r"\b(which|what) part of the (human )?body\b|\bfrom the aspect of the whole body\b|"
                             r"身体的?哪个部[分位]|整个身体的角度", re.I)
# a yes/no question whether the image shows a body region ("Is this a study of the chest?")
REGION_YES_NO = re.compile(r"\bis this a study (of|about)\b|这张图像是关于", re.I)
_STOP = {"the", "a", "an"}
_BARE = {"no", "not", "none", "neither", "both"}  # not an option on its own


def vocab_fields(modality: str | None, region: str | None) -> dict[str, Any]:
    """Case fields ``modality`` / ``body_region`` in medr2's vocabulary and, in ``meta``, the set's own words
    (``modality_raw`` / ``body_region_raw``) whenever they differ; an unrecognised word is kept as it is."""
    out: dict[str, Any] = {"meta": {}}
    for name, raw, canon in (("modality", modality, canonical_modality), ("body_region", region, canonical_region)):
        raw = (raw or "").strip() or None
        mapped = canon(raw) if raw else None
        out[name] = mapped or raw
        if raw and mapped and mapped != raw:
            out["meta"][f"{name}_raw"] = raw
    return out


def answer_key(s: str) -> str:
    """A comparison key for an answer and an option: lower case, leading article, spaces and hyphens removed."""
    words = re.sub(r"[^\w\s/-]", " ", s.lower()).split()
    while words and words[0] in _STOP:
        words = words[1:]
    return re.sub(r"[\s\-]+", "", " ".join(words))


def or_options(question: str, answer: str) -> list[str] | None:
    """The two options of a closed ``"... X or Y?"`` question, or None when they cannot be read without a
    guess. Candidates: the words after ``or`` (1..n) with the word before ``or`` sharing their tail
    (``left or right kidney`` -> left kidney / right kidney), and equal-length word runs on both sides
    (``small bowel or colon``); the options are kept only when exactly one candidate pair contains the
    answer (ambiguous wordings stay open questions)."""
    q = question.strip()
    if not q.endswith("?") or q.lower().count(" or ") != 1:
        return None
    left_s, _, right_s = q[:-1].partition(" or ")
    if not left_s.strip() or not right_s.strip() or left_s.rstrip().endswith(","):  # "A, B, or C": a list
        return None
    left = left_s.split()
    right = right_s.split()
    article = bool(right) and right[0].lower() in _STOP  # "X or a Y": the right side is a whole phrase
    while right and right[0].lower() in _STOP:
        right = right[1:]
    if not right or "," in right_s:
        return None
    a = answer_key(answer)
    pairs: list[tuple[str, str]] = []
    for k in range(1, (0 if article and len(right) > 1 else 1 if article else len(right)) + 1):
        tail = right[1:k]
        lhs = left[-k:] if tail and [w.lower() for w in left[-len(tail):]] == [w.lower() for w in tail] \
            else [left[-1], *tail]
        while len(lhs) > 1 and lhs[0].lower() in _STOP:
            lhs = lhs[1:]
        pairs.append((" ".join(lhs), " ".join(right[:k])))
    for j in range(2, len(left) + 1):
        lhs = left[-j:]
        if lhs[0].lower() in _STOP or lhs[0].endswith("'s"):
            if j > 2:
                pairs.append((" ".join(lhs[1:]), " ".join(right[:j - 1])))
            break
        pairs.append((" ".join(lhs), " ".join(right[:j])))
    pairs = [(x, y) for x, y in pairs if answer_key(x) not in _BARE and answer_key(y) not in _BARE]
    hits = {(x, y) for x, y in pairs if a in (answer_key(x), answer_key(y)) and answer_key(x) != answer_key(y)}
    if len(hits) != 1:
        return None
    x, y = hits.pop()
    return [x.strip(" ,;:"), y.strip(" ,;:")]


def image_key(data: bytes) -> str:
    """Group key of an embedded image: the SHA-256 of its bytes (rows showing one image share one case)."""
    return hashlib.sha256(data).hexdigest()


def extra_columns(row: dict[str, Any], used: set[str] | frozenset[str] | tuple[str, ...]) -> dict[str, Any]:
    """The row's columns that the importer did not consume (original qid, language, type, ...), kept as
    metadata: scalars as they are, anything else as its string form; empty cells dropped."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if k in used or v is None or (isinstance(v, str) and not v.strip()):
            continue
        if isinstance(v, bytes | bytearray | dict):
            continue  # image payloads
        out[k] = v if isinstance(v, str | int | float | bool) else str(v)
    return out
