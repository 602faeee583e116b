"""
SIGTERM, what ``timeout``, systemd and Kubernetes send to stop a process, ends a command exactly as Ctrl-C does.

:func:`sigterm_interrupts` installs a SIGTERM handler for the duration of a command (in the main thread only; the
previous handler comes back after). The handler calls the current SIGINT handler, so a SIGTERM takes the path of a
Ctrl-C: under :func:`asyncio.run` the run's task is cancelled, elsewhere ``KeyboardInterrupt`` is raised. What was
gathered is then saved as a partial report (``-o``, ``--json``, ``--sources``, the run directory) and the command
exits with :attr:`~haystack_deep_research.options.exit_codes.ExitCode.TERMINATED` (143, 128 + SIGTERM) instead of 130.
What the command says about it names the signal: :func:`terminated` tells, during the command, whether one arrived.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import FrameType

__all__ = ["Termination", "sigterm_interrupts", "terminated"]


@dataclass
class Termination:
    """
    Whether a SIGTERM arrived while the command ran.

    :param received: ``True`` once one did.
    """

    received: bool = False


_CURRENT: ContextVar[Termination | None] = ContextVar("termination", default=None)


def terminated() -> bool:
    """:returns: Whether a SIGTERM arrived during the command under way (inside :func:`sigterm_interrupts`)."""
    current = _CURRENT.get()
    return current is not None and current.received


@contextmanager
def sigterm_interrupts() -> Iterator[Termination]:
    """
    Turn SIGTERM into the interruption Ctrl-C causes, while the block runs (see the module docstring).

    :returns: A context manager yielding the :class:`Termination` that records whether a SIGTERM arrived.
    """
    termination = Termination()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        termination.received = True
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):  # asyncio's own handler (cancels the run's task) or Python's (KeyboardInterrupt)
            on_sigint(signal.SIGINT, frame)
        else:  # SIGINT ignored or left to the system: interrupt all the same
            raise KeyboardInterrupt

    handles = threading.current_thread() is threading.main_thread()  # signal handlers belong to the main thread
    previous = signal.signal(signal.SIGTERM, interrupt) if handles else None
    token = _CURRENT.set(termination)
    try:
        yield termination
    finally:
        _CURRENT.reset(token)
        if handles:
            signal.signal(signal.SIGTERM, previous)
