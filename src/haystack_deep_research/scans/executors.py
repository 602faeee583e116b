"""
Where and how a scan's items are researched: :class:`LocalExecutor` (this process, on the event loop; the default) or
:class:`RayExecutor` (one Ray task per attempt, ``max_retries=0`` so the runner's ``max_attempts`` bounds every kind
of failure), both through :func:`research_item`. The *research factory* a scan is given is called once per item in
the process that researches it, so with Ray it must be picklable there: a module-level function or a
``functools.partial`` of one. Ray is imported when a :class:`RayExecutor` starts. See docs/scans.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from haystack import Pipeline
from haystack.dataclasses import ChatMessage
from pydantic import BaseModel

from haystack_deep_research._haystack_internals import input_names
from haystack_deep_research.errors import ConfigurationError, MissingExtraError
from haystack_deep_research.run._phases import Call, Phase, blocking, drive, drive_async

__all__ = [
    "LocalExecutor",
    "RayExecutor",
    "ResearchFactory",
    "ScanExecutor",
    "import_ray",
    "research_item",
    "research_item_async",
]


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


def _research(research: ResearchFactory, prompt: str) -> Phase[dict[str, Any]]:
    runnable = _runnable(research)
    read: Callable[[Any], dict[str, Any]] = _called
    if isinstance(runnable, Pipeline):
        inputs, read = {"question": prompt}, _leaves
        call = Call(lambda: runnable.run(inputs), lambda: runnable.run_async(inputs))
    elif _takes_messages(runnable):
        messages, read = [ChatMessage.from_user(prompt)], _agent_outputs
        call = Call(lambda: runnable.run(messages=messages), lambda: runnable.run_async(messages=messages))
    else:
        call = blocking(runnable, prompt)
    [outcome] = yield [call]
    if outcome.error is not None:
        raise outcome.error
    return read(outcome.value)


def research_item(research: ResearchFactory, prompt: str) -> dict[str, Any]:
    """
    Research one prompt with a fresh runnable from the factory, synchronously.

    :param research: The research factory.
    :param prompt: The item's prompt.
    :returns: The run's outputs: an agent's (run with the prompt as the user message) without ``messages``; a
        ``Pipeline``'s (run with ``{"question": prompt}``) one leaf's outputs, or ``{leaf: outputs}`` for several; a
        callable's mapping (a pydantic model becomes ``{"structured": model}``).
    :raises ConfigurationError: If the factory or the callable it returns gives something else.
    """
    return drive(_research(research, prompt))


async def research_item_async(research: ResearchFactory, prompt: str) -> dict[str, Any]:
    """Async variant of :func:`research_item`: a Pipeline's or agent's ``run_async``; a callable in a worker thread."""
    return await drive_async(_research(research, prompt))


class ScanExecutor(Protocol):
    """Researches the items of one scan: :meth:`start` once, :meth:`research` per attempt, :meth:`stop` once (also
    after a failure); ``start`` and ``stop`` block, and the runner calls them in a worker thread."""

    name: str

    def start(self, research: ResearchFactory) -> None: ...

    async def research(self, prompt: str) -> dict[str, Any]:
        """:returns: The outputs of the research run of one item's prompt."""
        ...

    def stop(self) -> None: ...


class LocalExecutor:
    """Research in this process: a Pipeline's or Agent's ``run_async`` on the event loop, a callable in a thread."""

    name = "local"

    def __init__(self) -> None:
        self._research: ResearchFactory | None = None

    def start(self, research: ResearchFactory) -> None:
        self._research = research

    async def research(self, prompt: str) -> dict[str, Any]:
        """:raises RuntimeError: If :meth:`start` was not called."""
        if self._research is None:
            raise RuntimeError("LocalExecutor.research was called before start")
        return await research_item_async(self._research, prompt)

    def stop(self) -> None:
        self._research = None


def import_ray() -> Any:
    """:returns: The ``ray`` module; a ``MissingExtraError`` naming the extra when Ray is not installed."""
    try:
        import ray
    except ImportError as error:
        raise MissingExtraError("Scans on Ray", extra="ray", module="ray") from error
    return ray


def _research_task(research: ResearchFactory, prompt: str) -> dict[str, Any]:
    """The body of one Ray task (module level, so Ray ships it by reference). A worker a cluster started itself never
    saw this process's environment: Haystack's telemetry is turned off there too, unless that worker asks for it."""
    from haystack_deep_research._haystack_internals import telemetry_off_unless_asked

    telemetry_off_unless_asked()
    return research_item(research, prompt)


class RayExecutor:
    """
    Research each item as a Ray task (see the module docstring).

    :param address: The cluster to connect to (``"auto"``, ``"HOST:PORT"``, ``"ray://HOST:10001"``), or ``None`` to
        start a Ray instance on this machine for the scan and shut it down after. When Ray is already initialized in
        this process, that connection is used and left open.
    :param init_options: More keyword arguments of ``ray.init`` (for example ``num_cpus`` or ``_temp_dir``);
        ``log_to_driver`` is ``False`` unless given.
    :param task_options: Options of every task (for example ``num_cpus=0.5`` or ``memory=...``); ``max_retries`` is
        always 0.
    :raises ConfigurationError: If a parameter has the wrong type.
    """

    name = "ray"

    def __init__(
        self,
        *,
        address: str | None = None,
        init_options: Mapping[str, Any] | None = None,
        task_options: Mapping[str, Any] | None = None,
    ) -> None:
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise ConfigurationError(f"address must be a cluster address such as 'auto', or None; got {address!r}.")
        for name, value in (("init_options", init_options), ("task_options", task_options)):
            if value is not None and not isinstance(value, Mapping):
                raise ConfigurationError(f"{name} must be a dict of keyword arguments; got {type(value).__name__}.")
        self.address = address
        self.init_options = {"log_to_driver": False, **(init_options or {})}
        self.task_options = {key: value for key, value in (task_options or {}).items() if key != "max_retries"}
        self._ray: Any = None
        self._owns = False
        self._task: Any = None
        self._research: Any = None

    def start(self, research: ResearchFactory) -> None:
        """Connect to Ray (starting a local instance when ``address`` is ``None``) and ship the factory once."""
        ray = import_ray()
        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            ray.init(address=self.address, **self.init_options)
        self._task = ray.remote(_research_task).options(max_retries=0, **self.task_options)
        self._research = ray.put(research)

    async def research(self, prompt: str) -> dict[str, Any]:
        """Research one item in a Ray task (a RuntimeError before :meth:`start`)."""
        if self._task is None:
            raise RuntimeError("RayExecutor.research was called before start")
        try:
            return dict(await self._task.remote(self._research, prompt))
        except self._ray.exceptions.RayTaskError as error:
            cause = getattr(error, "cause", None)
            if isinstance(cause, Exception):
                raise cause from error
            raise

    def stop(self) -> None:
        """Drop the shipped factory; shut Ray down if this executor started it."""
        self._task = self._research = None
        if self._owns and self._ray is not None:
            self._ray.shutdown()
        self._owns = False
