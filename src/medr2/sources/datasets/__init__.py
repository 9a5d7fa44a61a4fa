"""Readers for public annotated medical datasets in their released layouts (``--source NAME:PATH``).

One module per dataset; each has one lazy entry (source name -> ``module:_factory``) in
:data:`medr2.sources.base.SOURCES`. Layouts, mappings and their sources are
documented in ``docs/bring-your-own-data.md`` ("Public datasets in their own layouts").
"""
