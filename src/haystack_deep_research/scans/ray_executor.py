"""
Scale-out on Ray: one Ray task per attempt at an item, on a local Ray instance or an existing cluster.

Ray is an optional extra (``pip install 'haystack-deep-research[ray]'``); it is imported when a :class:`RayExecutor`
starts, never before. The research factory is put in Ray's object store once; each task builds a fresh runnable from
it in its worker and researches one prompt on the synchronous path
(:func:`~haystack_deep_research.scans.research.research_item`).

Tasks run with Ray's ``max_retries=0``: a worker that dies surfaces at once as ``ray.exceptions.WorkerCrashedError``
and the scan runner retries the item like any failed attempt, so ``max_attempts`` bounds every kind of failure and
each attempt is visible as an event. An error raised inside a task reaches the runner as the original error.
Back-pressure comes from the runner: at most ``max_concurrency`` tasks are in flight, and results come back in item
order.

Every worker must be able to import this library and the factory's own code: on a local instance they share this
process's environment; on a cluster, install the same packages on every node (or use a Ray runtime environment).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from haystack_deep_research.errors import ConfigurationError, MissingExtraError
from haystack_deep_research.scans.research import ResearchFactory, research_item

__all__ = ["RayExecutor", "import_ray"]


def import_ray() -> Any:
    """
    :returns: The ``ray`` module.
    :raises MissingExtraError: If Ray is not installed; the message names the extra to install.
    """
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
        """
        Connect to Ray (starting a local instance when ``address`` is ``None``) and ship the factory once.

        :param research: The research factory; it must be picklable by Ray (cloudpickle).
        :raises MissingExtraError: If Ray is not installed.
        """
        ray = import_ray()
        self._ray = ray
        self._owns = not ray.is_initialized()
        if self._owns:
            ray.init(address=self.address, **self.init_options)
        self._task = ray.remote(_research_task).options(max_retries=0, **self.task_options)
        self._research = ray.put(research)

    async def research(self, prompt: str) -> dict[str, Any]:
        """
        Research one item in a Ray task.

        :param prompt: The item's prompt.
        :returns: The outputs of its research run.
        :raises RuntimeError: If :meth:`start` was not called.
        """
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
