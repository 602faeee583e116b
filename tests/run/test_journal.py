"""Resuming a run from its run directory: a killed run picks up where it stopped, without paying twice."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research import RunDirError, RunInputs
from haystack_deep_research.errors import RunDirInUseError
from haystack_deep_research.run._journal import JOURNAL_FILE, LEDGER_FILE, LOCK_FILE, REPORT_FILE
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer, ScriptedChatGenerator
from haystack_deep_research.testing.generators import ROLES

QUESTION = "How fast is solar power growing?"
TOPICS = ["solar capacity", "battery storage"]


def _records(run_dir: Path) -> list[dict[str, Any]]:
    path = run_dir / JOURNAL_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.endswith("}")]


def _searched(search: LoopbackSearchServer) -> list[str]:
    return [r.json_body["query"] for r in search.requests if r.method == "POST"]


class _Calls:
    """Counts the calls each scripted role gets."""

    def __init__(self) -> None:
        self.by_role: dict[str, int] = {role: 0 for role in ROLES}

    def model(self, role: str, **options: Any) -> MockChatGenerator:
        scripted = ScriptedChatGenerator(role=role, **options)  # type: ignore[arg-type]

        def reply(messages: list[ChatMessage], tools: Any) -> ChatMessage:
            self.by_role[role] += 1
            return scripted.run(messages, tools)["replies"][0]

        return MockChatGenerator(response_fn=reply)

    def models(self) -> dict[str, Any]:
        return {
            **{f"{role}_llm": self.model(role) for role in ROLES},
            "orchestrator_llm": self.model("orchestrator", subtopics=TOPICS),
        }


def _echo_writer(messages: list[ChatMessage]) -> str:
    """A writer whose report is its prompt, so the test can see every note that reached it."""
    return "# Report\n\n" + (messages[-1].text or "")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_killed_run_resumes_without_researching_a_completed_subtopic_again(
    make_agent: Callable[..., Agent],
    search: LoopbackSearchServer,
    web: LoopbackWebServer,
    spawn_run: Callable[..., subprocess.Popen[str]],
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    child = spawn_run(run_dir, QUESTION, "hang")
    try:
        deadline = time.monotonic() + 60
        while not any(r["type"] == "note" for r in _records(run_dir)):
            assert child.poll() is None, child.communicate()[1]
            assert time.monotonic() < deadline, "the first note was never journaled"
            time.sleep(0.05)
        calls = _Calls()
        with pytest.raises(RunDirInUseError, match="is in use by another run"):  # the child holds the directory
            make_agent(**calls.models()).run(
                messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir)
            )
        assert sum(calls.by_role.values()) == 0
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    assert [r["subtopic"] for r in _records(run_dir) if r["type"] == "note"] == ["solar capacity"]
    assert _searched(search) == ["solar capacity"]  # the second researcher hung in its first model call

    calls = _Calls()
    agent = make_agent(**{**calls.models(), "writer_llm": MockChatGenerator(response_fn=_echo_writer)})
    result = agent.run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=str(run_dir)))

    assert calls.by_role["scope"] == 0  # the journaled brief was reused
    told = [m.text or "" for m in result["messages"] if m.text and m.text.startswith("This run was resumed.")]
    assert len(told) == 1
    assert "- solar capacity\n" in told[0]  # the orchestrator is told what is done
    assert _searched(search) == ["solar capacity", "battery storage"]  # solar capacity was not searched again
    assert [note.split("\n", 1)[0] for note in result["notes"]] == ["## solar capacity", "## battery storage"]
    assert "450 gigawatts" in result["report"]  # the restored note reached the writer
    assert "300 gigawatt hours" in result["report"]  # and so did the new one
    assert {entry["url"] for entry in result["sources"]} >= {web.url("/solar.html"), web.url("/storage.pdf")}
    assert result["exit_reason"] == "text"
    assert [r["type"] for r in _records(run_dir)][-1] == "end"
    assert (run_dir / REPORT_FILE).read_text(encoding="utf-8") == result["report"]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_a_run_killed_while_writing_its_run_dir_keeps_every_journaled_note_with_its_sources(
    make_agent: Callable[..., Agent],
    search: LoopbackSearchServer,
    web: LoopbackWebServer,
    spawn_run: Callable[..., subprocess.Popen[str]],
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    child = spawn_run(run_dir, QUESTION, "kill_at_ledger_write")
    child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL
    journaled = {r["subtopic"] for r in _records(run_dir) if r["type"] == "note"}
    searched = len(_searched(search))

    calls = _Calls()
    result = make_agent(**calls.models()).run(
        messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir)
    )

    researched_again = {n.split("\n", 1)[0].removeprefix("## ") for n in result["notes"]} - journaled
    assert len(_searched(search)) - searched == len(researched_again)  # only what was not journaled is redone
    pages = {entry["url"] for entry in result["sources"] if entry["kind"] == "page"}
    assert pages == {web.url("/solar.html"), web.url("/storage.pdf")}  # every journaled note came with its sources
    assert web.url("/solar.html") in result["report"]  # so its citations still verify
    assert web.url("/storage.pdf") in result["report"]
    assert result["citations"]["unverified"] == []


def test_a_second_run_on_a_busy_run_dir_is_refused_and_the_first_run_is_untouched(
    make_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    inside, release = threading.Event(), threading.Event()
    scripted = ScriptedChatGenerator(role="researcher")

    def waiting_researcher(messages: list[ChatMessage], tools: Any) -> ChatMessage:
        inside.set()
        release.wait(30)
        return scripted.run(messages, tools)["replies"][0]

    first_agent = make_agent(
        researcher_llm=MockChatGenerator(response_fn=waiting_researcher),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["solar capacity"]),
    )
    results: dict[str, Any] = {}

    def first_run() -> None:
        context = RunInputs(run_dir=run_dir)
        results["first"] = first_agent.run(messages=[ChatMessage.from_user(QUESTION)], inputs=context)

    thread = threading.Thread(target=first_run)
    thread.start()
    try:
        assert inside.wait(30), "the first run never started researching"
        calls = _Calls()
        with pytest.raises(RunDirInUseError, match=re.escape(f"is in use by another run (its {LOCK_FILE} is locked)")):
            make_agent(**calls.models()).run(
                messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=str(run_dir))
            )
        assert sum(calls.by_role.values()) == 0
    finally:
        release.set()
        thread.join(60)

    assert results["first"]["exit_reason"] == "text"
    assert [r["type"] for r in _records(run_dir)] == ["start", "brief", "note", "end"]  # nothing of the refused run
    again = make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))
    assert again["exit_reason"] == "text"  # the directory was released when the first run ended


class Aborted(BaseException):
    """What ends a run with an exception: not a model failure (a run survives those), an abort from outside."""


def _broken_orchestrator(messages: list[ChatMessage], tools: Any) -> ChatMessage:
    raise Aborted("provider down")


def test_a_run_that_fails_releases_its_run_dir(make_agent: Callable[..., Agent], tmp_path: Path) -> None:
    context = RunInputs(run_dir=tmp_path / "run")
    failing = make_agent(orchestrator_llm=MockChatGenerator(response_fn=_broken_orchestrator))

    with pytest.raises(Aborted, match="provider down") as failed:
        failing.run(messages=[ChatMessage.from_user(QUESTION)], inputs=context)

    assert failed.traceback  # the failed run's frames (and so the run itself) are still alive here
    result = make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=context)
    assert result["exit_reason"] == "text"
    assert [r["type"] for r in _records(tmp_path / "run")][:3] == ["start", "brief", "resume"]


async def test_an_async_run_that_fails_releases_its_run_dir(make_agent: Callable[..., Agent], tmp_path: Path) -> None:
    context = RunInputs(run_dir=tmp_path / "run")
    failing = make_agent(orchestrator_llm=MockChatGenerator(response_fn=_broken_orchestrator))

    with pytest.raises(Aborted, match="provider down") as failed:
        await failing.run_async(messages=[ChatMessage.from_user(QUESTION)], inputs=context)

    assert failed.traceback
    result = await make_agent().run_async(messages=[ChatMessage.from_user(QUESTION)], inputs=context)
    assert result["exit_reason"] == "text"


def test_rerunning_a_finished_run_spends_nothing_on_scope_or_research(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer, tmp_path: Path
) -> None:
    context = RunInputs(run_dir=tmp_path / "run")
    first = make_agent(orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=TOPICS)).run(
        messages=[ChatMessage.from_user(QUESTION)], inputs=context
    )
    searches = len(_searched(search))

    calls = _Calls()
    again = make_agent(**calls.models()).run(messages=[ChatMessage.from_user(QUESTION)], inputs=context)

    assert calls.by_role["scope"] == calls.by_role["researcher"] == calls.by_role["summarizer"] == 0
    assert len(_searched(search)) == searches
    assert again["brief"] == first["brief"]
    assert sorted(again["notes"]) == sorted(first["notes"])
    assert again["sources"] == first["sources"]
    assert [r["type"] for r in _records(tmp_path / "run")] == ["start", "brief", "note", "note", "end", "resume", "end"]
    assert json.loads((tmp_path / "run" / LEDGER_FILE).read_text(encoding="utf-8")) == again["sources"]


def test_a_resumed_run_matches_done_subtopics_whatever_their_case_and_end_punctuation(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    make_agent(orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=TOPICS)).run(
        messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir)
    )
    records = _records(run_dir)
    assert [r["type"] for r in records] == ["start", "brief", "note", "note", "end"]
    # The run died after journaling both notes, before it ended.
    (run_dir / JOURNAL_FILE).write_text("".join(json.dumps(r) + "\n" for r in records[:-1]), encoding="utf-8")
    searches = _searched(search)
    calls = _Calls()
    models = calls.models()
    models["orchestrator_llm"] = calls.model("orchestrator", subtopics=["Solar Capacity.", "  BATTERY   storage!"])
    models["writer_llm"] = MockChatGenerator(response_fn=_echo_writer)

    result = make_agent(**models).run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))

    assert calls.by_role["researcher"] == calls.by_role["summarizer"] == 0  # nothing was researched again
    assert _searched(search) == searches
    assert [note.split("\n", 1)[0] for note in result["notes"]] == ["## solar capacity", "## battery storage"]
    assert "450 gigawatts" in result["report"]


def test_a_torn_last_journal_line_is_dropped_and_the_run_resumes(
    make_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))
    with open(run_dir / JOURNAL_FILE, "a", encoding="utf-8") as journal:
        journal.write('{"type": "note", "subtopic": "cut o')  # a crash in the middle of an append

    result = make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))

    assert len(result["notes"]) == 2
    assert all(line.endswith("}") for line in (run_dir / JOURNAL_FILE).read_text(encoding="utf-8").splitlines())


def test_a_journal_line_nested_too_deeply_is_skipped_with_a_warning_and_the_run_resumes(
    make_agent: Callable[..., Agent], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run_dir = tmp_path / "run"
    make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))
    with open(run_dir / JOURNAL_FILE, "a", encoding="utf-8") as journal:
        journal.write('{"type": "note", "subtopic": "x", "note": ' + "[" * 1200 + "]" * 1200 + "}\n")
    calls = _Calls()

    result = make_agent(**calls.models()).run(
        messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir)
    )

    assert calls.by_role["researcher"] == 0  # both notes were restored from the journal
    assert len(result["notes"]) == 2
    assert result["report"].startswith("# ")
    assert "nested deeper than 64 levels" in caplog.text


def test_a_journal_record_with_malformed_sources_is_skipped_and_its_subtopic_researched_again(
    make_agent: Callable[..., Agent], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    run_dir = tmp_path / "run"
    make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))
    records = _records(run_dir)
    first_note = next(n for n, record in enumerate(records) if record["type"] == "note")
    records[first_note]["sources"] = 5
    (run_dir / JOURNAL_FILE).write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    calls = _Calls()

    result = make_agent(**calls.models()).run(
        messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir)
    )

    assert calls.by_role["researcher"] > 0  # the skipped note's sub-topic was researched again
    assert len(result["notes"]) == 2
    assert result["report"].startswith("# ")
    assert "holds sources that are not a list of entries" in caplog.text


def _bad_run_dirs(tmp_path: Path) -> list[tuple[object, str]]:
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory", encoding="utf-8")
    other = tmp_path / "other"
    other.mkdir()
    (other / JOURNAL_FILE).write_text(
        json.dumps({"type": "start", "version": 2, "question": "Why is the sky blue?"}) + "\n", encoding="utf-8"
    )
    corrupt = tmp_path / "corrupt"
    corrupt.mkdir()
    (corrupt / JOURNAL_FILE).write_text(
        json.dumps({"type": "start", "version": 2, "question": QUESTION}) + "\nnot json\n{}\n", encoding="utf-8"
    )
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / JOURNAL_FILE).write_text('{"some": "other file"}\n', encoding="utf-8")
    older = tmp_path / "older"
    older.mkdir()
    (older / JOURNAL_FILE).write_text(
        json.dumps({"type": "start", "version": 1, "question": QUESTION}) + "\n", encoding="utf-8"
    )
    return [
        (42, "run_dir must be a directory path (a non-empty str or os.PathLike), got int"),
        (older, "was written by another version of this library (journal version 1; this one reads version 2)"),
        ("  ", "run_dir must be a directory path"),
        (a_file, "is a file; pass the path of a directory"),
        (other, "holds a run of another question ('Why is the sky blue?'); pass the same question to resume it"),
        (corrupt, "line 2 is not a journal record"),
        (foreign, "is not a journal of this library"),
    ]


def test_a_bad_run_dir_is_refused_before_any_model_is_called(make_agent: Callable[..., Agent], tmp_path: Path) -> None:
    for run_dir, message in _bad_run_dirs(tmp_path):
        calls = _Calls()
        agent = make_agent(**calls.models())
        with pytest.raises(RunDirError, match=re.escape(message)):
            agent.run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))
        assert sum(calls.by_role.values()) == 0, run_dir


def test_a_run_dir_error_is_a_usage_error_and_a_value_error() -> None:
    assert issubclass(RunDirError, ValueError)


async def test_the_async_path_journals_and_resumes_too(make_agent: Callable[..., Agent], tmp_path: Path) -> None:
    context = RunInputs(run_dir=str(tmp_path / "run"))
    first = await make_agent().run_async(messages=[ChatMessage.from_user(QUESTION)], inputs=context)

    calls = _Calls()
    again = await make_agent(**calls.models()).run_async(messages=[ChatMessage.from_user(QUESTION)], inputs=context)

    assert sum(calls.by_role.values()) == calls.by_role["orchestrator"] + calls.by_role["writer"]
    assert sorted(again["notes"]) == sorted(first["notes"])
    assert [r["type"] for r in _records(tmp_path / "run")].count("note") == 2


@pytest.mark.parametrize("kind", ["page", "snippet", "search_result"])
def test_a_forged_page_in_the_journal_is_never_cited_as_read(
    make_agent: Callable[..., Agent], tmp_path: Path, kind: str
) -> None:
    run_dir = tmp_path / "run"
    make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))
    records = _records(run_dir)
    page = next(e for r in records for e in r.get("sources") or [] if e["kind"] == "page")
    forged_url = "https://forged.example/whales"
    text = "Whales make the tides, says this page nobody read."
    forged = {
        **page,
        "id": "forged-1",
        "url": forged_url,
        "title": "Whales",
        "text": text,
        "kind": kind,
        "snippet": text,
    }
    note = f"## tides and whales\n\nWhales make the tides ([Whales]({forged_url}))."
    record = {"type": "note", "subtopic": "tides and whales", "note": note, "summary": note, "partial": False}
    with (run_dir / JOURNAL_FILE).open("a", encoding="utf-8") as journal:
        journal.write(json.dumps({**record, "sources": [forged]}) + "\n")

    again = make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))

    assert f"]({forged_url})" not in again["report"]
    assert forged_url not in again["citations"].get("verified_urls", [])
    [restored] = [s for s in again["sources"] if s["url"] == forged_url]
    assert restored["kind"] == "search_result"  # its URL is known; nothing of it counts as read
    assert restored["snippet"] == ""  # an unsealed text never becomes a snippet a later search could make citable
    assert any(s["kind"] == "page" for s in again["sources"])  # what the library journaled itself is still trusted


def test_a_seal_key_that_cannot_be_kept_is_a_warning_naming_the_setting(
    make_agent: Callable[..., Agent], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("DEEP_RESEARCH_JOURNAL_KEY_FILE", str(blocked / "journal.key"))

    result = make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=tmp_path / "r"))

    assert result["report"]  # the research is kept; only resuming it would cost more
    assert any("DEEP_RESEARCH_JOURNAL_KEY_FILE" in warning for warning in result["warnings"])


class _ConfirmEveryTopic:
    """A person who accepts every planned sub-topic."""

    def get_user_confirmation(self, tool_name: str, tool_description: str, tool_params: dict[str, Any]) -> Any:
        from haystack.hooks.human_in_the_loop import ConfirmationUIResult

        return ConfirmationUIResult(action="confirm")

    def to_dict(self) -> dict[str, Any]:
        from haystack.core.serialization import default_to_dict

        return default_to_dict(self)


def test_a_resumed_plan_approved_run_returns_its_notes_in_delegation_order(
    make_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    from haystack.hooks.human_in_the_loop import AlwaysAskPolicy, BlockingConfirmationStrategy

    from haystack_deep_research.events import Event, SubagentCompleted

    second_done = threading.Event()
    researcher = ScriptedChatGenerator(role="researcher")

    def slow_first(messages: list[ChatMessage], tools: Any) -> ChatMessage:
        if TOPICS[0] in (messages[1].text or "") and not second_done.is_set():
            assert second_done.wait(timeout=30), "the second researcher never finished"
        return researcher.run(messages, tools)["replies"][0]

    def on_event(event: Event) -> None:
        if isinstance(event, SubagentCompleted) and event.subtopic == TOPICS[1]:
            second_done.set()

    def agent() -> Agent:
        approval = BlockingConfirmationStrategy(
            confirmation_policy=AlwaysAskPolicy(), confirmation_ui=_ConfirmEveryTopic()
        )
        return make_agent(researcher_llm=MockChatGenerator(response_fn=slow_first), approve_plan=approval)

    run_dir = tmp_path / "run"
    first = agent().run(
        messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir, on_event=on_event)
    )
    completed = [r["subtopic"] for r in _records(run_dir) if r["type"] == "note"]
    assert completed == TOPICS[::-1]  # the first sub-topic finished last

    resumed = agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))

    assert [note.splitlines()[0] for note in first["notes"]] == [f"## {topic}" for topic in TOPICS]
    assert resumed["notes"] == first["notes"]


@pytest.mark.parametrize("hostile", ["fifo", "device", "large"])
def test_a_seal_key_that_is_no_small_regular_file_is_refused_without_blocking_or_reading_it(
    hostile: str, make_agent: Callable[..., Agent], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = tmp_path / "journal.key"
    if hostile == "fifo":
        os.mkfifo(key)  # a plain read blocks every run with a run directory
    elif hostile == "device":
        key.symlink_to("/dev/zero")  # a plain read grows the process until memory runs out
    else:
        key.write_bytes(b"k" * (1 << 20))
    monkeypatch.setenv("DEEP_RESEARCH_JOURNAL_KEY_FILE", str(key))
    outcome: list[dict[str, Any]] = []
    running = threading.Thread(
        target=lambda: outcome.append(
            make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=tmp_path / "r"))
        ),
        daemon=True,
    )

    running.start()
    running.join(timeout=120)

    assert not running.is_alive()
    [result] = outcome
    assert result["report"]
    assert any("DEEP_RESEARCH_JOURNAL_KEY_FILE" in warning and str(key) in warning for warning in result["warnings"])
    assert key.is_fifo() if hostile == "fifo" else key.is_symlink() if hostile == "device" else key.stat().st_size


@pytest.mark.parametrize("hostile", ["fifo", "link"])
def test_a_journal_that_is_a_fifo_or_a_link_is_refused_and_left_as_it_was(
    hostile: str, make_agent: Callable[..., Agent], tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    elsewhere = tmp_path / "notes.txt"
    elsewhere.write_bytes(b"kept\nunterminated")
    if hostile == "fifo":
        os.mkfifo(run_dir / JOURNAL_FILE)  # a plain read blocks forever
    else:
        (run_dir / JOURNAL_FILE).symlink_to(elsewhere)
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))
        except BaseException as error:  # handed to the test thread
            outcome.append(error)

    running = threading.Thread(target=run, daemon=True)
    running.start()
    running.join(timeout=120)

    assert not running.is_alive()
    [error] = outcome
    assert isinstance(error, RunDirError)
    assert JOURNAL_FILE in str(error)
    assert elsewhere.read_bytes() == b"kept\nunterminated"
