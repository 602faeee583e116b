"""
Every error the library raises on purpose.

Errors are split by whose fault they are: a usage mistake the caller can fix by changing a call, or a
failure during a run that the caller can retry, configure around or report::

    DeepResearchError
    ├── UsageError (also a ValueError)          the caller can fix it by changing the call
    │   ├── ConfigurationError                  a bad parameter to a factory, tool or policy
    │   │   ├── MissingExtraError               an optional integration's package is not installed
    │   │   └── SearchShapeError                a search tool or component answers a shape the library cannot read
    │   ├── ConfigFileError                     a command-line config file or variable is unusable (kind, size,
    │   │                                       unknown key, bad value)
    │   ├── InvalidQuestionError                bad input to ``run`` / ``run_async``
    │   ├── MissingCredentialsError             an API key is not set
    │   ├── RecordingError                      a recording to replay is damaged or not one this library wrote
    │   ├── RunDirError                         the run directory given to resume a run cannot be used
    │   │   └── RunDirInUseError                another run is using that run directory
    │   ├── ScanInUseError                      another scan is writing the same results file
    │   └── RequestRefusedError                 a server refused a request: another site's page, or no valid token
    └── ResearchRunError                        something failed while a run was under way
        ├── ToolArgumentsError                  a model called a tool with missing or wrongly typed arguments
        ├── DelegationLimitError                the orchestrator asked for more than max_subtopics sub-topics
        ├── BudgetExceededError                 the run's token or time budget is spent; no new research starts
        │   └── DeadlineExceededError           a model call was still running when the time budget ran out
        ├── StructuredOutputError               the report could not be turned into valid structured output
        ├── ScratchSpaceError                   a scratch-space file operation was refused (path, size, missing file)
        ├── SearchError                         the search service failed or answered garbage
        │   └── MCPServerError                  an MCP server did not start, or a call to it failed or timed out
        ├── ReplayMissError                     a replayed run asked something its recording does not hold
        ├── LocalFileRefusedError               a local file was not read: not a regular file, outside its folder,
        │                                       or over its size cap (also an OSError)
        ├── ResearchFailedError                 a run ended with a failing exit_reason (a scan records it as failed)
        ├── ModelServerError                    the model server cannot be reached, or does not serve the API there
        └── FetchError                          a URL could not be read
            ├── URLRefusedError                 the URL policy refused the URL (or a redirect hop)
            ├── ContentTooLargeError            the body exceeded the download cap
            ├── FetchTimeoutError               connect, read or total time ran out
            ├── UnsupportedContentError         a content type the library does not read
            └── ExtractionError                 the body could not be turned into text

Inside a run most ``ResearchRunError`` cases never reach the caller: a tool turns them into a tool result the
model can react to, and a failing phase is recorded in ``exit_reason`` and ``warnings``.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BudgetExceededError",
    "ConfigFileError",
    "ConfigurationError",
    "ContentTooLargeError",
    "DeadlineExceededError",
    "DeepResearchError",
    "DelegationLimitError",
    "ExtractionError",
    "FetchError",
    "FetchTimeoutError",
    "InvalidQuestionError",
    "LocalFileRefusedError",
    "MCPServerError",
    "MissingCredentialsError",
    "MissingExtraError",
    "ModelServerError",
    "RecordingError",
    "ReplayMissError",
    "RequestRefusedError",
    "ResearchFailedError",
    "ResearchRunError",
    "RunDirError",
    "RunDirInUseError",
    "ScanInUseError",
    "ScratchSpaceError",
    "SearchError",
    "SearchShapeError",
    "StructuredOutputError",
    "ToolArgumentsError",
    "URLRefusedError",
    "UnsupportedContentError",
    "UsageError",
]


class DeepResearchError(Exception):
    """Base class of every error raised on purpose by haystack-deep-research."""


class UsageError(DeepResearchError, ValueError):
    """The caller used the library in a way it does not support; the message says what to change."""


class ConfigurationError(UsageError):
    """A parameter given to a factory, tool or policy is outside its allowed values."""


class MissingExtraError(ConfigurationError):
    """
    An optional integration needs a package that is not installed; the message names the extra to install.

    :param feature: What needs it, for example "Qdrant datastores".
    :param extra: The extra of haystack-deep-research that installs it.
    :param module: The module that could not be imported.
    """

    def __init__(self, feature: str, *, extra: str, module: str) -> None:
        super().__init__(
            f"{feature} need the '{module}' package, which is not installed. Install it with "
            f"`pip install haystack-deep-research[{extra}]`."
        )
        self.feature = feature
        self.extra = extra
        self.module = module


SEARCH_SHAPES = (
    "text with one URL per result (title, `URL: ...` and snippet per result as Haystack's TavilyWebSearchTool "
    "renders them, `Source: ...` lines, markdown `[title](url)` lists, numbered lists of bare URLs), a list of "
    "dictionaries (url / link / href, title / name, content / snippet / body), a list of Haystack Documents (URL in "
    "meta['url'] or meta['link']), or a web-search component's output {'documents': [...], 'links': [...]}"
)
"""The answers a search tool or component may give, as :class:`SearchShapeError` names them."""


class SearchShapeError(ConfigurationError):
    """
    A search tool or component answers (or is declared to answer) a shape the library cannot read into results.

    :param got: What it answered, for example "int" or "a list holding object".
    """

    def __init__(self, got: str) -> None:
        super().__init__(
            f"the search answered {got}, which the library cannot read into results. A search tool or component "
            f"must answer {SEARCH_SHAPES}; change it to return one of these."
        )
        self.got = got


class ConfigFileError(UsageError):
    """
    The command line's TOML file is not a regular file, over its size cap or not TOML, or a key of it or a
    ``DEEP_RESEARCH_*`` variable is unknown or bad; the message names the file or variable, the key, what is accepted.
    """


class InvalidQuestionError(UsageError):
    """The input to ``run`` / ``run_async`` holds no question to research."""


class MissingCredentialsError(UsageError):
    """An API key the default clients need is not set."""


class RecordingError(UsageError):
    """A recording to replay (its ``exchanges.jsonl`` or ``recording.json``) is damaged or not one the library wrote."""


class RunDirError(UsageError):
    """The run directory passed to resume a run is not a usable directory, or holds a run of another question."""


class RunDirInUseError(RunDirError):
    """Another run, in this process or another, holds the run directory's lock; one run at a time may use it."""


