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
    The process's thread pool called ``name``, made on first use.

    A pool of its own keeps these waits from filling the event loop's default executor, and keeps calls stuck in
    one kind of wait (a resolver that never answers) from delaying the other kind.

    :param name: The pool's name, also the prefix of its threads' names.
    :param size: The most threads it runs at once; idle pools hold no threads.
    :returns: The pool.
    """
    with _lock:
        entry = _pools.get(name)
        if entry is None or entry[0] != os.getpid():  # a forked child has none of the pool's threads
            entry = (os.getpid(), ThreadPoolExecutor(max_workers=size, thread_name_prefix=name))
            _pools[name] = entry
        return entry[1]
