"""
Reading a report as a reader sees it. The reader is markdown-it-py (CommonMark, GFM tables, strikethrough, raw HTML;
linkify-it-py for bare links) set to keep every destination as written (markdown-it would otherwise leave a
``javascript:`` link as text and percent-encode the rest) and to record where each construct stands; :func:`parse`
reads a report into a :class:`Parsed`: its blocks, definitions and links, each by its place. What counts as a link is
listed in docs/evidence.md ("Citation verification"); why reading stays linear on hostile input (bare links are read
in one pass, HTML left open as text) in docs/safety.md ("Bad input").
"""

from __future__ import annotations

import functools
import html
import re
import threading
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Literal, TypeVar

if TYPE_CHECKING:
    from linkify_it import LinkifyIt
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline
    from markdown_it.token import Token

SPANS = "_haystack_deep_research_spans"
_SCHEME = re.compile(r"(?:^|[^a-z0-9.+-])([a-z][a-z0-9.+-]*)$", re.IGNORECASE)
_WWW = re.compile(r"(?:^|(?<=[\s*_~(]))www\.[^\s<>]+", re.IGNORECASE)
_WWW_NAME = re.compile(r"www\.", re.IGNORECASE)
_ENTITY_END = re.compile(r"&[A-Za-z0-9]+;$")
_MARKED = ("link_open", "image", "html_inline", "code_inline")
_ENTITY = r"&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});"
_TOKEN_BREAKS = re.compile(rf"[*_~]+|\\.|{_ENTITY}")
_DECODED = re.compile(rf"{_ENTITY}|\\[!-/:-@\[-`{{-~]")  # an entity, or a backslash before ASCII punctuation

Rule = Callable[["StateInline", bool], bool]

DOCUMENT_SCHEMES = ("doc:", "file:", "mcp:")
"""The schemes of the documents a run reads besides pages, read bare as ``http://`` links are."""


class _DocumentURI:
    """linkify-it's validator of a bare document URI: ``//``, a host and a path (``file:`` needs only the path)."""

    def __init__(self, src_path: str, *, host_required: bool) -> None:
        host = r"[\w.~-]+(?::\d{1,5})?"
        self._pattern = re.compile(rf"//(?:{host}){'' if host_required else '?'}{src_path}", re.IGNORECASE)
        self._host_required = host_required

    def validate(self, text: str, pos: int) -> int:
        found = self._pattern.match(text, pos)
        if found is None or len(found.group()) <= 2 or (not self._host_required and "/" not in found.group()[2:]):
            return 0
        return len(found.group())


@dataclass(frozen=True)
class _Parts:
    reader: MarkdownIt
    linkifier: LinkifyIt
    schemes: re.Pattern[str]
    names: re.Pattern[str]  # the schemes' names alone: found much faster than what may come before them


_LOCK = threading.Lock()


def reader() -> MarkdownIt:
    """:returns: The report reader (built on first use: importing markdown-it is not free)."""
    return _parts().reader


def _parts() -> _Parts:
    with _LOCK:  # built once, and linkify-it's lazy patterns compiled here, never in two threads at once
        return _build()


def _linkify(state: StateInline, silent: bool) -> bool:
    """markdown-it's rule for ``scheme://`` links, reading only the end of the pending text, where a scheme is."""
    pos = state.pos
    if state.linkLevel > 0 or state.src[pos : pos + 3] != "://":
        return False
    pending = state.pending
    scheme = _SCHEME.search(pending[-40:])
    if scheme is None or (scheme.start(1) == 0 and len(pending) > 40):
        return False
    proto = scheme.group(1)
    found = _build().linkifier.match_at_start(state.src[pos - len(proto) :])
    if not found:
        return False
    url = str(found.url).rstrip("*")
    if not silent:
        state.pending = pending[: -len(proto)]
        opening = state.push("link_open", "a", 1)
        opening.attrs, opening.markup, opening.info = {"href": url}, "linkify", "auto"
        state.push("text", "", 0).content = url
        closing = state.push("link_close", "a", -1)
        closing.markup, closing.info = "linkify", "auto"
    state.pos += len(url) - len(proto)
    return True


