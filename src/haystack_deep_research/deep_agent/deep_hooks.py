"""
The deep agent's run lifecycle (see docs/deep-agent.md): :class:`DeepRunHook` opens the run and prepends the memory
files to the system prompt; :class:`DeepCloseHook` settles ``exit_reason``, fills the outputs, emits ``ExitReached``,
makes the structured output and closes the run. A run whose model failed reports what its tools read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole
from haystack.utils.type_serialization import deserialize_type, serialize_type

from haystack_deep_research._prompts import MEMORY_FILES, render_text
from haystack_deep_research._serialization import init_parameters, restore_parameters
from haystack_deep_research._untrusted.files import read_regular_file
from haystack_deep_research.deep_agent.deep_loop import payload
from haystack_deep_research.errors import ConfigurationError, StructuredOutputError
from haystack_deep_research.events import ExitReached
from haystack_deep_research.evidence.entry import CITABLE_KINDS
from haystack_deep_research.evidence.verification import verify_citations
from haystack_deep_research.report import citation_findings, verify_report
from haystack_deep_research.report.contradictions import add_contradictions
from haystack_deep_research.report.sections import fallback_report
from haystack_deep_research.report.structured import StructuredOutputStage, verify_structured
from haystack_deep_research.research.final_summary import model_failure
from haystack_deep_research.run import ResearchRun
from haystack_deep_research.run._lifecycle import CloseRunHook, OpenRunHook
from haystack_deep_research.run._phases import Phase, blocking
from haystack_deep_research.settings import Price
from haystack_deep_research.state import (
    CITATIONS,
    EXIT_FAILED,
    EXIT_MAX_ITERATIONS,
    EXIT_REASON,
    GROUNDING,
    GROUNDING_ROUNDS,
    GROUNDING_SCORE,
    GROUNDING_UNJUDGED,
    HAYSTACK_MAX_STEPS,
    MESSAGES,
    PHASE_AGENT,
    PHASE_FILES,
    PLAN,
    REPORT,
    STOP_RUN,
    STRUCTURED,
    SUBMISSION,
    TODOS,
)
from haystack_deep_research.tools.filesystem import WRITTEN_FILES, ScratchBackend
from haystack_deep_research.tools.todos import TODOS_RESOURCE, TodoState

__all__ = ["DeepCloseHook", "DeepRunHook"]

PREVIEW_CHARS = 200
PASSAGE_CHARS = 600
"""The most characters of each source a failed run's report quotes."""

# The outputs every run returns, also when it ends early: their values before the loop sets them.
_OUTPUTS: dict[str, Any] = {
    REPORT: "",
    CITATIONS: dict,
    SUBMISSION: None,
    STRUCTURED: None,
    PLAN: "",
    TODOS: list,
    GROUNDING: list,
    GROUNDING_SCORE: None,
    GROUNDING_UNJUDGED: list,
    GROUNDING_ROUNDS: 0,
}


_PROSE = (".md", ".markdown", ".txt", ".rst", "")
"""Files whose unverified links are removed as a report's are; in any other file (HTML, JSON, CSV) a rewrite could
break its format, so they are named in a warning instead, and the run's ``citations`` lists them as unverified."""


def _check_written_files(run: ResearchRun) -> Phase[None]:
    """Every file the agent wrote (often its deliverable) leaves the run with its citations checked, as its answer."""
    read_urls = sorted(run.ledger.citable_urls())
    written_files: dict[str, ScratchBackend] = run.resource(WRITTEN_FILES, dict)
    for path, space in list(written_files.items()):
        [read] = yield [blocking(space.read, path)]
        if read.error is not None:
            continue  # deleted, binary or refused since: nothing of it leaves the run as text
        check = verify_citations(str(read.value), read_urls)
        if not check.unverified:
            continue
        urls = ", ".join(dict.fromkeys(c.url for c in check.unverified))
        if PurePosixPath(path).suffix.lower() not in _PROSE:
            run.warn(PHASE_FILES, f"{path} cites URL(s) the run never read, left as they are in its format: {urls}")
            continue
        [written] = yield [blocking(space.write, path, check.report)]
        removed = f"removed {len(check.unverified)} citation(s) of URLs the run never read from {path}"
        unwritten = f"{path} cites URLs the run never read ({urls}), and could not be repaired ({written.error})"
        run.warn(PHASE_FILES, removed if written.error is None else unwritten)


