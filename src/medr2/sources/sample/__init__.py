"""The bundled ``sample`` source (docs/bring-your-own-data.md): real images that ship inside installable packages,
with synthetic lesions, degradations and flips whose ground truth is exact. See ``docs/sample.md``."""

from medr2.sources.sample.source import SampleSource, SampleSpec, available_backgrounds, unavailable_backgrounds

__all__ = ["SampleSource", "SampleSpec", "available_backgrounds", "unavailable_backgrounds"]
