"""
Execute: an agent's tool loop gathers the evidence, inside the workflow's run (see docs/workflow.md). The agent's
final reply becomes one note, journaled; a failing agent is a warning, never the end of the workflow. Any Haystack
Agent whose hooks read the run from ``hook_context`` can take the place of :func:`execute_agent`'s.
"""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.components.agents import Agent
from haystack.tools import Tool, Toolset

from haystack_deep_research import _checks
from haystack_deep_research._prompts import EXECUTE_SYSTEM, EXECUTE_TASK, render_text, render_user
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research._tooling.base import bind_tools
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.events import Notice, PhaseEnded, PhaseStarted
from haystack_deep_research.evidence.clock import today
from haystack_deep_research.research.loop_guard import DEFAULT_LOOP_THRESHOLD
from haystack_deep_research.research.subtopic import agent_note, researcher_agent
from haystack_deep_research.run import RunView
from haystack_deep_research.run._journal import JournaledNote
from haystack_deep_research.run._lifecycle import current_run, journal_note, resumed_note
from haystack_deep_research.run._phases import (
    Call,
    Phase,
    UsesModels,
    drive,
    drive_async,
    for_async,
    for_sync,
    with_hooks,
)
from haystack_deep_research.state import PHASE_EXECUTE, RUN_KEY
from haystack_deep_research.workflow.workflow_run import WorkflowRun

__all__ = ["ExecuteStep", "execute_agent"]


def execute_agent(
    *,
    chat_generator: Any,
    tools: list[Tool | Toolset],
    max_steps: int = 20,
    loop_threshold: int = DEFAULT_LOOP_THRESHOLD,
    routing: str = "",
    hooks: dict[str, list[Any]] | None = None,
) -> Agent:
    """
    The default Agent of the Execute step: a tool loop over ``tools`` that ends with a summary of its findings.

    :param chat_generator: The model; it must support tools.
    :param tools: The tools (Haystack Tools and Toolsets); the library's own tools get fresh copies per run.
    :param max_steps: Steps of the loop, 1 to 200; at the limit the agent still summarizes what it gathered.
    :param loop_threshold: Identical tool calls in a row that make a loop (see ``LoopGuardHook``).
    :param routing: A datastore routing block for the system prompt (see ``sources.routing_prompt``), or ``""``.
    :param hooks: The caller's own Haystack hooks, run after the library's at each point (see ``with_hooks``).
    :returns: The Agent.
    :raises ConfigurationError: If a parameter is invalid.
    """
    _checks.chat_generator("chat_generator", chat_generator, needs_tools=True)
    _checks.int_in_range("max_steps", max_steps, 1, 200)
    if not isinstance(tools, list) or not all(isinstance(tool, Tool | Toolset) for tool in tools):
        raise ConfigurationError("tools must be a list of Haystack Tools or Toolsets, for example [WebSearchTool()].")
    agent = researcher_agent(
        chat_generator=chat_generator,
        tools=tools,
        system_prompt="\n\n".join(filter(None, [render_text(EXECUTE_SYSTEM, max_steps=max_steps), routing])),
        max_steps=max_steps,
        loop_threshold=loop_threshold,
    )
    agent.hooks = with_hooks(agent.hooks, hooks, factory="create_research_workflow")  # checked as Haystack checks
    return agent


@component
class ExecuteStep(UsesModels, InitSerialized):
    """
    The workflow's Execute step (see the module docstring).

    :param agent: The Agent that gathers the evidence (default: :func:`execute_agent`).
    :raises ConfigurationError: If the agent is not a Haystack Agent.
    """

    _model_attributes = ("agent",)

    def __init__(self, *, agent: Agent) -> None:
        if not isinstance(agent, Agent):
            raise ConfigurationError(f"agent must be a Haystack Agent; got {type(agent).__name__}.")
        self.agent = agent

    @component.output_types(workflow=WorkflowRun)
    def run(self, question: str, workflow: WorkflowRun | None = None) -> dict[str, WorkflowRun]:
        """
        Gather evidence: on the first visit for the question, after a replan for the focused task it set.

        :param question: The research question (the run's own; the workflow passes it).
        :param workflow: The run's value, when a replan sends it back; ``None`` on the first visit.
        :returns: ``workflow``: the run's value, with one more note.
        """
        return {"workflow": drive(self.phase(question, workflow))}

    @component.output_types(workflow=WorkflowRun)
    async def run_async(self, question: str, workflow: WorkflowRun | None = None) -> dict[str, WorkflowRun]:
        """As :meth:`run`, on the event loop."""
        return {"workflow": await drive_async(self.phase(question, workflow))}

    def phase(self, question: str, workflow: WorkflowRun | None) -> Phase[WorkflowRun]:
        opened = current_run()
        run = opened.run
        workflow = workflow or WorkflowRun()
        date = today()
        task = workflow.task or render_user(EXECUTE_TASK, today=date, question=run.question)
        title = workflow.task_title or run.question
        view = RunView(run, researcher="" if workflow.task is None else title, phase=PHASE_EXECUTE)
        if (journaled := resumed_note(view, title)) is not None:  # an earlier attempt of this run gathered it
            run.add_notes([journaled.note], position=run.position(title))
            view.emit(Notice(phase=PHASE_EXECUTE, text=f"resumed: the findings on '{title}' restored"))
            return workflow.but(task=None, task_title="")
        tools = bind_tools(self.agent.tools, view)
        context = {**opened.context, RUN_KEY: view}  # the caller's request-scoped inputs reach the hooks too
        inputs: dict[str, Any] = {"messages": [task], "hook_context": context, "tools": tools}
        streaming = run.streaming_callback
        sync_inputs = {**inputs, "streaming_callback": for_sync(streaming, "execute", title)} if streaming else inputs
        async_inputs = {**inputs, "streaming_callback": for_async(streaming, "execute", title)} if streaming else inputs
        view.emit(PhaseStarted(phase=PHASE_EXECUTE, detail=f"gathering evidence: {title}"))
        [ran] = yield [Call(lambda: self.agent.run(**sync_inputs), lambda: self.agent.run_async(**async_inputs))]
        if ran.error is not None:
            view.warn(PHASE_EXECUTE, f"gathering evidence failed ({type(ran.error).__name__}: {ran.error})")
        else:
            note = agent_note(title, ran.value, "The agent returned no findings.").note
            run.add_notes([note], position=run.position(title))
            yield from journal_note(view, title, JournaledNote(subtopic=title, note=note, summary=note, partial=False))
        view.emit(PhaseEnded(phase=PHASE_EXECUTE, detail=f"{len(run.ledger.read_urls())} source(s) read so far"))
        return workflow.but(task=None, task_title="")
