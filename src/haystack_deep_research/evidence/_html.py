"""
The URLs of raw HTML in a report, read with the standard library's HTML parser.

Every start tag is read with its attributes decoded as a browser decodes them. A tag's URLs are the values of its
URL attributes (``href``, ``src``, ``action``, ``poster``, ...), each candidate of ``srcset`` and ``ping``, the
``url(...)`` of a ``style`` and the target of a ``<meta http-equiv="refresh">``. An anchor ``<a>`` is paired with
its closing tag, so that its content can be kept when the link goes. Comments and the content of ``<script>`` and
``<style>`` hold no tags, but a comment that never closes is read as text, so the tags after it count (and the reading
stays linear). A tag left open at the end (``<a href="//x.example`` with no closing quote) runs on, in a browser, into
what follows; it is read as if closed there, and spans to the end.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

__all__ = ["Tag", "read_tags"]

_URL_ATTRIBUTES = frozenset(
    {
        "action",
        "background",
        "cite",
        "codebase",
        "data",
        "dynsrc",
        "formaction",
        "href",
        "icon",
        "longdesc",
        "lowsrc",
        "manifest",
        "poster",
        "src",
        "usemap",
        "xlink:href",
    }
)
_CSS_URL = re.compile(r"""url\(\s*(?:"([^"]*)"|'([^']*)'|([^)\s]*))""", re.IGNORECASE)
_DECLARATION = re.compile(r"<!(?!--)")
_COMMENT = re.compile(r"<!--")
_INSTRUCTION = re.compile(r"<\?")
_REFRESH = re.compile(r"url\s*=\s*['\"]?([^'\"\s]+)", re.IGNORECASE)


@dataclass
class Tag:
    """
    One start tag that names URLs.

    :param name: The tag name, lower-cased.
    :param urls: Its URLs, in attribute order.
    :param start: Offset of ``<`` in the parsed text.
    :param end: Offset after ``>``.
    :param close: For an anchor, the span of its closing ``</a>``, if there is one.
    """

    name: str
    urls: list[str]
    start: int
    end: int
    close: tuple[int, int] | None = None


def _urls(name: str, attributes: list[tuple[str, str | None]]) -> list[str]:
    values = {key: value or "" for key, value in attributes}
    urls: list[str] = []
    for key, given in attributes:
        value = given or ""
        if key in _URL_ATTRIBUTES:
            urls.append(value)
        elif key in ("srcset", "imagesrcset"):
            urls += [candidate.split()[0] for candidate in value.split(",") if candidate.split()]
        elif key == "ping":
            urls += value.split()
        elif key == "style":
            urls += [next(group for group in match.groups() if group is not None) for match in _CSS_URL.finditer(value)]
        elif key == "content" and name == "meta" and values.get("http-equiv", "").lower() == "refresh":
            urls += [match.group(1) for match in _REFRESH.finditer(value)]
    return [url for url in (url.strip() for url in urls) if url]


class _Reader(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text = text
        self.tags: list[Tag] = []
        self.anchors: list[Tag] = []
        self.line_starts = [0] + [match.end() for match in re.finditer("\n", text)]

    def _offset(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = self._tag(tag, attrs)
        if tag == "a":
            self.anchors.append(found)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._tag(tag, attrs)

    def _tag(self, tag: str, attrs: list[tuple[str, str | None]]) -> Tag:
        start = self._offset()
        found = Tag(tag, _urls(tag, attrs), start, start + len(self.get_starttag_text() or ""))
        if found.urls:
            self.tags.append(found)
        return found

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self.anchors:
            start = self._offset()
            end = self.text.find(">", start)
            self.anchors.pop().close = (start, end + 1 if end >= 0 else len(self.text))


def _neutral(text: str) -> str:
    """
    ``text`` as the parser is fed it, of the same length: a declaration names no URL, and the parser may fail on a bad
    one; a comment or processing instruction that never closes is read as text, so the tags after it still count.
    (The parser itself reads a never closed one again from each ``<`` that follows, in time quadratic in their number.)
    """
    last_close, last_end = text.rfind("-->"), text.rfind(">")
    text = _COMMENT.sub(lambda found: " !--" if found.start() + 2 > last_close else found.group(), text)
    text = _INSTRUCTION.sub(lambda found: " ?" if found.start() > last_end else found.group(), text)
    return _DECLARATION.sub(" !", text)


def read_tags(text: str) -> list[Tag]:
    """The start tags that name URLs, in document order, with offsets in ``text``."""
    reader = _Reader(text)
    reader.feed(_neutral(text))
    rest = reader.rawdata  # what the parser could not finish: a tag left open runs on into what follows it
    reader.close()
    if re.match(r"<[A-Za-z]", rest):
        start = len(text) - len(rest)
        for ending in ('">', "'>", ">"):
            finished = _Reader(rest + ending)
            finished.feed(_neutral(rest + ending))
            finished.close()
            if finished.tags:
                return reader.tags + [Tag(tag.name, tag.urls, start, len(text)) for tag in finished.tags[:1]]
    return reader.tags
