"""The exports of a report: HTML (one page, nothing of a source runs), Word and PDF, each with the passages."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from lxml import html as lxml_html

from haystack_deep_research import ResearchRun
from haystack_deep_research.errors import MissingExtraError
from haystack_deep_research.report import citation_findings, export_docx, export_html, export_pdf, verify_report

URL = "https://tides.example/report"
PASSAGE = "The harbour gauge recorded spring tides of 4.2 metres in March 2024."


def _result(title: str = "Harbour tides", extra: str = "") -> dict[str, Any]:
    run = ResearchRun(question="How high were the tides?")
    run.ledger.record_page(url=URL, title=title, text=f"{PASSAGE} {extra}")
    report = (
        "# Tides\n\n"
        f'Spring tides reached 4.2 metres [Harbour]({URL}). <img src=x onerror="alert(1)"> '
        "[run me](javascript:alert(1)) ![pixel](https://tracker.example/p.png)\n"
    )
    check = verify_report(run, report, [URL])
    return {"report": check.report, "citations": citation_findings(check)}


def test_the_page_holds_no_markup_from_the_report_or_a_source() -> None:
    hostile = "<script>alert(1)</script><style>*{display:none}</style>"
    page = export_html(_result(title=f"Tides {hostile}", extra=f'{hostile}<a href="https://evil.example">x</a>'))

    tree = lxml_html.fromstring(page)
    assert tree.xpath("//script") == []
    assert len(tree.xpath("//style")) == 1
    assert tree.xpath("//img | //iframe | //object | //svg") == []
    assert [a for a in tree.xpath("//@*") if a.attrname.startswith("on")] == []
    assert tree.xpath("//a[starts-with(@href, 'javascript')]") == []
    assert {a.get("href") for a in tree.xpath("//a[@href]")} == {URL}  # evil.example stays text in the passage
    (policy,) = tree.xpath("//meta[@http-equiv='Content-Security-Policy']/@content")
    assert "default-src 'none'" in policy
    assert "script-src 'none'" in policy
    (note,) = tree.xpath("//span[@id='note-1']")
    assert note.get("popover") is not None
    assert PASSAGE in note.text_content()
    assert "<script>alert(1)</script>" in note.text_content()  # as text


READ_AT = "2026-12-01T22:35:07.123456+01:00"


def _read_at(result: dict[str, Any]) -> dict[str, Any]:
    """The result with its passage read at ``READ_AT``, a time with microseconds and an offset."""
    result["citations"]["passages"][0]["read_at"] = READ_AT
    return result


def test_the_cited_passages_show_the_citing_sentence_as_text_and_when_it_was_read() -> None:
    tree = lxml_html.fromstring(export_html(_read_at(_result())))

    (notes,) = tree.xpath("//section[@class='notes']")
    (sentence,) = notes.xpath(".//span[@class='sentence']")
    assert sentence.text_content().startswith("Spring tides reached 4.2 metres Harbour.")
    assert "](" not in notes.text_content()
    assert URL not in sentence.text_content()
    assert {span.text_content() for span in tree.xpath("//span[@class='read']")} == {"read 2026-12-01 21:35 UTC"}
    assert ".123456" not in tree.text_content()


def test_a_word_document_lists_the_passages_as_endnotes(tmp_path: Path) -> None:
    docx = pytest.importorskip("docx")

    target = export_docx(_result(title="Tides \x00\x0b of the harbour", extra="\x1b[31m"), tmp_path / "r.docx")

    paragraphs = [p.text for p in docx.Document(str(target)).paragraphs]
    assert paragraphs[0] == "Tides"
    assert any(p.startswith("Spring tides reached 4.2 metres Harbour[1]") for p in paragraphs)
    index = paragraphs.index("Cited passages")
    assert paragraphs[index + 1].startswith(f"[1] Tides of the harbour - {URL} (read ")  # control characters gone
    assert paragraphs[index + 2].startswith(PASSAGE)
    dated = export_docx(_read_at(_result()), tmp_path / "dated.docx")
    heading = [p.text for p in docx.Document(str(dated)).paragraphs if p.text.startswith("[1] ")]
    assert heading == [f"[1] Harbour tides - {URL} (read 2026-12-01 21:35 UTC)"]


def test_a_pdf_lists_the_passages_as_endnotes(tmp_path: Path) -> None:
    pytest.importorskip("fpdf")
    from pypdf import PdfReader

    target = export_pdf(_result(title="Gezeiten \u00fcber \u03a9 and \u6771\u4eac"), tmp_path / "r.pdf")

    text = " ".join(" ".join(page.extract_text() for page in PdfReader(str(target)).pages).split())
    assert "Cited passages" in text
    assert "4.2 metres in March 2024" in text
    dated = export_pdf(_read_at(_result()), tmp_path / "dated.pdf")
    text = " ".join(" ".join(page.extract_text() for page in PdfReader(str(dated)).pages).split())
    assert "(read 2026-12-01 21:35 UTC)" in text
    assert ".123456" not in text


@pytest.mark.parametrize(("export", "module", "extra"), [(export_docx, "docx", "docx"), (export_pdf, "fpdf", "pdf")])
def test_an_export_without_its_extra_names_the_extra(
    export: Any, module: str, extra: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)

    with pytest.raises(MissingExtraError, match=rf"pip install haystack-deep-research\[{extra}\]"):
        export(_result(), tmp_path / "r")


def test_a_passage_with_a_script_url_in_a_forged_result_links_nothing() -> None:
    forged = "javascript:alert(1)"
    result = {
        "report": f"Tides rose [here]({forged}) and [there](file:///etc/passwd).\n",
        "citations": {"passages": [{"url": forged, "title": "x", "read_at": "", "sentence": "", "passage": "p"}]},
    }

    tree = lxml_html.fromstring(export_html(result))

    assert tree.xpath("//a[@href]") == []
    assert tree.xpath("//button") == []


def test_the_evidence_table_has_a_row_per_cited_claim_with_its_passage_and_verdict(tmp_path: Path) -> None:
    import csv

    from haystack_deep_research.report import export_evidence

    result = _read_at(_result(title='=HYPERLINK("https://evil.example","Marées")'))
    sentence = result["citations"]["passages"][0]["sentence"]
    result["grounding"] = [
        {
            "claim": "Spring tides reached 4.2 metres.",
            "sentence": sentence,
            "line": 3,
            "verdict": "supported",
            "sources": [{"url": URL, "verdict": "supported", "reason": "the gauge says 4.2 metres"}],
        },
    ]

    written = export_evidence(result, tmp_path / "evidence.csv")

    header, *rows = list(csv.reader(written.open(encoding="utf-8")))
    assert header == ["claim", "source", "title", "read", "passage", "verdict", "reason", "named", "contradicts"]
    [row] = rows
    claim, source, title, read, passage, verdict, reason, named, contradicts = row
    assert contradicts == ""  # no other source gave another figure
    assert "Spring tides reached 4.2 metres" in claim
    assert "](" not in claim  # the claim as a reader sees it, not its Markdown
    assert (source, read, verdict, reason, named) == (
        URL,
        "2026-12-01 21:35 UTC",
        "supported",
        "the gauge says 4.2 metres",
        "",
    )
    assert PASSAGE in passage
    assert title.startswith("'=HYPERLINK(")  # a spreadsheet shows it as text, never runs it


def test_the_evidence_table_as_a_workbook_keeps_formulas_as_text(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    from haystack_deep_research.report import export_evidence

    written = export_evidence(_result(title="=1+1 tides"), tmp_path / "evidence.xlsx")

    sheet = openpyxl.load_workbook(written).active
    rows = list(sheet.iter_rows(values_only=True))
    assert rows[0][:2] == ("claim", "source")
    assert rows[1][1] == URL
    assert rows[1][2] == "'=1+1 tides"
    assert sheet.cell(row=2, column=3).data_type == "s"  # a string, not a formula


SNIPPET_URL = "https://marees.example/gone"
SNIPPET = "La marée de printemps atteignit 4,2 mètres au port en mars 2024."


def _snippet_result() -> dict[str, Any]:
    """A run whose one source is a search result's snippet: its page was never read."""
    run = ResearchRun(question="Quelle hauteur?")
    run.ledger.record_search_result(url=SNIPPET_URL, title="Marées", snippet=SNIPPET)
    report = f"# Marées\n\nLa marée atteignit 4,2 mètres [Marées]({SNIPPET_URL}).\n"
    check = verify_report(run, report, [SNIPPET_URL])
    return {"report": check.report, "citations": citation_findings(check)}


