"""
Execute: an agent's tool loop gathers the evidence, inside the workflow's run.

:class:`ExecuteStep` opens the run on its first visit (question, budget, events; ``RunStarted``) and, on every visit,
runs its Agent on the question, or on the focused task a replan set, with the run's view in ``hook_context`` and its
tools bound to that view: what the library's tools read goes into the run's evidence ledger, the agent's usage into
the ``execute`` phase, its events into the run's stream. The agent's final reply becomes one note (its findings).

The Agent is the seam: :func:`execute_agent` builds the default one (a tool loop with the library's budget hook, loop
guard and final-summary hook); any Haystack Agent whose hooks read the run from ``hook_context`` can take its place.
A failing agent never ends the workflow: the failure is a warning and the workflow goes on with the findings so far.
"""

from __future__ import annotations

import uuid
from typing import Any

from haystack import component
from haystack.components.agents import Agent
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage
from haystack.tools import Tool, Toolset
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks
from haystack_deep_research._clock import today
from haystack_deep_research.errors import ConfigurationError, InvalidQuestionError
from haystack_deep_research.events import PhaseEnded, PhaseStarted, RunStarted
from haystack_deep_research.prompts import EXECUTE_SYSTEM, EXECUTE_TASK, NOTE, PARTIAL_REASONS, render_text, render_user
from haystack_deep_research.research import DEFAULT_LOOP_THRESHOLD, FinalSummaryHook, LoopGuardHook
from haystack_deep_research.run import (
    BudgetHook,
    Call,
    Phase,
    ResearchRun,
    RunBudget,
    RunView,
    UsesModels,
    check_question,
    drive,
    drive_async,
    event_bus,
)
from haystack_deep_research.state import EXIT_REASON, PHASE_EXECUTE, PHASE_RUN, RUN_KEY, researcher_state_schema
from haystack_deep_research.tools import RunToolset, bind_tools
from haystack_deep_research.workflow.workflow_run import WorkflowRun

__all__ = ["ExecuteStep", "execute_agent"]


def execute_agent(
    *,
    chat_generator: Any,
    tools: list[Tool | Toolset],
    max_steps: int = 20,
    loop_threshold: int = DEFAULT_LOOP_THRESHOLD,
    routing: str = "",
) -> Agent:
    """
    The default Agent of the Execute step: a tool loop over ``tools`` that ends with a summary of its findings.

    :param chat_generator: The model; it must support tools.
    :param tools: The tools (Haystack Tools and Toolsets); the library's own tools get fresh copies per run.
    :param max_steps: Steps of the loop, 1 to 200; at the limit the agent still summarizes what it gathered.
    :param loop_threshold: Identical tool calls in a row that make a loop (see ``LoopGuardHook``).
    :param routing: A datastore routing block for the system prompt (see ``sources.routing_prompt``), or ``""``.
    :returns: The Agent.
    :raises ConfigurationError: If a parameter is invalid.
    """
    _checks.chat_generator("chat_generator", chat_generator, needs_tools=True)
    _checks.int_in_range("max_steps", max_steps, 1, 200)
    if not isinstance(tools, list) or not all(isinstance(tool, Tool | Toolset) for tool in tools):
        raise ConfigurationError("tools must be a list of Haystack Tools or Toolsets, for example [WebSearchTool()].")
    plain = [tool for tool in tools if isinstance(tool, Tool)]
    toolsets = [tool for tool in tools if isinstance(tool, Toolset)]
    return Agent(
        chat_generator=chat_generator,
        tools=[RunToolset(tools=plain), *toolsets] if plain else toolsets,
        system_prompt="\n\n".join(filter(None, [render_text(EXECUTE_SYSTEM, max_steps=max_steps), routing])),
        state_schema=researcher_state_schema(),
        max_agent_steps=max_steps,
        hooks={
            "before_llm": [BudgetHook()],
            "before_tool": [LoopGuardHook(threshold=loop_threshold)],
            "after_run": [FinalSummaryHook(chat_generator=chat_generator)],
        },
    )


def _open(question: Any, hook_context: Any, budget: RunBudget) -> WorkflowRun:
    if not isinstance(question, str) or not question.strip():
        raise InvalidQuestionError(
            f"question must be a non-empty string, for example pipeline.run({{'question': '...'}}); got {question!r}."
        )
    if hook_context is not None and not isinstance(hook_context, dict):
        raise ConfigurationError(f"hook_context must be a dict; got {type(hook_context).__name__}.")
    run = ResearchRun(
        question=check_question(question.strip()), budget=budget, events=event_bus(uuid.uuid4().hex, hook_context or {})
    )
    run.events.emit(RunStarted(phase=PHASE_RUN, question=run.question))
    return WorkflowRun(run=run)


