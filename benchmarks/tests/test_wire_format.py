"""The simulator's replies parse in the installed ``openai`` client's own types and in Haystack's generators."""

from __future__ import annotations

import json
from typing import Any

import pytest
from haystack.components.generators.chat import OpenAIChatGenerator, OpenAIResponsesChatGenerator
from haystack.dataclasses import ChatMessage, StreamingChunk
from haystack.tools import Tool
from haystack.utils import Secret
from openai import OpenAI, RateLimitError
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent
from pydantic import TypeAdapter

from benchmarks.sim.llm_server import FaultModel, SimLLMServer
from benchmarks.sim.policies import PolicyConfig

SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}
READ_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "read_url",
        "description": "Read pages.",
        "parameters": {
            "type": "object",
            "properties": {"urls": {"type": "array", "items": {"type": "string"}}, "question": {"type": "string"}},
            "required": ["urls", "question"],
        },
    },
}
QUESTION = "What does the evidence say about heat pumps? Aspects to cover: cost; noise."


@pytest.fixture
def server():
    with SimLLMServer(PolicyConfig(subtopics=2)) as srv:
        yield srv


@pytest.fixture
def client(server):
    with OpenAI(base_url=server.base_url, api_key="sim", max_retries=0) as c:
        yield c


def test_chat_completion_validates_strictly(client):
    raw = client.chat.completions.with_raw_response.create(
        model="sim-researcher",
        messages=[{"role": "user", "content": "heat pumps: cost"}],
        tools=[SEARCH_TOOL, READ_TOOL],
    )
    completion = ChatCompletion.model_validate(json.loads(raw.http_response.text))
    calls = completion.choices[0].message.tool_calls or []
    call = calls[0]
    assert call.type == "function"
    assert call.function.name == "web_search"
    assert json.loads(call.function.arguments) == {"query": "heat pumps: cost"}
    assert completion.choices[0].finish_reason == "tool_calls"
    assert completion.usage is not None
    assert completion.usage.prompt_tokens > 0


def test_chat_stream_chunks_validate_and_carry_usage(client):
    stream = client.chat.completions.create(
        model="sim-scope",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [ChatCompletionChunk.model_validate(c.model_dump()) for c in stream]
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Research brief.")
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None


def test_responses_validate_strictly(client):
    tool = {**SEARCH_TOOL["function"], "type": "function", "strict": False}
    raw = client.responses.with_raw_response.create(
        model="sim-orchestrator",
        input=[{"role": "user", "content": QUESTION}],
        tools=[
            {
                **tool,
                "name": "research_subtopic",
                "parameters": {
                    "type": "object",
                    "properties": {"subtopic": {"type": "string"}},
                    "required": ["subtopic"],
                },
            }
        ],
    )
    response = Response.model_validate(json.loads(raw.http_response.text))
    calls = [o for o in response.output if o.type == "function_call"]
    assert [json.loads(c.arguments)["subtopic"] for c in calls] == ["heat pumps: cost", "heat pumps: noise"]


def test_responses_stream_events_validate(client):
    adapter = TypeAdapter(ResponseStreamEvent)
    stream = client.responses.create(model="sim-scope", input=QUESTION, stream=True)
    events = [adapter.validate_python(e.model_dump()) for e in stream]
    assert events[0].type == "response.created"
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text.startswith("Research brief.")
    assert [e.sequence_number for e in events] == list(range(len(events)))


@pytest.mark.parametrize("generator_cls", [OpenAIChatGenerator, OpenAIResponsesChatGenerator])
@pytest.mark.parametrize("streaming", [False, True])
def test_haystack_generators_get_tool_calls(server, generator_cls, streaming):
    chunks: list[StreamingChunk] = []
    search = Tool(
        name="web_search",
        description="Search.",
        function=lambda query: query,
        parameters=SEARCH_TOOL["function"]["parameters"],
    )
    read = Tool(
        name="read_url",
        description="Read.",
        function=lambda urls, question: question,
        parameters=READ_TOOL["function"]["parameters"],
    )
    generator = generator_cls(
        api_key=Secret.from_token("sim"),
        model="sim-researcher",
        api_base_url=server.base_url,
        streaming_callback=chunks.append if streaming else None,
        generation_kwargs={"stream_options": {"include_usage": True}}
        if streaming and generator_cls is OpenAIChatGenerator
        else None,
    )
    reply = generator.run(messages=[ChatMessage.from_user("heat pumps: cost")], tools=[search, read])["replies"][0]
    assert reply.tool_calls[0].tool_name == "web_search"
    assert reply.tool_calls[0].arguments == {"query": "heat pumps: cost"}
    assert bool(chunks) == streaming
    assert server.wait_for(1)[-1].stream == streaming


def test_429_carries_retry_after_and_clients_retry():
    with SimLLMServer(faults=FaultModel(rate_429=1.0, retry_after_ms=10)) as srv:
        with OpenAI(base_url=srv.base_url, api_key="sim", max_retries=0) as c, pytest.raises(RateLimitError) as err:
            c.chat.completions.create(model="sim-scope", messages=[{"role": "user", "content": QUESTION}])
        assert err.value.response.headers["retry-after-ms"] == "10"
    with SimLLMServer(faults=FaultModel(rate_429=0.5, retry_after_ms=10)) as srv:
        with OpenAI(base_url=srv.base_url, api_key="sim", max_retries=8) as c:
            for i in range(6):
                c.chat.completions.create(model="sim-scope", messages=[{"role": "user", "content": f"{QUESTION} {i}"}])
        statuses = [r.status for r in srv.wait_for(6)]
        assert statuses.count(200) == 6
        assert 429 in statuses


def test_unknown_model_is_a_404(client):
    with pytest.raises(Exception, match="unknown model"):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])