class ScanInUseError(UsageError):
    """Another scan, in this process or another, holds the results file's lock; one scan at a time may write it."""


class RequestRefusedError(UsageError):
    """
    A server of the library refused an HTTP request before any research started: from a web page of an origin not
    allowed, or without the bearer token the server requires.

    :param message: What was refused and how to be let in.
    :param status_code: The HTTP status to answer: 401 (no or wrong token) or 403 (a refused origin).
    """

    def __init__(self, message: str, *, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class ResearchRunError(DeepResearchError):
    """Something failed while a research run was under way."""


class ResearchFailedError(ResearchRunError):
    """
    A research run returned, but its ``exit_reason`` says it failed (its writer or its structured output failed).

    :param exit_reason: The run's exit reason.
    :param detail: What the run's warnings say about it.
    :param partial: What the run gathered all the same (JSON-ready), kept with the failure.
    """

    def __init__(self, exit_reason: str, detail: str = "", partial: dict[str, Any] | None = None) -> None:
        why = f": {detail}" if detail else ""
        super().__init__(
            f"the research ended with exit_reason {exit_reason!r}{why}. Check the model's key, quota and "
            "endpoint; a rerun tries this item again."
        )
        self.exit_reason = exit_reason
        self.detail = detail
        self.partial = partial


class ModelServerError(ResearchRunError):
    """
    The model server cannot be reached (nothing listens, no route, no answer in time), or does not serve the API at
    that address (HTTP 404 or 405); nothing was researched.

    :param message: Which server at which address, and what happened.
    :param url: The address that was tried.
    """

    def __init__(self, message: str, *, url: str) -> None:
        super().__init__(message)
        self.url = url


class ToolArgumentsError(ResearchRunError):
    """A model called a tool with missing or wrongly typed arguments; the tool result tells the model the fix."""


class DelegationLimitError(ResearchRunError):
    """The orchestrator delegated more sub-topics than ``max_subtopics`` allows; the extra one was not run."""


class BudgetExceededError(ResearchRunError):
    """The run's token or time budget is spent, so a new sub-topic was not researched."""


class DeadlineExceededError(BudgetExceededError):
    """
    A model call was still running when the run's time budget ran out; the run stopped waiting for it (the call is
    abandoned, not awaited) and ends with what it gathered. Pass a larger ``Budgets(seconds=...)``, or a faster model or
    server, or a smaller ``timeout`` to the chat generator so that a stuck server fails sooner.
    """


class StructuredOutputError(ResearchRunError):
    """
    The writer model's JSON for ``output_schema`` failed validation twice (the retry showed it the errors).

    :param message: What failed.
    :param raw_text: The model's last reply, as it was.
    :param errors: The validation errors of that reply, as pydantic lists them.
    :param report: The final report, so the research is not lost.
    """

    def __init__(
        self, message: str, *, raw_text: str = "", errors: list[dict[str, Any]] | None = None, report: str = ""
    ) -> None:
        super().__init__(message)
        self.raw_text = raw_text
        self.errors = list(errors or [])
        self.report = report


class ScratchSpaceError(ResearchRunError):
    """A scratch-space file operation was refused or failed (a path outside the space, over a limit, missing, ...)."""


class SearchError(ResearchRunError):
    """The web search service failed, refused the request, or answered something that is not a result list."""


class MCPServerError(SearchError):
    """An MCP server did not start, answer in time or serve a call; the message names it and what to check."""


class ReplayMissError(ResearchRunError):
    """A run replayed from a recording asked a model or a tool something the recording does not hold."""


class LocalFileRefusedError(ResearchRunError, OSError):
    """
    A local file was not read or written (see docs/safety.md): not a regular file, resolving outside its folder, a
    symbolic link where none is followed, or over its size cap; the message names the file and the reason. An
    ``OSError``, so code that treats an unreadable file as a miss treats a refused one the same way.

    :param message: What was refused and why.
    :param path: The file, as given.
    :param reason: ``"not_regular"``, ``"outside_root"``, ``"symlink"`` or ``"too_large"``.
    """

    def __init__(self, message: str, *, path: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class FetchError(ResearchRunError):
    """A URL could not be read. ``url`` is the URL that was asked for."""

    def __init__(self, message: str, *, url: str = "") -> None:
        super().__init__(message)
        self.url = url


class URLRefusedError(FetchError):
    """The URL policy refused the URL or one of its redirect hops."""


class ContentTooLargeError(FetchError):
    """The response body exceeded the download size cap."""


class FetchTimeoutError(FetchError):
    """The connect, read or total time limit ran out."""


class UnsupportedContentError(FetchError):
    """The response has a content type the library does not read."""


class ExtractionError(FetchError):
    """The response body could not be turned into text (for example a malformed or encrypted PDF)."""
