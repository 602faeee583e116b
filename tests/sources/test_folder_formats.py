"""index_folder reads documents as users keep them: office files, CSV, text in any encoding, each titled by itself."""

from __future__ import annotations

import resource
import sys
import zipfile
from pathlib import Path

import pytest

from haystack_deep_research.sources import index_folder
from haystack_deep_research.sources import indexing as _folder_files
from haystack_deep_research.sources.datastore import FolderRetriever
from haystack_deep_research.testing import make_pdf
from haystack_deep_research.web import FetchLimits

docx = pytest.importorskip("docx")
pptx = pytest.importorskip("pptx")
openpyxl = pytest.importorskip("openpyxl")
pytest.importorskip("pandas")


def write_docx(path: Path, *, title: str = "", heading: str = "", text: str) -> None:
    document = docx.Document()
    document.core_properties.title = title
    if heading:
        document.add_heading(heading, level=1)
    document.add_paragraph(text)
    document.save(str(path))


def write_pptx(path: Path, *, title: str, text: str) -> None:
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = title
    slide.placeholders[1].text = text
    presentation.save(str(path))


def write_xlsx(path: Path, *, title: str, rows: list[list[object]]) -> None:
    workbook = openpyxl.Workbook()
    for row in rows:
        workbook.active.append(row)
    workbook.properties.title = title
    workbook.save(str(path))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "desk"
    root.mkdir()
    write_docx(root / "q3.docx", title="Quarterly Widget Review", text="Widget output of the zebracorn line rose.")
    write_docx(root / "memo.docx", heading="Gryphon Census Memo", text="The gryphon count fell by a third.")
    write_pptx(root / "deck.pptx", title="Manticore Sales Deck", text="Manticore sales doubled in spring.")
    write_xlsx(root / "stock.xlsx", title="Basilisk Stock Book", rows=[["item", "count"], ["basilisk", 42]])
    (root / "herd.csv").write_text("animal,count\nchimera,7\n", encoding="utf-8")
    (root / "notes-latin1.txt").write_bytes(
        "Le café crème était très apprécié à Paris, où les garçons servaient des crêpes au marché.".encode("latin-1")
    )
    (root / "notes-utf16.txt").write_bytes("Hippogriff flights over the fjord were counted twice.".encode("utf-16"))
    (root / "guide.md").write_text(
        "```\n# not the title, a comment in code\n```\n\n# Phoenix *Field* Guide\n\nPhoenix nests burn yearly.\n"
    )
    (root / "page.html").write_text(
        "<html><head><title>Kraken Sightings</title></head><body><article><p>Kraken sightings off the coast rose "
        "sharply this winter, fishermen said.</p></article></body></html>"
    )
    (root / "report.pdf").write_bytes(make_pdf(["Unicorn herds grazed the upper valley."], title="Unicorn Herd Report"))
    return root


def _best(retriever: FolderRetriever, query: str) -> tuple[str, str, str]:
    document = retriever.run(query=query, top_k=1)["documents"][0]
    return Path(document.meta["file_path"]).name, document.meta["title"], document.content or ""


def test_every_format_is_searchable_and_titled_by_itself(folder: Path, tmp_path: Path) -> None:
    index = index_folder(folder, cache_dir=tmp_path / "cache")["retriever"]

    assert index.index.warnings == ()
    assert _best(index, "zebracorn")[:2] == ("q3.docx", "Quarterly Widget Review")  # core properties title
    assert _best(index, "gryphon")[:2] == ("memo.docx", "Gryphon Census Memo")  # first heading
    assert _best(index, "manticore")[:2] == ("deck.pptx", "Manticore Sales Deck")  # first slide title
    assert _best(index, "basilisk")[:2] == ("stock.xlsx", "Basilisk Stock Book")
    assert _best(index, "chimera")[:2] == ("herd.csv", "herd.csv")  # no title of its own: the file name
    name, title, text = _best(index, "Paris")
    assert (name, title) == ("notes-latin1.txt", "notes-latin1.txt")
    assert "café crème était très apprécié" in text  # Latin-1 decoded, not dropped
    assert _best(index, "hippogriff")[0] == "notes-utf16.txt"
    assert _best(index, "phoenix")[:2] == ("guide.md", "Phoenix Field Guide")  # not the "#" line in code
    assert _best(index, "kraken")[:2] == ("page.html", "Kraken Sightings")
    assert _best(index, "unicorn")[:2] == ("report.pdf", "Unicorn Herd Report")


