"""medr2: a hierarchical, adversarial benchmark toolkit for medical vision-language models.

The public API (docs/architecture.md) is :mod:`medr2.api`, re-exported here and loaded on first use, so
``import medr2`` stays light: ``medr2.build(...)``, ``medr2.evaluate(...)``, ``medr2.score(...)``, ...
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what ``__getattr__`` returns, for type checkers (src/medr2/py.typed): the public names are typed
    from medr2.api import (
        Adapter as Adapter,
        BadInput as BadInput,
        Bench as Bench,
        BoxConvention as BoxConvention,
        CallableAdapter as CallableAdapter,
        Case as Case,
        Draft as Draft,
        GenSettings as GenSettings,
        Item as Item,
        Medr2Error as Medr2Error,
        Message as Message,
        MetricContext as MetricContext,
        ModelConfig as ModelConfig,
        Part as Part,
        Perturbation as Perturbation,
        Plot as Plot,
        PlotContext as PlotContext,
        Prediction as Prediction,
        Registry as Registry,
        Request as Request,
        Response as Response,
        Score as Score,
        Skip as Skip,
        TaskContext as TaskContext,
        TaskSpec as TaskSpec,
        VariantId as VariantId,
        VariantRole as VariantRole,
        WorkFailed as WorkFailed,
        add_variants as add_variants,
        answer_changed_meta as answer_changed_meta,
        build as build,
        contact_sheet as contact_sheet,
        convert as convert,
        demo as demo,
        derive_item as derive_item,
        evaluate as evaluate,
        export as export,
        finetune as finetune,
        import_dataset as import_dataset,
        info as info,
        load_bench as load_bench,
        load_plugins as load_plugins,
        materialise as materialise,
        merge as merge,
        register_adapter as register_adapter,
        register_background as register_background,
        register_baseline as register_baseline,
        register_degradation as register_degradation,
        register_exporter as register_exporter,
        register_extractor as register_extractor,
        register_family as register_family,
        register_format as register_format,
        register_importer as register_importer,
        register_metric as register_metric,
        register_plot as register_plot,
        register_preset as register_preset,
        register_resize as register_resize,
        register_source as register_source,
        register_task as register_task,
        register_variant as register_variant,
        report as report,
        review as review,
        score as score,
        task as task,
        tiny_vlm as tiny_vlm,
        variants_sheet as variants_sheet,
        view as view,
        vllm_export as vllm_export,
    )

__version__ = "0.1.0"

__all__ = [
    "__version__",
    # verbs (one per command of ``medr2 --help``)
    "build", "info", "materialise", "load_bench", "evaluate", "merge", "score", "report", "export", "finetune",
    "import_dataset", "convert", "add_variants", "variants_sheet", "contact_sheet", "tiny_vlm", "vllm_export", "demo",
    "view", "review",
    # records and the model contract
    "Case", "Item", "Prediction", "Score", "Bench", "Adapter", "Request", "Response", "Message", "Part",
    "GenSettings", "BoxConvention", "ModelConfig", "CallableAdapter",
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
