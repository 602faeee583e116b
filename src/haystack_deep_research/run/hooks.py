"""
The bases of the library's hooks and the things they share.

- :class:`UsesModels`: forwards ``warm_up`` / ``warm_up_async`` / ``close`` / ``close_async`` to the models (and
  nested agents) a hook, tool or stage uses, so that an Agent's own lifecycle calls reach every one of them.
- :class:`PhaseHook`: a hook written once as a phase (see :mod:`.phases`), with thin sync and async shells.
- :class:`StatelessHook`: the serialization of a hook that takes no parameters.
- :class:`RunBound`: what the run's ``before_run`` hook looks for among the run's tools to hand them the run.
- :func:`with_hooks`: a factory's hooks with the caller's own Haystack hooks (``hooks=``) after them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from haystack.components.agents.state import State
from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.hooks import VALID_HOOK_POINTS

from haystack_deep_research.errors import ConfigurationError
from haystack_deep_research.run.phases import Phase, drive, drive_async

if TYPE_CHECKING:
    from haystack_deep_research.run.view import RunView

__all__ = ["PhaseHook", "RunBound", "StatelessHook", "UsesModels", "with_hooks"]


class UsesModels:
    """A mixin forwarding the lifecycle calls of Haystack components to the models and agents it uses."""

    def _used_models(self) -> Iterable[Any]:
        """:returns: The chat generators and agents this object calls."""
        return ()

    def warm_up(self) -> None:
        """Warm up every model this object uses."""
        for model in self._used_models():
            if hasattr(model, "warm_up"):
                model.warm_up()

    async def warm_up_async(self) -> None:
        """Warm up every model this object uses, on the serving event loop."""
        for model in self._used_models():
            if hasattr(model, "warm_up_async"):
                await model.warm_up_async()
            elif hasattr(model, "warm_up"):
                model.warm_up()

    def close(self) -> None:
        """Release the resources of every model this object uses."""
        for model in self._used_models():
            if hasattr(model, "close"):
                model.close()

    async def close_async(self) -> None:
        """Release the resources of every model this object uses, on the serving event loop."""
        for model in self._used_models():
            if hasattr(model, "close_async"):
                await model.close_async()
            elif hasattr(model, "close"):
                model.close()


class PhaseHook(UsesModels):
    """
    A hook written once as a phase: :meth:`phase` holds the logic, ``run`` and ``run_async`` drive it.
    ``max_concurrency`` (a class attribute) bounds the calls of one batch of the phase running at once.
    """

    max_concurrency: int = 5

    def phase(self, state: State) -> Phase[None]:
        """
        The hook's work.

        :param state: The agent's live State.
        :returns: The phase.
        """
        raise NotImplementedError

    def run(self, state: State) -> None:
        """
        Run the hook against the live State.

        :param state: The agent's live State.
        """
        drive(self.phase(state), max_concurrency=self.max_concurrency)

    async def run_async(self, state: State) -> None:
        """
        Run the hook against the live State without blocking the event loop.

        :param state: The agent's live State.
        """
        await drive_async(self.phase(state), max_concurrency=self.max_concurrency)


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


@runtime_checkable
class RunBound(Protocol):
    """A tool that works inside a run: the run's ``before_run`` hook hands it the run's view."""

    def attach_run(self, view: RunView) -> bool:
        """
        Take the run's view.

        :param view: The view.
        :returns: ``False`` when the tool is shared by several runs (not spawned for this one) and did not take it.
        """
        ...


def with_hooks(library: Mapping[Any, list[Any]], given: Any, *, factory: str) -> dict[Any, list[Any]]:
    """
    The hooks of an agent a factory builds: the library's, with the caller's own after them at each hook point (the
    library's open the run first and close it first, so the caller's see it open, and see its report).

    :param library: The library's hooks, by hook point.
    :param given: The caller's ``hooks=``: a dict of Haystack hook point to a list of Haystack hooks, or ``None``.
    :param factory: The factory's name, for the messages.
    :returns: The merged hooks (``library`` itself without any of the caller's).
    :raises ConfigurationError: If ``given`` is not such a dict, names an unknown hook point, or holds something that
        is not a hook of that point.
    """
    if not given:
        return dict(library)
    if not isinstance(given, Mapping):
        raise ConfigurationError(
            f"{factory}(hooks=...) must be a dict of hook point to a list of Haystack hooks, for example "
            f"{{'after_run': [my_hook]}}; got {type(given).__name__}."
        )
    merged = {point: list(hooks) for point, hooks in library.items()}
    for point, hooks in given.items():
        if point not in VALID_HOOK_POINTS:
            raise ConfigurationError(
                f"{factory}(hooks=...) names the hook point {point!r}; Haystack's hook points are "
                f"{', '.join(VALID_HOOK_POINTS)}."
            )
        listed = list(hooks) if isinstance(hooks, list | tuple) else [hooks]
        for hook in listed:
            allowed = getattr(hook, "allowed_hook_points", None)
            if not callable(getattr(hook, "run", None)) or (allowed is not None and point not in allowed):
                raise ConfigurationError(
                    f"{factory}(hooks={{{point!r}: ...}}) holds {type(hook).__name__}, which is not a Haystack hook "
                    f"of {point!r} (an object with run(state), or a function decorated with haystack.hooks.hook)."
                )
        merged[point] = [*merged.get(point, []), *listed]
    return merged
