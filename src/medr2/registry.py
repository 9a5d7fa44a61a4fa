"""One registry type for every extension point of medr2 (how to extend: ``docs/extending.md``).

A :class:`Registry` maps names to objects: tasks, variants (perturbations), sources, importers, exporters,
model adapters, metric groups, plots, ... Each has one ``Registry`` instance in the module that owns the
extension point. Three ways in:

- ``REG.register(name, obj)`` (or a decorator built on it): refuses a name already taken by another
  object with a clear error; registering the identical object again is a no-op.
- ``REG.lazy(name, "package.module:object")``: the name is known at once (listed in help and errors),
  the module is imported on first use only. A lazy entry may also name just a module
  (``"package.module"``) whose import registers the name itself.
- the entry-point group ``medr2.plugins`` (:data:`PLUGIN_GROUP`) of any installed distribution: each entry
  names a module (imported) or a callable (imported and called with no argument) that registers its
  objects with the decorators of :mod:`medr2.api`. Plugins are loaded once, on the first lookup in any
  registry, so ``medr2 --help`` and a plain ``import medr2`` stay fast.

``REG[name]`` resolves a lazy entry; ``REG.lookup(name)`` does the same but raises
:class:`~medr2.errors.BadInput` ("unknown variant 'X9'; known: ...") naming the CLI field; ``names()``,
iteration and ``in`` never import a lazy entry. ``REG[name] = obj`` replaces an entry explicitly (tests use it
through ``monkeypatch.setitem``); ``del REG[name]`` removes one.

This module imports nothing heavy (no numpy, pyarrow, PIL, pydantic or torch).
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from medr2.errors import BadInput

T = TypeVar("T")
_D = TypeVar("_D")
PLUGIN_GROUP = "medr2.plugins"

_plugins_lock = threading.RLock()
_plugins_state = {"loaded": False, "loading": False}
_ALL: list[Registry[Any]] = []


class PluginError(BadInput):
    """A plugin named in the ``medr2.plugins`` entry-point group could not be loaded."""


class RegistryCollision(ValueError):
    """A name is already registered to a different object."""


@dataclass(frozen=True)
class _Lazy:
    target: str  # "module:object" or "module"

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]


def load_plugins(*, force: bool = False) -> list[str]:
    """Load every entry point of the ``medr2.plugins`` group once (again with ``force``); returns their names.

    A plugin that fails to import raises :class:`PluginError` naming the distribution and entry point.
    """
    with _plugins_lock:
        if (_plugins_state["loaded"] and not force) or _plugins_state["loading"]:
            return []
        _plugins_state["loading"] = True
        try:
            from importlib.metadata import entry_points

            loaded = []
            for ep in sorted({(e.name, e.value): e for e in entry_points(group=PLUGIN_GROUP)}.values(),
                             key=lambda e: (e.name, e.value)):
                dist = getattr(getattr(ep, "dist", None), "name", None) or "?"
                try:
                    obj = ep.load()
                    if callable(obj) and not isinstance(obj, type(sys)):
                        obj()
                except BadInput:
                    raise
                except Exception as e:  # a broken plugin must say which one it is
                    raise PluginError(f"plugin {ep.name!r} ({ep.value}) of distribution {dist!r} failed to load: "
                                      f"{type(e).__name__}: {e}", field=PLUGIN_GROUP) from e
                loaded.append(ep.name)
            _plugins_state["loaded"] = True
            return loaded
        finally:
            _plugins_state["loading"] = False


def registries() -> list[Registry[Any]]:
    """Every registry created so far (in creation order)."""
    return list(_ALL)


class Registry(Mapping[str, T], Generic[T]):
    """Names -> objects of one extension point (see the module docstring and ``docs/extending.md``).

    ``kind`` names an entry in messages ("unknown {kind} 'x'; known: ..."); ``field`` is the CLI option the
    name comes from (for :class:`~medr2.errors.BadInput`). ``loaders`` are modules imported before the first
    lookup (modules whose import registers many built-in entries with a decorator, e.g. the task stages).
    ``check(name, obj)`` may validate an entry when it is registered or resolved.
    """

    def __init__(self, kind: str, *, field: str | None = None, loaders: tuple[str, ...] = (),
                 check: Callable[[str, T], None] | None = None) -> None:
        self.kind = kind
        self.field = field
        self._loaders = loaders
        self._loaded = not loaders
        self._loading = False
        self._check = check
        self._entries: dict[str, T | _Lazy] = {}
        self._lock = threading.RLock()
        self._version = 0
        _ALL.append(self)

    # -- registration -------------------------------------------------------------------------------

    def register(self, name: str, obj: T, *, replace: bool = False) -> T:
        """Add ``obj`` under ``name``; a name taken by another object is refused (:class:`RegistryCollision`)
        unless ``replace`` says the caller means to replace it."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} name must be a non-empty string, not {name!r}")
        with self._lock:
            old = self._entries.get(name)
            if isinstance(old, _Lazy):
                # a lazy entry's own module registering the name while it is imported fills the entry
                if old.module not in sys.modules:
                    raise RegistryCollision(f"{self.kind} {name!r} is already registered (lazily, to {old.target})")
            elif name in self._entries and not replace:
                if old is obj:
                    return obj
                raise RegistryCollision(f"{self.kind} {name!r} is already registered to {_describe(old)}; "
                                        f"refusing {_describe(obj)} (choose another name)")
            if self._check is not None:
                self._check(name, obj)
            self._entries[name] = obj
            self._version += 1
        return obj

    def lazy(self, name: str, target: str) -> None:
        """Declare ``name`` now, to be imported from ``target`` (``"module:object"`` or ``"module"``) when used."""
        with self._lock:
            if name in self._entries:
                raise RegistryCollision(f"{self.kind} {name!r} is already registered")
            self._entries[name] = _Lazy(target)
            self._version += 1

    def decorator(self, name: str, *, replace: bool = False) -> Callable[[T], T]:
        """``@REG.decorator("name")`` registers the decorated object under ``name``."""

        def deco(obj: T) -> T:
            return self.register(name, obj, replace=replace)

        return deco

    # -- lookup -------------------------------------------------------------------------------------

    def _ensure(self) -> None:
        load_plugins()
        if not self._loaded:
            with self._lock:  # other threads wait here until the loaders are in
                if not self._loaded and not self._loading:
                    self._loading = True  # a loader looking itself up (same thread) proceeds
                    try:
                        for mod in self._loaders:
                            importlib.import_module(mod)
                        self._loaded = True
                    finally:
                        self._loading = False

    def _resolve(self, name: str, entry: _Lazy) -> T:
        mod_name, _, attr = entry.target.partition(":")
        try:
            module = importlib.import_module(mod_name)
        except ImportError as e:
            raise BadInput(f"{self.kind} {name!r} needs {mod_name!r}, which cannot be imported: {e}",
                           field=self.field) from e
        with self._lock:
            now = self._entries.get(name)
            if not isinstance(now, _Lazy):  # the module registered it on import
                if now is None:
                    raise KeyError(name)
                return now
            if not attr:
                raise LookupError(f"importing {mod_name!r} did not register {self.kind} {name!r}")
            obj: T = getattr(module, attr)
            if self._check is not None:
                self._check(name, obj)
            self._entries[name] = obj
            return obj

    def __getitem__(self, name: str) -> T:
        self._ensure()
        entry = self._entries[name]
        if isinstance(entry, _Lazy):
            return self._resolve(name, entry)
        return entry

    @overload
    def get(self, name: str, /) -> T | None: ...
    @overload
    def get(self, name: str, default: T, /) -> T: ...
    @overload
    def get(self, name: str, default: _D, /) -> T | _D: ...

    def get(self, name: str, default: Any = None, /) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def lookup(self, name: str) -> T:
        """``self[name]``, or :class:`~medr2.errors.BadInput` "unknown KIND 'name'; known: ..."."""
        try:
            return self[name]
        except KeyError:
            raise BadInput(self.unknown_message(name), field=self.field) from None

    def unknown_message(self, name: str) -> str:
        return f"unknown {self.kind} {name!r}; known: {', '.join(sorted(self.names()))}"

    def names(self) -> list[str]:
        """Every registered name, lazy ones included, in registration order (imports no lazy entry)."""
        self._ensure()
        return list(self._entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        self._ensure()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        self._ensure()
        return name in self._entries

    @property
    def version(self) -> int:
        """Grows with every change of the entries (after plugins and loaders are in): a cache key for
        tables derived from the registry."""
        self._ensure()
        return self._version

    def is_lazy(self, name: str) -> bool:
        return isinstance(self._entries.get(name), _Lazy)

    # -- explicit replacement (tests, monkeypatch.setitem) ------------------------------------------

    def __setitem__(self, name: str, obj: T) -> None:
        with self._lock:
            self._entries[name] = obj
            self._version += 1

    def __delitem__(self, name: str) -> None:
        with self._lock:
            del self._entries[name]
            self._version += 1

    def pop(self, name: str, *default: Any) -> Any:
        with self._lock:
            if name in self._entries:
                value = self[name]
                del self[name]
                return value
            if default:
                return default[0]
            raise KeyError(name)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._entries)} entries)"


