"""medr2: a hierarchical, adversarial benchmark toolkit for medical vision-language models.

The public API (docs/architecture.md) is :mod:`medr2.api`, re-exported here and loaded on first use, so
``import medr2`` stays light: ``medr2.build(...)``, ``medr2.evaluate(...)``, ``medr2.score(...)``, ...
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = [
    "__version__",
    # verbs (one per command of ``medr2 --help``)
    "build", "info", "materialise", "load_bench", "evaluate", "merge", "score", "report", "export", "finetune",
    "import_dataset", "convert", "add_variants", "variants_sheet", "contact_sheet", "tiny_vlm", "vllm_export", "demo",
    # records and the model contract
    "Case", "Item", "Prediction", "Score", "Bench", "Adapter", "Request", "Response", "Message", "Part",
    "GenSettings", "BoxConvention", "AdapterOptions", "CallableAdapter",
    # errors
    "Medr2Error", "BadInput", "WorkFailed", "Skip", "VariantId",
    # extension decorators (medr2.registry; docs/extending.md)
    "register_task", "task", "register_variant", "register_source", "register_importer", "register_exporter",
    "register_adapter", "register_metric", "register_plot", "register_extractor", "register_format",
    "register_family", "register_preset", "register_resize", "register_baseline", "register_background",
    "register_degradation", "Registry", "load_plugins",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from medr2 import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'medr2' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
