"""The names of the built-in extension points, as light constants, for ``medr2 --help`` (which must not
import numpy, pyarrow, PIL or pydantic to print them). ``tests/test_cli_light.py`` checks every table
against the registry it names, so a new entry there that is missing here fails a test."""

from __future__ import annotations

# medr2.sources.base.SOURCES (after medr2.sources.load_builtin_sources())
SOURCE_KINDS = ("sample", "folder", "coco", "masks", "dicom", "nifti", "nih-cxr14", "rsna-pneumonia", "vindr-cxr",
                "msd", "brats", "isic", "kvasir-seg", "cbis-ddsm", "iu-xray")
# medr2.models.presets.PRESETS
PRESETS = ("generic", "medr2-tiny", "qwen2-vl", "qwen2.5-vl", "qwen3-vl", "internvl", "llava-med", "medgemma",
           "huatuogpt-vision", "lingshu", "gpt-4o", "gemini", "qwen3-vl-thinking", "generic-reasoning",
           "openai-reasoning", "llama-3.2-vision", "idefics3", "aya-vision", "glm-4v", "mistral3", "llava-onevision")
# medr2.run.prompts.MODES
MODES = ("independent", "chain-own", "chain-gold", "chain-misleading", "blind", "reasoning")
# medr2.perturb.registry.TEXT_CODES / VISUAL_CODES
TEXT_CODES = ("T1", "T2", "T3", "T4", "T5", "T6", "T7", "T8", "T9", "T10", "T12")
VISUAL_CODES = ("V1", "V2", "V3", "V4", "V5", "V6", "V7", "V8", "V9", "V10", "V11", "V12", "V13", "V14", "V15")
# medr2.records.Split, plus "all" (every split): the values of eval --split (medr2.run.runner.SPLIT_CHOICES)
SPLITS = ("train", "val", "test", "all")
DEFAULT_SPLIT = "test"  # what eval asks when no --split is given (medr2.run.runner.DEFAULT_SPLIT)
# medr2.run.order.ORDERS
ORDERS = ("bench", "case")
# medr2.models.registry.known_prefixes()
MODEL_PREFIXES = ("baseline", "hf", "human", "openai", "vllm")
# medr2.models.baselines.BASELINES
BASELINES = ("oracle", "random", "follow-hint", "follow-history", "prior", "blind", "grounded", "ungrounded")
# medr2.models.families.FAMILIES (tiny-vlm --family)
FAMILIES = ("llava-1.5", "gemma3", "mllama", "idefics3", "aya-vision", "qwen2-vl", "qwen2.5-vl", "qwen3-vl",
            "llava-onevision", "internvl", "smolvlm", "glm-4v", "mistral3")
# medr2.interop.importers.IMPORTERS
IMPORT_FORMATS = ("vqa-rad", "slake", "pmc-vqa", "omnimedvqa", "probmed", "vlmevalkit", "hf", "lmms-eval")
# medr2.interop.exporters.EXPORTERS
CONVERT_TARGETS = ("hf", "vlmevalkit", "lmms-eval")
# medr2.train.formats.FORMATS
EXPORT_FORMATS = ("llamafactory", "swift", "hf", "llamafactory-dpo", "swift-dpo", "hf-dpo")
# medr2.train.export.STRATEGIES
STRATEGIES = ("flat", "curriculum", "chain", "augmented")
# medr2.train.finetune.FINETUNE_STRATEGIES: the export strategies (SFT) and the objectives
FINETUNE_STRATEGIES = (*STRATEGIES, "dpo", "grpo")

# medr2.bench.slicefields.SLICE_FIELDS (medr2 score --slice)
SLICE_FIELDS = ("sex", "age", "source", "modality", "view", "region", "lesion_size", "variant", "stage", "task")


def listing(names: tuple[str, ...], sep: str = ", ") -> str:
    return sep.join(names)
