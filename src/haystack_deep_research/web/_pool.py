"""
The pool of parser processes (``_worker.py``) and the watchdog that stops what Python cannot interrupt. One watchdog
thread runs short actions at given times (:func:`call_at`): shutting a socket down or killing a parser process
releases a call blocked on it, and a deadline costs a heap entry, not a thread. Each document goes to an idle parser
process, which the watchdog kills at its deadline, and a replacement starts at once; one that idles five minutes
exits. :func:`start` launches two ahead of need. :func:`waiting_threads` gives the thread pools of calls that mostly
wait (name lookups, parses). docs/safety.md ("Extraction ends on time and within its memory") gives the figures.
"""

from __future__ import annotations

import atexit
import contextlib
import heapq
import itertools
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

from haystack_deep_research.errors import ExtractionError
from haystack_deep_research.web._worker import IDLE_EXIT, FrameError, encode_frame, read_frame

_logger = logging.getLogger(__name__)


class Alarm:
    """An action scheduled by :func:`call_at`; it runs on the watchdog thread and must return quickly."""

    def __init__(self, when: float, action: Callable[[], None]) -> None:
        self.when = when
        self.action: Callable[[], None] | None = action  # None once cancelled or taken to run

    def cancel(self) -> None:
        self.action = None


class _Watchdog:
    def __init__(self) -> None:
        self.pid = os.getpid()
        self._changed = threading.Condition()
        self._heap: list[tuple[float, int, Alarm]] = []
        self._order = itertools.count()
        threading.Thread(target=self._serve, name="haystack-deep-research-watchdog", daemon=True).start()

    def schedule(self, alarm: Alarm) -> None:
        with self._changed:
            heapq.heappush(self._heap, (alarm.when, next(self._order), alarm))
            if self._heap[0][2] is alarm:
                self._changed.notify()

    def _serve(self) -> None:
        while True:
            with self._changed:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    while self._heap and self._heap[0][2].action is None:  # finished guards leave no work behind
                        heapq.heappop(self._heap)
                    self._changed.wait(self._heap[0][0] - time.monotonic() if self._heap else None)
                alarm = heapq.heappop(self._heap)[2]
                action, alarm.action = alarm.action, None
            if action is None:
                continue
            try:
                action()
            except Exception:  # one failing action must not stop the deadlines of every other fetch
                _logger.exception("A deadline action of the web layer failed.")


_watchdog_lock = threading.Lock()
_watchdog: _Watchdog | None = None


def call_at(when: float, action: Callable[[], None]) -> Alarm:
    """Run a quick ``action`` on the watchdog thread at ``when`` (``time.monotonic()``) unless it is cancelled."""
    global _watchdog  # noqa: PLW0603 - one watchdog per process, started on first use
    alarm = Alarm(when, action)
    with _watchdog_lock:
        if _watchdog is None or _watchdog.pid != os.getpid():  # a forked child has no watchdog thread
            _watchdog = _Watchdog()
        watchdog = _watchdog
    watchdog.schedule(alarm)
    return alarm


_pools_lock = threading.Lock()
_pools: dict[str, tuple[int, ThreadPoolExecutor]] = {}


def waiting_threads(name: str, size: int) -> ThreadPoolExecutor:
    """
    The process's thread pool ``name`` of at most ``size`` threads: these waits never fill the event loop's default
    executor, and one kind stuck (a resolver that never answers) never delays the other.
    """
    with _pools_lock:
        entry = _pools.get(name)
        if entry is None or entry[0] != os.getpid():  # a forked child has none of the pool's threads
            entry = (os.getpid(), ThreadPoolExecutor(max_workers=size, thread_name_prefix=name))
            _pools[name] = entry
        return entry[1]


