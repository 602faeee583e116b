"""Tests for extract_text: HTML main text, PDF text layer, plain text, and the errors for unreadable documents."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pypdf
import pytest

from haystack_deep_research.errors import ConfigurationError, ExtractionError, UnsupportedContentError
from haystack_deep_research.web import FetchedDocument, extract_text

URL = "https://docs.test/paper"


def document(body: bytes, content_type: str, charset: str | None = None) -> FetchedDocument:
    return FetchedDocument(url=URL, final_url=URL, status=200, content_type=content_type, charset=charset, body=body)


def make_pdf(pages: list[str], *, title: str | None = None) -> bytes:
    """Write a minimal PDF by hand: one Helvetica font, one text line per page, a correct cross-reference table."""
    count = len(pages)
    kids = " ".join(f"{4 + 2 * index} 0 R" for index in range(count))
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {count} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for index, text in enumerate(pages):
        content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode() if text else b""
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
            + f"/Contents {5 + 2 * index} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    trailer = f"/Size {len(objects) + 1} /Root 1 0 R"
    if title is not None:
        objects.append(f"<< /Title ({title}) >>".encode())
        trailer = f"/Size {len(objects) + 1} /Root 1 0 R /Info {len(objects)} 0 R"
    output = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(output))
        output += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_at = len(output)
    output += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        output += b"%010d 00000 n \n" % offset
    output += f"trailer\n<< {trailer} >>\nstartxref\n{xref_at}\n%%EOF\n".encode()
    return bytes(output)


def encrypt(pdf: bytes, *, user_password: str) -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="RC4-128")
    output = io.BytesIO()
    writer.write(output)
    return output.getvalue()


ARTICLE_SENTENCE = "Tide pools form where the sea retreats at low tide and leaves water behind in rocky hollows."
ARTICLE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Tide Pools of the North Coast</title></head>
<body>
<nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/shop">Shop</a></nav>
<article>
<h1>Tide Pools of the North Coast</h1>
<p>Tide pools form where the sea retreats at low tide and leaves water behind in rocky hollows along the shore.</p>
<p>Anemones, sea stars and small crabs live in these pools and must survive sharp changes in temperature and
salinity every day, which makes them some of the hardiest animals on the coast.</p>
<p>Visitors should step only on bare rock and never lift animals out of the water, because many are fragile.</p>
</article>
<footer>Copyright 2024 Coastal Society. All rights reserved. Cookie settings.</footer>
</body></html>
"""


# --- HTML ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("charset", [None, "utf-8"])
def test_html_main_text_and_title_are_extracted(charset: str | None) -> None:
    result = extract_text(document(ARTICLE.encode(), "text/html", charset), max_pdf_pages=5)
    assert result.title == "Tide Pools of the North Coast"
    assert "Anemones, sea stars and small crabs live in these pools" in result.text
    assert "never lift animals out of the water" in result.text
    assert "Cookie settings" not in result.text
    assert result.content_type == "text/html"


def test_the_title_tag_is_used_when_the_extractor_finds_no_title(monkeypatch: pytest.MonkeyPatch) -> None:
    import trafilatura

    def no_title(*args: object, **kwargs: object) -> SimpleNamespace:
        return SimpleNamespace(title=None, text="Some main text.")

    monkeypatch.setattr(trafilatura, "bare_extraction", no_title)
    page = b"<?xml version='1.0' encoding='utf-8'?><html><head><title> Fallback\n Title </title></head></html>"
    result = extract_text(document(page, "text/html", "utf-8"), max_pdf_pages=5)
    assert (result.title, result.text) == ("Fallback Title", "Some main text.")


@pytest.mark.parametrize(
    ("head", "headings", "title"),
    [
        (
            "<meta property='og:title' content=' Tide  Pools '><title>Tide Pools | Coastal Society</title>",
            1,
            "Tide Pools",
        ),
        ("<title>Tide Pools | Coastal Society</title>", 1, "Heading 1"),
        ("<title>Tide Pools | Coastal Society</title>", 2, "Tide Pools | Coastal Society"),
        ("", 0, ""),
    ],
)
def test_the_title_is_og_title_then_the_only_h1_then_the_title_tag(head: str, headings: int, title: str) -> None:
    h1 = "".join(f"<h1>Heading {n}</h1>" for n in range(1, headings + 1))
    paragraphs = "".join(f"<p>{ARTICLE_SENTENCE} Paragraph {n}.</p>" for n in range(4))
    page = f"<html><head>{head}</head><body><article>{h1}{paragraphs}</article></body></html>"
    result = extract_text(document(page.encode(), "text/html", "utf-8"), max_pdf_pages=5)
    assert result.title == title
    assert "Paragraph 3." in result.text


def test_xhtml_is_read_like_html() -> None:
    result = extract_text(document(ARTICLE.encode(), "application/xhtml+xml"), max_pdf_pages=5)
    assert "rocky hollows along the shore" in result.text
    assert result.content_type == "application/xhtml+xml"


