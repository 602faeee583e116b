"""
Every name a run is keyed by, defined once: State keys, the library's own ``hook_context`` keys, phase names and exit
reasons. Per-run data lives in a :class:`~haystack_deep_research.run.ResearchRun` carried in ``hook_context``, never
on the agent object (docs/how-it-works.md).
"""

from __future__ import annotations

from typing import Any

from haystack.components.agents.state.state_utils import merge_lists, replace_values

# Orchestrator state keys that are also outputs of a run.
BRIEF = "brief"
NOTES = "notes"
REPORT = "report"
SOURCES = "sources"
WARNINGS = "warnings"
USAGE_BY_PHASE = "usage_by_phase"
COST = "cost"
CITATIONS = "citations"
GROUNDING = "grounding"
GROUNDING_SCORE = "grounding_score"
GROUNDING_UNJUDGED = "grounding_unjudged"
"""The claims no judge decided (its score is over the others): their sentences as written, in order."""
CONTRADICTIONS = "contradictions"
"""Two cited sources giving different figures for the same quantity (see ``report.contradictions``), as found."""
REGENERATION_COUNT = "regeneration_count"
REPLAN_COUNT = "replan_count"
STRUCTURED = "structured"
CLARIFICATION = "clarification"
"""The clarifying question a ``clarify=True`` run asks instead of researching (``""`` when it researched)."""

# Deep agent state keys that are also outputs of its runs.
PLAN = "plan"
"""The deep agent's current plan, written and rewritten by reflexion."""
TODOS = "todos"
"""The deep agent's todo list at the end of the run (``content`` and ``status`` of each item)."""
SUBMISSION = "submission"
"""The arguments of the deep agent's accepted call of its submit tool, or ``None``."""
GROUNDING_ROUNDS = "grounding_rounds"
"""How many times per-turn grounding sent the deep agent's answer back for more research."""

# Outputs of the research workflow that the deep research agent does not have.
CAUSAL_CHAIN = "causal_chain"

# Outputs of the iterative research agent that the other shapes do not have.
TOPICS = "topics"
"""The topics the iterative agent searched, in the order it searched them (the seed's ``topics``)."""
CHANGES = "changes"
"""What an update of a finished iterative run changed: kept, re-checked, changed and new topics and sources."""
ROUNDS = "rounds"
"""How many search rounds the iterative agent ran (at most its ``depth``)."""

# Haystack's own keys that the library reads or writes.
MESSAGES = "messages"
HOOK_CONTEXT = "hook_context"
EXIT_REASON = "exit_reason"
TOKEN_USAGE = "token_usage"  # noqa: S105 - a state key, not a secret
TOOLS = "tools"
"""Haystack's key for the tools of the current run; grounding finds the ``research_subtopic`` tool there."""
CONTINUE_RUN = "continue_run"
"""Haystack's control key: an ``on_exit`` hook sets it to keep the Agent running instead of stopping."""
STEP_COUNT = "step_count"
STOP_RUN = "stop_run"
"""Haystack's control key: a hook sets it to stop the Agent before its next model call; it becomes ``exit_reason``."""

# Sub-researcher state keys (per researcher call, never shared).
LOOP_STREAK = "loop_streak"
"""The loop guard's record of the last tool call signature and how many times in a row it was made."""

# Keys inside ``hook_context``.
RUN_KEY = "haystack_deep_research.run"
"""Where the run's ``before_run`` hook puts its :class:`~haystack_deep_research.run.ResearchRun` (a sub-researcher's
``hook_context`` holds its view of the parent run here)."""
RUN_GUARD_KEY = "haystack_deep_research.run_guard"
"""Where a ``ResearchAgent`` keeps the :class:`~haystack_deep_research.run._lifecycle.RunGuard` closing its run."""
INPUTS_KEY = "haystack_deep_research.inputs"
"""Where a ``ResearchAgent`` puts the :class:`~haystack_deep_research.RunInputs` its ``run`` was given, for its hooks
(callers pass them as ``run(..., inputs=RunInputs(...))``)."""

# Phases, as named in events, warnings and ``usage_by_phase`` (``run`` names the events that open and close a run).
PHASE_RUN = "run"
PHASE_SCOPE = "scope"
PHASE_ORCHESTRATOR = "orchestrator"
PHASE_RESEARCH = "research"
PHASE_SUMMARIZE = "summarize"
PHASE_WRITE = "write"
PHASE_GROUND = "ground"
PHASE_STRUCTURE = "structure"
PHASE_AGENT = "agent"
"""The deep agent's own loop."""
PHASE_SUBAGENT = "subagent"
PHASE_REFLECT = "reflect"
PHASE_CONDENSE = "condense"
"""Condensing the older turns of a long conversation into a summary."""
PHASE_FILES = "files"
PHASE_TODOS = "todos"

# Phases of the research workflow (besides ``ground`` and ``structure``) and of a multi-item scan.
PHASE_EXECUTE = "execute"
PHASE_CAUSAL = "causal"
PHASE_SUMMARY = "summary"
PHASE_REPLAN = "replan"
PHASE_SCAN = "scan"

# Phases of the iterative research agent (besides ``summarize``, ``write`` and ``ground``).
PHASE_ANALYZE = "analyze"
"""The analysis model deciding the next search topic (``nextSearchTopic`` / ``shouldContinue``)."""
PHASE_SEARCH = "search"
"""One round of searches (and reading their top results)."""

