"""Every verified citation carries the passage of its source behind the sentence citing it, chosen from the ledger."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from haystack.dataclasses import ChatMessage

from haystack_deep_research import ResearchRun, Sources
from haystack_deep_research.evidence.citations import extract_citations
from haystack_deep_research.evidence.entry import normalize_url
from haystack_deep_research.report import verify_report
from haystack_deep_research.sources import index_folder
from haystack_deep_research.testing import make_pdf

FILLER = " ".join(f"Paragraph {n} is about the weather in town number {n}, nothing else." for n in range(40))
PAGE = f"{FILLER}\n\nThe harbour gauge recorded spring tides of 4.2 metres in March 2024.\n\n{FILLER}"
URL = "https://tides.example/report"


def _run(text: str = PAGE) -> ResearchRun:
    run = ResearchRun(question="How high were the tides?")
    run.ledger.record_page(url=URL, title="Harbour tides", text=text)
    run.ledger.record_search_result(url="https://seen.example/only", title="Seen", snippet="never read")
    return run


def test_the_passage_is_the_window_of_the_stored_text_that_matches_the_citing_sentence() -> None:
    run = _run()
    report = (
        "# Tides\n\nSpring tides reached 4.2 metres at the harbour gauge "
        "[Harbour tides](https://tides.example/report/). "
        "The quote the model made up: 'tides were 9 metres' [seen](https://seen.example/only).\n"
    )

    check = verify_report(run, report, [URL])

    entry = run.ledger.get(URL)
    assert entry is not None
    assert len(check.passages) == 1
    (passage,) = check.passages
    assert passage["url"] == URL
    assert passage["title"] == "Harbour tides"
    assert passage["read_at"] == entry.fetched_at
    assert passage["sentence"].startswith("Spring tides reached 4.2 metres at the harbour gauge")
    assert "The harbour gauge recorded spring tides of 4.2 metres in March 2024." in passage["passage"]
    assert "9 metres" not in passage["passage"]
    assert len(passage["passage"]) <= 400
    assert passage["passage"] in entry.text


def test_each_citing_sentence_gets_its_own_passage_once() -> None:
    text = f"Tides are driven by the moon.\n\n{FILLER}\n\nStorms add a surge of half a metre.\n\n{FILLER}"
    run = _run(text)
    report = (
        f"The moon drives the tides [a]({URL}). A storm surge adds half a metre [b]({URL}) [c]({URL}).\n\n"
        f"The moon drives the tides [a]({URL}).\n"
    )

    check = verify_report(run, report, [URL])

    assert [p["sentence"].split(" [")[0] for p in check.passages] == [
        "The moon drives the tides",
        "A storm surge adds half a metre",
    ]
    assert "Tides are driven by the moon." in check.passages[0]["passage"]
    assert "Storms add a surge of half a metre." in check.passages[1]["passage"]
    assert "Storms" not in check.passages[0]["passage"]


@pytest.mark.parametrize("shape", ["make_agent", "make_workflow"])
def test_every_verified_citation_of_a_shape_carries_a_passage_of_what_was_read(
    shape: str, request: pytest.FixtureRequest
) -> None:
    build: Callable[..., Any] = request.getfixturevalue(shape)

    result = build().run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    texts = {normalize_url(source["url"]): source for source in result["sources"] if source["text"]}
    body = [c for c in extract_citations(result["report"], sources_section=False) if normalize_url(c.url) in texts]
    passages = result["citations"]["passages"]
    assert body, "the scripted run cites what it read"
    assert {(normalize_url(c.url), c.sentence) for c in body} == {
        (normalize_url(p["url"]), p["sentence"]) for p in passages
    }
    for passage in passages:
        source = texts[normalize_url(passage["url"])]
        assert passage["passage"]
        assert passage["passage"] in source["text"]
        assert len(passage["passage"]) <= 400
        assert (passage["title"], passage["read_at"]) == (source["title"], source["fetched_at"])


def test_every_verified_citation_carries_its_passage_whatever_the_kind_of_source(
    make_agent: Callable[..., Any], tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "solar.md").write_text("# Solar notes\n\n- Solar grew by 450 gigawatts in 2025, the memo says.\n")
    (folder / "storage notes é.txt").write_text("Battery storage doubled in 2025, say the desk notes.\r\n")
    (folder / "grid.pdf").write_bytes(make_pdf(["Grid storage doubled in 2025 to 300 gigawatt hours."]))
    agent = make_agent(sources=Sources(datastores={"notes": index_folder(folder, cache_dir=tmp_path / "idx")}))

    result = agent.run(messages=[ChatMessage.from_user("How fast is solar growing?")])

    sources = {normalize_url(source["url"]): source for source in result["sources"]}
    passages = {(normalize_url(p["url"]), p["sentence"]): p["passage"] for p in result["citations"]["passages"]}
    verified = result["citations"]["verified"]
    kinds = {sources[normalize_url(c["url"])]["kind"] for c in verified}
    suffixes = {c["url"].rsplit(".", 1)[-1] for c in verified if c["url"].startswith("file:")}
    assert (kinds, suffixes) == ({"page", "document"}, {"md", "txt", "pdf"})
    for citation in verified:
        passage = passages[(normalize_url(citation["url"]), citation["sentence"])]
        assert passage
        assert passage in sources[normalize_url(citation["url"])]["text"]
