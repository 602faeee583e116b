"""
An OpenAI-compatible LLM server on ``127.0.0.1`` for the benchmark.

It answers ``POST /v1/chat/completions`` and ``POST /v1/responses``, streaming (SSE) or not, in the wire formats the
``openai`` client parses, with tool calls. The model name selects a simulated role (see
:mod:`benchmarks.sim.policies`). A latency model (time to first token plus output tokens per second), a rate of
429 answers (with ``Retry-After``), and a log of every call (role, agent thread, start, end, tokens, tool calls)
make runs measurable; the same rules apply to every client. A request's output cap (``max_completion_tokens`` /
``max_tokens``, ``max_output_tokens``) is honoured as a model honours it: a longer text reply stops at the cap.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from benchmarks.sim import wire_chat, wire_responses
from benchmarks.sim.conversation import Conversation, parse_chat, parse_responses
from benchmarks.sim.policies import Policies, PolicyConfig, UnknownRoleError
from benchmarks.sim.prose import unit_hash
from benchmarks.sim.reply import Reply, Usage
from haystack_deep_research.testing._server import LoopbackServer, RequestHandler

IDLE_CONNECTION_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class LatencyModel:
    """
    Time to first token plus output tokens at a fixed rate.

    ``tokens_per_s`` 0 means instant generation. ``prefill_tokens_per_s`` models reading the prompt: each input
    token adds ``1 / prefill_tokens_per_s`` seconds to the time to first token (0 means reading is free).
    """

    ttft_s: float = 0.0
    tokens_per_s: float = 0.0
    prefill_tokens_per_s: float = 0.0

    def first_token_s(self, input_tokens: int) -> float:
        """Seconds before the first output token of a request with ``input_tokens`` tokens of input."""
        prefill = input_tokens / self.prefill_tokens_per_s if self.prefill_tokens_per_s > 0 else 0.0
        return self.ttft_s + prefill

    def generation_s(self, output_tokens: int) -> float:
        """Seconds to generate ``output_tokens`` after the first token."""
        return output_tokens / self.tokens_per_s if self.tokens_per_s > 0 else 0.0

    def describe(self) -> str:
        """The model in words, for the report."""
        text = f"{self.ttft_s:g} s to first token"
        if self.prefill_tokens_per_s > 0:
            text += f" plus 1 s per {self.prefill_tokens_per_s:,.0f} input tokens"
        return text + (f", then {self.tokens_per_s:g} output tokens/s" if self.tokens_per_s > 0 else ", instant output")


@dataclass(frozen=True)
class FaultModel:
    """A share of requests answered ``429`` with ``Retry-After``, spread evenly over the requests as they arrive."""

    rate_429: float = 0.0
    retry_after_ms: int = 200
    seed: int = 7


@dataclass
class CallRecord:
    """One request the server answered; times are ``time.monotonic()`` seconds."""

    role: str
    thread: str
    model: str
    api: str
    stream: bool
    status: int
    start: float
    end: float
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


class _Handler(RequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked streams, as real endpoints speak
    # Headers and body go out in separate writes; without TCP_NODELAY, Nagle's algorithm meets the client's delayed
    # ACK and adds ~40 ms to every reply, which would be billed to the libraries as overhead.
    disable_nagle_algorithm = True
    timeout = IDLE_CONNECTION_TIMEOUT_S

    def send_json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self.send_bytes(status, json.dumps(body).encode(), content_type="application/json", headers=headers)

    def send_chunk(self, data: bytes) -> None:
        """Send one chunk of a chunked body; the last (empty) one stays buffered until the call is logged."""
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        if data:
            self.wfile.flush()


class SimLLMServer(LoopbackServer):
    """
    The simulated LLM endpoint, a loopback server of the testing kit. Use as a context manager; ``api_url`` is what
    ``api_base_url`` takes.

    :param config: The role policies' knobs.
    :param latency: The latency model.
    :param faults: The 429 injection model.
    """

    handler_class = _Handler

    def __init__(
        self, config: PolicyConfig | None = None, latency: LatencyModel | None = None, faults: FaultModel | None = None
    ) -> None:
        self.policies = Policies(config or PolicyConfig())
        self.latency = latency or LatencyModel()
        self.faults = faults or FaultModel()
        self._records: list[CallRecord] = []
        self._requests = 0
        self._count_lock = threading.Lock()
        super().__init__()

    @property
    def api_url(self) -> str:
        """For example ``http://127.0.0.1:5123/v1``."""
        return self.url("/v1")

    @property
    def records(self) -> list[CallRecord]:
        """A copy of the call log, in the order calls finished."""
        with self._count_lock:
            return list(self._records)

    def wait_for(self, count: int, timeout: float = 5.0) -> list[CallRecord]:
        """
        Wait until ``count`` requests are answered (every request a client sent, refused ones included), then give
        the call log.

        :raises TimeoutError: If fewer were logged within ``timeout`` seconds.
        """
        self.requests.wait_for(count, timeout=timeout)
        return self.records

    def dump(self, path: Path) -> None:
        """Write the call log as JSON."""
        path.write_text(json.dumps([asdict(r) for r in self.records], indent=1))

    def _handle(self, handler: RequestHandler) -> None:
        """Answer one request: a POST to one of the two endpoints."""
        handler = cast(_Handler, handler)  # the server runs handler_class
        start = time.monotonic()
        path = handler.path.split("?")[0]
        if handler.command != "POST":
            handler.send_json(404, _error("not found", "invalid_request_error"))
            return
        try:
            body = json.loads(handler.read_body() or b"{}")
        except ValueError:
            handler.send_json(400, _error("the body is not JSON", "invalid_request_error"))
            return
        if path.endswith("/chat/completions"):
            conversation = parse_chat(body)
        elif path.endswith("/responses"):
            conversation = parse_responses(body)
        else:
            handler.send_json(404, _error(f"no endpoint at {path}", "invalid_request_error"))
            return
        try:
            role, reply, thread = self.policies.decide(conversation)
            reply = reply.capped(conversation.max_output_tokens)
        except UnknownRoleError as err:
            handler.send_json(404, _error(str(err), "invalid_request_error", "model_not_found"))
            return
        except Exception as err:  # a policy bug must answer, not hang the client
            handler.send_json(500, _error(f"simulator error: {err!r}", "server_error"))
            return
        record = CallRecord(role, thread, conversation.model, conversation.api, conversation.stream, 200, start, start)
        if self._throttled():
            record.status = 429
            handler.send_json(
                429, _error("Rate limit reached (simulated).", "requests", "rate_limit_exceeded"), self._retry()
            )
        else:
            usage = Usage(conversation.input_tokens(), reply.output_tokens())
            record.input_tokens, record.output_tokens = usage.input_tokens, usage.output_tokens
            record.tool_calls = [{"name": c.name, "arguments": c.arguments} for c in reply.tool_calls]
            try:
                self._answer(handler, conversation, reply, usage)
            except (BrokenPipeError, ConnectionResetError):
                record.status = 499
        record.end = time.monotonic()
        with self._count_lock:
            self._records.append(record)

    def _throttled(self) -> bool:
        """Spread 429s evenly over arriving requests (retries included): exactly ``rate_429`` of them, whoever calls."""
        rate = self.faults.rate_429
        if rate <= 0:
            return False
        phase = unit_hash(self.faults.seed, "429-phase")
        with self._count_lock:
            self._requests += 1
            n = self._requests
        return math.floor(n * rate + phase) > math.floor((n - 1) * rate + phase)

    def _retry(self) -> dict[str, str]:
        ms = self.faults.retry_after_ms
        return {"retry-after-ms": str(ms), "retry-after": str(max(1, math.ceil(ms / 1000)))}

    def _answer(self, handler: _Handler, conversation: Conversation, reply: Reply, usage: Usage) -> None:
        ids = self.policies.ids
        model = conversation.model
        if not conversation.stream:
            time.sleep(self.latency.first_token_s(usage.input_tokens) + self.latency.generation_s(usage.output_tokens))
            if conversation.api == "chat":
                handler.send_json(200, wire_chat.completion(reply, model=model, usage=usage, ids=ids))
            else:
                handler.send_json(
                    200, wire_responses.response(reply, model=model, usage=usage, tools=conversation.raw_tools, ids=ids)
                )
            return
        if conversation.api == "chat":
            events: Iterator[dict[str, Any]] = wire_chat.chunks(
                reply, model=model, usage=usage, ids=ids, include_usage=conversation.include_usage
            )
        else:
            events = wire_responses.events(reply, model=model, usage=usage, tools=conversation.raw_tools, ids=ids)
        self._stream(handler, list(events), conversation.api, usage)

    def _stream(self, handler: _Handler, events: list[dict[str, Any]], api: str, usage: Usage) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        content = [e for e in events if _is_content(e)]
        pause = self.latency.generation_s(usage.output_tokens) / max(1, len(content))
        first = True
        for event in events:
            if _is_content(event):
                time.sleep(self.latency.first_token_s(usage.input_tokens) if first else pause)
                first = False
            prefix = f"event: {event['type']}\n" if api == "responses" else ""
            handler.send_chunk(f"{prefix}data: {json.dumps(event)}\n\n".encode())
        if first:
            time.sleep(self.latency.first_token_s(usage.input_tokens))
        if api == "chat":
            handler.send_chunk(b"data: [DONE]\n\n")
        handler.send_chunk(b"")


def _is_content(event: dict[str, Any]) -> bool:
    if "delta" in event and isinstance(event["delta"], str):
        return True
    choices = event.get("choices") or []
    return (
        bool(choices)
        and any(k in choices[0].get("delta", {}) for k in ("content", "tool_calls"))
        and bool(choices[0]["delta"].get("content") or choices[0]["delta"].get("tool_calls"))
    )


def _error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
