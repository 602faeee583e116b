"""
The main text and title of an HTML page; runs inside a parser process (see ``_worker.py``).

trafilatura finds the main text and drops boilerplate such as menus and footers. Before any parsing, markup that
would make the parser itself take quadratic time is refused: libxml2 compares every attribute of an element with
every other one, so an element with tens of thousands of attributes costs minutes. The check is one linear regular
expression scan over the tags long enough to hold many attributes.
"""

from __future__ import annotations

import re

import lxml.etree
import lxml.html
import trafilatura

from haystack_deep_research.errors import ExtractionError
from haystack_deep_research.web._body import decode_html

__all__ = ["html_text"]

# Only a tag this long can hold enough attributes to matter (each takes at least two characters).
_LONG_TAG = re.compile(rb"<[A-Za-z][^<>]{512,}>")
_ATTRIBUTE = re.compile(rb"""[^\s"'<>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'<>=`]+))?""")
# The parser's work on attributes grows with the square of their number per element. 50 million (about 7,000
# attributes on one element, or 1,000 elements of 220) costs it about a tenth of a second; ordinary pages stay
# far below (an element rarely has more than 30 attributes).
_MAX_ATTRIBUTE_WORK = 50_000_000


def html_text(body: bytes, *, charset: str | None, url: str) -> tuple[str, str]:
    """
    The title (``""`` when there is none) and main text of an HTML or XHTML page.

    :raises ExtractionError: The markup is pathological or cannot be parsed, or the page has no main text.
    :raises MemoryError: Parsing needed more memory than the process may use.
    """
    _check_attributes(body, url)
    # Decoded once, here: the text and the title are read from the same characters, whatever the parsers guess.
    markup = decode_html(body, charset)
    try:
        # Without trafilatura's metadata pass: it looks for dates, authors and licences this library never uses,
        # and costs about four times the text extraction itself.
        result = trafilatura.bare_extraction(
            markup, url=url, with_metadata=False, include_comments=False, include_tables=True
        )
        text = (getattr(result, "text", None) or "").strip()
    except MemoryError:
        raise
    except Exception as exc:  # trafilatura and lxml raise many unrelated types on bad markup
        raise ExtractionError(f"The page at {url} could not be parsed as HTML ({type(exc).__name__}).") from exc
    if not text:
        raise ExtractionError(f"The page at {url} has no main text to read.")
    return _title(markup), text


def _check_attributes(body: bytes, url: str) -> None:
    work = 0
    most = 0
    for tag in _LONG_TAG.finditer(body):
        count = sum(1 for _ in _ATTRIBUTE.finditer(tag.group(), 1))
        work += count * count
        most = max(most, count)
    if work > _MAX_ATTRIBUTE_WORK:
        raise ExtractionError(
            f"The page at {url} was not parsed: its elements carry too many attributes (up to {most} on one "
            "element), which would take the HTML parser minutes."
        )


def _title(markup: str) -> str:
    """
    The page's title: its ``og:title``, else its only ``<h1>``, else its ``<title>`` tag, whitespace collapsed.

    A page whose markup lxml cannot parse simply has no title here.
    """
    data = markup.encode("utf-8")
    try:
        # The encoding is given: the markup's own <meta charset> or XML declaration no longer applies to it.
        tree = lxml.html.fromstring(data, parser=lxml.html.HTMLParser(encoding="utf-8")) if data.strip() else None
    except (lxml.etree.ParserError, ValueError):
        return ""
    if tree is None:
        return ""
    headings = tree.findall(".//h1")
    candidates = (
        *(meta.get("content") for meta in tree.iterfind(".//meta[@property='og:title']")),
        headings[0].text_content() if len(headings) == 1 else None,
        tree.findtext(".//title"),
    )
    return next((" ".join(c.split()) for c in candidates if c and c.strip()), "")
