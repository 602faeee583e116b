"""Thread pools for calls that mostly wait (name lookups, parser processes), kept apart from the caller's own."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["waiting_threads"]

_lock = threading.Lock()
_pools: dict[str, tuple[int, ThreadPoolExecutor]] = {}


def waiting_threads(name: str, size: int) -> ThreadPoolExecutor:
    """
    The process's thread pool called ``name`` (its threads' prefix too) of at most ``size`` threads, made on first use.

    A pool of its own keeps these waits from filling the event loop's default executor, and keeps calls stuck in
    one kind of wait (a resolver that never answers) from delaying the other kind. Idle pools hold no threads.
    """
    with _lock:
        entry = _pools.get(name)
        if entry is None or entry[0] != os.getpid():  # a forked child has none of the pool's threads
            entry = (os.getpid(), ThreadPoolExecutor(max_workers=size, thread_name_prefix=name))
            _pools[name] = entry
        return entry[1]
