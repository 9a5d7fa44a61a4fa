"""Sources: readers that turn data into Cases (docs/bring-your-own-data.md); registry ``medr2.sources.base.SOURCES``.

Adding a source: ``docs/extending.md``.
"""

from __future__ import annotations


def load_builtin_sources() -> None:
    """Import every registered source (the registry imports them lazily; kept for callers that want all)."""
    from medr2.sources.base import SOURCES

    for name in SOURCES.names():
        SOURCES[name]