def _tracked(rule: Rule, label: int | None = None) -> Rule:
    """Wrap an inline rule so that what it makes records its span; ``label``: where a link's ``[`` stands."""

    def run(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        if not rule(state, silent):
            return False
        if silent or len(state.tokens) == count:  # nothing made: text (an unmatched run of backticks)
            return True
        label_end = -1
        if label is not None:  # the label's end, found as the rule found it (it keeps no record of it)
            end, state.pos = state.pos, start
            label_end = state.md.helpers.parseLinkLabel(state, start + label, label == 0)
            state.pos = end
        new = state.tokens[count:]
        for index, token in enumerate(new[:-1]):
            if token.markup == "linkify":  # its scheme was taken back from the pending text
                start = state.pos - len(new[index + 1].content)
        state.env.setdefault(SPANS, {}).setdefault(id(state.tokens), []).append((start, state.pos))
        marked = next((token for token in new if token.type in _MARKED and "span" not in token.meta), None)
        if marked is not None:
            marked.meta["span"] = (start, state.pos)
            marked.meta["label_end"] = label_end
        return True

    return run


@functools.cache
def _build() -> _Parts:
    from linkify_it import LinkifyIt
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import autolink, backtick, html_inline, image, link, newline

    class Reader(MarkdownIt):
        """markdown-it that keeps every destination as written: nothing is filtered out or percent-encoded."""

        def validateLink(self, url: str) -> bool:
            return True

        def normalizeLink(self, url: str) -> str:
            return url

        def normalizeLinkText(self, link: str) -> str:
            return link

    linkifier = LinkifyIt(options={"fuzzy_link": False, "fuzzy_email": False})
    for schema in DOCUMENT_SCHEMES:  # a bound method: linkify-it calls it in place, with no copy of the text's tail
        validator = _DocumentURI(linkifier.re["src_path"], host_required=schema != "file:")
        linkifier.add(schema, {"validate": validator.validate})
    linkifier.match_at_start("https://a.example //a.example")  # compiles its lazy patterns now
    linkifier.test_schema_at("x //a.example", "//", 4)
    reader = Reader("gfm-like", {"inline_definitions": True, "store_labels": True})
    reader.linkify = linkifier
    reader.core.ruler.disable("linkify")  # the caller finds these bare links, with their positions
    reader.core.ruler.disable("text_join")  # would replace the children lists that the spans are kept by
    reader.inline.ruler.at("link", _tracked(link, label=0))
    reader.inline.ruler.at("image", _tracked(image, label=1))
    rules: dict[str, Rule] = {"autolink": autolink, "linkify": _linkify, "html_inline": html_inline}
    for name, rule in (rules | {"backticks": backtick, "newline": newline}).items():
        reader.inline.ruler.at(name, _tracked(rule))
    search = linkifier.re["schema_search"]  # (one character before, or the start)(http:|https:|...|//|...)
    names = search[search.rindex("(") + 1 : -1]
    return _Parts(reader, linkifier, re.compile(search, re.IGNORECASE), re.compile(names, re.IGNORECASE))


def block_tokens(text: str) -> list[Token]:
    """
    The tokens :func:`reader` makes of ``text`` before the inline parse: the blocks, each ``inline`` token holding its
    text as written. The blocks a CommonMark reader sees never depend on the inline parse, which costs twice as much.
    """
    from markdown_it.rules_core import StateCore, block, normalize

    state = StateCore(text, reader(), {})
    normalize(state)
    block(state)
    return state.tokens


def trim_bare(url: str) -> str:
    """:returns: A bare link less the punctuation GFM leaves out of its end (``?``, ``!``, ``.``, ``,``, ``:``, ...)."""
    return url.rstrip("?!.,:*_~")


def _trim_www(url: str) -> str:
    """GFM's end of a ``www.`` link: no trailing ``?!.,:*_~``, unbalanced ``)`` or entity reference."""
    while True:
        trimmed = url.rstrip("?!.,:*_~")
        if trimmed.endswith(")") and trimmed.count("(") < trimmed.count(")"):
            trimmed = trimmed[:-1]
        trimmed = _ENTITY_END.sub("", trimmed)
        if trimmed == url:
            return url
        url = trimmed


def bare_links(text: str, *, www: bool = True) -> list[tuple[int, int, str]]:
    """The bare ``scheme://``, ``//``, document and ``www.`` (``http://`` added) links in it: ``(start, end, url)``."""
    found: list[tuple[int, int, str]] = []
    at = 0
    parts = _parts()
    while (match := _scheme_at(parts, text, at)) is not None:
        schema, start = match.group(2).lower(), match.start(2)
        length = parts.linkifier.test_schema_at(text, schema, match.end()) if schema != "mailto:" else 0
        raw = trim_bare(text[start : match.end() + length]) if length else ""
        if len(raw) > len(schema):
            found.append((start, start + len(raw), raw))
        at = match.end() + length
    for match in _WWW.finditer(text) if www and _WWW_NAME.search(text) else ():
        raw = _trim_www(match.group())
        if len(raw) > len("www.") and not any(a < match.start() + len(raw) and match.start() < b for a, b, _ in found):
            found.append((match.start(), match.start() + len(raw), "http://" + raw))
    return sorted(found)


def _scheme_at(parts: _Parts, text: str, at: int) -> re.Match[str] | None:
    """
    ``parts.schemes.search(text, at)``, found faster: each place a scheme's name starts (from ``at``) is tried with
    the character before it, since the full pattern, tried at every character, is slow.
    """
    position = at
    while (name := parts.names.search(text, position)) is not None:
        start = name.start()
        if start == 0 or start > at:  # the start of the text, or a character before the name within the search
            match = parts.schemes.match(text, max(start - 1, 0))
            if match is not None:
                return match
        position = start + 1
    return None


def token_runs(text: str) -> list[tuple[int, int]]:
    """The runs of ``text`` between emphasis delimiters, escapes and entities, which markdown-it's linkify reads."""
    runs: list[tuple[int, int]] = []
    at = 0
    for found in _TOKEN_BREAKS.finditer(text):
        if found.start() > at:
            runs.append((at, found.start()))
        at = found.end()
    return [*runs, (at, len(text))] if at < len(text) else runs


class _Spans:
    """The spans of :func:`decoded`'s characters: each character's own where nothing between two pieces was decoded."""

    __slots__ = ("_length", "_pieces", "_starts")

    def __init__(self, pieces: list[tuple[int, int, int]], length: int) -> None:
        self._pieces = pieces  # (its first character, where it starts in the source, the width decoded or 0)
        self._starts = [first for first, _, _ in pieces]
        self._length = length

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index: int) -> tuple[int, int]:
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("span index out of range")
        first, at, width = self._pieces[bisect_right(self._starts, index) - 1]
        if width:  # one decoded entity or escape: each of its characters spans all of it
            return at, at + width
        return at + index - first, at + index - first + 1


