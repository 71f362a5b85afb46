"""Inspect AI evaluations for medical visual question answering (MedReason 2026 protocol).

The tasks, scorers and solvers are listed once, in ``_registry`` (Inspect's entry point),
and re-exported here. The package's version is its distribution's (pyproject.toml).
"""

from importlib.metadata import PackageNotFoundError, version

# The one task list; a task named like its family folder (gemex, medreason, med_cmr) must be
# bound here after the subpackages are imported, or the name would be the subpackage.
from inspect_medreason._registry import *  # noqa: F403
from inspect_medreason._registry import __all__ as __all__

try:
    __version__ = version("inspect-medreason")
except PackageNotFoundError:  # a checkout on PYTHONPATH, not installed
    __version__ = "unknown"
