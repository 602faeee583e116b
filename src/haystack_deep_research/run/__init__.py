"""
The run layer: one :class:`ResearchRun` per run and the views of it (:class:`RunView`), the per-run inputs every shape
takes (:class:`RunInputs`), iterating a run's events (:class:`EventStream`), the cross-run cache
(:class:`ResearchCache`), record and replay, and what usage costs (:func:`usage_cost`). A hook or tool of your own
finds the open run with :func:`current_run`; a question is at most :data:`MAX_QUESTION_CHARS` characters.
"""

from haystack_deep_research.run._budget import usage_cost
from haystack_deep_research.run._cache import Recording, RecordingChatGenerator, ReplayChatGenerator, ResearchCache
from haystack_deep_research.run._lifecycle import MAX_QUESTION_CHARS, EventStream, RunInputs, current_run
from haystack_deep_research.run._research_run import ResearchRun, RunView

__all__ = [
    "MAX_QUESTION_CHARS",
    "EventStream",
    "Recording",
    "RecordingChatGenerator",
    "ReplayChatGenerator",
    "ResearchCache",
    "ResearchRun",
    "RunInputs",
    "RunView",
    "current_run",
    "usage_cost",
]
