"""One parser process (see ``_worker.py``), and the stopwatch that kills it when a deadline passes."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO

from haystack_deep_research.web._watchdog import Alarm, call_at

__all__ = ["Stopwatch", "Worker"]

_WEB_DIR = Path(__file__).resolve().parent
# Register the packages as empty modules, so that importing the worker does not run their __init__ (Haystack).
_BOOT = (
    "import sys, types\n"
    "for part, path in (('', sys.argv[1]), ('.web', sys.argv[2]), ('.sources', sys.argv[3])):\n"
    "    name = 'haystack_deep_research' + part\n"
    "    module = types.ModuleType(name)\n"
    "    module.__path__ = [path]\n"
    "    sys.modules[name] = module\n"
    "from haystack_deep_research.web._worker import main\n"
    "main()\n"
)


class Worker:
    """
    A parser process, started at once; it reports ``{"ready": True}`` once its parsers are imported.

    :raises OSError: The interpreter could not be started.
    """

    def __init__(self) -> None:
        self.process = subprocess.Popen(  # noqa: S603 - this interpreter, with a fixed program
            [sys.executable, "-P", "-c", _BOOT, str(_WEB_DIR.parent), str(_WEB_DIR), str(_WEB_DIR.parent / "sources")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
            start_new_session=True,  # Ctrl-C at a terminal stops the caller, not the parsers it waits on
        )
        self.ready = False

    @property
    def stdin(self) -> IO[bytes]:
        assert self.process.stdin is not None
        return self.process.stdin

    @property
    def stdout(self) -> IO[bytes]:
        assert self.process.stdout is not None
        return self.process.stdout

    def kill(self) -> None:
        """Kill the process; safe to call from any thread, and more than once."""
        with contextlib.suppress(OSError):  # it may have exited already
            self.process.kill()

    def close(self) -> None:
        """Kill the process, reap it and close its pipes."""
        self.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()


class Stopwatch:
    """Kills a worker at a deadline and remembers which deadline it was."""

    def __init__(self, worker: Worker) -> None:
        self._worker = worker
        self._lock = threading.Lock()
        self._generation = 0
        self._alarm: Alarm | None = None
        self.reason: str | None = None

    def arm(self, when: float, reason: str) -> None:
        """Kill the worker at ``when`` (``time.monotonic()``) for ``reason``, replacing any earlier deadline."""
        with self._lock:
            self._generation += 1
            generation = self._generation
            if self._alarm is not None:
                self._alarm.cancel()
        self._alarm = call_at(when, lambda: self._fire(generation, reason))

    def stop(self) -> str | None:
        """Disarm; returns why the worker was killed, if it was."""
        with self._lock:
            self._generation += 1
            if self._alarm is not None:
                self._alarm.cancel()
            return self.reason

    def fire_now(self, reason: str) -> None:
        """Kill the worker now, for ``reason``."""
        with self._lock:
            self._kill(reason)

    def _fire(self, generation: int, reason: str) -> None:
        with self._lock:
            if generation == self._generation:
                self._kill(reason)

    def _kill(self, reason: str) -> None:
        if self.reason is None:
            self.reason = reason
            self._worker.kill()