@component
class ExecuteStep(UsesModels):
    """
    The workflow's Execute step (see the module docstring).

    :param agent: The Agent that gathers the evidence (default: :func:`execute_agent`).
    :param token_budget: Total tokens one workflow run may spend across all steps, or ``None``.
    :param time_budget: Seconds of wall-clock time one workflow run may take, or ``None``.
    :raises ConfigurationError: If the agent is not a Haystack Agent or a budget is out of range.
    """

    def __init__(self, *, agent: Agent, token_budget: int | None = None, time_budget: float | None = None) -> None:
        if not isinstance(agent, Agent):
            raise ConfigurationError(f"agent must be a Haystack Agent; got {type(agent).__name__}.")
        budget = RunBudget(token_budget=token_budget, time_budget=time_budget)
        self.agent = agent
        self.token_budget = budget.token_budget
        self.time_budget = budget.time_budget

    def _used_models(self) -> list[Any]:
        return [self.agent]

    @component.output_types(workflow=WorkflowRun)
    def run(
        self, question: str, workflow: WorkflowRun | None = None, hook_context: dict[str, Any] | None = None
    ) -> dict[str, WorkflowRun]:
        """
        Gather evidence: on the first visit for ``question``, after a replan for the focused task it set.

        :param question: The research question.
        :param workflow: The run, when a replan sends it back; ``None`` on the first visit.
        :param hook_context: Run-time inputs: ``EVENTS_KEY`` (``on_event(event)``) and ``PROGRESS_KEY``
            (``progress(phase, message)``) receive the run's events.
        :returns: ``workflow``: the run, with one more note.
        :raises InvalidQuestionError: If the question is empty.
        """
        return {"workflow": drive(self.phase(question, workflow, hook_context))}

    @component.output_types(workflow=WorkflowRun)
    async def run_async(
        self, question: str, workflow: WorkflowRun | None = None, hook_context: dict[str, Any] | None = None
    ) -> dict[str, WorkflowRun]:
        """
        Async variant of :meth:`run`.

        :param question: The research question.
        :param workflow: The run, when a replan sends it back.
        :param hook_context: Run-time inputs (see :meth:`run`).
        :returns: ``workflow``.
        """
        return {"workflow": await drive_async(self.phase(question, workflow, hook_context))}

    def phase(self, question: str, workflow: WorkflowRun | None, hook_context: Any) -> Phase[WorkflowRun]:
        """
        :param question: The research question.
        :param workflow: The run, or ``None`` on the first visit.
        :param hook_context: Run-time inputs.
        :returns: The phase; it returns the run with the round's note added.
        """
        if workflow is None:
            budget = RunBudget(token_budget=self.token_budget, time_budget=self.time_budget)
            workflow = _open(question, hook_context, budget)
        run = workflow.run
        date = today()
        task = workflow.task or render_user(EXECUTE_TASK, today=date, question=run.question)
        title = workflow.task_title or run.question
        view = RunView(run, researcher="" if workflow.task is None else title, phase=PHASE_EXECUTE)
        tools = bind_tools(self.agent.tools, view)
        context = {**(hook_context or {}), RUN_KEY: view}  # the caller's request-scoped inputs reach the hooks too
        inputs: dict[str, Any] = {"messages": [task], "hook_context": context, "tools": tools}
        view.emit(PhaseStarted(phase=PHASE_EXECUTE, detail=f"gathering evidence: {title}"))
        [ran] = yield [Call(lambda: self.agent.run(**inputs), lambda: self.agent.run_async(**inputs))]
        if ran.error is not None:
            view.warn(PHASE_EXECUTE, f"gathering evidence failed ({type(ran.error).__name__}: {ran.error})")
        else:
            run.add_notes([_note(title, ran.value)], position=run.position(title))
        view.emit(PhaseEnded(phase=PHASE_EXECUTE, detail=f"{len(run.ledger.read_urls())} source(s) read so far"))
        return workflow.but(task=None, task_title="")

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized step, with its agent."""
        return default_to_dict(
            self,
            agent=component_to_dict(obj=self.agent, name="agent"),
            token_budget=self.token_budget,
            time_budget=self.time_budget,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExecuteStep:
        """
        :param data: What ``to_dict`` returned.
        :returns: The step.
        """
        deserialize_component_inplace(data["init_parameters"], key="agent")
        return default_from_dict(cls, data)


def _note(title: str, result: dict[str, Any]) -> str:
    last = result.get("last_message")
    findings = (last.text if isinstance(last, ChatMessage) else None) or "The agent returned no findings."
    reason = PARTIAL_REASONS.get(str(result.get(EXIT_REASON)))
    return render_text(NOTE, subtopic=title, summary=findings.strip(), partial=reason is not None, reason=reason)
