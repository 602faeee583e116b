"""Tests for extract_text: HTML main text, PDF text layer, plain text, and the errors for unreadable documents."""

from __future__ import annotations

import asyncio
import io
import sys
import time

import pypdf
import pytest

from haystack_deep_research.errors import ConfigurationError, ExtractionError, UnsupportedContentError
from haystack_deep_research.testing import make_pdf as make_kit_pdf
from haystack_deep_research.testing.pdf import make_inflating_pdf, make_scanned_pdf
from haystack_deep_research.web import FetchedDocument, FetchLimits, extract_text, extract_text_async

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


def encrypt(pdf: bytes, *, user_password: str, algorithm: str = "RC4-128") -> bytes:
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm=algorithm)
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


def test_the_title_tag_is_used_with_its_whitespace_collapsed() -> None:
    page = (
        "<?xml version='1.0' encoding='utf-8'?><html><head><title> Fallback\n Title </title></head><body><article>"
        + "".join(f"<p>{ARTICLE_SENTENCE} Paragraph {n}.</p>" for n in range(4))
        + "</article></body></html>"
    )
    result = extract_text(document(page.encode(), "text/html", "utf-8"), max_pdf_pages=5)
    assert result.title == "Fallback Title"
    assert "Paragraph 3." in result.text


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


def attribute_bomb(attributes: int) -> bytes:
    names = " ".join(f'a{n}="v"' for n in range(attributes))
    return f"<html><body><article><p {names}>{ARTICLE_SENTENCE}</p></article></body></html>".encode()


@pytest.mark.parametrize("attributes", [70_000, 400_000])
def test_an_element_with_tens_of_thousands_of_attributes_is_refused_quickly(attributes: int) -> None:
    # 0.7 MB and 3.9 MB: the HTML parser would spend about half a minute, and more than five minutes, on them.
    started = time.monotonic()
    with pytest.raises(ExtractionError) as caught:
        extract_text(document(attribute_bomb(attributes), "text/html"))
    assert time.monotonic() - started < 5
    assert str(caught.value) == (
        f"The page at {URL} was not parsed: its elements carry too many attributes (up to {attributes + 1} on one "
        "element), which would take the HTML parser minutes."
    )
    assert caught.value.url == URL


def test_a_few_thousand_attributes_are_still_read() -> None:
    result = extract_text(document(attribute_bomb(3_000), "text/html"))
    assert ARTICLE_SENTENCE in result.text


def big_page(paragraphs: int) -> bytes:
    body = "".join(f"<div class='s'><h2>Section {n}</h2><p>{ARTICLE_SENTENCE * 8}</p></div>" for n in range(paragraphs))
    return f"<html><head><title>Long</title></head><body><article>{body}</article></body></html>".encode()


def test_a_document_that_takes_longer_than_the_extraction_timeout_is_refused() -> None:
    slow = document(big_page(3_000), "text/html")  # about 2.3 MB, a second or more to parse
    started = time.monotonic()
    with pytest.raises(ExtractionError) as caught:
        extract_text(slow, limits=FetchLimits(extraction_timeout=0.05))
    assert time.monotonic() - started < 5
    assert str(caught.value) == (
        f"Extracting the text of {URL} took longer than the 0.05 seconds allowed (FetchLimits.extraction_timeout); "
        "the document was not read."
    )
    # The parser process that was stopped is replaced: the next document is read as usual.
    assert "Anemones" in extract_text(document(ARTICLE.encode(), "text/html")).text


def test_the_callers_deadline_ends_an_extraction() -> None:
    slow = document(big_page(3_000), "text/html")
    started = time.monotonic()
    with pytest.raises(ExtractionError, match=r"was stopped when the caller's deadline of 0\.2 seconds ran out"):
        extract_text(slow, deadline_s=0.2)
    assert time.monotonic() - started < 5
    with pytest.raises(ExtractionError, match="the caller's deadline of 0 seconds ran out"):
        extract_text(document(ARTICLE.encode(), "text/html"), deadline_s=0)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the memory limit is enforced on Linux")
def test_a_document_that_needs_more_memory_than_allowed_is_refused() -> None:
    dense = document(make_inflating_pdf(1_000_000), "application/pdf")  # parsing this page takes about 40 MiB
    with pytest.raises(ExtractionError) as caught:
        extract_text(dense, limits=FetchLimits(max_extraction_memory=32 * 2**20))
    assert str(caught.value) == (
        f"Extracting the text of {URL} needed more memory than allowed (FetchLimits.max_extraction_memory); the "
        "document was not read."
    )
    assert "Anemones" in extract_text(document(ARTICLE.encode(), "text/html")).text


