"""Findings + impression reports generated from the structured findings of a sample case."""

from __future__ import annotations

from typing import Any


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


TEXTURE_SENTENCES = {
    "heterogeneous": "The lesion is heterogeneous.",
    "rim": "The lesion has a thick rim around a central core of different signal.",
    "calcified": "Central calcification is present.",
}


def _where(attrs: dict[str, Any]) -> str:
    return str(attrs.get("location") or attrs.get("organ") or "image")


def _mm(v: float) -> str:
    return f"{v:.0f} mm" if v >= 10 else f"{v:.1f} mm"


def _look(a: dict[str, Any]) -> str:
    """``oval, well-defined, hyperdense`` (the margin is left out when it repeats the shape)."""
    parts = [a["shape"]] + ([a["margin"]] if a["margin"] != a["shape"] else []) + [a["intensity"]]
    return ", ".join(parts)


def make_report(*, modality: str, plane: str | None, body_region: str | None, findings: list[dict[str, Any]],
                label: str | None, diagnosis: str | None, severity: str | None, malignancy: str | None,
                artefact: str | None, quality: str | None) -> str:
    """A two-section report: FINDINGS (from the structured findings) and IMPRESSION."""
    view = f"{plane} " if plane else ""
    region = f" of the {body_region}" if body_region else ""
    lines = [f"{modality} {view}image{region}."]
    if not findings:
        lines.append("No focal lesion is seen.")
    elif len(findings) == 1:
        a = findings[0]
        desc = f"{_mm(a['size_mm'])} {_look(a)} {label}"
        lines.append(f"There is {_article(desc)} {desc} in the {_where(a)}.")
        if a.get("texture") in TEXTURE_SENTENCES:
            lines.append(TEXTURE_SENTENCES[a["texture"]])
    else:
        largest = max(findings, key=lambda a: a["size_mm"])
        places = sorted({_where(a) for a in findings})
        lines.append(f"There are {len(findings)} lesions ({label}), {_look(findings[0])}, the largest measuring "
                     f"{_mm(largest['size_mm'])} in the {_where(largest)}; locations: {', '.join(places)}.")
    if artefact and artefact != "none":
        lines.append(f"Image quality is {quality}, limited by {artefact} artefact.")
    if findings and not diagnosis:
        raise ValueError("a report with findings needs a diagnosis")
    impression = "No abnormality detected." if not findings or not diagnosis else (
        f"{diagnosis[0].upper() + diagnosis[1:]}" + (f" ({severity})" if severity else "")
        + (f", {malignancy} appearance." if malignancy else "."))
    return "FINDINGS: " + " ".join(lines) + "\nIMPRESSION: " + impression
