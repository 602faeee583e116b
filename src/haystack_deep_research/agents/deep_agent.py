"""``create_deep_agent``: a research-shaped plain Haystack Agent. Wiring only; every behaviour lives in a layer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from haystack.components.agents import Agent
from haystack.components.generators.chat.types import ChatGenerator
from haystack.hooks.human_in_the_loop.types import ConfirmationStrategy
from haystack.tools import Tool, Toolset
from pydantic import BaseModel

from haystack_deep_research import _checks
from haystack_deep_research._prompts import DEEP_AGENT_RULES, render_text
from haystack_deep_research.agents.models import run_settings_of
from haystack_deep_research.agents.research_agent import ResearchAgent
from haystack_deep_research.deep_agent.deep_hooks import DeepCloseHook, DeepRunHook
from haystack_deep_research.deep_agent.deep_loop import AnswerHook, StepReviewHook, StepStartHook, ToolStepHook
from haystack_deep_research.deep_agent.deep_settings import Condenser, Reflexion
from haystack_deep_research.deep_agent.turn_grounding import TurnGrounding
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.events import Subscriber
from haystack_deep_research.research.approval import confirmation_hooks
from haystack_deep_research.research.exits import (
    ConfidenceMet,
    ExitCondition,
    MaxIterations,
    TextReply,
    TokenLimit,
    ToolUsed,
)
from haystack_deep_research.research.final_summary import PreservingChatGenerator
from haystack_deep_research.research.loop_guard import DEFAULT_LOOP_THRESHOLD
from haystack_deep_research.research.subtopic import researcher_agent
from haystack_deep_research.run._budget import model_name
from haystack_deep_research.run._phases import OutputCappedChatGenerator, with_hooks
from haystack_deep_research.settings import Budgets, Grounding, Sources
from haystack_deep_research.settings.grouped import WEB_FIELDS, refuse_fields
from haystack_deep_research.sources import datastore_tools, routing_prompt
from haystack_deep_research.sources.mcp_servers import mcp_toolsets
from haystack_deep_research.state import (
    PHASE_AGENT,
    PHASE_CONDENSE,
    PHASE_GROUND,
    PHASE_REFLECT,
    PHASE_STRUCTURE,
    PHASE_SUBAGENT,
    deep_agent_state_schema,
)
from haystack_deep_research.tools import RunToolset
from haystack_deep_research.tools.filesystem import ScratchBackend, create_filesystem_tools
from haystack_deep_research.tools.task import SubAgentDef, TaskTool
from haystack_deep_research.tools.todos import TodoState, create_todo_tools

__all__ = ["create_deep_agent", "default_termination"]


def default_termination(
    *, submit_tool: str | None, min_confidence: float, max_iterations: int, total_token_budget: int | None
) -> ExitCondition:
    """
    The deep agent's default exit conditions: ``(ToolUsed(submit) & ConfidenceMet(min)) | TokenLimit(budget) |
    MaxIterations(max)``, without the token limit when there is no budget, and with ``TextReply()`` (a reply without
    tool calls is the answer) in place of the submission without a submit tool.
    """
    base = (
        ToolUsed(submit_tool, require_success=True) & ConfidenceMet(min_confidence)
        if submit_tool is not None
        else TextReply()
    )
    if total_token_budget is not None:
        return base | TokenLimit(total_token_budget) | MaxIterations(max_iterations)
    return base | MaxIterations(max_iterations)


def _split(tools: Sequence[Tool | Toolset], name: str) -> tuple[list[Tool], list[Toolset]]:
    if isinstance(tools, Tool | Toolset) or not isinstance(tools, list | tuple):
        raise ConfigurationError(f"{name} must be a list of Haystack Tools and Toolsets; got {type(tools).__name__}.")
    plain, sets = [], []
    for tool in tools:
        if isinstance(tool, Toolset):
            sets.append(tool)
        elif isinstance(tool, Tool):
            plain.append(tool)
        else:
            raise ConfigurationError(f"{name} must hold Haystack Tools and Toolsets; got {type(tool).__name__}.")
    return plain, sets


def _tool_names(plain: list[Tool], sets: list[Toolset]) -> set[str]:
    return {tool.name for tool in plain} | {tool.name for toolset in sets for tool in getattr(toolset, "tools", [])}


def _subagent(definition: SubAgentDef, model: Any, loop_threshold: int) -> tuple[str, Agent]:
    if not isinstance(definition, SubAgentDef):
        raise ConfigurationError(f"subagents must hold SubAgentDef objects; got {type(definition).__name__}.")
    plain, sets = _split(list(definition.tools), f"subagent {definition.name!r} tools")
    generator = definition.chat_generator or model
    agent = researcher_agent(
        chat_generator=generator,
        tools=[*plain, *sets],
        system_prompt=definition.system_prompt,
        max_steps=definition.max_iterations,
        loop_threshold=loop_threshold,
    )
    return definition.description, agent


def _phase_models(model: ChatGenerator, subagents: Sequence[SubAgentDef] | None) -> dict[str, str]:
    """The model each phase of a deep agent's run calls (what its usage costs)."""
    own = model_name(model)
    phases = dict.fromkeys((PHASE_AGENT, PHASE_REFLECT, PHASE_CONDENSE, PHASE_GROUND, PHASE_STRUCTURE), own)
    children = {model_name(d.chat_generator) if d.chat_generator is not None else own for d in subagents or []}
    if len(children) == 1:  # several subagent models share one phase: its cost is then unknown
        phases[PHASE_SUBAGENT] = children.pop()
    return phases


