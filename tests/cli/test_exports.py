"""-o chooses the report's format by its suffix, and --sources lists the passage behind every citation."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from haystack_deep_research import cli
from haystack_deep_research.testing import LoopbackChatServer

ROLES = ("scope", "orchestrator", "researcher", "summarizer", "writer")
QUESTION = "What do the notes say about tides?"
GAUGE = "Spring tides reached 4.2 metres at the northern gauge in 2024."


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "tides.md").write_text(f"# Tides\n\n{GAUGE}\n\n<script>document.title='pwned'</script>\n")
    return root


def _run(folder: Path, tmp_path: Path, *options: str) -> int:
    roles = [arg for role in ROLES for arg in ("--role-model", f"{role}={role}")]
    with LoopbackChatServer() as server:
        argv = [QUESTION, "--base-url", server.openai_base_url, *roles, "--docs", str(folder), "--no-web", "-q"]
        return cli.main([*argv, "--index-dir", str(tmp_path / "idx"), *options])


def test_an_html_output_is_one_page_whose_citations_show_their_passages(folder: Path, tmp_path: Path) -> None:
    page, sources = tmp_path / "report.html", tmp_path / "sources.json"

    assert _run(folder, tmp_path, "-o", str(page), "--sources", str(sources)) == 0

    html = page.read_text(encoding="utf-8")
    tides = (folder / "tides.md").as_uri()
    assert html.startswith("<!DOCTYPE html>")
    assert "Content-Security-Policy" in html
    assert "script-src 'none'" in html
    assert 'class="cite" popovertarget="note-1"' in html
    assert GAUGE in html
    assert "<script" not in html
    ledger = json.loads(sources.read_text(encoding="utf-8"))
    (entry,) = [e for e in ledger if e["url"] == tides]
    assert entry["passages"]
    assert all(GAUGE in p["passage"] and p["sentence"] for p in entry["passages"])


def test_a_word_output_has_the_passages_as_endnotes(folder: Path, tmp_path: Path) -> None:
    docx = pytest.importorskip("docx")
    target = tmp_path / "report.docx"

    assert _run(folder, tmp_path, "-o", str(target)) == 0

    text = "\n".join(paragraph.text for paragraph in docx.Document(str(target)).paragraphs)
    assert "Cited passages" in text
    assert GAUGE in text
    assert (folder / "tides.md").as_uri() in text


def test_a_pdf_output_has_the_passages_as_endnotes(folder: Path, tmp_path: Path) -> None:
    pytest.importorskip("fpdf")
    from pypdf import PdfReader

    target = tmp_path / "report.pdf"

    assert _run(folder, tmp_path, "-o", str(target)) == 0

    text = " ".join(page.extract_text() for page in PdfReader(str(target)).pages)
    assert "Cited passages" in text
    assert "4.2 metres at the northern gauge" in " ".join(text.split())


@pytest.mark.parametrize(("suffix", "module", "extra"), [(".docx", "docx", "docx"), (".pdf", "fpdf", "pdf")])
def test_an_export_whose_extra_is_missing_is_refused_before_the_run(
    suffix: str,
    module: str,
    extra: str,
    folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import fails as when the package is not installed

    code = _run(folder, tmp_path, "-o", str(tmp_path / f"report{suffix}"))

    err = capsys.readouterr().err
    assert code == 2
    assert f"pip install haystack-deep-research[{extra}]" in err
    assert not (tmp_path / f"report{suffix}").exists()


def test_an_export_that_fails_after_the_run_keeps_the_markdown_report(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(result: object, path: object) -> None:
        raise RuntimeError("the font file is corrupt")

    monkeypatch.setattr("haystack_deep_research.cli.output.export_pdf", broken)
    target = tmp_path / "report.pdf"

    code = _run(folder, tmp_path, "-o", str(target))

    out, err = capsys.readouterr()
    assert code == 1
    assert out.startswith("# ")  # the Markdown report, on stdout
    assert (folder / "tides.md").as_uri() in out
    assert f"could not export the report as pdf to {target} (RuntimeError: the font file is corrupt)" in err
    assert not target.exists()
    assert not list(tmp_path.glob(".report.pdf*"))  # no temporary file left behind