def decoded(source: str, start: int, end: int) -> tuple[str, _Spans]:
    """
    :returns: ``source[start:end]`` as a reader sees it (entities and escapes decoded), and each character's span
        (indexed by its place in the decoded text).
    """
    chars: list[str] = []
    pieces: list[tuple[int, int, int]] = []
    at, length = start, 0
    for found in _DECODED.finditer(source, start, end):
        if found.start() > at:
            pieces.append((length, at, 0))
            chars.append(source[at : found.start()])
            length += found.start() - at
        raw = found.group()
        value = html.unescape(raw) if raw[0] == "&" else raw[1]
        pieces.append((length, found.start(), len(raw)))
        chars.append(value)
        length += len(value)
        at = found.end()
    if at < end or not pieces:
        pieces.append((length, at, 0))
        chars.append(source[at:end])
    text = "".join(chars)
    return text, _Spans(pieces, len(text))


def reference_env(markdown: str) -> dict[str, Any]:
    """:returns: A markdown-it environment holding the link reference definitions of ``markdown``."""
    env: dict[str, Any] = {}
    reader().parse(markdown, env)
    return {"references": env.get("references", {})}


def plain_text(fragment: str, env: dict[str, Any], *, is_marker: Callable[[str], bool]) -> str:
    """
    The text a reader sees in an inline fragment, less every URL: a link gives its text, an image its description;
    an autolink, a bare link, raw HTML and a link whose text ``is_marker`` accepts give nothing.
    """
    tokens = reader().parseInline(fragment, {"references": env.get("references", {})})
    out: list[str] = []
    skip: list[bool] = []
    for token in tokens[0].children or [] if tokens else []:
        if token.type == "link_open":
            text = fragment[token.meta["span"][0] + 1 : token.meta.get("label_end", 0)]
            skip.append(token.markup in ("autolink", "linkify") or is_marker(text))
            if out and skip[-1]:  # the blank before a removed link goes with it
                out[-1] = out[-1].rstrip()
        elif token.type == "link_close":
            skip.pop()
        elif any(skip):
            continue
        elif token.type in ("text", "text_special", "code_inline", "image"):
            out.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            out.append(" ")
    return "".join(out)


