"""index_folder: PDF, HTML, Markdown and text files in a BM25 store, cached while unchanged, cited by file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from haystack.dataclasses import ChatMessage

from haystack_deep_research import ConfigurationError, Sources, create_deep_research_agent
from haystack_deep_research.sources import index_folder
from haystack_deep_research.sources.datastore import FolderRetriever, folder_store_name
from haystack_deep_research.testing import ScriptedChatGenerator, make_pdf


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "Field Notes"
    (root / "sub").mkdir(parents=True)
    (root / "tides.md").write_text("# Tides\n\nSpring tides reached 4.2 metres at the northern gauge.\n")
    (root / "sub" / "harbour.txt").write_text("Neap tides at the harbour stayed below 1.5 metres.\n")
    (root / "moon.html").write_text(
        "<html><head><title>Moon</title></head><body><article><p>The moon drives the ocean tides, and the sun "
        "adds a smaller pull twice a month.</p></article></body></html>"
    )
    (root / "storage.pdf").write_bytes(make_pdf(["Grid battery storage doubled in 2025 to 300 gigawatt hours."]))
    (root / ".hidden.txt").write_text("secret tides")
    (root / "image.png").write_bytes(b"\x89PNG")
    return root


def _files(retriever: FolderRetriever, query: str) -> list[str]:
    return [Path(d.meta["file_path"]).name for d in retriever.run(query=query, top_k=4)["documents"]]


def test_every_supported_file_is_indexed_with_its_full_path(folder: Path, tmp_path: Path) -> None:
    calls: list[tuple[int, int, str]] = []
    spec = index_folder(folder, cache_dir=tmp_path / "cache", progress=lambda *call: calls.append(call))
    retriever = spec["retriever"]

    assert spec["description"] == "documents in Field Notes"
    assert _files(retriever, "battery storage gigawatt")[0] == "storage.pdf"
    assert _files(retriever, "harbour")[0] == "harbour.txt"
    assert _files(retriever, "moon pull")[0] == "moon.html"
    assert _files(retriever, "northern gauge")[0] == "tides.md"
    assert retriever.run(query="xylophone", top_k=4)["documents"] == []  # no score-0 filler
    assert retriever.run(query="harbour")["documents"][0].meta["file_path"] == str(folder / "sub" / "harbour.txt")
    assert [call[0] for call in calls] == [0, 1, 2, 3, 4]  # four files, then done; hidden and .png skipped
    assert all(call[1] == 4 for call in calls)


def test_the_index_is_reused_until_a_file_changes(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert index_folder(folder, cache_dir=cache)["retriever"].index.reused is False
    assert index_folder(folder, cache_dir=cache)["retriever"].index.reused is True

    changed = folder / "sub" / "harbour.txt"
    changed.write_text("The harbour now records king tides of 2.1 metres.\n")
    os.utime(changed, ns=(changed.stat().st_atime_ns, changed.stat().st_mtime_ns + 10**9))
    rebuilt = index_folder(folder, cache_dir=cache)["retriever"]
    assert rebuilt.index.reused is False
    assert "king tides" in rebuilt.run(query="king tides")["documents"][0].content

    (folder / "new.txt").write_text("A new file about estuaries.\n")
    again = index_folder(folder, cache_dir=cache)["retriever"]
    assert again.index.reused is False
    assert _files(again, "estuaries") == ["new.txt"]


def test_bad_folders_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="is not a folder"):
        index_folder(tmp_path / "missing", cache_dir=tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigurationError, match="holds no file to index"):
        index_folder(tmp_path / "empty", cache_dir=tmp_path)


def test_the_retriever_round_trips_and_reloads_the_cached_index(folder: Path, tmp_path: Path) -> None:
    retriever = index_folder(folder, cache_dir=tmp_path / "cache")["retriever"]
    restored = FolderRetriever.from_dict(retriever.to_dict())

    assert restored.to_dict() == retriever.to_dict()
    assert _files(restored, "harbour")[0] == "harbour.txt"
    assert restored.index is not None
    assert restored.index.reused is True


def test_store_names_come_from_the_folder_name(folder: Path) -> None:
    assert folder_store_name(folder) == "field_notes"
    assert folder_store_name("/") == "docs"


def test_a_run_over_a_folder_cites_its_files(folder: Path, tmp_path: Path) -> None:
    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["spring tides", "battery storage"]),
        researcher_llm=ScriptedChatGenerator(role="researcher"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=ScriptedChatGenerator(role="writer"),
        sources=Sources(datastores={"notes": index_folder(folder, cache_dir=tmp_path / "cache", top_k=1)}, web=False),
    )

    result = agent.run(messages=[ChatMessage.from_user("Tides and storage?")])

    tides, storage = (folder / "tides.md").as_uri(), (folder / "storage.pdf").as_uri()
    assert f"]({tides})" in result["report"]
    assert f"]({storage})" in result["report"]
    assert {entry["url"] for entry in result["sources"]} == {tides, storage}
    assert result["exit_reason"] == "text"


@pytest.mark.skipif(os.name == "nt", reason="a file name that is not UTF-8 is a POSIX case")
def test_a_file_name_that_is_not_utf8_becomes_a_clean_title_and_the_ledger_serializes(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    with open(os.path.join(os.fsencode(root), b"caf\xe9.txt"), "w", encoding="utf-8") as file:
        file.write("Spring tides reached 4.2 metres at the northern gauge.\n")
    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["spring tides"]),
        researcher_llm=ScriptedChatGenerator(role="researcher"),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=ScriptedChatGenerator(role="writer"),
        sources=Sources(datastores={"notes": index_folder(root, cache_dir=tmp_path / "cache", top_k=1)}, web=False),
    )

    result = agent.run(messages=[ChatMessage.from_user("Spring tides?")])

    [entry] = result["sources"]
    assert entry["title"] == "caf\ufffd.txt"
    assert entry["url"] == (root / os.fsdecode(b"caf\xe9.txt")).as_uri()  # the real file, its byte as %E9
    assert "%E9" in entry["url"]
    json.dumps(result["sources"], ensure_ascii=False).encode("utf-8")  # what --sources writes
