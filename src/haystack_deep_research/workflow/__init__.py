"""
The research workflow's steps: Haystack components that ``create_research_workflow`` wires into a Pipeline with a
quality loop (Execute → Causal inference → Summarize → Grounding eval → done, or Regenerate / Replan and round again).
Each step works in the run carried along the edges in a :class:`WorkflowRun`; the steps hold no per-run data.
"""

from haystack_deep_research.workflow.execute import ExecuteStep, execute_agent

__all__ = ["ExecuteStep", "execute_agent"]
