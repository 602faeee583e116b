"""A research run in a child process, against the test's loopback servers, with a fault injected where the test asks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from haystack_deep_research.testing import LoopbackSearchServer

# Two sub-topics, researched one at a time. The fault, if any:
# - "hang": the second researcher hangs in its first model call, so the test can kill the child after the first note;
# - "kill_at_ledger_write": the process is killed (SIGKILL) the moment it replaces ledger.json;
# - "disk_full": the file size limit (RLIMIT_FSIZE) leaves room for 40 more bytes of journal while the first note is
#   journaled, as a full disk would, and is lifted at the first warning (the disk has room again).
# The child prints the run's warnings, one per line.
CHILD = textwrap.dedent(
    """
    import os, signal, sys, time
    from haystack.dataclasses import ChatMessage
    from haystack.components.generators.chat import MockChatGenerator
    from haystack.utils import Secret
    from haystack_deep_research import RunInputs, Sources, UrlPolicy, WebSearchTool
    from haystack_deep_research import create_deep_research_agent
    from haystack_deep_research.events import SubagentSpawned, WarningRaised
    from haystack_deep_research.testing import ScriptedChatGenerator, forbid_network

    run_dir, search_url, question, fault = sys.argv[1:5]
    scripted = ScriptedChatGenerator(role="researcher")

    def researcher(messages, tools):
        if fault == "hang" and "battery storage" in messages[1].text:
            time.sleep(60)  # killed long before this ends
        return scripted.run(messages, tools)["replies"][0]

    def on_event(event):
        if fault != "disk_full":
            return
        import resource
        hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
        if isinstance(event, SubagentSpawned) and event.subtopic == "solar capacity":
            size = os.path.getsize(os.path.join(run_dir, "journal.jsonl"))
            resource.setrlimit(resource.RLIMIT_FSIZE, (size + 40, hard))
        elif isinstance(event, WarningRaised):
            resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))

    if fault == "disk_full":
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    if fault == "kill_at_ledger_write":
        replace = os.replace

        def killing_replace(source, target, **options):
            if str(target).endswith("ledger.json"):
                os.kill(os.getpid(), signal.SIGKILL)
            return replace(source, target, **options)

        os.replace = killing_replace

    agent = create_deep_research_agent(
        scope_llm=ScriptedChatGenerator(role="scope"),
        orchestrator_llm=ScriptedChatGenerator(role="orchestrator", subtopics=["solar capacity", "battery storage"]),
        researcher_llm=MockChatGenerator(response_fn=researcher),
        summarizer_llm=ScriptedChatGenerator(role="summarizer"),
        writer_llm=ScriptedChatGenerator(role="writer"),
        sources=Sources(
            search=WebSearchTool(api_key=Secret.from_token("test-key"), api_base_url=search_url, max_results=2),
            url_policy=UrlPolicy(allow_hosts=("127.0.0.1",)),
        ),
        max_concurrent_researchers=1,
    )
    with forbid_network():
        result = agent.run(
            messages=[ChatMessage.from_user(question)], inputs=RunInputs(run_dir=run_dir, on_event=on_event)
        )
    print("\\n".join(result["warnings"]))
    """
)


@pytest.fixture
def spawn_run(search: LoopbackSearchServer, tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start the child run on ``run_dir`` for ``question`` with ``fault``; the test waits for it or kills it."""
    script = tmp_path / "child.py"
    script.write_text(CHILD, encoding="utf-8")
    started: list[subprocess.Popen[str]] = []

    def spawn(run_dir: Path, question: str, fault: str) -> subprocess.Popen[str]:
        environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HAYSTACK_TELEMETRY_ENABLED": "False"}
        child = subprocess.Popen(
            [sys.executable, str(script), str(run_dir), search.base_url, question, fault],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        started.append(child)
        return child

    yield spawn
    for child in started:
        if child.poll() is None:
            child.kill()
        child.communicate(timeout=10)
