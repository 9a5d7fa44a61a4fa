"""Bring-your-own-data interop: importers of existing medical VQA sets and exporters to other harnesses."""
