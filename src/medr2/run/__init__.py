"""Running models over a bench (DESIGN §8): prompts per mode, the persist-first store, the runner
with resume and shards, merging shard runs, the run manifest, and the ``eval``/``merge`` commands."""