def test_every_export_says_a_claim_rests_on_a_snippet_not_a_page_read(tmp_path: Path) -> None:
    import csv

    from haystack_deep_research.report import export_evidence

    result = _snippet_result()
    [passage] = result["citations"]["passages"]
    assert (passage["kind"], passage["named"], passage["passage"]) == (
        "snippet",
        "search result snippet, not read",
        SNIPPET,
    )
    assert f"- [Marées]({SNIPPET_URL}) (search result snippet, not read)" in result["report"]

    tree = lxml_html.fromstring(export_html(result))
    assert {span.text_content() for span in tree.xpath("//span[@class='read']")} == {"search result snippet, not read"}
    assert tree.xpath("//span[@class='named']") == []  # said once
    assert "read 20" not in tree.text_content()

    header, row = list(csv.reader(export_evidence(result, tmp_path / "evidence.csv").open(encoding="utf-8")))
    values = dict(zip(header, row, strict=True))
    assert (values["source"], values["read"], values["passage"]) == (
        SNIPPET_URL,
        "search result snippet, not read",
        SNIPPET,
    )

    docx = pytest.importorskip("docx")
    paragraphs = [p.text for p in docx.Document(str(export_docx(result, tmp_path / "r.docx"))).paragraphs]
    assert f"[1] Marées - {SNIPPET_URL} (search result snippet, not read)" in paragraphs
