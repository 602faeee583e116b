"""Tests of the evidence ledger and URL normalisation."""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import threading
from datetime import datetime
from pathlib import Path

import pytest

import haystack_deep_research
from haystack_deep_research import UrlPolicy
from haystack_deep_research.errors import ConfigurationError, URLRefusedError
from haystack_deep_research.evidence import EvidenceLedger, SourceEntry
from haystack_deep_research.evidence.entry import normalize_url, source_id
from haystack_deep_research.evidence.verification import verify_citations


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://example.com/a/", "https://example.com/a"),
        ("https://example.com/a", "https://example.com/a"),
        ("https://example.com/", "https://example.com/"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com/a#section-2", "https://example.com/a"),
        ("https://example.com/#top", "https://example.com/"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:80/a", "https://example.com:80/a"),
        ("http://example.com:8080/a/", "http://example.com:8080/a"),
        ("HTTPS://Example.COM/Path/Case", "https://example.com/Path/Case"),
        ("https://example.com/a/?q=1", "https://example.com/a?q=1"),
        ("https://example.com/s?b=2&a=1", "https://example.com/s?b=2&a=1"),
        ("https://example.com/s?Q=A%20B", "https://example.com/s?Q=A%20B"),
        ("https://User@Example.com/x", "https://User@example.com/x"),
        ("https://[2001:DB8::1]:443/x", "https://[2001:db8::1]/x"),
        ("  https://example.com/a  ", "https://example.com/a"),
    ],
)
def test_normalize_url_removes_only_trivial_differences(url: str, expected: str) -> None:
    assert normalize_url(url) == expected


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("http://example.com/a", "https://example.com/a"),
        ("https://www.example.com/a", "https://example.com/a"),
        ("https://example.com/s?a=1&b=2", "https://example.com/s?b=2&a=1"),
        ("https://example.com/a", "https://example.com/A"),
        ("https://example.com/a?x=1", "https://example.com/a"),
    ],
)
def test_normalize_url_keeps_meaningful_differences(first: str, second: str) -> None:
    assert normalize_url(first) != normalize_url(second)


@pytest.mark.parametrize("bad", ["", "   ", None, 42])
def test_normalize_url_rejects_blank_and_non_strings(bad: object) -> None:
    with pytest.raises(ConfigurationError):
        normalize_url(bad)  # type: ignore[arg-type]


def test_normalize_url_returns_unparseable_url_unchanged() -> None:
    assert normalize_url("https://[not-ipv6/x") == "https://[not-ipv6/x"


def test_source_id_is_stable_and_derived_from_the_normal_form() -> None:
    digest = hashlib.sha256(b"https://example.com/a").hexdigest()
    assert source_id("https://example.com/a") == "S" + digest[:8]
    assert source_id("HTTPS://EXAMPLE.com:443/a/#frag") == source_id("https://example.com/a")
    assert source_id("http://example.com/a") != source_id("https://example.com/a")


def test_record_search_result_creates_an_entry() -> None:
    ledger = EvidenceLedger()
    entry = ledger.record_search_result(url="https://example.com/a", title="A", snippet="about a")
    assert entry.id == source_id("https://example.com/a")
    assert (entry.url, entry.title, entry.snippet, entry.kind) == (
        "https://example.com/a",
        "A",
        "about a",
        "snippet",
    )
    assert (entry.text, entry.summary) == ("about a", "")  # the snippet is the entry's passage
    assert entry.note == "search result snippet, not read"
    assert datetime.fromisoformat(entry.fetched_at).tzinfo is not None
    assert len(ledger) == 1
    assert ledger.get("https://EXAMPLE.com/a/") == entry


def test_record_page_upgrades_a_search_result_keeping_id_and_position() -> None:
    ledger = EvidenceLedger()
    first = ledger.record_search_result(url="https://example.com/a", title="A", snippet="snip")
    ledger.record_search_result(url="https://example.com/b", title="B", snippet="")
    page = ledger.record_page(url="https://example.com/a/#intro", title="", text="full text", summary="sum")
    assert page.id == first.id
    assert page.kind == "page"
    assert page.url == "https://example.com/a/#intro"
    assert page.title == "A"
    assert page.snippet == "snip"
    assert page.text == "full text"
    assert page.summary == "sum"
    assert page.content_hash == hashlib.sha256(b"full text").hexdigest()
    assert [entry.id for entry in ledger.entries()] == [first.id, source_id("https://example.com/b")]
    assert len(ledger) == 2