def test_html_in_a_declared_legacy_charset_is_decoded() -> None:
    page = ARTICLE.replace('<meta charset="utf-8">', "").replace("Anemones", "Anémones")
    result = extract_text(document(page.encode("latin-1"), "text/html", "iso-8859-1"), max_pdf_pages=5)
    assert "Anémones, sea stars" in result.text


@pytest.mark.parametrize(
    "page",
    [
        b"<html><head><title>Only a title</title></head><body></body></html>",
        b"<html><head><script>var a = 1;</script></head><body><script>document.write('x')</script></body></html>",
        b"",
    ],
)
def test_html_without_main_text_is_an_extraction_error(page: bytes) -> None:
    with pytest.raises(ExtractionError) as caught:
        extract_text(document(page, "text/html"), max_pdf_pages=5)
    assert str(caught.value) == f"The page at {URL} has no main text to read."
    assert caught.value.url == URL


def test_a_parser_failure_is_an_extraction_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import trafilatura

    def explode(*args: object, **kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(trafilatura, "bare_extraction", explode)
    with pytest.raises(ExtractionError, match=r"could not be parsed as HTML \(RecursionError\)"):
        extract_text(document(ARTICLE.encode(), "text/html"), max_pdf_pages=5)


# --- PDF -------------------------------------------------------------------------------------------------------


def test_the_hand_written_pdf_is_valid() -> None:
    reader = pypdf.PdfReader(io.BytesIO(make_pdf(["Hello"], title="Greeting")), strict=True)
    assert reader.pages[0].extract_text() == "Hello"
    assert reader.metadata is not None
    assert reader.metadata.title == "Greeting"


def test_pdf_text_and_title_are_extracted() -> None:
    pdf = make_pdf(["Hello from page one", "And page two"], title="A Tiny Paper")
    result = extract_text(document(pdf, "application/pdf"), max_pdf_pages=5)
    assert result == type(result)(
        title="A Tiny Paper", text="Hello from page one\n\nAnd page two", content_type="application/pdf"
    )


def test_only_the_first_pages_are_read() -> None:
    pdf = make_pdf(["Alpha", "Bravo", "Charlie"])
    result = extract_text(document(pdf, "application/pdf"), max_pdf_pages=2)
    assert (result.title, result.text) == ("", "Alpha\n\nBravo")


@pytest.mark.parametrize("body", [b"%PDF-1.4\n garbage", b"not a pdf at all", b""])
def test_a_malformed_pdf_is_an_extraction_error(body: bytes) -> None:
    with pytest.raises(ExtractionError, match=rf"^The PDF at {URL} is malformed and cannot be read \("):
        extract_text(document(body, "application/pdf"), max_pdf_pages=5)


def test_an_encrypted_pdf_is_an_extraction_error() -> None:
    pdf = encrypt(make_pdf(["Top secret"]), user_password="secret")
    with pytest.raises(ExtractionError) as caught:
        extract_text(document(pdf, "application/pdf"), max_pdf_pages=5)
    assert str(caught.value) == f"The PDF at {URL} is encrypted and cannot be read."


def test_a_pdf_encrypted_with_an_empty_user_password_is_read() -> None:
    pdf = encrypt(make_pdf(["Open to all"]), user_password="")
    assert extract_text(document(pdf, "application/pdf"), max_pdf_pages=5).text == "Open to all"


def test_a_pdf_without_text_is_an_extraction_error() -> None:
    with pytest.raises(ExtractionError, match="has no text to read"):
        extract_text(document(make_pdf([""]), "application/pdf"), max_pdf_pages=5)


# --- plain text and routing ------------------------------------------------------------------------------------


def test_plain_text_is_decoded_with_its_charset_or_utf8() -> None:
    assert extract_text(document("Café\n".encode("latin-1"), "text/plain", "iso-8859-1"), max_pdf_pages=1).text == (
        "Café"
    )
    assert extract_text(document("\ufeffnaïve".encode(), "text/plain"), max_pdf_pages=1).text == "naïve"
    result = extract_text(document(b"bad \xff byte", "text/plain"), max_pdf_pages=1)
    assert (result.title, result.text, result.content_type) == ("", "bad \ufffd byte", "text/plain")


def test_empty_plain_text_is_an_extraction_error() -> None:
    with pytest.raises(ExtractionError, match=f"The document at {URL} is empty"):
        extract_text(document(b"  \n", "text/plain"), max_pdf_pages=1)


def test_an_unknown_content_type_is_refused() -> None:
    with pytest.raises(UnsupportedContentError, match="The content type image/png at"):
        extract_text(document(b"\x89PNG", "image/png"), max_pdf_pages=1)


@pytest.mark.parametrize("pages", [0, -1, True, 2.0])
def test_max_pdf_pages_must_be_positive(pages: object) -> None:
    with pytest.raises(ConfigurationError, match="max_pdf_pages must be an integer of at least 1"):
        extract_text(document(b"x", "text/plain"), max_pdf_pages=pages)  # type: ignore[arg-type]
