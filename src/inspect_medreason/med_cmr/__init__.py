"""Med-CMR: the public benchmark behind the MedReason challenge, in its release layout."""

from inspect_medreason.med_cmr.med_cmr import med_cmr
from inspect_medreason.med_cmr.scorer import med_cmr_scorer

__all__ = ["med_cmr", "med_cmr_scorer"]
