"""
The exit status of ``deep-research``, and how an error becomes one line on stderr.

=====  ==========================================================================================
code   meaning
=====  ==========================================================================================
0      the report was written (``exit_reason`` says how the run ended: a spent budget still writes)
1      the run failed: a provider, network or model error ended it before a report was written
2      a usage error: a bad option, a missing key, an unusable path; nothing was run
3      ``--clarify`` without a terminal: the clarifying question was printed; run again with the answer
130    interrupted (Ctrl-C): what was gathered was saved as a partial report
143    terminated (SIGTERM, as ``timeout``, systemd and Kubernetes send): saved exactly as for Ctrl-C
=====  ==========================================================================================
"""

from __future__ import annotations

from enum import IntEnum

from haystack_deep_research.errors import DeepResearchError, UsageError

__all__ = ["ExitCode", "error_line", "exit_code_of"]


class ExitCode(IntEnum):
    """The exit status of ``deep-research`` (see the module docstring)."""

    OK = 0
    RUN_FAILED = 1
    USAGE = 2
    CLARIFICATION_NEEDED = 3
    INTERRUPTED = 130
    TERMINATED = 143


def exit_code_of(error: BaseException) -> ExitCode:
    """
    :param error: What ended the command.
    :returns: :attr:`ExitCode.USAGE` for a mistake the user can fix in the command, else :attr:`ExitCode.RUN_FAILED`.
    """
    return ExitCode.USAGE if isinstance(error, UsageError) else ExitCode.RUN_FAILED


def error_line(error: BaseException, *, command: str = "deep-research") -> str:
    """
    :param error: What ended the command.
    :param command: The command's name, as the user typed it.
    :returns: The error as the one line the command prints: the library's own message for an error it raised on
        purpose, the error's type and message for a provider or network failure.
    """
    if isinstance(error, DeepResearchError):
        return f"{command}: error: {error}"
    return f"{command}: error: the run failed: {type(error).__name__}: {error}"
