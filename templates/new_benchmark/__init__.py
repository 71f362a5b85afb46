"""NEW_BENCHMARK: one line on what it measures. Rename the folder and this name."""

# both from the task module, so the imports' order does not depend on the family's name
from .new_benchmark import (
    new_benchmark,
    new_benchmark_scorer,
)

__all__ = ["new_benchmark", "new_benchmark_scorer"]
