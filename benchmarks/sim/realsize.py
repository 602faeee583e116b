"""
A corpus of real-size pages: articles of 8-20 KB of text inside a few tens of KB of site furniture (navigation,
a cookie banner, related links, reader comments, footer links), and PDFs of several pages. Generated from a seed;
nothing is downloaded.

It asks the same question as :mod:`benchmarks.sim.corpus` (same topic, same facets) but is written the way real
articles are: most paragraphs are general prose that repeats the topic's and facet's words, and only a few
sentences, spread from the first paragraphs to the last, carry the figures (a date, a person, an organisation, a
number and a unit). Those sentences name no word of the question, so a selection that ranks passages only by
the words they share with the question hands the summarizer prose and misses the figures.

Each figure sentence is a numbered finding (``Finding RS-2-1-3: ... sample.``) like the short corpus's, so the
simulated roles and the fact count treat both suites alike.
"""

from __future__ import annotations

import html
import random

from benchmarks.sim.corpus import FACETS, MORE_FACETS, TOPIC, Corpus, CorpusPage, _slug

CODE = "RS"
"""The fact-id prefix of this corpus (the short corpus uses the topic's initials)."""

_PROSE = (
    "Interest in {topic} has grown quickly, and {facet} is now one of the questions households ask first.",
    "Installers, manufacturers and policy makers all have a view on {facet}, and those views rarely agree.",
    "For most owners of {topic}, {facet} matters less in the brochure than in the first winter of use.",
    "The debate about {facet} is older than the current wave of {topic}, but the stakes have changed.",
    "Much of what is written about {facet} repeats claims that were never checked against field data.",
    "Critics argue that the discussion of {topic} and {facet} is driven by marketing more than by evidence.",
    "Supporters reply that {facet} has improved with every generation of {topic} sold in the region.",
    "Local conditions, from the age of the housing stock to the habits of occupants, shape {facet} strongly.",
    "It is easy to find strong opinions on {facet}; it is harder to find measurements that support them.",
    "Several trade bodies have published guidance on {facet} for {topic}, with different emphases.",
    "What follows draws on interviews, published studies and the experience of people living with {topic}.",
    "Nobody we spoke to thought that {facet} alone decides whether {topic} are a good choice for a home.",
    "The picture is more mixed than either side of the argument about {topic} usually admits.",
    "A recurring theme is that {facet} depends on how carefully a system is designed and installed.",
    "Readers who want a single number for {facet} will be disappointed: the evidence does not offer one.",
    "Even so, some patterns in {facet} are consistent enough to be useful when planning for {topic}.",
)
_NAMES = ("Ana Ruiz", "Tomas Berg", "Mei Lin", "Oskar Nowak", "Priya Raman", "Jonas Weber", "Lea Martin", "Ivo Kral")
_ORGS = (
    "Northern Building Survey",
    "Institute for Domestic Energy",
    "Coastal Housing Trust",
    "Federal Statistics Office",
    "Installer Quality Panel",
    "Regional Grid Operator",
)
_MONTHS = ("January", "March", "April", "June", "August", "September", "October", "November")
_MEASURES = ("median figure", "average result", "highest reading", "share of homes", "typical value", "lowest reading")
_UNITS = ("percent", "kilowatt-hours", "euros per unit", "days", "hours per year", "decibels")
_REGIONS = ("northern", "central", "southern", "coastal", "upland", "urban")
_SECTION_TITLES = ("Background", "What the studies found", "Voices from the field", "Caveats", "Outlook")


def _fact(rng: random.Random, fact_id: str) -> str:
    value = round(rng.uniform(1.0, 95.0), 1)
    homes = rng.randint(120, 9_800)
    return (
        f"Finding {fact_id}: in {rng.choice(_MONTHS)} {rng.randint(2015, 2024)}, {rng.choice(_NAMES)} of the "
        f"{rng.choice(_ORGS)} put the {rng.choice(_MEASURES)} at {value} {rng.choice(_UNITS)} across {homes:,} "
        f"homes in the {rng.choice(_REGIONS)} sample."
    )


def _prose(rng: random.Random, topic: str, facet: str, sentences: int) -> list[str]:
    return [rng.choice(_PROSE).format(topic=topic, facet=facet) for _ in range(sentences)]


def _article(rng: random.Random, facet: str, facet_index: int, number: int, facts: int) -> tuple[str, ...]:
    """Paragraphs of 8-20 KB in all; ``facts`` of them hold one finding each, spread from first to last."""
    count = rng.randint(18, 38)
    places = sorted(rng.sample(range(count), facts))
    places[0], places[-1] = min(places[0], 1), max(places[-1], count - 2)  # one near the start, one near the end
    paragraphs: list[str] = []
    fact_number = 0
    for index in range(count):
        sentences = _prose(rng, TOPIC, facet, rng.randint(3, 5))
        if index in places:
            fact_number += 1
            sentences.insert(rng.randint(1, len(sentences)), _fact(rng, f"{CODE}-{facet_index}-{number}-{fact_number}"))
        paragraphs.append(" ".join(sentences))
    return tuple(paragraphs)


