"""
The iterative research agent's steps: Haystack components that ``create_iterative_research_agent`` wires into a
Pipeline with a loop (start, then router → decide → search up to ``depth`` times, then write → finish). Each step
works in the run's :class:`~haystack_deep_research.run.ResearchRun`, carried along the edges in an
:class:`IterationRun`; the steps hold no per-run data.
"""

__all__: list[str] = []