def _describe(obj: Any) -> str:
    mod, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    return f"{mod}.{qual}" if mod and qual else repr(obj)[:80]


# -- decorators for code outside the package (re-exported by medr2.api; see docs/extending.md) -------------
# Each imports the module that owns the extension point only when called.


def register_task(spec: Any) -> Any:
    """Register a :class:`medr2.tasks.spec.TaskSpec` (or use the :func:`task` decorator)."""
    from medr2.tasks.spec import register_task as reg

    return reg(spec)


def task(*args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """``@task(id, stage, form, name, needs, templates, chain=...)`` on a generator ``(case, ctx) -> [Draft]``.

    Adding a task: 1 file. 1. write the generator (``Skip(reason)`` for a case it cannot ask about); 2. decorate it
    with ``@task(...)`` in the same module; 3. name the module in the ``medr2.plugins`` entry point
    (docs/extending.md, "A task")."""
    from medr2.tasks.spec import task as deco

    return deco(*args, **kwargs)


def register_variant(cls: Any) -> Any:
    """Class decorator: register a :class:`medr2.perturb.registry.Perturbation` subclass under its ``code``.

    Adding a variant: 1 file. 1. subclass ``Perturbation`` (``code``, ``title``, ``defaults``); 2. declare its
    ``roles``; 3. implement ``apply`` with ``derive_item`` and decorate the class with ``@register_variant`` in the
    same module, named in the ``medr2.plugins`` entry point (docs/extending.md, "A variant")."""
    from medr2.perturb.registry import register

    return register(cls)


def _owned(module: str, fn: str, adding: str = "") -> Callable[..., Any]:
    """The decorator ``fn`` of ``module``, imported when called; ``adding``: its "Adding a X: N file" steps."""
    def deco_factory(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), fn)(*args, **kwargs)

    deco_factory.__name__ = fn
    deco_factory.__doc__ = f"See :func:`{module}.{fn}`." + (f"\n\n{adding}" if adding else "")
    return deco_factory


