"""
The Markdown reader: markdown-it-py (CommonMark, GFM tables, strikethrough, raw HTML; linkify-it-py for bare links)
set to read a report as a renderer does, and to say where each construct stands (``meta["span"]``,
``meta["label_end"]`` and a list of spans per inline token). Every destination is kept as written: markdown-it would
otherwise leave a ``javascript:`` link as text and percent-encode the rest. :func:`bare_links` reads bare links in
one pass, left to right, because linkify-it's own search and markdown-it's rule take quadratic time on some hostile
inputs.
"""

from __future__ import annotations

import functools
import html
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from linkify_it import LinkifyIt
    from markdown_it import MarkdownIt
    from markdown_it.rules_inline import StateInline


SPANS = "_haystack_deep_research_spans"
_SCHEME = re.compile(r"(?:^|[^a-z0-9.+-])([a-z][a-z0-9.+-]*)$", re.IGNORECASE)
_WWW = re.compile(r"(?:^|(?<=[\s*_~(]))www\.[^\s<>]+", re.IGNORECASE)
_ENTITY_END = re.compile(r"&[A-Za-z0-9]+;$")
_TOKEN_BREAKS = re.compile(r"[*_~]+|\\.|&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});")
_MARKED = ("link_open", "image", "html_inline", "code_inline")
_ENTITY = re.compile(r"&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});")
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

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
    return _Parts(reader, linkifier, re.compile(linkifier.re["schema_search"], re.IGNORECASE))


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
    while (match := parts.schemes.search(text, at)) is not None:
        schema, start = match.group(2).lower(), match.start(2)
        length = parts.linkifier.test_schema_at(text, schema, match.end()) if schema != "mailto:" else 0
        raw = trim_bare(text[start : match.end() + length]) if length else ""
        if len(raw) > len(schema):
            found.append((start, start + len(raw), raw))
        at = match.end() + length
    for match in _WWW.finditer(text) if www else ():
        raw = _trim_www(match.group())
        if len(raw) > len("www.") and not any(a < match.start() + len(raw) and match.start() < b for a, b, _ in found):
            found.append((match.start(), match.start() + len(raw), "http://" + raw))
    return sorted(found)


def token_runs(text: str) -> list[tuple[int, int]]:
    """The runs of ``text`` between emphasis delimiters, escapes and entities, which markdown-it's linkify reads."""
    runs: list[tuple[int, int]] = []
    at = 0
    for found in _TOKEN_BREAKS.finditer(text):
        if found.start() > at:
            runs.append((at, found.start()))
        at = found.end()
    return [*runs, (at, len(text))] if at < len(text) else runs


def decoded(source: str, start: int, end: int) -> tuple[str, list[tuple[int, int]]]:
    """:returns: ``source[start:end]`` as a reader sees it (entities and escapes decoded), and each character's span."""
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    at = start
    while at < end:
        entity = _ENTITY.match(source, at, end) if source[at] == "&" else None
        if entity:
            value = html.unescape(entity.group(0))
            chars += value
            spans += [(at, entity.end())] * len(value)
            at = entity.end()
        elif source[at] == "\\" and at + 1 < end and source[at + 1] in _ESCAPABLE:
            chars.append(source[at + 1])
            spans.append((at, at + 2))
            at += 2
        else:
            chars.append(source[at])
            spans.append((at, at + 1))
            at += 1
    return "".join(chars), spans


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
