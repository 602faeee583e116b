"""
The search log: what one run's searches gave, so that a run that found nothing can say why and a sub-topic that only
repeats an error message is told from a real one; it also remembers the notices given once per run.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

__all__ = ["SearchLog", "SearchOutcome"]

_ERROR_SHAPES = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b\s*:"  # TypeError: ..., SearchError: ...
    r"|^\W*(?:error|exception|traceback)\s*[:(]|^\W*failed to invoke\b"  # "Error: ...", "Failed to invoke Tool ..."
    r"|\b(?:HTTP(?:/\d(?:\.\d)?)?\s*)?[45]\d\d\b\W*(?:bad request|unauthori[sz]ed|forbidden|not found|too many "
    r"requests|internal server error|bad gateway|service unavailable|gateway time-?out|payment required)",
    re.IGNORECASE,
)
_ECHO_CHARS = 24
"""How much of a recorded error a text must repeat, word for word, to be taken for an echo of it."""


@dataclass(frozen=True)
class SearchOutcome:
    """One search: its tool, query, results (0 after an error), error and results dropped by its domains or dates."""

    tool: str
    query: str
    results: int = 0
    error: str = ""
    dropped: int = 0


class SearchLog:
    """The searches of one run, in the order they finished; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._outcomes: list[SearchOutcome] = []
        self._given: set[str] = set()

    def record(self, outcome: SearchOutcome) -> None:
        with self._lock:
            self._outcomes.append(outcome)

    def outcomes(self) -> list[SearchOutcome]:
        """:returns: A copy of the searches recorded so far."""
        with self._lock:
            return list(self._outcomes)

    def first(self, key: str) -> bool:
        """:returns: ``True`` the first time the once-per-run notice ``key`` is asked for, ``False`` afterwards."""
        with self._lock:
            if key in self._given:
                return False
            self._given.add(key)
            return True

    def summary(self) -> str:
        """Why the run has no evidence in a few words ("every search failed"), without error text or queries."""
        outcomes = self.outcomes()
        if not outcomes:
            return "no search was made"
        if all(outcome.error for outcome in outcomes):
            return "every search failed"
        if sum(outcome.results for outcome in outcomes) == 0:
            return "the searches found nothing"
        return "no page or document found could be read"

    def echoes_error(self, text: str) -> bool:
        """Whether a proposed topic is an error message: one the searches failed with, or one in its shape."""
        folded = " ".join(text.split()).casefold()
        if _ERROR_SHAPES.search(" ".join(text.split())):
            return True
        for outcome in self.outcomes():
            error = " ".join(outcome.error.split()).casefold()
            if len(error) >= _ECHO_CHARS and (
                error[:_ECHO_CHARS] in folded or (len(folded) >= _ECHO_CHARS and folded in error)
            ):
                return True
        return False

    def explain(self) -> str:
        """Why the run has no evidence, in one sentence without a final period ("all 3 searches failed (...)")."""
        outcomes = self.outcomes()
        failed = [outcome for outcome in outcomes if outcome.error]
        if not outcomes:
            return "no search was made"
        if len(failed) == len(outcomes):
            last = failed[-1]
            return f"all {len(outcomes)} searches failed (last error, {last.tool}: {last.error})"
        found = sum(outcome.results for outcome in outcomes)
        if found == 0:
            empty = len(outcomes) - len(failed)
            detail = f", {len(failed)} failed (last error, {failed[-1].tool}: {failed[-1].error})" if failed else ""
            return f"{empty} of {len(outcomes)} searches returned no results{detail}"
        return f"the searches returned {found} results, but no page or document could be read"
