"""
Causal inference: build the causal chain behind the answer from the evidence gathered so far.

On by default (``create_research_workflow(causal_inference=False)`` leaves the step out, and Execute goes straight to
Summarize). One call to the model, without tools, with the findings fenced as data; the chain it returns goes to the
summary. A failed call is a warning: the summary is then written without a chain.
"""

from __future__ import annotations

from typing import Any

from haystack import component

from haystack_deep_research import _checks
from haystack_deep_research._prompts import CAUSAL, fence, render_chat
from haystack_deep_research.events import PhaseEnded, PhaseStarted
from haystack_deep_research.run._phases import Phase, ask, failure
from haystack_deep_research.state import PHASE_CAUSAL
from haystack_deep_research.workflow.workflow_run import WorkflowRun, WorkflowStep

__all__ = ["CausalStep"]


@component
class CausalStep(WorkflowStep):
    """
    The workflow's causal-inference step (see the module docstring).

    :param chat_generator: The model that builds the chain.
    :raises ConfigurationError: If it is not a chat generator.
    """

    def __init__(self, *, chat_generator: Any) -> None:
        self.chat_generator = _checks.chat_generator("chat_generator", chat_generator, needs_tools=False)

    def _used_models(self) -> list[Any]:
        return [self.chat_generator]

    def phase(self, workflow: WorkflowRun) -> Phase[WorkflowRun]:
        """The phase; it returns the run with its causal chain (``""`` after a failure)."""
        run = workflow.run
        notes = run.notes()
        run.events.emit(PhaseStarted(phase=PHASE_CAUSAL, detail=f"building the causal chain from {len(notes)} note(s)"))
        prompt = render_chat(CAUSAL, question=run.question, findings=[fence(note) for note in notes])
        [outcome] = yield [
            ask(
                self.chat_generator, prompt, role="causal", streaming_callback=run.streaming_callback, budget=run.budget
            )
        ]
        if outcome.reply is not None:
            run.record_usage(PHASE_CAUSAL, outcome.reply.meta.get("usage"))
        if not outcome.text:
            run.warn(PHASE_CAUSAL, f"causal inference failed ({failure(outcome.error)}); the summary has no chain")
            return workflow.but(causal_chain="")
        run.events.emit(PhaseEnded(phase=PHASE_CAUSAL, detail="causal chain ready"))
        return workflow.but(causal_chain=outcome.text)
