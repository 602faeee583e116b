"""
Pins what the package relies on in Haystack and openai beyond their documented API (see ``_haystack_internals``).

A Haystack or openai upgrade that changes one of these fails the test named after it, not a research run.
"""

from __future__ import annotations

import ast
import logging
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from haystack import component
from haystack.components.agents import Agent
from haystack.components.generators.chat import OpenAIChatGenerator, OpenAIResponsesChatGenerator
from haystack.dataclasses import ChatMessage, ReasoningContent, ToolCall
from haystack.utils import Secret
from pydantic import BaseModel

import haystack_deep_research
from haystack_deep_research._haystack_internals import (
    NO_KEY,
    TELEMETRY_ENV,
    KeylessClientMixin,
    input_names,
    output_names,
    telemetry_off_unless_asked,
)
from haystack_deep_research.agents.compatible import CompatibleChatGenerator, CompatibleResponsesChatGenerator
from haystack_deep_research.report.structured import strict_output_kwargs
from haystack_deep_research.research.tool_calls import with_tool_calls
from haystack_deep_research.testing import ScriptedChatGenerator

LOCAL = "http://127.0.0.1:9/v1"


@pytest.mark.parametrize("parent", [OpenAIChatGenerator, OpenAIResponsesChatGenerator])
def test_openai_generators_build_their_client_from_client_kwargs(parent: type) -> None:
    """``warm_up`` and ``warm_up_async`` call the private ``_client_kwargs()``, whose ``api_key`` the mixin fills."""
    assert callable(getattr(parent, "_client_kwargs", None))

    class Probe(KeylessClientMixin, parent):  # type: ignore[misc, valid-type]
        pass

    generator = Probe(api_base_url=LOCAL, api_key=Secret.from_env_var("HDR_UNSET_KEY", strict=False))
    assert generator._client_kwargs()["api_key"] == NO_KEY
    generator.warm_up()
    assert generator.client is not None
    assert generator.client.api_key == NO_KEY


