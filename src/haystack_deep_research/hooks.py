"""
The orchestrator's two phase hooks.

- :class:`ScopeHook` (``before_run``): checks the question, opens the run's :class:`ResearchRun`, turns the question
  into a research brief and makes the brief the whole conversation the orchestrator sees.
- :class:`WriteHook` (``after_run``): turns the brief and the researchers' notes into the report, verifies every
  citation against the sources the run really retrieved, fills the run's outputs, then runs its report stages
  (grounding, structured output) in order.

Neither hook lets a model failure throw away the run: a failing scope model makes the question the brief, and a
failing writer yields a report assembled from the brief and the notes, with ``exit_reason`` saying so.
"""

from __future__ import annotations

from typing import Any

import arrow
from haystack.components.agents.state import State
from haystack.components.agents.state.state_utils import replace_values
from haystack.core.serialization import component_to_dict, default_from_dict, default_to_dict
from haystack.dataclasses import ChatMessage, ChatRole
from haystack.utils.deserialization import deserialize_component_inplace

from haystack_deep_research import _checks, llm
from haystack_deep_research.errors import InvalidQuestionError
from haystack_deep_research.preserve import model_failure
from haystack_deep_research.prompts import (
    FALLBACK_REPORT,
    SCOPE_SYSTEM,
    SCOPE_USER,
    WRITER_SYSTEM,
    WRITER_USER,
    fence,
    render_chat,
    render_text,
)
from haystack_deep_research.publish import allowed_urls, publish_report, reset_review_outputs
from haystack_deep_research.state import (
    BRIEF,
    BRIEF_KEY,
    EXIT_ORCHESTRATOR_FAILED,
    EXIT_REASON,
    EXIT_WRITER_FAILED,
    HOOK_CONTEXT,
    MESSAGES,
    NOTES,
    PHASE_ORCHESTRATOR,
    PHASE_SCOPE,
    PHASE_WRITE,
    PROGRESS_KEY,
    REPORT,
    RUN_KEY,
    SOURCES,
    TOKEN_USAGE,
    WARNINGS,
    ResearchRun,
    SharedContext,
    run_from_context,
)
from haystack_deep_research.steps import ReportStage, drive, drive_async


def question_from(messages: list[ChatMessage] | None) -> str:
    """
    Find the research question: the text of the last user message.

    :param messages: The messages passed to ``run``.
    :returns: The question, stripped.
    :raises InvalidQuestionError: If there is no user message with text.
    """
    for message in reversed(messages or []):
        if message.is_from(ChatRole.USER):
            text = (message.text or "").strip()
            if text:
                return text
            break
    raise InvalidQuestionError(
        "No research question: pass messages=[ChatMessage.from_user('your question')] with a non-empty question."
    )


def _text(reply: ChatMessage | None) -> str:
    return ((reply.text if reply is not None else None) or "").strip()


