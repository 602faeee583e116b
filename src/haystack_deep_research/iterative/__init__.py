"""
The iterative research agent's steps: Haystack components that ``create_iterative_research_agent`` wires into a
Pipeline with a loop (start, then router → decide → search up to ``depth`` times, then write → finish): the seed's
depth workflow.

Each step works inside one :class:`~haystack_deep_research.run.ResearchRun`, carried along the Pipeline's edges in
an :class:`IterationRun`; the steps hold no per-run data.
"""

from haystack_deep_research.iterative.decide import DecideStep
from haystack_deep_research.iterative.finish import PREVIOUS_REPORT_FILE, IterativeFinishStep
from haystack_deep_research.iterative.router import RoundRouter
from haystack_deep_research.iterative.search import SearchStep
from haystack_deep_research.iterative.start import StartStep
from haystack_deep_research.iterative.write import WriteStep

__all__ = [
    "PREVIOUS_REPORT_FILE",
    "DecideStep",
    "IterativeFinishStep",
    "RoundRouter",
    "SearchStep",
    "StartStep",
    "WriteStep",
]