# ``exit_reason`` values the library sets (besides Haystack's own "text" and "max_agent_steps").
EXIT_WRITER_FAILED = "writer_failed"
EXIT_ORCHESTRATOR_FAILED = "orchestrator_failed"
EXIT_LOOP_DETECTED = "loop_detected"
EXIT_TOKEN_BUDGET = "token_budget"  # noqa: S105 - an exit reason, not a secret
EXIT_TIME_BUDGET = "time_budget"
EXIT_SUMMARY_FAILED = "summary_failed"
"""A sub-researcher's exit reason when even its final summary could not be written."""
EXIT_NO_EVIDENCE = "no_evidence"
"""The run read no page and no document (search down, or nothing found): the report says so in its first lines."""
EXIT_MAX_ITERATIONS = "max_iterations"
EXIT_CONFIDENCE_MET = "confidence_met"
EXIT_SUBTOPICS_DONE = "subtopics_done"
"""The orchestrator delegated every sub-topic the run allows and its researchers returned: with nothing left that it
may delegate, it is not asked for another turn (which could only say that research is complete)."""
EXIT_TEXT = "text"
"""Haystack's own reason for a reply without tool calls; the deep agent's exit condition for a plain answer."""
HAYSTACK_MAX_STEPS = "max_agent_steps"
"""Haystack's own reason for stopping at ``max_agent_steps``."""

# ``exit_reason`` values of the research workflow.
EXIT_GROUNDED = "grounded"
EXIT_GROUNDING_EXHAUSTED = "grounding_exhausted"
EXIT_NOT_JUDGED = "not_judged"
"""The research workflow's summary could not be judged: most of its cited claims (or all: it cites nothing the run
read) had no verdict, so it is not called grounded."""
EXIT_STRUCTURED_OUTPUT_FAILED = "structured_output_failed"
EXIT_COST_BUDGET = "cost_budget"
EXIT_INTERRUPTED = "interrupted"
"""The command line's exit reason for a run the user interrupted (Ctrl-C): its report holds the notes gathered."""
EXIT_FAILED = "failed"
"""The command line's exit reason for a run that raised (a provider or network failure): its report holds the notes
gathered before."""

FAILED_EXIT_REASONS = frozenset(
    {EXIT_WRITER_FAILED, EXIT_ORCHESTRATOR_FAILED, EXIT_STRUCTURED_OUTPUT_FAILED, EXIT_FAILED}
)
"""The exit reasons of a run that returned without the research it was asked for: its report (or structured output)
is a fallback assembled after a failure. A scan records such an item as failed and tries it again on the next run."""

# ``exit_reason`` values of the iterative research agent.
EXIT_DEPTH_REACHED = "depth_reached"
"""Every one of the ``depth`` rounds ran."""
EXIT_ANALYSIS_STOPPED = "analysis_stopped"
"""The analysis model answered ``shouldContinue: false``."""
EXIT_NO_NEW_TOPICS = "no_new_topics"
"""The analysis model proposed only topics already searched (or near duplicates), even when asked again."""
EXIT_CLARIFICATION_NEEDED = "clarification_needed"
"""With ``clarify=True``: the scope model asked one clarifying question (the ``clarification`` output) instead of
writing a brief; nothing else ran. Run again with the question and the user's answer in the conversation."""
EXIT_DECISION_FAILED = "decision_failed"
"""The analysis model's reply was not a valid decision, even after one retry: the search stopped, with a warning."""


_SHARED_TYPES: dict[str, Any] = {
    BRIEF: str,
    NOTES: list[str],
    REPORT: str,
    SOURCES: list[dict[str, Any]],
    WARNINGS: list[str],
    USAGE_BY_PHASE: dict[str, Any],
    COST: float | None,
    CITATIONS: dict[str, Any],
    GROUNDING: list[dict[str, Any]],
    GROUNDING_SCORE: float | None,
    GROUNDING_UNJUDGED: list[str],
    CONTRADICTIONS: list[dict[str, Any]],
    STRUCTURED: Any,
}

SHARED_OUTPUTS = (*_SHARED_TYPES, EXIT_REASON, TOKEN_USAGE)
"""The outputs every shape returns under these names, also after failures (a shape may add its own, never rename
one of these): the run contract's outputs."""


def _schema(types: dict[str, Any]) -> dict[str, Any]:
    """A Haystack state schema: notes and warnings are appended to, every other key is replaced."""
    merged = (NOTES, WARNINGS)
    return {
        key: {"type": kind, "handler": merge_lists if key in merged else replace_values} for key, kind in types.items()
    }


def orchestrator_state_schema() -> dict[str, Any]:
    """:returns: The orchestrator agent's Haystack state schema: every output the library adds to the Agent's own."""
    return _schema({**_SHARED_TYPES, REGENERATION_COUNT: int, REPLAN_COUNT: int, CLARIFICATION: str})


def deep_agent_state_schema() -> dict[str, Any]:
    """:returns: A deep agent's Haystack state schema: the outputs it adds to the Agent's own."""
    extra = {GROUNDING_ROUNDS: int, SUBMISSION: dict[str, Any] | None, PLAN: str, TODOS: list[dict[str, Any]]}
    return _schema({**_SHARED_TYPES, **extra, LOOP_STREAK: dict[str, Any]})


def researcher_state_schema() -> dict[str, Any]:
    """:returns: A sub-researcher's state schema: the loop guard's streak (it reports through its final message)."""
    return _schema({LOOP_STREAK: dict[str, Any]})