def test_the_search_server_answers_a_custom_retrievers_get_with_a_hit_list_and_logs_its_query() -> None:
    from urllib.error import HTTPError
    from urllib.parse import urlencode
    from urllib.request import urlopen

    from benchmarks.harness.world import SearchServer
    from haystack_deep_research.testing.search_server import SearchDocument

    docs = [
        SearchDocument(url=f"http://h/pumps/{i}.html", title=f"Pumps {i}", content=f"Heat pumps in Tromsø, trial {i}.")
        for i in range(4)
    ]
    docs.append(SearchDocument(url="http://h/other.html", title="Other", content="Nothing about that."))
    with SearchServer(docs) as search:
        query = urlencode({"query": "heat pumps Tromsø", "max_results": "3"})
        with urlopen(f"{search.base_url}/search?{query}", timeout=10) as reply:
            hits = json.loads(reply.read())
        with pytest.raises(HTTPError) as refused:
            urlopen(f"{search.base_url}/search?query=", timeout=10)
        logged = search.requests.snapshot()

    assert hits == [{"url": f"http://h/pumps/{i}.html", "title": f"Pumps {i}", "raw_content": ""} for i in range(3)]
    assert refused.value.code == 400
    assert logged[0].json_body == {"query": "heat pumps Tromsø", "max_results": 3}


@pytest.mark.parametrize("cap_name", ["max_tokens", "max_completion_tokens"])
def test_a_reply_stops_at_the_requests_output_cap(client, cap_name: str) -> None:
    whole = client.chat.completions.create(model="sim-scope", messages=[{"role": "user", "content": QUESTION}])
    capped = client.chat.completions.create(
        model="sim-scope", messages=[{"role": "user", "content": QUESTION}], **{cap_name: 12}
    )
    streamed = client.chat.completions.create(
        model="sim-scope",
        messages=[{"role": "user", "content": QUESTION}],
        stream=True,
        stream_options={"include_usage": True},
        **{cap_name: 12},
    )
    chunks = list(streamed)
    streamed_text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    answer = capped.choices[0].message.content or ""

    assert whole.choices[0].finish_reason == "stop"
    assert (whole.usage.completion_tokens if whole.usage else 0) > 12
    assert capped.choices[0].finish_reason == "length"
    assert capped.usage is not None
    assert capped.usage.completion_tokens == 12
    assert (whole.choices[0].message.content or "").startswith(answer)
    assert len(answer) == 48
    assert streamed_text == answer
    assert finishes == ["length"]
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.completion_tokens == 12


def test_a_responses_request_is_capped_by_max_output_tokens(client) -> None:
    response = client.responses.create(model="sim-scope", input=QUESTION, max_output_tokens=16)
    assert response.usage is not None
    assert response.usage.output_tokens == 16
    assert len(response.output_text) == 64