@pytest.mark.parametrize("kind", [CompatibleChatGenerator, CompatibleResponsesChatGenerator])
def test_compatible_generators_start_without_a_key_and_keep_it_an_env_var(
    kind: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    generator = kind(api_base_url=LOCAL, api_key=Secret.from_env_var("OPENAI_API_KEY", strict=False))
    generator.warm_up()
    assert generator.client.api_key == NO_KEY
    assert generator.to_dict()["init_parameters"]["api_key"]["type"] == "env_var"

    monkeypatch.setenv("OPENAI_API_KEY", "sk-set")
    keyed = kind(api_base_url=LOCAL, api_key=Secret.from_env_var("OPENAI_API_KEY", strict=False))
    keyed.warm_up()
    assert keyed.client.api_key == "sk-set"


def test_a_message_rebuilt_with_new_tool_calls_keeps_everything_else() -> None:
    original = ChatMessage.from_assistant(
        text="Looking it up.",
        meta={"model": "m", "usage": {"prompt_tokens": 3}},
        name="orchestrator",
        tool_calls=[ToolCall(tool_name="web_search", arguments={"query": "a"}, id=None)],
        reasoning=ReasoningContent(reasoning_text="think", extra={"signature": "s"}),
    )
    calls = [ToolCall(tool_name="web_search", arguments={"query": "b"}, id="call_1")]

    rebuilt = with_tool_calls(original, calls)

    assert rebuilt.tool_calls == calls
    assert (rebuilt.text, rebuilt.meta, rebuilt.name, rebuilt.reasoning, rebuilt.role) == (
        original.text,
        original.meta,
        original.name,
        original.reasoning,
        original.role,
    )
    assert rebuilt == with_tool_calls(rebuilt, calls)


class Finding(BaseModel):
    """A finding."""

    claim: str
    confidence: float | None = None


def test_structured_output_sends_openais_strict_schema() -> None:
    """Every property required and no extra ones: what OpenAI's strict mode accepts, as Haystack sends it."""
    generator = OpenAIChatGenerator(api_base_url=LOCAL, api_key=Secret.from_token("sk-test"))
    kwargs = strict_output_kwargs(generator, Finding)

    assert kwargs is not None
    spec = kwargs["response_format"]["json_schema"]
    assert (spec["name"], spec["strict"]) == ("Finding", True)
    assert spec["schema"]["additionalProperties"] is False
    assert sorted(spec["schema"]["required"]) == ["claim", "confidence"]


@component
class _Probe:
    @component.output_types(documents=list, links=list)
    def run(self, query: str, top_k: int = 3) -> dict[str, Any]:
        return {"documents": [], "links": []}


def test_component_instances_expose_their_sockets() -> None:
    """``__haystack_input__`` / ``__haystack_output__`` hold a component's sockets, read before wiring it."""
    probe = _Probe()
    assert input_names(probe) == {"query", "top_k"}
    assert sorted(output_names(probe) or []) == ["documents", "links"]
    agent = Agent(chat_generator=ScriptedChatGenerator(role="agent"))
    assert "messages" in (input_names(agent) or set())
    assert input_names(object()) is None
    assert output_names(lambda: None) is None


def test_no_private_name_of_haystack_or_openai_outside_the_adapter() -> None:
    """Private imports of haystack/openai, their private attributes and Haystack's sockets stay in one module."""
    package = Path(haystack_deep_research.__file__).parent
    private_attributes = {"_client_kwargs", "_content", "_role", "_meta", "_name"}
    found = []
    for path in package.rglob("*.py"):
        if path.name == "_haystack_internals.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("haystack", "openai"):
                if any(part.startswith("_") for part in (node.module or "").split(".")) or any(
                    alias.name.startswith("_") for alias in node.names
                ):
                    found.append(f"{path.name}:{node.lineno} imports from {node.module}")
            elif (
                isinstance(node, ast.Attribute)
                and node.attr in private_attributes
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                found.append(f"{path.name}:{node.lineno} reads .{node.attr}")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "__haystack_" in node.value:
                found.append(f"{path.name}:{node.lineno} names {node.value}")
    assert not found


# Haystack's telemetry: the command line and the servers turn it off unless the user asked for it.

_ENTRY = """
import os, sys
from haystack_deep_research.cli import main
code = main(sys.argv[1:])
from haystack.telemetry import _telemetry
print(code, _telemetry.telemetry is not None, os.environ.get("HAYSTACK_TELEMETRY_ENABLED"))
"""


@pytest.mark.parametrize(
    ("given", "sending", "passed_on"),
    [(None, False, "False"), ("", False, "False"), ("True", True, "True"), ("1", True, "1"), ("false", False, "False")],
)
def test_the_command_line_sends_no_haystack_telemetry_unless_asked(
    tmp_path: Path, given: str | None, sending: bool, passed_on: str
) -> None:
    report = tmp_path / "report.md"
    report.write_text("# Bericht über Gezeiten\n\nNo citation here.\n", encoding="utf-8")
    env = {name: value for name, value in os.environ.items() if name != TELEMETRY_ENV}
    env |= {"HOME": str(tmp_path), "PYTHONPATH": str(Path(haystack_deep_research.__file__).resolve().parents[1])}
    if given is not None:
        env[TELEMETRY_ENV] = given
    finished = subprocess.run(
        [sys.executable, "-c", _ENTRY, "check", str(report)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    code, on, inherited = finished.stdout.split()[-3:]
    assert code in {"0", "1"}, finished.stderr  # the check ran
    assert (on, inherited) == (str(sending), passed_on)


class _Recorder:
    def __init__(self) -> None:
        self.events: list[str] = []

    def send_event(self, event_name: str, event_properties: dict[str, Any] | None = None) -> None:
        self.events.append(event_name)


def _one_pipeline_run() -> None:
    from haystack import Pipeline

    @component
    class Echo:
        @component.output_types(text=str)
        def run(self, text: str) -> dict[str, str]:
            return {"text": text}

    pipeline = Pipeline()
    pipeline.add_component("echo", Echo())
    assert pipeline.run({"echo": {"text": "Gezeiten, 潮汐"}}) == {"echo": {"text": "Gezeiten, 潮汐"}}


def test_a_pipeline_run_sends_through_the_module_global_the_switch_clears(monkeypatch: pytest.MonkeyPatch) -> None:
    """Haystack looks ``haystack.telemetry._telemetry.telemetry`` up on every run: ``None`` there sends nothing."""
    from haystack.telemetry import _telemetry

    recorder = _Recorder()
    monkeypatch.setattr(_telemetry, "telemetry", recorder)
    _one_pipeline_run()
    assert len(recorder.events) == 1  # what would have been sent

    environ = {TELEMETRY_ENV: "True"}
    assert telemetry_off_unless_asked(environ) is True  # asked for: left on
    assert _telemetry.telemetry is recorder
    assert telemetry_off_unless_asked({}) is False
    assert _telemetry.telemetry is None
    _one_pipeline_run()
    assert len(recorder.events) == 1  # nothing more


def test_a_failure_to_send_telemetry_never_reaches_the_display(monkeypatch: pytest.MonkeyPatch) -> None:
    """PostHog posts from its own thread; urllib3 logs each failed attempt there as a warning, to the root logger."""
    import posthog

    for name in ("urllib3.connectionpool", "urllib3.util.retry", "posthog", "backoff"):
        monkeypatch.setattr(logging.getLogger(name), "filters", [])  # as in a process that did not quiet them yet

    records: list[logging.LogRecord] = []

    class Display(logging.Handler):  # what a progress display on the root logger would show
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    def send_to_a_closed_port() -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        client = posthog.Client("phc_test", host=f"https://127.0.0.1:{port}", max_retries=0)
        client.capture("event", distinct_id="user")
        client.flush()
        client.shutdown()

    display = Display(level=logging.WARNING)
    root = logging.getLogger()
    root.addHandler(display)
    try:
        send_to_a_closed_port()
        shown_before = [record.name for record in records]
        telemetry_off_unless_asked({TELEMETRY_ENV: "True"})  # on, as asked, but quiet
        records.clear()
        send_to_a_closed_port()
        logging.getLogger("urllib3.connectionpool").warning("a warning of another connection")
    finally:
        root.removeHandler(display)
    assert "urllib3.connectionpool" in shown_before  # the retry warnings the display used to show
    assert [record.getMessage() for record in records] == ["a warning of another connection"]
