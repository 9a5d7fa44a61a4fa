"""medr2: a hierarchical, adversarial benchmark toolkit for medical vision-language models.

The public API (docs/architecture.md) is :mod:`medr2.api`, re-exported here and loaded on first use, so
``import medr2`` stays light: ``medr2.build(...)``, ``medr2.evaluate(...)``, ``medr2.score(...)``, ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what ``__getattr__`` returns, for type checkers (src/medr2/py.typed): the public names are typed
    from medr2.api import (
        Adapter as Adapter,
    )
    from medr2.api import (
        AdapterOptions as AdapterOptions,
    )
    from medr2.api import (
        BadInput as BadInput,
    )
    from medr2.api import (
        Bench as Bench,
    )
    from medr2.api import (
        BoxConvention as BoxConvention,
    )
    from medr2.api import (
        CallableAdapter as CallableAdapter,
    )
    from medr2.api import (
        Case as Case,
    )
    from medr2.api import (
        Draft as Draft,
    )
    from medr2.api import (
        GenSettings as GenSettings,
    )
    from medr2.api import (
        Item as Item,
    )
    from medr2.api import (
        Medr2Error as Medr2Error,
    )
    from medr2.api import (
        Message as Message,
    )
    from medr2.api import (
        MetricContext as MetricContext,
    )
    from medr2.api import (
        Part as Part,
    )
    from medr2.api import (
        Perturbation as Perturbation,
    )
    from medr2.api import (
        Plot as Plot,
    )
    from medr2.api import (
        PlotContext as PlotContext,
    )
    from medr2.api import (
        Prediction as Prediction,
    )
    from medr2.api import (
        Registry as Registry,
    )
    from medr2.api import (
        Request as Request,
    )
    from medr2.api import (
        Response as Response,
    )
    from medr2.api import (
        Score as Score,
    )
    from medr2.api import (
        Skip as Skip,
    )
    from medr2.api import (
        TaskContext as TaskContext,
    )
    from medr2.api import (
        TaskSpec as TaskSpec,
    )
    from medr2.api import (
        VariantId as VariantId,
    )
    from medr2.api import (
        VariantRole as VariantRole,
    )
    from medr2.api import (
        WorkFailed as WorkFailed,
    )
    from medr2.api import (
        add_variants as add_variants,
    )
    from medr2.api import (
        answer_changed_meta as answer_changed_meta,
    )
    from medr2.api import (
        build as build,
    )
    from medr2.api import (
        contact_sheet as contact_sheet,
    )
    from medr2.api import (
        convert as convert,
    )
    from medr2.api import (
        demo as demo,
    )
    from medr2.api import (
        derive_item as derive_item,
    )
    from medr2.api import (
        evaluate as evaluate,
    )
    from medr2.api import (
        export as export,
    )
    from medr2.api import (
        finetune as finetune,
    )
    from medr2.api import (
        import_dataset as import_dataset,
    )
    from medr2.api import (
        info as info,
    )
    from medr2.api import (
        load_bench as load_bench,
    )
    from medr2.api import (
        load_plugins as load_plugins,
    )
    from medr2.api import (
        materialise as materialise,
    )
    from medr2.api import (
        merge as merge,
    )
    from medr2.api import (
        register_adapter as register_adapter,
    )
    from medr2.api import (
        register_background as register_background,
    )
    from medr2.api import (
        register_baseline as register_baseline,
    )
    from medr2.api import (
        register_degradation as register_degradation,
    )
    from medr2.api import (
        register_exporter as register_exporter,
    )
    from medr2.api import (
        register_extractor as register_extractor,
    )
    from medr2.api import (
        register_family as register_family,
    )
    from medr2.api import (
        register_format as register_format,
    )
    from medr2.api import (
        register_importer as register_importer,
    )
    from medr2.api import (
        register_metric as register_metric,
    )
    from medr2.api import (
        register_plot as register_plot,
    )
    from medr2.api import (
        register_preset as register_preset,
    )
    from medr2.api import (
        register_resize as register_resize,
    )
    from medr2.api import (
        register_source as register_source,
    )
    from medr2.api import (
        register_task as register_task,
    )
    from medr2.api import (
        register_variant as register_variant,
    )
    from medr2.api import (
        report as report,
    )
    from medr2.api import (
        score as score,
    )
    from medr2.api import (
        task as task,
    )
    from medr2.api import (
        tiny_vlm as tiny_vlm,
    )
    from medr2.api import (
        variants_sheet as variants_sheet,
    )
    from medr2.api import (
        vllm_export as vllm_export,
    )

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
    # the base types a plugin builds on (docs/extending.md)
    "Perturbation", "derive_item", "answer_changed_meta", "VariantRole", "Draft", "TaskContext", "TaskSpec",
    "MetricContext", "Plot", "PlotContext",
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
