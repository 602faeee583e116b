"""
A report as a Word document (:func:`export_docx`, extra ``[docx]``: python-docx) or a PDF (:func:`export_pdf`, extra
``[pdf]``: fpdf2, pure Python), each with its citations as numbered endnotes: a superscript number after every cited
link, and at the end, for each number, the source's title, URL, when it was read (or "search result snippet, not
read") and the passage behind the citing sentence. Text from the report and the sources is written as text only;
characters XML cannot hold are dropped.

The evidence behind a report as a table a reviewer can audit (:func:`export_evidence`: CSV, or XLSX with the extra
``[office]``): one row per cited claim and source, with the claim as a reader sees it, the passage, the source's
address and title, when it was read (``search result snippet, not read`` for a claim only a search result's snippet
backs), the judge's verdict and reason where the run was grounded, and what another source contradicts in it
(``94 % ≠ 81 % (https://...)``, from the run's ``contradictions``). Every cell a spreadsheet would run as a formula is
written as text.

fpdf2's built-in fonts hold Latin-1 only: :func:`export_pdf` uses a Unicode TrueType font when given one (or when
DejaVu Sans is found in a usual place) and otherwise writes ``?`` for every character outside Latin-1.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from haystack_deep_research._untrusted.files import spreadsheet_cell, write_file
from haystack_deep_research.errors import MissingExtraError
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.report._rendering import Block, Passage, blocks, cited_tokens, xml_text

__all__ = ["EVIDENCE_COLUMNS", "evidence_rows", "export_docx", "export_evidence", "export_pdf"]

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


def _font(pdf: Any, font: str | Path | None) -> tuple[str, bool]:
    """The font family to write with and whether it holds Unicode."""
    found = Path(font) if font is not None else next((Path(p) for p in _FONTS if Path(p).is_file()), None)
    if found is None:
        return "helvetica", False
    pdf.add_font("report", "", str(found))
    return "report", True


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
    family, unicode = _font(pdf, font)

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
    """A block as one text with its size and indent; a citation is written ``[n]``."""
    text = "".join(f"[{run.cite}]" if run.cite is not None else run.text for run in block.runs or [])
    if block.kind == "heading":
        return text, max(12.0, 20.0 - 2 * block.level), 0.0
    if block.kind == "item":
        return f"- {text}", 11.0, 5.0 * block.level
    return text, 10.0 if block.kind == "code" else 11.0, 6.0 if block.kind in ("quote", "code") else 0.0


def _verdicts(result: Mapping[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    """The judge's verdict and reason for each (citing sentence, source) it judged."""
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
    """For each (citing sentence, source) a contradiction names, what the other source says: figures and its URL."""
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


def evidence_rows(result: Mapping[str, Any]) -> list[dict[str, str]]:
    """
    :param result: A run's result: ``report``, ``citations`` (with ``passages``), when grounded ``grounding``, and
        ``contradictions``.
    :returns: One row per cited claim and source, in report order, keyed by :data:`EVIDENCE_COLUMNS`.
    """
    verdicts = _verdicts(result)
    contradicted = _contradicted(result)
    rows = []
    for passage in cited_tokens(result).passages:
        verdict, reason = verdicts.get((passage.sentence, normalize_url(passage.url)), ("", ""))
        values = (
            passage.sentence_text(),
            passage.url,
            passage.title,
            passage.read_note() if passage.snippet else passage.read_when(),
            " ".join(passage.passage.split()),
            verdict,
            reason,
            passage.named,
            "; ".join(contradicted.get((passage.sentence, normalize_url(passage.url)), [])),
        )
        rows.append(dict(zip(EVIDENCE_COLUMNS, values, strict=True)))
    return rows


def export_evidence(result: Mapping[str, Any], path: str | Path) -> Path:
    """
    Write the evidence table of a run (see the module docstring): CSV, or XLSX when ``path`` ends in ``.xlsx``.

    :param result: The run's result (see :func:`evidence_rows`).
    :param path: Where to write it (as ``-o`` is, see :func:`~haystack_deep_research._untrusted.files.write_file`).
    :returns: The path written.
    :raises MissingExtraError: For ``.xlsx`` without openpyxl (``pip install haystack-deep-research[office]``).
    :raises OSError: If the file cannot be written.
    """
    rows = [[spreadsheet_cell(row[column]) for column in EVIDENCE_COLUMNS] for row in evidence_rows(result)]
    if Path(path).suffix.lower() != ".xlsx":
        import csv
        import io

        text = io.StringIO()
        writer = csv.writer(text)
        writer.writerows([list(EVIDENCE_COLUMNS), *rows])
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
