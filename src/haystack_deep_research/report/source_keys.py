"""
Sources cited by number while the report is written, by URL once it is.

A report part's writer is shown its allowed sources as a numbered list and cites each claim as ``[short title](n)``;
the reply's ``(n)`` targets are replaced with the URLs before the part joins the report, so the published report
cites full URLs and is verified as before. The writer then copies a number, not a URL, into every citation: a cited
URL is 15 to 40 tokens of output that a number replaces with one, on the most expensive model of the run, and the
notes it reads cite by number too (their closing Sources lists, which the numbered list repeats, are left out).

- :meth:`SourceKeys.shorten`: a note's inline links to allowed URLs point to their numbers instead;
- :meth:`SourceKeys.expand`: a reply's links to a number point to that source's URL again; a link to a number
  that is no source's, or to a target that is neither a number, an absolute URL nor an anchor, keeps its text and
  loses the link (it could lead nowhere). Links to full URLs are kept as they are: the report's verification
  checks them.

Numbers are given once per report, in the order of the run's allowed URLs, so every part calls a source by the same
number.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from haystack_deep_research.evidence.entry import normalize_url

__all__ = ["SourceKeys", "without_sources_list"]

_TEXT = r"(?P<text>(?:[^\[\]\n]|\[[^\[\]\n]*\])*)"
"""A link's text: no line break, and brackets one level deep at most (a search title such as "[PDF] Tide tables")."""
_LINK = re.compile(r"(?<!!)\[" + _TEXT + r"\]\(\s*<?(?P<target>[^\s()<>]+)>?(?:\s+\"[^\"\n]*\")?\s*\)")
_NUMBERS = re.compile(r"(?<!!)\[" + _TEXT + r"\]\(\s*(?P<numbers>\d+(?:\s*[,;]\s*\d+)+)\s*\)")
"""A link to several sources at once, ``[NASA; NOAA](1, 2)``: the writer was asked for one number a link."""
_KEPT = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//|#)", re.IGNORECASE)
"""Link targets kept as they are: absolute URLs (any scheme, or ``//``) and anchors within the report."""
_SOURCES_LIST = re.compile(
    r"\n[ \t]*(?:#+[ \t]*)?(?:\*\*)?Sources(?:\*\*)?:?(?:\*\*)?[ \t]*\n"
    r"(?:[ \t]*(?:(?:[-*+]|\d+[.)])[ \t]+[^\n]*|<?https?://[^\n]*)?\n?)*\Z",
    re.IGNORECASE,
)
"""A closing Sources list: a ``Sources`` line, then only list items, bare URLs and blank lines to the end."""


def without_sources_list(note: str) -> str:
    """
    :param note: A researcher's note.
    :returns: The note without a closing ``Sources:`` list (a ``Sources`` line and everything after it).
    """
    return _SOURCES_LIST.sub("", note.strip()).strip()


class SourceKeys:
    """
    The numbers of one report's sources (see the module docstring).

    :param urls: The URLs the report may cite, in order; the first is number 1.
    """

    def __init__(self, urls: Iterable[str]) -> None:
        self._urls: dict[str, str] = {}
        self._numbers: dict[str, str] = {}
        for url in urls:
            key = normalize_url(url)
            if key not in self._numbers:
                number = str(len(self._urls) + 1)
                self._urls[number] = url
                self._numbers[key] = number

    def number(self, url: str) -> str:
        """
        :param url: An allowed URL.
        :returns: Its number.
        :raises KeyError: If the URL is not one of the report's sources.
        """
        return self._numbers[normalize_url(url)]

    def numbers(self, urls: Iterable[str]) -> list[str]:
        """:returns: The numbers of ``urls``, all of them allowed, in the same order."""
        return [self.number(url) for url in urls]

    def shorten(self, text: str) -> str:
        """
        :param text: A note (or any text the writer reads) with Markdown links.
        :returns: The text with every inline link to an allowed URL pointing to its number.
        """

        def replace(match: re.Match[str]) -> str:
            number = self._numbers.get(normalize_url(match["target"]))
            return match[0] if number is None else f"[{match['text']}]({number})"

        return _LINK.sub(replace, text)

    def expand(self, text: str) -> str:
        """
        :param text: A writer's reply.
        :returns: The reply with every link to a source's number pointing to its URL (a link to several numbers
            becomes one link per known source), and every link to an unknown number or to a relative target reduced
            to its text.
        """

        def several(match: re.Match[str]) -> str:
            known = [self._urls[n] for n in re.split(r"\s*[,;]\s*", match["numbers"]) if n in self._urls]
            return ", ".join(f"[{match['text']}]({url})" for url in dict.fromkeys(known)) or match["text"]

        def replace(match: re.Match[str]) -> str:
            target = match["target"]
            if target in self._urls:
                return f"[{match['text']}]({self._urls[target]})"
            return match[0] if _KEPT.match(target) else match["text"]

        return _LINK.sub(replace, _NUMBERS.sub(several, text))
