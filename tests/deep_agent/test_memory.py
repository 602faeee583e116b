"""Memory files: AGENTS.md-style files are prepended to the system prompt; missing paths are skipped."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from haystack.components.generators.chat import MockChatGenerator
from haystack.dataclasses import ChatMessage

from haystack_deep_research import ConfigurationError, create_deep_agent


def _system_prompt_seen(memory_files: Any) -> tuple[str, dict[str, Any]]:
    seen: list[str] = []

    def reply(messages: list[ChatMessage]) -> str:
        seen.append(messages[0].text or "")
        return "Done."

    agent = create_deep_agent(
        chat_generator=MockChatGenerator(response_fn=reply),
        tools=[],
        system_prompt="You are a market-research agent.",
        memory_files=memory_files,
        grounding=False,
        reflexion=False,
    )
    result = agent.run(messages=[ChatMessage.from_user("Go.")])
    return seen[0], result


def test_memory_files_come_first_in_order_and_missing_ones_are_skipped(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("# House rules\nCite the knowledge base.", encoding="utf-8")
    (tmp_path / "notes.md").write_text("Acme is our client.", encoding="utf-8")
    paths = [str(tmp_path / "AGENTS.md"), str(tmp_path / "missing.md"), str(tmp_path / "notes.md")]

    system, result = _system_prompt_seen(paths)

    assert system.index("Cite the knowledge base.") < system.index("Acme is our client.")
    assert system.index("Acme is our client.") < system.index("You are a market-research agent.")
    assert "missing.md" not in system
    assert result["warnings"] == []


def test_a_path_that_cannot_be_read_is_skipped_with_a_warning(tmp_path: Path) -> None:
    system, result = _system_prompt_seen([str(tmp_path)])  # a directory

    assert system.startswith("You are a market-research agent.")
    assert any("could not be read" in warning for warning in result["warnings"])


def test_memory_files_must_be_a_list_of_paths() -> None:
    with pytest.raises(ConfigurationError, match="memory_files must be a list of paths"):
        _system_prompt_seen("~/AGENTS.md")


@pytest.mark.parametrize("hostile", ["fifo", "device", "outside"])
def test_a_memory_file_that_is_no_regular_file_in_its_folder_is_skipped(hostile: str, tmp_path: Path) -> None:
    folder = tmp_path / "repo"
    folder.mkdir()
    memory = folder / "AGENTS.md"
    if hostile == "fifo":
        os.mkfifo(memory)  # a plain open would block the run forever
    elif hostile == "device":
        memory.symlink_to("/dev/zero")  # a plain read would fill memory
    else:
        (tmp_path / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----", encoding="utf-8")
        memory.symlink_to(tmp_path / "id_rsa")  # would send the key to the model

    system, result = _system_prompt_seen([str(memory)])

    assert system.startswith("You are a market-research agent.")
    assert "PRIVATE KEY" not in system
    [warning] = result["warnings"]
    expected = "it is not a regular file" if hostile == "fifo" else "it leads outside"
    assert warning.startswith(f"agent: the memory file {memory} could not be read (LocalFileRefusedError: ")
    assert expected in warning


def test_a_link_to_a_file_of_the_same_folder_is_read(tmp_path: Path) -> None:
    (tmp_path / "rules.md").write_text("Cite the knowledge base.", encoding="utf-8")
    (tmp_path / "AGENTS.md").symlink_to(tmp_path / "rules.md")

    system, result = _system_prompt_seen([str(tmp_path / "AGENTS.md")])

    assert "Cite the knowledge base." in system
    assert result["warnings"] == []
