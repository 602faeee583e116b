"""
Evidence kept against summarizer input: an offline measurement (no model, no server) of what the summarizer is
handed for each page a researcher reads, over a range of passage budgets and selection methods.

    python benchmarks/evidence_kept.py            # writes the evidence-kept section of docs/benchmarks.md

For every page of the facets the benchmark's scenarios ask about, in both suites (the short pages of
:mod:`benchmarks.sim.corpus` and the real-size pages of :mod:`benchmarks.sim.realsize`), the page is extracted as
``read_url`` extracts it (trafilatura for HTML, pypdf for the generated PDF) and asked the researcher's question
(``<topic>: <facet>``). Each method picks what the summarizer would read; the figures are the findings of the page
that are in it, whole, and the tokens of the summarizer's prompt (the library's own template, a quarter of the
characters, as the simulator counts).

The findings' ids hold digits (``Finding RS-2-1-3:``); so that they cannot make a passage look concrete, the
digits of every id are replaced by letters before any method sees the page.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.harness.sections import write_section  # noqa: E402
from benchmarks.sim.corpus import Corpus, CorpusPage, build_corpus  # noqa: E402
from benchmarks.sim.realsize import build_real_corpus  # noqa: E402
from benchmarks.sim.tokens import count_text  # noqa: E402
from haystack_deep_research._prompts import OMITTED  # noqa: E402
from haystack_deep_research.settings.grouped import DEFAULT_PASSAGE_BUDGET  # noqa: E402
from haystack_deep_research.testing import make_pdf  # noqa: E402
from haystack_deep_research.tools import passages  # noqa: E402
from haystack_deep_research.web._parsers import html_text, pdf_text  # noqa: E402

BUDGETS = (1_000, 2_000, 2_500, 3_000, 4_000, 6_000, 8_000)
FACETS_MEASURED = 7
_ID = re.compile(r"(Finding [A-Z]+-)(\d+)-(\d+)-(\d+):")
_MASKED = re.compile(r"Finding [A-Z]+-[a-j]+-[a-j]+-[a-j]+: [^\n]*? sample\.")
_LETTERS = str.maketrans("0123456789", "abcdefghij")

Selector = Callable[[str, str, int], passages.Excerpt]


def _mask(text: str) -> str:
    return _ID.sub(lambda m: f"{m.group(1)}{m.group(2)}-{m.group(3)}-{m.group(4)}:".translate(_LETTERS), text)


def page_text(page: CorpusPage) -> str:
    """The page's text as ``read_url`` extracts it, with the findings' ids masked."""
    if page.kind == "pdf":
        _, text = pdf_text(
            make_pdf(page.pdf_pages(), title=page.title), url=page.path, max_pages=50, max_decompressed=50_000_000
        )
    else:
        _, text = html_text(page.html().encode(), charset="utf-8", url="http://127.0.0.1" + page.path)
    return _mask(text)


def _greedy(parts: Sequence[str], scores: list[float], budget: int) -> passages.Excerpt:
    order = sorted(range(len(parts)), key=lambda i: (-scores[i], i))
    kept, used = [], 0
    for index in order:
        if used + len(parts[index]) <= budget:
            kept.append(index)
            used += len(parts[index])
    kept.sort()
    return passages.Excerpt(tuple(parts[i] for i in kept), tuple(kept), len(parts))


def _lexical(text: str, question: str, budget: int) -> passages.Excerpt:
    """BM25 alone: the selection before concrete content counted."""
    if len(text) <= budget:
        return passages.Excerpt((text,), (0,), 1)
    return _greedy(*passages._scores(text, question), budget)


def _library(text: str, question: str, budget: int) -> passages.Excerpt:
    return passages.relevant_passages(text, question, budget=budget)


def _own_terms(text: str, question: str, budget: int) -> passages.Excerpt:
    """The library's selection asked only the sub-question's own terms (the facet, not the run's topic)."""
    return passages.relevant_passages(text, question.split(":", 1)[-1], budget=budget)


def _windows(text: str, question: str, budget: int) -> passages.Excerpt:
    """Windows of three passages around the best-scored ones (lexical + concrete), while they fit."""
    if len(text) <= budget:
        return passages.Excerpt((text,), (0,), 1)
    parts, lexical = passages._scores(text, question)
    scores = [s + passages.CONCRETE_WEIGHT * passages.concrete_content(p) for s, p in zip(lexical, parts, strict=True)]
    kept: set[int] = set()
    used = 0
    for centre in sorted(range(len(parts)), key=lambda i: (-scores[i], i)):
        window = [i for i in (centre - 1, centre, centre + 1) if 0 <= i < len(parts) and i not in kept]
        size = sum(len(parts[i]) for i in window)
        if used + size <= budget:
            kept.update(window)
            used += size
    order = sorted(kept)
    return passages.Excerpt(tuple(parts[i] for i in order), tuple(order), len(parts))


def _whole_when_it_fits(text: str, question: str, budget: int) -> passages.Excerpt:
    """The main text whole when it fits ``budget`` characters, else the library's selection at its default."""
    if len(text) <= budget:
        return passages.Excerpt((text,), (0,), 1)
    return passages.relevant_passages(text, question, budget=DEFAULT_PASSAGE_BUDGET)


WHOLE_BUDGETS = (8_000, 12_000, 16_000, 20_000)
"""The budgets of the whole-when-it-fits method: page sizes, not excerpt sizes."""

METHODS: dict[str, Selector] = {
    "BM25 (before)": _lexical,
    "BM25 + concrete content (now)": _library,
    "sub-question's own terms + concrete": _own_terms,
    "windows of 3 around the best": _windows,
    "main text whole when it fits, else the default": _whole_when_it_fits,
}


@dataclass(frozen=True)
class Point:
    """One method at one budget on one suite, summed over its pages."""

    suite: str
    method: str
    budget: int
    facts: int
    total_facts: int
    tokens: int
    pages: int


def _prompt_tokens(page: CorpusPage, text: str, excerpt: passages.Excerpt, question: str) -> int:
    messages = passages.summarizer_prompt("http://127.0.0.1" + page.path, page.title, text, excerpt, question)
    return sum(count_text(m.text or "") + 4 for m in messages)


def measure(
    suite: str, corpus: Corpus, budgets: tuple[int, ...] = BUDGETS, facets: int = FACETS_MEASURED
) -> list[Point]:
    """
    :param suite: The suite's name, for the table.
    :param corpus: Its pages.
    :param budgets: The passage budgets, in characters.
    :param facets: How many of the corpus's facets (the first ones, as the scenarios ask them) to measure.
    :returns: One point per method and budget, plus the whole page (budget 0).
    """
    wanted = set(corpus.facets[:facets])
    pages = [(p, page_text(p)) for p in corpus.pages if p.facet in wanted]
    total = sum(len(set(_MASKED.findall(text))) for _, text in pages)
    points = []
    for method, select in (("whole page", _lexical), *METHODS.items()):
        chosen = WHOLE_BUDGETS if select is _whole_when_it_fits and budgets == BUDGETS else budgets
        for budget in (0,) if method == "whole page" else chosen:
            facts = tokens = 0
            for page, text in pages:
                question = f"{corpus.topic}: {page.facet}"
                excerpt = select(text, question, budget or len(text))
                handed = excerpt.text(OMITTED)
                facts += sum(f in handed for f in set(_MASKED.findall(text)))
                tokens += _prompt_tokens(page, text, excerpt, question)
            points.append(Point(suite, method, budget, facts, total, tokens, len(pages)))
    return points


def table(points: list[Point]) -> list[str]:
    """The curve as Markdown table lines."""
    lines = [
        "| suite | method | budget (chars) | facts handed to the summarizer | summarizer input tokens per page |",
        "|---|---|---|---|---|",
    ]
    for p in points:
        budget = "whole page" if p.budget == 0 else f"{p.budget:,}"
        share = f"{p.facts} of {p.total_facts} ({100 * p.facts / max(1, p.total_facts):.0f}%)"
        lines.append(f"| {p.suite} | {p.method} | {budget} | {share} | {p.tokens // max(1, p.pages):,} |")
    return lines


def section(points: list[Point]) -> str:
    """The evidence-kept section of docs/benchmarks.md."""
    default = DEFAULT_PASSAGE_BUDGET
    lines = [
        "<!-- evidence-kept:start (generated by benchmarks/evidence_kept.py) -->",
        "## Evidence kept against summarizer input",
        "",
        "Offline, no model: for each page of the first seven facets (the short pages, 9 KB of text with a finding in "
        "every paragraph; and the real-size pages, 8-20 KB of article text, mostly general prose, inside 30-40 KB "
        "of navigation, cookie banner, related links, comments and footer, a third of them PDFs), which of the "
        "page's findings are whole in what the summarizer is handed, and the tokens of its prompt. Findings' ids "
        "are masked so their digits do not count as figures (see `benchmarks/evidence_kept.py`).",
        "",
        *table(points),
        "",
        f"Chosen default: BM25 plus concrete content at `passage_budget={default:,}` characters. Ranked on words "
        "alone, the real-size pages hand the summarizer the prose that repeats the question's words, and the "
        "figures are left out whatever the budget short of the whole page; counting figures, dates and names "
        "(a passage full of them scores twice a perfect word match) keeps most of them from 2,000 characters on. "
        "At 2,500 the real-size pages keep every finding for about a fifth of the whole page's tokens, and the "
        "short pages keep more findings than BM25 did at the former default of 2,000, for about a fifth more "
        "summarizer input (the summarizer runs on the small model: see the cost section). Asking only the "
        "sub-question's own terms buys nothing more; windows around the best passages spend the budget on "
        "neighbours that hold no figure. Handing the main text whole when it fits 12,000 characters (3,000 "
        "tokens) hands over every finding of the short pages, whose every paragraph holds one, for three times "
        "the default's tokens, and on the real-size pages no more findings than the default for up to 4.7 times "
        "its tokens. The default spends where the real-size pages need it; a caller who wants every finding of "
        "a dense page sets a larger `passage_budget`. It stays a count of characters; 0 still hands the whole "
        "page.",
        "<!-- evidence-kept:end -->",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "benchmarks.md")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    points = measure("short", build_corpus(seed=args.seed)) + measure("real-size", build_real_corpus(seed=args.seed))
    print("\n".join(table(points)))
    write_section(args.doc, section(points))
    print(f"Wrote the evidence-kept section of {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
