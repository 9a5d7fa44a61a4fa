"""Reports (docs/report.md): leaderboard (Markdown, CSV, JSON), plots, and a self-contained HTML report
with a per-item browser. Entry point: :func:`medr2.report.write.write_report`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["write_report"]


def write_report(run_dirs: list[Path] | list[str], out_dir: Path | str, **kwargs: Any) -> Path:
    """Write the report for ``run_dirs`` into ``out_dir``; returns the path of ``index.html``."""
    from medr2.report.write import write_report as _write

    return _write(run_dirs, out_dir, **kwargs)

from medr2._callable_module import make_callable  # noqa: E402

make_callable(__name__)  # ``medr2.report(...)`` is the API verb even once this package is imported
