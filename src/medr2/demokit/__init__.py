"""``medr2 demo``: the whole loop on the bundled sample, offline (docs/demo.md).

``run`` runs the stages (build, tiny VLM, eval, fine-tune, score, report), ``display`` is what the console
shows while it works, ``summary`` writes ``summary.md`` (the before/after table)."""

from medr2.demokit.run import (
           DEMO_FILE,
           QUICK,
           SUMMARY_FILE,
           DemoConfig,
           DemoModel,
           DemoPaths,
           DemoResult,
           demo_config,
           demo_models,
           run_demo,
)

__all__ = ["DEMO_FILE", "QUICK", "SUMMARY_FILE", "DemoConfig", "DemoModel", "DemoPaths", "DemoResult", "demo_config",
           "demo_models", "run_demo"]