def test_rereading_a_page_keeps_one_entry_and_the_summary_of_unchanged_text() -> None:
    ledger = EvidenceLedger()
    ledger.record_page(url="https://example.com/a", title="A", text="same", summary="first summary")
    again = ledger.record_page(url="https://example.com/a", title="A", text="same")
    assert len(ledger) == 1
    assert again.summary == "first summary"
    changed = ledger.record_page(url="https://example.com/a", title="A2", text="new text")
    assert len(ledger) == 1
    assert (changed.summary, changed.title, changed.text) == ("", "A2", "new text")


def test_a_search_result_never_downgrades_a_page() -> None:
    ledger = EvidenceLedger()
    page = ledger.record_page(url="https://example.com/a", title="Page", text="body")
    after = ledger.record_search_result(url="https://example.com/a/", title="Other", snippet="snip")
    assert after.kind == "page"
    assert after.text == "body"
    assert after.title == "Page"
    assert after.snippet == "snip"
    assert after.id == page.id


def test_set_summary_and_unknown_url() -> None:
    ledger = EvidenceLedger()
    ledger.record_page(url="https://example.com/a", title="A", text="t")
    assert ledger.set_summary("https://example.com/a/", "short").summary == "short"
    assert ledger.get("https://example.com/a").summary == "short"  # type: ignore[union-attr]
    with pytest.raises(ConfigurationError):
        ledger.set_summary("https://example.com/unknown", "x")


def test_lookups_membership_and_url_sets() -> None:
    ledger = EvidenceLedger()
    ledger.record_search_result(url="https://example.com/result", title="R", snippet="")
    ledger.record_page(url="https://Example.com/page/", title="P", text="t")
    assert "https://example.com/page" in ledger
    assert "https://example.com/page#x" in ledger
    assert "http://example.com/page" not in ledger
    assert "https://www.example.com/page" not in ledger
    assert "" not in ledger
    assert 3 not in ledger
    assert ledger.get("") is None
    assert ledger.get("https://nowhere.example/") is None
    assert ledger.urls() == {"https://example.com/result", "https://Example.com/page/"}
    assert ledger.read_urls() == {"https://Example.com/page/"}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"url": "", "title": "t", "snippet": "s"},
        {"url": "https://example.com", "title": None, "snippet": "s"},
        {"url": "https://example.com", "title": "t", "snippet": 3},
    ],
)
def test_record_search_result_rejects_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        EvidenceLedger().record_search_result(**kwargs)  # type: ignore[arg-type]


def test_record_page_rejects_non_string_text() -> None:
    with pytest.raises(ConfigurationError):
        EvidenceLedger().record_page(url="https://example.com", title="t", text=b"bytes")  # type: ignore[arg-type]


def test_json_round_trip_keeps_entries_order_and_ids() -> None:
    ledger = EvidenceLedger()
    ledger.record_search_result(url="https://example.com/b", title="B", snippet="sb")
    ledger.record_page(url="https://example.com/a", title="A ✓", text="text a", summary="sum a")
    text = ledger.to_json()
    assert [item["url"] for item in json.loads(text)] == ["https://example.com/b", "https://example.com/a"]
    restored = EvidenceLedger.from_json(text)
    assert restored.entries() == ledger.entries()
    assert EvidenceLedger.from_list(ledger.to_list()).to_list() == ledger.to_list()
    assert restored.get("https://example.com/a/") == ledger.get("https://example.com/a")


def test_source_entry_dict_round_trip_and_validation() -> None:
    entry = SourceEntry(id="S1", url="https://e.example/", title="T", snippet="", kind="search_result", fetched_at="x")
    assert SourceEntry.from_dict(entry.to_dict()) == entry
    page = EvidenceLedger().record_page(url="https://e.example/p", title="P", text="t")
    assert SourceEntry.from_dict(page.to_dict()) == page  # the ledger's own record, restored
    with pytest.raises(ConfigurationError, match="missing"):
        SourceEntry.from_dict({"id": "S1", "url": "https://e.example/"})
    with pytest.raises(ConfigurationError, match="kind"):
        SourceEntry.from_dict({**entry.to_dict(), "kind": "rumour"})
    with pytest.raises(ConfigurationError):
        SourceEntry.from_dict({**entry.to_dict(), "title": 5})