def _adding(what: str, write: str, deco: str, section: str) -> str:
    """The steps of adding one extension (docs/extending.md says the same, section ``section``)."""
    return (f"Adding {what}: 1 file. 1. write {write}; 2. decorate it with ``{deco}`` in the same module; 3. name the "
            f"module in the ``medr2.plugins`` entry point (docs/extending.md, \"{section}\").")


register_source = _owned("medr2.sources.base", "register_source", _adding(
    "a source", "a source factory ``factory(arg)`` (``name``, ``plan``, ``realize``)", '@register_source("name")',
    "A source"))
register_importer = _owned("medr2.interop.importers", "register_importer", _adding(
    "an importer", "``fn(path, builder, options)``", '@register_importer("name")', "An importer"))
register_exporter = _owned("medr2.interop.exporters", "register_exporter", _adding(
    "an exporter", "``fn(bench, out) -> summary``", '@register_exporter("name")', "An exporter"))
register_adapter = _owned("medr2.models.registry", "register_adapter", _adding(
    "a model adapter", "an adapter factory ``factory(name, options)``", '@register_adapter("prefix")',
    "A model adapter"))
register_metric = _owned("medr2.scoring.metrics", "metric_group", _adding(
    "a metric group", "``fn(ctx) -> dict``", '@register_metric("name")', "A metric group"))
register_plot = _owned("medr2.reporting.plots", "register_plot", _adding(
    "a plot", "``fn(PlotContext) -> list[Plot]``", '@register_plot("name")', "A plot"))
register_extractor = _owned("medr2.scoring.extract", "register_extractor")
register_format = _owned("medr2.train.formats", "register_format")
register_family = _owned("medr2.models.families", "register_family")
register_preset = _owned("medr2.models.presets", "register_preset")
register_resize = _owned("medr2.models.presets", "register_resize")
register_baseline = _owned("medr2.models.baselines", "register_baseline")
register_background = _owned("medr2.sources.sample.background", "register_background")
register_degradation = _owned("medr2.imaging.degrade", "register_degradation")
