"""
Exporting a report: a self-contained HTML page (:func:`export_html`), a Word document (:func:`export_docx`), a PDF
(:func:`export_pdf`) and the table of its evidence (:func:`export_evidence`), each citation with the passage behind
it. docs/cli.md, "Report formats", says what each export holds and how nothing from the report or a source reaches
the page as markup (raw HTML off, every text escaped, a Content-Security-Policy that allows the page's own style by
nonce and nothing else).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from haystack_deep_research._untrusted.files import spreadsheet_cell, write_file
from haystack_deep_research.errors import ConfigurationError, MissingExtraError
from haystack_deep_research.evidence._markdown import plain_text
from haystack_deep_research.evidence._styles import verifiable
from haystack_deep_research.evidence.entry import SNIPPET_NOTE, normalize_url

__all__ = ["EVIDENCE_COLUMNS", "export_docx", "export_evidence", "export_html", "export_pdf"]

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Passage:
    """One numbered citation note; ``kind`` is the source's ledger kind."""

    number: int
    url: str
    title: str
    read_at: str
    sentence: str
    passage: str
    named: str = ""
    kind: str = ""

    @property
    def snippet(self) -> bool:
        return self.kind == "snippet"

    def read_note(self) -> str:
        """How the source was seen: ``read 2026-12-01 21:35 UTC``, ``read during the run`` or the snippet note."""
        if self.snippet:
            return SNIPPET_NOTE
        return f"read {self.read_when()}" if self.read_at.strip() else "read during the run"

    def read_when(self) -> str:
        """When the source was read, in UTC to the minute; ``""`` if unknown."""
        try:
            read = datetime.fromisoformat(self.read_at.strip())
        except ValueError:
            return _flat(self.read_at)  # not a time the library wrote: shown as it is
        return (read if read.tzinfo else read.replace(tzinfo=UTC)).astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")

    def sentence_text(self) -> str:
        """The citing sentence as a reader sees it: a link gives its text, a bare URL nothing."""
        return _flat(plain_text(self.sentence, {}, is_marker=lambda _text: False))


@dataclass(frozen=True)
class Cited:
    """The report's tokens, with ``cite`` tokens after cited links, and the passages they number (used ones only)."""

    tokens: list[Token]
    passages: list[Passage]
    title: str


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold (Word and PDF writers refuse them)."""
    return _NOT_XML.sub("", text)


def _passages(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    citations = result.get("citations") or {}
    found = citations.get("passages") if isinstance(citations, Mapping) else None
    return [p for p in found or [] if isinstance(p, Mapping) and isinstance(p.get("url"), str) and verifiable(p["url"])]


def _flat(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def cited_tokens(result: Mapping[str, Any]) -> Cited:
    """The tokens of a result's ``report``, its citations numbered; ``ConfigurationError`` if it is no string."""
    report = result.get("report") or ""
    if not isinstance(report, str):
        raise ConfigurationError(f"A report must be a string, got {type(report).__name__}.")
    by_url: dict[str, list[Mapping[str, Any]]] = {}
    for entry in _passages(result):
        by_url.setdefault(normalize_url(entry["url"]), []).append(entry)
    md = MarkdownIt("commonmark", {"html": False, "linkify": True}).enable(["linkify", "table"])
    usual = md.validateLink
    # markdown-it refuses file: links; a verified citation of a document read from a folder is one.
    md.validateLink = lambda url: usual(url) or (bool(url.strip()) and normalize_url(url) in by_url)  # type: ignore[method-assign]
    tokens = md.parse(report)
    numbers: dict[tuple[str, str], Passage] = {}
    for block in tokens:
        if block.type != "inline" or not block.children:
            continue
        content = _flat(block.content)
        children: list[Token] = []
        cite: Token | None = None
        for child in block.children:
            children.append(child)
            href = str(child.attrGet("href") or "")
            if child.type == "link_open" and href.strip():
                cite = _cite(by_url.get(normalize_url(href), []), content, numbers)
            elif child.type == "link_close" and cite is not None:
                children.append(cite)
                cite = None
        block.children = children
    headings = (_flat(t.content) for i, t in enumerate(tokens) if t.type == "inline" and tokens[i - 1].tag == "h1")
    title = next(headings, "")
    return Cited(tokens, sorted(numbers.values(), key=lambda p: p.number), title)


