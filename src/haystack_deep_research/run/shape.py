"""
The door of the Pipeline shapes: the run is opened before the Pipeline runs and closed after it, in one place.

The iterative agent and the research workflow are Haystack Pipelines with loops. Haystack deep-copies every value it
hands from one component to the next, so nothing that belongs to one run (its ledger, event subscribers, journal,
budget) may travel along the Pipeline's edges: a copied subscriber receives nothing, a copied ledger forgets what it
read. :class:`PipelineShape` therefore

- is called as every shape is, ``run(messages, streaming_callback=None, *, hook_context=None, inputs=None)``, and
  checks that input with the same typed errors as the agents;
- opens the run with :meth:`~haystack_deep_research.run.OpenRunHook.open_run`, the same opener the agents use (event
  bus, streaming callback, run directory's journal, budget, prices, brief, ``on_run_opened``, ``RunStarted``);
- makes the open run the *current run* (:func:`~haystack_deep_research.run.context.current_run`, the one carrier of
  the current run in every shape) while its Pipeline runs; the steps find it there and pass only plain data along the
  edges;
- leaves the closing to its finish step, which calls :func:`~haystack_deep_research.run.lifecycle.close_run` as the
  Agent shapes' ``after_run`` hook does; when the Pipeline fails, it closes what the run opened itself (its
  resources, such as MCP connections, its journal and the run directory's lock), and re-raises the library's typed
  errors unwrapped from Haystack's ``PipelineRuntimeError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from haystack import Pipeline
from haystack.core.errors import PipelineRuntimeError
from haystack.core.serialization import default_from_dict, default_to_dict

from haystack_deep_research.errors import ConfigurationError, DeepResearchError
from haystack_deep_research.run.context import RunInputs, question_from, run_inputs, running
from haystack_deep_research.run.door import check_hook_context
from haystack_deep_research.run.lifecycle import OpenRunHook
from haystack_deep_research.run.phases import drive, drive_async
from haystack_deep_research.run.research_run import ResearchRun

__all__ = ["PipelineShape"]

T = TypeVar("T")


def _unwrapped(error: PipelineRuntimeError) -> Exception:
    cause = error.__cause__
    return cause if isinstance(cause, DeepResearchError) else error


class PipelineShape:
    """
    The run contract of a Pipeline shape (see the module docstring). A subclass is a Haystack component whose ``run``
    and ``run_async`` call :meth:`research` and :meth:`research_async`.

    :param pipeline: The shape's Pipeline.
    :param run_settings: What each run is opened with: ``token_budget``, ``time_budget``, ``cost_budget``,
        ``phase_models`` and ``prices`` (see ``OpenRunHook``).
    :param finish: The Pipeline component whose outputs are the shape's outputs.
    """

    def __init__(
        self, *, pipeline: Pipeline, run_settings: dict[str, Any] | None = None, finish: str = "finish"
    ) -> None:
        self.pipeline = pipeline
        self.opener = OpenRunHook(**(run_settings or {}))
        self.finish = finish

    def warm_up(self) -> None:
        """Warm up the Pipeline's components."""
        self.pipeline.warm_up()

    def to_dict(self) -> dict[str, Any]:
        """:returns: The serialized shape: its Pipeline and run settings."""
        return default_to_dict(self, pipeline=self.pipeline.to_dict(), run_settings=self.opener.run_parameters())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Any:
        """
        :param data: What ``to_dict`` returned.
        :returns: The shape.
        """
        parameters = data["init_parameters"]
        parameters["pipeline"] = Pipeline.from_dict(parameters["pipeline"])
        OpenRunHook.run_parameters_from_dict(parameters.get("run_settings") or {})
        return default_from_dict(cls, data)

    def step(self, kind: type[T]) -> T:
        """
        :param kind: The class of one of the Pipeline's steps.
        :returns: The Pipeline's first step of that class.
        :raises ConfigurationError: If the Pipeline holds none (it was rebuilt without it).
        """
        for _, instance in self.pipeline.walk():
            if isinstance(instance, kind):
                return instance
        raise ConfigurationError(f"this Pipeline has no {kind.__name__}; build it with the library's factory.")

    def entry(self, run: ResearchRun, **inputs: Any) -> dict[str, dict[str, Any]]:
        """
        :param run: The open run.
        :param inputs: The shape's own inputs besides ``messages`` and ``hook_context``.
        :returns: The Pipeline's input data.
        """
        raise NotImplementedError

    def _open(
        self, messages: Any, streaming_callback: Any, hook_context: Any, inputs: RunInputs | None
    ) -> tuple[str, dict[str, Any], RunInputs]:
        question = question_from(messages)
        return question, check_hook_context(hook_context), run_inputs(inputs, streaming_callback)

    @contextmanager
    def _current(self, run: ResearchRun, context: dict[str, Any]) -> Iterator[None]:
        try:
            with running(run, context):
                yield
        except PipelineRuntimeError as error:
            raise _unwrapped(error) from error.__cause__
        finally:
            run.close()
            if run.journal is not None:
                run.journal.close()

    def research(
        self,
        messages: Any,
        streaming_callback: Any = None,
        hook_context: Any = None,
        inputs: RunInputs | None = None,
        **own: Any,
    ) -> dict[str, Any]:
        """
        Open the run, run the Pipeline in it, close the run.

        :param messages: The question, as the last user message.
        :param streaming_callback: A Haystack streaming callback every model of the run streams to, or ``None``.
        :param hook_context: The caller's request-scoped inputs, handed to the hooks of the shape's nested agents.
        :param inputs: The run's inputs (``RunInputs``), or ``None``.
        :param own: The shape's own inputs (see :meth:`entry`).
        :returns: The outputs of the ``finish`` component.
        :raises InvalidQuestionError: If ``messages`` holds no question; nothing has run.
        :raises ConfigurationError: If ``hook_context`` or ``inputs`` has the wrong type.
        :raises RunDirError: If the run directory cannot be used.
        """
        question, context, given = self._open(messages, streaming_callback, hook_context, inputs)
        run = drive(self.opener.open_run(question, given))
        with self._current(run, context):
            return dict(self.pipeline.run(self.entry(run, **own))[self.finish])

    async def research_async(
        self,
        messages: Any,
        streaming_callback: Any = None,
        hook_context: Any = None,
        inputs: RunInputs | None = None,
        **own: Any,
    ) -> dict[str, Any]:
        """
        Async variant of :meth:`research`.

        :param messages: The question, as the last user message.
        :param streaming_callback: A Haystack streaming callback, or ``None``.
        :param hook_context: The caller's request-scoped inputs.
        :param inputs: The run's inputs, or ``None``.
        :param own: The shape's own inputs.
        :returns: The outputs of the ``finish`` component.
        """
        question, context, given = self._open(messages, streaming_callback, hook_context, inputs)
        run = await drive_async(self.opener.open_run(question, given))
        with self._current(run, context):
            return dict((await self.pipeline.run_async(self.entry(run, **own)))[self.finish])
