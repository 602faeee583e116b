"""
The Markdown reader: markdown-it-py set to read a report as a renderer does, and to say where each construct stands.

It reads CommonMark with GFM tables, strikethrough and raw HTML, with linkify-it-py for bare links. Every link
destination is accepted and kept as written (markdown-it would otherwise leave a ``javascript:`` link as text and
percent-encode the rest). The inline rules that make links, images, raw HTML, code spans and line breaks are wrapped
so that each records its span in the inline source (``meta["span"]`` on the token it makes, and a list of spans per
inline token), and a link or image records where its text ends (``meta["label_end"]``).

Bare links outside markdown-it's own ``scheme://`` rule are left to the caller, who finds them with :data:`READER`'s
linkifier in the plain text between those spans; the linkifier knows the schemes and GFM's ``www.`` links (before
any domain), and guesses no other host names.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

from linkify_it import LinkifyIt
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline, autolink, backtick, html_inline, image, link, linkify, newline

__all__ = ["LINKED_SCHEMAS", "LINKIFIER", "READER", "SPANS", "decoded", "plain_text", "reference_env", "trim_bare"]

SPANS = "_haystack_deep_research_spans"
LINKED_SCHEMAS = ("http:", "https:", "ftp:", "//", "www.")
_MARKED = ("link_open", "image", "html_inline", "code_inline")
_ENTITY = re.compile(r"&(?:#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});")
_ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

Rule = Callable[[StateInline, bool], bool]


class _Reader(MarkdownIt):
    """markdown-it that keeps every destination as written: nothing is filtered out or percent-encoded."""

    def validateLink(self, url: str) -> bool:
        return True

    def normalizeLink(self, url: str) -> str:
        return url

    def normalizeLinkText(self, link: str) -> str:
        return link


def _linkifier() -> LinkifyIt:
    """linkify-it with schemes and GFM's ``www.`` links, guessing no bare host names or e-mail addresses."""
    linkifier = LinkifyIt(options={"fuzzy_link": False, "fuzzy_email": False})
    tail = linkifier.re["src_host_port_strict"] + linkifier.re["src_path"]
    return linkifier.add("www.", {"validate": re.compile("^" + tail, re.IGNORECASE)})


def _tracked(rule: Rule, label: int | None = None) -> Rule:
    """Wrap an inline rule so that what it makes records its span; ``label``: where a link's ``[`` stands."""

    def run(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        label_end = -1
        if label is not None and not silent and state.src[start + label : start + label + 1] == "[":
            label_end = state.md.helpers.parseLinkLabel(state, start + label, label == 0)
        if not rule(state, silent):
            return False
        if silent:
            return True
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


LINKIFIER = _linkifier()


def _build() -> MarkdownIt:
    reader = _Reader("gfm-like", {"inline_definitions": True, "store_labels": True})
    reader.linkify = LINKIFIER
    reader.core.ruler.disable("linkify")  # the caller finds these bare links, with their positions
    reader.core.ruler.disable("text_join")  # would replace the children lists that the spans are kept by
    reader.inline.ruler.at("link", _tracked(link, label=0))
    reader.inline.ruler.at("image", _tracked(image, label=1))
    rules: dict[str, Rule] = {"autolink": autolink, "linkify": linkify, "html_inline": html_inline}
    for name, rule in (rules | {"backticks": backtick, "newline": newline}).items():
        reader.inline.ruler.at(name, _tracked(rule))
    return reader


READER = _build()


def trim_bare(url: str) -> str:
    """:returns: A bare link less the punctuation GFM leaves out of its end (``?``, ``!``, ``.``, ``,``, ``:``, ...)."""
    return url.rstrip("?!.,:*_~")


def decoded(source: str, start: int, end: int) -> tuple[str, list[tuple[int, int]]]:
    """
    Decode the entities and backslash escapes of ``source[start:end]``.

    :returns: The text a reader sees, and for each of its characters the span of ``source`` it comes from.
    """
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
    READER.parse(markdown, env)
    return {"references": env.get("references", {})}


def plain_text(fragment: str, env: dict[str, Any], *, is_marker: Callable[[str], bool]) -> str:
    """
    The text a reader sees in an inline fragment, less every URL.

    A link gives its text, an image its description; an autolink, a bare link, raw HTML and a link whose text
    ``is_marker`` accepts give nothing.

    :param fragment: Inline Markdown.
    :param env: The environment of :func:`reference_env` for the report it comes from.
    :param is_marker: Tells whether a link's text is a citation marker.
    :returns: The text.
    """
    tokens = READER.parseInline(fragment, {"references": env.get("references", {})})
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
