"""The bench folder format (DESIGN §2): Parquet records, content-addressed PNGs, a manifest."""

from medr2.bench.format import Bench, BenchWriter, load_bench, write_bench

__all__ = ["Bench", "BenchWriter", "load_bench", "write_bench"]
