"""Adversarial variants T1–T10, T12 and V1–V15 (docs/variants.md): registry ``PERTURBATIONS``, engine, cues, inpainting.

Adding a variant: ``docs/extending.md``."""

from typing import Any

from medr2.perturb.registry import PERTURBATIONS, Perturbation, Skip, all_codes, parse_variants

__all__ = ["ALL_CODES", "PERTURBATIONS", "Perturbation", "Skip", "all_codes", "parse_variants"]


def __getattr__(name: str) -> Any:
    if name == "ALL_CODES":  # derived from the registry (plugins included)
        return all_codes()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
