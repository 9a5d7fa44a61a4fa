"""Readers for public annotated medical datasets in their released layouts (``--source NAME:PATH``).

One module per dataset; each registers its source name with :func:`medr2.sources.base.register_source`
and is listed in :data:`medr2.sources.BUILTIN_SOURCE_MODULES`. Layouts, mappings and their sources are
documented in ``docs/bring-your-own-data.md`` ("Public datasets in their own layouts").
"""

DATASET_MODULES = (
    "medr2.sources.datasets.nih_cxr14",
    "medr2.sources.datasets.rsna_pneumonia",
    "medr2.sources.datasets.vindr_cxr",
    "medr2.sources.datasets.msd",
    "medr2.sources.datasets.brats",
    "medr2.sources.datasets.isic",
    "medr2.sources.datasets.kvasir_seg",
    "medr2.sources.datasets.cbis_ddsm",
    "medr2.sources.datasets.iu_xray",
)
