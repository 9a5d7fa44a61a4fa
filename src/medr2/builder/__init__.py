"""The build pipeline (docs/architecture.md, docs/bench-format.md): sources -> cases -> items -> variants ->
bench folder."""
