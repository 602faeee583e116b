"""
Notebook surfaces: a result that renders itself, and live progress (IPython from the ``notebook`` extra).

::

    from haystack_deep_research.notebook import run_with_progress

    result = await run_with_progress(agent, "How fast is grid battery storage growing?")
    result  # the report as Markdown, then the sources read as a table

The Agent itself returns a plain dict; :meth:`ResearchResult.from_run` wraps one (it stays a dict), and
:func:`display_result` shows one. :class:`LiveProgress` is the event subscriber behind the live progress block.
"""

from haystack_deep_research.notebook.display import LiveProgress, ResearchResult, display_result, run_with_progress

__all__ = ["LiveProgress", "ResearchResult", "display_result", "run_with_progress"]