def _cite(candidates: list[Mapping[str, Any]], content: str, numbers: dict[tuple[str, str], Passage]) -> Token | None:
    """The ``cite`` token for a link to one of ``candidates``, numbering its passage on first use."""
    if not candidates:
        return None
    entry = next((c for c in candidates if _flat(str(c.get("sentence") or "")) in content), candidates[0])
    key = (normalize_url(entry["url"]), str(entry.get("sentence") or ""))
    if key not in numbers:
        texts = {name: str(entry.get(name) or "") for name in ("title", "read_at", "sentence", "passage", "named")}
        kind = str(entry.get("kind") or "")
        numbers[key] = Passage(number=len(numbers) + 1, url=entry["url"].strip(), kind=kind, **texts)
    token = Token("cite", "", 0)
    token.meta = {"passage": numbers[key]}
    return token


@dataclass
class Run:
    """A piece of a block's text and how it is shown; ``cite`` numbers the passage of the link it follows."""

    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False
    cite: int | None = None


@dataclass
class Block:
    """A heading (``level`` 1-6), paragraph, list item (``level``: nesting), quote or code block of the report."""

    kind: str
    level: int = 0
    runs: list[Run] | None = None


def blocks(cited: Cited) -> list[Block]:
    """The report as plain blocks for the Word and PDF writers (a link's URL after its text if no note gives it)."""
    found: list[Block] = []
    lists = quotes = 0
    kind, level = "paragraph", 0
    for token in cited.tokens:
        if token.type in ("bullet_list_open", "ordered_list_open"):
            lists += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            lists -= 1
        elif token.type in ("blockquote_open", "blockquote_close"):
            quotes += 1 if token.nesting > 0 else -1
        elif token.type == "heading_open":
            kind, level = "heading", int(token.tag[1:])
        elif token.type == "paragraph_open":
            kind, level = "item" if lists else "quote" if quotes else "paragraph", lists
        elif token.type in ("fence", "code_block"):
            found.append(Block("code", 0, [Run(token.content.rstrip("\n"), code=True)]))
        elif token.type == "inline":
            found.append(Block(kind, level, _runs(token.children or [])))
        elif token.type in ("heading_close", "paragraph_close"):
            kind, level = "paragraph", 0
    return found


def _runs(children: list[Token]) -> list[Run]:
    runs: list[Run] = []
    bold = italic = start = 0
    href = ""
    for child in children:
        if child.type in ("strong_open", "strong_close"):
            bold += child.nesting
        elif child.type in ("em_open", "em_close"):
            italic += child.nesting
        elif child.type == "text":
            runs.append(Run(child.content, bool(bold), bool(italic)))
        elif child.type == "code_inline":
            runs.append(Run(child.content, code=True))
        elif child.type in ("softbreak", "hardbreak"):
            runs.append(Run(" " if child.type == "softbreak" else "\n"))
        elif child.type == "image":
            runs.append(Run(child.content or "image", italic=True))
        elif child.type == "link_open":
            href, start = str(child.attrGet("href") or ""), len(runs)
        elif child.type == "link_close":
            shown = "".join(run.text for run in runs[start:])
            if href and shown.strip() != href.strip() and child.markup != "linkify":
                runs.append(Run(f" ({href})"))
        elif child.type == "cite":
            if runs and runs[-1].text == f" ({href})":  # the endnote gives the URL of a cited link
                runs.pop()
            runs.append(Run(str(child.meta["passage"].number), cite=child.meta["passage"].number))
    return runs


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


def _render_cite(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
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
    md.add_render_rule("cite", _render_cite)
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


EVIDENCE_COLUMNS = ("claim", "source", "title", "read", "passage", "verdict", "reason", "named", "contradicts")
"""The columns of :func:`export_evidence`, in order."""

_FONTS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/Library/Fonts/DejaVuSans.ttf",
)


