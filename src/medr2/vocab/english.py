"""English for generated text: plurals, articles and agreement, for task templates and report templates alike.

Foundation: imports nothing of medr2 (the sources' report templates and the tasks' templates share it).
"""

from __future__ import annotations

import re

_PLURAL_HEADS = frozenset({"foci", "nuclei", "emboli", "calculi", "metastases", "vertebrae", "drusen", "bullae",
                           "data", "criteria", "ventricles", "exudates", "microaneurysms"})
_SINGULAR_S = ("ss", "us", "is", "ys", "itis", "osis", "ics")  # abscess, focus, metastasis, ..., "lens"? no
_SINGULAR_WORDS = frozenset({"lens", "pancreas", "thorax", "pelvis", "uterus", "iris", "mucus", "series",
                             "diabetes", "herpes", "measles", "facies", "ascites", "aphthous"})
_IRREGULAR_PLURAL = {"nucleus": "nuclei", "focus": "foci", "vertebra": "vertebrae", "calculus": "calculi",
                     "embolus": "emboli", "bulla": "bullae", "metastasis": "metastases", "diagnosis": "diagnoses",
                     "stenosis": "stenoses", "thrombus": "thrombi", "bronchus": "bronchi", "sulcus": "sulci",
                     "gyrus": "gyri", "villus": "villi", "alveolus": "alveoli", "index": "indices",
                     "vertex": "vertices", "apex": "apices", "cortex": "cortices", "tooth": "teeth", "foot": "feet",
                     "lymph node": "lymph nodes", "ovum": "ova", "datum": "data", "criterion": "criteria",
                     "cell": "cells", "ileum": "ilea"}


def _head_word(phrase: str) -> str:
    """The head noun of a noun phrase: the last word before a prepositional tail ("foci of uptake")."""
    words = phrase.strip().split()
    for i, w in enumerate(words):
        if i and w.lower() in ("of", "in", "with", "on", "at", "from", "within"):
            return words[i - 1]
    return words[-1] if words else ""


def is_plural(phrase: str) -> bool:
    """Whether a label reads as a plural noun phrase ("multiple nodules", "cotton-wool spots")."""
    text = phrase.strip().lower()
    if not text:
        return False
    first = text.split()[0]
    if first in ("multiple", "several", "numerous", "bilateral", "two", "three", "many") and " " in text:
        head = _head_word(text).lower()
        return head not in _SINGULAR_WORDS and not head.endswith(("ss", "us", "is"))
    head = _head_word(text).lower().strip("(),.")
    if head in _PLURAL_HEADS:
        return True
    if head in _SINGULAR_WORDS or len(head) < 3 or not head.isalpha():
        return False
    return head.endswith("s") and not head.endswith(_SINGULAR_S)


def plural(noun: str) -> str:
    """The plural of a (singular) noun phrase: "nucleus" -> "nuclei", "vertebra" -> "vertebrae"."""
    text = noun.strip()
    if is_plural(text):
        return text
    tail = re.search(r"\s(of|in|with|on|at|from|within)\s", text)
    if tail:  # "focus of uptake" -> "foci of uptake"
        return plural(text[:tail.start()]) + text[tail.start():]
    low = text.lower()
    for sing, pl in _IRREGULAR_PLURAL.items():
        if low == sing or low.endswith(" " + sing):
            return text[: len(text) - len(sing)] + pl
    if re.search(r"[^aeiou]y$", low):
        return text[:-1] + "ies"
    if re.search(r"(s|x|z|ch|sh)$", low):
        return text + "es"
    return text + "s"


