"""
A generated research corpus: one topic split into 50 facets, several pages per facet (HTML and PDF), plus
distractor pages on unrelated topics. Everything is made from a seed; nothing is downloaded.

Each page states numbered facts such as ``Finding HP-2-3-1: ...``; a fact id names its facet, page and position,
so a summary or report that keeps facts can be traced back to the page they came from.
"""

from __future__ import annotations

import html
import random
import re
from dataclasses import dataclass
from typing import Literal

_FILLER = (
    "analysts compared field records with laboratory baselines across several seasons",
    "the survey team repeated each measurement to rule out instrument drift",
    "operators reported that documentation quality varied between regions",
    "independent reviewers flagged the small sample in two of the sites",
    "results were normalised to a common reference year before comparison",
    "the authors caution that local regulation shapes most of the variance",
    "follow-up interviews explained several outliers in the raw tables",
    "the dataset covers residential and light commercial installations",
    "a sensitivity analysis kept the main conclusion within a narrow band",
    "costs are reported in constant currency without subsidies",
    "seasonal effects were separated from long-term trends",
    "the methodology section lists every exclusion rule applied",
)
_METRICS = ("median value", "mean change", "upper quartile", "observed share", "reported range", "peak figure")
_UNITS = ("percent", "kilowatt-hours", "euros per unit", "days", "hours per year", "points on the index")
_DISTRACTOR_TOPICS = (
    ("coastal erosion", ("sediment budgets", "sea walls", "dune restoration")),
    ("urban beekeeping", ("hive density", "forage plants", "honey yield")),
    ("railway signalling", ("interlocking", "train detection", "cab signalling")),
)
TOPIC = "residential heat pumps"
FACETS = (
    "cold climate efficiency",
    "installation cost",
    "grid load impact",
    "refrigerant safety",
    "maintenance needs",
    "noise levels",
    "subsidy programmes",
)
MORE_FACETS = (
    "defrost cycles",
    "ground source loops",
    "domestic hot water",
    "smart controls",
    "demand response",
    "retrofit insulation",
    "radiator sizing",
    "underfloor heating",
    "compressor lifetime",
    "warranty claims",
    "installer training",
    "supply chains",
    "energy labels",
    "consumer satisfaction",
    "rental housing",
    "social housing",
    "district heating",
    "carbon savings",
    "electricity tariffs",
    "peak demand",
    "solar pairing",
    "battery pairing",
    "outdoor unit placement",
    "planning permission",
    "building codes",
    "heat loss surveys",
    "flow temperatures",
    "seasonal performance",
    "frost protection",
    "humidity control",
    "indoor air quality",
    "cooling mode",
    "multi split systems",
    "apartment installations",
    "heritage buildings",
    "financing options",
    "resale value",
    "end of life recycling",
    "manufacturer market share",
    "hybrid boilers",
    "water source systems",
    "commissioning checks",
    "performance monitoring",
)
"""Facets written after the original ones and the distractors, so the pages of the first seven stay byte for byte
the same: the scenarios with 20 and 50 sub-questions get a facet each."""

PageKind = Literal["html", "pdf"]


@dataclass(frozen=True)
class CorpusPage:
    """One page of the corpus, served by the web server at ``path`` and indexed by the search server."""

    path: str
    title: str
    kind: PageKind
    facet: str
    paragraphs: tuple[str, ...]

    @property
    def text(self) -> str:
        """The page's text as a reader would extract it: title, then paragraphs."""
        return "\n\n".join((self.title, *self.paragraphs))

    def html(self) -> str:
        """The page as a small but realistic HTML document, with navigation and footer around the article."""
        body = "\n".join(f"<p>{html.escape(p)}</p>" for p in self.paragraphs)
        title = html.escape(self.title)
        return (
            f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title></head><body>"
            "<nav><a href='/'>Home</a> | <a href='/about'>About</a> | <a href='/archive'>Archive</a></nav>"
            f"<article><h1>{title}</h1>\n{body}\n</article>"
            "<footer>Published by the Open Evidence Collective. All figures are illustrative.</footer></body></html>"
        )

    def pdf_pages(self) -> list[str]:
        """The page's text split into PDF pages of about three paragraphs each."""
        chunks = [self.paragraphs[i : i + 3] for i in range(0, len(self.paragraphs), 3)]
        return ["\n\n".join(((self.title,) if i == 0 else ()) + chunk) for i, chunk in enumerate(chunks)]


