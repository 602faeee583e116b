import io
import re

import pypdf
import pytest

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.testing import make_pdf
from haystack_deep_research.testing.pdf import make_inflating_pdf, make_scanned_pdf


def _read(data: bytes) -> pypdf.PdfReader:
    return pypdf.PdfReader(io.BytesIO(data), strict=True)


def test_one_page_per_string_and_text_round_trips():
    data = make_pdf(["Solar panels convert sunlight.", "Wind turbines convert wind."], title="Energy notes")

    reader = _read(data)

    assert data.startswith(b"%PDF-1.4")
    assert data.rstrip().endswith(b"%%EOF")
    assert len(reader.pages) == 2
    assert "Solar panels convert sunlight." in reader.pages[0].extract_text()
    assert "Wind turbines convert wind." in reader.pages[1].extract_text()
    assert reader.metadata is not None
    assert reader.metadata.title == "Energy notes"


def test_single_string_is_one_page_without_title():
    reader = _read(make_pdf("Just one page."))

    assert len(reader.pages) == 1
    assert "Just one page." in reader.pages[0].extract_text()
    assert reader.metadata is None or reader.metadata.title is None


def test_parentheses_and_backslashes_are_escaped():
    text = r"f(x) = (a \ b) and a lone ) or ( too"

    assert text in _read(make_pdf([text])).pages[0].extract_text()


def test_long_text_wraps_and_stays_on_its_page():
    words = [f"token{i}" for i in range(1500)]

    reader = _read(make_pdf([" ".join(words), "second"]))

    extracted = reader.pages[0].extract_text()
    assert len(reader.pages) == 2
    assert extracted.split() == words
    assert extracted.count("\n") > 10
    assert float(reader.pages[0].mediabox.height) > 792


def test_line_breaks_and_blank_pages_are_kept():
    reader = _read(make_pdf(["first line\nsecond line", ""]))

    lines = reader.pages[0].extract_text().splitlines()
    assert lines == ["first line", "second line"]
    assert reader.pages[1].extract_text().strip() == ""


def test_non_latin_title_and_latin_text():
    reader = _read(make_pdf(["Café crème \u2013 naïve"], title="Отчёт (draft)"))

    assert "Café crème \u2013 naïve" in reader.pages[0].extract_text()
    assert reader.metadata is not None
    assert reader.metadata.title == "Отчёт (draft)"


def test_xref_offsets_point_at_objects():
    data = make_pdf(["a", "b", "c"], title="t")

    xref_at = int(re.search(rb"startxref\n(\d+)\n", data).group(1))  # type: ignore[union-attr]
    assert data[xref_at:].startswith(b"xref\n0 ")
    entries = re.findall(rb"(\d{10}) 00000 n \n", data[xref_at:])
    for number, offset in enumerate(entries, start=1):
        assert data[int(offset) :].startswith(b"%d 0 obj" % number)


@pytest.mark.parametrize(
    ("pages", "title"),
    [([], None), (["ok", 3], None), ("ok", 5)],
)
def test_bad_arguments_raise_configuration_error(pages, title):
    with pytest.raises(ConfigurationError):
        make_pdf(pages, title=title)


def test_compressed_pdf_reads_the_same_and_is_smaller():
    pages = ["Solar panels convert sunlight. " * 20, "Wind turbines convert wind."]
    plain, compressed = make_pdf(pages), make_pdf(pages, compress=True)

    assert len(compressed) < len(plain)
    assert b"/FlateDecode" in compressed
    assert [page.extract_text() for page in _read(compressed).pages] == [
        page.extract_text() for page in _read(plain).pages
    ]


def test_scanned_pdf_holds_one_image_per_page_and_only_its_footer_as_text():
    reader = _read(make_scanned_pdf(2, footer="Scanned"))

    assert len(reader.pages) == 2
    assert [len(page.images) for page in reader.pages] == [1, 1]
    assert [page.extract_text() for page in reader.pages] == ["1 Scanned", "2 Scanned"]
    assert _read(make_scanned_pdf()).pages[0].extract_text() == ""


def test_inflating_pdf_is_small_but_inflates_to_the_size_asked():
    data = make_inflating_pdf(1_000_003, pages=2)

    reader = _read(data)

    assert len(data) < 20_000
    assert len(reader.pages) == 2
    content = reader.pages[1].get_contents()
    assert content is not None
    assert len(content.get_data()) == 1_000_003


@pytest.mark.parametrize(
    "call",
    [
        lambda: make_scanned_pdf(0),
        lambda: make_scanned_pdf(True),
        lambda: make_scanned_pdf(1, footer=5),
        lambda: make_inflating_pdf(0),
        lambda: make_inflating_pdf(10, pages=0),
    ],
)
def test_bad_arguments_to_the_other_builders_raise_configuration_error(call):
    with pytest.raises(ConfigurationError):
        call()
