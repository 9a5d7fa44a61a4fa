"""Reports (docs/report.md): leaderboard (Markdown, CSV, JSON), plots, and a self-contained HTML report
with a per-item browser. Entry point: :func:`medr2.reporting.write.write_report`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["write_report"]


def write_report(run_dirs: list[Path] | list[str], out_dir: Path | str, **kwargs: Any) -> Path:
    """Write the report for ``run_dirs`` into ``out_dir``; returns the path of ``index.html``."""
    from medr2.reporting.write import write_report as _write

    return _write(run_dirs, out_dir, **kwargs)
