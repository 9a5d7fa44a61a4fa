"""Adversarial variants T1–T8 and V1–V9 (docs/variants.md): registry ``PERTURBATIONS``, engine, cues, inpainting."""

from medr2.perturb.registry import ALL_CODES, PERTURBATIONS, Perturbation, Skip, parse_variants

__all__ = ["ALL_CODES", "PERTURBATIONS", "Perturbation", "Skip", "parse_variants"]