def test_from_list_rejects_duplicates_and_bad_json() -> None:
    item = EvidenceLedger().record_search_result(url="https://e.example/a", title="", snippet="").to_dict()
    with pytest.raises(ConfigurationError):
        EvidenceLedger.from_list([item, {**item, "url": "https://E.example/a/"}])
    with pytest.raises(ConfigurationError):
        EvidenceLedger.from_json("{not json")
    with pytest.raises(ConfigurationError):
        EvidenceLedger.from_json('{"url": "https://e.example"}')


def test_ledgers_are_independent() -> None:
    first, second = EvidenceLedger(), EvidenceLedger()
    first.record_search_result(url="https://e.example/", title="", snippet="")
    assert len(second) == 0
    assert repr(first) == "EvidenceLedger(1 sources)"


def test_many_threads_recording_same_and_different_urls() -> None:
    ledger = EvidenceLedger()
    shared = [f"https://shared.example/{n}" for n in range(10)]
    workers = 16
    barrier = threading.Barrier(workers)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            barrier.wait()
            for round_ in range(20):
                for n, url in enumerate(shared):
                    variant = (
                        url.replace("https://shared.example", "HTTPS://Shared.Example:443") + "#f" if n % 2 else url
                    )
                    if (worker + round_) % 2:
                        ledger.record_page(url=variant + "/", title=f"p{n}", text=f"text {n}")
                    else:
                        ledger.record_search_result(url=variant, title=f"r{n}", snippet="s")
                ledger.record_page(url=f"https://own.example/{worker}/{round_}", title="", text="x")
        except Exception as error:  # the main thread asserts that none happened
            errors.append(error)

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    entries = ledger.entries()
    assert len(entries) == len(ledger) == len(shared) + workers * 20
    assert len({entry.id for entry in entries}) == len(entries)
    assert len({normalize_url(entry.url) for entry in entries}) == len(entries)
    for url in shared:
        entry = ledger.get(url)
        assert entry is not None
        assert entry.id == source_id(url)
        assert entry.kind == "page"
    assert [entry.id for entry in entries[: len(shared)]] == [source_id(url) for url in shared]


def test_a_retrieved_document_counts_as_read_and_round_trips() -> None:
    ledger = EvidenceLedger()
    ledger.record_search_result(url="https://a.example/x", title="X", snippet="s")
    ledger.record_document(url="file:///data/report.pdf", title="report.pdf", text="Chunk one.", store="reports")
    ledger.record_document(url="file:///data/report.pdf", title="report.pdf", text="Chunk two.", store="reports")
    ledger.record_document(url="doc://notes/42", title="42", text="A note.", store="notes")

    assert ledger.read_urls() == {"file:///data/report.pdf", "doc://notes/42"}
    entry = ledger.get("file:///data/report.pdf")
    assert (entry.kind, entry.snippet) == ("document", "reports")
    assert entry.text == "Chunk one.\n\nChunk two."  # every chunk read is kept for verification
    restored = EvidenceLedger.from_list(ledger.to_list())
    assert restored.to_list() == ledger.to_list()
    assert restored.read_urls() == ledger.read_urls()


def test_a_page_already_read_stays_a_page_when_a_store_returns_it() -> None:
    ledger = EvidenceLedger()
    page = ledger.record_page(url="https://a.example/x", title="X", text="page text")
    assert ledger.record_document(url="https://a.example/x", title="X", text="other", store="s") == page


def test_a_ledger_written_before_documents_existed_still_loads() -> None:
    old = [{"id": "S1", "url": "https://a.example", "kind": "page", "fetched_at": "2025-01-01T00:00:00+00:00"}]
    assert EvidenceLedger.from_list(old).read_urls() == {"https://a.example"}