async def test_async_extraction_reads_the_same_text_without_blocking_the_loop() -> None:
    slow = await extract_text_async(document(big_page(1_000), "text/html"))
    parsing = asyncio.create_task(extract_text_async(document(big_page(2_000), "text/html")))
    await asyncio.sleep(0)  # the task runs until it waits for its parse
    # the loop is back here while the page is parsed elsewhere; a parse on the loop would have ended first
    loop_kept_running = not parsing.done()
    result = await parsing

    assert loop_kept_running
    assert slow.title == result.title == "Long"
    assert "Section 1999" in result.text
    assert await extract_text_async(document(ARTICLE.encode(), "text/html")) == extract_text(
        document(ARTICLE.encode(), "text/html")
    )


async def test_cancelling_an_async_extraction_frees_its_parser() -> None:
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.2):
            await extract_text_async(document(big_page(3_000), "text/html"))
    assert time.monotonic() - started < 2
    assert "Anemones" in (await extract_text_async(document(ARTICLE.encode(), "text/html"))).text


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


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_a_pdf_locked_by_a_password_is_reported_as_encrypted(algorithm: str) -> None:
    pdf = encrypt(make_pdf(["Top secret"]), user_password="secret", algorithm=algorithm)
    with pytest.raises(ExtractionError) as caught:
        extract_text(document(pdf, "application/pdf"), max_pdf_pages=5)
    assert str(caught.value) == f"The PDF at {URL} is encrypted with a password and cannot be read."


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_a_pdf_encrypted_with_an_empty_user_password_is_read(algorithm: str) -> None:
    pdf = encrypt(make_pdf(["Open to all"]), user_password="", algorithm=algorithm)
    assert extract_text(document(pdf, "application/pdf"), max_pdf_pages=5).text == "Open to all"


def test_a_pdf_without_text_is_an_extraction_error() -> None:
    with pytest.raises(ExtractionError, match="has no text to read"):
        extract_text(document(make_pdf([""]), "application/pdf"), max_pdf_pages=5)


@pytest.mark.parametrize("footer", ["", "Scanned by an office copier"])
def test_a_scan_without_a_text_layer_is_an_extraction_error(footer: str) -> None:
    with pytest.raises(ExtractionError) as caught:
        extract_text(document(make_scanned_pdf(3, footer=footer), "application/pdf"))
    assert (
        str(caught.value) == f"The PDF at {URL} has no text layer to read: its pages hold only images, as a scan does."
    )


def test_a_short_pdf_without_images_is_read() -> None:
    assert extract_text(document(make_kit_pdf(["Hi", "Yes"], compress=True), "application/pdf")).text == "Hi\n\nYes"


@pytest.mark.parametrize("pages", [1, 5])
def test_a_decompression_bomb_is_refused_before_it_is_inflated(pages: int) -> None:
    bomb = make_inflating_pdf(74_000_000, pages=pages)  # about 110 KB per page
    started = time.monotonic()
    with pytest.raises(ExtractionError) as caught:
        extract_text(document(bomb, "application/pdf"))
    assert time.monotonic() - started < 5
    assert str(caught.value) == (
        f"The PDF at {URL} was not read: its pages decompress to more than the 4000000 bytes of content allowed "
        "(FetchLimits.max_pdf_decompressed_bytes) before any text is found."
    )


def test_pages_after_the_decompression_budget_are_left_out() -> None:
    text = make_kit_pdf(["First page of text.", "Second page of text."], compress=True)
    reader = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(text)))
    reader.append(pypdf.PdfReader(io.BytesIO(make_inflating_pdf(2_000_000))))
    out = io.BytesIO()
    reader.write(out)
    limits = FetchLimits(max_pdf_decompressed_bytes=1_000_000)
    result = extract_text(document(out.getvalue(), "application/pdf"), limits=limits)
    assert result.text == "First page of text.\n\nSecond page of text."


def test_a_page_with_too_many_drawing_instructions_is_refused() -> None:
    with pytest.raises(ExtractionError, match="a page holds more than the 300000 drawing instructions"):
        extract_text(document(make_inflating_pdf(3_000_000), "application/pdf"))


def test_limits_set_the_pages_read_and_max_pdf_pages_overrides_them() -> None:
    pdf = document(make_pdf(["Alpha", "Bravo", "Charlie"]), "application/pdf")
    assert extract_text(pdf, limits=FetchLimits(max_pdf_pages=1)).text == "Alpha"
    assert extract_text(pdf, limits=FetchLimits(max_pdf_pages=1), max_pdf_pages=2).text == "Alpha\n\nBravo"
    assert extract_text(pdf).text == "Alpha\n\nBravo\n\nCharlie"


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


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"limits": {"max_pdf_pages": 1}}, "limits must be a FetchLimits or None; got dict."),
        ({"deadline_s": -1}, "deadline_s must be a number from 0; got -1."),
    ],
)
async def test_bad_arguments_are_configuration_errors(arguments: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        extract_text(document(b"x", "text/plain"), **arguments)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError) as caught_async:
        await extract_text_async(document(b"x", "text/plain"), **arguments)  # type: ignore[arg-type]
    assert str(caught.value) == str(caught_async.value) == message
