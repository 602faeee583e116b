"""
State keys, the orchestrator's state schema, and the per-run handle shared by one run's phases.

Every key a hook, tool or test reads is named here once. Per-run data (the evidence ledger, the delegation
count, token usage of the phases) lives in a :class:`ResearchRun` created by the scope hook at the start of
each run and carried in the run's ``hook_context``, never on the agent object: one agent may serve many runs
at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from haystack.components.agents.state.state_utils import merge_lists, replace_values

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.evidence.ledger import EvidenceLedger
from haystack_deep_research.read_cache import ReadCache

# Orchestrator state keys that are also outputs of a run.
BRIEF = "brief"
NOTES = "notes"
REPORT = "report"
SOURCES = "sources"
WARNINGS = "warnings"
USAGE_BY_PHASE = "usage_by_phase"
CITATIONS = "citations"
GROUNDING = "grounding"
GROUNDING_SCORE = "grounding_score"
REGENERATION_COUNT = "regeneration_count"
REPLAN_COUNT = "replan_count"
STRUCTURED = "structured"

# Haystack's own keys that the library reads or writes.
MESSAGES = "messages"
HOOK_CONTEXT = "hook_context"
EXIT_REASON = "exit_reason"
TOKEN_USAGE = "token_usage"  # noqa: S105 - a state key, not a secret
TOOLS = "tools"
"""Haystack's key for the tools of the current run; grounding finds the ``research_subtopic`` tool there."""
STOP_RUN = "stop_run"
"""Haystack's control key: a hook sets it to stop the Agent before its next model call; it becomes ``exit_reason``."""

# Sub-researcher state keys (per researcher call, never shared).
LOOP_STREAK = "loop_streak"
"""The loop guard's record of the last tool call signature and how many times in a row it was made."""
USAGE_RECORDED = "usage_recorded"
"""The part of a researcher's ``token_usage`` already added to the run's ``research`` phase."""

# Keys inside ``hook_context``.
RUN_KEY = "haystack_deep_research.run"
"""Where the scope hook puts the run's :class:`ResearchRun`."""
PROGRESS_KEY = "haystack_deep_research.progress"
"""A callable ``progress(phase: str, message: str)`` the caller may pass in ``hook_context`` to follow a run."""
RUN_DIR_KEY = "haystack_deep_research.run_dir"
"""A directory the caller may pass in ``hook_context`` to journal the run there and resume it after a crash."""
BRIEF_KEY = "haystack_deep_research.brief"
"""A research brief in ``hook_context``: the scope hook uses it instead of calling the scope model."""
BUDGET_KEY = "haystack_deep_research.budget"
"""Where the budget hook puts the run's live budget (shared with the sub-researchers)."""
JOURNAL_KEY = "haystack_deep_research.journal"
"""Where the journal hook puts the run's open journal when a run directory was given."""

# Phases, as named in progress events, warnings and ``usage_by_phase``.
PHASE_SCOPE = "scope"
PHASE_ORCHESTRATOR = "orchestrator"
PHASE_RESEARCH = "research"
PHASE_SUMMARIZE = "summarize"
PHASE_WRITE = "write"
PHASE_GROUND = "ground"
PHASE_STRUCTURE = "structure"

# ``exit_reason`` values the library sets (besides Haystack's own "text" and "max_agent_steps").
EXIT_WRITER_FAILED = "writer_failed"
EXIT_ORCHESTRATOR_FAILED = "orchestrator_failed"
EXIT_LOOP_DETECTED = "loop_detected"
EXIT_TOKEN_BUDGET = "token_budget"  # noqa: S105 - an exit reason, not a secret
EXIT_TIME_BUDGET = "time_budget"

ProgressCallback = Callable[[str, str], None]


def orchestrator_state_schema() -> dict[str, Any]:
    """
    Return the state schema of the orchestrator agent.

    :returns: A Haystack state schema declaring every output the library adds to the Agent's own.
    """
    return {
        BRIEF: {"type": str, "handler": replace_values},
        NOTES: {"type": list[str], "handler": merge_lists},
        REPORT: {"type": str, "handler": replace_values},
        SOURCES: {"type": list[dict[str, Any]], "handler": replace_values},
        WARNINGS: {"type": list[str], "handler": merge_lists},
        USAGE_BY_PHASE: {"type": dict[str, Any], "handler": replace_values},
        CITATIONS: {"type": dict[str, Any], "handler": replace_values},
        GROUNDING: {"type": list[dict[str, Any]], "handler": replace_values},
        GROUNDING_SCORE: {"type": float | None, "handler": replace_values},
        REGENERATION_COUNT: {"type": int, "handler": replace_values},
        REPLAN_COUNT: {"type": int, "handler": replace_values},
        STRUCTURED: {"type": Any, "handler": replace_values},
    }


def researcher_state_schema() -> dict[str, Any]:
    """
    Return the state schema of a sub-researcher agent.

    :returns: A Haystack state schema; a sub-researcher reports back through its final message only, and keeps
        only its own bookkeeping (the loop guard's streak, the token usage already counted) in State.
    """
    return {
        LOOP_STREAK: {"type": dict[str, Any], "handler": replace_values},
        USAGE_RECORDED: {"type": dict[str, Any], "handler": replace_values},
    }


