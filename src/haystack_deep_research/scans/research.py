"""
One research run for one item, whatever the shape: the research workflow, the deep research agent, or a callable.

A scan is given a *research factory*: a callable with no arguments that returns a fresh runnable for one item. The
runnable is

- a shape of this library (``create_deep_research_agent``, ``create_deep_agent``, ``create_research_workflow``,
  ``create_iterative_research_agent``) or any Haystack component that takes ``messages`` (an ``Agent``): run with
  the prompt as the user message; the result is its outputs without ``messages`` (the shared outputs: ``report``,
  ``structured``, ``exit_reason``, ...);
- a Haystack ``Pipeline`` of your own: run with ``{"question": prompt}``; the result is its one leaf component's
  outputs, or ``{leaf: outputs}`` for several;
- any other callable: called with the prompt; it returns a mapping (or a pydantic model, which becomes
  ``{"structured": model}``).

The factory is called once per item, in the process that researches it (a Ray worker, with ``executor="ray"``), so it
must be picklable there: a module-level function, or ``functools.partial`` of one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from haystack import Pipeline
from haystack.dataclasses import ChatMessage
from pydantic import BaseModel

from haystack_deep_research._haystack_internals import input_names
from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.run._phases import blocking

__all__ = ["ResearchFactory", "research_item", "research_item_async"]

ResearchFactory = Callable[[], Any]
"""A callable with no arguments returning a fresh runnable for one item (see the module docstring)."""


def _leaves(outputs: Mapping[str, Any]) -> dict[str, Any]:
    return dict(next(iter(outputs.values()))) if len(outputs) == 1 else {str(k): v for k, v in outputs.items()}


def _agent_outputs(result: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if key != "messages"}


def _called(result: Any) -> dict[str, Any]:
    if isinstance(result, BaseModel):
        return {"structured": result}
    if isinstance(result, Mapping):
        return dict(result)
    raise ConfigurationError(
        f"a research callable must return a mapping or a pydantic model; it returned {type(result).__name__}."
    )


def _takes_messages(runnable: Any) -> bool:
    """A Haystack component (an Agent, a SuperComponent) with a ``messages`` input: run like the agents."""
    return "messages" in (input_names(runnable) or ())


def _runnable(research: ResearchFactory) -> Any:
    runnable = research()
    if not isinstance(runnable, Pipeline) and not _takes_messages(runnable) and not callable(runnable):
        raise ConfigurationError(
            "the research factory must return one of the library's agents or workflows, a Haystack component taking "
            f"messages (an Agent), a Pipeline, or a callable taking the prompt; it returned {type(runnable).__name__}."
        )
    return runnable


def research_item(research: ResearchFactory, prompt: str) -> dict[str, Any]:
    """
    Research one prompt with a fresh runnable from the factory, synchronously.

    :param research: The research factory.
    :param prompt: The item's prompt.
    :returns: The run's outputs (see the module docstring).
    :raises ConfigurationError: If the factory or the callable it returns gives something else.
    """
    runnable = _runnable(research)
    if isinstance(runnable, Pipeline):
        return _leaves(runnable.run({"question": prompt}))
    if _takes_messages(runnable):
        return _agent_outputs(runnable.run(messages=[ChatMessage.from_user(prompt)]))
    return _called(runnable(prompt))


async def research_item_async(research: ResearchFactory, prompt: str) -> dict[str, Any]:
    """
    Research one prompt on the event loop: a Pipeline's or agent's ``run_async``; a plain callable in a worker thread.

    :param research: The research factory.
    :param prompt: The item's prompt.
    :returns: The run's outputs.
    :raises ConfigurationError: If the factory or the callable it returns gives something else.
    """
    runnable = _runnable(research)
    if isinstance(runnable, Pipeline):
        return _leaves(await runnable.run_async({"question": prompt}))
    if _takes_messages(runnable):
        return _agent_outputs(await runnable.run_async(messages=[ChatMessage.from_user(prompt)]))
    return _called(await blocking(runnable, prompt).run_async())
