"""
The per-call floor of the stack both libraries share: one Haystack chat generator call through the ``openai``
client to the simulated server at latency 0, with a researcher-sized request (a few messages, three tools).

Run by the parent as ``python -m benchmarks.harness.floor LLM_URL API CALLS``; prints JSON with the mean wall and
CPU milliseconds per call, measured after a few unmeasured calls.
"""

from __future__ import annotations

import json
import resource
import sys
import time

from haystack.dataclasses import ChatMessage, ToolCall
from haystack.tools import Tool

from benchmarks.harness.generators import generator
from benchmarks.harness.spec import RunSpec

WARMUP_CALLS = 5


def _tools() -> list[Tool]:
    def tool(name: str, properties: dict) -> Tool:
        schema = {"type": "object", "properties": properties, "required": list(properties)}
        return Tool(name=name, description=f"The {name} tool.", parameters=schema, function=lambda **_: "")

    return [
        tool("web_search", {"query": {"type": "string"}}),
        tool("read_url", {"urls": {"type": "array", "items": {"type": "string"}}, "question": {"type": "string"}}),
        tool("think_tool", {"reflection": {"type": "string"}}),
    ]


def _messages() -> list[ChatMessage]:
    call = ToolCall(tool_name="web_search", arguments={"query": "heat pumps: noise levels"}, id="call_1")
    return [
        ChatMessage.from_system("You research one sub-topic on the web. " * 20),
        ChatMessage.from_user("Sub-topic to research:\nresidential heat pumps: noise levels"),
        ChatMessage.from_assistant(tool_calls=[call]),
        ChatMessage.from_tool("[1] A result\nURL: http://127.0.0.1/a.html\nSnippet: ... " * 5, origin=call),
    ]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str]) -> int:
    """Entry point."""
    url, api, calls = argv[1], argv[2], int(argv[3])
    spec = RunSpec(library="", question="", llm_url=url, search_url="", result_path="", api=api)
    gen = generator(spec, "researcher")
    tools, messages = _tools(), _messages()
    for _ in range(WARMUP_CALLS):
        gen.run(messages=messages, tools=tools)
    cpu, began = _cpu(), time.monotonic()
    for _ in range(calls):
        gen.run(messages=messages, tools=tools)
    wall_ms, cpu_ms = 1000 * (time.monotonic() - began) / calls, 1000 * (_cpu() - cpu) / calls
    print(json.dumps({"calls": calls, "wall_ms_per_call": wall_ms, "cpu_ms_per_call": cpu_ms}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