# words spelled with a vowel letter that start with a consonant sound, and the reverse ("an hour")
_CONSONANT_SOUND = re.compile(r"^(uni|use|usa|usu|ure|uri|uro|ute|uti|eu|ewe|one\b|once|ubiq|uvu|u-)", re.IGNORECASE)
_VOWEL_SOUND_H = re.compile(r"^(hour|honest|honou?r|heir|herb\b)", re.IGNORECASE)
_WORD_ACRONYMS = frozenset({"FLAIR", "STIR", "SPECT", "NASH", "LASIK", "DWI"})  # pronounced as words
_VOWEL_LETTERS = "AEFHILMNORSX"  # letters whose names start with a vowel sound (an MRI, an X-ray, an SVC)


def article(phrase: str) -> str:
    """``a`` or ``an`` for the word that starts ``phrase``, chosen by its sound, not its letter:
    "an infarct", "a uniform ...", "an MRI", "an X-ray", "a CT", "an 8 mm ...", "a FLAIR image"."""
    text = phrase.strip()
    if not text:
        return "a"
    word = re.split(r"[\s,;:()]+", text)[0]
    bare = re.sub(r"[^A-Za-z0-9]", "", word)
    if not bare:
        return "a"
    if bare[0].isdigit():
        num = re.match(r"\d+", bare)
        digits = num.group(0) if num else bare
        return "an" if digits.startswith("8") or digits in ("11", "18") or (
            len(digits) in (5, 6) and digits[:2] in ("11", "18")) else "a"
    letters = re.match(r"[A-Za-z]+", word.lstrip("\"'("))
    head = letters.group(0) if letters else bare
    is_acronym = (len(head) >= 2 and head.isupper() and head not in _WORD_ACRONYMS) or (
        len(head) == 1 and (len(word) == 1 or word[1] in "-/"))
    if is_acronym:
        return "an" if head[0].upper() in _VOWEL_LETTERS else "a"
    if head.upper() in _WORD_ACRONYMS:
        return "a"
    if head[0].lower() in "aeiou":
        return "a" if _CONSONANT_SOUND.match(head) else "an"
    return "an" if _VOWEL_SOUND_H.match(head) else "a"


def indefinite(phrase: str) -> str:
    """The phrase with an indefinite article, or none for a plural ("an infarct", "multiple nodules")."""
    text = phrase.strip()
    return text if is_plural(text) else f"{article(text)} {text}"


def be(phrase: str) -> str:
    """``is`` or ``are`` agreeing with ``phrase``."""
    return "are" if is_plural(phrase) else "is"


# how a lesion attribute's value is said of the lesion (issue 40 kind 5): a side is where the lesion lies, "midline"
# no side at all, a quadrant and an image side are parts of the image, never "the image side ... left" or "the
# midline side"; {v}: the value. An attribute not listed here is no reader's word (an internal class key) or a
# descriptor read as an adjective ("hyperintense", "well-defined", "oval").
WHERE_WORDS: dict[str, str] = {
    "laterality": "on the {v} side",
    "image_side": "on the {v} side of the image",
    "quadrant": "in the {v} quadrant of the image",
    "location": "in the {v}",
    "organ": "in the {v}",
}
MIDLINE_WORDS: dict[str, str] = {"laterality": "in the midline", "image_side": "in the middle of the image"}
NOT_SAID = frozenset({"lesion_class"})  # attributes whose values are internal keys, never asked as text
DESCRIPTORS = frozenset({"intensity", "margin", "shape"})  # values read as adjectives of the lesion


def attribute_words(key: str, value: str) -> str | None:
    """The predicate saying attribute ``key`` = ``value`` of a lesion ("on the left side", "in the midline", "in the
    upper left quadrant of the image", "hyperintense"), to follow "is" / "are"; None for an attribute no reader
    would be asked in words (:data:`NOT_SAID`, an unknown key)."""
    if key in NOT_SAID or not value:
        return None
    if value == "midline" and key in MIDLINE_WORDS:
        return MIDLINE_WORDS[key]
    if key in WHERE_WORDS:
        return WHERE_WORDS[key].format(v=value)
    if key in DESCRIPTORS:
        return value
    if key == "texture":
        return {"rim": "walled by a thick rim"}.get(value, value)
    return None
