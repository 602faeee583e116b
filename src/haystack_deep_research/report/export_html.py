"""
A report as one self-contained HTML page a reader can check: every cited link is followed by a numbered button that
opens its source's title, URL, when it was read, and the passage behind the citing sentence (an HTML popover: no
script runs), and the page ends with the same notes as a list, for print and for browsers without popovers.

Nothing from the report or a source reaches the page as markup: the report is rendered by markdown-it with raw HTML
off, images are shown as their description (the page loads nothing), every title, URL and passage is escaped (the
citing sentence of a note is the text a reader sees, its links given as their text), and a
Content-Security-Policy meta tag allows the page's own style (by nonce) and nothing else: no script, no image, no
font, no connection, no form. Links carry ``rel="noopener noreferrer"`` and the page sends no referrer.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from haystack_deep_research.report._rendering import Passage, cited_tokens

__all__ = ["export_html"]

_STYLE = """
body { font: 16px/1.55 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #1b1b1b; }
a { color: #0b57a4; }
pre, code { font-family: ui-monospace, monospace; background: #f3f3f3; }
pre { padding: .6rem; overflow-x: auto; }
button.cite { font: inherit; font-size: .75em; vertical-align: super; line-height: 1; padding: 0 .3em;
  margin-left: .1em; border: 1px solid #7a9cc6; border-radius: .3em; background: #eef4fb; color: #0b57a4;
  cursor: pointer; }
.note[popover] { max-width: 32rem; padding: .8rem 1rem; border: 1px solid #7a9cc6; border-radius: .4rem;
  box-shadow: 0 .3rem 1rem rgb(0 0 0 / .2); font-size: .9rem; }
.note .title { display: block; font-weight: 600; }
.note button.close { float: right; border: none; background: none; font-size: 1rem; cursor: pointer; }
.note .url { display: block; word-break: break-all; }
.note .read, .note .named { display: block; color: #555; font-size: .85em; }
.note .passage { display: block; margin-top: .5rem; padding-left: .7rem; border-left: 3px solid #7a9cc6;
  white-space: pre-line; }
section.notes { margin-top: 3rem; border-top: 1px solid #ccc; font-size: .9rem; }
"""


def _note(passage: Passage) -> str:
    """The note of a citation, as phrasing content (it stands inside the report's paragraph)."""
    title = escape(passage.title or passage.url)
    read = escape(passage.read_note())
    named = passage.named if passage.named != passage.read_note() else ""
    return (
        f'<span class="title">{title}</span>'
        f'<a class="url" href="{escape(passage.url)}" rel="noopener noreferrer">{escape(passage.url)}</a>'
        f'<span class="read">{read}</span>'
        + (f'<span class="named">{escape(named)}</span>' if named else "")
        + f'<span class="passage">{escape(passage.passage)}</span>'
    )


def _cite(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    passage: Passage = tokens[idx].meta["passage"]
    seen: set[int] = env.setdefault("seen", set())
    number = passage.number
    button = (
        f'<button type="button" class="cite" popovertarget="note-{number}" '
        f'aria-label="Passage of source {number}" data-cite="{number}">{number}</button>'
    )
    if number in seen:  # the note is already in the page: a second button opens the same one
        return button
    seen.add(number)
    close = (
        f'<button type="button" class="close" popovertarget="note-{number}" popovertargetaction="hide" '
        'aria-label="Close">&#x2715;</button>'
    )
    return f'{button}<span class="note" id="note-{number}" popover>{close}{_note(passage)}</span>'


def _link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


def _image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    description = escape(tokens[idx].content or "image")
    return f'<em class="image">[{description}]</em>'


def _notes(passages: list[Passage]) -> str:
    if not passages:
        return ""
    items = "".join(
        f'<li id="passage-{p.number}"><span class="sentence">{escape(p.sentence_text())}</span><br>'
        f'<span class="note">{_note(p)}</span></li>'
        for p in passages
    )
    return f'<section class="notes"><h2>Cited passages</h2><ol>{items}</ol></section>'


def export_html(result: Mapping[str, Any]) -> str:
    """
    Render a run's report as one self-contained HTML page (see the module docstring).

    :param result: The run's result: ``report`` (Markdown) and ``citations`` (its ``passages`` give the notes).
    :returns: The page.
    :raises ConfigurationError: If ``report`` is not a string.
    """
    cited = cited_tokens(result)
    md = MarkdownIt("commonmark", {"html": False, "linkify": True}).enable(["linkify", "table"])
    md.add_render_rule("cite", _cite)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image)
    body = md.renderer.render(cited.tokens, md.options, {})
    nonce = secrets.token_urlsafe(16)
    policy = (
        f"default-src 'none'; style-src 'nonce-{nonce}'; script-src 'none'; img-src 'none'; font-src 'none'; "
        "connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'none'; "
        "form-action 'none'"
    )
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="referrer" content="no-referrer">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{escape(cited.title or 'Research report')}</title>\n"
        f'<style nonce="{nonce}">{_STYLE}</style>\n'
        f"</head>\n<body>\n<main>\n{body}</main>\n{_notes(cited.passages)}\n</body>\n</html>\n"
    )