_MAX_WORKERS = max(2, min(8, os.cpu_count() or 2))
_AHEAD = 2
_STARTUP_LIMIT = 60.0
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
    """A parser process, started at once; it reports ``{"ready": True}`` once its parsers are imported."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(  # noqa: S603 - this interpreter, with a fixed program
            [sys.executable, "-P", "-c", _BOOT, str(_WEB_DIR.parent), str(_WEB_DIR), str(_WEB_DIR.parent / "sources")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            bufsize=0,
            start_new_session=True,  # Ctrl-C at a terminal stops the caller, not the parsers it waits on
        )
        self.stdin = cast(IO[bytes], self.process.stdin)
        self.stdout = cast(IO[bytes], self.process.stdout)
        self.ready = False

    def kill(self) -> None:
        with contextlib.suppress(OSError):  # it may have exited already
            self.process.kill()

    def close(self) -> None:
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
        self._alarm = call_at(when, lambda: self.fire(reason, generation))

    def stop(self) -> str | None:
        """Disarm; returns why the worker was killed, if it was."""
        with self._lock:
            self._generation += 1
            if self._alarm is not None:
                self._alarm.cancel()
            return self.reason

    def fire(self, reason: str, generation: int | None = None) -> None:
        """Kill the worker for ``reason`` now, or for the deadline of ``generation`` if it is still the one armed."""
        with self._lock:
            if generation in (None, self._generation) and self.reason is None:
                self.reason = reason
                self._worker.kill()


class Ticket:
    """Lets an awaiting coroutine that was cancelled stop the parse it asked for."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.cancelled = False
        self._stop: Stopwatch | None = None

    def cancel(self) -> None:
        """Stop waiting for a process, or kill the one parsing the document."""
        with self._lock:
            self.cancelled = True
            stop = self._stop
        if stop is not None:
            stop.fire("cancelled")
        _pool().wake()

    def watch(self, stop: Stopwatch | None) -> None:
        with self._lock:
            self._stop = stop
        if stop is not None and self.cancelled:
            stop.fire("cancelled")


def parse(
    header: dict[str, Any],
    body: bytes,
    *,
    url: str,
    asked_url: str,
    timeout: float,
    deadline_s: float | None,
    ticket: Ticket,
) -> tuple[dict[str, Any], bytes]:
    """
    A parser process's answer, within ``timeout`` seconds of work and ``deadline_s`` in all (waiting for a process
    included), cancelled by ``ticket``; an ExtractionError when it took too long, ran out of memory or failed.
    """
    started = time.monotonic()
    caller_end = started + deadline_s if deadline_s is not None else None
    limits = _Limits(url, asked_url, timeout, deadline_s, caller_end)
    request = encode_frame(header, body)
    for _attempt in range(3):  # a process that idled out just as it was picked is replaced and the request resent
        answer = _pool().run(request, limits, ticket)
        if answer is not None:
            return answer
    raise ExtractionError(f"The parser processes kept exiting before reading {url}.", url=asked_url)


_NOT_STARTED = (
    "The parser process to read {url} did not start (it {how}); check that {python} can import lxml, trafilatura "
    "and pypdf."
)
# Why a document was not read, by the reason a parse ended.
_MESSAGES = {
    "timeout": "Extracting the text of {url} took longer than the {timeout:g} seconds allowed "
    "(FetchLimits.extraction_timeout); the document was not read.",
    "caller": "Extracting the text of {url} was stopped when the caller's deadline of {deadline_s:g} seconds ran out.",
    "cancelled": "Extracting the text of {url} was cancelled.",
    "memory": "Extracting the text of {url} needed more memory than allowed (FetchLimits.max_extraction_memory); "
    "the document was not read.",
    "spawn": "No parser process could be started to read {url} ({detail}); check that {python} can be run.",
    "startup": _NOT_STARTED.replace("{how}", f"took over {_STARTUP_LIMIT:g} seconds"),
    "startup_failed": _NOT_STARTED.replace("{how}", "exited with {status}"),
    "crashed": "The parser process stopped while reading {url} (exit status {status}); the document was not read.",
}


@dataclass(frozen=True)
class _Limits:
    url: str
    asked_url: str
    timeout: float
    deadline_s: float | None
    caller_end: float | None

    def error(self, reason: str, status: int | None = None, *, detail: str = "") -> ExtractionError:
        values = {"python": sys.executable, "status": status, "detail": detail}
        return ExtractionError(_MESSAGES[reason].format(**vars(self), **values), url=self.asked_url)


