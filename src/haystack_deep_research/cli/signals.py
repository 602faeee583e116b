"""
SIGTERM, what ``timeout``, systemd and Kubernetes send to stop a process, ends a command exactly as Ctrl-C does.

:func:`sigterm_interrupts` installs a SIGTERM handler for the duration of a command (in the main thread only; the
previous handler comes back after). The handler calls the current SIGINT handler, so a SIGTERM takes the path of a
Ctrl-C: under :func:`asyncio.run` the run's task is cancelled, elsewhere ``KeyboardInterrupt`` is raised. What was
gathered is then saved as a partial report (``-o``, ``--json``, ``--sources``, the run directory) and the command
exits with :attr:`~haystack_deep_research.cli.exit_codes.ExitCode.TERMINATED` (143, 128 + SIGTERM) instead of 130.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import FrameType

__all__ = ["Termination", "sigterm_interrupts"]


@dataclass
class Termination:
    """
    Whether a SIGTERM arrived while the command ran.

    :param received: ``True`` once one did.
    """

    received: bool = False


@contextmanager
def sigterm_interrupts() -> Iterator[Termination]:
    """
    Turn SIGTERM into the interruption Ctrl-C causes, while the block runs (see the module docstring).

    :returns: A context manager yielding the :class:`Termination` that records whether a SIGTERM arrived.
    """
    termination = Termination()
    if threading.current_thread() is not threading.main_thread():  # signal handlers belong to the main thread
        yield termination
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        termination.received = True
        on_sigint = signal.getsignal(signal.SIGINT)
        if callable(on_sigint):  # asyncio's own handler (cancels the run's task) or Python's (KeyboardInterrupt)
            on_sigint(signal.SIGINT, frame)
        else:  # SIGINT ignored or left to the system: interrupt all the same
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield termination
    finally:
        signal.signal(signal.SIGTERM, previous)