def _note_lines(passage: Passage) -> tuple[str, str]:
    heading = f"[{passage.number}] {passage.title or passage.url} - {passage.url}"
    if passage.read_at.strip() or passage.snippet:
        heading += f" ({passage.read_note()})"
    return xml_text(heading), xml_text(passage.passage)


def export_docx(result: Mapping[str, Any], path: str | Path) -> Path:
    """
    Write a run's report as a Word document with its citations as endnotes (see the module docstring).

    :param result: The run's result: ``report`` and ``citations`` (with ``passages``).
    :param path: Where to write the ``.docx`` file (as ``-o`` is: replaced atomically, or written to as it stands when
        it is a FIFO or a device, see :func:`~haystack_deep_research._untrusted.files.write_file`).
    :returns: The path written.
    :raises MissingExtraError: If python-docx is not installed (``pip install haystack-deep-research[docx]``).
    :raises OSError: If the file cannot be written.
    """
    try:
        import docx
        from docx.shared import Pt
    except ImportError as error:
        raise MissingExtraError("Word exports (-o report.docx)", extra="docx", module="python-docx") from error
    cited = cited_tokens(result)
    document = docx.Document()
    for block in blocks(cited):
        if block.kind == "heading":
            paragraph = document.add_heading(level=min(block.level, 9))
        elif block.kind == "item":
            paragraph = document.add_paragraph(style="List Bullet" if block.level <= 1 else "List Bullet 2")
        else:
            paragraph = document.add_paragraph(style="Quote" if block.kind == "quote" else None)
        for run in block.runs or []:
            if run.cite is not None:
                paragraph.add_run(f"[{run.cite}]").font.superscript = True
                continue
            piece = paragraph.add_run(xml_text(run.text))
            piece.bold, piece.italic = run.bold or None, run.italic or None
            if run.code:
                piece.font.name, piece.font.size = "Courier New", Pt(9)
    if cited.passages:
        document.add_heading("Cited passages", level=2)
        for passage in cited.passages:
            heading, text = _note_lines(passage)
            document.add_paragraph(heading)
            document.add_paragraph(text, style="Quote")
    target = Path(path)
    write_file(target, lambda temporary: document.save(str(temporary)), named=True)
    return target


