"""One record of the model's settings, from the command line to the adapter.

``medr2 eval`` (through :func:`medr2.evaluate`) builds a :class:`ModelConfig` once from its options
(:meth:`ModelConfig.from_cli`), ``medr2 score --judge`` builds one for the judge, the eval runner carries it
unchanged in :class:`~medr2.run.runner.EvalConfig`, and the adapter registry hands that same record to the
adapter's factory (:func:`medr2.models.registry.load_adapter`). No setting is copied field by field on the way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from medr2.models.base import GenSettings

if TYPE_CHECKING:
    from medr2.bench.table import BenchSource as Bench
    from medr2.models.presets import Preset

DEFAULT_MAX_NEW_TOKENS = 256  # the token limit of an answer when neither the user nor the preset sets one


@dataclass(frozen=True)
class ModelConfig:
    """A model spec (``PREFIX:NAME``) and every setting that shapes how it is called; each adapter reads what
    applies to it.

    ``preset``: a preset name (:meth:`resolve_preset`; box convention, prompts, token budget); ``max_new_tokens``
    None means the preset's budget (reasoning presets), else :data:`DEFAULT_MAX_NEW_TOKENS`; ``extra``: the
    adapter's backend-specific settings (``--model-option KEY=VALUE``, ``--backoff``; e.g. ``dtype``/``device``
    for ``hf``). ``bench``: not a setting but what the run reads, set by the runner (baselines read the items:
    oracle answers, train-split priors): a loaded :class:`~medr2.bench.format.Bench` or a columnar
    :class:`~medr2.bench.table.BenchTable`; it is neither compared nor shown."""

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
    bench: Bench | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_cli(cls, spec: str, *, base_url: str | Sequence[str] | None = None,
                 model_option: Sequence[str] | Mapping[str, Any] | None = None, backoff: float | None = None,
                 **settings: Any) -> ModelConfig:
        """The record of ``medr2 eval``'s options (and :func:`medr2.evaluate`'s keywords): ``--base-url``
        (repeatable), ``--model-option KEY=VALUE`` (repeatable, or a mapping; see
        :func:`medr2.models.options.parse_model_options`), ``--backoff`` (the openai adapter's first retry wait,
        over a model option of that key), and the other settings under their field names."""
        from medr2.models.options import parse_model_options

        urls = (base_url,) if isinstance(base_url, str) else tuple(base_url or ())
        extra = {**parse_model_options(model_option), **({"backoff_initial_s": backoff} if backoff is not None else {})}
        return cls(spec=spec, base_urls=urls, extra=extra, **settings)

    def resolve_preset(self) -> Preset | None:
        """The :class:`~medr2.models.presets.Preset` named by ``preset`` (None without one; an unknown name is
        refused, listing the presets)."""
        from medr2.models.presets import get_preset

        return get_preset(self.preset) if self.preset else None

    def generation(self, preset: Preset | None) -> GenSettings:
        """The generation settings of every request (hashed into it)."""
        max_new_tokens = self.max_new_tokens or (preset.max_new_tokens if preset else None) or DEFAULT_MAX_NEW_TOKENS
        return GenSettings(max_new_tokens=max_new_tokens, temperature=self.temperature, seed=self.seed)