@dataclass(frozen=True)
class Corpus:
    """The pages and the question the benchmark asks about them."""

    topic: str
    facets: tuple[str, ...]
    pages: tuple[CorpusPage, ...]

    def question(self, aspects: int) -> str:
        """
        The user's question, naming the first ``aspects`` facets as the aspects to cover.

        :param aspects: How many facets the question asks about.
        :returns: The question text.
        """
        chosen = "; ".join(self.facets[:aspects])
        return f"What does the evidence say about {self.topic}? Aspects to cover: {chosen}."


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _code(text: str) -> str:
    return "".join(w[0] for w in text.split()).upper()


def _paragraph(rng: random.Random, topic: str, facet: str, fact_id: str) -> str:
    value = round(rng.uniform(1.0, 95.0), 1)
    fact = (
        f"Finding {fact_id}: for {topic}, the {rng.choice(_METRICS)} of {facet} was {value} "
        f"{rng.choice(_UNITS)} in the {rng.choice(('northern', 'central', 'southern', 'coastal'))} sample."
    )
    filler = [rng.choice(_FILLER).capitalize() + "." for _ in range(rng.randint(4, 6))]
    return " ".join([fact, *filler])


def _page(
    rng: random.Random, topic: str, facet: str, facet_index: int, number: int, paragraphs: int, pdf_every: int
) -> CorpusPage:
    kind: PageKind = "pdf" if pdf_every and number % pdf_every == pdf_every - 1 else "html"
    code = _code(topic)
    facts = [_paragraph(rng, topic, facet, f"{code}-{facet_index}-{number}-{k}") for k in range(1, paragraphs + 1)]
    title = f"{topic.capitalize()}: {facet} report {number + 1}"
    path = f"/{_slug(topic)}/{_slug(facet)}/{number + 1}.{'pdf' if kind == 'pdf' else 'html'}"
    return CorpusPage(path, title, kind, facet, tuple(facts))


def build_corpus(
    *,
    seed: int = 7,
    pages_per_facet: int = 5,
    paragraphs_per_page: int = 20,
    pdf_every: int = 4,
    distractors_per_topic: int = 2,
) -> Corpus:
    """
    Generate the corpus.

    :param seed: The random seed; the same seed gives the same pages, byte for byte.
    :param pages_per_facet: Pages written about each facet of the main topic.
    :param paragraphs_per_page: Paragraphs per page (each opens with one numbered finding).
    :param pdf_every: Every n-th page of a facet is a PDF; 0 makes only HTML pages.
    :param distractors_per_topic: Pages on each unrelated topic, to give the search something to rank below.
    :returns: The corpus.
    """
    rng = random.Random(seed)
    pages = [
        _page(rng, TOPIC, facet, f_index + 1, n, paragraphs_per_page, pdf_every)
        for f_index, facet in enumerate(FACETS)
        for n in range(pages_per_facet)
    ]
    for topic, facets in _DISTRACTOR_TOPICS:
        pages.extend(
            _page(rng, topic, facet, f_index + 1, n, paragraphs_per_page, pdf_every)
            for f_index, facet in enumerate(facets)
            for n in range(distractors_per_topic)
        )
    pages.extend(
        _page(rng, TOPIC, facet, f_index + 1, n, paragraphs_per_page, pdf_every)
        for f_index, facet in enumerate(MORE_FACETS, start=len(FACETS))
        for n in range(pages_per_facet)
    )
    return Corpus(TOPIC, FACETS + MORE_FACETS, tuple(pages))
