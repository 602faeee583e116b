"""deep-research --docs over a folder as users keep it: office files read and titled by themselves, skips reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from haystack_deep_research import cli
from haystack_deep_research.testing import LoopbackChatServer

pptx = pytest.importorskip("pptx")

ROLES = ("scope", "orchestrator", "researcher", "summarizer", "writer")


def test_a_docs_run_cites_a_presentation_by_its_title_and_sums_up_the_file_it_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "desk"
    folder.mkdir()
    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[1])
    slide.shapes.title.text = "Manticore Sales Deck"
    slide.placeholders[1].text = "Manticore sales doubled in spring, the notes say."
    presentation.save(str(folder / "deck.pptx"))
    (folder / "fake.docx").write_bytes(b"PK\x03\x04 this is no Word file")
    roles = [arg for role in ROLES for arg in ("--role-model", f"{role}={role}")]
    with LoopbackChatServer() as server:
        argv = ["What do the notes say about manticore sales?", "--base-url", server.openai_base_url, *roles]
        argv += ["--docs", str(folder), "--no-web", "--index-dir", str(tmp_path / "idx"), "--progress", "plain"]
        argv += ["--sources", str(tmp_path / "sources.json")]
        code = cli.main(argv)

    out, err = capsys.readouterr()
    assert code == 0, err
    deck = (folder / "deck.pptx").as_uri()
    assert f"]({deck})" in out
    [source] = json.loads((tmp_path / "sources.json").read_text(encoding="utf-8"))
    assert (source["url"], source["title"]) == (deck, "Manticore Sales Deck")
    fake = (folder / "fake.docx").as_uri()
    reason = f"fake.docx: The file at {fake} could not be read: it is not a valid .docx file."
    assert f"[index] {folder}: warning: Not indexed: {reason}" in err  # as the folder is indexed
    assert f"[warning] research: desk: not indexed: {reason}" in err  # and in the run's summary
