"""One description of the model settings, from the command line to the adapter.

``medr2 eval`` builds a :class:`ModelConfig` from its options (:meth:`ModelConfig.from_cli`), the eval runner
carries it unchanged, and :meth:`ModelConfig.adapter_options` turns it into the :class:`AdapterOptions` a
factory receives (adding what only the run knows: the resolved preset and the loaded bench). No field is
copied by hand on the way: the fields that the two share have the same names.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from medr2 import jsonsafe
from medr2.errors import BadInput
from medr2.models.base import Adapter, GenSettings
from medr2.models.registry import AdapterOptions

if TYPE_CHECKING:
    from medr2.bench.table import BenchSource as Bench
    from medr2.models.presets import Preset

DEFAULT_MAX_NEW_TOKENS = 256  # the token limit of an answer when neither the user nor the preset sets one


@dataclass(frozen=True)
class ModelConfig:
    """A model spec and every setting that shapes how it is called (what ``medr2 eval`` takes about a model).

    ``preset`` is a preset name (resolved by :meth:`resolve_preset`); ``max_new_tokens`` None means the
    preset's budget (reasoning presets), else :data:`DEFAULT_MAX_NEW_TOKENS`; ``extra`` holds the adapter's
    backend-specific settings (``--model-option KEY=VALUE``, ``--backoff``)."""

    spec: str
    preset: str | None = None
    base_urls: tuple[str, ...] = ()
    api_key_env: str | None = None
    concurrency: int = 8
    timeout_s: float = 120.0
    retries: int = 5
    batch_size: int = 8
    seed: int = 0
    max_new_tokens: int | None = None
    temperature: float = 0.0
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_cli(cls, spec: str, *, base_url: Sequence[str] | None = None, model_option: Sequence[str] | None = None,
                 backoff: float | None = None, **settings: Any) -> ModelConfig:
        """The config of ``medr2 eval``'s options: ``--base-url`` (repeatable), ``--model-option KEY=VALUE``
        (repeatable; see :func:`parse_model_options`), ``--backoff`` (the openai adapter's first retry wait),
        and the other settings under their field names."""
        extra = {**parse_model_options(model_option), **({"backoff_initial_s": backoff} if backoff is not None else {})}
        return cls(spec=spec, base_urls=tuple(base_url or ()), extra=extra, **settings)

    def resolve_preset(self) -> Preset | None:
        from medr2.models.presets import get_preset

        return get_preset(self.preset) if self.preset else None

    def generation(self, preset: Preset | None) -> GenSettings:
        """The generation settings of every request (hashed into it)."""
        max_new_tokens = self.max_new_tokens or (preset.max_new_tokens if preset else None) or DEFAULT_MAX_NEW_TOKENS
        return GenSettings(max_new_tokens=max_new_tokens, temperature=self.temperature, seed=self.seed)

    def adapter_options(self, preset: Preset | None = None, bench: Bench | None = None) -> AdapterOptions:
        """What the adapter factory receives: the shared fields, the resolved ``preset`` and the ``bench``."""
        shared = {f.name: getattr(self, f.name) for f in fields(AdapterOptions) if f.name in _OWN_FIELDS}
        shared["extra"] = dict(self.extra)
        return AdapterOptions(**shared, preset=preset, bench=bench)

    def adapter_kwargs(self, preset: Preset | None = None, bench: Bench | None = None) -> dict[str, Any]:
        """:meth:`adapter_options` as keyword arguments (the form ``load_adapter(spec, **kwargs)`` takes)."""
        opts = self.adapter_options(preset, bench)
        return {f.name: getattr(opts, f.name) for f in fields(AdapterOptions)}

    def load(self, preset: Preset | None = None, bench: Bench | None = None,
             factory: Callable[..., Adapter] | None = None) -> Adapter:
        """The adapter (``factory(spec, **options)``, by default :func:`medr2.models.registry.load_adapter`)."""
        from medr2.models.registry import load_adapter

        return (factory or load_adapter)(self.spec, **self.adapter_kwargs(preset, bench))


_OWN_FIELDS = frozenset(f.name for f in fields(ModelConfig)) - {"preset"}  # the preset reaches adapters resolved


def parse_model_options(values: Sequence[str] | None) -> dict[str, Any]:
    """``KEY=VALUE`` pairs for the adapter's ``extra``; a VALUE that is JSON (a number, true/false, null, a
    list) is taken as such, anything else as a string."""
    out: dict[str, Any] = {}
    for v in values or []:
        key, sep, raw = v.partition("=")
        if not sep or not key.strip():
            raise BadInput(f"expected KEY=VALUE, got {v!r}", field="--model-option")
        try:
            out[key.strip()] = jsonsafe.loads(raw, field=f"--model-option {key.strip()}")
        except jsonsafe.OverBound:
            raise
        except BadInput:  # not JSON: the text itself
            out[key.strip()] = raw
    return out