def _links(rng: random.Random, words: tuple[str, ...], count: int) -> str:
    return "".join(
        f"<li><a href='/{_slug(rng.choice(words))}/{rng.randint(1, 999)}'>{html.escape(rng.choice(words).title())}"
        "</a></li>"
        for _ in range(count)
    )


def _comments(rng: random.Random, facet: str, count: int) -> str:
    items = []
    for n in range(count):
        text = (
            f"I had mine fitted in {rng.randint(2012, 2024)} and {facet} was never a problem; "
            f"{rng.randint(2, 40)} of my neighbours say the same. Reply #{n + 1}, "
            f"posted {rng.randint(1, 28)} {rng.choice(_MONTHS)} {rng.randint(2019, 2025)}."
        )
        items.append(
            f"<li class='comment'><span class='author'>{rng.choice(_NAMES)}</span><p>{html.escape(text)}</p></li>"
        )
    return "".join(items)


_FURNITURE_WORDS = ("energy", "home", "heating", "news", "guides", "reviews", "deals", "insulation", "solar", "boilers")


class RealPage(CorpusPage):
    """A page of real size: its HTML wraps the article in a few tens of KB of site furniture."""

    def html(self) -> str:
        rng = random.Random(self.path)
        title = html.escape(self.title)
        body = []
        for index, paragraph in enumerate(self.paragraphs):
            if index and index % 8 == 0:
                body.append(f"<h2>{_SECTION_TITLES[(index // 8) % len(_SECTION_TITLES)]}</h2>")
            body.append(f"<p>{html.escape(paragraph)}</p>")
        nav = f"<nav class='menu'><ul>{_links(rng, _FURNITURE_WORDS, 80)}</ul></nav>"
        cookie = (
            "<div id='cookie-banner' class='cookie-consent'><p>We use cookies and similar technologies to improve "
            "your experience, measure traffic and show personalised offers from 214 partners. Choose Accept all, "
            "Reject all or Manage preferences.</p><button>Accept all</button><button>Reject all</button></div>"
        )
        related = (
            f"<aside class='related'><h3>Related articles</h3><ul>{_links(rng, _FURNITURE_WORDS, 40)}</ul></aside>"
        )
        comments = f"<section id='comments'><h3>Comments</h3><ol>{_comments(rng, self.facet, 30)}</ol></section>"
        footer = (
            f"<footer><ul>{_links(rng, _FURNITURE_WORDS, 120)}</ul><p>Copyright 2025 Home Energy Media.</p></footer>"
        )
        return (
            f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{title}</title></head><body>"
            f"{cookie}<header>{nav}</header><main><article><h1>{title}</h1>\n" + "\n".join(body) + "\n</article>"
            f"{related}{comments}</main>{footer}</body></html>"
        )

    def pdf_pages(self) -> list[str]:
        """The article on PDF pages of about six paragraphs each."""
        chunks = [self.paragraphs[i : i + 6] for i in range(0, len(self.paragraphs), 6)]
        return ["\n\n".join(((self.title,) if i == 0 else ()) + chunk) for i, chunk in enumerate(chunks)]


def build_real_corpus(
    *, seed: int = 7, pages_per_facet: int = 3, facts_per_page: int = 6, pdf_every: int = 3
) -> Corpus:
    """
    Generate the real-size corpus.

    :param seed: The random seed; the same seed gives the same pages, byte for byte.
    :param pages_per_facet: Pages written about each facet.
    :param facts_per_page: Findings per page, spread over the article.
    :param pdf_every: Every n-th page of a facet is a PDF; 0 makes only HTML pages.
    :returns: The corpus.
    """
    rng = random.Random(f"real-size:{seed}")
    pages: list[CorpusPage] = []
    for f_index, facet in enumerate(FACETS + MORE_FACETS, start=1):
        for n in range(pages_per_facet):
            pdf = bool(pdf_every) and n % pdf_every == pdf_every - 1
            paragraphs = _article(rng, facet, f_index, n, facts_per_page)
            title = f"{facet.capitalize()}: what the numbers say ({n + 1})"
            path = f"/real/{_slug(facet)}/{n + 1}.{'pdf' if pdf else 'html'}"
            pages.append(RealPage(path, title, "pdf" if pdf else "html", facet, paragraphs))
    return Corpus(TOPIC, FACETS + MORE_FACETS, tuple(pages))
