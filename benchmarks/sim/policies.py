"""
The deterministic decisions of each simulated role, chosen by model name (``sim-scope``, ``sim-orchestrator``,
``sim-researcher``, ``sim-summarizer``, ``sim-writer``).

- orchestrator: delegates ``subtopics`` sub-topics in its first turn (one call each, all in that turn), then ends
  with a one-line text turn once results are back. Offered no delegation tool and asked to "write N search queries",
  it answers a JSON list of N queries, one per aspect of the task (a planner that researches itself).
- researcher: searches once with its sub-topic, reads the top ``read_top_k`` result URLs (one ``read_url`` call per
  URL in one turn, or one call with all of them when ``read_batch``), then answers with findings citing the URLs
  it read.
- summarizer, scope, writer: see :mod:`benchmarks.sim.prose`. The writer tells three requests apart by what its
  system message asks for: one section of a report (it says "one section of a research report"; the reply is that
  section alone), the opening of a report (it says "opening of a research report"; the reply is the title and the
  executive summary), or, otherwise, a whole report. A whole report cites in the style the request asks: with
  ``([in-text citation](url))`` after each finding and a reference list where it asks for that, otherwise with
  ``[source](url)`` and a list of sources. Asked (in its system message) for an ``"agent_role_prompt"``, the writer
  answers the JSON of a research agent for the task.

Tools are found by name first (``research_subtopic``, ``web_search``, ``read_url``) and then by schema, and
their arguments are shaped to each library's schema, so the same decision reaches both libraries.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field

from benchmarks.sim import prose
from benchmarks.sim.conversation import Conversation, ToolCall, ToolSpec
from benchmarks.sim.reply import IdFactory, Reply
from benchmarks.sim.schema_args import fill_arguments, find_tool

SECTION_REQUEST = re.compile(r"\bone section of a research report\b", re.IGNORECASE)
OPENING_REQUEST = re.compile(r"\bopening of a research report\b", re.IGNORECASE)
QUERIES_REQUEST = re.compile(r"\bWrite (\d+) (?:google )?search queries\b", re.IGNORECASE)
AGENT_REQUEST = re.compile(r'"agent_role_prompt"')
IN_TEXT_REQUEST = re.compile(r"\(\[in-text citation\]\(url\)\)", re.IGNORECASE)
ROLES = ("scope", "orchestrator", "researcher", "summarizer", "writer")
DONE_TEXT = "Research is complete: every aspect of the brief has a researched answer."


@dataclass(frozen=True)
class PolicyConfig:
    """The knobs a scenario sets."""

    subtopics: int = 3
    read_top_k: int = 2
    read_batch: bool = False
    invent_rate: float = 0.0
    researcher_invent_rate: float = 0.0
    seed: int = 7


class UnknownRoleError(ValueError):
    """The model name does not name a simulated role."""


def role_of(model: str) -> str:
    """
    The role a model name selects.

    :param model: For example ``"sim-researcher"``.
    :returns: The role.
    :raises UnknownRoleError: If the name is not ``sim-<role>``.
    """
    role = model.removeprefix("sim-")
    if not model.startswith("sim-") or role not in ROLES:
        raise UnknownRoleError(f"unknown model {model!r}; use one of {', '.join('sim-' + r for r in ROLES)}")
    return role


@dataclass
class Policies:
    """All roles, sharing one config and the sub-topics the orchestrator handed out in this run."""

    config: PolicyConfig
    ids: IdFactory = field(default_factory=IdFactory)
    _subtopics: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def decide(self, conversation: Conversation) -> tuple[str, Reply, str]:
        """
        Decide a turn.

        :param conversation: The request.
        :returns: ``(role, reply, thread)``; ``thread`` names the agent instance (the sub-topic for researchers),
            for the timeline.
        :raises UnknownRoleError: If the model name selects no role.
        """
        role = role_of(conversation.model)
        if role == "scope":
            return role, Reply(text=prose.brief(_last_user(conversation))), "scope"
        if role == "orchestrator":
            return role, self._orchestrate(conversation), "orchestrator"
        if role == "researcher":
            subtopic = self._subtopic_of(conversation)
            return role, self._research(conversation, subtopic), subtopic
        if role == "summarizer":
            text = conversation.all_text()
            return role, Reply(text=prose.page_summary(text)), self._subtopic_of(conversation, default="summarizer")
        return role, Reply(text=self._write(conversation)), "writer"

    def _write(self, conversation: Conversation) -> str:
        asked = "\n".join(m.text for m in conversation.messages if m.role == "system")
        text, options = conversation.all_text(), {"invent_rate": self.config.invent_rate, "seed": self.config.seed}
        if AGENT_REQUEST.search(asked):
            return prose.agent_choice(text)
        if SECTION_REQUEST.search(asked):
            return prose.section(text, **options)
        if OPENING_REQUEST.search(asked):
            return prose.opening(text, **options)
        return prose.report(text, **options, style="in-text" if IN_TEXT_REQUEST.search(text) else "source")

    def _call(self, tool: ToolSpec, values: dict[str, str | list[str]], default: str | list[str]) -> ToolCall:
        return ToolCall(self.ids.next("call"), tool.name, fill_arguments(tool, values, default))

    def _orchestrate(self, conversation: Conversation) -> Reply:
        tool = find_tool(conversation.tools, ("research_subtopic",), ("subtopic",))
        asked = QUERIES_REQUEST.search(conversation.all_text())
        if tool is None and asked is not None:
            queries = prose.sub_queries(conversation.all_text(), int(asked.group(1)))
            with self._lock:
                self._subtopics.extend(q for q in queries if q not in self._subtopics)
            return Reply(text=json.dumps(queries))
        if tool is None or any(c.name == tool.name for c in conversation.calls_made()):
            return Reply(text=DONE_TEXT)
        subtopics = prose.sub_queries(conversation.all_text(), self.config.subtopics)
        with self._lock:
            self._subtopics.extend(s for s in subtopics if s not in self._subtopics)
        return Reply(tool_calls=tuple(self._call(tool, {"subtopic": s}, s) for s in subtopics))

    def _subtopic_of(self, conversation: Conversation, default: str | None = None) -> str:
        text = conversation.all_text()
        with self._lock:
            known = sorted(self._subtopics, key=len, reverse=True)
        found = next((s for s in known if s in text), None)
        if found is not None:
            return found
        return default if default is not None else conversation.first_user_text().strip()

    def _research(self, conversation: Conversation, subtopic: str) -> Reply:
        search = find_tool(conversation.tools, ("web_search",), ("query",))
        read = find_tool(conversation.tools, ("read_url",), ("urls", "url"))
        calls = conversation.calls_made()
        results = conversation.tool_results()
        if search is None or read is None:
            return Reply(text=prose.researcher_summary(subtopic, []))
        searches = [c for c in calls if c.name == search.name]
        reads = [c for c in calls if c.name == read.name]
        if not searches:
            return Reply(tool_calls=(self._call(search, {"query": subtopic}, subtopic),))
        if not reads:
            found = [u for c in searches for u in prose.urls_in(results.get(c.call_id, ""))]
            top = list(dict.fromkeys(found))[: self.config.read_top_k]
            if not top:
                return Reply(text=prose.researcher_summary(subtopic, []))
            if self.config.read_batch:
                return Reply(tool_calls=(self._call(read, {"urls": top, "url": top, "question": subtopic}, subtopic),))
            return Reply(
                tool_calls=tuple(self._call(read, {"urls": [u], "url": u, "question": subtopic}, subtopic) for u in top)
            )
        evidence = [(url, results.get(c.call_id, "")) for c in reads for url in _urls_of(c)]
        return Reply(
            text=prose.researcher_summary(
                subtopic, evidence, invent_rate=self.config.researcher_invent_rate, seed=self.config.seed
            )
        )


def _urls_of(call: ToolCall) -> list[str]:
    value = call.arguments.get("urls", call.arguments.get("url", []))
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _last_user(conversation: Conversation) -> str:
    users = [m.text for m in conversation.messages if m.role == "user"]
    return users[-1] if users else ""