def test_a_note_names_a_document_only_by_its_whole_uri() -> None:
    ledger = EvidenceLedger()
    ledger.record_document(url="file:///notes/tides.md", title="Tides", text="600 MW", store="notes")
    ledger.record_search_result(url="https://unread.example/a", title="Unread", snippet="")

    assert ledger.read_sources_in("Source: file:///notes/tides.md.\nSee https://unread.example/a") == [
        "file:///notes/tides.md"
    ]
    assert ledger.read_sources_in("Source: file:///notes/tides.md.bak and file:///notes/tides") == []


# The ledger's writers: every place in the package that puts an entry into a ledger, or hands a ledger the URL policy
# its door applies. A new surface that needs evidence goes through one of these readers; adding a line here is a
# decision that the new place really reads what it records.
LEDGER_WRITERS = {
    ("_tooling/base.py", "_adopt_policy", "adopt_policy"),
    ("options/check.py", "load_sources", "from_urls"),
    ("options/check.py", "load_sources", "from_list"),
    ("cli/output.py", "save_outputs", "from_list"),
    ("iterative/search.py", "SearchStep.research_topic", "adopt_policy"),
    ("report/ask.py", "_from_result", "from_list"),  # the caller's own result, as export_evidence reads it
    ("report/ask.py", "_from_run_dir", "from_list"),  # entries the journal's seal-checked reader restored
    ("run/_journal.py", "RunJournal.ledger", "from_list"),
    ("run/_journal.py", "restore_records", "from_list"),
    ("sources/datastore.py", "DatastoreSearchTool._record", "record_document"),
    ("sources/mcp_servers.py", "MCPTool.phase", "record_document"),
    ("sources/search.py", "SearchTool._record", "record_search_result"),
    ("tools/read_url.py", "ReadUrlTool._read_fresh", "record_page"),
    ("tools/read_url.py", "ReadUrlTool._repeat", "record_page"),
}
_WRITER_METHODS = {"record_page", "record_document", "record_search_result", "adopt_policy"}
_RESTORERS = {"from_list", "from_json", "from_urls"}


def _writes(node: ast.AST, scope: tuple[str, ...]) -> list[tuple[str, str]]:
    """The writes in ``node``'s subtree: a writer or restorer called, the seal or a ledger's entries reached for."""
    found: list[tuple[str, str]] = []
    for child in ast.iter_child_nodes(node):
        inner = (*scope, child.name) if isinstance(child, ast.FunctionDef | ast.ClassDef) else scope
        where = ".".join(inner) or "*"
        if isinstance(child, ast.Call):
            func = child.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            restorer = name in _RESTORERS and "Ledger" in ast.unparse(func)
            if name in _WRITER_METHODS or restorer or name == "SourceEntry":
                found.append((where, name))
            if any(keyword.arg == "seal" for keyword in child.keywords):
                found.append((where, "seal="))
        elif isinstance(child, ast.ImportFrom) and "evidence" in (child.module or ""):
            if any(alias.name in ("_SEAL", "entry") for alias in child.names):
                found.append((where, "the seal"))
        elif (
            isinstance(child, ast.Attribute)
            and child.attr in ("_SEAL", "_entries")
            and not (isinstance(child.value, ast.Name) and child.value.id == "self")
        ):
            found.append((where, "the seal"))
        found += _writes(child, inner)
    return found


