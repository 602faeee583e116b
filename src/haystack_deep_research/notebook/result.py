"""
A run's result that shows itself in a notebook: the report as Markdown, then the sources read as a table (their
titles escaped). It is still the plain dict the Agent returned (a ``dict`` subclass); docs/notebooks.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from haystack_deep_research.errors import MissingExtraError, UsageError
from haystack_deep_research.evidence.text import inert_text
from haystack_deep_research.options.progress import outcome_line
from haystack_deep_research.state import REPORT, SOURCES, WARNINGS

__all__ = ["ResearchResult", "display_result", "in_notebook", "ipython_display"]

_MAX_TITLE = 120


def ipython_display() -> tuple[Any, Any]:
    """
    :returns: IPython's ``display`` function and its ``Markdown`` class.
    :raises MissingExtraError: If IPython (the ``notebook`` extra) is not installed.
    """
    try:
        from IPython.display import Markdown, display
    except ImportError as error:
        raise MissingExtraError("Notebook displays", extra="notebook", module="IPython") from error
    return display, Markdown


def in_notebook() -> bool:
    """:returns: Whether the code runs in an IPython kernel or shell (IPython installed and active)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None


def _link(url: Any) -> str:
    text = str(url or "").strip()
    if not text or any(c in text for c in "<> \n\t") or not re.match(r"^https?://", text):
        return inert_text(text)  # not a plain http(s) URL: shown as text, never as a link
    return f"<{text}>"


class ResearchResult(dict[str, Any]):
    """
    The result of a research run: the same dict the Agent returned, plus notebook display.

    :param result: What ``agent.run(...)`` or ``await agent.run_async(...)`` returned.
    :raises UsageError: If ``result`` is not a mapping with a ``report``.
    """

    def __init__(self, result: Mapping[str, Any]) -> None:
        if not isinstance(result, Mapping) or REPORT not in result:
            got = type(result).__name__ if not isinstance(result, Mapping) else f"keys {sorted(result)[:8]}"
            raise UsageError(f"ResearchResult takes the dict a research run returned (with a 'report'); got {got}.")
        super().__init__(result)

    @classmethod
    def from_run(cls, result: Mapping[str, Any]) -> ResearchResult:
        """
        :param result: What ``agent.run(...)`` or ``await agent.run_async(...)`` returned.
        :returns: The result, wrapped (a result already wrapped is returned as it is).
        :raises UsageError: If ``result`` is not a run's result.
        """
        return result if isinstance(result, ResearchResult) else cls(result)

    @property
    def report(self) -> str:
        """The Markdown report."""
        return str(self.get(REPORT) or "")

    @property
    def pages_read(self) -> list[dict[str, Any]]:
        """The ledger's entries of the pages the run read (search results left out)."""
        return [entry for entry in self.get(SOURCES) or [] if isinstance(entry, dict) and entry.get("kind") == "page"]

    def sources_table(self) -> str:
        """:returns: The pages read as a Markdown table (``#``, title, URL); ``""`` when none was read."""
        pages = self.pages_read
        if not pages:
            return ""
        rows = []
        for index, entry in enumerate(pages, 1):
            title = inert_text(entry.get("title"), limit=_MAX_TITLE) or "(untitled)"
            rows.append(f"| {inert_text(entry.get('id', index))} | {title} | {_link(entry.get('url'))} |")
        return "\n".join(["| # | title | URL |", "|---|---|---|", *rows])

    def summary_line(self) -> str:
        """:returns: One line: exit reason, notes, pages read, warnings and cost."""
        return outcome_line(self)

    def to_markdown(self) -> str:
        """
        :returns: The report, then a "Sources read" table of the pages read, then the summary line and the warnings.
        """
        parts = [self.report.rstrip()]
        table = self.sources_table()
        if table:
            parts.append(f"### Sources read\n\n{table}")
        footer = f"*{inert_text(self.summary_line())}*"
        warnings = [f"- {inert_text(warning)}" for warning in self.get(WARNINGS) or []]
        parts.append("\n".join([footer, *(["", "Warnings:", "", *warnings] if warnings else [])]))
        return "\n\n---\n\n".join(part for part in parts if part)

    def _repr_markdown_(self) -> str:
        """IPython's display hook: the result renders as :meth:`to_markdown`."""
        return self.to_markdown()


def display_result(result: Mapping[str, Any]) -> ResearchResult:
    """
    Show a run's result in the notebook (the report as Markdown, the sources as a table) and return it wrapped.

    :param result: What ``agent.run(...)`` or ``await agent.run_async(...)`` returned.
    :returns: The :class:`ResearchResult`.
    :raises MissingExtraError: If IPython is not installed (``pip install haystack-deep-research[notebook]``).
    :raises UsageError: If ``result`` is not a run's result.
    """
    wrapped = ResearchResult.from_run(result)
    display, markdown = ipython_display()
    display(markdown(wrapped.to_markdown()))
    return wrapped