class StatelessHook:
    """The serialization of a hook that takes no parameters: all it needs is in the State it is given."""

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized hook.
        """
        return default_to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """
        :param data: What ``to_dict`` returned.
        :returns: The hook.
        """
        return default_from_dict(cls, data)


class PhaseHook:
    """
    A hook that makes one call to its chat generator: prepare, call (sync or async), then apply the reply.

    A failing call never escapes: :meth:`_finish` receives ``reply=None`` and the error, and decides the fallback.
    Subclasses implement :meth:`_begin` (return ``None`` to skip the call) and :meth:`_finish`.

    :param chat_generator: The chat generator of this phase.
    :raises ConfigurationError: If ``chat_generator`` is not a chat generator.
    """

    def __init__(self, *, chat_generator: Any) -> None:
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)

    def _begin(self, state: State) -> tuple[Any, list[ChatMessage]] | None:
        raise NotImplementedError

    def _finish(self, state: State, context: Any, reply: ChatMessage | None, error: Exception | None) -> None:
        raise NotImplementedError

    def run(self, state: State) -> None:
        """
        Run the phase against the live State.

        :param state: The agent's live State.
        """
        begun = self._begin(state)
        if begun is None:
            return
        context, prompt = begun
        try:
            reply = llm.call(self.chat_generator, prompt)
        except Exception as error:
            self._finish(state, context, None, error)
            return
        self._finish(state, context, reply, None)

    async def run_async(self, state: State) -> None:
        """
        Async variant of :meth:`run`.

        :param state: The agent's live State.
        """
        begun = self._begin(state)
        if begun is None:
            return
        context, prompt = begun
        try:
            reply = await llm.call_async(self.chat_generator, prompt)
        except Exception as error:
            self._finish(state, context, None, error)
            return
        self._finish(state, context, reply, None)

    def warm_up(self) -> None:
        """Warm up the chat generator."""
        if hasattr(self.chat_generator, "warm_up"):
            self.chat_generator.warm_up()

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized hook.
        """
        return default_to_dict(self, chat_generator=component_to_dict(obj=self.chat_generator, name="chat_generator"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """
        :param data: What ``to_dict`` returned.
        :returns: The hook.
        """
        deserialize_component_inplace(data["init_parameters"], key="chat_generator")
        return default_from_dict(cls, data)


def failure(error: Exception | None) -> str:
    """
    Say why a phase produced no text.

    :param error: The exception the call raised, or ``None`` when it returned no text.
    :returns: A short reason.
    """
    return f"{type(error).__name__}: {error}" if error is not None else "the model returned no text"


class ScopeHook(PhaseHook):
    """
    ``before_run``: question → research brief, which replaces the conversation the orchestrator sees.

    Raises :class:`InvalidQuestionError` before any model is called when the messages hold no question. A brief
    already in ``hook_context`` (``BRIEF_KEY``, as a resumed run restores it) is used without calling the model.

    :param chat_generator: The scope model.
    """

    def _begin(self, state: State) -> tuple[Any, list[ChatMessage]] | None:
        question = question_from(state.data.get(MESSAGES))
        context = dict(state.data.get(HOOK_CONTEXT) or {})
        run = ResearchRun(progress=context.get(PROGRESS_KEY))
        state.set(HOOK_CONTEXT, SharedContext({**context, RUN_KEY: run}))
        for key, empty in ((NOTES, []), (WARNINGS, []), (SOURCES, []), (REPORT, ""), (BRIEF, "")):
            state.set(key, empty, handler_override=replace_values)
        given = context.get(BRIEF_KEY)
        if isinstance(given, str) and given.strip():
            self._finish(state, (question, run), ChatMessage.from_assistant(given.strip()), None)
            return None
        run.report(PHASE_SCOPE, "writing the research brief")
        prompt = render_chat(SCOPE_SYSTEM, SCOPE_USER, today=arrow.utcnow().format("YYYY-MM-DD"), question=question)
        return (question, run), prompt

    def _finish(self, state: State, context: Any, reply: ChatMessage | None, error: Exception | None) -> None:
        question, run = context
        brief = _text(reply)
        if reply is not None:
            run.record_usage(PHASE_SCOPE, reply.meta.get("usage"))
        if not brief:
            run.warn(PHASE_SCOPE, f"the scope model failed ({failure(error)}); the question serves as the brief")
            brief = question
        state.set(BRIEF, brief)
        system = [m for m in state.data.get(MESSAGES) or [] if m.is_from(ChatRole.SYSTEM)]
        state.set(MESSAGES, [*system, ChatMessage.from_user(brief)], handler_override=replace_values)
        run.report(PHASE_SCOPE, "brief ready")


class WriteHook(PhaseHook):
    """
    ``after_run``: brief + notes → Markdown report, citations verified against the evidence ledger.

    Then each stage runs in order on the verified report (see :class:`~haystack_deep_research.steps.ReportStage`):
    the factory adds a grounding stage for ``grounding=True`` and a structured-output stage for ``output_schema``.
    A stage may raise (structured output raises ``StructuredOutputError``); the report's outputs are set before.

    :param chat_generator: The writer model.
    :param stages: Report stages, run in order after the report is written and verified.
    """

    def __init__(self, *, chat_generator: Any, stages: list[ReportStage] | None = None) -> None:
        super().__init__(chat_generator=chat_generator)
        self.stages = list(stages or [])

    def run(self, state: State) -> None:
        """
        Write and verify the report, then run the stages.

        :param state: The agent's live State.
        """
        super().run(state)
        for stage in self.stages:
            drive(stage.review(state, self.chat_generator), max_concurrency=stage.max_concurrency)

    async def run_async(self, state: State) -> None:
        """
        Async variant of :meth:`run`.

        :param state: The agent's live State.
        """
        await super().run_async(state)
        for stage in self.stages:
            await drive_async(stage.review(state, self.chat_generator), max_concurrency=stage.max_concurrency)

    def warm_up(self) -> None:
        """Warm up the writer and the stages."""
        super().warm_up()
        for stage in self.stages:
            if hasattr(stage, "warm_up"):
                stage.warm_up()

    def to_dict(self) -> dict[str, Any]:
        """
        :returns: The serialized hook, with its stages.
        """
        data = super().to_dict()
        data["init_parameters"]["stages"] = [component_to_dict(obj=stage, name="stage") for stage in self.stages]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """
        :param data: What ``to_dict`` returned.
        :returns: The hook.
        """
        stages = []
        for stage in data["init_parameters"].get("stages") or []:
            holder = {"stage": stage}
            deserialize_component_inplace(holder, key="stage")
            stages.append(holder["stage"])
        data["init_parameters"]["stages"] = stages
        return super().from_dict(data)

    def _begin(self, state: State) -> tuple[Any, list[ChatMessage]]:
        run = run_from_context(state.data.get(HOOK_CONTEXT)) or ResearchRun()
        run.record_usage(PHASE_ORCHESTRATOR, state.data.get(TOKEN_USAGE))
        failed = model_failure(state.data.get(MESSAGES))
        if failed is not None:
            run.warn(PHASE_ORCHESTRATOR, f"the orchestrator model failed ({failed}); the report uses the notes so far")
            state.set(EXIT_REASON, EXIT_ORCHESTRATOR_FAILED)
        notes = list(state.data.get(NOTES) or [])
        urls = allowed_urls(notes, run)
        run.report(PHASE_WRITE, f"writing the report from {len(notes)} notes and {len(urls)} sources")
        prompt = render_chat(
            WRITER_SYSTEM, WRITER_USER, brief=state.data.get(BRIEF) or "", notes=[fence(n) for n in notes], urls=urls
        )
        return (run, urls), prompt

    def _finish(self, state: State, context: Any, reply: ChatMessage | None, error: Exception | None) -> None:
        run, urls = context
        report = _text(reply)
        if reply is not None:
            run.record_usage(PHASE_WRITE, reply.meta.get("usage"))
        if not report:
            why = failure(error)
            run.warn(PHASE_WRITE, f"the writer failed ({why}); the report was assembled from the notes")
            report = render_text(
                FALLBACK_REPORT,
                error=why,
                brief=state.data.get(BRIEF) or "",
                notes=state.data.get(NOTES) or [],
                urls=urls,
            )
            state.set(EXIT_REASON, EXIT_WRITER_FAILED)
        reset_review_outputs(state)
        check = publish_report(state, run, report, urls)
        run.report(PHASE_WRITE, f"report ready ({len(check.verified)} citations verified)")
