import io
import re

import pypdf
import pytest

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.testing import make_pdf


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