def _ledger_writers() -> set[tuple[str, str, str]]:
    """Every write to a ledger outside the ledger's own modules, by module, function and what it calls."""
    package = Path(haystack_deep_research.__file__).parent
    found: set[tuple[str, str, str]] = set()
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        if module in ("evidence/ledger.py", "evidence/entry.py"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found.update((module, where, name) for where, name in _writes(tree, ()))
    return found


def test_only_the_known_readers_write_to_the_ledger() -> None:
    assert _ledger_writers() == LEDGER_WRITERS


def test_a_read_entry_cannot_be_made_outside_the_ledger() -> None:
    with pytest.raises(ConfigurationError, match="made only by the evidence ledger"):
        SourceEntry(id="S1", url="https://e.example/", title="T", snippet="", kind="page", fetched_at="x")
    with pytest.raises(ConfigurationError, match="made only by the evidence ledger"):
        SourceEntry(id="S1", url="mcp://t/s/1", title="T", snippet="", kind="document", fetched_at="x", seal=object())
    page = EvidenceLedger().record_page(url="https://e.example/p", title="P", text="t")
    with pytest.raises(ConfigurationError, match="made only by the evidence ledger"):
        dataclasses.replace(page, text="what nobody read")


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data",
        "http://127.0.0.1:8080/admin",
        "https://user:secret@e.example/",
        "https://sub.blocked.example/page",
        "javascript:alert(1)",
    ],
)
def test_every_writer_refuses_a_url_the_policy_refuses(url: str) -> None:
    ledger = EvidenceLedger(url_policy=UrlPolicy(deny_domains=("blocked.example",)))
    with pytest.raises(URLRefusedError):
        ledger.record_search_result(url=url, title="t", snippet="s")
    with pytest.raises(URLRefusedError):
        ledger.record_page(url=url, title="t", text="x")
    with pytest.raises(URLRefusedError):
        ledger.record_document(url=url, title="t", text="x", store="notes")
    with pytest.raises(URLRefusedError):
        ledger.record_document(url="mcp://wiki/search/1", title="t", text="x", store="wiki", named_url=url)
    assert len(ledger) == 0


def test_the_door_resolves_no_name_and_keeps_the_libraries_own_addresses() -> None:
    ledger = EvidenceLedger()
    ledger.record_page(url="https://name-nobody-resolves.invalid/p", title="", text="x")  # judged when fetched
    for url in ("file:///srv/notes/a.md", "doc://notes/7", "mcp://wiki/search/1"):
        ledger.record_document(url=url, title="", text="x", store="notes")
    assert len(ledger) == 4


def test_the_first_policy_adopted_is_the_ledgers() -> None:
    ledger = EvidenceLedger()
    ledger.adopt_policy(UrlPolicy(allow_hosts=("127.0.0.1",)))
    ledger.adopt_policy(UrlPolicy())
    assert ledger.record_search_result(url="http://127.0.0.1/a", title="", snippet="").url == "http://127.0.0.1/a"
    with pytest.raises(URLRefusedError):  # a writer's own policy wins over the ledger's
        ledger.record_page(url="http://127.0.0.1/a", title="", text="x", policy=UrlPolicy())


def test_a_named_url_is_kept_shown_as_named_and_round_trips() -> None:
    ledger = EvidenceLedger()
    entry = ledger.record_document(
        url="mcp://wiki/search/1", title="Réunion", text="x", store="wiki", named_url="https://any.example/ü"
    )
    assert entry.named_note == "named by wiki, not read: https://any.example/ü"
    assert ledger.read_urls() == {"mcp://wiki/search/1"}
    assert ledger.named_notes() == {"mcp://wiki/search/1": entry.named_note}
    assert EvidenceLedger.from_json(ledger.to_json()).entries() == [entry]
    again = ledger.record_document(url="mcp://wiki/search/1", title="Réunion", text="y", store="wiki")
    assert again.named_url == "https://any.example/ü"


def test_the_sources_list_shows_a_named_url_as_code_not_a_link() -> None:
    report = "# R\n\nThe wiki says so [w](mcp://wiki/search/1).\n"
    named = {"mcp://wiki/search/1": "named by wiki, not read: https://any.example/a`b"}
    check = verify_citations(report, ["mcp://wiki/search/1"], titles={"mcp://wiki/search/1": "W"}, named=named)
    assert "- [W](mcp://wiki/search/1) (named by wiki, not read: `https://any.example/a%60b`)" in check.report
    assert check.verified_urls == ["mcp://wiki/search/1"]
    assert not check.unverified
    again = verify_citations(check.report, ["mcp://wiki/search/1"], titles={"mcp://wiki/search/1": "W"}, named=named)
    assert again.report == check.report


def test_a_list_of_urls_read_elsewhere_is_a_ledger_of_pages() -> None:
    ledger = EvidenceLedger.from_urls(["https://e.example/a", " ", "https://e.example/a/", "http://10.0.0.1/x"])
    assert [entry.url for entry in ledger.entries()] == ["https://e.example/a", "http://10.0.0.1/x"]
    assert ledger.read_urls() == {"https://e.example/a", "http://10.0.0.1/x"}