def _gathered(run: ResearchRun, failed: str) -> str:
    """The report of a run whose model failed: what its tools read, each source with its passage, cited by its URL."""
    read = [entry for entry in run.ledger.entries() if entry.kind in CITABLE_KINDS]
    if not read:
        return ""
    notes = []
    for entry in read:
        title = " ".join(entry.title.split()) or entry.url
        passage = " ".join((entry.summary or entry.text or entry.snippet).split())[:PASSAGE_CHARS]
        notes.append(f"### {title}\n\n{passage} [{title}]({entry.url})")
    error = f"the agent's model failed: {failed}"
    return fallback_report(run, error, notes, [entry.url for entry in read])


class DeepRunHook(OpenRunHook):
    """
    ``before_run`` of a deep agent: open the run (the budget parameters are :class:`OpenRunHook`'s), hand a caller's
    ``todo_state`` (not serialized) to the run and prepend the ``memory_files`` (missing ones skipped).
    """

    run_phase = PHASE_AGENT
    takes_brief = False

    def __init__(
        self,
        *,
        token_budget: int | None = None,
        time_budget: float | None = None,
        on_event: Any = None,
        cost_budget: float | None = None,
        phase_models: dict[str, str] | None = None,
        prices: dict[str, Price] | None = None,
        memory_files: list[str] | None = None,
        todo_state: TodoState | None = None,
    ) -> None:
        super().__init__(
            token_budget=token_budget,
            time_budget=time_budget,
            on_event=on_event,
            cost_budget=cost_budget,
            phase_models=phase_models,
            prices=prices,
        )
        self.memory_files = check_memory_paths(memory_files)
        self.todo_state = todo_state

    def begin(self, state: State, run: ResearchRun) -> Phase[None]:
        for key, value in _OUTPUTS.items():
            state.set(key, value() if callable(value) else value, handler_override=replace_values)
        if self.todo_state is not None:
            given = self.todo_state
            run.resource(TODOS_RESOURCE, lambda: given)
        if not self.memory_files:
            return
        [read] = yield [blocking(read_memory_files, self.memory_files)]
        if read.error is not None:
            run.warn(PHASE_AGENT, f"the memory files could not be read ({type(read.error).__name__}: {read.error})")
            return
        files, warnings = read.value
        for warning in warnings:
            run.warn(PHASE_AGENT, warning)
        if not files:
            return
        messages: list[ChatMessage] = state.data.get(MESSAGES) or []
        has_system = bool(messages) and messages[0].is_from(ChatRole.SYSTEM)
        prompt = (messages[0].text or "") if has_system else ""
        text = render_text(MEMORY_FILES, files=[{"path": f.path, "text": f.text} for f in files], system_prompt=prompt)
        rest = messages[1:] if has_system else messages
        state.set(MESSAGES, [ChatMessage.from_system(text.strip()), *rest], handler_override=replace_values)

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized hook (a caller's ``todo_state`` is a live object and is not kept)."""
        return default_to_dict(self, **self.run_parameters(), memory_files=self.memory_files)


class DeepCloseHook(CloseRunHook):
    """
    ``after_run`` of a deep agent: its ``chat_generator`` writes the structured output of ``output_schema`` when one
    is needed; ``judge_llm`` is asked about the answer's contradictions (``None``: the figures alone).
    """

    max_concurrency = 1
    _model_attributes = ("chat_generator", "judge_llm")

    def __init__(self, *, chat_generator: Any, output_schema: Any = None, judge_llm: Any = None) -> None:
        self.chat_generator = chat_generator
        self.output_schema = output_schema
        self.judge_llm = judge_llm

    def finish(self, state: State, run: ResearchRun) -> Phase[None]:
        reason = str(state.data.get(STOP_RUN) or state.data.get(EXIT_REASON) or "")
        reason = EXIT_MAX_ITERATIONS if reason == HAYSTACK_MAX_STEPS else reason
        answer = str(state.data.get(REPORT) or "")
        if (failed := model_failure(state.data.get(MESSAGES))) is not None:
            run.warn(PHASE_AGENT, f"the agent's model failed ({failed}); the run ends with what it gathered")
            reason, answer = EXIT_FAILED, _gathered(run, failed)
        elif not answer:
            messages: list[ChatMessage] = state.data.get(MESSAGES) or []
            answer = next((m.text or "" for m in reversed(messages) if m.is_from(ChatRole.ASSISTANT) and m.text), "")
        state.set(EXIT_REASON, reason)
        # The answer leaves the library only with its citations verified against what the run really read.
        check = verify_report(run, answer.strip(), sorted(run.ledger.citable_urls()))
        state.set(REPORT, (yield from add_contradictions(run, check.report, check.passages, self.judge_llm)))
        state.set(CITATIONS, citation_findings(check))
        yield from _check_written_files(run)
        state.set(TODOS, run.resource(TODOS_RESOURCE, TodoState).to_list())
        preview = " ".join(str(state.data.get(REPORT) or "").split())[:PREVIEW_CHARS]
        run.events.emit(ExitReached(phase=PHASE_AGENT, reason=reason, final_message_preview=preview))
        if self.output_schema is None:
            return
        submission = state.data.get(SUBMISSION)
        instance = payload(submission, self.output_schema)[0] if isinstance(submission, dict) else None
        if instance is not None:
            try:
                state.set(STRUCTURED, verify_structured(instance, run, report=str(state.data.get(REPORT) or "")))
            except StructuredOutputError as error:  # the answer and everything gathered are still returned
                run.warn(PHASE_AGENT, str(error))
        elif state.data.get(REPORT):
            yield from StructuredOutputStage(output_schema=self.output_schema).review(state, run, self.chat_generator)
        else:
            run.warn(PHASE_AGENT, f"the run ended ({reason}) without an answer, so there is no structured output")

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized hook; the schema is stored by its import path (``ConfigurationError`` if none)."""
        if self.output_schema is not None and "<locals>" in self.output_schema.__qualname__:
            raise ConfigurationError(
                f"output_schema {self.output_schema.__qualname__} is defined inside a function; define it at module "
                "level so the agent can be serialized."
            )
        schema = serialize_type(self.output_schema) if self.output_schema is not None else None
        return default_to_dict(self, **init_parameters(self, output_schema=schema))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeepCloseHook:
        """:returns: The hook, with the schema imported from its path (subject to Haystack's allowlist)."""
        params = restore_parameters(cls, data["init_parameters"])
        if isinstance(params.get("output_schema"), str):
            params["output_schema"] = deserialize_type(params["output_schema"])
        return default_from_dict(cls, {**data, "init_parameters": params})


MAX_MEMORY_CHARS = 50_000
MAX_MEMORY_BYTES = 1024 * 1024
"""The largest memory file read; a larger one is skipped with a warning (it would be cut far below this anyway)."""


@dataclass(frozen=True)
class MemoryFile:
    """One memory file as read: its path as given, its text (cut at ``MAX_MEMORY_CHARS``)."""

    path: str
    text: str


def check_memory_paths(paths: object) -> list[str]:
    """:raises ConfigurationError: If ``memory_files`` is not a list of paths."""
    if paths is None:
        return []
    if isinstance(paths, str | Path) or not isinstance(paths, list | tuple):
        raise ConfigurationError(
            f"memory_files must be a list of paths, for example ['~/AGENTS.md', './AGENTS.md']; got {paths!r}."
        )
    if not all(isinstance(path, str | Path) and str(path).strip() for path in paths):
        raise ConfigurationError(f"memory_files must hold only non-empty paths; got {paths!r}.")
    return [str(path) for path in paths]


def read_memory_files(paths: list[str]) -> tuple[list[MemoryFile], list[str]]:
    """``(files read, warnings for the others)``; blocking (run it with ``blocking`` on the async path)."""
    files: list[MemoryFile] = []
    warnings: list[str] = []
    for given in paths:
        path = Path(given).expanduser()
        if not path.exists():
            continue
        try:
            data = read_regular_file(path, root=path.parent, max_bytes=MAX_MEMORY_BYTES)
        except FileNotFoundError:
            continue
        except OSError as error:  # LocalFileRefusedError included: not a regular file, a link out, too large
            warnings.append(f"the memory file {given} could not be read ({type(error).__name__}: {error}); skipped")
            continue
        text = data.decode("utf-8", errors="replace")
        if len(text) > MAX_MEMORY_CHARS:
            warnings.append(f"the memory file {given} was cut at {MAX_MEMORY_CHARS:,} characters")
            text = text[:MAX_MEMORY_CHARS]
        if text.strip():
            files.append(MemoryFile(path=given, text=text.strip()))
    return files, warnings
