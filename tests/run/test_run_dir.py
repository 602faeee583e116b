"""The journal is written one whole record at a time: a full disk or a crash never glues records together."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from haystack.components.agents import Agent
from haystack.dataclasses import ChatMessage

from haystack_deep_research import RunInputs
from haystack_deep_research.run._journal import JOURNAL_FILE
from haystack_deep_research.testing import LoopbackSearchServer, LoopbackWebServer

QUESTION = "How fast is solar power growing?"


def _lines(run_dir: Path) -> list[str]:
    return (run_dir / JOURNAL_FILE).read_text(encoding="utf-8").splitlines()


def _searched(search: LoopbackSearchServer) -> list[str]:
    return [r.json_body["query"] for r in search.requests if r.method == "POST"]


def _headings(result: dict[str, Any]) -> list[str]:
    return sorted(note.split("\n", 1)[0] for note in result["notes"])


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_a_disk_that_fills_up_while_a_note_is_journaled_loses_only_that_note(
    make_agent: Callable[..., Agent],
    search: LoopbackSearchServer,
    web: LoopbackWebServer,
    spawn_run: Callable[..., subprocess.Popen[str]],
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    child = spawn_run(run_dir, QUESTION, "disk_full")
    warnings, errors = child.communicate(timeout=60)
    assert child.returncode == 0, errors

    lines = _lines(run_dir)
    assert all(json.loads(line)["type"] for line in lines)  # every line is one whole record: nothing was glued
    assert [json.loads(line)["type"] for line in lines] == ["start", "brief", "note", "end"]
    assert "could not write the note on 'solar capacity' to the run directory" in warnings
    assert "a resumed run would research it again" in warnings
    assert _searched(search) == ["solar capacity", "battery storage"]

    result = make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))

    assert _searched(search)[2:] == ["solar capacity"]  # the lost note is researched again, the other restored
    assert _headings(result) == ["## battery storage", "## solar capacity"]
    pages = {entry["url"] for entry in result["sources"] if entry["kind"] == "page"}
    assert pages == {web.url("/solar.html"), web.url("/storage.pdf")}
    assert result["warnings"] == []


def test_a_torn_line_in_the_middle_of_the_journal_is_dropped_and_the_record_glued_onto_it_kept(
    make_agent: Callable[..., Agent], search: LoopbackSearchServer, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))
    start, brief, lost, kept, end = _lines(run_dir)
    torn = lost[: len(lost) // 2]  # an append that failed half-way, with the next record glued onto it
    (run_dir / JOURNAL_FILE).write_text("\n".join([start, brief, torn + kept, end]) + "\n", encoding="utf-8")
    searched = len(_searched(search))

    result = make_agent().run(messages=[ChatMessage.from_user(QUESTION)], inputs=RunInputs(run_dir=run_dir))

    assert len(_searched(search)) - searched == 1  # only the torn note is researched again
    assert _headings(result) == ["## battery storage", "## solar capacity"]
    assert result["exit_reason"] == "text"
