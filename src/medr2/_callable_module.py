"""Packages that share their name with a verb of the public API (``medr2.build``, ``medr2.score``,
``medr2.report``, ``medr2.demo``) are made callable: once ``medr2.score.scorer`` is imported, the attribute
``medr2.score`` is the package (Python's import system sets it), and calling it still runs the verb
``medr2.api.score``. So ``medr2.score(run)`` works whatever was imported before."""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


class _VerbModule(types.ModuleType):
    """A package module whose call is the public API verb of the same name."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        verb = self.__name__.rsplit(".", 1)[-1]
        return getattr(importlib.import_module("medr2.api"), verb)(*args, **kwargs)


def make_callable(module_name: str) -> None:
    """Make the (already imported) package ``module_name`` callable as its verb."""
    sys.modules[module_name].__class__ = _VerbModule
