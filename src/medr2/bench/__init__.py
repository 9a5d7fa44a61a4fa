"""The bench folder format (docs/bench-format.md): Parquet records, content-addressed PNGs, a manifest."""

from medr2.bench.format import Bench, BenchWriter, load_bench, write_bench

__all__ = ["Bench", "BenchWriter", "load_bench", "write_bench"]
