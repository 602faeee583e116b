"""
A loopback server speaking OpenAI's Chat Completions API, answered by Haystack chat generators (by default the
scripted roles), so a whole run can go through real HTTP clients (``OpenAIChatGenerator``, the CLI's ``--base-url``)
with no model and no key. docs/testing.md says how requests are answered and what does not travel over HTTP.
"""

from __future__ import annotations

import functools
import json
import re
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any, cast

from haystack.dataclasses import ChatMessage, ChatRole, ToolCall
from haystack.tools import Tool

from haystack_deep_research import _prompts as prompts
from haystack_deep_research._prompts import DATASTORE_TOOL_PREFIX, READ_URL, RESEARCH_SUBTOPIC, WEB_SEARCH
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.testing._server import LoopbackServer, RequestHandler
from haystack_deep_research.testing.generators import ROLES, Role, ScriptedChatGenerator

__all__ = ["KIT_MODEL", "LoopbackChatServer"]


TEMPLATE_ROLES = {
    **dict.fromkeys(("scope", "scope_clarified", "scope_clarify"), "scope"),
    **dict.fromkeys(("summarizer", "summarizer_passages"), "summarizer"),
    **dict.fromkeys((*prompts.WRITER_PART_TEMPLATES, "answer"), "writer"),
    **dict.fromkeys(("analysis", "analysis_retry"), "analysis"),
    **dict.fromkeys(("structured", "structured_retry"), "summarize"),
    "judge": "judge",
    "causal": "causal",
}
"""The scripted role that answers each chat template of the library, by template name."""

_TAG = re.compile(r"\{[{%#]")


@functools.cache
def _openings() -> tuple[tuple[str, str], ...]:
    """(fixed opening of the system template, role), longest opening first."""
    found = []
    for template in vars(prompts).values():
        if isinstance(template, prompts.ChatTemplate) and template.name in TEMPLATE_ROLES:
            opening = _TAG.split(template.system, maxsplit=1)[0]
            if len(opening) >= 20:
                found.append((opening, TEMPLATE_ROLES[template.name]))
    return tuple(sorted(found, key=lambda pair: -len(pair[0])))


def request_role(messages: list[ChatMessage], tool_names: list[str]) -> str | None:
    """
    The role a request is for (``None`` when nothing tells): by the tools offered, else by the system message's match
    with the fixed opening (the text before the first tag) of one of the library's chat templates.
    """
    if RESEARCH_SUBTOPIC in tool_names:
        return "orchestrator"
    if any(name in (WEB_SEARCH, READ_URL) or name.startswith(DATASTORE_TOOL_PREFIX) for name in tool_names):
        return "researcher"
    system = next((m.text or "" for m in messages if m.is_from(ChatRole.SYSTEM)), "")
    return next((role for opening, role in _openings() if system.startswith(opening)), None)


KIT_MODEL = "kit"
"""The default model that plays every role, each request in the role it is for."""
_SERVED_ROLES = (*ROLES, "judge", "analysis", "causal", "summarize")
# The "summarize" model is the research workflow's writer: it takes the requests for a report's parts too.

_JSON = "application/json"


def _error(handler: RequestHandler, status: int, message: str, code: str) -> None:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    handler.send_bytes(status, json.dumps(body).encode("utf-8"), content_type=_JSON)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return "" if content is None else str(content)


def _messages(raw: list[dict[str, Any]]) -> list[ChatMessage]:
    """OpenAI chat messages as Haystack messages; tool results find their call by id."""
    calls: dict[str, ToolCall] = {}
    messages = []
    for item in raw:
        role, content = item.get("role"), _text(item.get("content"))
        if role in ("system", "developer"):
            messages.append(ChatMessage.from_system(content))
        elif role == "user":
            messages.append(ChatMessage.from_user(content))
        elif role == "assistant":
            tool_calls = []
            for call in item.get("tool_calls") or []:
                function = call.get("function") or {}
                arguments = json.loads(function.get("arguments") or "{}")
                made = ToolCall(tool_name=function.get("name", ""), arguments=arguments, id=call.get("id"))
                calls[str(call.get("id"))] = made
                tool_calls.append(made)
            messages.append(ChatMessage.from_assistant(content or None, tool_calls=tool_calls))
        elif role == "tool":
            origin = calls.get(str(item.get("tool_call_id"))) or ToolCall(tool_name="", arguments={})
            messages.append(ChatMessage.from_tool(tool_result=content, origin=origin))
    return messages


def _tools(raw: list[dict[str, Any]] | None) -> list[Tool]:
    functions = [item.get("function") or {} for item in raw or []]
    return [
        Tool(
            name=function.get("name", ""),
            description=function.get("description") or "",
            parameters=function.get("parameters") or {"type": "object", "properties": {}},
            function=lambda **_: None,
        )
        for function in functions
    ]


