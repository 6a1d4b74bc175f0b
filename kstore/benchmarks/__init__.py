"""Benchmark harnesses behind ``kstore bench``: each measures kstore against the raw component
it sits on, in the same run, and prints medians and ratios. They never gate anything."""

from kstore.benchmarks.storage import run_storage_bench, sample_pod

__all__ = ["run_storage_bench", "sample_pod"]