def append_new(current: list[Any] | None, new: Any) -> list[Any]:
    """
    A State handler that appends the items not already in the list (a note restored from a run directory is kept
    once even when the orchestrator delegates its sub-topic again).

    :param current: The list so far, or ``None``.
    :param new: One item or a list of items.
    :returns: A new list.
    """
    result = list(current or [])
    for item in new if isinstance(new, list) else [new]:
        if item not in result:
            result.append(item)
    return result


def add_usage(total: Mapping[str, Any] | None, usage: Mapping[str, Any] | None) -> dict[str, Any]:
    """
    Sum two token-usage dicts key by key (nested dicts recursively, numbers added, anything else replaced).

    :param total: The usage so far, or ``None``.
    :param usage: The usage to add, or ``None``.
    :returns: A new dict holding the sum.
    """
    result: dict[str, Any] = dict(total or {})
    for key, value in (usage or {}).items():
        current = result.get(key)
        if isinstance(value, Mapping):
            result[key] = add_usage(current if isinstance(current, Mapping) else None, value)
        elif isinstance(value, int | float) and isinstance(current, int | float):
            result[key] = current + value
        else:
            result[key] = value
    return result


@dataclass(eq=False)
class ResearchRun:
    """
    The per-run handle shared by the scope hook, the sub-researchers, their tools and the write hook.

    It is thread-safe, and a deep copy returns the same handle: Haystack's State deep-copies the values it hands
    to tools, and a run's parallel sub-researchers must all write into this one object.

    :param progress: Optional callable receiving ``(phase, message)`` events.
    """

    progress: ProgressCallback | None = None
    ledger: EvidenceLedger = field(default_factory=EvidenceLedger)
    reads: ReadCache = field(default_factory=ReadCache, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _delegated: int = 0
    _granted: int = 0
    _usage: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)
    _warnings: list[str] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.progress is not None and not callable(self.progress):
            raise ConfigurationError(
                f"hook_context[{PROGRESS_KEY!r}] must be a callable progress(phase, message); "
                f"got {type(self.progress).__name__}."
            )

    def __deepcopy__(self, memo: dict[int, Any]) -> ResearchRun:
        return self

    def __repr__(self) -> str:
        return f"ResearchRun(delegated={self._delegated}, sources={len(self.ledger)})"

    def claim_subtopic(self, limit: int) -> int | None:
        """
        Claim one delegation slot.

        :param limit: How many sub-topics the run may delegate in all.
        :returns: The 1-based number of the claimed slot, or ``None`` when ``limit`` were already delegated.
        """
        with self._lock:
            if self._delegated >= limit + self._granted:
                return None
            self._delegated += 1
            return self._delegated

    def grant_subtopics(self, count: int) -> None:
        """
        Allow ``count`` delegations beyond the limit: grounding's replanning researches with these.

        :param count: How many more sub-topics the run may delegate.
        """
        with self._lock:
            self._granted += max(count, 0)

    def record_usage(self, phase: str, usage: Mapping[str, Any] | None) -> None:
        """
        Add token usage to a phase's total.

        :param phase: One of the ``PHASE_*`` names.
        :param usage: A usage dict as found in ``ChatMessage.meta["usage"]`` or an Agent's ``token_usage``.
        """
        if not usage:
            return
        with self._lock:
            self._usage[phase] = add_usage(self._usage.get(phase), usage)

    def usage_by_phase(self) -> dict[str, dict[str, Any]]:
        """
        :returns: A copy of the token usage recorded so far, per phase.
        """
        with self._lock:
            return {phase: dict(usage) for phase, usage in self._usage.items()}

    def warn(self, phase: str, message: str) -> None:
        """
        Record something that went wrong without ending the run; it appears in the ``warnings`` output.

        :param phase: One of the ``PHASE_*`` names.
        :param message: What happened.
        """
        with self._lock:
            self._warnings.append(f"{phase}: {message}")
        self.report(phase, f"warning: {message}")

    def warnings(self) -> list[str]:
        """
        :returns: A copy of the warnings recorded so far.
        """
        with self._lock:
            return list(self._warnings)

    def report(self, phase: str, message: str) -> None:
        """
        Send a progress event to the caller's callback, if one was given.

        :param phase: One of the ``PHASE_*`` names.
        :param message: A short human-readable line.
        """
        if self.progress is not None:
            self.progress(phase, message)


class SharedContext(dict[str, Any]):
    """
    A ``hook_context`` whose values are shared, not copied, when Haystack's State deep-copies it for a tool.

    ``hook_context`` holds live per-request resources (this library's :class:`ResearchRun`, and whatever the caller
    put there: queues, connections, callbacks). Copying them would split the run's shared state or fail outright.
    """

    def __deepcopy__(self, memo: dict[int, Any]) -> SharedContext:
        return SharedContext(self)


def run_from_context(hook_context: Mapping[str, Any] | None) -> ResearchRun | None:
    """
    Find the run's handle in a ``hook_context``.

    :param hook_context: The ``hook_context`` a hook or tool received.
    :returns: The :class:`ResearchRun`, or ``None`` when the tool runs outside a deep-research run.
    """
    if not hook_context:
        return None
    run = hook_context.get(RUN_KEY)
    return run if isinstance(run, ResearchRun) else None
