"""The judge meta-evaluation: probes with known score bands for the two judge roles."""

from inspect_medreason.judge_meta.extractor_meta import extractor_meta
from inspect_medreason.judge_meta.judge_meta import judge_meta
from inspect_medreason.judge_meta.scorer import judge_meta_scorer

__all__ = ["extractor_meta", "judge_meta", "judge_meta_scorer"]
