"""Sources: readers that turn data into Cases (DESIGN §11)."""

from __future__ import annotations

import importlib

# modules that register sources when imported
BUILTIN_SOURCE_MODULES = ("medr2.sources.sample",)


def load_builtin_sources() -> None:
    for mod in BUILTIN_SOURCE_MODULES:
        importlib.import_module(mod)