_LEAVES = frozenset(
    {"paragraph_open", "heading_open", "fence", "code_block", "html_block", "hr", "table_open", "definition"}
)
_HTML_ENDS = (("<!--", "-->"), ("<?", "?>"), ("<![CDATA[", "]]>"), ("<!", ">"))
LinkForm = Literal["inline", "reference", "image", "autolink", "bare", "html"]


@dataclass
class Link:
    """
    One link a reader sees: its destination as written (decoded; ``http://`` added to a ``www.`` link), its span, the
    span of its visible text, a reference link's label, an anchor's closing tag, whether its place is known, and the
    lines of its block.
    """

    url: str
    form: LinkForm
    start: int
    end: int
    text: tuple[int, int] | None = None
    label: str | None = None
    tail: tuple[int, int] | None = None
    mapped: bool = True
    lines: tuple[int, int] = (0, 0)


@dataclass
class Block:
    """A block with inline content: ``kind`` (paragraph, heading, cell), lines, content, level and plain text spans."""

    kind: str
    first: int
    end: int
    content: str
    level: int = 0
    segments: list[tuple[int, int]] = field(default_factory=list)


@dataclass(frozen=True)
class Code:
    """A code block or fence: its lines (first and past-the-end), its fence (``""`` for an indented block), closed."""

    first: int
    end: int
    fence: str
    closed: bool


@dataclass(frozen=True)
class Definition:
    """A link reference definition ``[label]: url "title"``; ``after`` is the offset just after its ``]:``."""

    label: str
    url: str
    title: str
    first: int
    end: int
    after: int


@dataclass
class Parsed:
    """
    A parsed report (line ends normalised to ``\\n``). ``units`` are its top-level blocks (first line, past-the-end
    line, token type); ``unclosed`` is the line that closes its last block when that runs to the end unclosed, so
    that text appended after it is not swallowed.
    """

    text: str
    lines: list[str]
    starts: list[int]
    links: list[Link] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)
    units: list[tuple[int, int, str]] = field(default_factory=list)
    references: dict[str, Any] = field(default_factory=dict)
    code: list[Code] = field(default_factory=list)
    unclosed: str = ""

    def line_of(self, offset: int) -> int:
        """:returns: The 0-based line holding ``offset``."""
        return bisect_right(self.starts, offset) - 1


def align(lines: list[str], starts: list[int], content: str, first: int, cell: list[int] | None) -> list[int] | None:
    """
    The report offset of each character of a block's inline content and of its end, or ``None`` when it is not where
    it should be. A content line is its source line less container prefixes and a heading's closing ``#``, so it is
    found from the right; a table cell from the left of its row, after the cells before it.
    """
    offsets: list[int] = []
    for number, piece in enumerate(content.split("\n")):
        row = first + number
        if number:  # the line break before this piece
            offsets.append(starts[row - 1] + len(lines[row - 1]))
        if row >= len(lines):
            if piece:
                return None
            continue
        source, base = lines[row], starts[row]
        if cell is not None:
            at = cell[0]
            for char in piece:
                while at < len(source) and source[at] != char and source[at] in " \t|\\":
                    at += 1
                if at >= len(source) or source[at] != char:
                    return None
                offsets.append(base + at)
                at += 1
            cell[0] = at
            continue
        stripped = piece.strip()
        lead = len(piece) - len(piece.lstrip())
        at = source.rfind(stripped) if stripped else len(source.rstrip())
        if at < 0:
            return None
        # From the match on, one character after another, none past the line's end; the leading blanks at its start
        end, found = base + len(source), base + at
        placed = range(found, min(found + len(piece) - lead, end))
        offsets += [found] * lead
        offsets += placed
        offsets += [end] * (len(piece) - lead - len(placed))
    offsets.append(offsets[-1] + 1 if offsets else starts[min(first, len(starts) - 1)])
    return offsets


