"""extract_text reads Word, PowerPoint and Excel files in the parser processes, as it reads PDFs."""

from __future__ import annotations

import io

import pytest

from haystack_deep_research.errors import ExtractionError
from haystack_deep_research.web import FetchedDocument, extract_text

docx = pytest.importorskip("docx")

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _fetched(body: bytes, content_type: str = DOCX) -> FetchedDocument:
    url = "file:///srv/docs/report.docx"
    return FetchedDocument(url=url, final_url=url, status=200, content_type=content_type, charset=None, body=body)


def test_a_word_file_gives_its_first_heading_as_title_and_its_text() -> None:
    document = docx.Document()
    document.add_heading("Tidal Survey", level=1)
    document.add_paragraph("Spring tides reached 4.2 metres.")
    buffer = io.BytesIO()
    document.save(buffer)

    extracted = extract_text(_fetched(buffer.getvalue()))

    assert extracted.title == "Tidal Survey"
    assert "Spring tides reached 4.2 metres." in extracted.text
    assert extracted.content_type == DOCX


def test_a_file_that_is_not_what_its_type_says_is_an_extraction_error() -> None:
    with pytest.raises(ExtractionError, match=r"it is not a valid \.docx file"):
        extract_text(_fetched(b"%PDF-1.4 not a zip at all"))
