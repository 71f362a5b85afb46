"""The rating round: clinicians score a blinded, stratified sample of judged open-ended cases,
and their ratings are read back to hold the judges to them (``agreement --ratings``,
``calibrate``). ``medreason rate`` is its shell (``cli/rate.py``); from Python::

    from inspect_medreason.rating import build_rating_page, read_rating_round

    page = build_rating_page(["logs/"], cases=60, seed=0)
    Path("page.html").write_text(page.html, encoding="utf-8")
    ...  # raters save their ratings from the page
    ratings = read_rating_round(["alice.json", "bob.json"]).to_pandas()

Its modules, each importing only those above it in this list:

- ``rules``: what every rating holds to (the longest name and note, how raters' names are
  compared);
- ``cases``: the cases a round rates (the judged open-ended cases of the logs, their seeded
  stratified sample, the judges' rubric, the opaque ids that blind a case, its images);
- ``store``: a served round's SQLite file, one row per rating as it is given;
- ``ratings_file``: the ratings read back, from the files raters save and from stores,
  merged into one ``RatingRound`` and mapped to the logged samples;
- ``page``: the self-contained HTML page raters read (``build_rating_page``; the template is
  ``page.html``);
- ``server``: the page served to a team, every rating stored as it is given
  (``open_rating_server``, ``served_round``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspect_medreason.rating.cases import RATED_COMPONENTS, SampleRef
    from inspect_medreason.rating.page import RatingPage, build_rating_page
    from inspect_medreason.rating.ratings_file import (
        RATINGS_FORMAT,
        RatingRound,
        map_round_to_logs,
        read_rating_round,
    )
    from inspect_medreason.rating.server import (
        RatingServer,
        open_rating_server,
        served_round,
    )

# Each public name and the module that defines it: imported on first use, so that
# importing one module of the round (``cases``, which the analyses read) does not import the
# page and the server, nor the analyses they read logs with.
_HOMES = {
    "RATED_COMPONENTS": "cases",
    "SampleRef": "cases",
    "RatingPage": "page",
    "build_rating_page": "page",
    "RATINGS_FORMAT": "ratings_file",
    "RatingRound": "ratings_file",
    "map_round_to_logs": "ratings_file",
    "read_rating_round": "ratings_file",
    "RatingServer": "server",
    "open_rating_server": "server",
    "served_round": "server",
}

__all__ = [
    "RATED_COMPONENTS",
    "RATINGS_FORMAT",
    "RatingPage",
    "RatingRound",
    "RatingServer",
    "SampleRef",
    "build_rating_page",
    "map_round_to_logs",
    "open_rating_server",
    "read_rating_round",
    "served_round",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