def span(offsets: list[int], start: int, end: int) -> tuple[int, int]:
    """:returns: The span of the report holding the content's ``[start, end)``."""
    return (offsets[start], offsets[end - 1] + 1) if end > start else (offsets[start], offsets[start])


def check(text: str, offsets: list[int], content: str, start: int, end: int) -> bool:
    """:returns: Whether every character of ``content[start:end]`` (but line breaks) is where ``offsets`` puts it."""
    return all(
        content[index] == "\n" or (offsets[index] < len(text) and text[offsets[index]] == content[index])
        for index in range(start, end)
    )


def plain_segments(offsets: list[int], length: int, opaque: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of the report, each within one line and contiguous, that hold the rest: plain text."""
    covered = [False] * length
    for start, end in opaque:
        covered[start:end] = [True] * (end - start)
    segments: list[tuple[int, int]] = []
    begin: int | None = None
    for index in range(length + 1):
        breaks = index == length or covered[index] or (begin is not None and offsets[index] != offsets[index - 1] + 1)
        if breaks and begin is not None:
            segments.append((offsets[begin], offsets[index - 1] + 1))
            begin = None
        if index < length and not covered[index] and begin is None:
            begin = index
    return segments


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
    """One start tag that names URLs (in attribute order), its span and, for an anchor, its closing tag's span."""

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
    ``text`` as the parser is fed it, of the same length: a declaration (which may fail the parser) is neutralised,
    and a comment or processing instruction that never closes is read as text, so the tags after it count.
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


def _bare_links(parsed: Parsed, block: Block) -> None:
    """
    Add the bare links of a block's plain text as GFM reads it (entities and escapes decoded) and as markdown-it's
    linkify does (the pieces between delimiters, one by one); where they disagree, both count.
    """
    for start, end in block.segments:
        text, spans = decoded(parsed.text, start, end)
        found = {(spans[first][0], spans[last - 1][1]): url for first, last, url in bare_links(text)}
        raw = parsed.text[start:end]
        for run_start, run_end in token_runs(raw):
            for first, last, url in bare_links(raw[run_start:run_end], www=False):
                found.setdefault((start + run_start + first, start + run_start + last), url)
        for (begin, finish), url in found.items():
            parsed.links.append(Link(url, "bare", begin, finish, lines=(block.first, block.end)))


def _inline_links(parsed: Parsed, token: Token, offsets: list[int] | None, block: Block) -> None:
    """Add the links, images and HTML tags of one inline token."""
    children, src = token.children or [], token.content
    closings = _closing_anchors(children)
    for index, child in enumerate(children):
        where = child.meta.get("span") if child.meta else None
        if where is None:
            continue
        start, end = span(offsets, *where) if offsets else (parsed.starts[block.first],) * 2
        mapped = offsets is not None and check(parsed.text, offsets, src, *where)
        label_end = child.meta["label_end"]
        if child.type == "link_open" and child.markup in ("autolink", "linkify"):
            url = str(child.attrs.get("href", ""))
            trimmed = url if child.markup == "autolink" else trim_bare(url)
            form: LinkForm = "autolink" if child.markup == "autolink" else "bare"
            finish = end - len(url) + len(trimmed)
            parsed.links.append(Link(trimmed, form, start, finish, None, None, None, mapped, (block.first, block.end)))
        elif child.type == "link_open":
            text = span(offsets, where[0] + 1, label_end) if offsets else None
            label = child.meta.get("label")
            if label is not None:  # a reference link: [text][label], [text][] or [text]
                written = src[label_end + 2 : where[1] - 1] if src[label_end + 1 : label_end + 2] == "[" else ""
                label = written or src[where[0] + 1 : label_end]
            form = "reference" if label is not None else "inline"
            url = str(child.attrs.get("href", ""))
            parsed.links.append(Link(url, form, start, end, text, label, None, mapped, (block.first, block.end)))
        elif child.type == "image":
            text = span(offsets, where[0] + 2, label_end) if offsets else None
            url = str(child.attrs.get("src", ""))
            parsed.links.append(Link(url, "image", start, end, text, None, None, mapped, (block.first, block.end)))
        elif child.type == "html_inline":
            closing = closings.get(index)
            for tag in read_tags(child.content):
                tail = span(offsets, *closing.meta["span"]) if closing is not None and offsets is not None else None
                parsed.links += _tag_links(tag, (start, end), tail=tail, mapped=mapped, block=block)


def _closing_anchors(children: list[Token]) -> dict[int, Token]:
    """For each inline ``<a ...>`` tag (by index), the ``</a>`` that closes it, if any."""
    closings: dict[int, Token] = {}
    opened: list[int] = []
    for index, child in enumerate(children):
        if child.type != "html_inline":
            continue
        if re.match(r"<a[\s>]", child.content, re.IGNORECASE):
            opened.append(index)
        elif re.match(r"</a\s*>", child.content, re.IGNORECASE) and opened:
            closings[opened.pop()] = child
    return closings


def _tag_links(
    tag: Tag, where: tuple[int, int], *, tail: tuple[int, int] | None, mapped: bool, block: Block
) -> list[Link]:
    """The links of one inline HTML tag; an anchor's text runs to its closing tag, if there is one."""
    if tag.name != "a":
        return [Link(url, "html", *where, mapped=mapped, lines=(block.first, block.end)) for url in tag.urls]
    text = (where[1], tail[0] if tail else where[1])
    return [Link(url, "html", *where, text, None, tail, mapped, (block.first, block.end)) for url in tag.urls]


def _html_block(parsed: Parsed, token: Token) -> None:
    """Add the links of a raw HTML block: each tag is removed whole, an anchor's content kept."""
    first, end = token.map or (0, 0)
    offsets = align(parsed.lines, parsed.starts, token.content, first, None)
    for tag in read_tags(token.content):
        mapped = offsets is not None and check(parsed.text, offsets, token.content, tag.start, tag.end)
        if offsets is None:
            where, text, tail = (parsed.starts[first],) * 2, None, None
        else:
            where = span(offsets, tag.start, tag.end)
            text = span(offsets, tag.end, tag.close[0]) if tag.close else (where[1], where[1])
            tail = span(offsets, *tag.close) if tag.close else None
        parsed.links += [Link(url, "html", *where, text, None, tail, mapped, (first, end)) for url in tag.urls]


def _code(parsed: Parsed, token: Token) -> Code:
    """A code block, and for a fence whether a closing fence ends it (only its fence's character, as long or longer)."""
    first, end = token.map or (0, 0)
    if token.type == "code_block":
        return Code(first, end, "", True)
    fence = token.markup
    closing = re.compile(rf"[ \t>]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*")
    closed = end - 1 > first and closing.fullmatch(parsed.lines[end - 1]) is not None
    return Code(first, end, fence, closed)


def _closer(parsed: Parsed, tokens: list[Token]) -> str:
    """The line that closes the last top-level block if it runs to the end of the report unclosed; else ``""``."""
    last = next((token for token in reversed(tokens) if token.level == 0 and token.map), None)
    if last is None or last.map is None or last.map[1] < len(parsed.lines) - parsed.text.endswith("\n"):
        return ""
    final = parsed.lines[last.map[1] - 1].strip()
    if last.type == "fence":
        fence = last.markup
        closed = last.map[1] - 1 > last.map[0] and final == fence[0] * len(final) and len(final) >= len(fence)
        return "" if closed else fence
    if last.type == "html_block":
        opening = last.content.lstrip().lower()
        tag = re.match(r"<(script|pre|style|textarea)(?=[\s>]|$)", opening)
        end = f"</{tag.group(1)}>" if tag else next((e for s, e in _HTML_ENDS if opening.startswith(s)), "")
        return end if end and end not in final.lower() else ""
    return ""


KEPT_CHARS = 64_000
"""The longest text whose reading :func:`kept_for_recent_texts` keeps among the 128 read last: notes and pages."""
KEPT_LONG_CHARS = 256_000
"""The longest text whose reading :func:`kept_for_recent_texts` keeps among the 4 long ones read last: reports."""

R = TypeVar("R")


def kept_for_recent_texts(function: Callable[..., R]) -> Callable[..., R]:
    """
    ``function(text, ...)`` with its results kept for the 128 texts read last of up to :data:`KEPT_CHARS`
    characters, and for the 4 read last of up to :data:`KEPT_LONG_CHARS` (a report of many sub-topics): a run reads
    the same notes, report and pages many times (allowed URLs, each part's request, verification, the passages behind
    citations). What it returns is shared, so nothing may change it.
    """
    kept = functools.lru_cache(maxsize=128)(function)
    kept_long = functools.lru_cache(maxsize=4)(function)

    def read(text: str, *rest: Any) -> R:
        size = len(text)
        return (kept if size <= KEPT_CHARS else kept_long if size <= KEPT_LONG_CHARS else function)(text, *rest)

    return functools.wraps(function)(read)


@kept_for_recent_texts
def parse(markdown: str) -> Parsed:
    """The parsed report, ``\\r\\n`` and ``\\r`` read as ``\\n`` and NUL as U+FFFD as CommonMark does (kept)."""
    text = markdown.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    lines = text.split("\n")
    starts = list(accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    parsed = Parsed(text, lines, starts)
    env: dict[str, Any] = {}
    tokens = reader().parse(text, env)
    parsed.references = env.get("references", {})
    cell: list[int] | None = None
    for number, token in enumerate(tokens):
        if token.level == 0 and token.map and token.nesting >= 0:
            parsed.units.append((token.map[0], token.map[1], token.type))
        if token.type in ("tr_open", "tr_close"):
            cell = [0] if token.type == "tr_open" else None
        elif token.type == "definition" and token.map:
            first, end = token.map
            after = starts[first] + lines[first].find("]:") + 2
            meta = token.meta
            parsed.definitions.append(Definition(meta["label"], meta["url"], meta["title"], first, end, after))
        elif token.type == "html_block":
            _html_block(parsed, token)
        elif token.type in ("fence", "code_block") and token.map:
            parsed.code.append(_code(parsed, token))
        elif token.type == "inline" and token.map:
            opener = tokens[number - 1]
            kind = {"heading_open": "heading", "paragraph_open": "paragraph"}.get(opener.type, "cell")
            level = int(opener.tag[1]) if kind == "heading" else 0
            block = Block(kind, token.map[0], token.map[1], token.content, level)
            offsets = align(lines, starts, token.content, token.map[0], cell if kind == "cell" else None)
            if offsets is not None:
                opaque = env.get(SPANS, {}).get(id(token.children), [])
                block.segments = plain_segments(offsets, len(token.content), opaque)
            parsed.blocks.append(block)
            _inline_links(parsed, token, offsets, block)
            _bare_links(parsed, block)
    parsed.links += _unread_links(parsed, tokens)
    parsed.links.sort(key=lambda item: (item.start, -item.end))
    parsed.unclosed = _closer(parsed, tokens)
    return parsed


def _unread_links(parsed: Parsed, tokens: list[Token]) -> list[Link]:
    """
    The links of the lines markdown-it leaves unread that another renderer may show (nested past ``maxNesting``, an
    indented block after a footnote), each read as inline Markdown on its own.
    """
    read: set[int] = set()
    previous: Token | None = None
    for token in tokens:
        footnote = previous is not None and previous.map and parsed.lines[previous.map[0]].lstrip().startswith("[^")
        if token.type in _LEAVES and token.map and not (token.type == "code_block" and footnote):
            read.update(range(*token.map))  # (indented text after a footnote continues it, where footnotes exist)
        if token.level == 0 and token.map:
            previous = token
    links: list[Link] = []
    for row, line in enumerate(parsed.lines):
        if row not in read and line.strip() and line.strip(" \t>-*+") != "":
            start = parsed.starts[row]
            links += parse_fragment(parsed, start, start + len(line), (row, row + 1))
    return links


def parse_fragment(parsed: Parsed, start: int, end: int, lines: tuple[int, int]) -> list[Link]:
    """The links of ``parsed.text[start:end]`` as inline Markdown (``[^1]: [Title](url)``), in report offsets."""
    env: dict[str, Any] = {"references": parsed.references}
    source = parsed.text[start:end]
    inner = Parsed(parsed.text, parsed.lines, parsed.starts, references=parsed.references)
    offsets = list(range(start, end + 1))
    block = Block("fragment", *lines, source)
    for token in reader().parseInline(source, env):
        block.segments = plain_segments(offsets, len(source), env.get(SPANS, {}).get(id(token.children), []))
        _inline_links(inner, token, offsets, block)
        _bare_links(inner, block)
    return inner.links
