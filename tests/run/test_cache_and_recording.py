"""The cross-run cache and recordings, through the run layer's public API."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from haystack.dataclasses import ChatMessage

from haystack_deep_research import ConfigurationError, ReadUrlTool, ResearchCache
from haystack_deep_research.errors import RecordingError, ReplayMissError
from haystack_deep_research.run import Recording, RecordingChatGenerator, ReplayChatGenerator
from haystack_deep_research.run._cache import cache_from_dict, page_key, prompt_key, search_key, summary_key
from haystack_deep_research.sources import DdgsSearch, SearchTool
from haystack_deep_research.testing import ScriptedChatGenerator


def test_an_entry_is_used_until_its_time_to_live_is_over(tmp_path: Path) -> None:
    fresh = ResearchCache(directory=tmp_path)
    fresh.put("search", "k", {"hits": [1]})

    assert fresh.get("search", "k") == {"hits": [1]}
    assert ResearchCache(directory=tmp_path, ttl=1e-9).get("search", "k") is None
    assert fresh.get("page", "k") is None
    assert fresh.stats == {"hits": 1, "misses": 1}


def test_an_unreadable_entry_is_a_miss_and_a_new_store_replaces_it(tmp_path: Path) -> None:
    cache = ResearchCache(directory=tmp_path)
    cache.put("page", "k", {"text": "old"})
    [entry] = list(tmp_path.rglob("*.json"))
    entry.write_text("{torn", encoding="utf-8")

    assert cache.get("page", "k") is None
    cache.put("page", "k", {"text": "new"})
    assert cache.get("page", "k") == {"text": "new"}


def test_keys_ignore_trivial_differences() -> None:
    assert search_key("tavily", "Solar  Capacity", 5) == search_key("tavily", "solar capacity", 5)
    assert search_key("tavily", "solar", 5) != search_key("ddgs", "solar", 5)
    assert page_key("HTTPS://Example.org/a/") == page_key("https://example.org/a")
    assert summary_key("https://e.org/a", "Why?", "m1") != summary_key("https://e.org/a", "Why?", "m2")


def test_a_bad_cache_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="ttl"):
        ResearchCache(directory=tmp_path, ttl=0)
    with pytest.raises(ConfigurationError, match="cache must be"):
        SearchTool(backend=DdgsSearch(), cache="cache")  # type: ignore[arg-type]


def test_tools_with_a_cache_round_trip(tmp_path: Path) -> None:
    cache = ResearchCache(directory=tmp_path, ttl=60)
    search = SearchTool(backend=DdgsSearch(), cache=cache)
    read = ReadUrlTool(summarizer_llm=ScriptedChatGenerator(role="summarizer"), cache=cache)

    again = SearchTool.from_dict(search.to_dict())
    read_again = ReadUrlTool.from_dict(read.to_dict())

    assert isinstance(again.cache, ResearchCache)
    assert again.cache.directory == tmp_path
    assert isinstance(read_again.cache, ResearchCache)
    assert read_again.cache.ttl == 60
    assert cache_from_dict(None) is None


def test_a_recorded_model_reply_is_replayed_for_the_same_prompt_on_another_day(tmp_path: Path) -> None:
    recording = Recording(directory=tmp_path, mode="record")
    model = RecordingChatGenerator(chat_generator=ScriptedChatGenerator(role="scope"), recording=recording)
    asked = [ChatMessage.from_user("Today's date: 2025-01-01\n\nResearch question:\nWhy?")]
    recorded = model.run(messages=asked)["replies"][0]

    replay = ReplayChatGenerator(recording=Recording(directory=tmp_path, mode="replay"), model="m")
    later = [ChatMessage.from_user("Today's date: 2026-03-04\n\nResearch question:\nWhy?")]

    assert replay.run(messages=later)["replies"][0].text == recorded.text
    assert prompt_key(asked) == prompt_key(later)
    with pytest.raises(ReplayMissError, match="holds no model"):
        replay.run(messages=[ChatMessage.from_user("Something else?")])


def test_a_recording_records_cache_hits_too_and_replays_them(tmp_path: Path) -> None:
    cache = ResearchCache(directory=tmp_path / "cache")
    cache.put("page", "https://e.org/", {"text": "cached"})
    recording = Recording(directory=tmp_path / "tape", mode="record", cache=cache)

    assert recording.get("page", "https://e.org/") == {"text": "cached"}
    recording.put("search", "q", {"hits": []})
    replay = Recording(directory=tmp_path / "tape", mode="replay")

    assert replay.get("page", "https://e.org/") == {"text": "cached"}
    assert replay.get("search", "q") == {"hits": []}
    assert [json.loads(line)["type"] for line in (tmp_path / "tape" / "exchanges.jsonl").read_text().splitlines()] == [
        "page",
        "search",
    ]
    with pytest.raises(ConfigurationError, match="holds no recording"):
        Recording(directory=tmp_path / "nothing", mode="replay")


def _recorded(directory: Path) -> Path:
    recording = Recording(directory=directory, mode="record")
    recording.put("search", "q", {"hits": []})
    recording.put("page", "https://e.org/", {"text": "read"})
    return recording.path


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("[" * 1200, "nested deeper than"),
        ('{"type": "page", "key": "https://e.org/x", "value": ' + "[" * 1200 + "]" * 1200 + "}", "nested deeper than"),
        ('{"type": "page", "key": "https://e.org/x", "value": "text"}', "'value'"),
        ('["page", "https://e.org/x"]', "'record'"),
        ("not json", "not a JSON record"),
    ],
)
def test_a_damaged_line_refuses_the_recording_naming_the_file_and_line(tmp_path: Path, line: str, why: str) -> None:
    path = _recorded(tmp_path)
    first, second = path.read_text(encoding="utf-8").splitlines()
    path.write_text(f"{first}\n{line}\n{second}\n", encoding="utf-8")

    with pytest.raises(RecordingError, match="line 2 is not a recorded exchange") as raised:
        Recording(directory=tmp_path, mode="replay")

    assert str(path) in str(raised.value)
    assert why in str(raised.value)


def test_a_line_that_is_not_utf8_refuses_the_recording(tmp_path: Path) -> None:
    path = _recorded(tmp_path)
    path.write_bytes(path.read_bytes() + b'{"type": "page", "key": "caf\xe9", "value": {}}\n')

    with pytest.raises(RecordingError, match="line 3 is not a recorded exchange"):
        Recording(directory=tmp_path, mode="replay")


def test_a_torn_last_exchange_is_dropped_and_the_rest_replays(tmp_path: Path) -> None:
    path = _recorded(tmp_path)
    path.write_bytes(path.read_bytes() + b'{"type": "search", "key": "q2", "val')

    replay = Recording(directory=tmp_path, mode="replay")

    assert replay.get("page", "https://e.org/") == {"text": "read"}
    with pytest.raises(ReplayMissError):
        replay.get("search", "q2")


def test_recording_generators_round_trip(tmp_path: Path) -> None:
    recording = Recording(directory=tmp_path, mode="record")
    model = RecordingChatGenerator(chat_generator=ScriptedChatGenerator(role="writer"), recording=recording)

    again = RecordingChatGenerator.from_dict(model.to_dict())

    assert again.recording.directory == tmp_path
    assert again.model == "ScriptedChatGenerator"


@pytest.mark.parametrize("hostile", ["fifo", "device", "outside"])
def test_an_entry_that_is_no_regular_file_inside_the_cache_is_a_miss(hostile: str, tmp_path: Path) -> None:
    cache = ResearchCache(directory=tmp_path / "cache")
    cache.put("page", "k", {"text": "old"})
    [entry] = list((tmp_path / "cache").rglob("*.json"))
    entry.unlink()
    if hostile == "fifo":
        os.mkfifo(entry)  # a plain open would block the run forever
    elif hostile == "device":
        entry.symlink_to("/dev/zero")  # a plain read would fill memory
    else:
        outside = tmp_path / "planted.json"
        outside.write_text(json.dumps({"key": "k", "stored_at": 1e12, "value": {"text": "planted"}}))
        entry.symlink_to(outside)

    assert cache.get("page", "k") is None
    cache.put("page", "k", {"text": "new"})  # the store replaces whatever stood there
    assert cache.get("page", "k") == {"text": "new"}


def test_a_link_planted_in_a_recording_is_never_appended_through(tmp_path: Path) -> None:
    elsewhere = tmp_path / "profile"
    elsewhere.write_text("kept\n")
    tape = tmp_path / "tape"
    tape.mkdir()
    (tape / "exchanges.jsonl").symlink_to(elsewhere)
    recording = Recording(directory=tape, mode="record")

    with pytest.raises(OSError, match="symbolic link"):
        recording.put("page", "https://e.org/", {"text": "read"})

    assert elsewhere.read_text() == "kept\n"
