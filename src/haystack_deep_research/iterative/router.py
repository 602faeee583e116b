"""
Before each round, :class:`RoundRouter` sends the run on exactly one way (the seed's iteration over ``depth``):

- ``search`` when an update has stale topics to search again (that round is not one of the ``depth`` rounds);
- ``done`` once the run's token, time or cost budget is spent (``exit_reason`` says which; no analysis call is made);
- ``done`` once ``depth`` rounds ran (``exit_reason`` ``depth_reached``);
- ``decide`` otherwise: the analysis model chooses the round's topics, or stops.
"""

from __future__ import annotations

from haystack import component

from haystack_deep_research import _checks
from haystack_deep_research._serialization import InitSerialized
from haystack_deep_research.iterative.iteration import IterationRun
from haystack_deep_research.state import EXIT_DEPTH_REACHED

__all__ = ["RoundRouter"]


@component
class RoundRouter(InitSerialized):
    """
    Route a run before a round (see the module docstring).

    :param depth: The rounds of a run, 1 to 50.
    :raises ConfigurationError: If ``depth`` is out of range.
    """

    def __init__(self, *, depth: int = 3) -> None:
        self.depth = _checks.int_in_range("depth", depth, 1, 50)

    @component.output_types(decide=IterationRun, search=IterationRun, done=IterationRun)
    def run(self, iteration: IterationRun) -> dict[str, IterationRun]:
        """
        :param iteration: The run, between rounds.
        :returns: Exactly one of ``decide``, ``search`` (an update's re-check, in ``planned``) or ``done``.
        """
        run = iteration.run
        if iteration.recheck:
            return {"search": iteration.but(planned=iteration.recheck)}
        if (spent := run.spent()) is not None:  # the run warns once, with a BudgetReached event
            return {"done": iteration.but(exit_reason=spent)}
        if iteration.rounds >= self.depth:
            return {"done": iteration.but(exit_reason=EXIT_DEPTH_REACHED)}
        return {"decide": iteration}
