"""NEW_BENCHMARK: one line on what it measures. Rename the folder and this name."""

from .new_benchmark import new_benchmark

__all__ = ["new_benchmark"]
