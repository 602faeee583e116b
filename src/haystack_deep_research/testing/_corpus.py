"""The kit's sample corpus: a few short pages on solar power and storage, served when no ``--corpus`` is given."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SAMPLE_PAGES", "SAMPLE_QUESTION", "CorpusPage"]


@dataclass(frozen=True)
class CorpusPage:
    """
    One page of a kit corpus.

    :param path: Its path on the web server, for example ``/solar.html``.
    :param title: Its title.
    :param text: Its text, one paragraph per line.
    """

    path: str
    title: str
    text: str


SAMPLE_QUESTION = "How fast is solar power growing, and what limits it?"
"""A question the sample corpus answers."""

SAMPLE_PAGES = (
    CorpusPage(
        "/solar-growth.html",
        "Solar power growth",
        "Solar power is the fastest growing source of electricity. Installed solar capacity grew by about a third "
        "in 2023, led by utility-scale plants.\nFalling module prices keep solar growing fast in most markets.",
    ),
    CorpusPage(
        "/grid-limits.html",
        "What limits solar power",
        "Grid connections limit how fast solar power can grow: projects wait years in interconnection queues.\n"
        "Curtailment rises where solar output outgrows local demand at midday.",
    ),
    CorpusPage(
        "/battery-storage.html",
        "Battery storage and solar",
        "Battery storage moves solar power from midday to the evening peak. Storage installations doubled in 2023 "
        "as battery prices fell.\nStorage eases the limits that grids put on solar growth.",
    ),
)
"""The pages served by default."""
