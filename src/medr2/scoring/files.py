"""The names of the files ``medr2 score`` writes beside ``scores.parquet`` on request, importable without the
scorer's libraries (the report and the viewer read them)."""

from __future__ import annotations

SLICES_FILE, HARM_FILE = "slices.json", "harm.json"