def export_pdf(result: Mapping[str, Any], path: str | Path, *, font: str | Path | None = None) -> Path:
    """
    Write a run's report as a PDF with its citations as endnotes (see the module docstring).

    :param result: The run's result: ``report`` and ``citations`` (with ``passages``).
    :param path: Where to write the ``.pdf`` file (as ``-o`` is, see
        :func:`~haystack_deep_research._untrusted.files.write_file`).
    :param font: A Unicode TrueType font file to write with; by default DejaVu Sans where installed.
    :returns: The path written.
    :raises MissingExtraError: If fpdf2 is not installed (``pip install haystack-deep-research[pdf]``).
    :raises OSError: If the file cannot be written or ``font`` cannot be read.
    """
    try:
        from fpdf import FPDF
    except ImportError as error:
        raise MissingExtraError("PDF exports (-o report.pdf)", extra="pdf", module="fpdf2") from error
    cited = cited_tokens(result)
    pdf = FPDF()
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    found = Path(font) if font is not None else next((Path(p) for p in _FONTS if Path(p).is_file()), None)
    if found is not None:
        pdf.add_font("report", "", str(found))
    family, unicode = ("report", True) if found is not None else ("helvetica", False)

    def write(text: str, size: float, indent: float = 0) -> None:
        text = xml_text(text) if unicode else text.encode("latin-1", "replace").decode("latin-1")
        pdf.set_font(family, size=size)
        pdf.set_x(pdf.l_margin + indent)
        pdf.multi_cell(pdf.epw - indent, size * 0.5, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(size * 0.25)

    for block in blocks(cited):
        write(*_pdf_line(block))
    if cited.passages:
        write("Cited passages", 14)
        for passage in cited.passages:
            heading, text = _note_lines(passage)
            write(heading, 10)
            write(text, 10, indent=6)
    target = Path(path)
    write_file(target, lambda temporary: pdf.output(str(temporary)), named=True)
    return target


def _pdf_line(block: Block) -> tuple[str, float, float]:
    text = "".join(f"[{run.cite}]" if run.cite is not None else run.text for run in block.runs or [])
    if block.kind == "heading":
        return text, max(12.0, 20.0 - 2 * block.level), 0.0
    if block.kind == "item":
        return f"- {text}", 11.0, 5.0 * block.level
    return text, 10.0 if block.kind == "code" else 11.0, 6.0 if block.kind in ("quote", "code") else 0.0


def _verdicts(result: Mapping[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    found: dict[tuple[str, str], tuple[str, str]] = {}
    for verdict in result.get("grounding") or []:
        if not isinstance(verdict, Mapping):
            continue
        sentence = str(verdict.get("sentence") or "")
        for source in verdict.get("sources") or []:
            if isinstance(source, Mapping) and isinstance(source.get("url"), str):
                said = (str(source.get("verdict") or verdict.get("verdict") or ""), str(source.get("reason") or ""))
                found[(sentence, normalize_url(source["url"]))] = said
    return found


def _contradicted(result: Mapping[str, Any]) -> dict[tuple[str, str], list[str]]:
    """What the other source says (figures and URL) for each (citing sentence, source) a contradiction names."""
    found: dict[tuple[str, str], list[str]] = {}
    for contradiction in result.get("contradictions") or []:
        sides = contradiction.get("claims") if isinstance(contradiction, Mapping) else None
        if not isinstance(sides, list) or len(sides) != 2 or not all(isinstance(side, Mapping) for side in sides):
            continue
        for side, other in (sides, sides[::-1]):
            if isinstance(side.get("url"), str) and isinstance(other.get("url"), str):
                said = f"{side.get('figure')} ≠ {other.get('figure')} ({other['url']})"
                found.setdefault((str(side.get("sentence") or ""), normalize_url(side["url"])), []).append(said)
    return found


def export_evidence(result: Mapping[str, Any], path: str | Path) -> Path:
    """
    Write the evidence table of a run (see the module docstring): CSV, or XLSX when ``path`` ends in ``.xlsx``.

    :param result: The run's result: ``report``, ``citations`` (with ``passages``), when grounded ``grounding``, and
        ``contradictions``; one row per cited claim and source, in report order, with :data:`EVIDENCE_COLUMNS`.
    :param path: Where to write it (as ``-o`` is, see :func:`~haystack_deep_research._untrusted.files.write_file`).
    :returns: The path written.
    :raises MissingExtraError: For ``.xlsx`` without openpyxl (``pip install haystack-deep-research[office]``).
    :raises OSError: If the file cannot be written.
    """
    verdicts, contradicted = _verdicts(result), _contradicted(result)
    rows = []
    for passage in cited_tokens(result).passages:
        key = (passage.sentence, normalize_url(passage.url))
        verdict, reason = verdicts.get(key, ("", ""))
        values = (
            passage.sentence_text(),
            passage.url,
            passage.title,
            passage.read_note() if passage.snippet else passage.read_when(),
            " ".join(passage.passage.split()),
            verdict,
            reason,
            passage.named,
            "; ".join(contradicted.get(key, [])),
        )
        rows.append([spreadsheet_cell(value) for value in values])
    if Path(path).suffix.lower() != ".xlsx":
        import csv
        import io

        text = io.StringIO()
        csv.writer(text).writerows([list(EVIDENCE_COLUMNS), *rows])
        write_file(path, text.getvalue(), named=True)
        return Path(path)
    try:
        from openpyxl import Workbook
    except ImportError as error:
        raise MissingExtraError(
            "evidence tables as XLSX (-o evidence.xlsx)", extra="office", module="openpyxl"
        ) from error
    book = Workbook()
    sheet = book.active
    sheet.title = "evidence"
    for row in [list(EVIDENCE_COLUMNS), *rows]:
        sheet.append([xml_text(cell) for cell in row])
    write_file(path, book.save, named=True)
    return Path(path)