def test_a_snippet_is_kept_bounded_as_the_entrys_passage_and_a_page_read_later_wins() -> None:
    ledger = EvidenceLedger()
    said = "Pégase: la marée monte deux fois par jour. " * 200  # some 8,800 characters
    seen = ledger.record_search_result(url="https://tides.example/a", title="Marées", snippet=f"  {said}  ")

    assert (seen.kind, seen.note) == ("snippet", "search result snippet, not read")
    assert seen.text == seen.snippet == said.strip()[:2000]
    assert ledger.citable_urls() == {"https://tides.example/a"}
    assert ledger.read_urls() == set()
    assert ledger.named_notes() == {"https://tides.example/a": "search result snippet, not read"}
    # Seen again with another snippet: the first is kept; read: the page wins, same id, its text the page's.
    assert ledger.record_search_result(url="https://tides.example/a/", title="", snippet="other").text == seen.text
    page = ledger.record_page(url="https://tides.example/a", title="", text="The page itself.")
    assert (page.kind, page.id, page.text, page.title, page.note) == ("page", seen.id, "The page itself.", "Marées", "")
    assert ledger.record_search_result(url="https://tides.example/a", title="", snippet="later").kind == "page"
    assert ledger.read_urls() == ledger.citable_urls() == {"https://tides.example/a"}


def test_a_result_without_a_snippet_backs_nothing() -> None:
    ledger = EvidenceLedger()
    bare = ledger.record_search_result(url="https://tides.example/b", title="B", snippet="   ")
    assert (bare.kind, bare.text, bare.note) == ("search_result", "", "")
    assert ledger.citable_urls() == set()
    filled = ledger.record_search_result(url="https://tides.example/b", title="", snippet="Tides rise twice a day.")
    assert (filled.kind, filled.id, filled.text) == ("snippet", bare.id, "Tides rise twice a day.")


def test_only_the_ledger_makes_a_snippet_entry_and_it_survives_its_own_record() -> None:
    with pytest.raises(ConfigurationError, match="only by the evidence ledger"):
        SourceEntry(id="S1", url="https://e.example/", title="", snippet="s", kind="snippet", fetched_at="x", text="s")
    ledger = EvidenceLedger()
    ledger.record_search_result(url="https://e.example/", title="E", snippet="Said by the engine.")
    restored = EvidenceLedger.from_json(ledger.to_json())
    assert restored.entries() == ledger.entries()
    assert restored.citable_urls() == {"https://e.example/"}


def test_a_report_citing_a_snippet_verifies_and_its_sources_line_says_so() -> None:
    ledger = EvidenceLedger()
    ledger.record_search_result(url="https://tides.example/a", title="Marées", snippet="La marée monte.")
    ledger.record_page(url="https://tides.example/p", title="Read", text="Read text.")
    report = "La marée monte [Marées](https://tides.example/a). Read [r](https://tides.example/p).\n"

    check = verify_citations(report, ledger.citable_urls(), named=ledger.named_notes())

    assert check.unverified == []
    assert "- [https://tides.example/a](https://tides.example/a) (search result snippet, not read)" in check.report
    assert "- [https://tides.example/p](https://tides.example/p)\n" in check.report + "\n"
    assert verify_citations(check.report, ledger.citable_urls(), named=ledger.named_notes()).report == check.report


def test_a_known_bare_result_takes_this_searchs_snippet_never_the_one_it_came_with() -> None:
    """A bare result restored from a journal is unsealed: its snippet is not the engine's; a search never keeps it."""
    restored = EvidenceLedger.from_list(
        [
            {
                "id": "s1",
                "url": "https://news.example/solar",
                "title": "",
                "kind": "search_result",
                "snippet": "Solar panels cause cancer, regulators confirmed in 2025.",
                "fetched_at": "2026-12-01T00:00:00+00:00",
            }
        ]
    )

    silent = restored.record_search_result(url="https://news.example/solar", title="Solar", snippet="")
    assert (silent.kind, silent.text) == ("search_result", "")
    assert "https://news.example/solar" not in restored.citable_urls()
    said = restored.record_search_result(url="https://news.example/solar", title="", snippet="Solaranlagen wachsen.")
    assert (said.kind, said.text, said.title) == ("snippet", "Solaranlagen wachsen.", "Solar")
