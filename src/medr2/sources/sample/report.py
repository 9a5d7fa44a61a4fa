"""Findings + impression reports generated from the structured findings of a sample case: the one report template
of the sample.

Written as a radiologist signs it: agreement with the number of lesions ("the lesion" only where there is one,
"the lesions" and a count otherwise: :func:`medr2.vocab.english.plural`), an article chosen by sound ("an 18 mm"),
words of the image's modality (signal on MRI, density on CT, ...), and no phrase said twice: a descriptor
already in the finding's label ("increased uptake" of a "focus of increased uptake") or a region already in the
view ("whole-body ... of the whole body") is left out (:func:`_new_words`).
"""

from __future__ import annotations

import re
from typing import Any

from medr2.vocab import normalise
from medr2.vocab.english import article, is_plural, plural

# what a lesion's contents are called in each modality ("a central core of different signal" is MRI only)
CONTENT_WORDS = {"MRI": "signal", "CT": "density", "X-ray": "density", "ultrasound": "echogenicity",
                 "nuclear medicine": "uptake"}
QUALITY_WORDS = {"reject": "non-diagnostic"}  # the quality label as a report says it
TEXTURE_SENTENCES = {  # {s}: "The lesion" / "The lesions"; {v_be}/{v_have}: agreeing verbs; {content}: CONTENT_WORDS
    "heterogeneous": "{s} {v_be} heterogeneous.",
    "rim": "{s} {v_have} a thick rim around a central core of different {content}.",
    "calcified": "Central calcification is present.",
}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", normalise(text))


def _new_words(part: str, *said: str) -> bool:
    """Whether ``part`` says something not already said: its words do not all occur, in order, in one of ``said``."""
    w = _words(part)
    for s in said:
        t = _words(s)
        if w and any(t[i:i + len(w)] == w for i in range(len(t) - len(w) + 1)):
            return False
    return True


def _where(attrs: dict[str, Any]) -> str:
    return str(attrs.get("location") or attrs.get("organ") or "image")


def _bigrams(text: str) -> set[tuple[str, str]]:
    w = _words(text)
    return set(zip(w, w[1:], strict=False))


def _in_place(where: str, label: str) -> str:
    """``in the left mid zone``; where the place repeats a phrase of the label ("left extra-axial space" of an
    "extra-axial mass"), only its side: ``on the left`` (nothing without a side)."""
    if not _bigrams(where) & _bigrams(label):
        return f"in the {where}"
    side = next((w for w in _words(where) if w in ("left", "right")), None)
    return f"on the {side}" if side else ""


def _mm(v: float) -> str:
    return f"{v:.0f} mm" if v >= 10 else f"{v:.1f} mm"


def _look(a: dict[str, Any], label: str) -> list[str]:
    """``oval, well-defined, hyperdense``: the margin is left out when it repeats the shape, and any descriptor
    whose words the label already says."""
    parts = [a.get("shape")] + ([a["margin"]] if a["margin"] != a.get("shape") else []) + [a.get("intensity")]
    return [p for p in parts if p and _new_words(p, label)]  # a word the rendering does not show is not said


def _noun(label: str, n: int) -> str:
    """The label for ``n`` lesions: itself for one, its plural without "multiple" for several."""
    if n == 1:
        return label
    bare = re.sub(r"^(multiple|several|numerous)\s+", "", label.strip(), flags=re.IGNORECASE)
    return bare if is_plural(bare) else plural(bare)


def _enumerate(places: list[str]) -> str:
    """Several places in one phrase, a shared last word said once: "left upper, right mid and right upper zones"
    (not "left upper zone, right mid zone, right upper zone")."""
    last = {p.split()[-1] for p in places}
    if len(last) == 1 and all(len(p.split()) > 1 for p in places):
        heads = [" ".join(p.split()[:-1]) for p in places]
        return f"{', '.join(heads[:-1])} and {heads[-1]} {plural(places[0].split()[-1])}"
    return f"{', '.join(places[:-1])} and {places[-1]}"


def make_report(*, modality: str, plane: str | None, body_region: str | None, findings: list[dict[str, Any]],
                label: str | None, diagnosis: str | None, malignancy: str | None,
                artefact: str | None, quality: str | None, differential: tuple[str, ...] = ()) -> str:
    """A two-section report: FINDINGS (from the structured findings) and IMPRESSION. The impression names the
    diagnosis as one image supports it: "appearance compatible with" it, and where the image cannot rule out other
    diagnoses (``differential``: the case's compatible mimics, :func:`medr2.vocab.differential.compatible_mimics`)
    the differential a radiologist would add; never a histology signed from one slice (issue 40, fourth review)."""
    view = f"{modality} {plane} image" if plane else f"{modality} image"
    region = f" of the {body_region}" if body_region and _new_words(body_region, view) else ""
    lines = [f"{view[0].upper()}{view[1:]}{region}."]
    n = len(findings)
    if not findings:
        lines.append("No focal lesion is seen.")
    else:
        if label is None:
            raise ValueError("a report with findings needs the finding label")
        # a shape or colour said of several lesions only where each one's rendering shows it (issue 40)
        shared = {k: v if all(a.get(k) == v for a in findings) else None
                  for k, v in findings[0].items() if k in ("shape", "intensity")}
        look = ", ".join(_look({**findings[0], **shared}, label))
        noun = _noun(label, n)
        places = sorted({_where(a) for a in findings})
        if n == 1:
            a = findings[0]
            desc = " ".join(p for p in (_mm(a["size_mm"]), look, label) if p)
            lines.append(" ".join(p for p in (f"There is {article(desc)} {desc}", _in_place(_where(a), label)) if p)
                         + ".")
        else:
            largest = max(findings, key=lambda a: a["size_mm"])
            where = _in_place(places[0], label) if len(places) == 1 else f"in the {_enumerate(places)}"
            desc = " ".join(p for p in (look, noun, where) if p)
            lines.append(f"There are {n} {desc}, the largest measuring {_mm(largest['size_mm'])}.")
        # the texture each finding shows (measured on the rendering, not its class's): said of the lesions only
        # where every one of them shows it
        textures = {a.get("texture") for a in findings}
        texture = textures.pop() if len(textures) == 1 else None
        if texture in TEXTURE_SENTENCES:
            lines.append(TEXTURE_SENTENCES[texture].format(
                s="The lesion" if n == 1 else "The lesions", v_be="is" if n == 1 else "are",
                v_have="has" if n == 1 else "have", content=CONTENT_WORDS.get(modality, "appearance")))
    if artefact and artefact != "none":
        lines.append(f"Image quality is {QUALITY_WORDS.get(str(quality), quality)}, limited by {artefact} artefact.")
    if findings and not diagnosis:
        raise ValueError("a report with findings needs a diagnosis")
    impression = "No abnormality detected." if not findings or not diagnosis else _impression(
        diagnosis, malignancy, differential)
    return "FINDINGS: " + " ".join(lines) + "\nIMPRESSION: " + impression


def _impression(diagnosis: str, malignancy: str | None, differential: tuple[str, ...]) -> str:
    """"Appearance compatible with X[, malignant appearance]." and, where one image cannot tell them apart, "The
    differential includes A and B."."""
    first = f"Appearance compatible with {diagnosis}" + (f", {malignancy} appearance." if malignancy else ".")
    others = [d for d in dict.fromkeys(differential) if d.lower() != diagnosis.lower()]
    if not others:
        return first
    listed = others[0] if len(others) == 1 else f"{', '.join(others[:-1])} and {others[-1]}"
    return f"{first} The differential includes {listed}."