def create_deep_agent(
    *,
    chat_generator: ChatGenerator,
    tools: Sequence[Tool | Toolset],
    system_prompt: str,
    output_schema: type[BaseModel] | None = None,
    submit_tool: str | None = None,
    min_confidence: float = 0.0,
    max_iterations: int = 20,
    max_output_tokens: int | None = None,
    termination: ExitCondition | None = None,
    budgets: Budgets | None = None,
    grounding: Grounding | bool = True,
    sources: Sources | None = None,
    reflexion: bool = True,
    reflexion_llm: ChatGenerator | None = None,
    loop_threshold: int = DEFAULT_LOOP_THRESHOLD,
    enable_filesystem: bool = False,
    backend: ScratchBackend | None = None,
    enable_todos: bool = False,
    todo_state: TodoState | None = None,
    subagents: Sequence[SubAgentDef] | None = None,
    memory_files: Sequence[str] | None = None,
    summarize_after_messages: int | None = None,
    summarize_keep_recent: int = 10,
    condense_llm: ChatGenerator | None = None,
    on_event: Subscriber | None = None,
    confirm_tools: ConfirmationStrategy | Mapping[str | tuple[str, ...], ConfirmationStrategy] | None = None,
    hooks: dict[str, list[Any]] | None = None,
) -> Agent:
    """
    Create a deep agent: a plain Haystack ``Agent`` that runs its tool loop until an exit condition fires.

    Run it with ``run`` / ``run_async`` (``messages=[ChatMessage.from_user("...")]``), put it in a Pipeline, serialize
    it. See docs/deep-agent.md for each layer.

    :param chat_generator: The agent's model; it must support tools. Its reflexion, summaries, judge and structured
        output use it too unless given their own.
    :param tools: The agent's tools (Haystack Tools and Toolsets).
    :param system_prompt: The agent's instructions.
    :param output_schema: A pydantic model: the run's ``structured`` output is a validated instance of it.
    :param submit_tool: The name of the tool that submits the result (one of ``tools``), or ``None``: then a reply
        without tool calls is the answer.
    :param min_confidence: The ``confidence`` a submission must carry to end the loop, 0 to 1.
    :param max_iterations: The most steps (model calls) of the loop, 1 to 1,000.
    :param max_output_tokens: The cap on each completion of the agent's model (OpenAI generators), or ``None``.
    :param termination: Exit conditions replacing the default (see :func:`default_termination`).
    :param budgets: What one run may spend in all, agent, subagents and layers
        (:class:`~haystack_deep_research.Budgets`); a spent budget ends the loop whatever the termination, and a run's
        own ``RunInputs(budgets=...)`` replaces these limits for that run.
    :param grounding: Judge each answer against the evidence its tool calls returned; send back or drop claims it does
        not support: a :class:`~haystack_deep_research.Grounding` (``max_regenerations`` is refused), ``True``
        (default) for its defaults, or ``False``.
    :param sources: Named document stores and MCP servers (:class:`~haystack_deep_research.Sources`); its web settings
        are refused, as the agent searches the web with the tools you give.
    :param reflexion: Evaluate every step and rewrite the plan when it was wrong.
    :param reflexion_llm: The reflecting model; default the agent's.
    :param loop_threshold: Identical tool calls in a row (same tool, same arguments) that make a loop, 2 to 20.
    :param enable_filesystem: Add ``write_file``, ``read_file``, ``ls``, ``edit_file``, ``glob`` and ``grep``.
    :param backend: Where those files live: default a fresh in-memory space per run; ``DiskBackend(root=...)``.
    :param enable_todos: Add ``write_todos`` and ``read_todos``.
    :param todo_state: A ``TodoState`` every run writes into, to watch live and read after the run.
    :param subagents: ``SubAgentDef``\\ s the agent hands tasks to through a ``task`` tool.
    :param memory_files: AGENTS.md-style files prepended to the system prompt; missing paths are skipped.
    :param summarize_after_messages: Condense older turns once the conversation holds more messages, or ``None``.
    :param summarize_keep_recent: The latest messages always kept verbatim.
    :param condense_llm: The model that condenses older turns; default the agent's.
    :param on_event: A callable receiving every event of every run (see haystack_deep_research.events).
    :param confirm_tools: Ask a person before tool calls run, with Haystack's human-in-the-loop hooks: a confirmation
        strategy for every tool, or a mapping of tool name (a tuple of names, or ``"*"`` for the rest) to strategy, as
        Haystack's ``ConfirmationHook`` takes it. ``None`` (default) asks nobody.
    :param hooks: Your own Haystack hooks, by hook point (``{"after_run": [my_hook]}``), run after the library's.
    :returns: The ``Agent``. Its run returns ``report``, ``submission``, ``structured``, ``exit_reason``, ``plan``,
        ``todos``, ``grounding``, ``grounding_score``, ``grounding_rounds``, ``sources``, ``warnings``,
        ``usage_by_phase`` and the Agent's own outputs (see docs/deep-agent.md).
    :raises TypeError: For an unknown keyword (the cap on each completion is ``max_output_tokens``).
    :raises ConfigurationError: If a parameter is outside its allowed values; the message names it and the fix.
    """
    budgets, grounded, chosen = Budgets.of(budgets), Grounding.of(grounding), Sources.of(sources)
    refuse_fields(chosen, WEB_FIELDS, factory="create_deep_agent", why="it searches with the tools you give")
    refuse_fields(
        grounded, ("max_regenerations",), factory="create_deep_agent", why="it sends answers back for research"
    )
    datastores = chosen.datastores
    model = _checks.chat_generator("chat_generator", chat_generator, needs_tools=True)
    if not isinstance(system_prompt, str) or not system_prompt.strip():
        raise ConfigurationError("system_prompt must be a non-empty string: the agent's instructions.")
    _checks.output_schema(output_schema)
    _checks.int_in_range("max_iterations", max_iterations, 1, 1_000)
    _checks.number_in_range("min_confidence", min_confidence, 0.0, 1.0, include_low=True)
    if termination is not None and not isinstance(termination, ExitCondition):
        raise ConfigurationError(f"termination must be an exit condition; got {type(termination).__name__}.")
    plain, sets = _split(list(tools) if isinstance(tools, list | tuple) else tools, "tools")
    if submit_tool is not None and submit_tool not in _tool_names(plain, sets):
        raise ConfigurationError(f"submit_tool {submit_tool!r} is not among the tools; pass that tool in tools=.")
    if backend is not None and not enable_filesystem:
        raise ConfigurationError("backend= is the filesystem's backend; pass enable_filesystem=True with it.")
    if todo_state is not None and (not enable_todos or not isinstance(todo_state, TodoState)):
        raise ConfigurationError("todo_state= must be a TodoState, with enable_todos=True.")
    rules = render_text(
        DEEP_AGENT_RULES, system_prompt=system_prompt.strip(), submit=submit_tool, min_confidence=min_confidence
    )
    library: list[Tool] = []
    if enable_filesystem:
        library += create_filesystem_tools(backend)
    if enable_todos:
        library += create_todo_tools()
    if subagents:
        library.append(TaskTool(subagents={d.name: _subagent(d, model, loop_threshold) for d in subagents}))
    if datastores is not None:
        library += datastore_tools(datastores)
        routing = routing_prompt(datastores)
        rules = f"{routing}\n\n{rules}" if routing else rules
    confirmations = confirmation_hooks(confirm_tools, _tool_names([*library, *plain], sets))
    termination = termination or default_termination(
        submit_tool=submit_tool,
        min_confidence=min_confidence,
        max_iterations=max_iterations,
        total_token_budget=None,  # the run's own token budget (the factory's, or a run's RunInputs) ends it
    )
    settings: dict[str, Any] = {
        "termination": termination,
        "chat_generator": model,
        "submit_tool": submit_tool,
        "min_confidence": min_confidence,
        "output_schema": output_schema,
        "loop_threshold": _checks.int_in_range("loop_threshold", loop_threshold, 2, 20),
        "grounding": TurnGrounding(
            judge_llm=grounded.judge_llm, threshold=grounded.threshold, max_rounds=grounded.max_replans
        )
        if grounded is not None
        else None,
        "reflexion": Reflexion(chat_generator=reflexion_llm) if reflexion else None,
        "condenser": Condenser(
            after_messages=summarize_after_messages, keep_recent=summarize_keep_recent, chat_generator=condense_llm
        )
        if summarize_after_messages is not None
        else None,
    }

    def hook(kind: type[Any]) -> Any:
        return kind(**{name: settings[name] for name in kind.settings})

    opened = run_settings_of(budgets, _phase_models(model, subagents))
    agent_model = (
        OutputCappedChatGenerator(chat_generator=model, max_output_tokens=max_output_tokens)
        if max_output_tokens is not None
        else model
    )
    return ResearchAgent(
        chat_generator=PreservingChatGenerator(chat_generator=agent_model, role=None),
        tools=[
            RunToolset(tools=[*library, *plain]),
            *sets,
            *mcp_toolsets(list(chosen.mcp_servers or []), chosen.url_policy),
        ],
        system_prompt=rules,
        state_schema=deep_agent_state_schema(),
        max_agent_steps=max_iterations,
        tool_streaming_callback_passthrough=True,
        hooks=with_hooks(
            {
                "before_run": [
                    DeepRunHook(
                        on_event=on_event,
                        memory_files=memory_files,  # type: ignore[arg-type]  # checked by the hook
                        todo_state=todo_state,
                        **opened,
                    )
                ],
                "before_llm": [hook(StepStartHook)],
                "before_tool": [*confirmations, hook(ToolStepHook)],
                "after_tool": [hook(StepReviewHook)],
                "on_exit": [hook(AnswerHook)],
                "after_run": [
                    DeepCloseHook(
                        chat_generator=model,
                        output_schema=output_schema,
                        judge_llm=None if grounded is None else grounded.judge_llm or model,
                    )
                ],
            },
            hooks,
            factory="create_deep_agent",
        ),
    )
