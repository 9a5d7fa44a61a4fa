"""Image operations shared by sources and perturbations (acquisition-like degradations)."""

from medr2.imaging.degrade import ARTEFACT_LABELS, DEGRADATIONS, SEVERITIES, degrade, psnr

__all__ = ["ARTEFACT_LABELS", "DEGRADATIONS", "SEVERITIES", "degrade", "psnr"]