class _Pool:
    def __init__(self) -> None:
        self.pid = os.getpid()
        self._changed = threading.Condition()
        self._idle: list[Worker] = []
        self._count = 0
        atexit.register(self.close)

    def wake(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def start(self) -> None:
        with self._changed:
            # Those idle, starting or parsing serve the next documents; researchers read their first pages side by
            # side, so two start ahead (more start when needed) and the first two pages wait for no parser to boot.
            while self._count < _AHEAD:
                try:
                    self._idle.append(Worker())
                except OSError:  # if it cannot start now, the first document says why
                    return
                self._count += 1
                self._changed.notify()

    def started(self) -> bool:
        with self._changed:
            return self._count > 0

    def run(self, request: bytes, limits: _Limits, ticket: Ticket) -> tuple[dict[str, Any], bytes] | None:
        worker = self._acquire(limits, ticket)
        stop = Stopwatch(worker)
        ticket.watch(stop)
        answer: tuple[dict[str, Any], bytes] | None = None
        starting = not worker.ready
        try:
            if starting:
                caller_end = limits.caller_end if limits.caller_end is not None else float("inf")
                startup_end = time.monotonic() + _STARTUP_LIMIT
                stop.arm(min(startup_end, caller_end), "startup" if startup_end <= caller_end else "caller")
                if read_frame(worker.stdout) != ({"ready": True}, b""):
                    raise FrameError("The parser process did not report that it is ready.")
                worker.ready = True
                starting = False
            work_end = time.monotonic() + limits.timeout
            caller_end = limits.caller_end if limits.caller_end is not None else float("inf")
            stop.arm(min(work_end, caller_end), "timeout" if work_end <= caller_end else "caller")
            worker.stdin.write(request)
            answer = read_frame(worker.stdout)
        except (OSError, FrameError):
            answer = None
        finally:
            ticket.watch(None)
            reason = stop.stop()
            healthy = (
                answer is not None
                and reason is None
                and not answer[0].get("out_of_memory")
                and not answer[0].get("retire")
            )
            self._release(worker, healthy=healthy)
        if answer is not None:
            if "out_of_memory" in answer[0]:
                raise limits.error("memory")
            return answer
        status = worker.process.wait()
        if reason is None and status == IDLE_EXIT:
            return None  # it had just quit for idling: try again with another process
        if reason is None and starting:
            reason = "startup_failed"
        raise limits.error(reason or "crashed", status)

    def close(self) -> None:
        with self._changed:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.close()

    def _acquire(self, limits: _Limits, ticket: Ticket) -> Worker:
        with self._changed:
            while True:
                if ticket.cancelled:
                    raise limits.error("cancelled")
                left = None if limits.caller_end is None else limits.caller_end - time.monotonic()
                if left is not None and left <= 0:
                    raise limits.error("caller")
                while self._idle:
                    worker = self._idle.pop()
                    if worker.process.poll() is None:
                        return worker
                    self._count -= 1  # it quit for idling
                    worker.close()
                if self._count < _MAX_WORKERS:
                    try:
                        worker = Worker()
                    except OSError as exc:
                        raise limits.error("spawn", detail=str(exc)) from exc
                    self._count += 1
                    return worker
                self._changed.wait(left)

    def _release(self, worker: Worker, *, healthy: bool) -> None:
        if not healthy:
            worker.close()
        with self._changed:
            if healthy:
                self._idle.append(worker)
            else:
                self._count -= 1
                with contextlib.suppress(OSError):  # if no replacement starts now, one starts when needed
                    self._idle.append(Worker())  # a replacement loads its parsers before anyone needs it
                    self._count += 1
            self._changed.notify()


_lock = threading.Lock()
_current: _Pool | None = None


def start() -> None:
    """
    Start two parser processes ahead of the first documents unless there are; returns at once. One that cannot start is
    no error here: the first document tries again and says why.
    """
    _pool().start()


def started() -> bool:
    """:returns: Whether this process has a parser process (idle, starting or at work)."""
    return _pool().started()


def _pool() -> _Pool:
    global _current  # noqa: PLW0603 - one pool per process, made on first use
    with _lock:
        if _current is None or _current.pid != os.getpid():  # a forked child must not share its parent's processes
            _current = _Pool()
        return _current