def _completion(model: str, reply: ChatMessage, number: int) -> dict[str, Any]:
    tool_calls = [
        {
            "id": call.id or f"call_{number}_{index}",
            "type": "function",
            "function": {"name": call.tool_name, "arguments": json.dumps(call.arguments)},
        }
        for index, call in enumerate(reply.tool_calls)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    usage = reply.meta.get("usage") or {}
    prompt, completion = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
    return {
        "id": f"chatcmpl-loopback-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop", "logprobs": None}
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


class LoopbackChatServer(LoopbackServer):
    """
    An OpenAI Chat Completions API on ``127.0.0.1`` (``POST /v1/chat/completions``), answered by chat generators
    chosen by the request's model name (see docs/testing.md).

    :param models: Model name to Haystack chat generator; by default each role name ("scope", "orchestrator",
        "researcher", "summarizer", "writer", "judge", "analysis", "causal", "summarize") to a
        ``ScriptedChatGenerator`` of that role, and ``kit`` to all of them (each request answered in its own role).
    :param no_tools: Model names that answer a request offering tools with HTTP 400 "does not support tools".
    :param needs_tool_choice: Model names that see the offered tools only when the request carries ``tool_choice``
        (the generator is then called with ``tools=None``), as llama.cpp's server does.
    :raises ConfigurationError: If a model is not a chat generator.
    """

    def __init__(
        self,
        models: Mapping[str, Any] | None = None,
        *,
        no_tools: Iterable[str] = (),
        needs_tool_choice: Iterable[str] = (),
    ) -> None:
        super().__init__()
        roles = cast(tuple[Role, ...], _SERVED_ROLES)
        defaults: dict[str, Any] = {role: ScriptedChatGenerator(role=role) for role in roles}
        chosen: dict[str, Any] = dict(models) if models is not None else {**defaults, KIT_MODEL: defaults["writer"]}
        self._routed = models is None
        for name, generator in chosen.items():
            if not callable(getattr(generator, "run", None)):
                raise ConfigurationError(f"models[{name!r}] must be a chat generator; got {type(generator).__name__}.")
        self._models = chosen
        self._no_tools = frozenset(no_tools)
        self._needs_tool_choice = frozenset(needs_tool_choice)
        self._served = 0
        self._count_lock = threading.Lock()

    @property
    def openai_base_url(self) -> str:
        """The address to give an OpenAI client or ``--base-url``: ``http://127.0.0.1:<port>/v1``."""
        return f"{self.base_url}/v1"

    def _handle(self, handler: RequestHandler) -> None:
        body = handler.read_json()
        if handler.command != "POST" or not handler.path.rstrip("/").endswith("/chat/completions"):
            _error(handler, 404, f"No endpoint at {handler.command} {handler.path}; use POST /v1/chat/completions.", "")
            return
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            _error(handler, 400, "The body must be a JSON object with a 'messages' list.", "invalid_body")
            return
        model = str(body.get("model"))
        if model not in self._models:
            _error(
                handler, 404, f"The model '{model}' does not exist; known: {sorted(self._models)}.", "model_not_found"
            )
        elif body.get("tools") and model in self._no_tools:
            _error(handler, 400, f"registry/{model} does not support tools", "tools_unsupported")
        else:
            self._answer(handler, model, body)

    def _answer(self, handler: RequestHandler, model: str, body: dict[str, Any]) -> None:
        with self._count_lock:
            self._served += 1
            number = self._served
        heeded = model not in self._needs_tool_choice or body.get("tool_choice") not in (None, "none")
        tools, messages = (_tools(body.get("tools")) if heeded else []), _messages(body["messages"])
        generator = self._models[model]
        if self._routed:
            role = request_role(messages, [tool.name for tool in tools])
            if model == KIT_MODEL and role is None:
                why = "the kit model cannot tell which role this request is for (no known tools or system prompt)"
                _error(handler, 400, f"{why}; name the role's model instead, e.g. --role-model writer=writer.", "role")
                return
            if model == KIT_MODEL:
                generator = self._models[str(role)]
            elif role is not None and role != model and (model, role) != ("summarize", "writer"):
                why = f"the model '{model}' plays the {model} role, but this request is for the {role} role"
                _error(handler, 400, f"{why}; use --model {KIT_MODEL}, or --role-model ROLE={role}.", "wrong_role")
                return
        try:
            result = generator.run(messages=messages, tools=tools or None)
        except Exception as error:  # the generator's failure becomes the server's, as a provider's would
            _error(handler, 500, f"{type(error).__name__}: {error}", "server_error")
            return
        reply = (result.get("replies") or [ChatMessage.from_assistant("")])[0]
        completion = _completion(model, reply, number)
        if body.get("stream"):
            usage = (body.get("stream_options") or {}).get("include_usage") is True
            handler.send_bytes(200, _events(completion, usage=usage), content_type="text/event-stream")
            return
        handler.send_bytes(200, json.dumps(completion).encode("utf-8"), content_type=_JSON)


def _events(completion: dict[str, Any], *, usage: bool) -> bytes:
    """A completion as the server-sent events of a streamed one: the whole reply in one chunk, then its usage."""
    [choice] = completion["choices"]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": message["content"]}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": index, **call} for index, call in enumerate(message["tool_calls"])]
    head = {key: completion[key] for key in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    chunks = [head | {"choices": [{"index": 0, "delta": delta, "finish_reason": choice["finish_reason"]}]}]
    if usage:
        chunks.append(head | {"choices": [], "usage": completion["usage"]})
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
    return "".join(lines).encode("utf-8")