def test_a_missing_extra_skips_the_file_with_a_warning_naming_the_extra(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pptx", None)  # import pptx now raises ImportError
    cache = tmp_path / "cache"
    index = index_folder(folder, cache_dir=cache)["retriever"]

    assert index.index.warnings == (
        "deck.pptx: install haystack-deep-research[office] to read .pptx files (python-pptx is missing)",
    )
    assert _best(index, "zebracorn")[0] == "q3.docx"  # the other files are read
    assert index.run(query="manticore")["documents"] == []

    monkeypatch.delitem(sys.modules, "pptx")  # the extra is installed: the folder is indexed again, the file read
    again = index_folder(folder, cache_dir=cache)["retriever"]
    assert again.index.reused is False
    assert again.index.warnings == ()
    assert _best(again, "manticore")[0] == "deck.pptx"


def test_a_damaged_office_file_and_a_binary_text_file_are_skipped_with_their_reasons(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "fake.docx").write_bytes(b"PK\x03\x04 this is no Word file")
    (root / "blob.txt").write_bytes(bytes(range(256)) * 8)
    (root / "fine.txt").write_text("Selkies sang at dusk.")

    index = index_folder(root, cache_dir=tmp_path / "cache")["retriever"].index

    assert index.files == 3
    assert index.warnings == (
        "blob.txt: blob.txt is not text in any encoding recognised (a binary file?).",
        f"fake.docx: The file at {(root / 'fake.docx').as_uri()} could not be read: it is not a valid .docx file.",
    )


def test_a_title_with_links_and_markup_is_cleaned_before_anyone_sees_it(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    hostile = "[Quarterly](https://evil.example/track) <img src=x onerror=alert(1)>Review"
    write_docx(root / "q.docx", title=hostile, text="Selkie numbers held steady.")
    (root / "links.md").write_text("# See [Tide](http://evil.example/) <b>Tables</b>\n\nKelp forests grew.\n")

    index = index_folder(root, cache_dir=tmp_path / "cache")["retriever"]

    assert _best(index, "selkie")[1] == "Quarterly Review"
    assert _best(index, "kelp")[1] == "See Tide Tables"


def test_a_word_file_that_unpacks_past_the_memory_allowed_is_cut_in_its_parser_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    write_docx(root / "fine.docx", text="Selkies sang at dusk.")
    with (
        zipfile.ZipFile(root / "fine.docx") as valid,
        zipfile.ZipFile(root / "bomb.docx", "w", compression=zipfile.ZIP_DEFLATED) as bomb,
    ):
        for item in valid.infolist():
            if item.filename != "word/document.xml":
                bomb.writestr(item, valid.read(item))
        with bomb.open("word/document.xml", "w") as part:  # 64 MiB of text in about 70 KiB
            part.write(b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">')
            part.write(b"<w:body><w:p><w:r><w:t>")
            for _ in range(64):
                part.write(b"a" * 1024 * 1024)
            part.write(b"</w:t></w:r></w:p></w:body></w:document>")
    assert (root / "bomb.docx").stat().st_size < 1024 * 1024
    limits = FetchLimits(max_extraction_memory=32 * 1024 * 1024, extraction_timeout=60.0)
    monkeypatch.setattr(_folder_files, "DOCUMENT_LIMITS", limits)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    index = index_folder(root, cache_dir=tmp_path / "cache")["retriever"]

    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak < 40 * 1024  # KiB: never unpacked here
    assert _best(index, "selkies")[0] == "fine.docx"
    assert index.index.warnings == (
        f"bomb.docx: Extracting the text of {(root / 'bomb.docx').as_uri()} needed more memory than allowed "
        "(FetchLimits.max_extraction_memory); the document was not read.",
    )
