"""Running models over a bench (docs/running.md): prompts per mode, the persist-first store, the runner
with resume and shards, merging shard runs, the run manifest, and the ``eval``/``merge`` commands."""
